//! Diagnostic codes of the `codegen` layer: the publishing rules of spec §9.2, checked by
//! `aelc build` before anything is written (`src/codegen/publish.rs`).
//!
//! Each `example` is a small archive of files with its fix (`-- PATH --`, `-- fix --`; see
//! `book/src/diagnostics.md`), executed by `tests/book.rs`.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0801",
        title: "reserved failure code declared",
        explanation: "The platform reserves the codes `invalid_input invalid_output rejected_input truncated_output undecodable_output stale_input timeout budget_exceeded model_unavailable cancelled internal_error` for outcomes it reports itself. An `errors` set may not declare one, because a caller could not tell the agent's failure from the platform's; the publish is refused.",
        example: r#"errors ReviewError {
    /// Refused: the platform reports `timeout` itself.
    timeout,
}
-- fix --
errors ReviewError {
    /// The review took too long for the caller's deadline.
    too_slow,
}"#,
    },
    CodeInfo {
        code: "E0802",
        title: "set over the uniqueItems bound",
        explanation: "A `Set<T, N>` is an array with `uniqueItems: true`. Checking that items are distinct compares every pair, so the platform accepts `uniqueItems` only with `maxItems` of at most 1000 (spec §8). A node whose input or output holds a larger set cannot be published.",
        example: r#"struct Tags { tags: Set<Str<20>, 5000> }
-- fix --
struct Tags { tags: Set<Str<20>, 1000> }"#,
    },
    CodeInfo {
        code: "E0803",
        title: "list over the platform's array bound",
        explanation: "The platform refuses any array of more than 10,000 items (spec §8), so a `List` bound above that could never be filled. Lower the bound to at most 10,000.",
        example: r#"struct Rows { rows: List<u32, 20000> }
-- fix --
struct Rows { rows: List<u32, 10000> }"#,
    },
    CodeInfo {
        code: "E0804",
        title: "type nests deeper than the platform allows",
        explanation: "A payload may nest at most 64 arrays and objects inside each other (spec §8). A type whose every value nests deeper (a required recursive field, or a chain of more than 64 nested structs) has no value the platform would accept.",
        example: r#"use types::chain::S2;

/// Nests 65 objects deep: one more than a payload may.
struct S1 { next: S2 }
-- types/chain.ael --
struct S2 { next: S3 }
struct S3 { next: S4 }
struct S4 { next: S5 }
struct S5 { next: S6 }
struct S6 { next: S7 }
struct S7 { next: S8 }
struct S8 { next: S9 }
struct S9 { next: S10 }
struct S10 { next: S11 }
struct S11 { next: S12 }
struct S12 { next: S13 }
struct S13 { next: S14 }
struct S14 { next: S15 }
struct S15 { next: S16 }
struct S16 { next: S17 }
struct S17 { next: S18 }
struct S18 { next: S19 }
struct S19 { next: S20 }
struct S20 { next: S21 }
struct S21 { next: S22 }
struct S22 { next: S23 }
struct S23 { next: S24 }
struct S24 { next: S25 }
struct S25 { next: S26 }
struct S26 { next: S27 }
struct S27 { next: S28 }
struct S28 { next: S29 }
struct S29 { next: S30 }
struct S30 { next: S31 }
struct S31 { next: S32 }
struct S32 { next: S33 }
struct S33 { next: S34 }
struct S34 { next: S35 }
struct S35 { next: S36 }
struct S36 { next: S37 }
struct S37 { next: S38 }
struct S38 { next: S39 }
struct S39 { next: S40 }
struct S40 { next: S41 }
struct S41 { next: S42 }
struct S42 { next: S43 }
struct S43 { next: S44 }
struct S44 { next: S45 }
struct S45 { next: S46 }
struct S46 { next: S47 }
struct S47 { next: S48 }
struct S48 { next: S49 }
struct S49 { next: S50 }
struct S50 { next: S51 }
struct S51 { next: S52 }
struct S52 { next: S53 }
struct S53 { next: S54 }
struct S54 { next: S55 }
struct S55 { next: S56 }
struct S56 { next: S57 }
struct S57 { next: S58 }
struct S58 { next: S59 }
struct S59 { next: S60 }
struct S60 { next: S61 }
struct S61 { next: S62 }
struct S62 { next: S63 }
struct S63 { next: S64 }
struct S64 { next: S65 }
struct S65 { value: u8 }
-- fix --
use types::chain::S2;

/// Nests at most 65 objects deep, and only when `next` is given.
struct S1 { next: Option<S2> }"#,
    },
    CodeInfo {
        code: "E0805",
        title: "example input does not match the input schema",
        explanation: "Examples are validated against the emitted schemas at publish (spec §9.2). The message gives the JSON Pointer of the offending value inside the example's `input` and the rule it breaks.",
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
        explanation: "An example's expected `output` must be a valid value of the agent's output type, checked against the emitted output schema. The message gives the JSON Pointer of the offending value inside `output`.",
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
        code: "W0851",
        title: "node body the Rust glue cannot run",
        explanation: "The Rust glue (spec §9.4) gives a node with a body a `body` function that runs it: the input checks, then the body on the runtime evaluator, its `extern fn`s through the generated traits. A body that calls another node is a delegated call, with its own pipeline, prompt and receipt, which the glue cannot make yet; such a node's module has no `body` (its `run` still works). Call the delegate from Rust, or compute the answer without the node call.",
        example: r#"-- ael.toml --
[package]
name = "acme/demo"
version = "0.1.0"
-- nodes/pick.node.ael --
struct A { x: u8 }

node first(a: A) -> A { }

node second(a: A) -> A {
    return first(a);
}
-- fix --
-- nodes/pick.node.ael --
struct A { x: u8 }

fn same(a: A) -> A { a }

node first(a: A) -> A { }

node second(a: A) -> A {
    return same(a);
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
struct Answer {
    /// A score between 0 and 1 per topic named in the question.
    scores: Map<Str<32>, f64, 100>,
}

node answer(q: Question) -> Answer {
    config {
        prompt: file("prompts/answer.md");
        model: binding("main");
    }
}"#,
    },
];
