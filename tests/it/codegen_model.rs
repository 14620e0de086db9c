//! The model-facing variants (spec §9.3) against each provider's published rules.
//!
//! OpenAI — "Structured Outputs", section "Supported schemas"
//! (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>):
//! - supported types: string, number, boolean, integer, object, array, enum, anyOf;
//! - the root must be an object, not `anyOf`;
//! - every object has `additionalProperties: false`, and every property is listed in
//!   `required` (optional fields are expressed as a union with `null`);
//! - supported string keywords: `pattern`, `format` (date-time, time, date, duration, email,
//!   hostname, ipv4, ipv6, uuid); number keywords: `minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum`, `multipleOf`; array keywords: `minItems`, `maxItems`;
//! - not supported: `minLength`/`maxLength`, `patternProperties`, `unevaluatedProperties`,
//!   `propertyNames`, `minProperties`/`maxProperties`, `unevaluatedItems`, `contains`,
//!   `uniqueItems`, `allOf`, `not`, `oneOf`, `if`/`then`/`else`, `default`;
//! - `$defs` and `$ref` (including recursion) are supported; at most 10 levels of nesting and
//!   5000 object properties in total.
//!
//! Gemini — `generationConfig.responseJsonSchema` ("Structured output",
//! <https://ai.google.dev/gemini-api/docs/structured-output>): a JSON Schema subset (`type`,
//! `format`, `title`, `description`, `enum`, `items`, `minItems`, `maxItems`, `minimum`,
//! `maximum`, `anyOf`, `properties`, `required`, …), cyclic `$ref`s only under optional
//! properties; the variant inlines named types and cuts recursion (W0804).
//!
//! Anthropic — tool `input_schema` and structured outputs' `output_config.format`: JSON Schema
//! whose root is `"type": "object"`, in the subset the SDK's `transform_schema` leaves.
//!
//! Besides these rules, `provider_sdks_accept_every_variant` runs each provider's own SDK over
//! every variant of the fixtures, the bundled examples and the stress project
//! (`tests/codegen_fixtures/stress`): see `tests/support/provider_sdks.py`.
//!
//! MCP — "Tools", tool definition (<https://modelcontextprotocol.io/specification/2025-06-18/server/tools>):
//! `name`, `title?`, `description?`, `inputSchema` (a JSON Schema with `"type": "object"`),
//! `outputSchema?` (likewise, for `structuredContent`).

use std::path::{Path, PathBuf};

use crate::codegen_fixtures::*;
use aelc::codegen::emit::emit;
use aelc::codegen::model_schema::{
    limitations, GEMINI_KEYWORDS, GEMINI_STRING_FORMATS, OPENAI_FORMATS, OPENAI_KEYWORDS,
};
use aelc::driver::{check_path, DiskWorld};
use aelc::ir::Program;
use serde_json::Value;

/// A project on disk, checked.
fn load(root: &Path) -> Program {
    let compilation = check_path(&DiskWorld, root).expect("read the project");
    compilation
        .program
        .unwrap_or_else(|| panic!("{}: {:?}", root.display(), compilation.diagnostics))
}

fn stress_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/codegen_fixtures/stress")
}

/// The fixture programs, every bundled example and the stress project.
fn programs() -> Vec<Program> {
    let mut out = vec![review_program(), kitchen_program()];
    let mut roots = crate::support::examples::example_roots();
    roots.push(stress_root());
    out.extend(roots.iter().map(|r| load(r)));
    out
}

fn files() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for program in programs() {
        let emission = emit(&program, &[]);
        assert!(!emission.has_errors(), "{:?}", emission.diagnostics);
        for (path, bytes) in emission.files {
            let p = path.to_string_lossy().into_owned();
            if p.starts_with("model/") || p == "mcp/tools.json" {
                out.push((
                    format!("{}:{p}", program.package.name),
                    serde_json::from_slice(&bytes).unwrap(),
                ));
            }
        }
    }
    out
}

fn with_suffix(suffix: &str) -> Vec<(String, Value)> {
    files()
        .into_iter()
        .filter(|(p, _)| p.ends_with(suffix))
        .collect()
}

