//! The formatter's tests: fixtures with snapshots, properties over generated trees, the whole
//! corpus of `.ael` files in the repository, and the `aelc fmt` command.
//!
//! Every formatted text must (1) parse without errors to the same tree as its input, spans
//! aside, (2) keep every comment, in order, and (3) format to itself.

mod gen;

use std::path::{Path, PathBuf};
use std::process::Command;

use aelc::span::FileId;
use aelc::syntax::ast::Module;
use aelc::syntax::format::{format, print_module};
use aelc::syntax::{self, Parse};
use proptest::prelude::*;

fn parse(text: &str) -> Parse {
    syntax::parse(FileId(0), text)
}

/// `{:?}` of a tree with every span (`@12..40`, `#1@12..40`) removed. Compact, not `{:#?}`:
/// the pretty form indents every line by its depth, so its size (and the time to write it) grows
/// with depth × size, n² for a chain of n operators (finding P3 of `aelc-fuzz fmt`).
fn tree(module: &Module) -> String {
    aelc::span::without_spans(&format!("{module:?}"))
}

fn errors(parse: &Parse) -> String {
    let errors: Vec<String> = parse
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            format!(
                "{} {} {:?}",
                d.code,
                d.message,
                d.labels.first().map(|l| l.span)
            )
        })
        .collect();
    errors.join("\n")
}

/// The comments of a text as the formatter prints them (line comments lose trailing spaces).
fn comment_texts(parse: &Parse) -> Vec<String> {
    parse
        .comments
        .iter()
        .map(|c| {
            if c.text.starts_with("//") {
                c.text.trim_end().to_owned()
            } else {
                c.text.clone()
            }
        })
        .collect()
}

/// The comments a formatted text must hold, in order: the comments of `parse`, and each line
/// of a doc comment that documents nothing (`W0001`), which the formatter turns into `//`
/// (`// ` before a `!` or `/`).
fn comments_kept(parse: &Parse, source: &str) -> Vec<String> {
    let mut comments: Vec<(u32, String)> = parse
        .comments
        .iter()
        .zip(comment_texts(parse))
        .map(|(c, text)| (c.span.start, text))
        .collect();
    for d in parse.diagnostics.iter().filter(|d| d.code == "W0001") {
        let Some(label) = d.labels.first() else {
            continue;
        };
        let mut at = label.span.start;
        let text = source.get(label.span.range()).unwrap_or_default();
        for line in text.split_inclusive('\n') {
            if let Some(rest) = line.trim().strip_prefix("///") {
                // `///!x` becomes `// !x`, not the module doc `//!x`.
                let space = if rest.starts_with(['!', '/']) {
                    " "
                } else {
                    ""
                };
                comments.push((at, format!("//{space}{rest}").trim_end().to_owned()));
            }
            at += line.len() as u32;
        }
    }
    comments.sort_by_key(|(at, _)| *at);
    comments.into_iter().map(|(_, text)| text).collect()
}

/// Formats `source`, which must parse cleanly, and checks the three promises. Returns the
/// formatted text.
fn check_round_trip(name: &str, source: &str) -> String {
    let before = parse(source);
    assert!(
        errors(&before).is_empty(),
        "{name} does not parse:\n{}",
        errors(&before)
    );
    let formatted = match format(&before, source) {
        Ok(formatted) => formatted,
        Err(diagnostics) => panic!("{name}: refused: {diagnostics:?}"),
    };
    let after = parse(&formatted);
    assert!(
        errors(&after).is_empty(),
        "{name}: the formatted text does not parse:\n{}\n{formatted}",
        errors(&after)
    );
    assert!(
        tree(&after.module) == tree(&before.module),
        "{name}: formatting changed the tree:\n{formatted}\n--- before\n{:#?}\n--- after\n{:#?}",
        before.module,
        after.module
    );
    assert_eq!(
        comment_texts(&after),
        comments_kept(&before, source),
        "{name}: formatting lost or reordered comments:\n{formatted}"
    );
    let again = format(&after, &formatted).unwrap_or_default();
    assert_eq!(again, formatted, "{name}: formatting is not idempotent");
    formatted
}

#[test]
fn fixtures() {
    insta::glob!("../fmt", "*.ael", |path| {
        let source = std::fs::read_to_string(path).unwrap_or_default();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let formatted = check_round_trip(name, &source);
        let snapshot = format!("----- SOURCE\n{source}\n----- FORMATTED\n{formatted}");
        insta::with_settings!({
            snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmt/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(snapshot);
        });
    });
}

