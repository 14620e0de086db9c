//! Every module of the embedded standard library parses without a diagnostic, and its
//! `@pattern`s are in the common regex syntax.

use aelc::source::SourceMap;
use aelc::{sema, stdlib, syntax};

#[test]
fn every_std_module_parses_cleanly() {
    assert!(!stdlib::modules().is_empty());
    for (path, text) in stdlib::modules() {
        let mut sources = SourceMap::new();
        let file = sources.add(stdlib::file_name(path), *text);
        let parsed = syntax::parse(file, text);
        assert!(
            parsed.diagnostics.is_empty(),
            "{path}:\n{}",
            aelc::diagnostics::render::human(
                &sources,
                &parsed.diagnostics,
                aelc::diagnostics::render::Color::Never
            )
        );
        assert!(text.starts_with("//!"), "{path} has no module doc");
    }
}

#[test]
fn std_patterns_are_in_the_common_syntax() {
    for (path, text) in stdlib::modules() {
        for (at, _) in text.match_indices("@pattern(r\"") {
            let rest = &text[at + "@pattern(r\"".len()..];
            let pattern = &rest[..rest.find('"').unwrap()];
            assert_eq!(
                sema::pattern::check_pattern(pattern),
                Ok(()),
                "{path}: {pattern}"
            );
        }
    }
}
