//! What `aelc build` emits for every bundled example project (spec §9), built by the real
//! binary: each JSON Schema validates against the draft 2020-12 metaschema and compiles, and the
//! schemas, model-facing variants, MCP tools and manifests are snapshotted, one snapshot per
//! example (`ir.json` and `ir.schema.json` are left out: `codegen_schema.rs` tests them).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::file_schema;

use crate::support::examples::example_roots;

/// Every file below `dir`, as (path relative to `base` with `/`, bytes), sorted.
fn collect(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(base, &path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            let name = path
                .strip_prefix(base)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((name, bytes));
        }
    }
}

/// Builds `root` with the binary into a fresh folder and returns the emitted files. `test`
/// names the folder, so that tests running at the same time never share one.
fn build(root: &Path, test: &str) -> Vec<(String, Vec<u8>)> {
    let name = root.file_name().unwrap_or_default().to_string_lossy();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("emitted-{test}-{name}"));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(["build", "--color", "never", "--out"])
        .arg(&out)
        .arg(root)
        .output()
        .expect("run aelc");
    assert!(
        output.status.success(),
        "aelc build {}: {}",
        root.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut files = Vec::new();
    collect(&out, &out, &mut files);
    files.sort();
    let _ = std::fs::remove_dir_all(&out);
    files
}

/// The JSON Schemas inside an emitted file: the node schemas, `ir.schema.json`, the `schema` of
/// an OpenAI variant, an Anthropic or Gemini variant (Gemini's `responseJsonSchema` is JSON
/// Schema too), or each tool's input and output schema in `mcp/tools.json`.
fn schemas_in(path: &str, value: &Value) -> Vec<(String, Value)> {
    if path.starts_with("schemas/")
        || path.ends_with(".anthropic.json")
        || path.ends_with(".gemini.json")
        || path == "ir.schema.json"
    {
        return vec![(path.to_owned(), value.clone())];
    }
    if path.ends_with(".openai.json") {
        return vec![(path.to_owned(), value["schema"].clone())];
    }
    if path == "mcp/tools.json" {
        let tools = value["tools"].as_array().cloned().unwrap_or_default();
        return tools
            .iter()
            .flat_map(|t| {
                [
                    (format!("{path} input"), t["inputSchema"].clone()),
                    (format!("{path} output"), t["outputSchema"].clone()),
                ]
            })
            .collect();
    }
    Vec::new()
}

#[test]
fn every_example_schema_validates_against_the_metaschema() {
    let mut checked = 0;
    for root in example_roots() {
        let files = build(&root, "metaschema");
        let defs: Value = files
            .iter()
            .find(|(path, _)| path == "schemas/defs.json")
            .and_then(|(_, bytes)| serde_json::from_slice(bytes).ok())
            .unwrap_or_else(|| panic!("{}: no schemas/defs.json", root.display()));
        for (path, bytes) in files {
            if !path.ends_with(".json") || path == "ir.json" {
                continue;
            }
            let value: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{}: {path} is not JSON: {e}", root.display()));
            for (what, schema) in schemas_in(&path, &value) {
                if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
                    panic!(
                        "{}: {what} is not a valid 2020-12 schema: {e}",
                        root.display()
                    );
                }
                // `schemas/` files with their shared definitions beside them, as a validator
                // that loads files by path resolves them; the rest are self-contained.
                file_schema::file_validator(&schema, &defs)
                    .unwrap_or_else(|e| panic!("{}: {what} does not compile: {e}", root.display()));
                checked += 1;
            }
        }
    }
    // Four examples, each with an input and an output schema at least.
    assert!(checked >= 8, "only {checked} schemas were found");
}

#[test]
fn example_outputs_snapshot() {
    for root in example_roots() {
        let name = root
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut text = String::new();
        for (path, bytes) in build(&root, "snapshot") {
            // The build's list of what it wrote is the `=====` lines already.
            // The stamp records this build's times and paths: not an emitted file.
            if path == "ir.json"
                || path == "ir.schema.json"
                || path == ".aelc-manifest"
                || path == ".aelc-stamp"
            {
                continue;
            }
            text.push_str(&format!(
                "===== {path}\n{}\n",
                String::from_utf8_lossy(&bytes).trim_end()
            ));
        }
        insta::with_settings!({ omit_expression => true }, {
            insta::assert_snapshot!(name, text);
        });
    }
}
