//! Prompts at run time (spec §6): renders a node's type-checked prompt template, or runs its
//! input builder, over the node's decoded inputs into the ordered parts the model receives.
//!
//! The compiler lowers a template into [`Template`] (text, `{{ expr }}`, `{% if %}`, `{% for %}`)
//! and a builder's body into [`BuilderPart`]s, with every expression in the runtime's
//! [`crate::expr`] form, so nothing is parsed here.
//!
//! # Slots
//! A template's expressions run in one frame: slots `0..params` are the node's parameters, slot
//! `params` is `output_schema` (the model-facing output schema as text), and every other slot
//! (a `for` variable, a closure parameter) is numbered by the compiler as in a fn body. A `for`
//! variable is bound by wrapping each expression of its body in a `let` of the current item, so
//! the evaluator needs no new entry point. A builder's parts run in the builder's frame (slots
//! `0..params` are its parameters, which are the node's, in order).
//!
//! # How values print
//! Text as is; integers and floats in their shortest decimal form; `true`/`false`; a unit-enum
//! value as its variant name; `none` as nothing and `some(x)` as `x`; every other value (struct,
//! list, map, data enum, media reference) as its canonical JSON.
//!
//! # Size
//! Rendering stops with [`PromptError::TooLarge`] as soon as the text passes the limit it is
//! given (the node's `max_prompt`, else [`MAX_PROMPT_BYTES`]), so a `for` over large lists
//! cannot grow without bound. [`measure`] is what `max_prompt` bounds: the UTF-8 bytes of every
//! text and system part plus the bytes of every media reference (`ref`); the media's own bytes
//! are bounded by their types (spec §7).

use crate::eval::{EvalError, Evaluator, FnTable, Host};
use crate::expr::{Expr, Slot};
use crate::provider::{MediaSource, Part, PartKind};
use crate::ty::{DefKind, Ty, TypeTable};
use crate::value::{MediaRef, Value};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most bytes a prompt may have when the node sets no `max_prompt`.
pub const MAX_PROMPT_BYTES: u64 = 16 * 1024 * 1024;

/// A lowered prompt template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Template {
    /// The node's parameter count: slot `params` is `output_schema`.
    pub params: u32,
    /// One past the highest slot used.
    #[serde(default)]
    pub locals: u32,
    pub body: Vec<Segment>,
}

/// One piece of a template. Serialized with a `segment` tag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "segment", rename_all = "snake_case")]
pub enum Segment {
    /// Literal text between tags.
    Text { text: String },
    /// `{{ expr }}`; `ty` is how a non-scalar value is printed (see the module doc).
    Value {
        expr: Expr,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ty: Option<Ty>,
    },
    /// `{% if cond %}then{% else %}otherwise{% end %}`.
    If {
        cond: Expr,
        then: Vec<Segment>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        otherwise: Vec<Segment>,
    },
    /// `{% for slot in list %}body{% end %}`.
    For {
        slot: Slot,
        list: Expr,
        body: Vec<Segment>,
    },
}

/// The kind of one builder part, as written (`system("…")`, `image(request.photo)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartWord {
    System,
    Text,
    Image,
    Audio,
    Video,
    File,
}

impl PartWord {
    /// Every builder part kind, in the spec's order: what the checker accepts, suggests and
    /// lists (E0515).
    pub const ALL: [PartWord; 6] = [
        PartWord::System,
        PartWord::Text,
        PartWord::Image,
        PartWord::Audio,
        PartWord::Video,
        PartWord::File,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PartWord::System => "system",
            PartWord::Text => "text",
            PartWord::Image => "image",
            PartWord::Audio => "audio",
            PartWord::Video => "video",
            PartWord::File => "file",
        }
    }

    pub fn parse(word: &str) -> Option<PartWord> {
        PartWord::ALL.into_iter().find(|w| w.as_str() == word)
    }
}

/// Where a builder part's value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum PartSource {
    /// An expression over the builder's parameters: text, or a media reference.
    Expr { expr: Expr },
    /// `render(…)`: the node's prompt template, with these arguments as the node's parameters
    /// (none: the builder's own parameters).
    Render {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<Expr>,
    },
}

/// One line of a builder body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BuilderPart {
    pub kind: PartWord,
    #[serde(flatten)]
    pub source: PartSource,
}

/// One part of what the model receives, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptPart {
    System(String),
    Text(String),
    Image(MediaRef),
    Audio(MediaRef),
    Video(MediaRef),
    File(MediaRef),
}

