//! The publishing rules of spec §9.2, checked before `aelc build` writes anything.
//!
//! Errors (nothing is written while one stands):
//! - `E0810`, internal: the IR breaks a rule the checker enforces on the source (a declared
//!   reserved code, E0408; a `Set` over 1000 or a `List` over 10,000 items, E0303; a node type
//!   with no value nesting at most 64 levels deep, E0313). A checked program never does; the
//!   re-check keeps the published documents safe if the IR is ever made another way. (These
//!   were the author-facing codes `E0801`–`E0804`, retired because no source reaches them.)
//! - `E0805`/`E0806` an example whose input/output does not validate against the emitted
//!   schema, with the JSON Pointer of the offending value;
//! - `E0807` an example file that is not an example; `E0808` one that fails with a code the
//!   agent does not declare.
//!
//! Warning `W0801`: an output field that tells the caller nothing about its shape (a struct
//! with no fields, or a `Map` with free text keys and no doc comment). Warnings
//! `W0802`–`W0804`: what a provider's model-facing schema cannot express (see
//! [`super::model_schema`]).
//!
//! The IR carries no source spans, so each finding comes with its [`Place`]: the declaration of
//! an item (by module and name) or a value of an example file (by JSON Pointer). The driver,
//! which holds the sources, turns places into spans (`driver::publish`), so `aelc check`,
//! `aelc build` and the language server point at the same place; messages still name the item
//! and the example, for a reader without spans.
//!
//! Examples are validated with the `jsonschema` crate against the very documents written to
//! `schemas/`, because those are what the gateway checks a call with; patterns run on the
//! linear-time `regex` engine (`PatternOptions::regex()`).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use aelc_runtime::ty::{limits, DefKind, Ty, TypeTable};
use serde_json::Value;

use super::error::{BareField, CodegenError, ExampleValue, NotAnExample};
use super::json_schema::NodeSchemas;
use super::model_schema::Limitation;
use crate::diagnostics::Diagnostic;
use crate::ir::size::fits_depth_limit;
use crate::ir::{NodeIr, NodeKind, Program};

/// The codes the platform reserves (spec §5); no `errors` may declare one.
pub use aelc_runtime::reserved::RESERVED_CODES;

/// The statuses a failing example may expect (spec §10): the example reader's own list.
pub use aelc_runtime::example::FAILURE_STATUSES;

/// One example file of an agent (`examples/<agent>/<name>.json`), already read.
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    /// The agent it belongs to.
    pub agent: String,
    /// The file name without `.json`.
    pub name: String,
    /// The path relative to the project root, as shown in messages.
    pub path: String,
    /// The file's text.
    pub text: String,
}

/// One publishing finding and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub place: Place,
}

/// Where a finding is, in terms the IR knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// The declaration of the item `name` of module `module` (a node, an `errors` set).
    Item { module: String, name: String },
    /// A place in `examples[index]`.
    Example { index: usize, at: ExampleAt },
}

/// A place in an example file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExampleAt {
    /// The value at this JSON Pointer of the file (`/input/findings/0/line`; `""` is the whole
    /// document).
    Value(String),
    /// The name of the member at this JSON Pointer (an unknown key).
    Key(String),
    /// A 1-based line and column of the text (where it stops being JSON).
    LineColumn(usize, usize),
}

