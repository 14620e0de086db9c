//! [`NodeError`]: nodes and agents, their blocks, wiring and budgets; builders and streams
//! (`E05xx`, `W05xx`).

use crate::diagnostics::Diagnostic;
use crate::sema::blocks;
use crate::span::Span;

/// The form the value of a block entry must have (`E0504`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expected {
    /// `max_answer`, `max_prompt`: a size.
    Size,
    /// `timeout`: a duration.
    Timeout,
    /// `temperature`.
    Temperature,
    /// `raw`, which takes no value.
    Nothing,
    /// `max_calls`: a count of at least 1.
    PositiveCount,
    /// `max_cost`, `price`.
    Money,
    /// `max_time`: a duration.
    MaxTime,
    /// `capability`.
    Capability,
    /// `examples`.
    ExamplesGlob,
    /// `prompt`.
    PromptFile,
    /// `model`.
    Binding,
    /// An item by name: `want` is "a check", "a fn", ….
    NameOf { want: String },
    /// An entry of `on_failure`.
    Policy,
    /// The count of `retry(n)`, `repair(n)`.
    Times,
    /// `fallback(…)`.
    Fallback,
    /// `fail(…)`.
    Fail,
    /// An entry of `fresh`.
    FreshEntry,
    /// The duration of a `fresh` entry.
    FreshDuration,
}

impl Expected {
    /// The form, as the label says it after "expected".
    fn form(&self) -> String {
        match self {
            Expected::Size => "a size such as `32KiB`".to_owned(),
            Expected::Timeout => "a duration such as `60s`".to_owned(),
            Expected::Temperature => "a number from 0.0 to 2.0".to_owned(),
            Expected::Nothing => "nothing: write `raw;`".to_owned(),
            Expected::PositiveCount => "a count of at least 1".to_owned(),
            Expected::Money => "an amount of money such as `0.05 EUR`".to_owned(),
            Expected::MaxTime => "a duration such as `2m`".to_owned(),
            Expected::Capability => "a string such as \"review.document\"".to_owned(),
            Expected::ExamplesGlob => "a glob such as \"examples/review/*.json\"".to_owned(),
            Expected::PromptFile => "`file(\"prompts/….md\")`".to_owned(),
            Expected::Binding => "`binding(\"name\")`".to_owned(),
            Expected::NameOf { want } => format!("the name of {want}"),
            Expected::Policy => {
                "`retry(n)`, `repair(n)`, `fallback(binding(\"…\"))` or `fail(code)`".to_owned()
            }
            Expected::Times => "a count from 1 to 100".to_owned(),
            Expected::Fallback => "`fallback(binding(\"name\"))`".to_owned(),
            Expected::Fail => "`fail(code)`".to_owned(),
            Expected::FreshEntry => "`parameter duration`, e.g. `camera 200ms`".to_owned(),
            Expected::FreshDuration => "a duration such as `200ms`".to_owned(),
        }
    }
}

