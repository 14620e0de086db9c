//! Diagnostics: the one shape every phase reports its findings in.
//!
//! Each phase keeps its own typed error enum (`syntax/error.rs`, `sema/error.rs`, …) and converts
//! it into a [`Diagnostic`] in one place. Text for people is made only by [`render`]; the code
//! registry ([`codes`]) feeds `aelc explain` and the book. Codes are never reused: a code no
//! longer emitted stays listed in [`codes::RETIRED`].

pub mod codes;
pub mod render;
pub mod suggest;

use std::borrow::Cow;

use aelc_runtime::error::{excerpt, MAX_MESSAGE};

use crate::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A labelled place in the source. The first label of a diagnostic is its primary one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// An edit that fixes a diagnostic: `replacement` instead of the text at `span`. The language
/// server offers it as a quick fix (a code action); the command line shows the same fix in the
/// diagnostic's help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub span: Span,
    pub replacement: String,
}

/// One finding: a stable code, what is wrong, where, and how to fix it when a fix is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// A code from the registry in [`codes`], e.g. `"E0101"`.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    /// Extra context lines, rendered as `= note: …`.
    pub notes: Vec<String>,
    /// A concrete fix, rendered as `= help: …`.
    pub help: Option<String>,
    /// The fix as an edit, when the help names one that can be applied as it is.
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    /// An error with code `code`; the severity follows the code's first letter (`E`/`W`).
    pub fn new(code: &'static str, message: impl Into<String>) -> Diagnostic {
        let severity = if code.starts_with('W') {
            Severity::Warning
        } else {
            Severity::Error
        };
        Diagnostic {
            code,
            severity,
            message: bounded(message.into()),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
            fixes: Vec::new(),
        }
    }

    /// Adds the primary label: what is wrong at exactly this place.
    pub fn primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: bounded(message.into()),
            primary: true,
        });
        self
    }

    /// Adds a secondary label: a related place.
    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: bounded(message.into()),
            primary: false,
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(bounded(note.into()));
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(bounded(help.into()));
        self
    }

    /// "did you mean `suggestion`?": the help, and the edit that writes `suggestion` at `span`
    /// (the misspelt word, exactly).
    pub fn did_you_mean(self, span: Span, suggestion: &str) -> Diagnostic {
        self.help(format!("did you mean `{suggestion}`?"))
            .fix(span, suggestion)
    }

    /// Adds an edit that fixes the diagnostic (see [`Fix`]).
    pub fn fix(mut self, span: Span, replacement: impl Into<String>) -> Diagnostic {
        self.fixes.push(Fix {
            span,
            replacement: replacement.into(),
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary span, if the diagnostic has a location.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
    }
}

/// A message, label, note or help as kept: cut to [`MAX_MESSAGE`] bytes with an ellipsis and
/// its length ([`excerpt`]), so that a diagnostic quoting a huge name or value (a 100 KB key in
/// `ael.toml`) stays a few lines in every format: the terminal, JSON and the language server.
fn bounded(text: String) -> String {
    match excerpt(&text, MAX_MESSAGE) {
        Cow::Borrowed(_) => text,
        Cow::Owned(cut) => cut,
    }
}

/// Sorts diagnostics by file, then position, then code, so output order is deterministic.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| {
        let span = d.primary_span().unwrap_or_default();
        (span.file, span.start, span.end, d.code)
    });
}
