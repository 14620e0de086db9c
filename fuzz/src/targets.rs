//! The targets: what each runs on one input, what it checks besides "no panic", and its bound.
//!
//! Each target's `prepare` builds what it needs once (types, schemas, seeds) and returns the
//! function run on every input. A check failing returns `Err` with what went wrong.

use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use aelc::codegen::json_schema::{DefKeys, SchemaBuilder};
use aelc::diagnostics::{render, Diagnostic};
use aelc::driver::{self, DiskWorld, MemoryWorld};
use aelc::span::FileId;
use aelc::syntax::{self, format::format, Parse};
use aelc_runtime::model::{FinishReason, ModelAnswer, ReplayModel, Usage};
use aelc_runtime::pipeline::{NoStage, Pipeline, Policy, TickClock};
use aelc_runtime::ty::{Ty, TypeTable};
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Value};

use crate::corpus;
use crate::mutate::Rng;

/// What one input may cost: time and peak live heap, each a fixed part plus a part per input
/// byte (linear in the input). Release-build figures; a debug build gets ten times the time.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    pub fixed_ms: u64,
    pub ns_per_byte: u64,
    pub fixed_mb: usize,
    pub bytes_per_byte: usize,
}

pub type Check = Box<dyn Fn(&[u8]) -> Result<(), String>>;

pub struct Target {
    pub name: &'static str,
    pub what: &'static str,
    pub bound: Bound,
    /// Inputs are cut to this many bytes.
    pub max_len: usize,
    /// Words the mutator inserts.
    pub words: &'static [&'static str],
    /// The seeds and the check.
    pub prepare: fn() -> (Vec<Vec<u8>>, Check),
    /// Inputs of an open finding (see `fuzz/open/`): over the time bound they are counted and
    /// their first one kept, but the run goes on.
    pub known_slow: Option<fn(&[u8]) -> bool>,
}

const AEL_WORDS: &[&str] = &[
    "struct ",
    "enum ",
    "node ",
    "agent ",
    "fn ",
    "check ",
    "errors ",
    "import ",
    "type ",
    "extern ",
    "config ",
    "output ",
    "publish ",
    "budget ",
    "require ",
    "else ",
    "fails ",
    "match ",
    "if ",
    "let ",
    "return ",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    "->",
    "=>",
    "..",
    "..=",
    "=",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    ".",
    "?",
    "|x| ",
    "\"",
    "\"\\u{1F600}\"",
    "r#\"",
    "\"#",
    "//",
    "///",
    "//!",
    "/*",
    "*/",
    "\n",
    "Str<10>",
    "u8<0..=9>",
    "List<",
    "Map<Str<5>, ",
    "Option<",
    "f64",
    "i64",
    "bool",
    "true",
    "1_000",
    "0x",
    "1e309",
    "@pattern(\"^a+$\")",
    "@format(\"email\")",
    "Media<image>",
    "..output",
    "prompt: file(\"prompts/main.md\");",
    "model: binding(\"main\");",
    "repair(1)",
    "on_failure: ",
    "std::text",
    "self",
    "é",
    "\u{FEFF}",
    "\t",
    "\r\n",
];

const JSON_WORDS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\u",
    "\\ud800",
    "\\udc00",
    "\\\"",
    "\\",
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1e308",
    "1e309",
    "-1",
    "1.5",
    "18446744073709551616",
    "9007199254740993",
    "1E2",
    "0.0000001",
    "\u{FEFF}",
    " ",
    "\n",
    "\"x\":",
    "\"a\":1,",
    "```json\n",
    "```\n",
    "\u{0}",
    "é",
    "😀",
];

const TEMPLATE_WORDS: &[&str] = &[
    "{{",
    "}}",
    "{%",
    "%}",
    "{% if ",
    "{% for ",
    " in ",
    "{% else %}",
    "{% end %}",
    "request.top",
    "request.items",
    "request.note",
    "output_schema",
    " > 1 ",
    ".len()",
    ".is_some()",
    ".unwrap_or(\"x\")",
    "\"",
    "r#\"",
    "\"#",
    "{{ \"{{\" }}",
    " %}",
    "item",
    "{#",
    "#}",
    "\n",
    "é",
];

