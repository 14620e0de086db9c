//! Keeps `grammar/ael.ebnf` honest (the mechanism is described at the top of that file):
//! every production it defines is named by a `// production: …` comment in a UI test file
//! that must parse cleanly (`tests/ui/**/*.ok.ael`), and every name such a comment lists is a
//! production of the grammar.

use std::collections::BTreeSet;
use std::path::Path;

fn productions() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("grammar/ael.ebnf")).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            // A definition starts in column 1: `name = … ;`.
            let (name, _) = line.split_once(" = ")?;
            let name = name.trim_end();
            let well_formed = !name.is_empty()
                && !line.starts_with(' ')
                && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            well_formed.then(|| name.to_owned())
        })
        .collect()
}

fn ok_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            ok_files(&path, out);
        } else if path.to_string_lossy().ends_with(".ok.ael") {
            out.push(path);
        }
    }
}

/// The names listed in `// production: a, b` comments of the `.ok.ael` UI files.
fn tagged() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    ok_files(&root.join("tests/ui"), &mut files);
    let mut names = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for line in text.lines() {
            if let Some(list) = line.trim().strip_prefix("// production:") {
                names.extend(
                    list.split(',')
                        .map(|n| n.trim().to_owned())
                        .filter(|n| !n.is_empty()),
                );
            }
        }
    }
    names
}

#[test]
fn the_grammar_has_productions() {
    let productions = productions();
    assert!(productions.len() > 50, "parsed only {productions:?}");
    assert!(productions.contains("node_item") && productions.contains("expr"));
}

#[test]
fn every_production_has_a_valid_ui_test() {
    let tagged = tagged();
    let missing: Vec<String> = productions().difference(&tagged).cloned().collect();
    assert!(
        missing.is_empty(),
        "productions of grammar/ael.ebnf with no `// production:` tag in a tests/ui/**/*.ok.ael \
         file: {missing:?}"
    );
}

#[test]
fn every_tag_names_a_production() {
    let productions = productions();
    let unknown: Vec<String> = tagged().difference(&productions).cloned().collect();
    assert!(
        unknown.is_empty(),
        "`// production:` tags naming no production: {unknown:?}"
    );
}
