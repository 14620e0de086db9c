//! Typed findings of code generation and of the publishing rules (spec §9.2), and their one
//! conversion into [`Diagnostic`]s.
//!
//! The IR carries no spans: each finding names its items and example files, and the caller
//! pairs it with a [`super::publish::Place`]. The text for people is made only in
//! [`CodegenError::to_diagnostic`]; the codes are registered in `diagnostics/codes/codegen.rs`.

use super::model_schema::Limitation;
use crate::diagnostics::Diagnostic;

/// Why an example file is not an example (`E0807`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAnExample {
    /// It is not JSON; `error` is the JSON reader's message.
    NotJson {
        error: String,
    },
    NotAnObject,
    /// It has the key `key`, which no example has.
    UnknownKey {
        key: String,
    },
    NoInput,
    AnswersNotAList,
    /// Its `status` is none of `statuses`, the ones an example may expect.
    Status {
        statuses: &'static [&'static str],
    },
    BothOutputAndStatus,
    NeitherOutputNorStatus,
}

/// An output field whose shape a caller cannot predict (`W0801`); `path` is where it is in
/// the output (`output.findings[].extra`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BareField {
    /// A map with free text keys and no doc comment.
    FreeKeys { path: String },
    /// A struct `ty` with no fields.
    NoFields { path: String, ty: String },
}

/// Which value of an example breaks its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExampleValue {
    /// `E0805`.
    Input,
    /// `E0806`.
    Output,
}

impl ExampleValue {
    /// The example's key: `input` or `output`.
    pub fn key(self) -> &'static str {
        match self {
            ExampleValue::Input => "input",
            ExampleValue::Output => "output",
        }
    }
}

/// One finding of code generation or of the publishing rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodegenError {
    /// `E0810`: a declared `errors` set (`set`, in `module`) declares the reserved `code`;
    /// the checker refuses it as E0408.
    InternalReservedCode {
        set: String,
        module: String,
        code: String,
    },
    /// `E0810`: the `place` ("output", "parameter `x`") of `node` holds `what`, a list or set
    /// bounded over the platform's `limit`; the checker refuses it as E0303.
    InternalBound {
        place: String,
        node: String,
        what: String,
        limit: u32,
    },
    /// `E0810`: the `place` of `node` has no value nesting at most `max_depth` levels; the
    /// checker refuses it as E0313.
    InternalDepth {
        place: String,
        node: String,
        max_depth: usize,
    },
    /// `W0801`: the output of `node` has `field`, whose shape a caller cannot predict.
    BareOutput { node: String, field: BareField },
    /// `W0802`–`W0804`: what a provider's model-facing schema of `node`'s output cannot
    /// express (see [`super::model_schema`]).
    Limitation {
        node: String,
        limitation: Limitation,
    },
    /// `E0805`/`E0806`: the `which` value of the example at `path` breaks its schema at the
    /// JSON Pointer `pointer`; `error` is the validator's message.
    ExampleSchema {
        path: String,
        which: ExampleValue,
        pointer: String,
        error: String,
    },
    /// `E0807`: the file at `path` is not an example.
    NotAnExample { path: String, why: NotAnExample },
    /// `E0808`: the example at `path` expects `code`, which `node` does not declare
    /// (`declared`: the codes it does; `suggestion`: the closest of them).
    UndeclaredCode {
        path: String,
        node: String,
        code: String,
        declared: Vec<String>,
        suggestion: Option<String>,
    },
    /// `E0809`: the manifest of `node` could not be written as YAML (`error`).
    ManifestYaml { node: String, error: String },
    /// `E0850`: the `kind` (`type`, `errors`, `node`) `name` has a name Rust cannot spell.
    Unspellable { kind: &'static str, name: String },
    /// `E0850`: the field `field` of `of` ("`T`", "`E::V`") cannot be a Rust name.
    UnspellableField { field: String, of: String },
    /// `E0850`: the variant `variant` of the enum `of` cannot be a Rust name.
    UnspellableVariant { variant: String, of: String },
    /// `E0850`: `what` and the names `with` are all `rust` in Rust, within `place`.
    RustClash {
        what: String,
        with: Vec<String>,
        rust: String,
        place: String,
    },
}

