//! `textDocument/semanticTokens/full`: colours from the lexer's tokens, refined by sema's resolution.
//!
//! Keywords, literals, comments and operators come straight from the lexer
//! ([`crate::syntax::lex`]); an identifier is coloured by what sema resolved it to (a
//! type, a function, a field, a variant, a parameter), else by its spelling (built-in type
//! names, capitalised names as types, a name before `(` as a function). Tokens that span lines
//! (block comments, multi-line strings) are cut at line ends, since not every client accepts
//! multi-line tokens.

use std::collections::HashMap;

use lsp_types::{
    SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensLegend, SemanticTokensParams,
    SemanticTokensResult,
};

use crate::lsp::convert::{Cursor, Encoding, Lines};
use crate::lsp::server::{HandlerError, HandlerResult, Server};
use crate::lsp::uri;
use crate::sema::builtin_types;
use crate::sema::resolution::{Symbol, SymbolKind};
use crate::sema::ItemRef;
use crate::source::LineIndex;
use crate::span::Span;
use crate::syntax::{self, token::Token};

/// The token types, in legend order.
const TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::DECORATOR,
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Keyword = 0,
    Type = 1,
    Function = 2,
    Variable = 3,
    Parameter = 4,
    Property = 5,
    EnumMember = 6,
    String = 7,
    Number = 8,
    Comment = 9,
    Operator = 10,
    Decorator = 11,
}

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: Vec::new(),
    }
}

pub fn handle(
    server: &mut Server,
    params: SemanticTokensParams,
) -> HandlerResult<Option<SemanticTokensResult>> {
    let path = uri::to_path(&params.text_document.uri)
        .ok_or_else(|| HandlerError::invalid_params("only file:// documents are analysed"))?;
    let encoding = server.encoding;
    let analysis = server.analysis(&path);
    let Some(file) = analysis.file_id(&path) else {
        return Ok(None);
    };
    let Some(source) = analysis.compilation.sources.get(file) else {
        return Ok(None);
    };
    let resolution = &analysis.resolution;
    let mut known: HashMap<u32, Kind> = HashMap::new();
    let first = resolution
        .occurrences
        .partition_point(|o| o.span.file < file);
    let in_file = resolution.occurrences.get(first..).unwrap_or(&[]);
    for occurrence in in_file.iter().take_while(|o| o.span.file == file) {
        let kind = match &occurrence.symbol {
            Symbol::Item(ItemRef::Type(_) | ItemRef::Errors(_) | ItemRef::Stream(_)) => Kind::Type,
            Symbol::Item(_) => Kind::Function,
            Symbol::Field { .. } => Kind::Property,
            Symbol::Variant { .. } | Symbol::ErrorCode { .. } => Kind::EnumMember,
            Symbol::Local(_) => match resolution.definition(&occurrence.symbol).map(|d| d.kind) {
                Some(SymbolKind::Param) => Kind::Parameter,
                _ => Kind::Variable,
            },
            Symbol::Binding(_) | Symbol::File(_) => continue,
        };
        known.insert(occurrence.span.start, kind);
    }
    let data = tokens(&source.text, source.lines(), encoding, &known);
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data,
    })))
}

fn tokens(
    text: &str,
    lines: &LineIndex,
    encoding: Encoding,
    known: &HashMap<u32, Kind>,
) -> Vec<SemanticToken> {
    let (tokens, comments) = syntax::lex(crate::span::FileId(0), text);
    let mut spans: Vec<(Span, Kind)> = Vec::new();
    let mut previous: Option<Token<'_>> = None;
    for (i, (token, span)) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).map(|(t, _)| *t);
        let kind = match token {
            Token::Ident(name) => Some(if previous == Some(Token::At) {
                Kind::Decorator
            } else if let Some(kind) = known.get(&span.start) {
                *kind
            } else if builtin_types::is_builtin(name)
                || name.starts_with(|c: char| c.is_ascii_uppercase())
            {
                Kind::Type
            } else if next == Some(Token::LParen) {
                Kind::Function
            } else {
                Kind::Variable
            }),
            Token::Int(_) | Token::Float(_) | Token::Unit(_) | Token::Rate(_) => Some(Kind::Number),
            Token::Str(_) | Token::RawStr(_) => Some(Kind::String),
            Token::True | Token::False | Token::None | Token::Some => Some(Kind::Keyword),
            Token::At => Some(Kind::Decorator),
            Token::Error | Token::Comment(_) => None,
            Token::LBrace
            | Token::RBrace
            | Token::LParen
            | Token::RParen
            | Token::LBracket
            | Token::RBracket
            | Token::Comma
            | Token::Semi
            | Token::Colon
            | Token::ColonColon
            | Token::Dot => None,
            other if other.keyword_text().is_some() => Some(Kind::Keyword),
            _ => Some(Kind::Operator),
        };
        if let Some(kind) = kind {
            spans.push((*span, kind));
        }
        previous = Some(*token);
    }
    spans.extend(comments.into_iter().map(|span| (span, Kind::Comment)));
    spans.sort_by_key(|(span, _)| span.start);
    encode(text, lines, encoding, &spans)
}

/// The LSP encoding: each token relative to the previous one, one line at a time.
fn encode(
    text: &str,
    lines: &LineIndex,
    encoding: Encoding,
    spans: &[(Span, Kind)],
) -> Vec<SemanticToken> {
    let mut conv = Cursor::new(Lines::new(text, lines, encoding));
    let mut out = Vec::new();
    let (mut last_line, mut last_start) = (0u32, 0u32);
    let mut covered_to = 0u32;
    for (span, kind) in spans {
        if span.start < covered_to {
            // Overlaps are not allowed: the first token wins.
            continue;
        }
        covered_to = span.end;
        // Split at line breaks.
        let mut start = span.start;
        while start < span.end {
            let line = lines.line_of(start);
            let line_end = lines
                .line_start(line + 1)
                .map_or(span.end, |next| (next - 1).min(span.end));
            let end = line_end.max(start);
            let from = conv.position(start);
            let to = conv.position(end);
            let length = to.character.saturating_sub(from.character);
            if length > 0 {
                let delta_line = from.line - last_line;
                let delta_start = if delta_line == 0 {
                    from.character - last_start
                } else {
                    from.character
                };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length,
                    token_type: *kind as u32,
                    token_modifiers_bitset: 0,
                });
                last_line = from.line;
                last_start = from.character;
            }
            match lines.line_start(line + 1) {
                Some(next) if next > start => start = next,
                _ => break,
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_comments_are_split_and_deltas_are_relative() {
        let text = "/* a\nbc */ struct S { x: u8 }";
        let lines = LineIndex::new(text);
        let data = tokens(text, &lines, Encoding::Utf16, &HashMap::new());
        // `/* a` on line 0, `bc */` on line 1, then `struct` on line 1.
        assert_eq!(
            (data[0].delta_line, data[0].delta_start, data[0].length),
            (0, 0, 4)
        );
        assert_eq!(
            (data[1].delta_line, data[1].delta_start, data[1].length),
            (1, 0, 5)
        );
        assert_eq!(
            (data[2].delta_line, data[2].delta_start, data[2].length),
            (0, 6, 6)
        );
        assert_eq!(data[2].token_type, Kind::Keyword as u32);
    }
}