/// A node, builder or stream declared wrongly. Types are as the checker describes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NodeError {
    /// `E0501`: the block `name` is none of a node's.
    UnknownBlock {
        span: Span,
        name: String,
        suggestion: Option<String>,
    },
    /// `E0502`: `key` is no key of the block `block` (`keys`: the ones it has).
    UnknownKey {
        span: Span,
        block: String,
        key: String,
        keys: &'static [&'static str],
        suggestion: Option<String>,
    },
    /// `E0502`: `key` is no stream limit.
    UnknownStreamLimit {
        span: Span,
        key: String,
        suggestion: Option<String>,
    },
    /// `E0503`: the file `path` is not in the project.
    NoFile { span: Span, path: String },
    /// `E0504`: the value of `key` is not of the `expected` form.
    WrongValue {
        span: Span,
        key: String,
        expected: Expected,
    },
    /// `E0504`: `combine` is none of its words.
    UnknownCombine {
        span: Span,
        suggestion: Option<String>,
    },
    /// `E0504`: a stream limit `key` of the wrong form.
    StreamLimitValue { span: Span, key: String },
    /// `E0504`: the stream `stream` lacks the limits `missing`.
    StreamLacks {
        span: Span,
        stream: String,
        missing: Vec<String>,
    },
    /// `E0505`: the block `name` is written twice.
    BlockTwice {
        span: Span,
        first: Span,
        name: String,
    },
    /// `E0505`: `key` is written twice in a block.
    KeyTwice {
        span: Span,
        first: Span,
        key: String,
    },
    /// `E0506`: an output check whose first parameter is not the output `output`.
    OutputCheckFirst { span: Span, output: String },
    /// `E0506`: the check parameter `param: ty` is no input of the node; `what` is "input"
    /// or "output" (the kind of check).
    CheckParam {
        span: Span,
        param: String,
        ty: String,
        what: &'static str,
    },
    /// `E0506`: the check can fail with `code`, which the node does not declare.
    CheckCode { span: Span, code: String },
    /// `E0507`: a transform that is not `fn(output: T) -> T` for the output `output`.
    Transform { span: Span, output: String },
    /// `E0508`: `fail(…)` before other policies.
    FailNotLast { span: Span },
    /// `E0510`: the node `node` takes `inputs` inputs and does not say how to combine them.
    NoCombine {
        span: Span,
        node: String,
        inputs: usize,
        /// Where `combine` can be written, when the node has a block to write it by.
        insert: Option<CombineAt>,
    },
    /// `E0511`: `name` in `fresh` is no parameter of `node`.
    NotAParam {
        span: Span,
        name: String,
        node: String,
        suggestion: Option<String>,
    },
    /// `E0512`: `publish` in the node `node`, which is no agent.
    PublishNode { span: Span, node: String },
    /// `E0513`: the binding `binding` does not accept `needed` parts, which the builder's
    /// `kind(…)` sends.
    Accepts {
        span: Span,
        binding: String,
        needed: String,
        kind: String,
    },
    /// `E0514`: a raw parser that is not `extern fn(raw: Raw) -> T` for the output `output`.
    RawParser { span: Span, output: String },
    /// `E0514`: `raw;` without `parse:`.
    RawWithoutParse { span: Span },
    /// `E0514`: `parse:` without `raw;`.
    ParseWithoutRaw { span: Span },
    /// `E0515`: a builder that does not return `Parts`.
    BuilderReturn { span: Span },
    /// `E0515`: a builder's entry that is not a part.
    NotAPart { span: Span },
    /// `E0515`: a part kind `kind` that does not exist.
    UnknownPartKind {
        span: Span,
        kind: String,
        suggestion: Option<String>,
    },
    /// `E0515`: a builder whose parameters are not the node's.
    BuilderParams { span: Span },
    /// `E0516`: the failure policy `policy` does not exist.
    UnknownPolicy {
        span: Span,
        policy: String,
        suggestion: Option<String>,
    },
    /// `E0517`: the binding `binding` is priced in `price`, the budget's `max_cost` in
    /// `currency` (`amount` as written).
    Currency {
        span: Span,
        binding: String,
        price: String,
        amount: String,
        currency: String,
    },
    /// `W0501` (`below`) or `W0502`: `max_answer` is far from `largest`, the largest answer.
    MaxAnswer {
        span: Span,
        max_answer: u64,
        largest: u64,
        below: bool,
    },
}

/// Where E0510's quick fix writes `combine` (an empty span: an insertion point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CombineAt {
    /// At the first entry of the node's `inputs` block (which has only `fresh:`).
    InInputs(Span),
    /// A new `inputs` block before the node's first block.
    NewBlock(Span),
}