impl Place {
    pub fn item(module: &str, name: &str) -> Place {
        Place::Item {
            module: module.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// Every publishing rule (spec §9.2) over a program, its emitted schemas (`schemas[i]` is
/// `program.nodes[i]`'s, as [`super::json_schema::node_schemas`] makes them) and its agents' examples.
/// The one rule set behind `aelc build`, `aelc check` and the language server.
pub fn check(program: &Program, schemas: &[NodeSchemas], examples: &[Example]) -> Vec<Finding> {
    check_nodes(program, examples, |i, _, with_input| {
        let s = &schemas[i];
        NodeDocuments {
            input: with_input.then(|| Cow::Borrowed(&s.input)),
            output: Cow::Borrowed(&s.output),
        }
    })
}

/// [`check`] for a caller that keeps no schema (`aelc check`): each node's documents are made
/// when its rules run and dropped after them, its input schema only when examples of it must
/// be validated. The same findings in the same order as [`check`] over
/// [`super::json_schema::node_schemas`]; holding every node's documents at once was the largest part
/// of `aelc check`'s peak memory (620 bytes per source line of a generated project, more than
/// its syntax trees).
pub fn check_one_node_at_a_time(program: &Program, examples: &[Example]) -> Vec<Finding> {
    use super::json_schema::{DefKeys, SchemaBuilder};
    let keys = DefKeys::new(&program.types);
    check_nodes(program, examples, |_, node, with_input| {
        let builder = || SchemaBuilder::new(&program.types, &keys);
        NodeDocuments {
            input: with_input.then(|| Cow::Owned(builder().input_document(node))),
            output: Cow::Owned(builder().output_document(node)),
        }
    })
}

/// The documents of one node that its rules read.
struct NodeDocuments<'a> {
    /// Only when the node's examples are validated.
    input: Option<Cow<'a, Value>>,
    output: Cow<'a, Value>,
}

/// The rules of [`check`], with each node's documents from `documents` (its index, the node,
/// whether its input document is needed), asked for only when a rule needs them and dropped
/// after their use.
fn check_nodes<'a>(
    program: &Program,
    examples: &[Example],
    documents: impl Fn(usize, &NodeIr, bool) -> NodeDocuments<'a> + Sync,
) -> Vec<Finding> {
    let mut out = check_program(program);
    let limitations = limitations_by_output(program, &documents);
    // Kept aside: what the model-facing schemas cannot express matters only for files that
    // are written, so these are added only when no error was found.
    let mut model = Vec::new();
    for (i, node) in program.nodes.iter().enumerate() {
        if has_examples(node, examples) {
            let d = documents(i, node, true);
            let input = d.input.as_deref().unwrap_or(&Value::Null);
            out.extend(check_examples(program, node, input, &d.output, examples));
        }
        if node.output_stage.raw_parse.is_some() {
            continue; // the model answers in text: no model-facing schema
        }
        if let Some(limits) = limitations.get(&output_key(node)) {
            model.extend(limitation_findings(node, limits));
        }
    }
    if !out.iter().any(|f| f.diagnostic.is_error()) {
        out.extend(model);
    }
    out
}

/// What tells the nodes' model-facing limitations apart: the output type. A node's output
/// document differs from another's of the same type by its title alone, which no limitation
/// reads (nor names: the finding adds the node's name). Nodes that answer with the same type
/// are common (four per output in the generated benchmark project), and making the variants
/// is most of the rules' time.
fn output_key(node: &NodeIr) -> String {
    format!("{:?}", node.output)
}

/// The limitations of the model-facing variants of each output type that a node without a
/// raw parse answers with, found once per type, the types shared between the cores.
fn limitations_by_output<'a>(
    program: &Program,
    documents: &(impl Fn(usize, &NodeIr, bool) -> NodeDocuments<'a> + Sync),
) -> HashMap<String, Vec<Limitation>> {
    let mut first: Vec<(String, usize)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, node) in program.nodes.iter().enumerate() {
        if node.output_stage.raw_parse.is_none() {
            let key = output_key(node);
            if seen.insert(key.clone()) {
                first.push((key, i));
            }
        }
    }
    // A type's variants take well under a millisecond: a second thread, which costs the pages
    // of an allocator heap of its own (5.6 MiB more resident for a 10k-line project with 13
    // output types), pays from a few dozen types on.
    let found = crate::parallel::map_in_order(&first, first.len() >= 64, |(_, i)| {
        let node = &program.nodes[*i];
        super::model_schema::limitations(&node.name, &documents(*i, node, false).output)
    });
    first.into_iter().map(|(key, _)| key).zip(found).collect()
}