/// Every `.ael` file of the repository that parses without errors (the UI corpus, the
/// examples, the standard library, the book's sources) survives formatting.
#[test]
fn corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for folder in ["tests/ui", "examples", "stdlib", "book"] {
        let mut files = Vec::new();
        collect(&root.join(folder), &mut files);
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap_or_default();
            if !errors(&parse(&source)).is_empty() {
                continue;
            }
            check_round_trip(&file.display().to_string(), &source);
            checked += 1;
        }
    }
    eprintln!("corpus: {checked} files formatted");
}

/// The bundled examples and the standard library are written as `aelc fmt` writes them (what
/// `aelc fmt --check` asks of a project in CI), so an author copying them starts formatted.
#[test]
fn bundled_examples_are_formatted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut unformatted = Vec::new();
    for folder in ["examples", "stdlib"] {
        let mut files = Vec::new();
        collect(&root.join(folder), &mut files);
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap_or_default();
            let parsed = parse(&source);
            if format(&parsed, &source).ok().as_deref() != Some(source.as_str()) {
                unformatted.push(file.display().to_string());
            }
        }
    }
    assert!(
        unformatted.is_empty(),
        "run `aelc fmt` on: {unformatted:#?}"
    );
}

fn collect(folder: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ael") {
            out.push(path);
        }
    }
}

#[test]
fn a_file_with_syntax_errors_is_refused() {
    let source = "struct A { x: }\n";
    let result = format(&parse(source), source);
    assert!(result.is_err());
}

#[test]
fn a_doc_comment_that_documents_nothing_is_kept() {
    let source = "struct A {\n    x: u8,\n    /// lost?\n}\n";
    let formatted = check_round_trip("dangling doc", source);
    assert!(formatted.contains("    // lost?\n"), "{formatted}");
}

/// Issue 25 (J): a `//!` line between two `///` lines left the first documenting nothing; the
/// formatter moved the `//!` up, which joined the first to the second on the next run, and a
/// second `aelc fmt` changed the file again. A doc comment that documents nothing is printed as
/// a plain comment, and a module doc written inside an item leaves the comments there alone.
#[test]
fn a_doc_comment_documenting_nothing_cannot_join_another() {
    let formatted = check_round_trip("issue 25 J", "//!\n///\n//!\n\n///\nstruct g{e:u8}\n");
    assert_eq!(
        formatted,
        "//!\n//!\n\n//\n\n///\nstruct g {\n    e: u8,\n}\n"
    );
    check_round_trip(
        "dangling, split by a module doc",
        "struct A {\n    x: u8,\n    /// a\n    //! m\n    /// b\n}\n",
    );
    // Found by `aelc-fuzz fmt` (`fuzz/regressions/fmt-c225feca198691af`): `///!` documenting
    // nothing was printed `//!`, a module doc.
    let formatted = check_round_trip("a dangling ///!", "///!\u{17}");
    assert_eq!(formatted, "// !\u{17}\n");
    check_round_trip("a dangling ////", "struct A { x: u8 }\n///!a\n");
}

/// Finding P3 of `aelc-fuzz fmt` (`fuzz/regressions/fmt-long-operator-chain`): one line of 95
/// `+` terms took 0.73 s to check (now about 1 ms). Not the formatter, which lays a chain of one
/// operator out as one group: the round trip compared the trees as `{:#?}`, whose lines are
/// indented by their depth, and a left-nested chain is as deep as it is long. Doubling the chain
/// must about double what the comparison writes (with `{:#?}`: 3.5 times from 48 to 96 terms).
#[test]
fn a_long_operator_chain_is_checked_in_linear_work() {
    let source = include_str!("../../fuzz/regressions/fmt-long-operator-chain");
    check_round_trip("fmt-long-operator-chain", source);
    let chain = |terms: usize| {
        let sum = vec!["no_such_helper(r)"; terms].join(" + ");
        format!("fn f(r: u8) -> u8 {{ {sum} }}\n")
    };
    let written = |terms: usize| {
        let source = chain(terms);
        let formatted = check_round_trip("a chain", &source);
        (tree(&parse(&source).module).len(), formatted.len())
    };
    let (tree_48, text_48) = written(48);
    let (tree_96, text_96) = written(96);
    assert!(
        tree_96 * 10 <= tree_48 * 21,
        "the compared tree grows faster than the chain: {tree_48} bytes for 48 terms, {tree_96} for 96"
    );
    assert!(
        text_96 * 10 <= text_48 * 21,
        "the formatted text grows faster than the chain: {text_48} bytes for 48 terms, {text_96} for 96"
    );
}

