//! The editor files under `editors/` agree with the compiler: the VS Code TextMate grammar
//! highlights exactly the lexer's keywords, the server completes exactly those, and the
//! extension's manifest names the grammar and the server it ships.

use std::collections::BTreeSet;

use aelc::span::FileId;
use aelc::syntax;
use aelc::syntax::token::Token;
use serde_json::Value;

fn read(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Whether the lexer reads `word` as a keyword token.
fn is_keyword(word: &str) -> bool {
    let (tokens, _) = syntax::lex(FileId(0), word);
    matches!(tokens.as_slice(), [(token, _)] if token.keyword_text() == Some(word))
}

/// The words of every `\b(a|b|c)\b` alternation in the grammar patterns named `scopes`.
fn grammar_words(grammar: &Value, scopes: &[&str]) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut stack = vec![grammar];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                let name = map.get("name").and_then(Value::as_str).unwrap_or("");
                if scopes.contains(&name) {
                    let pattern = map["match"].as_str().expect("a match pattern");
                    let inner = pattern
                        .split_once("\\b(")
                        .and_then(|(_, rest)| rest.split_once(")\\b"))
                        .map(|(inner, _)| inner)
                        .unwrap_or_else(|| panic!("`{name}` is not a word list: {pattern}"));
                    words.extend(inner.split('|').map(str::to_owned));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    words
}

/// The lexer's keywords: every fixed alphabetic token spelled in `src/syntax/token.rs`, kept
/// when the lexer really reads it as a keyword.
fn lexer_keywords() -> BTreeSet<String> {
    let source = read("src/syntax/token.rs");
    let spelled: BTreeSet<String> = source
        .split("#[token(\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(word, _)| word.to_owned()))
        .filter(|word| word.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    let keywords: BTreeSet<String> = spelled.into_iter().filter(|w| is_keyword(w)).collect();
    assert!(keywords.len() >= 20, "too few keywords found: {keywords:?}");
    keywords
}

#[test]
fn the_textmate_grammar_highlights_exactly_the_lexers_keywords() {
    let grammar: Value =
        serde_json::from_str(&read("editors/vscode/syntaxes/ael.tmLanguage.json")).unwrap();
    let highlighted = grammar_words(
        &grammar,
        &[
            "keyword.declaration.ael",
            "keyword.control.ael",
            "constant.language.ael",
        ],
    );
    let keywords = lexer_keywords();
    let missing: Vec<&String> = keywords.difference(&highlighted).collect();
    let extra: Vec<&String> = highlighted.difference(&keywords).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "ael.tmLanguage.json is out of step with the lexer: missing {missing:?}, not keywords {extra:?}"
    );
    // Contextual block words are highlighted only before `{`, and none of them is reserved.
    for word in grammar_words(&grammar, &["keyword.other.block.ael"]) {
        assert!(
            !is_keyword(&word),
            "`{word}` is reserved: move it to the keyword lists"
        );
    }
}

#[test]
fn completion_offers_exactly_the_lexers_keywords() {
    let completed: BTreeSet<String> = Token::KEYWORDS
        .iter()
        .map(|k| k.symbol().to_owned())
        .collect();
    assert_eq!(completed, lexer_keywords());
}

#[test]
fn the_vscode_extension_wires_the_grammar_and_the_server() {
    let manifest: Value = serde_json::from_str(&read("editors/vscode/package.json")).unwrap();
    let grammar = &manifest["contributes"]["grammars"][0];
    assert_eq!(grammar["language"], "ael");
    assert_eq!(grammar["scopeName"], "source.ael");
    let path = grammar["path"].as_str().unwrap().trim_start_matches("./");
    let tm: Value = serde_json::from_str(&read(&format!("editors/vscode/{path}"))).unwrap();
    assert_eq!(tm["scopeName"], "source.ael");
    assert_eq!(
        manifest["contributes"]["languages"][0]["extensions"][0],
        ".ael"
    );
    // `main` is the esbuild bundle (made by `npm run bundle` before packaging, not kept in
    // git) of the client's source, `extension.js`, which is what is read here.
    let main = manifest["main"].as_str().unwrap().trim_start_matches("./");
    let bundle = manifest["scripts"]["bundle"].as_str().unwrap_or_default();
    assert!(
        bundle.starts_with("esbuild extension.js ")
            && bundle.contains(&format!("--outfile={main}")),
        "`npm run bundle` makes `{main}` from extension.js: {bundle}"
    );
    let client = read("editors/vscode/extension.js");
    // The setting the client reads is the one the manifest declares.
    assert!(
        client.contains(r#"getConfiguration("aelc").get("serverPath")"#),
        "the client reads `aelc.serverPath`"
    );
    assert_eq!(
        manifest["contributes"]["configuration"]["properties"]["aelc.serverPath"]["default"],
        "aelc-lsp"
    );
    assert!(client.contains("aelc-lsp"), "the client starts the server");
    // The configuration file the manifest points at is valid JSON.
    let config = manifest["contributes"]["languages"][0]["configuration"]
        .as_str()
        .unwrap()
        .trim_start_matches("./");
    let _: Value = serde_json::from_str(&read(&format!("editors/vscode/{config}"))).unwrap();
}
