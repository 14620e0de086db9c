//! `ael.toml` cases: good files load, bad files give the diagnostics snapshotted beside this
//! file (`snapshots/`), rendered as the author sees them.

use super::{parse, PartKind, Provider};
use crate::diagnostics::render::{self, Color};
use crate::source::SourceMap;

fn render(text: &str) -> String {
    let mut sources = SourceMap::new();
    let file = sources.add("ael.toml", text);
    let loaded = parse(file, text);
    assert!(loaded.config.is_none() || loaded.diagnostics.iter().all(|d| !d.is_error()));
    render::human(&sources, &loaded.diagnostics, Color::Never)
}

const GOOD_FULL: &str = r#"[package]
name = "acme/review"
version = "0.1.0"
description = "Reviews documents"

[bindings.primary_model]
provider = "openai"
model = "gpt-4o-mini"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "OPENAI_API_KEY"
accepts = ["text", "image"]
price = { input_per_mtok = 0.15, output_per_mtok = 0.60, currency = "EUR" }

[limits]
max_input_bytes = 2_097_152
"#;

#[test]
fn the_spec_example_loads() {
    let mut sources = SourceMap::new();
    let file = sources.add("ael.toml", GOOD_FULL);
    let loaded = parse(file, GOOD_FULL);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let config = loaded.config.unwrap();
    assert_eq!(
        config, loaded.known,
        "what is known of a valid file is the file"
    );
    assert_eq!(config.package.name, "acme/review");
    assert_eq!(config.limits.max_input_bytes, 2_097_152);
    let binding = &config.bindings["primary_model"];
    assert_eq!(binding.provider, Provider::OpenAi);
    assert_eq!(binding.accepts, [PartKind::Text, PartKind::Image]);
    let price = binding.price.as_ref().unwrap();
    // Exact as written: `0.60` is not turned into the float 0.6.
    assert_eq!(
        (
            price.input_per_mtok.as_str(),
            price.output_per_mtok.as_str()
        ),
        ("0.15", "0.60")
    );
    assert_eq!(
        sources.get(file).unwrap().slice(binding.span),
        "primary_model"
    );
    let ir = config.to_ir_bindings();
    assert_eq!(ir[0].name, "primary_model");
    assert_eq!(ir[0].accepts, [PartKind::Text, PartKind::Image]);
    assert_eq!(config.to_ir_package().version, "0.1.0");
}

#[test]
fn the_smallest_file_loads_with_defaults() {
    let text = "[package]\nname = \"a/b\"\nversion = \"1.0.0\"\n";
    let loaded = parse(crate::span::FileId(0), text);
    let config = loaded.config.unwrap();
    assert!(config.bindings.is_empty());
    assert_eq!(config.to_ir_limits(), crate::ir::Limits::default());
}

#[test]
fn dotted_bindings_and_default_accepts() {
    let text = "[package]\nname = \"a/b\"\nversion = \"1.0.0\"\n[bindings]\nfast.provider = \"replay\"\nfast.model = \"m\"\n\n[bindings.slow]\nprovider = \"anthropic\"\nmodel = \"claude\"\nprice = { input_per_mtok = \"3\", output_per_mtok = 15, currency = \"USD\" }\n";
    let loaded = parse(crate::span::FileId(0), text);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let config = loaded.config.unwrap();
    assert_eq!(config.bindings["fast"].accepts, [PartKind::Text]);
    assert_eq!(
        config.bindings["slow"]
            .price
            .as_ref()
            .unwrap()
            .output_per_mtok,
        "15"
    );
}

const PACKAGE: &str = "[package]\nname = \"acme/review\"\nversion = \"0.1.0\"\n";

fn with_package(rest: &str) -> String {
    format!("{PACKAGE}{rest}")
}

macro_rules! bad {
    ($name:ident, $text:expr) => {
        #[test]
        fn $name() {
            let text: String = $text.into();
            let out = render(&text);
            assert!(out.contains("error") || out.contains("warning"), "{out}");
            insta::assert_snapshot!(out);
        }
    };
}