/// Whether any of `examples` is one of `node`'s, which only an agent has.
fn has_examples(node: &NodeIr, examples: &[Example]) -> bool {
    node.kind == NodeKind::Agent && examples.iter().any(|e| e.agent == node.name)
}

/// The findings of `node` for the `limitations` of its output's model-facing variants.
fn limitation_findings(node: &NodeIr, limitations: &[Limitation]) -> Vec<Finding> {
    limitations
        .iter()
        .map(|l| Finding {
            diagnostic: CodegenError::Limitation {
                node: node.name.clone(),
                limitation: l.clone(),
            }
            .into(),
            place: Place::item(&node.module, &node.name),
        })
        .collect()
}

/// The schema rules: reserved codes, platform bounds of every node's types, bare outputs.
pub fn check_program(program: &Program) -> Vec<Finding> {
    let mut out = Vec::new();
    for set in &program.errors {
        for code in &set.codes {
            if RESERVED_CODES.contains(&code.name.as_str()) {
                out.push(Finding {
                    diagnostic: CodegenError::InternalReservedCode {
                        set: set.name.clone(),
                        module: set.module.clone(),
                        code: code.name.clone(),
                    }
                    .into(),
                    place: Place::item(&set.module, &set.name),
                });
            }
        }
    }
    // Each node's types are walked on their own (its bounds, its depth): the nodes are shared
    // between the cores where there are enough of them to pay for a thread.
    let by_node = crate::parallel::map_in_order(
        &program.nodes,
        program.nodes.len() >= NODES_FOR_THREADS,
        |node| {
            let mut found = Vec::new();
            check_node_types(program, node, &mut found);
            found
        },
    );
    for (node, found) in program.nodes.iter().zip(by_node) {
        out.extend(found.into_iter().map(|diagnostic| Finding {
            diagnostic,
            place: Place::item(&node.module, &node.name),
        }));
    }
    out
}

/// From this many nodes on, [`check_program`] walks their types on every core: a node's walk
/// takes tens of microseconds, a thread's start and its allocator heap about as much as a few
/// dozen of them.
const NODES_FOR_THREADS: usize = 256;

fn check_node_types(program: &Program, node: &NodeIr, out: &mut Vec<Diagnostic>) {
    let types = &program.types;
    let mut seen = BTreeSet::new();
    let places = node
        .params
        .iter()
        .map(|p| (Some(&p.name), &p.ty))
        .chain([(None, &node.output)]);
    for (param, ty) in places {
        // Named only when a finding needs it: most nodes have none.
        let place = || match param {
            Some(name) => format!("parameter `{name}`"),
            None => "output".to_owned(),
        };
        let mut bounds = Vec::new();
        collect_bound_breaks(ty, types, &mut seen, &mut bounds);
        for (limit, what) in bounds {
            out.push(
                CodegenError::InternalBound {
                    place: place(),
                    node: node.name.clone(),
                    what,
                    limit,
                }
                .into(),
            );
        }
        if !fits_depth_limit(ty, types) {
            out.push(
                CodegenError::InternalDepth {
                    place: place(),
                    node: node.name.clone(),
                    max_depth: limits::MAX_DEPTH,
                }
                .into(),
            );
        }
    }
    for warning in bare_output_fields(&node.output, types) {
        out.push(
            CodegenError::BareOutput {
                node: node.name.clone(),
                field: warning,
            }
            .into(),
        );
    }
}

