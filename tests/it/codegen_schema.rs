//! `aelc build` backends on hand-built programs: snapshots of every emitted file, every schema
//! against the draft 2020-12 metaschema, determinism, the publishing rules, `--check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::codegen_fixtures::*;
use crate::support::file_schema;
use aelc::codegen::emit::{emit, Emission};
use aelc::codegen::publish::Example;
use aelc::codegen::write;
use aelc::ir::Program;
use aelc_runtime::ty::{DefId, DefKind, ListTy, Ty};
use serde_json::{json, Value};

fn review_examples() -> Vec<Example> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/review/examples/review");
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        out.push(Example {
            agent: "review".into(),
            path: format!("examples/review/{name}.json"),
            text: std::fs::read_to_string(&path).expect("example"),
            name,
        });
    }
    out
}

/// Every file as `----- path` and its text, for one reviewable snapshot.
fn dump(emission: &Emission, skip_ir: bool) -> String {
    let mut text = String::new();
    for (path, bytes) in &emission.files {
        let p = path.to_string_lossy();
        if skip_ir && p.starts_with("ir") {
            continue;
        }
        text.push_str(&format!("----- {p}\n"));
        text.push_str(&String::from_utf8_lossy(bytes));
    }
    text
}

fn ok_emission(program: &Program, examples: &[Example]) -> Emission {
    let emission = emit(program, examples);
    assert!(
        !emission.has_errors(),
        "unexpected errors: {:#?}",
        emission.diagnostics
    );
    emission
}

#[test]
fn review_files_snapshot() {
    let emission = ok_emission(&review_program(), &review_examples());
    insta::assert_snapshot!("review_files", dump(&emission, true));
}

#[test]
fn kitchen_files_snapshot() {
    let emission = ok_emission(&kitchen_program(), &[]);
    insta::assert_snapshot!("kitchen_files", dump(&emission, true));
}

#[test]
fn ir_json_round_trips_and_matches_its_schema() {
    for program in [review_program(), kitchen_program()] {
        let emission = ok_emission(&program, &[]);
        let bytes = &emission.files[Path::new("ir.json")];
        let ir: Value = serde_json::from_slice(bytes).unwrap();
        // From the text, not from `ir`: integer bounds are i128, which `Value` cannot hold.
        let back: Program = serde_json::from_slice(bytes).unwrap();
        assert_eq!(back, program);
        let schema: Value =
            serde_json::from_slice(&emission.files[Path::new("ir.schema.json")]).unwrap();
        let validator = jsonschema::validator_for(&schema).expect("ir schema compiles");
        let errors: Vec<String> = validator.iter_errors(&ir).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
}

/// Every JSON file that claims to be a JSON Schema, with the schema inside it.
fn schemas_in(emission: &Emission) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (path, bytes) in &emission.files {
        let p = path.to_string_lossy().into_owned();
        if !p.ends_with(".json") || p.starts_with("ir") {
            continue;
        }
        let value: Value = serde_json::from_slice(bytes).unwrap();
        if p.starts_with("schemas/") || p.ends_with(".anthropic.json") {
            out.push((p, value));
        } else if p.ends_with(".openai.json") {
            out.push((p, value["schema"].clone()));
        } else if p == "mcp/tools.json" {
            for tool in value["tools"].as_array().unwrap() {
                out.push((format!("{p} input"), tool["inputSchema"].clone()));
                out.push((format!("{p} output"), tool["outputSchema"].clone()));
            }
        }
    }
    out
}

#[test]
fn every_schema_validates_against_the_2020_12_metaschema() {
    for program in [review_program(), kitchen_program()] {
        let emission = ok_emission(&program, &[]);
        let schemas = schemas_in(&emission);
        assert!(schemas.len() >= 4);
        let defs = shared_defs(&emission);
        for (path, schema) in schemas {
            if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
                panic!("{path} is not a valid 2020-12 schema: {e}");
            }
            // And it compiles (every `$ref` resolves, every pattern compiles); a `schemas/`
            // file with its shared definitions beside it, as a validator loading files does.
            file_schema::file_validator(&schema, &defs)
                .unwrap_or_else(|e| panic!("{path} does not compile: {e}"));
        }
    }
}

