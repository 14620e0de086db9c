//! Typed errors of reading a source file as a whole, and their one conversion into
//! [`Diagnostic`]s: what is wrong with the file before any token of it is read.

use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};

/// A source file that cannot be read as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceError {
    /// `E0001`: the file is not UTF-8; the first invalid sequence is at `span` (`offset` is
    /// its byte offset).
    NotUtf8 { span: Span, offset: usize },
    /// `E0011`: the module `file` is larger than `limit_mib` MiB and is refused whole.
    TooLarge { file: FileId, limit_mib: usize },
}

impl SourceError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            SourceError::NotUtf8 { span, offset } => Diagnostic::new(
                "E0001",
                format!("this file is not valid UTF-8 (byte offset {offset})"),
            )
            .primary(*span, "invalid UTF-8 starts here")
            .help("save the file as UTF-8"),
            SourceError::TooLarge { file, limit_mib } => Diagnostic::new(
                "E0011",
                format!("this module is larger than {limit_mib} MiB, the most the compiler reads"),
            )
            .primary(
                Span::new(*file, 0..0),
                "the file is refused whole: nothing in it is checked",
            )
            .help("split it into modules (one `.ael` file each) and `use` them"),
        }
    }
}

impl From<SourceError> for Diagnostic {
    fn from(error: SourceError) -> Diagnostic {
        error.to_diagnostic()
    }
}
