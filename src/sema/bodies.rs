//! The fn and check bodies of one module, as sema checks them. A parse that deferred them
//! ([`crate::syntax::parse_lean`], `aelc check`) left only their spans; they are parsed
//! here, all of a module's at once (the modules of a batch side by side) before sema checks
//! them, and dropped when sema moves on, so that a project's bodies are never all in memory.
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

/// The deferred bodies of one module: where they are and whose each is.
pub(crate) struct Deferred {
    pub module: usize,
    pub file: FileId,
    pub spans: Vec<(Span, DeferredKind)>,
}

impl Deferred {
    /// Every module's deferred bodies, in module order; modules parsed whole have none.
    pub(crate) fn all(cx: &Cx<'_, '_>) -> Vec<Deferred> {
        let mut all = Vec::new();
        for (module, source) in cx.input.modules.iter().enumerate() {
            let spans = source.ast.deferred_bodies();
            if !spans.is_empty() {
                all.push(Deferred {
                    module,
                    file: source.file,
                    spans,
                });
            }
        }
        all
    }

    /// Parses them out of their module's `text`: `None` when one does not parse cleanly.
    pub(crate) fn parse(&self, text: &str) -> Option<Vec<ParsedBody>> {
        crate::syntax::parse_deferred(self.file, text, &self.spans)
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
