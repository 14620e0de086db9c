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
use crate::span::{FileId, Span};

/// Whether the terminal renderer may use colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    Always,
    Never,
}

/// Renders diagnostics the way `rustc` does: a header, the source with labels, notes and help.
///
/// A diagnostic whose labels sit on a line longer than [`MAX_LINE_SHOWN`] bytes shows, for each
/// label, a window of the line around it, cut with `…` ([`Excerpts`]): one diagnostic on a
/// 300 KB line prints a few hundred bytes, not the line.
pub fn human(sources: &SourceMap, diagnostics: &[Diagnostic], color: Color) -> String {
    let config = term::Config::default();
    let files = Adapter(sources);
    let mut out = Vec::new();
    for diagnostic in diagnostics {
        let result = match Excerpts::of(sources, diagnostic) {
            None => emit(&mut out, color, &config, &files, &to_codespan(diagnostic)),
            Some(excerpts) => {
                let converted = to_codespan(&excerpts.diagnostic);
                emit(&mut out, color, &config, &excerpts, &converted)
            }
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

fn emit<'f, F: Files<'f, FileId = FileId>>(
    out: &mut Vec<u8>,
    color: Color,
    config: &term::Config,
    files: &'f F,
    diagnostic: &cs::Diagnostic<FileId>,
) -> Result<(), FilesError> {
    match color {
        Color::Always => {
            let mut writer = term::termcolor::Ansi::new(out);
            term::emit_to_write_style(&mut writer, config, files, diagnostic)
        }
        Color::Never => term::emit_to_io_write(out, config, files, diagnostic),
    }
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
            let start = file.lines().line_col(&file.text, label.span.start);
            let end = file.lines().line_col(&file.text, label.span.end);
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
        Ok(file.lines().line_of(byte_index as u32))
    }

    /// From the line index, which counts characters without walking the line from its start
    /// (codespan's default does, once per label: quadratic on a long line).
    fn column_number(
        &'a self,
        id: FileId,
        _: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        Ok(file.lines().line_col(&file.text, byte_index as u32).column as usize)
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.0.get(id).ok_or(FilesError::FileMissing)?;
        let start = file
            .lines()
            .line_start(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: file.lines().line_count().saturating_sub(1),
            })? as usize;
        let end = file
            .lines()
            .line_start(line_index + 1)
            .map_or(file.text.len(), |e| e as usize);
        Ok(start..end)
    }
}

/// The most bytes of a source line that a diagnostic shows around one label. A longer line is
/// cut to a window of this many bytes, starting [`WINDOW_BEFORE`] bytes before the label, with
/// `…` where it was cut: wide enough for any line the formatter writes (100 columns), small
/// enough that 200 diagnostics on one huge line print some 60 KB.
pub const MAX_LINE_SHOWN: usize = 120;

/// How much of a cut line a window shows before its label.
const WINDOW_BEFORE: usize = 40;

/// The source of one diagnostic whose labels touch a long line, as codespan-reporting reads it:
/// per file, one short line per window (a label, or labels close together on one line), in
/// source order, and the diagnostic with its labels moved into those lines. Line and column
/// numbers are the real ones.
struct Excerpts<'s> {
    sources: &'s SourceMap,
    files: Vec<ExcerptFile>,
    diagnostic: Diagnostic,
}

struct ExcerptFile {
    file: FileId,
    text: String,
    lines: Vec<ExcerptLine>,
}

/// One window: where it starts in the excerpt's text, and what it shows of the source.
struct ExcerptLine {
    start: usize,
    /// Bytes of `…` before the shown text (0 or 3).
    lead: usize,
    /// The source offset of the first byte shown, and the 0-based source line.
    source_start: usize,
    source_line: usize,
}