/// Calls `f` on every subschema, with the key path leading to it.
fn each_schema(
    schema: &Value,
    path: &str,
    f: &mut dyn FnMut(&str, &serde_json::Map<String, Value>),
) {
    let Value::Object(m) = schema else { return };
    f(path, m);
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = m.get(key) {
            for (name, child) in children {
                each_schema(child, &format!("{path}/{key}/{name}"), f);
            }
        }
    }
    for key in ["items", "additionalProperties", "propertyNames"] {
        if let Some(child @ Value::Object(_)) = m.get(key) {
            each_schema(child, &format!("{path}/{key}"), f);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(arms)) = m.get(key) {
            for (i, arm) in arms.iter().enumerate() {
                each_schema(arm, &format!("{path}/{key}/{i}"), f);
            }
        }
    }
}

#[test]
fn openai_variant_follows_strict_mode_rules() {
    let variants = with_suffix(".openai.json");
    assert!(variants.len() >= 3);
    let mut strict_seen = 0;
    for (file, v) in variants {
        assert!(v["name"]
            .as_str()
            .unwrap()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        let schema = &v["schema"];
        assert_eq!(schema["type"], "object", "{file}: root must be an object");
        assert!(
            schema.get("anyOf").is_none(),
            "{file}: root must not be anyOf"
        );
        if v["strict"] != Value::Bool(true) {
            // Only a documented strict-mode limit turns strict mode off (W0802), never a map.
            assert!(
                file.starts_with("acme/stress:model/code.")
                    || file.starts_with("acme/stress:model/deep."),
                "{file}: strict is off"
            );
            continue;
        }
        strict_seen += 1;
        let mut depth_ok = true;
        each_schema(schema, "", &mut |path, m| {
            for key in m.keys() {
                assert!(
                    OPENAI_KEYWORDS.contains(&key.as_str()),
                    "{file}{path}: `{key}` is not supported"
                );
            }
            if let Some(f) = m.get("format").and_then(Value::as_str) {
                assert!(OPENAI_FORMATS.contains(&f), "{file}{path}: format {f}");
            }
            assert!(
                ["type", "anyOf", "$ref"].iter().any(|k| m.contains_key(*k)),
                "{file}{path}: no `type` (OpenAI: \"schema must have a 'type' key\")"
            );
            if let Some(Value::Object(props)) = m.get("properties") {
                assert_eq!(
                    m.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{file}{path}"
                );
                let required: Vec<&str> = m["required"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                for name in props.keys() {
                    assert!(
                        required.contains(&name.as_str()),
                        "{file}{path}: `{name}` not required"
                    );
                }
            }
            depth_ok &= path.matches("/properties/").count() <= 10;
        });
        assert!(depth_ok, "{file}: nests deeper than 10 levels");
    }
    assert!(strict_seen >= 10, "{strict_seen}");
}

#[test]
fn openai_moves_unsupported_bounds_into_descriptions() {
    let (_, v) = with_suffix("review.openai.json").remove(0);
    let summary = &v["schema"]["properties"]["summary"];
    assert!(summary.get("maxLength").is_none());
    assert!(summary["description"]
        .as_str()
        .unwrap()
        .contains("At most 1000 characters."));
}

#[test]
fn gemini_variant_uses_only_response_json_schema_fields() {
    let variants = with_suffix(".gemini.json");
    assert!(variants.len() >= 10);
    for (file, v) in variants {
        let text = v.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$defs"),
            "{file}: no references"
        );
        each_schema(&v, "", &mut |path, m| {
            for key in m.keys() {
                assert!(
                    GEMINI_KEYWORDS.contains(&key.as_str()),
                    "{file}{path}: `{key}`"
                );
            }
            if let Some(t) = m.get("type").and_then(Value::as_str) {
                assert!(
                    ["string", "number", "integer", "boolean", "array", "object", "null"]
                        .contains(&t),
                    "{file}{path}: type {t}"
                );
                if let Some(f) = m.get("format").and_then(Value::as_str) {
                    assert!(
                        t == "string" && GEMINI_STRING_FORMATS.contains(&f),
                        "{file}{path}: format {f}"
                    );
                }
            }
        });
    }
}

#[test]
fn anthropic_variant_is_json_schema_with_an_object_root() {
    let variants = with_suffix(".anthropic.json");
    assert!(variants.len() >= 3);
    for (file, v) in variants {
        assert_eq!(v["type"], "object", "{file}");
        assert!(v.get("$schema").is_none());
        jsonschema::draft202012::meta::validate(&v).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn mcp_tools_follow_the_tool_definition() {
    for (file, v) in with_suffix("mcp/tools.json") {
        for tool in v["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            assert!(!name.is_empty() && name.len() <= 128);
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)));
            for key in ["inputSchema", "outputSchema"] {
                assert_eq!(tool[key]["type"], "object", "{file} {name} {key}");
                jsonschema::draft202012::meta::validate(&tool[key]).unwrap();
            }
            for key in tool.as_object().unwrap().keys() {
                assert!([
                    "name",
                    "title",
                    "description",
                    "inputSchema",
                    "outputSchema"
                ]
                .contains(&key.as_str()));
            }
        }
    }
}

