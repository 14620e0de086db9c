//! The publishing rules of a checked project (spec §9.2), for every caller: `aelc check`,
//! `aelc build` and the language server run [`check_publishing`], so an editor shows what
//! `aelc build` (and so CI) refuses.
//!
//! Codegen keeps the rules ([`crate::codegen::publish::check`]); this module conducts them: it
//! reads each agent's example files through the [`World`], hands them to the rules with the
//! emitted schemas, and turns each finding's [`Place`] into a span. A declaration is found in
//! the parsed modules by module path and name; a value of an example file by walking its JSON
//! Pointer with the runtime's own JSON reader, so an `E0805`/`E0806` names the example file at
//! the line and column of the offending value. Only the example files with a finding join the
//! compilation's sources.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use aelc_runtime::json::{Kind, Reader};

use super::{module_path, Compilation, ParsedFile, World};
use crate::codegen::json_schema::{node_schemas, NodeSchemas};
use crate::codegen::publish::{self, Example, ExampleAt, Finding, Place};
use crate::diagnostics;
use crate::ir::{NodeKind, Program};
use crate::span::{FileId, Span};

/// What the publishing rules were run over, for `aelc build` to emit from without reading or
/// computing them again.
#[derive(Clone, Debug, Default)]
pub struct Publishing {
    /// Every agent's examples, as read.
    pub examples: Vec<Example>,
    /// `program.nodes[i]`'s input and output schemas at `i`.
    pub schemas: Vec<NodeSchemas>,
}

/// Runs the publishing rules over the program of `compilation` (the project at `root`), when it
/// checked clean: its findings join `compilation.diagnostics` (sorted), each at its place. A
/// compilation with errors has no program and gets nothing. `Err` only when an example file or
/// folder cannot be read.
pub fn check_publishing(
    world: &dyn World,
    root: &Path,
    compilation: &mut Compilation,
) -> Result<Publishing, String> {
    let Some(program) = compilation.program.as_ref() else {
        return Ok(Publishing::default());
    };
    let examples = load_examples(world, root, program)?;
    let schemas = node_schemas(program);
    let findings = publish::check(program, &schemas, &examples);
    place_findings(root, compilation, &examples, findings);
    Ok(Publishing { examples, schemas })
}

/// [`check_publishing`] for a caller that emits nothing (`aelc check`): the same diagnostics,
/// but no node's schemas are kept beyond its own rules
/// ([`publish::check_one_node_at_a_time`]), so a large project's peak memory holds one
/// node's documents rather than all of them.
pub fn check_publishing_rules(
    world: &dyn World,
    root: &Path,
    compilation: &mut Compilation,
) -> Result<(), String> {
    let Some(program) = compilation.program.as_ref() else {
        return Ok(());
    };
    let examples = load_examples(world, root, program)?;
    let findings = publish::check_one_node_at_a_time(program, &examples);
    place_findings(root, compilation, &examples, findings);
    Ok(())
}

/// Adds the publishing rules' findings to `compilation.diagnostics` (sorted), each at its
/// place; the example files with a finding join its sources.
fn place_findings(
    root: &Path,
    compilation: &mut Compilation,
    examples: &[Example],
    findings: Vec<Finding>,
) {
    let mut example_files: Vec<Option<FileId>> = vec![None; examples.len()];
    let mut modules: Option<ModuleFiles> = None;
    for Finding { diagnostic, place } in findings {
        let span = match place {
            Place::Item { module, name } => modules
                .get_or_insert_with(|| ModuleFiles::new(&compilation.files, root))
                .item_span(&compilation.files, &module, &name),
            Place::Example { index, at } => examples.get(index).map(|example| {
                let file = *example_files[index]
                    .get_or_insert_with(|| compilation.sources.add(&example.path, &example.text));
                Span::new(file, example_range(&example.text, &at))
            }),
        };
        compilation.diagnostics.push(match span {
            Some(span) => diagnostic.primary(span, ""),
            None => diagnostic,
        });
    }
    diagnostics::sort(&mut compilation.diagnostics);
}