impl<'s> Excerpts<'s> {
    /// `None` when every line the diagnostic would show is short: codespan shows it as is.
    fn of(sources: &'s SourceMap, diagnostic: &Diagnostic) -> Option<Excerpts<'s>> {
        let long = |label: &super::Label| {
            let Some(file) = sources.get(label.span.file) else {
                return false;
            };
            let first = file.lines().line_of(label.span.start);
            let last = file.lines().line_of(label.span.end);
            // A label over several lines shows its first lines and its last one (codespan's
            // context): any of them may be long.
            (first..=last.min(first + 3))
                .chain(last.saturating_sub(1)..=last)
                .any(|line| line_len(file, line) > MAX_LINE_SHOWN)
        };
        if !diagnostic.labels.iter().any(long) {
            return None;
        }
        // Each label becomes one window on its first line (a label over several lines ends
        // where its window does); labels close together on a line share their window.
        let mut order: Vec<usize> = (0..diagnostic.labels.len()).collect();
        order.sort_by_key(|&i| {
            let span = diagnostic.labels[i].span;
            (span.file, span.start, span.end)
        });
        let mut files: Vec<ExcerptFile> = Vec::new();
        let mut moved = diagnostic.clone();
        // The current window: its file, line, and source range.
        let mut window: Option<(FileId, usize, usize, usize)> = None;
        for i in order {
            let span = diagnostic.labels[i].span;
            let Some(file) = sources.get(span.file) else {
                continue;
            };
            let (start, end) = (span.start as usize, span.end as usize);
            let line = file.lines().line_of(span.start);
            let line_start = file.lines().line_start(line).unwrap_or(0) as usize;
            let line_end = line_start + line_len(file, line);
            let fits = window.is_some_and(|(f, l, from, _)| {
                f == span.file && l == line && end <= from + MAX_LINE_SHOWN
            });
            if !fits {
                let (from, to) = if line_end - line_start <= MAX_LINE_SHOWN {
                    (line_start, line_end)
                } else {
                    let from = floor_char(
                        &file.text,
                        start.saturating_sub(WINDOW_BEFORE).max(line_start),
                    );
                    (
                        from,
                        floor_char(&file.text, (from + MAX_LINE_SHOWN).min(line_end)),
                    )
                };
                window = Some((span.file, line, from, to));
                let at = match files.iter().position(|e| e.file == span.file) {
                    Some(at) => at,
                    None => {
                        files.push(ExcerptFile {
                            file: span.file,
                            text: String::new(),
                            lines: Vec::new(),
                        });
                        files.len() - 1
                    }
                };
                let excerpt = &mut files[at];
                let lead = if from > line_start { "…" } else { "" };
                let tail = if to < line_end { "…" } else { "" };
                excerpt.lines.push(ExcerptLine {
                    start: excerpt.text.len(),
                    lead: lead.len(),
                    source_start: from,
                    source_line: line,
                });
                excerpt.text.push_str(lead);
                excerpt.text.push_str(file.text.get(from..to).unwrap_or(""));
                excerpt.text.push_str(tail);
                excerpt.text.push('\n');
            }
            let (Some((_, _, from, to)), Some(excerpt)) =
                (window, files.iter().find(|e| e.file == span.file))
            else {
                continue;
            };
            let Some(shown) = excerpt.lines.last() else {
                continue;
            };
            // Within the window: a label longer than it is cut where the window ends.
            let at = |offset: usize| shown.start + shown.lead + offset.clamp(from, to) - from;
            if let Some(label) = moved.labels.get_mut(i) {
                label.span = Span::new(span.file, at(start)..at(end.max(start)));
            }
        }
        Some(Excerpts {
            sources,
            files,
            diagnostic: moved,
        })
    }

    fn file(&self, id: FileId) -> Result<&ExcerptFile, FilesError> {
        self.files
            .iter()
            .find(|e| e.file == id)
            .ok_or(FilesError::FileMissing)
    }
}

impl<'a> Files<'a> for Excerpts<'_> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        self.sources
            .get(id)
            .map(|f| f.name.as_str())
            .ok_or(FilesError::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        Ok(self.file(id)?.text.as_str())
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        let lines = &self.file(id)?.lines;
        Ok(lines
            .partition_point(|l| l.start <= byte_index)
            .saturating_sub(1))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let excerpt = self.file(id)?;
        let line = excerpt
            .lines
            .get(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: excerpt.lines.len().saturating_sub(1),
            })?;
        let end = excerpt
            .lines
            .get(line_index + 1)
            .map_or(excerpt.text.len(), |next| next.start);
        Ok(line.start..end)
    }

    fn line_number(&'a self, id: FileId, line_index: usize) -> Result<usize, FilesError> {
        let excerpt = self.file(id)?;
        let line = excerpt
            .lines
            .get(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: excerpt.lines.len().saturating_sub(1),
            })?;
        Ok(line.source_line + 1)
    }

    fn column_number(
        &'a self,
        id: FileId,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        let excerpt = self.file(id)?;
        let line = excerpt
            .lines
            .get(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: excerpt.lines.len().saturating_sub(1),
            })?;
        let source = self.sources.get(id).ok_or(FilesError::FileMissing)?;
        let offset = line.source_start + byte_index.saturating_sub(line.start + line.lead);
        Ok(source.lines().line_col(&source.text, offset as u32).column as usize)
    }
}

/// The length of 0-based `line` of `file` in bytes, without its line break.
fn line_len(file: &crate::source::SourceFile, line: usize) -> usize {
    let Some(start) = file.lines().line_start(line) else {
        return 0;
    };
    let end = file
        .lines()
        .line_start(line + 1)
        .map_or(file.text.len(), |next| next as usize);
    let text = file.text.get(start as usize..end).unwrap_or("");
    text.trim_end_matches(['\n', '\r']).len()
}

/// `offset`, moved back to the start of the character it falls in.
fn floor_char(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