/// Found by `aelc-fuzz fmt` (`fuzz/regressions/fmt-288f4ff5d331bf92`): a block comment over
/// two lines inside an expression moves to the end of the statement, where the comment that
/// followed the statement now follows it on its last line; the second run took that one for a
/// leading comment of the next line.
#[test]
fn a_comment_after_a_trailing_block_comment_stays_on_its_line() {
    let source = "fn f(p: u8, q: u8) -> u8 {\n    let x = p + /* a\n    b */ q; // c\n    x\n}\n";
    let formatted = check_round_trip("after a trailing block comment", source);
    assert_eq!(
        formatted,
        "fn f(p: u8, q: u8) -> u8 {\n    let x = p + q; /* a\n    b */ // c\n    x\n}\n"
    );
    let source = include_str!("../../fuzz/regressions/fmt-288f4ff5d331bf92");
    check_round_trip("fmt-288f4ff5d331bf92", source);
}

#[test]
fn long_lines_break_at_the_outermost_structure() {
    let long = "a_rather_long_name";
    let source = format!(
        "fn f(x: T) -> T {{ Review {{ summary: {long}.{long}.trim(), findings: [{long}, {long}, {long}], ..x }} }}\n"
    );
    let formatted = check_round_trip("long", &source);
    assert_eq!(
        formatted,
        format!(
            "fn f(x: T) -> T {{\n    Review {{\n        summary: {long}.{long}.trim(),\n        findings: [{long}, {long}, {long}],\n        ..x\n    }}\n}}\n"
        )
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// `parse(fmt(tree)) == tree`, and the printed text is already formatted.
    #[test]
    fn printed_trees_parse_back(module in gen::module()) {
        let printed = print_module(&module, &[], "");
        let parsed = parse(&printed);
        prop_assert!(errors(&parsed).is_empty(), "{}\n----\n{}", errors(&parsed), printed);
        prop_assert_eq!(tree(&parsed.module), tree(&module), "{}", printed);
        let again = format(&parsed, &printed).unwrap_or_default();
        prop_assert_eq!(again, printed);
    }

    /// Comments sprinkled over a formatted text are all kept, in order, the tree does not
    /// change, and formatting the result again changes nothing.
    #[test]
    fn comments_anywhere_are_kept(
        module in gen::module(),
        marks in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3), 0..8),
    ) {
        let printed = print_module(&module, &[], "");
        let mut lines: Vec<String> = printed.lines().map(str::to_owned).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        for (n, (at, kind)) in marks.iter().enumerate() {
            let i = at.index(lines.len());
            let line = &mut lines[i];
            match kind {
                0 => line.push_str(&format!(" // c{n}")),
                1 => {
                    let indent = line.len() - line.trim_start().len();
                    line.insert_str(indent, &format!("/* c{n} */ "));
                }
                _ => {
                    let indent = line.len() - line.trim_start().len();
                    let own = format!("{}// c{n}\n", &line[..indent]);
                    line.insert_str(0, &own);
                }
            }
        }
        let commented = lines.join("\n") + "\n";
        let parsed = parse(&commented);
        // A mark inside a multi-line raw string is text, not a comment.
        prop_assume!(errors(&parsed).is_empty());
        prop_assume!(tree(&parsed.module) == tree(&module));
        let formatted = format(&parsed, &commented).unwrap_or_default();
        let reparsed = parse(&formatted);
        prop_assert!(errors(&reparsed).is_empty(), "{}\n----\n{}", errors(&reparsed), formatted);
        prop_assert_eq!(tree(&reparsed.module), tree(&module), "{}", formatted);
        prop_assert_eq!(comment_texts(&reparsed), comment_texts(&parsed), "{}", formatted);
        let again = format(&reparsed, &formatted).unwrap_or_default();
        prop_assert_eq!(again, formatted, "from:\n{}", commented);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Doc comments in odd places (`///` and `//!` on lines of their own anywhere, `///` at the
    /// end of a line, a `///` run broken by a module doc), among plain comments: formatting
    /// keeps what they document (the tree, with its docs), the plain comments and the doc
    /// comments that document nothing, and formatting again changes nothing.
    #[test]
    fn doc_comments_anywhere_keep_their_meaning(
        module in gen::module(),
        marks in prop::collection::vec((any::<prop::sample::Index>(), 0u8..6), 1..8),
    ) {
        let printed = print_module(&module, &[], "");
        let mut lines: Vec<String> = printed.lines().map(str::to_owned).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        for (n, (at, kind)) in marks.iter().enumerate() {
            let i = at.index(lines.len());
            let line = &mut lines[i];
            let indent = line[..line.len() - line.trim_start().len()].to_owned();
            match kind {
                0 => line.push_str(&format!(" // c{n}")),
                1 => line.push_str(&format!(" /// d{n}")),
                2 => line.insert_str(0, &format!("{indent}/// d{n}\n")),
                3 => line.insert_str(0, &format!("{indent}//! m{n}\n")),
                4 => line.insert_str(0, &format!("{indent}///\n{indent}//!\n\n{indent}///\n")),
                _ => line.insert_str(0, &format!("{indent}// c{n}\n{indent}/// d{n}\n")),
            }
        }
        let commented = lines.join("\n") + "\n";
        let parsed = parse(&commented);
        // A mark inside a multi-line raw string is text, not a comment.
        prop_assume!(errors(&parsed).is_empty());
        let formatted = format(&parsed, &commented).unwrap_or_default();
        let reparsed = parse(&formatted);
        prop_assert!(errors(&reparsed).is_empty(), "{}\n----\n{}", errors(&reparsed), formatted);
        prop_assert_eq!(tree(&reparsed.module), tree(&parsed.module), "from:\n{}\nto:\n{}", commented, formatted);
        prop_assert_eq!(
            comment_texts(&reparsed),
            comments_kept(&parsed, &commented),
            "from:\n{}\nto:\n{}", commented, formatted
        );
        let again = format(&reparsed, &formatted).unwrap_or_default();
        prop_assert_eq!(again, formatted, "from:\n{}", commented);
    }
}

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aelc-fmt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_default();
    dir
}

