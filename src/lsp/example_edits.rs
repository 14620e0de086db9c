//! What a rename changes in the example files of agents (`examples/<agent>/*.json`, spec §10):
//! the keys of `input` and `output` objects that are the renamed field, found by walking each
//! file's JSON alongside the agent's declared types, never by replacing text.
//!
//! The input of a one-parameter agent is that parameter's value; of several, an object keyed by
//! parameter name (as the emitted input schema says). Types are followed through sema's
//! resolution (structs, enum variants' fields, `List`/`Set`/`Option` elements); a value of a
//! type with no fields (a `Map`, a built-in) is not entered. `answers` are model
//! answers in the model's format and are left alone. Renaming a parameter of an agent with
//! several inputs renames that key of each example's `input`. The example files are the ones
//! `aelc test` reads ([`load_examples`]: an agent's `publish { examples: "…" }` glob, else
//! `examples/<agent>/*.json`), found through the last program that checked without errors.

use std::path::{Path, PathBuf};

use lsp_types::TextEdit;

use crate::driver::publish::load_examples;
use crate::driver::DiskWorld;
use crate::lsp::analysis::Analysis;
use crate::lsp::convert::{Encoding, Lines};
use crate::sema::resolution::{Resolution, Symbol};
use crate::sema::ItemRef;
use crate::source::LineIndex;
use crate::span::Span;
use crate::syntax::ast::{ItemKind, NodeKind, TypeArg, TypeExpr, TypeKind};

/// The edits renaming the field `symbol` to `new_name` in every example file of the project,
/// or the parameter `symbol` of an agent with several inputs (its examples' `input` is keyed by
/// parameter name).
pub fn field_edits(
    analysis: &Analysis,
    encoding: Encoding,
    symbol: &Symbol,
    new_name: &str,
) -> Vec<(PathBuf, Vec<TextEdit>)> {
    if let Symbol::Local(declared) = symbol {
        return parameter_edits(analysis, encoding, *declared, new_name);
    }
    let Symbol::Field { owner, name } = symbol else {
        return Vec::new();
    };
    let resolution = &analysis.resolution;
    let mut out = Vec::new();
    for parsed in &analysis.compilation.files {
        for item in &parsed.module.items {
            let ItemKind::Node(node) = &item.kind else {
                continue;
            };
            if node.kind != NodeKind::Agent {
                continue;
            }
            let input: Vec<(String, Option<u32>)> = node
                .params
                .iter()
                .map(|p| (p.name.name.to_string(), def_of(resolution, &p.ty)))
                .collect();
            let output = def_of(resolution, &node.ret);
            for path in example_files(analysis, &node.name.name) {
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let Some(document) = json::parse(&text) else {
                    continue; // `aelc build` names a malformed example
                };
                let mut spans = Vec::new();
                let target = Target {
                    resolution,
                    owner: *owner,
                    name: name.as_ref(),
                };
                for (key, _, value) in document.members() {
                    match key {
                        "input" => match input.as_slice() {
                            [(_, ty)] => target.walk(value, *ty, &mut spans),
                            params => {
                                for (param, _, value) in value.members() {
                                    let ty = params.iter().find(|(p, _)| p == param);
                                    target.walk(value, ty.and_then(|(_, ty)| *ty), &mut spans);
                                }
                            }
                        },
                        "output" => target.walk(value, output, &mut spans),
                        _ => {}
                    }
                }
                if let Some(edits) = text_edits(&text, spans, encoding, new_name) {
                    out.push((path, edits));
                }
            }
        }
    }
    out
}

