//! Typed errors of semantic analysis, and their one conversion into [`Diagnostic`]s.
//!
//! The checker reports values of the enums below, which hold spans, names and the types
//! involved (as the checker describes them, e.g. "`Str<1..=80>`"); the text for people is made
//! only in each enum's `to_diagnostic`, one file per family of codes (the registry's grouping in
//! `diagnostics/codes/sema.rs`):
//! - [`NameError`] (`names.rs`): names, modules, fields, variants and methods (`E02xx`);
//! - [`TypeError`] (`types.rs`): types, bounds, attributes and defaults (`E03xx`), with
//!   [`PatternProblem`] (`patterns.rs`): the regex constructs a `@pattern` may not use;
//! - [`ExprError`] (`exprs.rs`): expressions, calls, `match`, fns and failure codes (`E04xx`);
//! - [`NodeError`] (`nodes.rs`): nodes, their blocks and wiring, streams (`E05xx`, `W05xx`);
//! - [`TemplateError`] (`templates.rs`): prompt templates (`E07xx`).

mod exprs;
mod names;
mod nodes;
mod patterns;
mod templates;
mod types;

pub(crate) use exprs::{ExprError, NestedOption, PatternShape};
pub(crate) use names::NameError;
pub(crate) use nodes::{CombineAt, Expected, NodeError};
pub use patterns::PatternProblem;
pub(crate) use templates::{MalformedTag, TemplateError};
pub(crate) use types::TypeError;

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// One finding of semantic analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SemaError {
    Name(NameError),
    Type(TypeError),
    Expr(ExprError),
    Node(NodeError),
    Template(TemplateError),
}

impl SemaError {
    pub(crate) fn to_diagnostic(&self) -> Diagnostic {
        match self {
            SemaError::Name(e) => e.to_diagnostic(),
            SemaError::Type(e) => e.to_diagnostic(),
            SemaError::Expr(e) => e.to_diagnostic(),
            SemaError::Node(e) => e.to_diagnostic(),
            SemaError::Template(e) => e.to_diagnostic(),
        }
    }
}

impl From<SemaError> for Diagnostic {
    fn from(error: SemaError) -> Diagnostic {
        error.to_diagnostic()
    }
}

/// `From` each family into [`SemaError`] and [`Diagnostic`], so that `cx.report(…)` takes any.
macro_rules! family {
    ($($family:ident => $variant:ident),* $(,)?) => {$(
        impl From<$family> for SemaError {
            fn from(error: $family) -> SemaError {
                SemaError::$variant(error)
            }
        }
        impl From<$family> for Diagnostic {
            fn from(error: $family) -> Diagnostic {
                error.to_diagnostic()
            }
        }
    )*};
}

/// "did you mean `word`?" for the misspelt text of the string literal at `span`, with the fix
/// that keeps it a string: the text between the quotes when the literal is `plain` (written
/// `"text"`, no escapes), else the literal whole, written again as `"word"`.
fn string_fix(d: Diagnostic, span: Span, plain: bool, word: &str) -> Diagnostic {
    if plain {
        let inner = Span::new(span.file, span.start as usize + 1..span.end as usize - 1);
        d.did_you_mean(inner, word)
    } else {
        d.help(format!("did you mean `{word}`?"))
            .fix(span, format!("\"{word}\""))
    }
}

family! {
    NameError => Name,
    TypeError => Type,
    ExprError => Expr,
    NodeError => Node,
    TemplateError => Template,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::{FileId, Span};

    fn help(error: impl Into<SemaError>) -> Option<String> {
        error.into().to_diagnostic().help
    }

    /// The lists some helps give are made from the tables sema checks with; these are the
    /// words they had when each was written by hand.
    #[test]
    fn helps_that_list_a_table_read_as_written() {
        let span = Span::new(FileId(0), 0..1);
        assert_eq!(
            help(NameError::UnknownAttribute {
                span,
                name: "x".into(),
                suggestion: None
            })
            .as_deref(),
            Some(
                "refinements: @pattern, @format on Str; @types, @max_pixels, @max_duration, \
                 @sample_rate on media"
            )
        );
        assert_eq!(
            help(NodeError::UnknownPartKind {
                span,
                kind: "x".into(),
                suggestion: None
            })
            .as_deref(),
            Some("parts: system, text, image, audio, video, file")
        );
        assert_eq!(
            help(NodeError::UnknownPolicy {
                span,
                policy: "x".into(),
                suggestion: None
            })
            .as_deref(),
            Some("policies: retry(n), repair(n), fallback(binding(\"…\")), fail(code)")
        );
        assert_eq!(
            help(TypeError::UnknownFormat {
                span,
                text: "x".into(),
                suggestion: None,
                plain: true
            })
            .as_deref(),
            Some("formats: email, uri, date, date-time, uuid")
        );
    }
}