impl PromptPart {
    /// The `accepts` word this part needs (system text is text).
    pub fn kind(&self) -> PartKind {
        match self {
            PromptPart::System(_) | PromptPart::Text(_) => PartKind::Text,
            PromptPart::Image(_) => PartKind::Image,
            PromptPart::Audio(_) => PartKind::Audio,
            PromptPart::Video(_) => PartKind::Video,
            PromptPart::File(_) => PartKind::File,
        }
    }

    /// The media reference of a media part.
    pub fn media(&self) -> Option<&MediaRef> {
        match self {
            PromptPart::System(_) | PromptPart::Text(_) => None,
            PromptPart::Image(m)
            | PromptPart::Audio(m)
            | PromptPart::Video(m)
            | PromptPart::File(m) => Some(m),
        }
    }

    /// Bytes this part counts against `max_prompt` (see the module doc).
    pub fn bytes(&self) -> u64 {
        match self {
            PromptPart::System(t) | PromptPart::Text(t) => t.len() as u64,
            PromptPart::Image(m)
            | PromptPart::Audio(m)
            | PromptPart::Video(m)
            | PromptPart::File(m) => m.reference.len() as u64,
        }
    }

    /// The provider-neutral part: a media reference travels as its `ref` URL and content type
    /// (resolving `holon://` references is the caller's job, spec §7).
    pub fn to_provider_part(&self) -> Part {
        self.to_provider_part_with(None)
    }

    /// [`PromptPart::to_provider_part`] with a media part's URL replaced by `url` (the inline
    /// data a file store resolved its reference into).
    pub fn to_provider_part_with(&self, url: Option<String>) -> Part {
        let source = |m: &MediaRef| MediaSource {
            url: url.clone().unwrap_or_else(|| m.reference.clone()),
            content_type: Some(m.content_type.clone()),
        };
        match self {
            PromptPart::System(t) => Part::System(t.clone()),
            PromptPart::Text(t) => Part::Text(t.clone()),
            PromptPart::Image(m) => Part::Image(source(m)),
            PromptPart::Audio(m) => Part::Audio(source(m)),
            PromptPart::Video(m) => Part::Video(source(m)),
            PromptPart::File(m) => Part::File(source(m)),
        }
    }
}

/// What [`measure`] bounds: the sum of [`PromptPart::bytes`].
pub fn measure(parts: &[PromptPart]) -> u64 {
    parts
        .iter()
        .map(PromptPart::bytes)
        .fold(0, u64::saturating_add)
}

/// Why a prompt could not be made.
#[derive(Clone, Debug, PartialEq)]
pub enum PromptError {
    /// An expression failed to evaluate (a program bug, or an extern fn's failure).
    Eval(EvalError),
    /// The prompt grew past its limit.
    TooLarge { limit: u64 },
    /// A value of the wrong kind reached a part or a tag (an IR the compiler should not make).
    Shape(String),
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PromptError::Eval(e) => write!(f, "the prompt could not be evaluated: {e}"),
            PromptError::TooLarge { limit } => {
                write!(f, "the prompt has more than {limit} bytes (max_prompt)")
            }
            PromptError::Shape(why) => write!(f, "the prompt could not be built: {why}"),
        }
    }
}

impl From<EvalError> for PromptError {
    fn from(e: EvalError) -> PromptError {
        PromptError::Eval(e)
    }
}

/// What rendering needs besides the inputs.
pub struct PromptEnv<'p> {
    pub table: &'p TypeTable,
    pub fns: &'p dyn FnTable,
    pub host: &'p mut dyn Host,
    /// The text `{{ output_schema }}` inserts.
    pub output_schema: &'p str,
    /// The most bytes the prompt may have.
    pub limit: u64,
}

/// Renders `template` with `inputs` as the node's parameters.
pub fn render(
    template: &Template,
    inputs: &[&Value],
    env: &mut PromptEnv<'_>,
) -> Result<String, PromptError> {
    let schema = Value::Str(env.output_schema.into());
    let mut params: Vec<&Value> = inputs.to_vec();
    params.push(&schema);
    let mut out = String::new();
    let mut scope = Vec::new();
    let limit = env.limit;
    let mut evaluator = Evaluator::new(env.fns, &mut *env.host);
    let mut r = Renderer {
        eval: &mut evaluator,
        table: env.table,
        params: &params,
        limit,
    };
    r.segments(&template.body, &mut scope, &mut out)?;
    Ok(out)
}