/// The edits renaming the parameter declared at `declared` in its agent's examples: the keys
/// of their `input` object, when the agent has several parameters (with one, `input` is the
/// parameter's value and holds no name). A `let` or closure parameter has none.
fn parameter_edits(
    analysis: &Analysis,
    encoding: Encoding,
    declared: Span,
    new_name: &str,
) -> Vec<(PathBuf, Vec<TextEdit>)> {
    let agent = analysis
        .compilation
        .files
        .iter()
        .filter(|parsed| parsed.file == declared.file)
        .flat_map(|parsed| &parsed.module.items)
        .find_map(|item| match &item.kind {
            ItemKind::Node(node)
                if node.kind == NodeKind::Agent
                    && node.params.iter().any(|p| p.name.span == declared) =>
            {
                Some(node)
            }
            _ => None,
        });
    let Some(agent) = agent.filter(|a| a.params.len() > 1) else {
        return Vec::new();
    };
    let Some(name) = analysis
        .compilation
        .sources
        .get(declared.file)
        .and_then(|f| f.text.get(declared.range()))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for path in example_files(analysis, &agent.name.name) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(document) = json::parse(&text) else {
            continue;
        };
        let spans: Vec<Span> = document
            .members()
            .filter(|(key, _, _)| *key == "input")
            .flat_map(|(_, _, input)| input.members())
            .filter(|(key, _, _)| *key == name)
            .map(|(_, span, _)| span)
            .collect();
        if let Some(edits) = text_edits(&text, spans, encoding, new_name) {
            out.push((path, edits));
        }
    }
    out
}

/// `new_name` over each of `spans` of `text`; `None` when there are none.
fn text_edits(
    text: &str,
    spans: Vec<Span>,
    encoding: Encoding,
    new_name: &str,
) -> Option<Vec<TextEdit>> {
    if spans.is_empty() {
        return None;
    }
    let index = LineIndex::new(text);
    let lines = Lines::new(text, &index, encoding);
    Some(
        spans
            .into_iter()
            .map(|span| TextEdit {
                range: lines.range(span),
                new_text: new_name.to_owned(),
            })
            .collect(),
    )
}

/// The struct or enum (a `DefId`) a value of the declared type `ty` holds fields of, seen
/// through `Option`, `List` and `Set`: what sema resolved the type's name to.
fn def_of(resolution: &Resolution, ty: &TypeExpr) -> Option<u32> {
    let TypeKind::Named { path, args } = &ty.kind else {
        return None;
    };
    let last = path.last()?;
    if matches!(last.name.as_str(), "Option" | "List" | "Set") {
        return args.iter().find_map(|a| match a {
            TypeArg::Type(t) => def_of(resolution, t),
            _ => None,
        });
    }
    match resolution.at(last.span.file, last.span.start)?.symbol {
        Symbol::Item(ItemRef::Type(def)) => Some(def),
        _ => None,
    }
}

/// The renamed field and where to look it up.
struct Target<'a> {
    resolution: &'a Resolution,
    owner: u32,
    name: &'a str,
}

impl Target<'_> {
    /// Collects the spans of keys naming the field in `value`, a value of the struct or enum
    /// `ty`.
    fn walk(&self, value: &json::Value, ty: Option<u32>, out: &mut Vec<Span>) {
        let Some(ty) = ty else {
            return;
        };
        match value {
            json::Value::Array(items) => {
                for item in items {
                    self.walk(item, Some(ty), out);
                }
            }
            json::Value::Object(members) => {
                for (key, span, value) in members {
                    let Some(field) = self.resolution.fields_of(ty).find(|f| f.name == *key) else {
                        continue;
                    };
                    if key == self.name && self.owner == ty {
                        out.push(*span);
                    }
                    self.walk(value, field.ty.as_ref().and_then(|t| t.def), out);
                }
            }
            json::Value::Other => {}
        }
    }
}

/// The example files of `agent`: those `aelc test` reads, as the last error-free program
/// declares them (its `publish { examples }` glob); without a program, the default folder.
fn example_files(analysis: &Analysis, agent: &str) -> Vec<PathBuf> {
    let Some(program) = analysis.program.as_deref() else {
        return json_files(&analysis.dir.join("examples").join(agent));
    };
    let mut files: Vec<PathBuf> = load_examples(&DiskWorld, &analysis.dir, program)
        .unwrap_or_default()
        .into_iter()
        .filter(|example| example.agent == agent)
        .map(|example| analysis.dir.join(example.path))
        .collect();
    files.sort();
    files
}