const TOML_WORDS: &[&str] = &[
    "[package]\n",
    "[bindings.main]\n",
    "[limits]\n",
    "[publish]\n",
    "name = ",
    "version = ",
    "provider = ",
    "model = ",
    "accepts = ",
    "\"acme/x\"",
    "\"0.1.0\"",
    "\"replay\"",
    "max_input_bytes = ",
    "18446744073709551616",
    "=",
    "\"",
    "'",
    "'''",
    "\"\"\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "\n",
    "#",
    "true",
    "1979-05-27",
    "inf",
    "nan",
    "\\u0000",
];

/// Every target, in the order `all` runs them.
pub fn all() -> Vec<Target> {
    vec![
        Target {
            name: "parse",
            what: "lexer and parser (`aelc::syntax::parse`): no panic, every span inside the text",
            bound: Bound {
                fixed_ms: 40,
                ns_per_byte: 4_000,
                fixed_mb: 8,
                bytes_per_byte: 1_000,
            },
            max_len: 64 << 10,
            words: AEL_WORDS,
            prepare: || {
                (
                    corpus::ael_sources(),
                    Box::new(|input| parse_target(input).map(drop)),
                )
            },
            known_slow: None,
        },
        Target {
            name: "check",
            what: "the checker (`driver::check_path`) over a project of `ael.toml` and one \
                   module, and the rendering of its diagnostics: no panic, spans inside the text",
            bound: Bound {
                fixed_ms: 200,
                ns_per_byte: 20_000,
                fixed_mb: 32,
                bytes_per_byte: 4_000,
            },
            max_len: 64 << 10,
            words: AEL_WORDS,
            prepare: || (corpus::ael_sources(), Box::new(check_target)),
            known_slow: None,
        },
        Target {
            name: "fmt",
            what: "the formatter on every input that parses cleanly: the result parses to the \
                   same tree (spans aside) and formats to itself",
            bound: Bound {
                fixed_ms: 100,
                ns_per_byte: 20_000,
                fixed_mb: 16,
                bytes_per_byte: 2_000,
            },
            max_len: 64 << 10,
            words: AEL_WORDS,
            prepare: || (corpus::ael_sources(), Box::new(fmt_target)),
            known_slow: None,
        },
        Target {
            name: "decode",
            what: "the decoder on a type of the examples (first byte) and a document (the rest): \
                   its verdict equals the emitted schema's (`jsonschema`) on every document \
                   serde_json reads without duplicate keys, and it never accepts one serde_json \
                   refuses",
            bound: Bound {
                fixed_ms: 20,
                ns_per_byte: 2_000,
                fixed_mb: 8,
                bytes_per_byte: 200,
            },
            max_len: 64 << 10,
            words: JSON_WORDS,
            prepare: prepare_decode,
            known_slow: None,
        },
        Target {
            name: "pipeline",
            what: "the output pipeline (`Pipeline::run`, one repair) with a replay model whose \
                   answers are the input split at 0xFF bytes: no panic",
            bound: Bound {
                fixed_ms: 20,
                ns_per_byte: 2_000,
                fixed_mb: 8,
                bytes_per_byte: 400,
            },
            max_len: 64 << 10,
            words: JSON_WORDS,
            prepare: prepare_pipeline,
            known_slow: None,
        },
        Target {
            name: "toml",
            what: "the `ael.toml` loader (`aelc::project::parse`): no panic, spans inside the text",
            bound: Bound {
                fixed_ms: 10,
                ns_per_byte: 2_000,
                fixed_mb: 8,
                bytes_per_byte: 1_000,
            },
            max_len: 64 << 10,
            words: TOML_WORDS,
            prepare: || (corpus::manifests(), Box::new(toml_target)),
            known_slow: None,
        },
        Target {
            name: "template",
            what: "the template scanner and checker: a fixed node whose prompt file is the \
                   input, checked and rendered: no panic, spans inside the text",
            bound: Bound {
                fixed_ms: 100,
                ns_per_byte: 10_000,
                fixed_mb: 32,
                bytes_per_byte: 4_000,
            },
            max_len: 64 << 10,
            words: TEMPLATE_WORDS,
            prepare: || (corpus::prompts(), Box::new(template_target)),
            known_slow: None,
        },
        Target {
            name: "lsp",
            what: "the language server in-process (`lsp::server::serve` over in-memory pipes): \
                   open the input as a document, then edits and requests drawn from it; no \
                   handler panics, the session ends",
            bound: Bound {
                fixed_ms: 1_000,
                ns_per_byte: 100_000,
                fixed_mb: 64,
                bytes_per_byte: 20_000,
            },
            max_len: 16 << 10,
            words: AEL_WORDS,
            prepare: || (corpus::ael_sources(), Box::new(lsp_target)),
            known_slow: None,
        },
    ]
}