/// The emission's diagnostics (`aelc build`'s writing step), each made from the IR without a
/// span, pointed at the declaration it is about when the emission names one.
pub fn placed_emission_diagnostics(
    files: &[ParsedFile],
    root: &Path,
    emission: &crate::codegen::emit::Emission,
) -> Vec<crate::diagnostics::Diagnostic> {
    let mut modules: Option<ModuleFiles> = None;
    emission
        .diagnostics
        .iter()
        .enumerate()
        .map(|(at, diagnostic)| {
            let span = match emission.places.get(&at) {
                Some(Place::Item { module, name }) => modules
                    .get_or_insert_with(|| ModuleFiles::new(files, root))
                    .item_span(files, module, name),
                _ => None,
            };
            match span {
                Some(span) if diagnostic.primary_span().is_none() => {
                    diagnostic.clone().primary(span, "")
                }
                _ => diagnostic.clone(),
            }
        })
        .collect()
}

/// The parsed files of each module path, so that placing a finding costs a look-up rather
/// than the module path of every file: with a finding per node, a project of 4,000 modules
/// spent more on naming files than on its publishing rules.
struct ModuleFiles {
    by_path: HashMap<String, Vec<usize>>,
}

impl ModuleFiles {
    fn new(files: &[ParsedFile], root: &Path) -> ModuleFiles {
        let mut by_path: HashMap<String, Vec<usize>> = HashMap::new();
        for (at, file) in files.iter().enumerate() {
            by_path
                .entry(module_path(root, &file.path))
                .or_default()
                .push(at);
        }
        ModuleFiles { by_path }
    }

    /// The name of the declaration `name` in module `module`, if a parsed file declares it
    /// (the first such, in file order).
    fn item_span(&self, files: &[ParsedFile], module: &str, name: &str) -> Option<Span> {
        self.by_path
            .get(module)?
            .iter()
            .filter_map(|&at| files.get(at))
            .flat_map(|file| &file.module.items)
            .filter_map(|item| item.kind.name())
            .find(|ident| ident.name == name)
            .map(|ident| ident.span)
    }
}

/// The byte range of a place in an example's text; the first character when the place cannot
/// be found (the rules only name places of a document that parsed).
fn example_range(text: &str, at: &ExampleAt) -> Range<usize> {
    let found = match at {
        ExampleAt::Value(pointer) => locate(text, pointer, false),
        ExampleAt::Key(pointer) => locate(text, pointer, true),
        ExampleAt::LineColumn(line, column) => Some(line_column_offset(text, *line, *column)),
    };
    found.unwrap_or_else(|| 0..text.chars().next().map_or(0, char::len_utf8))
}

/// The offset of a 1-based line and column (bytes, as `serde_json` counts), as an empty range;
/// clamped to the text and to a character boundary.
fn line_column_offset(text: &str, line: usize, column: usize) -> Range<usize> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut offset = (line_start + column.saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset..offset
}

/// The range of the value at `pointer` (RFC 6901) in the JSON `text`, or of its member's name
/// when `key`. A key written twice is found where it was written last, the occurrence a
/// parsed document keeps.
fn locate(text: &str, pointer: &str, key: bool) -> Option<Range<usize>> {
    let tokens: Vec<String> = match pointer {
        "" => Vec::new(),
        p => p
            .strip_prefix('/')?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    };
    let mut r = Reader::new(text.as_bytes());
    let mut name = None;
    for token in &tokens {
        match r.kind().ok()? {
            Kind::Object => {
                let mut found = None;
                if !r.begin_object().ok()? {
                    loop {
                        r.skip_ws();
                        let start = r.pos;
                        let (member, _) = r.string().ok()?;
                        let end = r.pos;
                        r.expect(b':', "`:`").ok()?;
                        r.skip_ws();
                        if member == token.as_str() {
                            found = Some((start..end, r.pos));
                        }
                        r.skip_value().ok()?;
                        if !r.comma_or(b'}').ok()? {
                            break;
                        }
                    }
                }
                let (member, value) = found?;
                name = Some(member);
                r.pos = value;
            }
            Kind::Array => {
                let index: usize = token.parse().ok()?;
                if r.begin_array().ok()? {
                    return None;
                }
                for _ in 0..index {
                    r.skip_value().ok()?;
                    if !r.comma_or(b']').ok()? {
                        return None;
                    }
                }
                name = None;
            }
            _ => return None,
        }
    }
    if key {
        return name;
    }
    r.skip_ws();
    let start = r.pos;
    r.skip_value().ok()?;
    Some(start..r.pos)
}