fn aelc(args: &[&str], dir: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_aelc"))
        .args(args)
        .current_dir(dir)
        .output();
    match output {
        Ok(output) => (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        ),
        Err(err) => panic!("cannot run aelc: {err}"),
    }
}

#[test]
fn the_command_checks_rewrites_and_refuses() {
    let dir = scratch("cli");
    let messy = "struct A{x:u8,// the x\n}\n";
    let clean = "struct A {\n    x: u8, // the x\n}\n";
    let broken = "struct B { x: }\n";
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap_or_default();
    write("messy.ael", messy);
    write("clean.ael", clean);
    std::fs::create_dir_all(dir.join("target")).unwrap_or_default();
    std::fs::write(dir.join("target/skipped.ael"), messy).unwrap_or_default();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();

    let (code, stdout) = aelc(&["fmt", "--check"], &dir);
    assert_eq!(code, 1, "--check on a messy file");
    assert!(
        stdout.contains("messy.ael") && !stdout.contains("clean.ael"),
        "{stdout}"
    );
    assert_eq!(read("messy.ael"), messy, "--check writes nothing");

    let (code, _) = aelc(&["fmt"], &dir);
    assert_eq!(code, 0);
    assert_eq!(read("messy.ael"), clean);
    assert_eq!(read("target/skipped.ael"), messy, "target/ is skipped");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(
        leftovers.len(),
        3,
        "no temporary file is left: {leftovers:?}"
    );

    let (code, _) = aelc(&["fmt", "--check", "messy.ael"], &dir);
    assert_eq!(code, 0, "formatted now");

    write("broken.ael", broken);
    let (code, _) = aelc(&["fmt", "broken.ael"], &dir);
    assert_eq!(code, 1, "syntax errors");
    assert_eq!(
        read("broken.ael"),
        broken,
        "a broken file is left untouched"
    );

    let (code, _) = aelc(&["fmt", "missing.ael"], &dir);
    assert_eq!(code, 2, "an unreadable path is an I/O error");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found by `aelc-fuzz fmt` (`fuzz/regressions/fmt-5ee95c3b687628e5`): a doc comment ending in
/// spaces was a doc ending in spaces, which the formatter dropped, so the formatted text
/// parsed to another tree. Trailing blanks are no part of a doc.
#[test]
fn trailing_blanks_of_doc_comments_are_not_part_of_the_doc() {
    let source =
        "//! Limits a caller may choose \t\n\n/// A bound.  \r\ntype MaxFindings = u8<1..=50>;\n";
    check_round_trip("trailing blanks", source);
}