#[test]
fn model_variant_snapshots() {
    let emission = emit(&kitchen_program(), &[]);
    for provider in ["openai", "gemini", "anthropic"] {
        let path = format!("model/draw.{provider}.json");
        let text = String::from_utf8(emission.files[Path::new(&path)].clone()).unwrap();
        insta::assert_snapshot!(format!("kitchen_draw_{provider}"), text);
    }
}

/// The Python with the providers' SDKs (`AELC_PROVIDER_SDK_PYTHON`, set by .ci/run); `None`
/// skips loudly when run locally, never under CI.
fn sdk_python() -> Option<String> {
    match std::env::var("AELC_PROVIDER_SDK_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "AELC_PROVIDER_SDK_PYTHON is not set but CI is: .ci/run must install the \
                 openai, anthropic and google-genai SDKs"
            );
            eprintln!(
                "\n!!! SKIPPED the provider SDK checks: set AELC_PROVIDER_SDK_PYTHON to a Python \
                 with openai, anthropic and google-genai installed !!!\n"
            );
            None
        }
    }
}

#[test]
fn provider_sdks_accept_every_variant() {
    let Some(python) = sdk_python() else { return };
    let items: Vec<Value> = files()
        .into_iter()
        .filter_map(|(file, variant)| {
            let provider = ["openai", "anthropic", "gemini"]
                .into_iter()
                .find(|p| file.ends_with(&format!(".{p}.json")))?;
            Some(serde_json::json!({"file": file, "provider": provider, "variant": variant}))
        })
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/provider_sdks.py");
    let mut child = std::process::Command::new(&python)
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {python}: {e}"));
    let input = serde_json::to_vec(&items).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    eprintln!("provider SDKs: {report:#}");
    let failures = report["failures"].as_array().unwrap();
    assert!(failures.is_empty(), "{failures:#?}");
    for provider in ["openai", "anthropic", "gemini"] {
        // Every node of two fixtures, six examples and the stress project.
        assert!(
            report["checked"][provider].as_u64().unwrap() >= 20,
            "{provider}: {report}"
        );
    }
}

/// The stress project's nodes get exactly the warnings their types call for.
/// The words of the stress project's publishing warnings as the author reads them: bare output
/// fields (W0801) and what a provider's schema cannot express (W0802–W0804), with note and
/// help. Issue 20 moved their text into `codegen/error.rs`; this snapshot was taken before.
#[test]
fn stress_warnings_read_as_written() {
    let program = load(&stress_root());
    let emission = emit(&program, &[]);
    let text: Vec<String> = emission
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {}\n  = note: {}\n  = help: {}",
                d.code,
                d.message,
                d.notes.join("; "),
                d.help.as_deref().unwrap_or("")
            )
        })
        .collect();
    for code in ["W0802", "W0803", "W0804"] {
        assert!(
            text.iter().any(|t| t.starts_with(code)),
            "{code}: {text:#?}"
        );
    }
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn stress_nodes_warn_what_a_provider_cannot_express() {
    let program = load(&stress_root());
    let emission = emit(&program, &[]);
    assert!(!emission.has_errors(), "{:?}", emission.diagnostics);
    let schemas = aelc::codegen::json_schema::node_schemas(&program);
    let codes_of = |name: &str| -> Vec<&'static str> {
        let i = program.nodes.iter().position(|n| n.name == name).unwrap();
        let mut codes: Vec<_> = limitations(name, &schemas[i].output)
            .into_iter()
            .map(|l| l.code())
            .collect();
        codes.sort();
        codes
    };
    // `limitations` finds, in order, exactly what building every provider's variant reports
    // (it skips the Anthropic variant and shares the map rewrite), on every node.
    for (node, s) in program.nodes.iter().zip(&schemas) {
        let mut every: Vec<aelc::codegen::model_schema::Limitation> = Vec::new();
        for provider in aelc::codegen::model_schema::ProviderKind::ALL {
            for l in aelc::codegen::model_schema::variant_with_limitations(
                provider, &node.name, &s.output,
            )
            .1
            {
                if !every.contains(&l) {
                    every.push(l);
                }
            }
        }
        assert_eq!(limitations(&node.name, &s.output), every, "{}", node.name);
    }
    assert_eq!(codes_of("forms"), ["W0803", "W0804"]);
    assert_eq!(codes_of("code"), ["W0802"]);
    assert_eq!(codes_of("deep"), ["W0802"]);
    assert_eq!(codes_of("tree"), ["W0803", "W0804"]);
    assert_eq!(codes_of("expr"), ["W0804"]);
    assert_eq!(codes_of("scores"), ["W0803"]);
    for plain in ["levels", "shape", "yes", "count", "line", "perhaps"] {
        assert!(codes_of(plain).is_empty(), "{plain}");
    }
    // The build reports them as warnings on the nodes, and still writes every file.
    let warned: Vec<&str> = emission.diagnostics.iter().map(|d| d.code).collect();
    for code in ["W0802", "W0803", "W0804"] {
        assert!(warned.contains(&code), "{warned:?}");
    }
    let deep = &emission.files[Path::new("model/deep.openai.json")];
    let deep: Value = serde_json::from_slice(deep).unwrap();
    assert_eq!(deep["strict"], false);
    let code: Value =
        serde_json::from_slice(&emission.files[Path::new("model/code.openai.json")]).unwrap();
    assert_eq!(code["strict"], false);
    assert_eq!(
        code["schema"]["properties"]["value"]["enum"]
            .as_array()
            .unwrap()
            .len(),
        1100
    );
}