/// Runs a builder's parts with `inputs` as its parameters; `template` serves `render(…)`.
pub fn build(
    parts: &[BuilderPart],
    template: Option<&Template>,
    inputs: &[&Value],
    env: &mut PromptEnv<'_>,
) -> Result<Vec<PromptPart>, PromptError> {
    let mut out = Vec::with_capacity(parts.len());
    let mut total = 0u64;
    for part in parts {
        let value = match &part.source {
            PartSource::Expr { expr } => {
                let mut eval = Evaluator::new(env.fns, &mut *env.host);
                eval.eval_with(expr, inputs)?
            }
            PartSource::Render { args } => {
                let Some(template) = template else {
                    return Err(PromptError::Shape(
                        "`render(…)` needs the node's `prompt: file(…)`".to_owned(),
                    ));
                };
                let evaluated = if args.is_empty() {
                    None
                } else {
                    let mut eval = Evaluator::new(env.fns, &mut *env.host);
                    Some(
                        args.iter()
                            .map(|a| eval.eval_with(a, inputs))
                            .collect::<Result<Vec<_>, _>>()?,
                    )
                };
                let refs: Vec<&Value> = match &evaluated {
                    Some(values) => values.iter().collect(),
                    None => inputs.to_vec(),
                };
                let left = env.limit.saturating_sub(total);
                let mut inner = PromptEnv {
                    table: env.table,
                    fns: env.fns,
                    host: &mut *env.host,
                    output_schema: env.output_schema,
                    limit: left,
                };
                let rendered = render(template, &refs, &mut inner).map_err(|e| match e {
                    // Report the prompt's limit, not what was left of it.
                    PromptError::TooLarge { .. } => PromptError::TooLarge { limit: env.limit },
                    other => other,
                })?;
                Value::Str(rendered.into())
            }
        };
        let made = make_part(part.kind, value)?;
        total = total.saturating_add(made.bytes());
        if total > env.limit {
            return Err(PromptError::TooLarge { limit: env.limit });
        }
        out.push(made);
    }
    Ok(out)
}

fn make_part(kind: PartWord, value: Value) -> Result<PromptPart, PromptError> {
    let wrong = |found: &Value| {
        PromptError::Shape(format!(
            "`{}(…)` got {}, not {}",
            kind.as_str(),
            found.kind_name(),
            if matches!(kind, PartWord::System | PartWord::Text) {
                "text"
            } else {
                "a media reference"
            }
        ))
    };
    Ok(match (kind, value) {
        (PartWord::System, Value::Str(t)) => PromptPart::System(t.into_string()),
        (PartWord::Text, Value::Str(t)) => PromptPart::Text(t.into_string()),
        (PartWord::Image, Value::Media(m)) => PromptPart::Image(*m),
        (PartWord::Audio, Value::Media(m)) => PromptPart::Audio(*m),
        (PartWord::Video, Value::Media(m)) => PromptPart::Video(*m),
        (PartWord::File, Value::Media(m)) => PromptPart::File(*m),
        (_, other) => return Err(wrong(&other)),
    })
}

struct Renderer<'r, 'p> {
    eval: &'r mut Evaluator<'p>,
    table: &'r TypeTable,
    params: &'r [&'r Value],
    limit: u64,
}

impl Renderer<'_, '_> {
    /// Evaluates `e` with the `for` variables in `scope` bound (innermost last).
    fn eval(&mut self, e: &Expr, scope: &[(Slot, Value)]) -> Result<Value, PromptError> {
        if scope.is_empty() {
            return Ok(self.eval.eval_with(e, self.params)?);
        }
        let mut wrapped = e.clone();
        for (slot, value) in scope.iter().rev() {
            wrapped = Expr::Let {
                slot: *slot,
                value: Box::new(Expr::Const {
                    value: value.clone(),
                }),
                body: Box::new(wrapped),
            };
        }
        Ok(self.eval.eval_with(&wrapped, self.params)?)
    }

    fn push(&self, out: &mut String, text: &str) -> Result<(), PromptError> {
        if (out.len() as u64).saturating_add(text.len() as u64) > self.limit {
            return Err(PromptError::TooLarge { limit: self.limit });
        }
        out.push_str(text);
        Ok(())
    }