/// Reads every agent's examples: the files matching its `publish { examples: "…" }` glob, or
/// `examples/<agent>/*.json` without one. The glob is a folder and a file name with `*`.
pub fn load_examples(
    world: &dyn World,
    root: &Path,
    program: &Program,
) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    for agent in program.nodes.iter().filter(|n| n.kind == NodeKind::Agent) {
        let glob = agent
            .publish
            .as_ref()
            .and_then(|p| p.examples.clone())
            .unwrap_or_else(|| format!("examples/{}/*.json", agent.name));
        let (folder, pattern) = glob.rsplit_once('/').unwrap_or(("", glob.as_str()));
        let dir = root.join(folder);
        if !world.is_dir(&dir) {
            continue;
        }
        let matcher = file_name_matcher(pattern)
            .map_err(|err| format!("`examples: \"{glob}\"` of `{}`: {err}", agent.name))?;
        let entries = world
            .read_dir(&dir)
            .map_err(|err| format!("cannot read {}: {err}", dir.display()))?;
        for path in entries {
            let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if !world.is_file(&path) || !matcher.is_match(file) {
                continue;
            }
            let bytes = world
                .read(&path)
                .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
            let name = file.strip_suffix(".json").unwrap_or(file).to_owned();
            out.push(Example {
                agent: agent.name.clone(),
                path: if folder.is_empty() {
                    file.to_owned()
                } else {
                    format!("{folder}/{file}")
                },
                text: String::from_utf8_lossy(&bytes).into_owned(),
                name,
            });
        }
    }
    Ok(out)
}