// ---------------------------------------------------------------- parse, check, fmt, toml

fn spans_inside(diagnostics: &[Diagnostic], file: FileId, text: &str) -> Result<(), String> {
    for d in diagnostics {
        for label in &d.labels {
            let span = label.span;
            if span.file != file {
                continue;
            }
            let (start, end) = (span.start as usize, span.end as usize);
            if start > end || end > text.len() {
                return Err(format!(
                    "{}: span {start}..{end} outside a text of {} bytes",
                    d.code,
                    text.len()
                ));
            }
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                return Err(format!(
                    "{}: span {start}..{end} inside a character",
                    d.code
                ));
            }
        }
    }
    Ok(())
}

fn parse_target(input: &[u8]) -> Result<(String, Parse), String> {
    let text = String::from_utf8_lossy(input).into_owned();
    let parse = syntax::parse(FileId(0), &text);
    spans_inside(&parse.diagnostics, FileId(0), &text)?;
    Ok((text, parse))
}

const ROOT: &str = "/fuzz";

const MANIFEST: &str = "[package]\nname = \"acme/fuzz\"\nversion = \"0.1.0\"\n\n\
    [bindings.main]\nprovider = \"replay\"\nmodel = \"recorded\"\n";

const PROMPT: &str = "Answer {{ request.top }}:\n{{ output_schema }}\n";

const TEMPLATE_NODE: &str = "struct Request { top: u8, items: List<Str<20>, 5>, note: Option<Str<40>> }\n\
    struct Answer { text: Str<200> }\n\n\
    node main(request: Request) -> Answer {\n    config {\n        prompt: file(\"prompts/main.md\");\n        model: binding(\"main\");\n    }\n}\n";

/// Checks a project and renders its diagnostics both ways, as `aelc check` does; the lean
/// check `aelc check` makes (bodies deferred, parsed by sema a module at a time) must report
/// what the full one reports.
fn check_world(world: &MemoryWorld) -> Result<(), String> {
    let compilation = driver::check_path(world, Path::new(ROOT))
        .map_err(|e| format!("IO error in memory: {e}"))?;
    for (id, file) in compilation.sources.files() {
        spans_inside(&compilation.diagnostics, id, &file.text)?;
    }
    let full = render::human(
        &compilation.sources,
        &compilation.diagnostics,
        render::Color::Never,
    );
    let _ = render::json_lines(&compilation.sources, &compilation.diagnostics);
    let lean = driver::check_path_lean(world, Path::new(ROOT))
        .map_err(|e| format!("IO error in memory: {e}"))?;
    let lean = render::human(&lean.sources, &lean.diagnostics, render::Color::Never);
    if lean != full {
        return Err(format!(
            "the lean check reports\n{lean}\nthe full check\n{full}"
        ));
    }
    Ok(())
}