/// The `.json` files of `folder`, sorted; none when it does not exist.
fn json_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort();
    files
}

/// A JSON reader that keeps the byte span of every object key (serde_json keeps none).
mod json {
    use crate::span::{FileId, Span};

    pub enum Value {
        /// Members in written order: key (undecoded, as written between the quotes), the span
        /// of the key without its quotes, and the value.
        Object(Vec<(String, Span, Value)>),
        Array(Vec<Value>),
        Other,
    }

    impl Value {
        pub fn members(&self) -> impl Iterator<Item = (&str, Span, &Value)> {
            let members = match self {
                Value::Object(m) => m.as_slice(),
                _ => &[],
            };
            members.iter().map(|(k, s, v)| (k.as_str(), *s, v))
        }
    }

    /// The deepest nesting read; deeper documents are not walked (the compiler bounds examples).
    const MAX_DEPTH: usize = 256;

    pub fn parse(text: &str) -> Option<Value> {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            at: 0,
        };
        let value = reader.value(0)?;
        reader.space();
        (reader.at == reader.bytes.len()).then_some(value)
    }

    struct Reader<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Reader<'_> {
        fn space(&mut self) {
            while self.bytes.get(self.at).is_some_and(u8::is_ascii_whitespace) {
                self.at += 1;
            }
        }

        fn eat(&mut self, byte: u8) -> bool {
            self.space();
            let found = self.bytes.get(self.at) == Some(&byte);
            self.at += usize::from(found);
            found
        }

        /// A string after its opening quote: the span of its content.
        fn string(&mut self) -> Option<(usize, usize)> {
            let start = self.at;
            loop {
                match self.bytes.get(self.at)? {
                    b'"' => {
                        self.at += 1;
                        return Some((start, self.at - 1));
                    }
                    b'\\' => self.at += 2,
                    _ => self.at += 1,
                }
            }
        }

        fn value(&mut self, depth: usize) -> Option<Value> {
            if depth > MAX_DEPTH {
                return None;
            }
            self.space();
            match *self.bytes.get(self.at)? {
                b'{' => {
                    self.at += 1;
                    let mut members = Vec::new();
                    if self.eat(b'}') {
                        return Some(Value::Object(members));
                    }
                    loop {
                        if !self.eat(b'"') {
                            return None;
                        }
                        let (start, end) = self.string()?;
                        let key = String::from_utf8_lossy(&self.bytes[start..end]).into_owned();
                        if !self.eat(b':') {
                            return None;
                        }
                        let value = self.value(depth + 1)?;
                        let span = Span::new(FileId(0), start..end);
                        members.push((key, span, value));
                        if self.eat(b'}') {
                            return Some(Value::Object(members));
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                b'[' => {
                    self.at += 1;
                    let mut items = Vec::new();
                    if self.eat(b']') {
                        return Some(Value::Array(items));
                    }
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b']') {
                            return Some(Value::Array(items));
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                b'"' => {
                    self.at += 1;
                    self.string()?;
                    Some(Value::Other)
                }
                _ => {
                    let start = self.at;
                    while self.bytes.get(self.at).is_some_and(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
                    }) {
                        self.at += 1;
                    }
                    (self.at > start).then_some(Value::Other)
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn keys_keep_their_spans_and_malformed_text_is_refused() {
            let text = r#"{"a": [{"b\"": 1}], "c": {"d": "x"}}"#;
            let value = super::parse(text).unwrap();
            let keys: Vec<(&str, &str)> = value
                .members()
                .map(|(k, s, _)| (k, &text[s.range()]))
                .collect();
            assert_eq!(keys, [("a", "a"), ("c", "c")]);
            for bad in ["{", "{\"a\" 1}", "[1,]", "{\"a\": 1} x", "\"open"] {
                assert!(super::parse(bad).is_none(), "{bad}");
            }
        }
    }
}
