//! Rendering diagnostics: for people (codespan-reporting) and for CI (JSON Lines).
//!
//! This is the only place that turns a [`Diagnostic`] into text, and the only module that knows
//! codespan-reporting.

use std::ops::Range;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use serde::Serialize;

use super::{Diagnostic, Severity};
use crate::source::SourceMap;
use crate::span::FileId;

/// Whether the terminal renderer may use colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    Always,
    Never,
}

/// Renders diagnostics the way `rustc` does: a header, the source with labels, notes and help.
pub fn human(sources: &SourceMap, diagnostics: &[Diagnostic], color: Color) -> String {
    let config = term::Config::default();
    let files = Adapter(sources);
    let mut out = Vec::new();
    for diagnostic in diagnostics {
        let converted = to_codespan(diagnostic);
        let result = match color {
            Color::Always => {
                let mut writer = term::termcolor::Ansi::new(&mut out);
                term::emit_to_write_style(&mut writer, &config, &files, &converted)
            }
            Color::Never => term::emit_to_io_write(&mut out, &config, &files, &converted),
        };
        if result.is_err() {
            // A label outside its file is a compiler bug; still show the message.
            out.extend_from_slice(
                format!(
                    "{}[{}]: {}\n",
                    diagnostic.severity.as_str(),
                    diagnostic.code,
                    diagnostic.message
                )
                .as_bytes(),
            );
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A one-line summary such as `error: 3 errors and 1 warning emitted`, or `None` when clean.
pub fn summary(diagnostics: &[Diagnostic]) -> Option<String> {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => None,
        (0, w) => Some(format!("warning: {} emitted", plural(w, "warning"))),
        (e, 0) => Some(format!("error: {} emitted", plural(e, "error"))),
        (e, w) => Some(format!(
            "error: {} and {} emitted",
            plural(e, "error"),
            plural(w, "warning")
        )),
    }
}

/// Most diagnostics the terminal shows at once; the rest are counted by [`not_shown`]. A
/// project with hundreds of errors is usually one mistake repeated: the first screens say what
/// it is, and the summary still counts every diagnostic. JSON output is never capped.
pub const MAX_SHOWN: usize = 200;

/// The line standing for the diagnostics left out of the terminal output, such as
/// `... and 512 more diagnostics not shown (510 errors, 2 warnings)`, or `None` when none were.
pub fn not_shown(hidden: &[Diagnostic]) -> Option<String> {
    if hidden.is_empty() {
        return None;
    }
    let errors = hidden.iter().filter(|d| d.is_error()).count();
    let warnings = hidden.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    Some(format!(
        "... and {} more {} not shown ({}, {}); `--message-format json` lists them all",
        hidden.len(),
        if hidden.len() == 1 {
            "diagnostic"
        } else {
            "diagnostics"
        },
        plural(errors, "error"),
        plural(warnings, "warning"),
    ))
}

/// The JSON shape of one diagnostic (`--message-format json`, spec §11). A stable output type:
/// fields are only ever added.
#[derive(Serialize, Debug, PartialEq)]
pub struct JsonDiagnostic {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub code: &'static str,
    pub severity: &'static str,
    pub message: String,
    pub labels: Vec<JsonLabel>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct JsonLabel {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub primary: bool,
    pub message: String,
}

pub fn to_json(sources: &SourceMap, diagnostic: &Diagnostic) -> JsonDiagnostic {
    let labels: Vec<JsonLabel> = diagnostic
        .labels
        .iter()
        .filter_map(|label| {
            let file = sources.get(label.span.file)?;
            let start = file.lines.line_col(&file.text, label.span.start);
            let end = file.lines.line_col(&file.text, label.span.end);
            Some(JsonLabel {
                file: file.name.clone(),
                line: start.line,
                column: start.column,
                end_line: end.line,
                end_column: end.column,
                primary: label.primary,
                message: label.message.clone(),
            })
        })
        .collect();
    let primary = labels.iter().find(|l| l.primary).or(labels.first());
    JsonDiagnostic {
        file: primary.map(|l| l.file.clone()),
        line: primary.map(|l| l.line),
        column: primary.map(|l| l.column),
        end_line: primary.map(|l| l.end_line),
        end_column: primary.map(|l| l.end_column),
        code: diagnostic.code,
        severity: diagnostic.severity.as_str(),
        message: diagnostic.message.clone(),
        notes: diagnostic.notes.clone(),
        help: diagnostic.help.clone(),
        labels,
    }
}

/// JSON Lines: one object per diagnostic, each on its own line.
pub fn json_lines(sources: &SourceMap, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        let value = to_json(sources, diagnostic);
        // Serializing plain strings and numbers cannot fail.
        out.push_str(&serde_json::to_string(&value).unwrap_or_default());
        out.push('\n');
    }
    out
}

fn to_codespan(diagnostic: &Diagnostic) -> cs::Diagnostic<FileId> {
    let severity = match diagnostic.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let labels = diagnostic
        .labels
        .iter()
        .map(|label| {
            let style = if label.primary {
                cs::LabelStyle::Primary
            } else {
                cs::LabelStyle::Secondary
            };
            cs::Label::new(style, label.span.file, label.span.range())
                .with_message(label.message.clone())
        })
        .collect();
    let mut notes = diagnostic.notes.clone();
    if let Some(help) = &diagnostic.help {
        notes.push(format!("help: {help}"));
    }
    cs::Diagnostic::new(severity)
        .with_code(diagnostic.code)
        .with_message(diagnostic.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// Lets codespan-reporting read our [`SourceMap`] without copying it.
struct Adapter<'a>(&'a SourceMap);

impl<'a> Files<'a> for Adapter<'a> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.0
            .get(id)
            .map(|f| f.name.as_str())
            .ok_or(FilesError::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.0
            .get(id)
            .map(|f| f.text.as_str())
            .ok_or(FilesError::FileMissing)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        Ok(file.lines.line_of(byte_index as u32))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        let start = file
            .lines
            .line_start(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: file.lines.line_count().saturating_sub(1),
            })? as usize;
        let end = file
            .lines
            .line_start(line_index + 1)
            .map_or(file.text.len(), |e| e as usize);
        Ok(start..end)
    }
}