/// `schemas/defs.json` of an emission.
fn shared_defs(emission: &Emission) -> Value {
    serde_json::from_slice(&emission.files[Path::new("schemas/defs.json")]).unwrap()
}

/// The `schemas/` files refer to `schemas/defs.json` instead of carrying definitions, and
/// made self-contained again (the runtime's and the gateway's way) they are exactly the
/// documents the model-facing variants, the MCP tools and `aelc schema` are built from.
#[test]
fn node_schemas_share_definitions_and_inline_back_exactly() {
    use aelc::codegen::json_schema::node_schemas;
    use aelc_runtime::exec::shared_defs::{inline_shared, refers_to_shared};
    for program in [review_program(), kitchen_program()] {
        let emission = ok_emission(&program, &[]);
        let defs = shared_defs(&emission);
        assert!(!defs["$defs"].as_object().unwrap().is_empty());
        let stems = program.node_file_names();
        let mut shared = 0;
        for (stem, own) in stems.iter().zip(node_schemas(&program)) {
            for (role, own) in [("input", own.input), ("output", own.output)] {
                let path = format!("schemas/{stem}.{role}.json");
                let mut doc: Value =
                    serde_json::from_slice(&emission.files[Path::new(&path)]).unwrap();
                assert!(doc.get("$defs").is_none(), "{path} carries definitions");
                shared += usize::from(refers_to_shared(&doc));
                inline_shared(&mut doc, &defs).unwrap();
                assert_eq!(
                    serde_json::to_string_pretty(&doc).unwrap(),
                    serde_json::to_string_pretty(&own).unwrap(),
                    "{path}"
                );
            }
        }
        assert!(shared > 0, "no node schema refers to defs.json");
    }
}