fn check_target(input: &[u8]) -> Result<(), String> {
    let world = MemoryWorld::new()
        .with(format!("{ROOT}/ael.toml"), MANIFEST)
        .with(format!("{ROOT}/nodes/main.node.ael"), input)
        .with(format!("{ROOT}/prompts/main.md"), PROMPT);
    check_world(&world)
}

fn template_target(input: &[u8]) -> Result<(), String> {
    let world = MemoryWorld::new()
        .with(format!("{ROOT}/ael.toml"), MANIFEST)
        .with(format!("{ROOT}/nodes/main.node.ael"), TEMPLATE_NODE)
        .with(format!("{ROOT}/prompts/main.md"), input);
    check_world(&world)
}

fn toml_target(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    let loaded = aelc::project::parse(FileId(0), &text);
    spans_inside(&loaded.diagnostics, FileId(0), &text)
}

/// `{:?}` of a tree with every span (`@12..40`) removed (as `tests/it/fmt.rs` compares). Compact,
/// not `{:#?}`: the pretty form indents every line by its depth, through one adapter per level,
/// so a chain of n operators cost n² (finding P3, 0.73 s for one line of 95 terms).
fn tree(parse: &Parse) -> String {
    aelc::span::without_spans(&format!("{:?}", parse.module))
}

fn has_errors(parse: &Parse) -> bool {
    parse.diagnostics.iter().any(Diagnostic::is_error)
}

fn fmt_target(input: &[u8]) -> Result<(), String> {
    let (text, before) = parse_target(input)?;
    if has_errors(&before) {
        return Ok(());
    }
    let Ok(once) = format(&before, &text) else {
        return Ok(());
    };
    let after = syntax::parse(FileId(0), &once);
    if has_errors(&after) {
        return Err(format!("the formatted text does not parse:\n{once}"));
    }
    if tree(&before) != tree(&after) {
        return Err(format!("formatting changed the tree:\n{once}"));
    }
    match format(&after, &once) {
        Ok(twice) if twice == once => Ok(()),
        Ok(twice) => Err(format!(
            "not idempotent:\n--- once\n{once}\n--- twice\n{twice}"
        )),
        Err(d) => Err(format!("the formatted text is refused: {d:?}")),
    }
}

// ---------------------------------------------------------------- decode

/// The types of the examples' nodes (inputs and outputs), with example documents of each.
struct Types {
    programs: Vec<Arc<TypeTable>>,
    /// (program, type, example documents)
    types: Vec<(usize, Ty, Vec<Vec<u8>>)>,
}

fn example_types() -> Types {
    let mut types = Types {
        programs: Vec::new(),
        types: Vec::new(),
    };
    let root = corpus::root();
    for project in corpus::files(&root.join("examples"), "ael.toml") {
        let Some(dir) = project.parent() else {
            continue;
        };
        let Ok(compilation) = driver::check_path(&DiskWorld, dir) else {
            continue;
        };
        let Some(program) = compilation.program else {
            continue;
        };
        let index = types.programs.len();
        types.programs.push(Arc::new(program.types.clone()));
        for node in &program.nodes {
            let docs = example_documents(&dir.join("examples").join(&node.name));
            let (inputs, outputs) = docs;
            if let Some(param) = node.params.first() {
                types.types.push((index, param.ty.clone(), inputs));
            }
            types.types.push((index, node.output.clone(), outputs));
        }
    }
    types
}

/// The inputs, and the outputs and answers, of a node's example files.
fn example_documents(dir: &Path) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for file in corpus::files(dir, ".json") {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let Ok(example) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        if let Some(input) = example.get("input") {
            inputs.push(input.to_string().into_bytes());
        }
        if let Some(output) = example.get("output") {
            outputs.push(serde_json::to_vec_pretty(output).unwrap_or_default());
        }
        for answer in example
            .get("answers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(text) = answer.as_str() {
                outputs.push(text.as_bytes().to_vec());
            }
        }
    }
    (inputs, outputs)
}

fn schema_of(ty: &Ty, table: &TypeTable) -> Value {
    let keys = DefKeys::new(table);
    SchemaBuilder::new(table, &keys).document("t", None, ty)
}

