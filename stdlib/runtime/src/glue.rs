//! What generated Rust glue (spec §9.4, `aelc build`'s `rust/<package>.rs`) links against,
//! beside [`crate::bounded`].
//!
//! Generated code is typed façades over this module; the rules themselves are the runtime's:
//! - [`Glue`] converts between generated types and [`Value`]s, the currency of the decoder,
//!   the evaluator and the pipeline. Decoding is the runtime [`Decoder`] driven by the
//!   project's embedded [`GlueProgram`], then [`Glue::from_value`]: the errors are the
//!   decoder's by construction.
//! - [`GlueProgram`] is the part of the compiled program the glue needs at run time (types,
//!   pure fns, checks, each node's configuration and wiring), embedded as JSON and read once.
//! - [`Context`] is what an `extern fn` receives: the node's model, media downloads, the clock.
//! - [`run_node`] runs a node on decoded inputs: input checks, then the seven steps through the
//!   runtime [`Pipeline`] with the generated [`OutputStage`].

use crate::decode::Decoder;
use crate::eval::{CheckOutcome, EvalError, EvalErrorKind, Evaluator, FnTable, Host};
pub use crate::expr::FnId;
use crate::expr::{Check, FnDef};
use crate::model::{Model, ModelAnswer, ModelError, ModelRequest};
use crate::money::Price;
use crate::pipeline::{Budget, CheckFailure, Clock, Outcome, OutputStage, Pipeline, Policy};
use crate::receipt::sha256_hex;
pub use crate::ty::{FloatKind, Format};
use crate::ty::{Ty, TypeTable};
pub use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

// Generated code names everything through this module (`use ::aelc_runtime::glue as rt;`), so
// it needs no dependency of its own: serde's derives are re-exported with it.
pub use crate::bounded::*;
pub use crate::error::{Code, DecodeError};
pub use crate::eval::EvalError as Error;
pub use crate::pipeline::{CheckFailure as Failure, Outcome as PipelineOutcome, Status};
pub use crate::value::MediaRef;
pub use serde;
pub use serde_json;

/// A key that names no variant of a unit enum (the decoder's `unknown_variant`).
pub fn unknown_key(key: &str, what: &str) -> BoundError {
    BoundError {
        code: Code::UnknownVariant,
        message: format!("{key:?} is not {what}"),
    }
}

/// An extern fn id the glue does not know (only a hand-edited program has one).
pub fn unknown_extern(id: u32) -> EvalError {
    EvalError::new(
        EvalErrorKind::UnknownFn,
        format!("extern fn #{id} is not in the generated glue"),
    )
}

/// An extern check id the glue does not know.
pub fn unknown_check(id: u32) -> EvalError {
    EvalError::new(
        EvalErrorKind::UnknownFn,
        format!("extern check #{id} is not in the generated glue"),
    )
}

/// The `index`th argument of an extern check, converted.
pub fn arg<T: Glue>(args: &[&Value], index: usize, name: &str) -> Result<T, EvalError> {
    match args.get(index) {
        Some(v) => T::from_value((*v).clone()),
        None => Err(EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!("the check has no argument `{name}`"),
        )),
    }
}

/// The errors of a generated type's `Deserialize` (the runtime decoder's, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeErrors(pub Vec<DecodeError>);

impl std::fmt::Display for DecodeErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeErrors {}