/// The matcher of a file-name pattern: `*` matches any run of characters, and every other
/// character matches itself (`?`, `[`, `{` and `\` too, which globset would read as syntax).
/// globset compiles it to a regex, so a match takes time linear in the name.
fn file_name_matcher(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    let literal: Vec<String> = pattern.split('*').map(globset::escape).collect();
    let mut glob = literal.join("*");
    // `**` is one `*` here; to globset it is a recursive wildcard, allowed only between `/`.
    while glob.contains("**") {
        glob = glob.replace("**", "*");
    }
    Ok(globset::GlobBuilder::new(&glob)
        .literal_separator(true)
        .backslash_escape(false)
        .build()?
        .compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostic;
    use crate::driver::{check_project, MemoryWorld};

    /// A diagnostic's primary place, for tests: the file name and the 1-based line and column.
    fn place_of(compilation: &Compilation, d: &Diagnostic) -> Option<(String, u32, u32)> {
        let span = d.primary_span()?;
        let file = compilation.sources.get(span.file)?;
        let at = file.lines().line_col(&file.text, span.start);
        Some((file.name.clone(), at.line, at.column))
    }

    fn glob_match(pattern: &str, name: &str) -> bool {
        file_name_matcher(pattern).is_ok_and(|m| m.is_match(name))
    }

    /// Only `*` is special: what globset reads as syntax matches itself, as it always did.
    #[test]
    fn other_characters_match_themselves() {
        for literal in ["a?.json", "[ab].json", "{a,b}.json", "a\\b.json", "!x.json"] {
            assert!(glob_match(literal, literal), "{literal}");
        }
        assert!(!glob_match("a?.json", "ab.json"));
        assert!(!glob_match("[ab].json", "a.json"));
        assert!(!glob_match("{a,b}.json", "a.json"));
        assert!(glob_match("[*].json", "[x].json"));
    }

    /// Issue 25, finding D: the backtracking matcher took over 40 s on this pattern and a
    /// 60-letter name; a regex answers at once (no timing here: the test would not end).
    #[test]
    fn many_stars_do_not_backtrack() {
        let pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*ab*.json";
        let name = format!("{}.json", "a".repeat(60));
        assert!(!glob_match(pattern, &name));
        assert!(glob_match(pattern, &format!("{}b.json", "a".repeat(60))));
    }

    #[test]
    fn globs() {
        assert!(glob_match("*.json", "clean.json"));
        assert!(!glob_match("*.json", "clean.yaml"));
        assert!(glob_match("a*b*c", "aXbYc"));
        assert!(!glob_match("a*b", "ab c"));
    }

    #[test]
    fn pointers_find_values_and_names() {
        let text = "{\"a\": [1, {\"b~/c\": \"x\"}], \"a\": [7,\n  {\"b~/c\": 42}]}";
        let value = |p: &str| locate(text, p, false).map(|r| &text[r]);
        // The second `a` is the one a parsed document keeps.
        assert_eq!(value("/a/0"), Some("7"));
        assert_eq!(value("/a/1/b~0~1c"), Some("42"));
        assert_eq!(value(""), Some(text));
        assert_eq!(value("/a/2"), None);
        assert_eq!(value("/nope"), None);
        assert_eq!(value("/a/x"), None);
        assert_eq!(locate(text, "/a", true).map(|r| &text[r]), Some("\"a\""));
        // Not JSON: no place, never a panic.
        assert_eq!(locate("{\"a\": [1,", "/a/1", false), None);
    }

    #[test]
    fn line_columns_clamp_to_the_text() {
        assert_eq!(line_column_offset("ab\ncd", 2, 2), 4..4);
        assert_eq!(line_column_offset("ab", 9, 9), 2..2);
        assert_eq!(line_column_offset("é", 1, 2), 0..0);
    }

    const TOML: &str = "[package]\nname = \"acme/demo\"\nversion = \"0.1.0\"\n\n[bindings.main]\nprovider = \"replay\"\nmodel = \"recorded\"\n";
    const AGENT: &str = "struct Question { text: Str<20> }\nstruct Answer { text: Str<3> }\n\nagent answer(q: Question) -> Answer {\n    config {\n        prompt: file(\"prompts/answer.md\");\n        model: binding(\"main\");\n    }\n}\n";

    fn project(example: &str) -> MemoryWorld {
        MemoryWorld::new()
            .with("/p/ael.toml", TOML)
            .with("/p/nodes/answer.node.ael", AGENT)
            .with("/p/prompts/answer.md", "Answer: {{ q.text }}\n")
            .with("/p/examples/answer/long.json", example)
    }

    #[test]
    fn a_wrong_example_output_points_at_the_value_in_its_file() {
        let example = "{\"input\": {\"text\": \"hi\"},\n \"answers\": [\"{}\"],\n \"output\": {\"text\": \"four\"}}\n";
        let world = project(example);
        let mut compilation = check_project(&world, Path::new("/p")).unwrap();
        assert!(!compilation.has_errors(), "{:#?}", compilation.diagnostics);
        let publishing = check_publishing(&world, Path::new("/p"), &mut compilation).unwrap();
        assert_eq!(publishing.examples.len(), 1);
        let e0806: Vec<&Diagnostic> = compilation
            .diagnostics
            .iter()
            .filter(|d| d.code == "E0806")
            .collect();
        assert_eq!(e0806.len(), 1, "{:#?}", compilation.diagnostics);
        assert_eq!(
            place_of(&compilation, e0806[0]),
            Some(("examples/answer/long.json".to_owned(), 3, 21))
        );
    }

    #[test]
    fn an_example_that_is_not_json_points_where_it_stops() {
        let world = project("{\"input\": {\"text\": \"hi\"},\n \"output\": }\n");
        let mut compilation = check_project(&world, Path::new("/p")).unwrap();
        check_publishing(&world, Path::new("/p"), &mut compilation).unwrap();
        let e0807 = compilation.diagnostics.iter().find(|d| d.code == "E0807");
        let place = e0807.and_then(|d| place_of(&compilation, d));
        assert_eq!(place, Some(("examples/answer/long.json".to_owned(), 2, 12)));
    }
}