/// Whether a JSON text has an object with a key twice (serde_json keeps the last; the decoder
/// refuses, as spec §4 allows).
fn has_duplicate_keys(bytes: &[u8]) -> bool {
    struct NoDuplicates;
    impl<'de> serde::Deserialize<'de> for NoDuplicates {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(NoDuplicates)
        }
    }
    impl<'de> serde::de::Visitor<'de> for NoDuplicates {
        type Value = NoDuplicates;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_unit<E>(self) -> Result<Self, E> {
            Ok(self)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
            while seq.next_element::<NoDuplicates>()?.is_some() {}
            Ok(self)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    return Err(serde::de::Error::custom("duplicate key"));
                }
                map.next_value::<NoDuplicates>()?;
            }
            Ok(self)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde::Deserialize::deserialize(&mut de)
        .map(|_: NoDuplicates| ())
        .is_err()
}

/// Whether a float-written number beyond 2^53 occurs (compared through f64 by the validator,
/// exactly by the decoder; `tests/it/codegen_props.rs` skips them too).
fn has_huge_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_f64()
                && n.as_f64()
                    .is_some_and(|f| f.abs() >= 9_007_199_254_740_992.0)
        }
        Value::Array(items) => items.iter().any(has_huge_float),
        Value::Object(map) => map.values().any(has_huge_float),
        _ => false,
    }
}

/// Nesting depth of a value (the validator recurses; past a few thousand levels it would
/// overflow the stack itself).
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn prepare_decode() -> (Vec<Vec<u8>>, Check) {
    let types = example_types();
    let mut seeds = Vec::new();
    let edge = corpus::json_edge_cases();
    for (i, (_, _, docs)) in types.types.iter().enumerate() {
        for doc in docs.iter().chain(&edge) {
            let mut seed = vec![i as u8];
            seed.extend_from_slice(doc);
            seeds.push(seed);
        }
    }
    let cases: Vec<(Arc<TypeTable>, Ty, jsonschema::Validator)> = types
        .types
        .iter()
        .map(|(program, ty, _)| {
            let table = types.programs[*program].clone();
            let schema = schema_of(ty, &table);
            // `format` asserted: the decoder checks `date-time` and the others (spec §4).
            let validator = jsonschema::draft202012::options()
                .with_pattern_options(jsonschema::PatternOptions::regex())
                .should_validate_formats(true)
                .build(&schema)
                .expect("the emitted schema compiles");
            (table, ty.clone(), validator)
        })
        .collect();
    assert!(!cases.is_empty(), "no example types found");
    let check: Check = Box::new(move |input| {
        let Some((&which, doc)) = input.split_first() else {
            return Ok(());
        };
        let (table, ty, validator) = &cases[which as usize % cases.len()];
        let by_decoder = aelc_runtime::decode::decode(doc, ty, table, "value", 1 << 24);
        // serde_json stops at 128 levels; deeper documents are compared on no verdict.
        let mut de = serde_json::Deserializer::from_slice(doc);
        let parsed =
            <Value as serde::Deserialize>::deserialize(&mut de).and_then(|v| de.end().map(|()| v));
        match parsed {
            Err(why) => {
                if by_decoder.is_ok() && !why.to_string().contains("recursion limit") {
                    return Err(format!(
                        "the decoder accepts a document serde_json refuses ({why})"
                    ));
                }
            }
            Ok(value) => {
                if has_duplicate_keys(doc) || has_huge_float(&value) || depth(&value) > 1_000 {
                    return Ok(());
                }
                let by_schema = validator.is_valid(&value);
                if by_schema != by_decoder.is_ok() {
                    return Err(format!(
                        "schema says {by_schema}, decoder says {:?}",
                        by_decoder.map(drop).map_err(|e| e
                            .into_iter()
                            .take(3)
                            .map(|e| format!("{e:?}"))
                            .collect::<Vec<_>>())
                    ));
                }
            }
        }
        Ok(())
    });
    (seeds, check)
}