/// Reads a value of the program's type definition `def` from JSON with the runtime decoder
/// (spec §4: defaults filled in, every bound checked), then converts it.
///
/// Generated types whose fields have defaults deserialize through this
/// (`#[serde(try_from = "rt::serde_json::Value")]`), so a default is the one the decoder
/// fills in from the compiled program, and no code path constructs one that could fail.
pub fn from_json<T: Glue>(
    program: &GlueProgram,
    def: u32,
    json: &serde_json::Value,
) -> Result<T, DecodeErrors> {
    const ROOT: &str = "value";
    let bytes = serde_json::to_vec(json).map_err(|e| {
        DecodeErrors(vec![DecodeError::new(
            Code::WrongType,
            &crate::error::PathBuf::new(ROOT),
            format!("the value cannot be written as JSON: {e}"),
        )])
    })?;
    let ty = Ty::Ref {
        def: crate::ty::DefId(def),
    };
    let value = Decoder::new(&program.types)
        .with_max_input_bytes(usize::MAX)
        .decode(&bytes, &ty, ROOT)
        .map_err(DecodeErrors)?;
    T::from_value(value).map_err(|e| DecodeErrors(vec![conversion_error(ROOT, e)]))
}

/// A failure code of a generated `errors` set.
pub trait ErrorCode {
    fn as_str(&self) -> &'static str;
}

/// The code type of an `extern check` without `fails`: it cannot fail with a code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoCode {}

impl ErrorCode for NoCode {
    fn as_str(&self) -> &'static str {
        match *self {}
    }
}

/// What an `extern check` answers: `None` when it passes.
pub type CheckResult<E> = Result<Option<(E, Option<String>)>, EvalError>;

/// Converts an extern check's typed answer into the pipeline's.
pub fn check_answer<E: ErrorCode>(
    answer: CheckResult<E>,
) -> Result<Option<(String, Option<String>)>, EvalError> {
    answer.map(|a| a.map(|(code, message)| (code.as_str().to_owned(), message)))
}

/// A decoded value that the generated type does not accept (a bug in aelc: the decoder and
/// the generated types read the same description), reported as a decode error at the root.
pub fn conversion_error(root: &str, e: EvalError) -> DecodeError {
    DecodeError::new(
        Code::WrongType,
        &crate::error::PathBuf::new(root),
        format!(
            "the decoded value does not fit the generated type: {}",
            e.message
        ),
    )
}

/// A node run with its output converted to the generated type.
#[derive(Clone, Debug, PartialEq)]
pub struct Run<T> {
    pub run: NodeRun,
    /// The accepted output, typed.
    pub output: Option<T>,
}

impl<T: Glue> Run<T> {
    pub fn new(run: NodeRun) -> Run<T> {
        let output = match &run {
            NodeRun::Ran(outcome) => outcome
                .output
                .as_ref()
                .and_then(|v| T::from_value(v.clone()).ok()),
            _ => None,
        };
        Run { run, output }
    }

    /// The pipeline's outcome, when the input was accepted.
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.run {
            NodeRun::Ran(o) => Some(o),
            _ => None,
        }
    }
}

/// A generated type's conversion to and from the runtime's [`Value`].
pub trait Glue: Sized {
    /// Converts a value of this type (as the decoder or the evaluator made it); a value of
    /// another shape or outside the bounds is an error, never a panic.
    fn from_value(value: Value) -> Result<Self, EvalError>;
    fn to_value(&self) -> Value;
}

/// The error for a value of the wrong shape.
pub fn mismatch(expected: &str, found: &Value) -> EvalError {
    EvalError::new(
        EvalErrorKind::TypeMismatch,
        format!("expected {expected}, found {}", found.kind_name()),
    )
}

/// The error for a value outside its bounds.
pub fn out_of_bounds(e: BoundError) -> EvalError {
    EvalError::new(EvalErrorKind::TypeMismatch, e.to_string())
}

/// Takes the next field of a struct or variant being converted.
pub fn field<T: Glue>(fields: &mut std::vec::IntoIter<Value>, name: &str) -> Result<T, EvalError> {
    match fields.next() {
        Some(v) => T::from_value(v),
        None => Err(EvalError::new(
            EvalErrorKind::TypeMismatch,
            format!("the value has no field `{name}`"),
        )),
    }
}