/// A map is a bounded list of `{key, value}` in every variant, and the runtime turns an answer
/// in that form back into what the output schema validates.
#[test]
fn maps_travel_as_entries_and_come_back_as_maps() {
    let program = load(&stress_root());
    let schemas = aelc::codegen::json_schema::node_schemas(&program);
    let i = program
        .nodes
        .iter()
        .position(|n| n.name == "scores")
        .unwrap();
    let document = &schemas[i].output;
    let openai = aelc::codegen::model_schema::model_schema(
        aelc::codegen::model_schema::ProviderKind::OpenAi,
        "scores",
        document,
    );
    assert_eq!(openai["strict"], true);
    let list = &openai["schema"]["properties"]["value"];
    assert_eq!(list["type"], "array");
    assert_eq!(list["maxItems"], 20);
    assert_eq!(
        list["items"]["required"],
        serde_json::json!(["key", "value"])
    );
    let answer = aelc_runtime::provider::Answer {
        text: r#"{"value": [{"key": "rust", "value": 0.9}, {"key": "go", "value": 0.5}]}"#.into(),
        finish_reason: aelc_runtime::provider::FinishReason::Stop,
        usage: Default::default(),
    };
    let schema = aelc_runtime::exec::output_schema(
        "scores",
        aelc::ir::Provider::OpenAi,
        openai.clone(),
        document,
    );
    let restored = aelc_runtime::provider::restore::restore(answer, &schema, 1 << 20).unwrap();
    assert_eq!(restored.text, r#"{"rust":0.9,"go":0.5}"#);
    let value: Value = serde_json::from_str(&restored.text).unwrap();
    assert!(jsonschema::validator_for(document)
        .unwrap()
        .is_valid(&value));
}

/// Gemini's cut keeps only values the type accepts: at the cut, a recursive list is empty
/// and a recursive option is `null`.
#[test]
fn gemini_cuts_recursion_soundly() {
    let program = load(&stress_root());
    let schemas = aelc::codegen::json_schema::node_schemas(&program);
    let i = program.nodes.iter().position(|n| n.name == "tree").unwrap();
    let v = aelc::codegen::model_schema::model_schema(
        aelc::codegen::model_schema::ProviderKind::Gemini,
        "tree",
        &schemas[i].output,
    );
    let mut level = &v;
    for _ in 0..aelc::codegen::model_schema::GEMINI_UNROLL {
        assert_eq!(level["properties"]["children"]["type"], "array");
        level = &level["properties"]["children"]["items"];
    }
    assert_eq!(level["properties"]["children"]["maxItems"], 0, "{level:#}");
    assert_eq!(
        level["properties"]["parent_hint"]["type"], "null",
        "{level:#}"
    );
    assert_eq!(level["properties"]["named"]["maxItems"], 0, "{level:#}");
}
