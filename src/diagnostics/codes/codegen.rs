//! Diagnostic codes of the `codegen` layer: the publishing rules of spec §9.2, checked by
//! `aelc build` before anything is written (`src/codegen/publish.rs`).
//!
//! The rules the checker already enforces on the source (reserved codes, platform bounds and
//! depth) are re-checked on the IR as an invariant, reported as the internal `E0810`; their
//! former author-facing codes `E0801`–`E0804` are retired (see [`super::RETIRED`]).
//!
//! Each `example` is a small archive of files with its fix (`-- PATH --`, `-- fix --`; see
//! `book/src/diagnostics.md`), executed by `tests/it/book.rs`.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0805",
        title: "example input does not match the input schema",
        explanation: "Examples are validated against the emitted schemas at publish (spec §9.2). The message gives the JSON Pointer of the offending value inside the example's `input` and the rule it breaks; the diagnostic points at that value in the example file, in `aelc check` and the language server as in `aelc build`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
/// A question.
struct Question { text: Str<200> }
/// An answer.
struct Answer { text: Str<200> }

/// Answers a question.
agent answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
        price: 0.001 EUR;
        examples: "examples/answer/*.json";
    }
}
-- examples/answer/bad.json --
{"input": {"text": 42}, "answers": [], "status": "rejected_input", "code": "invalid_input"}
-- fix --
-- examples/answer/bad.json --
{"input": {"text": ""}, "answers": ["{\"text\": \"Nothing to answer.\"}"], "output": {"text": "Nothing to answer."}}"#,
    },
    CodeInfo {
        code: "E0806",
        title: "example output does not match the output schema",
        explanation: "An example's expected `output` must be a valid value of the agent's output type, checked against the emitted output schema. The message gives the JSON Pointer of the offending value inside `output`; the diagnostic points at that value in the example file, in `aelc check` and the language server as in `aelc build`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
/// A question.
struct Question { text: Str<200> }
/// An answer.
struct Answer { text: Str<200> }

/// Answers a question.
agent answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
        price: 0.001 EUR;
        examples: "examples/answer/*.json";
    }
}
-- examples/answer/ok.json --
{"input": {"text": "Why?"}, "answers": ["{\"text\": \"Because.\"}"], "output": {"text": 3}}
-- fix --
-- examples/answer/ok.json --
{"input": {"text": "Why?"}, "answers": ["{\"text\": \"Because.\"}"], "output": {"text": "Because."}}"#,
    },
    CodeInfo {
        code: "E0807",
        title: "malformed example file",
        explanation: "An example is a JSON object `{\"input\": …, \"answers\": [\"…\"], \"output\": …}`, or with `\"status\"` (`rejected_input`, `invalid_output`, `failed`, `error`) and `\"code\"` instead of `\"output\"` for a failing case. Other keys, a missing `input`, or both `output` and `status` are errors.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
/// A question.
struct Question { text: Str<200> }
/// An answer.
struct Answer { text: Str<200> }

/// Answers a question.
agent answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
        price: 0.001 EUR;
        examples: "examples/answer/*.json";
    }
}
-- examples/answer/ok.json --
{"inputs": {"text": "Why?"}, "answers": ["{\"text\": \"Because.\"}"], "output": {"text": "Because."}}
-- fix --
-- examples/answer/ok.json --
{"input": {"text": "Why?"}, "answers": ["{\"text\": \"Because.\"}"], "output": {"text": "Because."}}"#,
    },
    CodeInfo {
        code: "E0808",
        title: "example expects an undeclared code",
        explanation: "A failing example's `code` must be one the agent declares with `fails E`, or a reserved code of the platform; otherwise the example could never pass.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
/// A question.
struct Question { text: Str<200> }
/// An answer.
struct Answer { text: Str<200> }

/// Answers a question.
agent answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
    publish {
        capability: "qa.answer";
        price: 0.001 EUR;
        examples: "examples/answer/*.json";
    }
}
-- examples/answer/blank.json --
{"input": {"text": " "}, "answers": [], "status": "failed", "code": "empty_question"}
-- fix --
-- examples/answer/blank.json --
{"input": {"text": "Why?"}, "answers": ["{\"text\": \"Because.\"}"], "output": {"text": "Because."}}"#,
    },
    CodeInfo {
        code: "E0809",
        title: "manifest could not be serialized",
        explanation: "The manifest of an agent could not be written as YAML. This is a bug in aelc; please report it with the project that triggers it.",
        example: "// no known trigger",
    },
    CodeInfo {
        code: "E0810",
        title: "typed IR breaks a rule the checker enforces",
        explanation: "Before writing anything, `aelc build` checks the typed IR again against the publishing rules that the checker already enforces on the source: no declared reserved code (E0408), the platform's collection bounds (E0303) and nesting depth (E0313). A program that passed the checker always keeps them, so this error means the IR was made without it, or that the checker has a bug. The message names the rule and the item; please report the project that triggers it.",
        example: "// no known trigger",
    },
    CodeInfo {
        code: "E0850",
        title: "name cannot be spelled in the Rust glue",
        explanation: "`aelc build` writes Rust glue (spec §9.4) with a Rust item per AEL name: types and variants in `UpperCamelCase`, fields, fns and nodes in `snake_case`. A Rust keyword becomes a raw identifier (`r#type`), and `self`, `Self`, `super` and `crate`, which not even `r#` can spell, get a trailing underscore (`self_`); serde keeps the AEL spelling on the wire. But two AEL names that become the same Rust name (`max_items` and `maxItems`, `self` and `self_`, or a node named like a generated module: `rules`, `defaults`, `externs`, `program`) would not compile. aelc reports them instead of writing glue that fails to build; rename one of them.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"
-- types.ael --
/// One page of results.
struct Page {
    max_items: u8,
    maxItems: u8,
}
-- fix --
-- types.ael --
/// One page of results.
struct Page {
    max_items: u8,
    page_size: u8,
}"#,
    },
    CodeInfo {
        code: "W0801",
        title: "output field with no predictable shape",
        explanation: "A field of an output that is an object with no fields, or a `Map` with free text keys and no doc comment, validates and bills but tells the caller nothing about what it holds (spec §9.2). Declare the fields as a struct, key the map by a unit enum, or document the keys with `///`.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer the question: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { scores: Map<Str<32>, f64, 100> }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Scores { relevance: f64, clarity: f64 }
struct Answer { scores: Scores }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "W0802",
        title: "output schema past OpenAI's strict-mode limits",
        explanation: "OpenAI's strict structured outputs take at most 1,000 enum values in a schema (and at most 15,000 characters in one enum of more than 250 values), at most 5,000 object properties, at most 10 levels of object nesting and at most 120,000 characters of names and values. An output past one of these is sent with `strict: false`: OpenAI then steers the answer by the schema without guaranteeing it, and the pipeline checks every answer against the type as always (spec §6.1). The message names the limit. Split the output into smaller types or nodes, or shorten the enum, to keep strict mode.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct L11 { v: u8 }
struct L10 { next: L11 }
struct L9 { next: L10 }
struct L8 { next: L9 }
struct L7 { next: L8 }
struct L6 { next: L7 }
struct L5 { next: L6 }
struct L4 { next: L5 }
struct L3 { next: L4 }
struct L2 { next: L3 }
struct Answer { next: L2 }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer { v: u8 }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "W0803",
        title: "map written as a list of key/value pairs",
        explanation: "No provider's structured-output mode takes a JSON object with free keys (`additionalProperties` as a schema): OpenAI's strict mode and Anthropic's structured outputs refuse it, Gemini drops it. So the model-facing schemas (spec §9.3) write a `Map<K, V, N>` as a list of at most N `{\"key\": K, \"value\": V}` objects, and keep strict mode for the rest of the answer. The runtime turns such a list back into the map before the pipeline checks the answer (a repeated key stays repeated and is refused as in any map), so the node's output is still the map. The warning says the model sees a list; when the keys are known in advance, a struct with one field per key is simpler for the model.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Answer: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Answer {
    /// A score between 0 and 1 per topic named in the question.
    scores: Map<Str<32>, f64, 100>,
}

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Scores { relevance: f64, clarity: f64 }
struct Answer { scores: Scores }

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
    CodeInfo {
        code: "W0804",
        title: "recursive output type cut for Gemini",
        explanation: "Gemini's `responseJsonSchema` follows a cyclic `$ref` only under optional properties, so the Gemini variant (spec §9.3) writes named types inline and unrolls a recursive type three levels deep along any path. Past that it cuts soundly: whatever would recurse further is left out (an `Option` is `null`, a list or map is empty, a data-enum arm that recurses is dropped), so the model is offered only values the type accepts, but not the deeper ones. The pipeline still accepts any depth the type allows from other providers. Bound the depth in the type (nested types of fixed depth) if a Gemini model must write deeper values.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"

[bindings.main]
provider = "replay"
model = "recorded"
-- prompts/answer.md --
Outline: {{ q.text }}
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Section {
    title: Str<80>,
    children: List<Section, 5>,
}

node answer(q: Question) -> Section {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}
-- fix --
-- nodes/answer.node.ael --
struct Question { text: Str<200> }
struct Leaf { title: Str<80> }
struct Section {
    title: Str<80>,
    children: List<Leaf, 5>,
}

node answer(q: Question) -> Section {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
];