impl Glue for bool {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(mismatch("a bool", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! glue_int {
    ($($t:ty),*) => {$(
        impl Glue for $t {
            fn from_value(value: Value) -> Result<Self, EvalError> {
                match value {
                    Value::Int(v) => <$t>::try_from(v).map_err(|_| {
                        EvalError::new(
                            EvalErrorKind::Overflow,
                            format!("{v} does not fit in {}", stringify!($t)),
                        )
                    }),
                    other => Err(mismatch("an integer", &other)),
                }
            }
            fn to_value(&self) -> Value {
                Value::Int(i128::from(*self))
            }
        }
    )*};
}
glue_int!(u8, u16, u32, u64, i8, i16, i32, i64);

impl<T: IntPrim, const MIN: i128, const MAX: i128, const EXCL: bool> Glue
    for BoundedInt<T, MIN, MAX, EXCL>
{
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Int(v) => BoundedInt::from_wide(v).map_err(out_of_bounds),
            other => Err(mismatch("an integer", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Int(self.get().to_i128())
    }
}

impl<R: FloatRules> Glue for BoundedFloat<R> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Float(v) => BoundedFloat::new(v).map_err(out_of_bounds),
            other => Err(mismatch("a float", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Float(self.get())
    }
}

impl<const MAX: u32, const MIN: u32> Glue for BoundedStr<MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Str(s) => BoundedStr::new(s).map_err(out_of_bounds),
            other => Err(mismatch("text", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Str(self.as_str().into())
    }
}

impl<R: TextRules> Glue for RuledStr<R> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Str(s) => RuledStr::new(s).map_err(out_of_bounds),
            other => Err(mismatch("text", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Str(self.as_str().into())
    }
}

impl<T: Glue> Glue for Option<T> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::None => Ok(None),
            some => T::from_value(some).map(Some),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::None,
        }
    }
}

// Recursive types reach themselves through a box (`Option<Box<Tree>>`).
impl<T: Glue> Glue for Box<T> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        T::from_value(value).map(Box::new)
    }
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

fn items<T: Glue>(value: Value) -> Result<Vec<T>, EvalError> {
    match value {
        Value::List(items) => items.into_iter().map(T::from_value).collect(),
        other => Err(mismatch("a list", &other)),
    }
}

impl<T: Glue, const MAX: u32, const MIN: u32> Glue for BoundedVec<T, MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        BoundedVec::new(items(value)?).map_err(out_of_bounds)
    }
    fn to_value(&self) -> Value {
        Value::List(self.as_slice().iter().map(Glue::to_value).collect())
    }
}

impl<T: Glue + PartialEq, const MAX: u32, const MIN: u32> Glue for BoundedSet<T, MAX, MIN> {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        BoundedSet::new(items(value)?).map_err(out_of_bounds)
    }
    fn to_value(&self) -> Value {
        Value::List(self.as_slice().iter().map(Glue::to_value).collect())
    }
}

impl<K: Glue + MapKey, V: Glue, const MAX: u32, const MIN: u32> Glue
    for BoundedMap<K, V, MAX, MIN>
{
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Map(entries) => {
                let entries = entries
                    .into_iter()
                    .map(|(k, v)| Ok((K::from_key(k).map_err(out_of_bounds)?, V::from_value(v)?)))
                    .collect::<Result<Vec<_>, EvalError>>()?;
                BoundedMap::new(entries).map_err(out_of_bounds)
            }
            other => Err(mismatch("a map", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Map(
            self.entries()
                .iter()
                .map(|(k, v)| (k.key_str().to_owned(), v.to_value()))
                .collect(),
        )
    }
}

impl Glue for MediaRef {
    fn from_value(value: Value) -> Result<Self, EvalError> {
        match value {
            Value::Media(m) => Ok(*m),
            other => Err(mismatch("a media reference", &other)),
        }
    }
    fn to_value(&self) -> Value {
        Value::Media(Box::new(self.clone()))
    }
}

/// Where an argument of a check or transform comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    /// The output under test.
    Output,
    /// The node's input parameter at this index.
    Input(usize),
}