bad!(syntax_error, "[package\nname = \"a/b\"\n");
bad!(
    duplicate_key,
    "[package]\nname = \"a/b\"\nname = \"a/c\"\nversion = \"0.1.0\"\n"
);
bad!(no_package, "[limits]\nmax_input_bytes = 10\n");
bad!(
    unknown_top_key,
    with_package("[binding.x]\nprovider = \"openai\"\n")
);
bad!(
    unknown_package_key,
    "[package]\nname = \"a/b\"\nversoin = \"0.1.0\"\n"
);
bad!(
    bad_package_name,
    "[package]\nname = \"Review\"\nversion = \"0.1.0\"\n"
);
bad!(
    bad_version,
    "[package]\nname = \"a/b\"\nversion = \"1.0\"\n"
);
bad!(wrong_type, "[package]\nname = \"a/b\"\nversion = 1\n");
bad!(
    secret_key,
    with_package("[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"sk-123\"\n")
);
bad!(
    key_in_api_key_env,
    with_package(
        "[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\napi_key_env = \"sk-proj-abcdef\"\n"
    )
);
bad!(
    unknown_provider,
    with_package("[bindings.main]\nprovider = \"openia\"\nmodel = \"m\"\n")
);
bad!(
    missing_model,
    with_package("[bindings.main]\nprovider = \"openai\"\n")
);
bad!(
    unknown_part_kind,
    with_package(
        "[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\naccepts = [\"text\", \"imagee\"]\n"
    )
);
bad!(
    duplicate_part_kind,
    with_package(
        "[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\naccepts = [\"text\", \"text\"]\n"
    )
);
bad!(bad_price, with_package("[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\nprice = { input_per_mtok = -1, output_per_mtok = 1e3, currency = \"euro\" }\n"));
bad!(
    bad_binding_name,
    with_package("[bindings.\"my model\"]\nprovider = \"openai\"\nmodel = \"m\"\n")
);
bad!(
    bad_limit,
    with_package("[limits]\nmax_input_bytes = 0\nmax_output = 5\n")
);
bad!(
    bad_storage_quota,
    with_package("[limits]\nmax_stored_bytes_per_account = -1\n")
);
bad!(
    bad_base_url,
    with_package(
        "[bindings.main]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"localhost:8080\"\n"
    )
);

#[test]
fn the_storage_quota_is_read_only_when_written() {
    let set = parse(
        crate::span::FileId(0),
        &with_package("[limits]\nmax_stored_bytes_per_account = 5_000_000\n"),
    );
    assert!(set.diagnostics.is_empty(), "{:?}", set.diagnostics);
    let limits = set.config.unwrap().to_ir_limits();
    assert_eq!(limits.max_stored_bytes_per_account, Some(5_000_000));
    // Unset, the IR says nothing of it (the gateway's default applies), so ir.json is as before.
    let unset = parse(crate::span::FileId(0), &with_package(""));
    let limits = unset.config.unwrap().to_ir_limits();
    assert_eq!(limits.max_stored_bytes_per_account, None);
    let json = serde_json::to_string(&limits).unwrap();
    assert!(!json.contains("max_stored"), "{json}");
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse(crate::span::FileId(0), &text);
    }

    #[test]
    fn toml_like_text_never_panics(text in "[\\[\\]a-z_.= \"'{},0-9\\n-]{0,120}") {
        let loaded = parse(crate::span::FileId(0), &text);
        for d in loaded.diagnostics {
            if let Some(span) = d.primary_span() {
                proptest::prop_assert!(span.range().end <= text.len());
            }
        }
    }
}

/// The registry's example of every `ael.toml` code triggers that code.
#[test]
fn every_registered_example_triggers_its_code() {
    for info in crate::diagnostics::codes::all() {
        if !(info.code.starts_with("E06") || info.code.starts_with("W06")) {
            continue;
        }
        // The example is an archive of files (`-- ael.toml --`, then `-- fix --`; see
        // book/src/diagnostics.md): take the example's `ael.toml`.
        let example = info
            .example
            .split("\n-- fix --\n")
            .next()
            .unwrap_or_default();
        let toml = example
            .split_once("-- ael.toml --\n")
            .map_or(example, |(_, rest)| {
                rest.split("\n-- ").next().unwrap_or(rest)
            });
        let text = if toml.starts_with("[package]") {
            toml.to_owned()
        } else {
            with_package(toml)
        };
        let loaded = parse(crate::span::FileId(0), &text);
        assert!(
            loaded.diagnostics.iter().any(|d| d.code == info.code),
            "{}: {:?}",
            info.code,
            loaded.diagnostics
        );
    }
}

