//! Printing expressions and patterns.
//!
//! Expressions print on one line when they fit; otherwise the outermost structure breaks first
//! (argument lists, struct literals, lists, `if` branches, operator chains). `match` arms always
//! go one per line. Parentheses are printed exactly where the tree has a `Paren` node.

use crate::syntax::ast::{
    BinaryOp, Expr, ExprKind, FieldInit, FieldPattern, MatchArm, Pattern, PatternKind, UnaryOp,
};

use super::doc::{concat, Doc};
use super::item::{ident, path};
use super::literal::literal;
use super::printer::{author_blank, Located, Place, Printer};

/// A member of a struct literal: a field, then the optional `..base`.
enum StructMember<'t> {
    Field(&'t FieldInit),
    Base(&'t Expr),
}

impl Located for StructMember<'_> {
    fn place(&self) -> Place {
        match self {
            StructMember::Field(field) => field.place(),
            StructMember::Base(base) => base.place(),
        }
    }
}

impl Printer<'_> {
    pub fn expr(&mut self, expr: &Expr) -> Doc {
        let end = expr.span.end;
        match &expr.kind {
            ExprKind::Lit(lit) => literal(lit).into(),
            ExprKind::None => "none".into(),
            ExprKind::Some(inner) => concat!["some(", self.expr(inner), ")"],
            ExprKind::Path(p) => path(p),
            ExprKind::Field { base, name } => concat![self.expr(base), ".", ident(name)],
            ExprKind::MethodCall { method, operands } => {
                match ExprKind::method_operands(operands) {
                    Some((receiver, args)) => {
                        let receiver = self.expr(receiver);
                        concat![receiver, ".", ident(method), self.args(args, end)]
                    }
                    None => "".into(),
                }
            }
            ExprKind::Call { callee, args } => concat![path(callee), self.args(args, end)],
            ExprKind::StructLit {
                path: name,
                fields,
                base,
            } => {
                let mut members: Vec<StructMember> =
                    fields.iter().map(StructMember::Field).collect();
                members.extend(base.as_deref().map(StructMember::Base));
                let seq = self.inline(&members, end, ",", |p, member| match member {
                    StructMember::Field(field) => p.field_init(field),
                    StructMember::Base(base) => concat!["..", p.expr(base)],
                });
                if seq.empty {
                    return concat![path(name), " {}"];
                }
                // No comma may follow `..base`.
                let doc = if base.is_some() {
                    strip_last_if_break(seq.doc)
                } else {
                    seq.doc
                };
                Doc::group(concat![
                    path(name),
                    " {",
                    Doc::nest(concat![Doc::Line, doc]),
                    Doc::Line,
                    "}"
                ])
            }
            ExprKind::List(items) => self.delimited("[", "]", false, items, end, |p, e| p.expr(e)),
            ExprKind::Paren(inner) => concat!["(", self.expr(inner), ")"],
            ExprKind::Block { stmts, value } => {
                if stmts.is_empty() && !self.comments.any_before(end) {
                    let value = self.expr(value);
                    Doc::group(concat![
                        "{",
                        Doc::nest(concat![Doc::Line, value]),
                        Doc::Line,
                        "}"
                    ])
                } else {
                    self.block_lines(stmts, value, end)
                }
            }
            ExprKind::If { .. } => self.if_chain(expr),
            ExprKind::Match { scrutinee, arms } => {
                let scrutinee = self.expr(scrutinee);
                let arms = self.vertical(arms, end, ",", author_blank, |p, arm| p.arm(arm));
                concat!["match ", scrutinee, " ", Printer::braced(arms)]
            }
            ExprKind::Unary { op, operand } => {
                let op = match op {
                    UnaryOp::Not => "!",
                    UnaryOp::Neg => "-",
                };
                concat![op, self.expr(operand)]
            }
            ExprKind::Binary { .. } => self.binary_chain(expr),
            ExprKind::Closure { params, body } => {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                // `||` is the "or" operator to the lexer: no parameters print as `| |`.
                let head = if names.is_empty() {
                    "| | ".to_owned()
                } else {
                    format!("|{}| ", names.join(", "))
                };
                concat![head, self.expr(body)]
            }
            ExprKind::Error => "".into(),
        }
    }

    /// `(a, b)` after a callee or a method. A lone argument that brings its own braces (a
    /// struct literal, list, `match` or block, or a closure returning one) hugs the
    /// parentheses.
    fn args(&mut self, args: &[Expr], end: u32) -> Doc {
        if let [only] = args {
            if hugs(only) && !self.comments.any_before(only.span.start) {
                let doc = self.expr(only);
                if !self.comments.any_before(end) {
                    return concat!["(", doc, ")"];
                }
                let trailing = self.comments.take_before(end);
                return concat![
                    "(",
                    doc,
                    super::comments::Comments::trailing(&trailing),
                    Doc::BreakParent,
                    Doc::SoftLine,
                    ")"
                ];
            }
        }
        self.delimited("(", ")", false, args, end, |p, e| p.expr(e))
    }

    fn field_init(&mut self, field: &FieldInit) -> Doc {
        match &field.value {
            None => ident(&field.name),
            Some(value) => concat![ident(&field.name), ": ", self.expr(value)],
        }
    }

    /// `if a { x } else if b { y } else { z }`: one group, so every branch breaks together.
    fn if_chain(&mut self, expr: &Expr) -> Doc {
        let mut docs = Vec::new();
        let mut current = expr;
        loop {
            let ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } = &current.kind
            else {
                docs.push(self.branch(current));
                break;
            };
            docs.push("if ".into());
            docs.push(self.expr(cond));
            docs.push(" ".into());
            docs.push(self.branch(then_branch));
            docs.push(" else ".into());
            current = else_branch;
            if !matches!(current.kind, ExprKind::If { .. }) {
                docs.push(self.branch(current));
                break;
            }
        }
        Doc::group(Doc::Concat(docs))
    }

    /// A branch of an `if`, in braces; its line breaks belong to the `if`'s group.
    fn branch(&mut self, branch: &Expr) -> Doc {
        match &branch.kind {
            ExprKind::Block { stmts, value } if !stmts.is_empty() => {
                self.block_lines(stmts, value, branch.span.end)
            }
            ExprKind::Block { value, .. } => {
                let seq = self.inline(
                    std::slice::from_ref(&**value),
                    branch.span.end,
                    "",
                    |p, e| p.expr(e),
                );
                concat!["{", Doc::nest(concat![Doc::Line, seq.doc]), Doc::Line, "}"]
            }
            _ => {
                let value = self.expr(branch);
                concat!["{", Doc::nest(concat![Doc::Line, value]), Doc::Line, "}"]
            }
        }
    }

    /// `a && b && c`: a chain of one precedence level, broken before each operator.
    fn binary_chain(&mut self, expr: &Expr) -> Doc {
        let mut operands: Vec<(&BinaryOp, &Expr)> = Vec::new();
        let mut first = expr;
        while let ExprKind::Binary { op, lhs, rhs } = &first.kind {
            let same_level = operands
                .last()
                .is_none_or(|(last, _)| last.precedence() == op.precedence());
            if !same_level {
                break;
            }
            operands.push((op, rhs));
            first = lhs;
        }
        operands.reverse();
        let mut rest = Vec::new();
        let head = self.expr(first);
        for (op, operand) in operands {
            rest.push(Doc::Line);
            rest.push(format!("{} ", op.symbol()).into());
            rest.push(self.expr(operand));
        }
        Doc::group(concat![head, Doc::nest(Doc::Concat(rest))])
    }

    fn arm(&mut self, arm: &MatchArm) -> Doc {
        concat![self.pattern(&arm.pattern), " => ", self.expr(&arm.body)]
    }

    pub fn pattern(&mut self, pattern: &Pattern) -> Doc {
        match &pattern.kind {
            PatternKind::Wildcard => "_".into(),
            PatternKind::None => "none".into(),
            PatternKind::Some(inner) => concat!["some(", self.pattern(inner), ")"],
            PatternKind::Name(name) => ident(name),
            PatternKind::Variant { name, fields, rest } => {
                let mut members: Vec<Doc> = fields.iter().map(|f| self.field_pattern(f)).collect();
                if *rest {
                    members.push("..".into());
                }
                if members.is_empty() {
                    return concat![ident(name), " {}"];
                }
                let mut inner = Vec::new();
                for (i, member) in members.into_iter().enumerate() {
                    if i > 0 {
                        inner.push(",".into());
                    }
                    inner.push(Doc::Line);
                    inner.push(member);
                }
                if !*rest {
                    inner.push(Doc::if_break(",".into()));
                }
                Doc::group(concat![
                    ident(name),
                    " {",
                    Doc::nest(Doc::Concat(inner)),
                    Doc::Line,
                    "}"
                ])
            }
            PatternKind::Lit(lit) => literal(lit).into(),
            PatternKind::Or(alternatives) => {
                let mut docs = Vec::new();
                for (i, alternative) in alternatives.iter().enumerate() {
                    if i > 0 {
                        docs.push(" | ".into());
                    }
                    docs.push(self.pattern(alternative));
                }
                Doc::Concat(docs)
            }
        }
    }

    fn field_pattern(&mut self, field: &FieldPattern) -> Doc {
        match &field.pattern {
            None => ident(&field.name),
            Some(pattern) => concat![ident(&field.name), ": ", self.pattern(pattern)],
        }
    }
}

fn hugs(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::StructLit { .. }
        | ExprKind::List(_)
        | ExprKind::Match { .. }
        | ExprKind::Block { .. } => true,
        ExprKind::Closure { body, .. } => hugs(body),
        _ => false,
    }
}

/// Drops the `IfBreak` that an inline sequence puts after its last element.
fn strip_last_if_break(doc: Doc) -> Doc {
    match doc {
        Doc::Concat(mut docs) => {
            if let Some(at) = docs.iter().rposition(|d| matches!(d, Doc::IfBreak(_))) {
                docs.remove(at);
            }
            Doc::Concat(docs)
        }
        other => other,
    }
}