/// A check wired to a node: the check's index and where each parameter comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WiredCheck {
    pub check: u32,
    pub args: Vec<Arg>,
}

/// What the glue needs of one node at run time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GlueNode {
    pub name: String,
    /// `(name, type)` of each parameter, in order.
    pub params: Vec<(String, Ty)>,
    pub output: Ty,
    /// `model: binding("…")`; empty when the node names none.
    pub binding: String,
    pub max_answer: u64,
    pub max_input_bytes: u64,
    pub policies: Vec<Policy>,
    pub budget: Budget,
    pub input_checks: Vec<WiredCheck>,
    pub output_checks: Vec<WiredCheck>,
    /// The transform fn's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<u32>,
    /// The node's body as a fn of its parameters (spec §6: the body computes the answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<FnDef>,
}

/// A check: its name, and its requirements unless it is an `extern check`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GlueCheck {
    pub name: String,
    /// `None` for an `extern check` (generated code answers it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ir: Option<Check>,
}

/// The run-time part of a compiled program (embedded in generated glue as JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GlueProgram {
    pub types: TypeTable,
    /// Every fn by id; `None` for `extern fn`s (the host answers them).
    pub fns: Vec<Option<FnDef>>,
    /// Every check by id.
    pub checks: Vec<GlueCheck>,
    pub nodes: Vec<GlueNode>,
    /// Prices by binding name.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
}

impl GlueProgram {
    /// Reads the embedded program. Generated code embeds what `aelc` wrote, so this fails
    /// only on a hand-edited file; the result is then an empty program, whose every lookup
    /// is an error rather than a panic.
    pub fn from_json(text: &str) -> GlueProgram {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The node at `index`, or an empty node (no parameters, no output fields) when a
    /// hand-edited program lacks it.
    pub fn node(&self, index: usize) -> &GlueNode {
        static EMPTY: OnceLock<GlueNode> = OnceLock::new();
        self.nodes.get(index).unwrap_or_else(|| {
            EMPTY.get_or_init(|| GlueNode {
                name: String::new(),
                params: Vec::new(),
                output: Ty::Bool,
                binding: String::new(),
                max_answer: 0,
                max_input_bytes: 0,
                policies: Vec::new(),
                budget: Budget::default(),
                input_checks: Vec::new(),
                output_checks: Vec::new(),
                transform: None,
                body: None,
            })
        })
    }
}

impl FnTable for GlueProgram {
    fn pure_fn(&self, id: FnId) -> Option<&FnDef> {
        self.fns.get(id.0 as usize).and_then(Option::as_ref)
    }
}

/// Where media bytes come from (the platform's file store, or a test double).
pub trait MediaSource {
    fn fetch(&mut self, media: &MediaRef) -> Result<Vec<u8>, String>;
}

/// No media store: every download is an error.
pub struct NoMedia;

impl MediaSource for NoMedia {
    fn fetch(&mut self, media: &MediaRef) -> Result<Vec<u8>, String> {
        Err(format!("no media store can fetch {}", media.reference))
    }
}

/// A model that is not reachable from here (checks and transforms never call the model).
pub struct NoModel;

impl Model for NoModel {
    fn call(&mut self, _request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        Err(ModelError::Unavailable(
            "checks and transforms cannot call the model".to_owned(),
        ))
    }
}

/// What an `extern fn` receives: the node's model, media downloads and the clock.
pub struct Context<'r> {
    pub model: &'r mut dyn Model,
    pub clock: &'r mut dyn Clock,
    pub media: &'r mut dyn MediaSource,
}