#[test]
fn constrain_is_read_and_reaches_the_ir() {
    let text = with_package(
        "[bindings.local]\nprovider = \"openai\"\nmodel = \"m\"\nconstrain = \"grammar\"\n[bindings.remote]\nprovider = \"anthropic\"\nmodel = \"c\"\nconstrain = \"none\"\n",
    );
    let loaded = parse(crate::span::FileId(0), &text);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let ir = loaded.config.unwrap().to_ir_bindings();
    assert_eq!(ir[0].constrain.as_deref(), Some("grammar"));
    assert_eq!(ir[1].constrain.as_deref(), Some("none"));
}

bad!(
    unknown_constrain,
    with_package("[bindings.m]\nprovider = \"openai\"\nmodel = \"m\"\nconstrain = \"regex\"\n")
);
#[test]
fn gemini_and_anthropic_output_format_are_accepted() {
    let text = with_package(
        "[bindings.g]\nprovider = \"gemini\"\nmodel = \"gemini-2.5-flash\"\n[bindings.a]\nprovider = \"anthropic\"\nmodel = \"c\"\nconstrain = \"output_format\"\n",
    );
    let loaded = parse(crate::span::FileId(0), &text);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let ir = loaded.config.unwrap().to_ir_bindings();
    let named = |n: &str| ir.iter().find(|b| b.name == n).unwrap();
    assert_eq!(named("g").provider, crate::ir::Provider::Gemini);
    assert_eq!(named("a").constrain.as_deref(), Some("output_format"));
}

bad!(
    output_format_needs_anthropic,
    with_package(
        "[bindings.m]\nprovider = \"gemini\"\nmodel = \"m\"\nconstrain = \"output_format\"\n"
    )
);
bad!(
    grammar_needs_an_openai_server,
    with_package(
        "[bindings.m]\nprovider = \"anthropic\"\nmodel = \"m\"\nconstrain = \"grammar\"\n"
    )
);

/// A file with errors still says what it can (`Loaded::known`, which sema checks the modules
/// against): the package as written, every binding by name — a bad name, an unknown provider
/// (then `replay`, which calls nothing), a part kind that does not exist (the known ones
/// kept) — and no configuration.
#[test]
fn a_file_with_errors_still_says_what_it_can() {
    let text = r#"[package]
name = "Not A Name"
version = "0.1.0"

[bindings.fast]
provider = "openia"
model = "m"
accepts = ["text", "imgae", "image"]

[bindings.bad-name]
provider = "openai"
model = "gpt"

[limits]
max_input_bytes = 4096
"#;
    let mut sources = SourceMap::new();
    let file = sources.add("ael.toml", text);
    let loaded = parse(file, text);
    assert!(loaded.config.is_none());
    let mut codes: Vec<&str> = loaded.diagnostics.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    assert_eq!(codes, ["E0605", "E0607", "E0608", "E0611"]);
    let known = &loaded.known;
    assert_eq!(known.package.name, "Not A Name");
    assert_eq!(known.limits.max_input_bytes, 4096);
    let names: Vec<&str> = known.bindings.keys().map(String::as_str).collect();
    assert_eq!(names, ["bad-name", "fast"]);
    let fast = &known.bindings["fast"];
    assert_eq!(fast.provider, Provider::Replay);
    assert_eq!(fast.model, "m");
    assert_eq!(fast.accepts, [PartKind::Text, PartKind::Image]);
    assert_eq!(known.bindings["bad-name"].provider, Provider::OpenAi);

    // Not TOML at all: nothing is known.
    let broken = parse(file, "[package\nname = 1");
    assert!(broken.known.bindings.is_empty() && broken.known.package.name.is_empty());
}
