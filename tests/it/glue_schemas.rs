//! The glue embeds each node's output schema as `schemas/` holds it and no model-facing
//! variant (issue 42): the runtime makes a node's document self-contained and derives its
//! variants when the glue's executor first calls the node's model. What it reads back from the embedded texts must
//! be what it read before, byte for byte: the executor's schemas under `aelc run`
//! (`exec_schemas`), the files `aelc build` writes (`schemas/` made self-contained, each
//! `model/<node>.<provider>.json`), and what a host reads from them (`Schemas::load`). Over
//! every bundled example, the stress project, the glue benchmark's project and the seeded
//! random projects of `glue_gen`.

use std::path::{Path, PathBuf};

use aelc::codegen::emit::{emit, json_bytes};
use aelc::codegen::model_schema::{exec_schemas, ProviderKind};
use aelc_runtime::exec::Schemas;
use aelc_runtime::glue::read_embedded_schemas;
use aelc_runtime::model_schema::model_schema;
use aelc_runtime::ordered::Json;

use crate::glue_gen;

/// The text of the glue's `pub const NAME: &str = r#"…"#;`.
fn embedded<'g>(glue: &'g str, name: &str) -> &'g str {
    let head = format!("pub const {name}: &str = r");
    let start = glue.find(&head).map(|i| i + head.len()).expect(name);
    let hashes = glue[start..].bytes().take_while(|b| *b == b'#').count();
    let open = start + hashes + 1;
    let close = format!("\"{};", "#".repeat(hashes));
    let end = glue[open..].find(&close).map(|i| open + i).expect(name);
    &glue[open..end]
}

fn roots(out: &Path) -> Vec<PathBuf> {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut roots = crate::support::examples::example_roots();
    roots.push(workspace.join("tests/codegen_fixtures/stress"));
    roots.push(workspace.join("examples/review-rs/bench"));
    for p in glue_gen::projects(0x00AE_1C42, 12) {
        let root = out.join(&p.id);
        glue_gen::write_files(&root, &p.files);
        roots.push(root);
    }
    roots
}

#[test]
fn the_glue_gives_back_every_schema_and_variant_byte_for_byte() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("glue-schemas");
    let _ = std::fs::remove_dir_all(&out);
    let mut variants = 0;
    for root in roots(&out.join("projects")) {
        let (program, glue) = glue_gen::glue_of(&root);
        let what = program.package.name.clone();
        // What the glue's executor asks for each node (`rt::embedded_executor`), all at once.
        let from_glue = read_embedded_schemas(
            embedded(&glue, "SCHEMAS_JSON"),
            embedded(&glue, "SHARED_JSON"),
        )
        .schemas(&program);
        // What `aelc run` runs with, and what the glue embedded whole before.
        assert_eq!(from_glue, exec_schemas(&program), "{what}");
        // The files of `aelc build`, and what a host reads from them.
        let emission = emit(&program, &[]);
        assert!(!emission.has_errors(), "{what}: {:?}", emission.diagnostics);
        let build = out.join("builds").join(what.replace('/', "_"));
        for (path, bytes) in &emission.files {
            let path = build.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, bytes).expect("write");
        }
        let stems = program.node_file_names();
        let loaded = Schemas::load(&build, &program, &stems).expect("the build reads");
        for (i, (node, stem)) in program.nodes.iter().zip(&stems).enumerate() {
            let glued = &from_glue.0[i];
            let read = &loaded.0[i];
            // The document, in its key order: `schemas/` made self-contained again.
            assert_eq!(
                glued.document.to_string(),
                read.document.to_string(),
                "{what}: {stem}"
            );
            assert_eq!(glued.grammar, read.grammar, "{what}: {stem}");
            for provider in ProviderKind::ALL {
                let file = format!("model/{stem}.{}.json", provider.as_str());
                let Some(bytes) = emission.files.get(Path::new(&file)) else {
                    continue;
                };
                // The file `aelc build` wrote, from the document the glue gives back.
                let derived = model_schema(provider, &node.name, &glued.document);
                assert_eq!(
                    String::from_utf8_lossy(&json_bytes(&derived.to_value())),
                    String::from_utf8_lossy(bytes),
                    "{what}: {file}"
                );
                // What a provider is sent, in its key order.
                let key = provider.as_str();
                let (a, b) = (&glued.variants[key], &read.variants[key]);
                assert_eq!(a, b, "{what}: {file}");
                assert_eq!(a.schema.to_string(), b.schema.to_string(), "{what}: {file}");
                let text: Json = serde_json::from_slice(bytes).expect("a variant file");
                let sent = match provider {
                    ProviderKind::OpenAi => text.get("schema").cloned().unwrap_or_default(),
                    _ => text,
                };
                assert_eq!(a.schema.to_string(), sent.to_string(), "{what}: {file}");
                variants += 1;
            }
        }
    }
    assert!(variants > 100, "{variants} variants compared");
}