impl<'r> Context<'r> {
    pub fn new(
        model: &'r mut dyn Model,
        clock: &'r mut dyn Clock,
        media: &'r mut dyn MediaSource,
    ) -> Context<'r> {
        Context {
            model,
            clock,
            media,
        }
    }

    /// Calls the model with a request of the caller's making (most code runs the node
    /// instead, which calls the model with the node's pipeline around it).
    pub fn call_model(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        self.model.call(request)
    }

    /// Milliseconds on the run's clock.
    pub fn now_ms(&mut self) -> u64 {
        self.clock.now_ms()
    }

    /// Downloads a media reference and verifies its size and SHA-256 (spec §7).
    pub fn download(&mut self, media: &MediaRef) -> Result<Vec<u8>, EvalError> {
        let bytes = self
            .media
            .fetch(media)
            .map_err(|why| EvalError::new(EvalErrorKind::Extern, why))?;
        if bytes.len() as u64 != media.size {
            return Err(EvalError::new(
                EvalErrorKind::Extern,
                format!(
                    "{} has {} bytes, its reference says {}",
                    media.reference,
                    bytes.len(),
                    media.size
                ),
            ));
        }
        if sha256_hex(&bytes) != media.sha256 {
            return Err(EvalError::new(
                EvalErrorKind::Extern,
                format!("{} does not match its SHA-256", media.reference),
            ));
        }
        Ok(bytes)
    }
}

/// A clock shared by the pipeline and the context its checks get.
struct SharedClock<'c, 'r, 'd>(&'c RefCell<&'r mut (dyn Clock + 'd)>);

impl Clock for SharedClock<'_, '_, '_> {
    fn now_ms(&mut self) -> u64 {
        self.0.borrow_mut().now_ms()
    }
}

/// Generated code's dispatch of a node's checks, transform and extern fns.
pub trait NodeGlue {
    /// Answers an `extern fn` call (the generated `match` over extern fn ids).
    fn call_extern(
        &mut self,
        ctx: &mut Context<'_>,
        func: FnId,
        args: Vec<Value>,
    ) -> Result<Value, EvalError>;
    /// Runs an `extern check` on its arguments: `None` when it passes, else its code and
    /// message.
    fn run_extern_check(
        &mut self,
        ctx: &mut Context<'_>,
        check: u32,
        args: &[&Value],
    ) -> Result<Option<(String, Option<String>)>, EvalError>;
}

/// A [`Host`] over generated dispatch and a context.
struct HostOf<'a, 'r> {
    glue: &'a mut dyn NodeGlue,
    ctx: Context<'r>,
}

impl Host for HostOf<'_, '_> {
    fn call_extern(&mut self, func: FnId, args: Vec<Value>) -> Result<Value, EvalError> {
        self.glue.call_extern(&mut self.ctx, func, args)
    }
}

fn resolve<'v>(
    args: &[Arg],
    output: Option<&'v Value>,
    inputs: &'v [Value],
) -> Result<Vec<&'v Value>, EvalError> {
    args.iter()
        .map(|a| {
            match a {
                Arg::Output => output,
                Arg::Input(i) => inputs.get(*i),
            }
            .ok_or_else(|| {
                EvalError::new(EvalErrorKind::UnboundLocal, "a check argument is missing")
            })
        })
        .collect()
}

fn run_checks(
    program: &GlueProgram,
    checks: &[WiredCheck],
    output: Option<&Value>,
    inputs: &[Value],
    host: &mut HostOf<'_, '_>,
) -> Result<Option<CheckFailure>, EvalError> {
    for wired in checks {
        let values = resolve(&wired.args, output, inputs)?;
        match program.checks.get(wired.check as usize).map(|c| (c, &c.ir)) {
            Some((_, Some(check))) => {
                let mut eval = Evaluator::new(program, host);
                if let CheckOutcome::Failed { code, message } = eval.run_check(check, &values)? {
                    return Ok(Some(CheckFailure {
                        check: check.name.clone(),
                        code,
                        message,
                    }));
                }
            }
            Some((glue_check, None)) => {
                if let Some((code, message)) =
                    host.glue
                        .run_extern_check(&mut host.ctx, wired.check, &values)?
                {
                    return Ok(Some(CheckFailure {
                        check: glue_check.name.clone(),
                        code,
                        message,
                    }));
                }
            }
            None => {
                return Err(EvalError::new(
                    EvalErrorKind::UnknownFn,
                    format!("check #{} does not exist", wired.check),
                ))
            }
        }
    }
    Ok(None)
}