// ---------------------------------------------------------------- pipeline

fn prepare_pipeline() -> (Vec<Vec<u8>>, Check) {
    let types = example_types();
    let outputs: Vec<(Arc<TypeTable>, Ty)> = types
        .types
        .iter()
        .map(|(program, ty, _)| (types.programs[*program].clone(), ty.clone()))
        .collect();
    let mut seeds = Vec::new();
    for (i, (_, _, docs)) in types.types.iter().enumerate() {
        for doc in docs {
            let mut seed = vec![i as u8];
            seed.extend_from_slice(b"```json\n");
            seed.extend_from_slice(doc);
            seed.extend_from_slice(b"\n```\xff");
            seed.extend_from_slice(doc);
            seeds.push(seed);
        }
    }
    let check: Check = Box::new(move |input| {
        let Some((&which, rest)) = input.split_first() else {
            return Ok(());
        };
        let (table, ty) = &outputs[which as usize % outputs.len()];
        let answers: Vec<ModelAnswer> = rest
            .split(|b| *b == 0xff)
            .take(4)
            .enumerate()
            .map(|(i, text)| ModelAnswer {
                text: String::from_utf8_lossy(text).into_owned(),
                finish_reason: if (which as usize + i) % 7 == 0 {
                    FinishReason::Length
                } else {
                    FinishReason::Stop
                },
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: text.len() as u64 / 4,
                },
            })
            .collect();
        let mut pipeline = Pipeline::new(table, ty, "main", 48 << 10);
        pipeline.policies = vec![Policy::Retry { times: 1 }, Policy::Repair { times: 1 }];
        let mut model = ReplayModel::new(answers);
        let mut clock = TickClock { now: 0, tick: 1 };
        let _outcome = pipeline.run("the prompt", &mut model, &mut NoStage, &mut clock);
        Ok(())
    });
    (seeds, check)
}

// ---------------------------------------------------------------- lsp

/// A step of a language-server session; offsets are taken modulo the document's length.
#[derive(Arbitrary, Debug)]
enum Step {
    /// Replace a range of the document with a slice of the original input.
    Edit {
        at: u32,
        len: u16,
        from: u32,
        take: u16,
    },
    /// Replace the whole document with a prefix of the original input.
    Replace {
        take: u32,
    },
    Hover {
        at: u32,
    },
    Definition {
        at: u32,
    },
    References {
        at: u32,
    },
    Completion {
        at: u32,
    },
    Rename {
        at: u32,
        name: u8,
    },
    PrepareRename {
        at: u32,
    },
    Symbols,
    Formatting,
    SemanticTokens,
    Save,
}

/// Rename targets: good, empty, not a name, a keyword, not ASCII.
const NEW_NAMES: &[&str] = &["renamed", "x", "", "1bad", "struct", "é"];

/// The LSP position (line, UTF-16 column) of a byte offset, clamped to the text.
fn position(text: &str, at: usize) -> Value {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count();
    let column: usize = before
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .chars()
        .map(char::len_utf16)
        .sum();
    json!({ "line": line, "character": column })
}

fn frame(out: &mut Vec<u8>, message: &Value) {
    let body = message.to_string();
    let _ = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
}