impl CodegenError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            CodegenError::InternalReservedCode { set, module, code } => internal(
                format!("`errors {set}` in `{module}` declares `{code}`, a code the platform reserves"),
                "E0408",
            ),
            CodegenError::InternalBound {
                place,
                node,
                what,
                limit,
            } => internal(
                format!("the {place} of `{node}` holds {what}, over the platform bound of {limit}"),
                "E0303",
            ),
            CodegenError::InternalDepth {
                place,
                node,
                max_depth,
            } => internal(
                format!(
                    "the {place} of `{node}` has no value that nests at most {max_depth} levels deep"
                ),
                "E0313",
            ),
            CodegenError::BareOutput { node, field } => {
                let what = match field {
                    BareField::FreeKeys { path } => format!(
                        "a field `{path}` that is a map with free text keys and no doc comment"
                    ),
                    BareField::NoFields { path, ty } => {
                        format!("a field `{path}` of type `{ty}`, an object with no fields")
                    }
                };
                Diagnostic::new("W0801", format!("the output of `{node}` has {what}"))
                    .note("a caller that cannot predict the shape of an answer cannot use it")
                    .help("declare the fields as a struct, key the map by a unit enum, or document the keys with `///`")
            }
            CodegenError::Limitation { node, limitation } => {
                let message = match limitation {
                    Limitation::NotStrict { broken } => format!(
                        "a model-facing schema past OpenAI's strict-mode limits ({}), sent with \
                         `strict: false`",
                        broken.join("; ")
                    ),
                    Limitation::MapsAsEntries { maps } => format!(
                        "a `Map` (at {}), which the model-facing schemas write as a list of \
                         {{key, value}} objects",
                        maps.join(", ")
                    ),
                    Limitation::RecursionCut { types, levels } => format!(
                        "the recursive {} {}, which the Gemini schema unrolls {levels} levels \
                         deep: deeper values cannot be written by a Gemini model",
                        if types.len() == 1 { "type" } else { "types" },
                        types
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let (note, help) = match limitation {
                    Limitation::NotStrict { .. } => (
                        "OpenAI then constrains the answer less; the pipeline still checks it",
                        "split the output, or shorten the enum, so the schema fits strict mode",
                    ),
                    Limitation::MapsAsEntries { .. } => (
                        "the runtime turns the list back into the map before the pipeline checks it",
                        "key the data by a struct's fields if they are known in advance",
                    ),
                    Limitation::RecursionCut { .. } => (
                        "the pipeline accepts deeper values, but a Gemini model cannot write them",
                        "bound the depth in the type (a fixed number of levels) if deeper values matter",
                    ),
                };
                Diagnostic::new(
                    limitation.code(),
                    format!("the output of `{node}` holds {message}"),
                )
                    .note(note)
                    .help(help)
            }
            CodegenError::ExampleSchema {
                path,
                which,
                pointer,
                error,
            } => {
                let code = match which {
                    ExampleValue::Input => "E0805",
                    ExampleValue::Output => "E0806",
                };
                let which = which.key();
                let shown = if pointer.is_empty() { "/" } else { pointer };
                Diagnostic::new(
                    code,
                    format!(
                        "example `{path}`: the {which} at `{shown}` does not match the {which} schema: {error}"
                    ),
                )
                .help(format!(
                    "fix the example, or the type, so that `{which}{pointer}` is valid"
                ))
            }
            CodegenError::NotAnExample { path, why } => {
                let why = match why {
                    NotAnExample::NotJson { error } => format!("it is not JSON ({error})"),
                    NotAnExample::NotAnObject => "it is not a JSON object".to_owned(),
                    NotAnExample::UnknownKey { key } => format!("it has an unknown key `{key}`"),
                    NotAnExample::NoInput => "it has no `input`".to_owned(),
                    NotAnExample::AnswersNotAList => {
                        "`answers` is not a list of strings".to_owned()
                    }
                    NotAnExample::Status { statuses } => {
                        format!("its `status` is not one of {}", statuses.join(", "))
                    }
                    NotAnExample::BothOutputAndStatus => {
                        "it has both `output` and `status`".to_owned()
                    }
                    NotAnExample::NeitherOutputNorStatus => {
                        "it has neither `output` nor `status`".to_owned()
                    }
                };
                Diagnostic::new("E0807", format!("`{path}` is not an example: {why}"))
                    .help("an example is {\"input\": …, \"answers\": [\"…\"], \"output\": …}, or with \"status\" and \"code\" instead of \"output\"")
            }
            CodegenError::UndeclaredCode {
                path,
                node,
                code,
                declared,
                suggestion,
            } => {
                let d = Diagnostic::new(
                    "E0808",
                    format!("example `{path}` expects code `{code}`, which `{node}` does not declare"),
                );
                match suggestion {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!(
                        "declared codes: {}",
                        if declared.is_empty() {
                            "none".to_owned()
                        } else {
                            declared.join(", ")
                        }
                    )),
                }
            }
            CodegenError::ManifestYaml { node, error } => Diagnostic::new(
                "E0809",
                format!("the manifest of `{node}` could not be written as YAML: {error}"),
            ),
            CodegenError::Unspellable { kind, name } => Diagnostic::new(
                "E0850",
                format!("the {kind} `{name}` cannot be a Rust name, so no Rust glue can be generated"),
            )
            .help("rename it"),
            CodegenError::UnspellableField { field, of } => Diagnostic::new(
                "E0850",
                format!("the field `{field}` of {of} cannot be a Rust name"),
            )
            .help("rename the field"),
            CodegenError::UnspellableVariant { variant, of } => Diagnostic::new(
                "E0850",
                format!("the variant `{variant}` of `{of}` cannot be a Rust name"),
            )
            .help("rename the variant"),
            CodegenError::RustClash {
                what,
                with,
                rust,
                place,
            } => Diagnostic::new(
                "E0850",
                format!(
                    "{} and {what} are both `{rust}` in Rust ({place})",
                    with.join(", ")
                ),
            )
            .help("rename one of them so that the Rust glue can tell them apart"),
        }
    }
}

impl From<CodegenError> for Diagnostic {
    fn from(error: CodegenError) -> Diagnostic {
        error.to_diagnostic()
    }
}

/// The internal error for a rule the checker should have reported as `checker_code`.
fn internal(message: String, checker_code: &str) -> Diagnostic {
    Diagnostic::new("E0810", format!("internal error: {message}"))
        .note(format!(
            "the checker refuses this on the source as {checker_code}, so the typed IR was not \
             made by it, or aelc has a bug"
        ))
        .help("please report the project that triggers this")
}