/// Steps 4 and 5 of one node: its output checks and transform, IR or Rust.
struct Stage<'a, 'r> {
    program: &'a GlueProgram,
    node: &'a GlueNode,
    inputs: &'a [Value],
    host: HostOf<'a, 'r>,
}

impl OutputStage for Stage<'_, '_> {
    fn check(&mut self, output: &Value) -> Result<Option<CheckFailure>, EvalError> {
        run_checks(
            self.program,
            &self.node.output_checks,
            Some(output),
            self.inputs,
            &mut self.host,
        )
    }

    fn transform(&mut self, output: Value) -> Result<Value, EvalError> {
        let Some(id) = self.node.transform else {
            return Ok(output);
        };
        match self.program.pure_fn(FnId(id)) {
            Some(f) => Evaluator::new(self.program, &mut self.host).run_fn(f, &[&output]),
            None => self
                .host
                .glue
                .call_extern(&mut self.host.ctx, FnId(id), vec![output]),
        }
    }

    fn has_transform(&self) -> bool {
        self.node.transform.is_some()
    }
}

/// Decodes a node's input document (spec §4): the parameter's value, or an object with one
/// field per parameter.
pub fn decode_input(
    program: &GlueProgram,
    node: &GlueNode,
    bytes: &[u8],
) -> Result<Vec<Value>, Vec<DecodeError>> {
    let max = usize::try_from(node.max_input_bytes).unwrap_or(usize::MAX);
    let params: Vec<(&str, &Ty)> = node.params.iter().map(|(n, t)| (n.as_str(), t)).collect();
    Decoder::new(&program.types)
        .with_max_input_bytes(max)
        .decode_input(bytes, &params)
}

/// Runs a node's input checks on decoded inputs.
pub fn check_input(
    program: &GlueProgram,
    node: &GlueNode,
    inputs: &[Value],
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> Result<Option<CheckFailure>, EvalError> {
    let mut host = HostOf {
        glue,
        ctx: Context {
            model: &mut *ctx.model,
            clock: &mut *ctx.clock,
            media: &mut *ctx.media,
        },
    };
    run_checks(program, &node.input_checks, None, inputs, &mut host)
}

/// How a node run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeRun {
    /// The input document did not decode (`rejected_input`, nothing ran).
    Undecodable(Vec<DecodeError>),
    /// An input check failed (`rejected_input`).
    InputCheck(CheckFailure),
    /// An input check could not be evaluated (`internal_error`).
    Internal(EvalError),
    /// The pipeline ran: see its outcome.
    Ran(Outcome),
}

