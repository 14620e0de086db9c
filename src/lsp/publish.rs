//! Compiler diagnostics → `textDocument/publishDiagnostics`, one notification per file.
//!
//! Every file id of the analysis (modules, prompt templates, `ael.toml`) maps to a URI, so
//! cross-file diagnostics land in the right editor tab. A file that had diagnostics last time
//! and has none now is sent an empty list (that is how a client clears them), and so is every
//! open file of the project, so an editor always hears about the file it shows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString,
    PublishDiagnosticsParams,
};

use super::analysis::Analysis;
use super::convert::{Encoding, Lines};
use super::uri;
use crate::diagnostics::{Diagnostic, Severity};
use crate::span::Span;

/// The notifications to send for one analysis, by file path.
pub fn diagnostics(
    analysis: &Analysis,
    encoding: Encoding,
    previous: &BTreeSet<PathBuf>,
    open: &BTreeMap<PathBuf, i32>,
) -> Vec<(PathBuf, PublishDiagnosticsParams)> {
    let mut by_file: BTreeMap<PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
    for diagnostic in &analysis.compilation.diagnostics {
        let span = diagnostic.primary_span().unwrap_or_default();
        let Some(path) = analysis.path(span.file) else {
            continue;
        };
        if let Some(converted) = convert(analysis, encoding, diagnostic) {
            by_file
                .entry(path.to_path_buf())
                .or_default()
                .push(converted);
        }
    }
    for path in previous {
        by_file.entry(path.clone()).or_default();
    }
    for path in open.keys() {
        if analysis.file_id(path).is_some() {
            by_file.entry(path.clone()).or_default();
        }
    }
    by_file
        .into_iter()
        .filter_map(|(path, diagnostics)| {
            let uri = uri::from_path(&path)?;
            let version = open.get(&path).copied();
            Some((
                path,
                PublishDiagnosticsParams {
                    uri,
                    diagnostics,
                    version,
                },
            ))
        })
        .collect()
}

/// The LSP range of a span in the analysis, if its file is known.
pub fn range(analysis: &Analysis, encoding: Encoding, span: Span) -> Option<lsp_types::Range> {
    let source = analysis.compilation.sources.get(span.file)?;
    Some(Lines::new(&source.text, source.lines(), encoding).range(span))
}

pub fn location(analysis: &Analysis, encoding: Encoding, span: Span) -> Option<Location> {
    let path = analysis.path(span.file)?;
    Some(Location::new(
        uri::from_path(path)?,
        range(analysis, encoding, span)?,
    ))
}

fn convert(
    analysis: &Analysis,
    encoding: Encoding,
    d: &Diagnostic,
) -> Option<lsp_types::Diagnostic> {
    let span = d.primary_span().unwrap_or_default();
    let range = range(analysis, encoding, span)?;
    let mut message = d.message.clone();
    if let Some(label) = d.labels.iter().find(|l| l.primary && !l.message.is_empty()) {
        message.push_str(&format!("\n{}", label.message));
    }
    for note in &d.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .filter_map(|l| {
            Some(DiagnosticRelatedInformation {
                location: location(analysis, encoding, l.span)?,
                message: l.message.clone(),
            })
        })
        .collect();
    Some(lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_owned())),
        source: Some("aelc".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    })
}