/// Every list or set inside `ty` whose bound breaks the platform's: the bound, and what.
fn collect_bound_breaks(
    ty: &Ty,
    types: &TypeTable,
    seen: &mut BTreeSet<u32>,
    out: &mut Vec<(u32, String)>,
) {
    match ty {
        Ty::List(list) => {
            if list.unique && list.max > limits::MAX_UNIQUE_ITEMS {
                let what = format!("a `Set` of up to {} items", list.max);
                out.push((limits::MAX_UNIQUE_ITEMS, what));
            } else if list.max > limits::MAX_ITEMS {
                let what = format!("a `List` of up to {} items", list.max);
                out.push((limits::MAX_ITEMS, what));
            }
            collect_bound_breaks(&list.item, types, seen, out);
        }
        Ty::Map(map) => {
            collect_bound_breaks(&map.key, types, seen, out);
            collect_bound_breaks(&map.value, types, seen, out);
        }
        Ty::Option { some } => collect_bound_breaks(some, types, seen, out),
        Ty::Ref { def } => {
            if !seen.insert(def.0) {
                return;
            }
            match types.get(*def).map(|d| &d.kind) {
                Some(DefKind::Struct { fields }) => {
                    for f in fields {
                        collect_bound_breaks(&f.ty, types, seen, out);
                    }
                }
                Some(DefKind::Enum { variants, .. }) => {
                    for f in variants.iter().flat_map(|v| v.fields.iter().flatten()) {
                        collect_bound_breaks(&f.ty, types, seen, out);
                    }
                }
                Some(DefKind::Alias { ty }) => collect_bound_breaks(ty, types, seen, out),
                None => {}
            }
        }
        Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Str(_) | Ty::Media(_) => {}
    }
}

/// Descriptions of output fields that say nothing of their shape.
fn bare_output_fields(output: &Ty, types: &TypeTable) -> Vec<BareField> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(String, &Ty, bool)> = vec![("output".to_owned(), output, false)];
    while let Some((path, ty, documented)) = stack.pop() {
        match ty {
            Ty::Option { some } => stack.push((path, some, documented)),
            Ty::List(list) => stack.push((format!("{path}[]"), &list.item, documented)),
            Ty::Map(map) => {
                let free_keys = matches!(
                    types.resolve(&map.key),
                    Some(Ty::Str(s)) if s.pattern.is_none() && s.format.is_none()
                );
                if free_keys && !documented {
                    out.push(BareField::FreeKeys { path: path.clone() });
                }
                stack.push((format!("{path}{{}}"), &map.value, false));
            }
            Ty::Ref { def } => {
                if !seen.insert(def.0) {
                    continue;
                }
                let Some(d) = types.get(*def) else { continue };
                match &d.kind {
                    DefKind::Struct { fields } => {
                        if fields.is_empty() {
                            out.push(BareField::NoFields {
                                path: path.clone(),
                                ty: d.name.clone(),
                            });
                        }
                        for f in fields.iter().rev() {
                            stack.push((format!("{path}.{}", f.name), &f.ty, f.docs.is_some()));
                        }
                    }
                    DefKind::Enum { variants, .. } => {
                        for v in variants.iter().rev() {
                            for f in v.fields.iter().flatten().rev() {
                                stack.push((format!("{path}.{}", f.name), &f.ty, f.docs.is_some()));
                            }
                        }
                    }
                    DefKind::Alias { ty } => stack.push((path, ty, documented || d.docs.is_some())),
                }
            }
            Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Str(_) | Ty::Media(_) => {}
        }
    }
    out
}

