//! Printing types and attributes.

use crate::syntax::ast::{Attribute, Bound, RangeArg, TypeArg, TypeExpr, TypeKind};

use super::doc::{concat, Doc};
use super::item::{ident, path};
use super::literal::literal;
use super::printer::Printer;

impl Printer<'_> {
    /// `Str<16> @pattern(r"…")`: the type, then its attributes after one space each. Type
    /// arguments never break: types are short.
    pub fn ty(&mut self, ty: &TypeExpr) -> Doc {
        let mut docs = Vec::new();
        match &ty.kind {
            TypeKind::Named { path: name, args } => {
                docs.push(path(name));
                if !args.is_empty() {
                    docs.push("<".into());
                    for (i, arg) in args.iter().enumerate() {
                        if i > 0 {
                            docs.push(", ".into());
                        }
                        docs.push(match arg {
                            TypeArg::Type(inner) => self.ty(inner),
                            TypeArg::Bound(bound) => bound_text(bound).into(),
                            TypeArg::Range(range) => range_text(range).into(),
                        });
                    }
                    docs.push(">".into());
                }
            }
            TypeKind::Error { .. } => {}
        }
        for attr in &ty.attrs {
            docs.push(" ".into());
            docs.push(self.attribute(attr));
        }
        Doc::Concat(docs)
    }

    /// `@name` or `@name(args)`.
    pub fn attribute(&mut self, attr: &Attribute) -> Doc {
        if attr.args.is_empty() {
            return concat!["@", ident(&attr.name)];
        }
        let args = self.delimited("(", ")", false, &attr.args, attr.span.end, |p, e| p.expr(e));
        concat!["@", ident(&attr.name), args]
    }
}

fn bound_text(bound: &Bound) -> String {
    let sign = if bound.negative { "-" } else { "" };
    format!("{sign}{}", literal(&bound.lit))
}

fn range_text(range: &RangeArg) -> String {
    let start = range.start.as_ref().map(bound_text).unwrap_or_default();
    let end = range.end.as_ref().map(bound_text).unwrap_or_default();
    let op = if range.inclusive { "..=" } else { ".." };
    format!("{start}{op}{end}")
}