impl NodeError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            NodeError::UnknownBlock {
                span,
                name,
                suggestion,
            } => {
                let d = Diagnostic::new("E0501", format!("unknown block `{name}`"))
                    .primary(*span, "not a block of a node");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!(
                        "blocks: {}",
                        blocks::node_block_names().collect::<Vec<_>>().join(", ")
                    )),
                }
            }
            NodeError::UnknownKey {
                span,
                block,
                key,
                keys,
                suggestion,
            } => {
                let d = Diagnostic::new("E0502", format!("unknown key `{key}` in `{block}`"))
                    .primary(*span, "not a key of this block");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!("the keys of `{block}` are: {}", keys.join(", "))),
                }
            }
            NodeError::UnknownStreamLimit {
                span,
                key,
                suggestion,
            } => {
                let d = Diagnostic::new("E0502", format!("unknown stream limit `{key}`"))
                    .primary(*span, "not a stream limit");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NodeError::NoFile { span, path } => {
                Diagnostic::new("E0503", format!("there is no file `{path}`"))
                    .primary(*span, "not found in the project")
                    .help("paths are relative to the project root (the folder holding `ael.toml`)")
            }
            NodeError::WrongValue {
                span,
                key,
                expected,
            } => Diagnostic::new("E0504", format!("wrong value for `{key}`"))
                .primary(*span, format!("expected {}", expected.form())),
            NodeError::UnknownCombine { span, suggestion } => {
                let d = Diagnostic::new("E0504", "`combine` is `together`, `latest` or `zip`")
                    .primary(*span, "unknown way to combine inputs");
                match suggestion {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d,
                }
            }
            NodeError::StreamLimitValue { span, key } => {
                Diagnostic::new("E0504", format!("wrong value for `{key}`"))
                    .primary(*span, "see spec §7.1 for the form of each limit")
            }
            NodeError::StreamLacks {
                span,
                stream,
                missing,
            } => Diagnostic::new(
                "E0504",
                format!("stream `{stream}` lacks {}", missing.join(", ")),
            )
            .primary(*span, "every stream limit is required")
            .help("streams are bounded like every value: write every limit"),
            NodeError::BlockTwice { span, first, name } => {
                Diagnostic::new("E0505", format!("block `{name}` is written twice"))
                    .primary(*span, "second block")
                    .secondary(*first, "first block")
            }
            NodeError::KeyTwice { span, first, key } => {
                Diagnostic::new("E0505", format!("`{key}` is written twice"))
                    .primary(*span, "second entry")
                    .secondary(*first, "first entry")
            }
            NodeError::OutputCheckFirst { span, output } => Diagnostic::new(
                "E0506",
                format!("an output check takes the output ({output}) first"),
            )
            .primary(*span, "its first parameter is not the node's output type")
            .help(format!("declare it `check name(output: {output}, …)`")),
            NodeError::CheckParam {
                span,
                param,
                ty,
                what,
            } => Diagnostic::new(
                "E0506",
                format!("check parameter `{param}: {ty}` is not an input of the node"),
            )
            .primary(*span, format!("cannot be wired as an {what} check here"))
            .help("a check wired to a node takes the node's parameters (and, on output, the output first)"),
            NodeError::CheckCode { span, code } => Diagnostic::new(
                "E0506",
                format!("the check can fail with `{code}`, which the node does not declare"),
            )
            .primary(*span, "failure codes differ")
            .help("use the same `errors` set in the check's and the node's `fails`"),
            NodeError::Transform { span, output } => Diagnostic::new(
                "E0507",
                format!("a transform is `fn(output: {output}) -> {output}`"),
            )
            .primary(*span, "its signature differs")
            .help("the transform receives the checked output and returns a new one of the same type"),
            NodeError::FailNotLast { span } => {
                Diagnostic::new("E0508", "`fail(…)` must be the last policy")
                    .primary(*span, "policies after it would never run")
                    .help("move `fail(…)` to the end; at most one `fail` is allowed")
            }
            NodeError::NoCombine {
                span,
                node,
                inputs,
                insert,
            } => {
                let mut d = Diagnostic::new(
                    "E0510",
                    format!("`{node}` takes {inputs} inputs but does not say how to combine them"),
                )
                .primary(*span, "several parameters need `inputs { combine: … }`")
                .help("add `inputs { combine: together; }` (one call with all inputs), `latest` or `zip`");
                // One quick fix per way of combining, written where the formatter puts it.
                for way in ["together", "latest", "zip"] {
                    d = match insert {
                        Some(CombineAt::InInputs(at)) => {
                            d.fix(*at, format!("combine: {way};\n        "))
                        }
                        Some(CombineAt::NewBlock(at)) => d.fix(
                            *at,
                            format!("inputs {{\n        combine: {way};\n    }}\n    "),
                        ),
                        None => d,
                    };
                }
                d
            }
            NodeError::NotAParam {
                span,
                name,
                node,
                suggestion,
            } => {
                let d = Diagnostic::new("E0511", format!("`{name}` is not a parameter of `{node}`"))
                    .primary(*span, "unknown parameter");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d,
                }
            }
            NodeError::PublishNode { span, node } => {
                Diagnostic::new("E0512", "only an agent can be published")
                    .primary(*span, "`publish` in a node")
                    .help(format!("declare it `agent {node}` to publish it"))
            }
            NodeError::Accepts {
                span,
                binding,
                needed,
                kind,
            } => Diagnostic::new(
                "E0513",
                format!("binding `{binding}` does not accept `{needed}` parts"),
            )
            .primary(*span, format!("the builder sends `{kind}(…)`"))
            .help(format!("add \"{needed}\" to `accepts` of [bindings.{binding}] if the endpoint takes it, or use another binding")),
            NodeError::RawParser { span, output } => Diagnostic::new(
                "E0514",
                format!("a raw parser is `extern fn(raw: Raw) -> {output}`"),
            )
            .primary(*span, "its signature differs")
            .help("the raw answer reaches an extern fn as `Raw` text; it returns the node's output"),
            NodeError::RawWithoutParse { span } => Diagnostic::new("E0514", "`raw;` needs `parse: f;`")
                .primary(*span, "nothing turns the raw answer into the output")
                .help("add `parse: parse_fn;` with `extern fn parse_fn(raw: Raw) -> Output;`"),
            NodeError::ParseWithoutRaw { span } => Diagnostic::new("E0514", "`parse:` needs `raw;`")
                .primary(*span, "the answer is decoded as JSON unless the output is raw")
                .help("add `raw;` to the output block"),
            NodeError::BuilderReturn { span } => {
                Diagnostic::new("E0515", "a builder returns `Parts`").primary(*span, "expected `Parts`")
            }
            NodeError::NotAPart { span } => Diagnostic::new(
                "E0515",
                "a builder lists parts such as `text(…)` or `image(…)`",
            )
            .primary(*span, "not a part"),
            NodeError::UnknownPartKind {
                span,
                kind,
                suggestion,
            } => {
                let d = Diagnostic::new("E0515", format!("unknown part kind `{kind}`"))
                    .primary(*span, "not a part kind");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!(
                        "parts: {}",
                        aelc_runtime::prompt::PartWord::ALL.map(|w| w.as_str()).join(", ")
                    )),
                }
            }
            NodeError::BuilderParams { span } => {
                Diagnostic::new("E0515", "the builder does not take the node's parameters")
                    .primary(*span, "parameters differ")
                    .help("a builder takes exactly the node's parameters, in order")
            }
            NodeError::UnknownPolicy {
                span,
                policy,
                suggestion,
            } => {
                let d = Diagnostic::new("E0516", format!("unknown failure policy `{policy}`"))
                    .primary(*span, "not a policy");
                match suggestion {
                    Some(s) => d.did_you_mean(*span, s),
                    None => d.help(format!(
                        "policies: {}",
                        crate::sema::blocks::POLICIES
                            .iter()
                            .map(|(_, written)| *written)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
            NodeError::Currency {
                span,
                binding,
                price,
                amount,
                currency,
            } => Diagnostic::new(
                "E0517",
                format!(
                    "binding `{binding}` is priced in {price}, and the budget's max_cost is in {currency}"
                ),
            )
            .primary(*span, format!("{amount} {currency}"))
            .help(format!(
                "write max_cost in {price}, or price [bindings.{binding}] in {currency}: money is never converted"
            )),
            NodeError::MaxAnswer {
                span,
                max_answer,
                largest,
                below: true,
            } => Diagnostic::new(
                "W0501",
                format!(
                    "`max_answer` is {max_answer} bytes, below the largest answer ({largest} bytes)"
                ),
            )
            .primary(*span, "a valid answer may be rejected as too large")
            .help("remove `max_answer` to use the exact default, or raise it"),
            NodeError::MaxAnswer {
                span,
                max_answer,
                largest,
                below: false,
            } => Diagnostic::new(
                "W0502",
                format!(
                    "`max_answer` is {max_answer} bytes, far above the largest answer ({largest} bytes)"
                ),
            )
            .primary(
                *span,
                "the model may be asked for far more tokens than any valid answer needs",
            )
            .help("remove `max_answer` to use the exact default"),
        }
    }
}