/// Runs the node's output pipeline (after its input checks passed) on `prompt`.
pub fn run_pipeline(
    program: &GlueProgram,
    node: &GlueNode,
    inputs: &[Value],
    prompt: &str,
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> Outcome {
    let mut pipeline = Pipeline::new(&program.types, &node.output, &node.binding, node.max_answer);
    pipeline.policies = node.policies.clone();
    pipeline.budget = node.budget.clone();
    pipeline.prices = program.prices.clone();
    let clock = RefCell::new(&mut *ctx.clock);
    let mut stage_clock = SharedClock(&clock);
    let mut no_model = NoModel;
    let mut stage = Stage {
        program,
        node,
        inputs,
        host: HostOf {
            glue,
            ctx: Context {
                model: &mut no_model,
                clock: &mut stage_clock,
                media: &mut *ctx.media,
            },
        },
    };
    let mut pipeline_clock = SharedClock(&clock);
    pipeline.run(prompt, &mut *ctx.model, &mut stage, &mut pipeline_clock)
}

/// A node run on decoded inputs: input checks, then the pipeline.
pub fn run_inputs(
    program: &GlueProgram,
    node: &GlueNode,
    inputs: &[Value],
    prompt: &str,
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> NodeRun {
    match check_input(program, node, inputs, glue, ctx) {
        Ok(None) => {}
        Ok(Some(failure)) => return NodeRun::InputCheck(failure),
        Err(e) => return NodeRun::Internal(e),
    }
    NodeRun::Ran(run_pipeline(program, node, inputs, prompt, glue, ctx))
}

/// A whole node run on an input document: decode, input checks, pipeline.
pub fn run_node(
    program: &GlueProgram,
    node: &GlueNode,
    input: &[u8],
    prompt: &str,
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> NodeRun {
    let inputs = match decode_input(program, node, input) {
        Ok(v) => v,
        Err(errors) => return NodeRun::Undecodable(errors),
    };
    run_inputs(program, node, &inputs, prompt, glue, ctx)
}

/// How a node body ended (see [`run_body`]).
#[derive(Clone, Debug, PartialEq)]
pub enum BodyRun {
    /// An input check failed (`rejected_input`).
    InputCheck(CheckFailure),
    /// An input check or the body could not be evaluated, or an `extern fn` it called failed
    /// (`internal_error`).
    Internal(EvalError),
    /// The body's value breaks the bounds of the output type (checked as step 6 checks a
    /// transformed value: every error with its path; `invalid_output`).
    Invalid(Vec<DecodeError>),
    /// The body's answer, within every bound.
    Done(Value),
}

/// A body run with its answer converted to the generated type.
#[derive(Clone, Debug, PartialEq)]
pub struct Body<T> {
    pub run: BodyRun,
    /// The answer, typed.
    pub output: Option<T>,
}

impl<T: Glue> Body<T> {
    pub fn new(run: BodyRun) -> Body<T> {
        let output = match &run {
            BodyRun::Done(v) => T::from_value(v.clone()).ok(),
            _ => None,
        };
        Body { run, output }
    }
}

/// Runs a node's body (spec §6: with a body, the body computes the answer) on decoded
/// inputs: the input checks, then the body on the evaluator — pure fns there, `extern fn`s
/// through `glue` with `ctx` (so an extern can call the node's model, as the seed's
/// `return write_review(request);` does) — then the answer's bounds. The output checks,
/// transform and failure policy belong to the model's answers, which the body obtains
/// through its externs (with `run`), so they do not run again here.
pub fn run_body(
    program: &GlueProgram,
    node: &GlueNode,
    inputs: &[Value],
    glue: &mut dyn NodeGlue,
    ctx: &mut Context<'_>,
) -> BodyRun {
    match check_input(program, node, inputs, glue, ctx) {
        Ok(None) => {}
        Ok(Some(failure)) => return BodyRun::InputCheck(failure),
        Err(e) => return BodyRun::Internal(e),
    }
    let Some(body) = &node.body else {
        return BodyRun::Internal(EvalError::new(
            EvalErrorKind::UnknownFn,
            format!("node `{}` has no body the glue can run", node.name),
        ));
    };
    let mut host = HostOf {
        glue,
        ctx: Context {
            model: &mut *ctx.model,
            clock: &mut *ctx.clock,
            media: &mut *ctx.media,
        },
    };
    let args: Vec<&Value> = inputs.iter().collect();
    let value = match Evaluator::new(program, &mut host).run_fn(body, &args) {
        Ok(v) => v,
        Err(e) => return BodyRun::Internal(e),
    };
    let errors =
        crate::validate::Validator::new(&program.types).validate(&value, &node.output, "output");
    if errors.is_empty() {
        BodyRun::Done(value)
    } else {
        BodyRun::Invalid(errors)
    }
}