    fn segments(
        &mut self,
        body: &[Segment],
        scope: &mut Vec<(Slot, Value)>,
        out: &mut String,
    ) -> Result<(), PromptError> {
        for segment in body {
            match segment {
                Segment::Text { text } => self.push(out, text)?,
                Segment::Value { expr, ty } => {
                    let value = self.eval(expr, scope)?;
                    let text = display(&value, ty.as_ref(), self.table);
                    self.push(out, &text)?;
                }
                Segment::If {
                    cond,
                    then,
                    otherwise,
                } => match self.eval(cond, scope)? {
                    Value::Bool(true) => self.segments(then, scope, out)?,
                    Value::Bool(false) => self.segments(otherwise, scope, out)?,
                    other => {
                        return Err(PromptError::Shape(format!(
                            "an `if` condition is {}, not a bool",
                            other.kind_name()
                        )))
                    }
                },
                Segment::For { slot, list, body } => {
                    let items = match self.eval(list, scope)? {
                        Value::List(items) => items,
                        other => {
                            return Err(PromptError::Shape(format!(
                                "a `for` runs over {}, not a list",
                                other.kind_name()
                            )))
                        }
                    };
                    for item in items {
                        scope.push((*slot, item));
                        let done = self.segments(body, scope, out);
                        scope.pop();
                        done?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// How a value prints in a prompt (see the module doc).
pub fn display(value: &Value, ty: Option<&Ty>, table: &TypeTable) -> String {
    // A `some` is its value, shown as the `Option`'s inner type.
    let resolved = match ty.and_then(|t| table.resolve(t)) {
        Some(Ty::Option { some }) => table.resolve(some),
        other => other,
    };
    match value {
        Value::Str(s) => s.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(_) => value.to_json_string(&Ty::Bool, table),
        Value::None => String::new(),
        Value::Enum { variant, fields } if fields.is_empty() => {
            let name = match resolved {
                Some(Ty::Ref { def }) => match table.get(*def).map(|d| &d.kind) {
                    Some(DefKind::Enum { variants, .. }) => {
                        variants.get(*variant as usize).map(|v| v.name.clone())
                    }
                    _ => None,
                },
                _ => None,
            };
            name.unwrap_or_else(|| format!("#{variant}"))
        }
        other => match resolved {
            Some(t) => other.to_json_string(t, table),
            None => other.to_json_string(&Ty::Bool, table),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::NoHost;
    use crate::expr::{BinaryOp, Method};

    fn env<'p>(
        table: &'p TypeTable,
        fns: &'p Vec<crate::expr::FnDef>,
        host: &'p mut NoHost,
        limit: u64,
    ) -> PromptEnv<'p> {
        PromptEnv {
            table,
            fns,
            host,
            output_schema: "{\"type\":\"object\"}",
            limit,
        }
    }

    fn text(t: &str) -> Segment {
        Segment::Text { text: t.into() }
    }

    fn value(expr: Expr) -> Segment {
        Segment::Value { expr, ty: None }
    }

    /// `Hello {{ p }}! {% if p.len() > 2 %}long{% else %}short{% end %} {{ output_schema }}`
    /// then `{% for x in list %}[{{ x }}]{% end %}`.
    fn sample() -> Template {
        Template {
            params: 2,
            locals: 4,
            body: vec![
                text("Hello "),
                value(Expr::local(0)),
                text("! "),
                Segment::If {
                    cond: Expr::binary(
                        BinaryOp::Gt,
                        Expr::method(Expr::local(0), Method::Len),
                        Expr::constant(Value::Int(2)),
                    ),
                    then: vec![text("long")],
                    otherwise: vec![text("short")],
                },
                text(" "),
                value(Expr::local(2)),
                text("\n"),
                Segment::For {
                    slot: Slot(3),
                    list: Expr::local(1),
                    body: vec![text("["), value(Expr::local(3)), text("]")],
                },
            ],
        }
    }

    fn inputs() -> (Value, Value) {
        (
            Value::Str("Ada".into()),
            Value::List(vec![Value::Int(1), Value::Int(22), Value::Int(-3)]),
        )
    }

    #[test]
    fn renders_text_values_conditions_and_loops() {
        let (table, fns, mut host) = (TypeTable::default(), Vec::new(), NoHost);
        let (a, b) = inputs();
        let rendered = render(
            &sample(),
            &[&a, &b],
            &mut env(&table, &fns, &mut host, 1000),
        );
        assert_eq!(
            rendered,
            Ok("Hello Ada! long {\"type\":\"object\"}\n[1][22][-3]".to_owned())
        );
        let short = Value::Str("Al".into());
        let rendered = render(
            &sample(),
            &[&short, &Value::List(vec![])],
            &mut env(&table, &fns, &mut host, 1000),
        );
        assert_eq!(
            rendered,
            Ok("Hello Al! short {\"type\":\"object\"}\n".to_owned())
        );
    }

    #[test]
    fn rendering_stops_at_the_limit() {
        let (table, fns, mut host) = (TypeTable::default(), Vec::new(), NoHost);
        let (a, b) = inputs();
        let rendered = render(&sample(), &[&a, &b], &mut env(&table, &fns, &mut host, 20));
        assert_eq!(rendered, Err(PromptError::TooLarge { limit: 20 }));
    }

    #[test]
    fn a_non_bool_condition_is_an_error_not_a_panic() {
        let (table, fns, mut host) = (TypeTable::default(), Vec::new(), NoHost);
        let template = Template {
            params: 1,
            locals: 2,
            body: vec![Segment::If {
                cond: Expr::local(0),
                then: vec![],
                otherwise: vec![],
            }],
        };
        let a = Value::Int(1);
        let rendered = render(&template, &[&a], &mut env(&table, &fns, &mut host, 100));
        assert!(matches!(rendered, Err(PromptError::Shape(_))));
    }

    fn media(url: &str) -> Value {
        Value::Media(Box::new(MediaRef {
            reference: url.into(),
            content_type: "image/png".into(),
            size: 10,
            sha256: "0".repeat(64),
            expires_at: None,
            source: None,
            width: None,
            height: None,
            duration_ms: None,
            sample_rate: None,
            pages: None,
        }))
    }

    #[test]
    fn builders_make_ordered_parts_and_render_the_template() {
        let (table, fns, mut host) = (TypeTable::default(), Vec::new(), NoHost);
        let (a, b) = inputs();
        let photo = media("https://example.com/a.png");
        let parts = vec![
            BuilderPart {
                kind: PartWord::System,
                source: PartSource::Expr {
                    expr: Expr::constant(Value::Str("Be brief.".into())),
                },
            },
            BuilderPart {
                kind: PartWord::Text,
                source: PartSource::Render { args: vec![] },
            },
            BuilderPart {
                kind: PartWord::Image,
                source: PartSource::Expr {
                    expr: Expr::local(2),
                },
            },
        ];
        let built = build(
            &parts,
            Some(&sample()),
            &[&a, &b, &photo],
            &mut env(&table, &fns, &mut host, 1000),
        );
        let Ok(built) = built else {
            panic!("{built:?}");
        };
        assert_eq!(built.len(), 3);
        assert_eq!(built[0], PromptPart::System("Be brief.".into()));
        assert!(matches!(&built[1], PromptPart::Text(t) if t.starts_with("Hello Ada!")));
        assert_eq!(built[2].kind(), PartKind::Image);
        assert_eq!(
            measure(&built),
            9 + built[1].bytes() + "https://example.com/a.png".len() as u64
        );
        assert_eq!(
            built[2].to_provider_part(),
            Part::Image(MediaSource {
                url: "https://example.com/a.png".into(),
                content_type: Some("image/png".into()),
            })
        );
        // A text part given a media reference is a shape error, never a panic.
        let wrong = vec![BuilderPart {
            kind: PartWord::Text,
            source: PartSource::Expr {
                expr: Expr::local(2),
            },
        }];
        let built = build(
            &wrong,
            None,
            &[&a, &b, &photo],
            &mut env(&table, &fns, &mut host, 1000),
        );
        assert!(matches!(built, Err(PromptError::Shape(_))));
        // Over the limit: refused before anything is sent.
        let built = build(
            &parts,
            Some(&sample()),
            &[&a, &b, &photo],
            &mut env(&table, &fns, &mut host, 30),
        );
        assert!(matches!(built, Err(PromptError::TooLarge { .. })));
    }

    #[test]
    fn values_print_as_the_module_doc_says() {
        use crate::ty::{TypeDef, VariantTy};
        let table = TypeTable::new(vec![TypeDef {
            name: "Severity".into(),
            module: "m".into(),
            docs: None,
            kind: DefKind::Enum {
                tag: "type".into(),
                variants: ["low", "high"]
                    .iter()
                    .map(|n| VariantTy {
                        name: (*n).into(),
                        docs: None,
                        fields: None,
                    })
                    .collect(),
            },
        }]);
        let sev = Ty::Ref {
            def: crate::ty::DefId(0),
        };
        let high = Value::Enum {
            variant: 1,
            fields: vec![],
        };
        assert_eq!(display(&high, Some(&sev), &table), "high");
        let opt = Ty::Option {
            some: Box::new(sev.clone()),
        };
        assert_eq!(
            display(&Value::some(high.clone()), Some(&opt), &table),
            "high"
        );
        assert_eq!(display(&Value::None, Some(&opt), &table), "");
        assert_eq!(display(&Value::Float(0.5), None, &table), "0.5");
        assert_eq!(display(&Value::Bool(true), None, &table), "true");
        let list = Value::List(vec![high]);
        let list_ty = Ty::List(crate::ty::ListTy {
            item: Box::new(sev),
            min: 0,
            max: 3,
            unique: false,
        });
        assert_eq!(display(&list, Some(&list_ty), &table), "[\"high\"]");
    }
}
