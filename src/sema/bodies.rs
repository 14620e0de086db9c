//! The fn and check bodies of one module, as sema checks them. A parse that deferred them
//! ([`crate::syntax::parse_lean`], `aelc check`) left only their spans; they are parsed
//! here, all of a module's at once (on the other cores, a bounded number of modules ahead of
//! the one sema checks), and dropped when sema moves on, so that a project's bodies are never
//! all in memory.
//! A body that does not parse cleanly means the module must be parsed whole: it is named in [`Cx::reparse`], and the driver
//! parses it again without deferring and checks the project again, which reports what any
//! parse of it reports.

use crate::span::{FileId, Span};
use crate::syntax::ast::{self, Body, DeferredKind};
use crate::syntax::ParsedBody;

use super::Cx;

/// The deferred bodies of one module, parsed, by the start of their span.
pub(crate) struct ModuleBodies {
    parsed: Vec<(u32, ParsedBody)>,
}

/// The deferred bodies of one module: where they are and whose each is, with the module's text,
/// lent out of the source map while they are parsed ([`Deferred::lend_all`]).
pub(crate) struct Deferred {
    pub module: usize,
    pub file: FileId,
    pub spans: Vec<(Span, DeferredKind)>,
    pub text: String,
}

impl Deferred {
    /// Every module's deferred bodies, in module order (modules parsed whole have none), each
    /// with its module's text lent out of `cx.sources` ([`crate::source::SourceMap::lend`]): the
    /// bodies are parsed on other threads while sema holds `cx` whole, and nothing sema checks
    /// meanwhile reads those texts. [`Deferred::give_back_all`] returns them.
    pub(crate) fn lend_all(cx: &mut Cx<'_, '_>) -> Vec<Deferred> {
        let mut all = Vec::new();
        for (module, source) in cx.input.modules.iter().enumerate() {
            let spans = source.ast.deferred_bodies();
            if !spans.is_empty() {
                all.push(Deferred {
                    module,
                    file: source.file,
                    spans,
                    text: cx.sources.lend(source.file),
                });
            }
        }
        all
    }

    /// Puts every lent text back into `cx.sources`.
    pub(crate) fn give_back_all(cx: &mut Cx<'_, '_>, all: Vec<Deferred>) {
        for deferred in all {
            cx.sources.give_back(deferred.file, deferred.text);
        }
    }

    /// Parses them: `None` when one does not parse cleanly.
    pub(crate) fn parse(&self) -> Option<Vec<ParsedBody>> {
        crate::syntax::parse_deferred(self.file, &self.text, &self.spans)
    }
}

impl ModuleBodies {
    /// A module parsed whole: every body is in its tree.
    pub(crate) fn none() -> ModuleBodies {
        ModuleBodies { parsed: Vec::new() }
    }

    /// The bodies `deferred` parsed to (`None`: one did not parse, and the module is named
    /// in [`Cx::reparse`]).
    pub(crate) fn new(
        cx: &mut Cx<'_, '_>,
        deferred: &Deferred,
        parsed: Option<Vec<ParsedBody>>,
    ) -> ModuleBodies {
        match parsed {
            Some(parsed) => ModuleBodies {
                parsed: deferred
                    .spans
                    .iter()
                    .map(|(span, _)| span.start)
                    .zip(parsed)
                    .collect(),
            },
            None => {
                cx.reparse.push(deferred.file);
                ModuleBodies::none()
            }
        }
    }

    /// A fn's body: `None` for a deferred one that did not parse.
    pub(crate) fn fn_body<'b>(&'b self, body: &'b Body<Box<ast::Expr>>) -> Option<&'b ast::Expr> {
        match body {
            Body::Parsed(expr) => Some(expr),
            Body::Deferred(span) => match self.find(span.start)? {
                ParsedBody::Fn(expr) => Some(expr),
                ParsedBody::Check(_) => None,
            },
        }
    }

    /// A check's requirements: `None` for a deferred body that did not parse.
    pub(crate) fn check_body<'b>(
        &'b self,
        body: &'b Body<Vec<ast::Require>>,
    ) -> Option<&'b [ast::Require]> {
        match body {
            Body::Parsed(requires) => Some(requires),
            Body::Deferred(span) => match self.find(span.start)? {
                ParsedBody::Check(requires) => Some(requires),
                ParsedBody::Fn(_) => None,
            },
        }
    }

    /// The body whose span starts at `start` (the list is in source order).
    fn find(&self, start: u32) -> Option<&ParsedBody> {
        let at = self.parsed.binary_search_by_key(&start, |(s, _)| *s).ok()?;
        self.parsed.get(at).map(|(_, body)| body)
    }
}
