//! Diagnostic codes of the `codegen` layer: the publishing rules of spec §9.2, checked by
//! `aelc build` before anything is written (`src/codegen/publish.rs`).

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[
    CodeInfo {
        code: "E0801",
        title: "reserved failure code declared",
        explanation: "The platform reserves the codes `invalid_input invalid_output rejected_input truncated_output undecodable_output stale_input timeout budget_exceeded model_unavailable cancelled internal_error` for outcomes it reports itself. An `errors` set may not declare one, because a caller could not tell the agent's failure from the platform's; the publish is refused.",
        example: "errors ReviewError {\n    /// Refused by the gateway: reserved.\n    timeout,\n}",
    },
    CodeInfo {
        code: "E0802",
        title: "set over the uniqueItems bound",
        explanation: "A `Set<T, N>` is an array with `uniqueItems: true`. Checking that items are distinct compares every pair, so the platform accepts `uniqueItems` only with `maxItems` of at most 1000 (spec §8). A node whose input or output holds a larger set cannot be published.",
        example: "struct Tags { tags: Set<Str<20>, 5000> }",
    },
    CodeInfo {
        code: "E0803",
        title: "list over the platform's array bound",
        explanation: "The platform refuses any array of more than 10,000 items (spec §8), so a `List` bound above that could never be filled. Lower the bound to at most 10,000.",
        example: "struct Rows { rows: List<u32, 20000> }",
    },
    CodeInfo {
        code: "E0804",
        title: "type nests deeper than the platform allows",
        explanation: "A payload may nest at most 64 arrays and objects inside each other (spec §8). A type whose every value nests deeper (a required recursive field, or a chain of more than 64 nested structs) has no value the platform would accept.",
        example: "struct Chain { next: List<Chain, 1..=2> }",
    },
    CodeInfo {
        code: "E0805",
        title: "example input does not match the input schema",
        explanation: "Examples are validated against the emitted schemas at publish (spec §9.2). The message gives the JSON Pointer of the offending value inside the example's `input` and the rule it breaks.",
        example: "// examples/review/long.json\n{\"input\": {\"document\": 42}, \"answers\": [], \"status\": \"rejected_input\"}",
    },
    CodeInfo {
        code: "E0806",
        title: "example output does not match the output schema",
        explanation: "An example's expected `output` must be a valid value of the agent's output type, checked against the emitted output schema. The message gives the JSON Pointer of the offending value inside `output`.",
        example: "// examples/review/clean.json\n{\"input\": {\"document\": \"x\"}, \"answers\": [\"…\"], \"output\": {\"summary\": 3, \"findings\": []}}",
    },
    CodeInfo {
        code: "E0807",
        title: "malformed example file",
        explanation: "An example is a JSON object `{\"input\": …, \"answers\": [\"…\"], \"output\": …}`, or with `\"status\"` (`rejected_input`, `invalid_output`, `failed`, `error`) and `\"code\"` instead of `\"output\"` for a failing case. Other keys, a missing `input`, or both `output` and `status` are errors.",
        example: "// examples/review/bad.json\n{\"inputs\": {\"document\": \"x\"}}",
    },
    CodeInfo {
        code: "E0808",
        title: "example expects an undeclared code",
        explanation: "A failing example's `code` must be one the agent declares with `fails E`, or a reserved code of the platform; otherwise the example could never pass.",
        example: "// examples/review/blank.json\n{\"input\": {\"document\": \" \"}, \"answers\": [], \"status\": \"failed\", \"code\": \"empty_doc\"}",
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
        explanation: "`aelc build` writes Rust glue (spec §9.4) with a Rust item per AEL name: types and variants in `UpperCamelCase`, fields, fns and nodes in `snake_case`. A Rust keyword becomes a raw identifier (`r#type`), but `self`, `Self`, `super`, `crate` and `_` cannot be identifiers at all, and two AEL names that become the same Rust name (`max_items` and `maxItems`, or a node named like a generated module: `rules`, `defaults`, `externs`, `program`) would not compile. aelc reports them instead of writing glue that fails to build; rename one of them.",
        example: "struct Page {\n    max_items: u8,\n    maxItems: u8,\n}",
    },
    CodeInfo {
        code: "W0801",
        title: "output field with no predictable shape",
        explanation: "A field of an output that is an object with no fields, or a `Map` with free text keys and no doc comment, validates and bills but tells the caller nothing about what it holds (spec §9.2). Declare the fields as a struct, key the map by a unit enum, or document the keys with `///`.",
        example: "struct Result {\n    scores: Map<Str<32>, f64, 100>,\n}",
    },
];