/// A deployed host reads the build's files (`Schemas::load`, the gateway's): the output
/// documents it gets are the self-contained ones `aelc run` computes from the IR.
#[test]
fn a_host_loading_the_build_gets_self_contained_documents() {
    use aelc::codegen::json_schema::node_schemas;
    use aelc_runtime::exec::Schemas;
    let program = kitchen_program();
    let emission = ok_emission(&program, &[]);
    let dir = std::env::temp_dir().join(format!("aelc-codegen-host-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write::write_all(&dir, &emission.files).unwrap();
    let ir = std::fs::read_to_string(dir.join("ir.json")).unwrap();
    let runtime = aelc_runtime::program::Program::from_json(&ir).unwrap();
    let loaded = Schemas::load(&dir, &runtime, &runtime.node_file_names()).unwrap();
    for (i, own) in node_schemas(&program).into_iter().enumerate() {
        // The same text: the loaded document keeps the emitted key order (issue 23: the
        // runtime reads it into its order-keeping `ordered::Json`).
        assert_eq!(
            loaded.get(i).map(|s| s.document.to_string()),
            Some(own.output.to_string()),
            "node {i}"
        );
    }
    // Without `defs.json`, loading names the file it misses.
    std::fs::remove_file(dir.join("schemas/defs.json")).unwrap();
    let err = Schemas::load(&dir, &runtime, &runtime.node_file_names()).unwrap_err();
    assert!(err.contains("defs.json is missing"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metaschema_check_can_fail() {
    assert!(jsonschema::draft202012::meta::validate(&json!({"maxLength": -1})).is_err());
}

#[test]
fn emitting_is_byte_deterministic() {
    let a = emit(&kitchen_program(), &[]).files;
    let b = emit(&kitchen_program(), &[]).files;
    assert_eq!(a, b);
    let a = emit(&review_program(), &review_examples()).files;
    let b = emit(&review_program(), &review_examples()).files;
    assert_eq!(a, b);
    for bytes in a.values() {
        assert_eq!(bytes.last(), Some(&b'\n'));
    }
}

#[test]
fn review_input_accepts_the_seed_request_and_rejects_typos() {
    let emission = ok_emission(&review_program(), &[]);
    let schema: Value =
        serde_json::from_slice(&emission.files[Path::new("schemas/review.input.json")]).unwrap();
    let v = file_schema::file_validator(&schema, &shared_defs(&emission)).unwrap();
    assert!(v.is_valid(&json!({"document": "x"})));
    assert!(v.is_valid(&json!({"document": "x", "locale": null, "max_findings": 3.0})));
    assert!(!v.is_valid(&json!({"document": "x", "locle": "en"})));
    assert!(!v.is_valid(&json!({"document": "x", "locale": "english"})));
    assert!(!v.is_valid(&json!({"document": "x", "max_findings": 51})));
    assert!(!v.is_valid(&json!({"document": "x", "strict": "true"})));
    // The output's findings are checked through `defs.json`, severity and all.
    let schema: Value =
        serde_json::from_slice(&emission.files[Path::new("schemas/review.output.json")]).unwrap();
    let v = file_schema::file_validator(&schema, &shared_defs(&emission)).unwrap();
    let finding = |severity: &str| json!({"summary": "s", "findings": [{"line": 1, "severity": severity, "message": "m"}]});
    assert!(v.is_valid(&finding("low")));
    assert!(!v.is_valid(&finding("dire")));
    assert!(!v.is_valid(
        &json!({"summary": "s", "findings": [{"line": 0, "severity": "low", "message": "m"}]})
    ));
}

fn codes(emission: &Emission) -> Vec<&'static str> {
    emission.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn reserved_code_is_an_error_and_nothing_is_emitted() {
    let mut program = review_program();
    program.errors[0].codes[0].name = "timeout".into();
    let emission = emit(&program, &[]);
    assert_eq!(codes(&emission), ["E0810"]);
    assert!(emission.diagnostics[0].message.contains("`timeout`"));
    assert!(emission.files.is_empty());
}

/// The checker refuses these bounds on the source (E0303); `aelc build` re-checks the IR as an
/// internal invariant (E0810), so an IR made another way cannot publish them either.
#[test]
fn platform_bounds_are_errors() {
    let mut program = review_program();
    // findings: Set<Finding, 5000>, then List<Finding, 20000>.
    if let DefKind::Struct { fields } = &mut program.types.defs[2].kind {
        fields[1].ty = Ty::List(ListTy {
            item: Box::new(Ty::Ref { def: DefId(1) }),
            min: 0,
            max: 5000,
            unique: true,
        });
    }
    let emission = emit(&program, &[]);
    assert_eq!(codes(&emission), ["E0810"]);
    assert!(emission.diagnostics[0]
        .message
        .contains("a `Set` of up to 5000 items"));
    assert!(emission.files.is_empty());
    if let DefKind::Struct { fields } = &mut program.types.defs[2].kind {
        fields[1].ty = list(Ty::Ref { def: DefId(1) }, 20_000);
    }
    let emission = emit(&program, &[]);
    assert_eq!(codes(&emission), ["E0810"]);
    assert!(emission.diagnostics[0]
        .message
        .contains("a `List` of up to 20000 items"));
    assert!(emission.files.is_empty(), "nothing is written");
}

#[test]
fn a_type_too_deep_for_every_value_is_an_error() {
    let mut program = kitchen_program();
    // Tree.children: at least one child, always: no finite value.
    if let DefKind::Struct { fields } = &mut program.types.defs[3].kind {
        fields[1].ty = Ty::List(ListTy {
            item: Box::new(Ty::Ref { def: DefId(3) }),
            min: 1,
            max: 4,
            unique: false,
        });
    }
    // `tree` is optional in Drawing, so the output still fits; a node returning a Tree does not.
    let mut grow = program.nodes[1].clone();
    grow.name = "grow".into();
    grow.output = Ty::Ref { def: DefId(3) };
    program.nodes.push(grow);
    let emission = emit(&program, &[]);
    assert_eq!(codes(&emission), ["E0810"]);
    assert!(emission.diagnostics[0].message.contains("`grow`"));
    assert!(emission.files.is_empty(), "nothing is written");
}

#[test]
fn undocumented_free_map_in_an_output_is_a_warning() {
    let mut program = review_program();
    if let DefKind::Struct { fields } = &mut program.types.defs[2].kind {
        fields.push(field(
            "scores",
            None,
            Ty::Map(aelc_runtime::ty::MapTy {
                key: Box::new(str_ty(32)),
                value: Box::new(Ty::Bool),
                min: 0,
                max: 10,
            }),
        ));
    }
    let emission = emit(&program, &[]);
    assert_eq!(codes(&emission), ["W0801", "W0803"]);
    assert!(
        !emission.files.is_empty(),
        "a warning does not stop the build"
    );
    assert!(emission.diagnostics[0].message.contains("output.scores"));
}

#[test]
fn bad_examples_report_the_json_pointer() {
    let examples = vec![
        Example {
            agent: "review".into(),
            name: "bad".into(),
            path: "examples/review/bad.json".into(),
            text: r#"{"input": {"document": "x", "locale": "english"}, "answers": [],
                      "output": {"summary": "s", "findings": [{"line": 0, "severity": "low", "message": "m"}]}}"#
                .into(),
        },
        Example {
            agent: "review".into(),
            name: "code".into(),
            path: "examples/review/code.json".into(),
            text: r#"{"input": {"document": "x"}, "answers": [], "status": "failed", "code": "empty_documnt"}"#.into(),
        },
        Example {
            agent: "review".into(),
            name: "shape".into(),
            path: "examples/review/shape.json".into(),
            text: r#"{"inputs": {}}"#.into(),
        },
    ];
    let emission = emit(&review_program(), &examples);
    assert!(emission.files.is_empty());
    let text: Vec<String> = emission
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {} | {}",
                d.code,
                d.message,
                d.help.clone().unwrap_or_default()
            )
        })
        .collect();
    insta::assert_snapshot!("bad_examples", text.join("\n"));
}

#[test]
fn write_then_check_then_detect_stale_missing_extra() {
    let dir = std::env::temp_dir().join(format!("aelc-codegen-write-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = ok_emission(&review_program(), &review_examples()).files;
    assert!(!write::check(&dir, &files).unwrap().is_empty());
    let report = write::write_all(&dir, &files).unwrap();
    assert_eq!(report.written.len(), files.len());
    assert!(write::check(&dir, &files).unwrap().is_empty());
    // Unchanged files are not rewritten.
    let again = write::write_all(&dir, &files).unwrap();
    assert!(again.written.is_empty());
    assert_eq!(again.unchanged, files.len());
    // Change one, delete one, and stop producing one the last build wrote; files the build
    // never wrote, in its folders or beside them, are not its to delete.
    std::fs::write(dir.join("ir.json"), "{}").unwrap();
    std::fs::remove_file(dir.join("mcp/tools.json")).unwrap();
    let mut with_old = files.clone();
    with_old.insert(PathBuf::from("schemas/old.input.json"), b"{}".to_vec());
    write::write_all(&dir, &with_old).unwrap();
    std::fs::write(dir.join("ir.json"), "{}").unwrap();
    std::fs::remove_file(dir.join("mcp/tools.json")).unwrap();
    std::fs::write(dir.join("schemas/mine.json"), "{}").unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let stale = write::check(&dir, &files).unwrap();
    let shown: Vec<String> = stale
        .iter()
        .map(|s| format!("{} {}", s.path().display(), s.reason()))
        .collect();
    assert_eq!(
        shown,
        [
            "ir.json out of date",
            "mcp/tools.json missing",
            "schemas/old.input.json no longer produced"
        ]
    );
    let report = write::write_all(&dir, &files).unwrap();
    assert_eq!(report.removed, [PathBuf::from("schemas/old.input.json")]);
    assert!(write::check(&dir, &files).unwrap().is_empty());
    assert!(
        dir.join("notes.txt").exists() && dir.join("schemas/mine.json").exists(),
        "files the build did not write are kept"
    );
    let leftovers: BTreeMap<_, _> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".tmp"))
        .map(|p| (p, ()))
        .collect();
    assert!(leftovers.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