/// A `Write` into a shared buffer (the server's output, read after the session).
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn lsp_target(input: &[u8]) -> Result<(), String> {
    let original = String::from_utf8_lossy(input).into_owned();
    // The steps come from the input's own hash, so the input file alone replays the session.
    let mut rng = Rng(crate::hash(input));
    let noise = rng.bytes(256);
    let mut u = Unstructured::new(&noise);
    let uri = "file:///aelc-fuzz-nonexistent/nodes/main.node.ael";
    let doc = json!({ "uri": uri });
    let mut text = original.clone();
    let mut out = Vec::new();
    frame(
        &mut out,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
    );
    frame(
        &mut out,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    frame(
        &mut out,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "ael", "version": 1, "text": text}}}),
    );
    let mut version = 1;
    let mut id = 1;
    let slice = |s: &str, from: usize, take: usize| -> String {
        s.chars()
            .skip(from % (s.chars().count() + 1))
            .take(take)
            .collect()
    };
    for _ in 0..12 {
        let Ok(step) = Step::arbitrary(&mut u) else {
            break;
        };
        let len = text.len() + 1;
        let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params});
        let message = match step {
            Step::Edit {
                at,
                len: n,
                from,
                take,
            } => {
                let start = at as usize % len;
                let end = (start + n as usize % 64).min(text.len());
                let (start_pos, end_pos) = (position(&text, start), position(&text, end));
                let new = slice(&original, from as usize, take as usize % 64);
                let mut s = start.min(text.len());
                while !text.is_char_boundary(s) {
                    s -= 1;
                }
                let mut e = end.max(s);
                while !text.is_char_boundary(e) {
                    e -= 1;
                }
                text.replace_range(s..e.max(s), &new);
                version += 1;
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": start_pos, "end": end_pos}, "text": new}]}})
            }
            Step::Replace { take } => {
                text = slice(&original, 0, take as usize);
                version += 1;
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}]}})
            }
            Step::Hover { at } => request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": position(&text, at as usize % len)}),
            ),
            Step::Definition { at } => request(
                "textDocument/definition",
                json!({"textDocument": doc, "position": position(&text, at as usize % len)}),
            ),
            Step::References { at } => request(
                "textDocument/references",
                json!({"textDocument": doc, "position": position(&text, at as usize % len), "context": {"includeDeclaration": true}}),
            ),
            Step::Completion { at } => request(
                "textDocument/completion",
                json!({"textDocument": doc, "position": position(&text, at as usize % len)}),
            ),
            Step::Rename { at, name } => {
                let new_name = NEW_NAMES[name as usize % NEW_NAMES.len()];
                request(
                    "textDocument/rename",
                    json!({"textDocument": doc, "position": position(&text, at as usize % len), "newName": new_name}),
                )
            }
            Step::PrepareRename { at } => request(
                "textDocument/prepareRename",
                json!({"textDocument": doc, "position": position(&text, at as usize % len)}),
            ),
            Step::Symbols => request("textDocument/documentSymbol", json!({"textDocument": doc})),
            Step::Formatting => request(
                "textDocument/formatting",
                json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
            ),
            Step::SemanticTokens => request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": doc}),
            ),
            Step::Save => {
                json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": doc}})
            }
        };
        let mut message = message;
        if message.get("id").is_some() {
            message["id"] = json!(id);
            id += 1;
        }
        frame(&mut out, &message);
    }
    frame(
        &mut out,
        &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}),
    );
    frame(&mut out, &json!({"jsonrpc": "2.0", "method": "exit"}));
    if std::env::var_os("AELC_FUZZ_SHOW").is_some() {
        eprintln!("{}", String::from_utf8_lossy(&out));
    }
    let written = Shared::default();
    let transport = aelc::lsp::transport::Transport::new(Cursor::new(out), written.clone())
        .map_err(|e| format!("cannot start the transport: {e}"))?;
    let status = aelc::lsp::server::serve(transport);
    let output = written.0.lock().map(|o| o.clone()).unwrap_or_default();
    let output = String::from_utf8_lossy(&output);
    if let Some(at) = output.find("internal error") {
        let end = (at + 300).min(output.len());
        let mut end = end;
        while !output.is_char_boundary(end) {
            end -= 1;
        }
        return Err(format!("a handler failed: {}", &output[at..end]));
    }
    if status != 0 {
        return Err(format!("the session ended with status {status}"));
    }
    Ok(())
}

/// The check of the target named `name` (its seeds aside), for the `cargo fuzz` targets.
pub fn check_of(name: &str) -> Option<Check> {
    all()
        .into_iter()
        .find(|t| t.name == name)
        .map(|t| (t.prepare)().1)
}