/// Validates one agent's examples against its emitted `input` and `output` schemas.
pub fn check_examples(
    program: &Program,
    node: &NodeIr,
    input_schema: &Value,
    output_schema: &Value,
    examples: &[Example],
) -> Vec<Finding> {
    let mut out = Vec::new();
    // Compiling the two validators costs more than anything else here: not for nothing.
    if !has_examples(node, examples) {
        return out;
    }
    let input_validator = validator(input_schema);
    let output_validator = validator(output_schema);
    let declared: Vec<&str> = node
        .fails
        .and_then(|id| program.errors.get(id.0 as usize))
        .map(|set| set.codes.iter().map(|c| c.name.as_str()).collect())
        .unwrap_or_default();
    for (index, example) in examples.iter().enumerate() {
        if example.agent != node.name {
            continue;
        }
        let mut push = |diagnostic: Diagnostic, at: ExampleAt| {
            out.push(Finding {
                diagnostic,
                place: Place::Example { index, at },
            })
        };
        let whole = || ExampleAt::Value(String::new());
        let value: Value = match serde_json::from_str(&example.text) {
            Ok(v) => v,
            Err(err) => {
                push(
                    malformed(
                        example,
                        NotAnExample::NotJson {
                            error: err.to_string(),
                        },
                    ),
                    ExampleAt::LineColumn(err.line(), err.column()),
                );
                continue;
            }
        };
        let Some(object) = value.as_object() else {
            push(malformed(example, NotAnExample::NotAnObject), whole());
            continue;
        };
        for key in object.keys() {
            if !["input", "answers", "output", "status", "code"].contains(&key.as_str()) {
                push(
                    malformed(example, NotAnExample::UnknownKey { key: key.clone() }),
                    ExampleAt::Key(pointer_to(&[key])),
                );
            }
        }
        match object.get("input") {
            Some(input) => {
                if let Some(v) = &input_validator {
                    for (d, at) in schema_errors(v, input, ExampleValue::Input, example) {
                        push(d, at);
                    }
                }
            }
            None => push(malformed(example, NotAnExample::NoInput), whole()),
        }
        if object.get("answers").is_some_and(|a| !a.is_array()) {
            push(
                malformed(example, NotAnExample::AnswersNotAList),
                ExampleAt::Value("/answers".to_owned()),
            );
        }
        match (object.get("output"), object.get("status")) {
            (Some(output), None) => {
                if let Some(v) = &output_validator {
                    for (d, at) in schema_errors(v, output, ExampleValue::Output, example) {
                        push(d, at);
                    }
                }
            }
            (None, Some(status)) => {
                let status = status.as_str().unwrap_or_default();
                if !FAILURE_STATUSES.contains(&status) {
                    push(
                        malformed(
                            example,
                            NotAnExample::Status {
                                statuses: &FAILURE_STATUSES,
                            },
                        ),
                        ExampleAt::Value("/status".to_owned()),
                    );
                }
                if let Some(code) = object.get("code").and_then(Value::as_str) {
                    if !declared.contains(&code) && !RESERVED_CODES.contains(&code) {
                        push(
                            undeclared_code(example, node, code, &declared),
                            ExampleAt::Value("/code".to_owned()),
                        );
                    }
                }
            }
            (Some(_), Some(_)) => push(
                malformed(example, NotAnExample::BothOutputAndStatus),
                ExampleAt::Key("/status".to_owned()),
            ),
            (None, None) => push(
                malformed(example, NotAnExample::NeitherOutputNorStatus),
                whole(),
            ),
        }
    }
    out
}

/// `E0808`: an example expects a failure code its agent does not declare.
fn undeclared_code(example: &Example, node: &NodeIr, code: &str, declared: &[&str]) -> Diagnostic {
    CodegenError::UndeclaredCode {
        path: example.path.clone(),
        node: node.name.clone(),
        code: code.to_owned(),
        declared: declared.iter().map(|c| c.to_string()).collect(),
        suggestion: crate::diagnostics::suggest::did_you_mean(code, declared.iter().copied())
            .map(str::to_owned),
    }
    .into()
}

/// A JSON Pointer (RFC 6901) of the given reference tokens: `~` as `~0`, `/` as `~1`.
fn pointer_to(tokens: &[&str]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::draft202012::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

/// `code` for each way `instance` (the example's `which`) breaks its schema, at most 20, each
/// with the place of the offending value in the example file.
fn schema_errors(
    validator: &jsonschema::Validator,
    instance: &Value,
    which: ExampleValue,
    example: &Example,
) -> Vec<(Diagnostic, ExampleAt)> {
    validator
        .iter_errors(instance)
        .take(20)
        .map(|error| {
            let pointer = error.instance_path().to_string();
            let at = ExampleAt::Value(format!("/{}{pointer}", which.key()));
            let diagnostic = CodegenError::ExampleSchema {
                path: example.path.clone(),
                which,
                pointer,
                error: error.to_string(),
            };
            (diagnostic.into(), at)
        })
        .collect()
}

fn malformed(example: &Example, why: NotAnExample) -> Diagnostic {
    CodegenError::NotAnExample {
        path: example.path.clone(),
        why,
    }
    .into()
}
