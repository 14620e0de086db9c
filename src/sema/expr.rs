//! Expressions (spec §5): static types, and lowering into the runtime's executable IR
//! (`aelc_runtime::expr`), in one pass.
//!
//! Types are bidirectional but light: an expected type flows into `none`, `[]`, `some(…)` and
//! bare variant names; everything else is inferred bottom-up. Intermediate values are unbounded
//! ([`STy`]); where a constant meets a declared type its bounds are checked at compile time.

use aelc_runtime::expr::{self as rt, BinaryOp as RB, Closure, Method, Slot};
use aelc_runtime::media::{MediaFieldKind, MEDIA_FIELDS};
use aelc_runtime::ty::{DefId, DefKind, Ty};
use aelc_runtime::value::Value;

use super::error::{ExprError, NameError, NestedOption, PatternShape};
use super::methods::{self, Receiver};
use super::resolution::{Symbol, SymbolKind};
use super::sty::STy;
use super::{Cx, ItemRef};
use crate::diagnostics::suggest::did_you_mean;
use crate::span::Span;
use crate::syntax::ast::{self, BinaryOp, ExprKind, LitKind, PatternKind, UnaryOp};

struct Local {
    name: String,
    ty: STy,
    slot: u32,
    /// The name that declares it, when the resolution is recorded ([`Symbol::Local`]).
    def: Option<Span>,
}

/// Checks expressions of one fn, check, node body or template.
pub(crate) struct ExprCx<'c, 'a, 's> {
    pub cx: &'c mut Cx<'a, 's>,
    pub module: usize,
    locals: Vec<Local>,
    next_slot: u32,
    /// Pure and extern fns called, for the call graph.
    pub calls: Vec<(u32, Span)>,
    /// Nodes called (only node bodies may).
    pub node_calls: Vec<u32>,
    pub allow_node_calls: bool,
}

impl<'c, 'a, 's> ExprCx<'c, 'a, 's> {
    pub(crate) fn new(cx: &'c mut Cx<'a, 's>, module: usize) -> Self {
        ExprCx {
            cx,
            module,
            locals: Vec::new(),
            next_slot: 0,
            calls: Vec::new(),
            node_calls: Vec::new(),
            allow_node_calls: false,
        }
    }

    /// One past the highest slot used.
    pub(crate) fn locals_used(&self) -> u32 {
        self.next_slot
    }

    pub(crate) fn scope_depth(&self) -> usize {
        self.locals.len()
    }

    pub(crate) fn leave_scope(&mut self, depth: usize) {
        self.locals.truncate(depth);
    }

    pub(crate) fn bind(&mut self, name: &str, ty: STy) -> u32 {
        let slot = self.next_slot;
        self.next_slot += 1;
        self.locals.push(Local {
            name: name.to_owned(),
            ty,
            slot,
            def: None,
        });
        slot
    }

    /// [`Self::bind`] for a local declared by `name` in the source (`full` is the whole
    /// declaration), recorded in the resolution.
    pub(crate) fn bind_declared(
        &mut self,
        name: &ast::Ident,
        full: Span,
        kind: SymbolKind,
        declared: Option<&ast::TypeExpr>,
        ty: STy,
    ) -> u32 {
        let def = self.cx.define_local(name, full, kind, declared, &ty);
        let slot = self.bind(&name.name, ty);
        if let Some(local) = self.locals.last_mut() {
            local.def = def;
        }
        slot
    }

    /// Binds the parameters `params` of a signature, declared as `written`.
    pub(crate) fn bind_params(&mut self, params: &[(String, Ty)], written: &[ast::Param]) {
        for (name, ty) in params {
            let sty = STy::of(ty, &self.cx.table);
            match written.iter().find(|p| p.name.name == *name) {
                Some(p) => {
                    self.bind_declared(&p.name, p.span(), SymbolKind::Param, Some(&p.ty), sty);
                }
                None => {
                    self.bind(name, sty);
                }
            }
        }
    }

    fn table(&self) -> &aelc_runtime::ty::TypeTable {
        &self.cx.table
    }

    fn describe(&self, ty: &STy) -> String {
        ty.describe(&self.cx.table)
    }

    /// E0416: an expression whose type would be `Option<Option<T>>` (see `Value::None`).
    fn option_of_option(&mut self, span: Span, at: NestedOption) {
        self.cx.report(ExprError::OptionOfOption { span, at });
    }

    fn mismatch(&mut self, span: Span, expected: &STy, found: &STy) {
        if expected.is_error() || found.is_error() {
            return;
        }
        let (expected, found) = (self.describe(expected), self.describe(found));
        self.cx.report(ExprError::Mismatch {
            span,
            expected,
            found,
        });
    }

    /// Checks `e` where a value of the declared type `ty` is wanted; a constant is checked
    /// against the bounds too (spec §5: say so when a bound is provably violated).
    pub(crate) fn expr_against(&mut self, e: &ast::Expr, ty: &Ty) -> rt::Expr {
        let expected = STy::of(ty, self.table());
        let (found, lowered) = self.expr(e, Some(&expected));
        if !found.fits(&expected) {
            self.mismatch(value_span(e), &expected, &found);
        } else if let Some(json) = super::consts::literal_constant(e) {
            let bytes = serde_json::to_vec(&json).unwrap_or_default();
            if let Err(errors) =
                aelc_runtime::decode::decode(&bytes, ty, &self.cx.table, "value", usize::MAX)
            {
                let why = errors
                    .first()
                    .map_or_else(String::new, |e| e.message.clone());
                self.cx.report(ExprError::NeverFits { span: e.span, why });
            }
        }
        lowered
    }

    /// The type of `e` and its lowering.
    pub(crate) fn expr(&mut self, e: &ast::Expr, expected: Option<&STy>) -> (STy, rt::Expr) {
        let err = (STy::Error, rt::Expr::None);
        match &e.kind {
            ExprKind::Error => err,
            ExprKind::Lit(lit) => self.literal(lit),
            ExprKind::None => {
                let ty = match expected {
                    Some(STy::Option(inner)) => STy::Option(inner.clone()),
                    _ => STy::Option(Box::new(STy::Unknown)),
                };
                (ty, rt::Expr::None)
            }
            ExprKind::Some(inner) => {
                let want = match expected {
                    Some(STy::Option(t)) => Some(t.as_ref().clone()),
                    _ => None,
                };
                let (t, x) = self.expr(inner, want.as_ref());
                if matches!(t, STy::Option(_)) {
                    self.option_of_option(inner.span, NestedOption::Some);
                    return err;
                }
                if let Some(w) = &want {
                    if !t.fits(w) {
                        self.mismatch(inner.span, w, &t);
                    }
                }
                (
                    STy::Option(Box::new(t)),
                    rt::Expr::Some { value: Box::new(x) },
                )
            }
            ExprKind::Paren(inner) => self.expr(inner, expected),
            ExprKind::Path(path) => self.path(path, expected),
            ExprKind::Field { base, name } => self.field(base, name),
            ExprKind::MethodCall { method, operands } => {
                match ExprKind::method_operands(operands) {
                    Some((receiver, args)) => self.method(receiver, method, args, e.span),
                    None => err,
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::StructLit { path, fields, base } => {
                self.struct_lit(path, fields, base.as_deref(), e.span)
            }
            ExprKind::List(items) => {
                let mut item_ty = match expected {
                    Some(STy::List { item, .. }) => item.as_ref().clone(),
                    _ => STy::Unknown,
                };
                let mut lowered = Vec::new();
                for item in items {
                    let want = (!matches!(item_ty, STy::Unknown)).then(|| item_ty.clone());
                    let (t, x) = self.expr(item, want.as_ref());
                    if let Some(w) = &want {
                        if !t.fits(w) {
                            self.mismatch(item.span, w, &t);
                        }
                    } else {
                        item_ty = t;
                    }
                    lowered.push(x);
                }
                (
                    STy::List {
                        item: Box::new(item_ty),
                        unique: false,
                    },
                    rt::Expr::List { items: lowered },
                )
            }
            ExprKind::Block { stmts, value } => self.block(stmts, value, expected),
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.bool_expr(cond);
                let (t1, x1) = self.expr(then_branch, expected);
                let want = if matches!(t1, STy::Unknown | STy::Error) {
                    expected.cloned()
                } else {
                    Some(t1.clone())
                };
                let (t2, x2) = self.expr(else_branch, want.as_ref());
                let ty = self.join(&t1, &t2, value_span(else_branch));
                (
                    ty,
                    rt::Expr::If {
                        cond: Box::new(c),
                        then: Box::new(x1),
                        otherwise: Box::new(x2),
                    },
                )
            }
            ExprKind::Match { scrutinee, arms } => {
                self.match_expr(scrutinee, arms, expected, e.span)
            }
            ExprKind::Unary { op, operand } => {
                let (t, x) = self.expr(operand, None);
                let (ok, rop) = match op {
                    UnaryOp::Not => (matches!(t, STy::Bool | STy::Error), rt::UnaryOp::Not),
                    UnaryOp::Neg => (
                        matches!(t, STy::Int | STy::Float | STy::Error),
                        rt::UnaryOp::Neg,
                    ),
                };
                if !ok {
                    let found = self.describe(&t);
                    self.cx.report(ExprError::Operand {
                        span: operand.span,
                        not: *op == UnaryOp::Not,
                        found,
                    });
                    return err;
                }
                (
                    t,
                    rt::Expr::Unary {
                        op: rop,
                        operand: Box::new(x),
                    },
                )
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs),
            ExprKind::Closure { .. } => {
                self.cx.report(ExprError::ClosureHere { span: e.span });
                err
            }
        }
    }

    fn bool_expr(&mut self, e: &ast::Expr) -> rt::Expr {
        let (t, x) = self.expr(e, Some(&STy::Bool));
        if !t.fits(&STy::Bool) {
            self.mismatch(e.span, &STy::Bool, &t);
        }
        x
    }

    fn join(&mut self, a: &STy, b: &STy, span: Span) -> STy {
        if matches!(a, STy::Error) || matches!(b, STy::Unknown) {
            return a.clone();
        }
        if matches!(b, STy::Error) || matches!(a, STy::Unknown) {
            return b.clone();
        }
        if b.fits(a) {
            return a.clone();
        }
        if a.fits(b) {
            return b.clone();
        }
        self.mismatch(span, a, b);
        STy::Error
    }

    fn literal(&mut self, lit: &ast::Literal) -> (STy, rt::Expr) {
        let c = |v| rt::Expr::Const { value: v };
        match &lit.kind {
            LitKind::Bool(b) => (STy::Bool, c(Value::Bool(*b))),
            LitKind::Int(v) => (STy::Int, c(Value::Int(*v as i128))),
            LitKind::Float { text } => (STy::Float, c(Value::Float(ast::float_value(text)))),
            LitKind::Str { value, .. } => (STy::Str, c(Value::Str((**value).into()))),
            _ => {
                self.cx.report(ExprError::UnitLiteral { span: lit.span });
                (STy::Error, rt::Expr::None)
            }
        }
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.iter().rev().find(|l| l.name == name)
    }

    fn path(&mut self, path: &ast::Path, expected: Option<&STy>) -> (STy, rt::Expr) {
        let err = (STy::Error, rt::Expr::None);
        if let [single] = &path.segments[..] {
            if let Some(l) = self.local(&single.name) {
                let (ty, slot, def) = (l.ty.clone(), l.slot, l.def);
                if let Some(def) = def {
                    self.cx.refer(single.span, || Symbol::Local(def));
                    self.cx.typed(single.span, &ty);
                }
                return (ty, rt::Expr::Local { slot: Slot(slot) });
            }
            if let Some(STy::Def(def)) = expected {
                if let Some(v) = self.unit_variant(*def, &single.name) {
                    self.cx
                        .refer(single.span, || variant_symbol(*def, &single.name));
                    return (STy::Def(*def), v);
                }
            }
        }
        // `Enum::variant`.
        if path.segments.len() >= 2 {
            let mut segments = path.segments.to_vec();
            let variant = segments.pop();
            let prefix = ast::Path::new(segments);
            if let (Some(variant), Some(ItemRef::Type(def))) =
                (variant, self.cx.lookup(self.module, &prefix))
            {
                let def = self.resolve_alias(DefId(def));
                if let Some(v) = self.unit_variant(def, &variant.name) {
                    self.cx
                        .refer(variant.span, || variant_symbol(def, &variant.name));
                    return (STy::Def(def), v);
                }
                let variants = self.variant_names(def);
                let suggestion = did_you_mean(&variant.name, variants.iter().map(String::as_str))
                    .map(str::to_owned);
                self.cx.report(NameError::NoUnitVariant {
                    span: variant.span,
                    prefix: prefix.to_text(),
                    variant: variant.name.to_string(),
                    variants,
                    suggestion,
                });
                return err;
            }
        }
        match self.cx.lookup(self.module, path) {
            Some(r @ (ItemRef::Fn(_) | ItemRef::Node(_) | ItemRef::Check(_))) => {
                self.cx.report(ExprError::NotAValue {
                    span: path.span(),
                    path: path.to_text(),
                    noun: r.noun(),
                    callable: true,
                });
                err
            }
            Some(r) => {
                self.cx.report(ExprError::NotAValue {
                    span: path.span(),
                    path: path.to_text(),
                    noun: r.noun(),
                    callable: false,
                });
                err
            }
            None => {
                let name = path.to_text();
                // A name whose `use` failed was reported at the `use`.
                let imported = self.cx.modules.get(self.module);
                if imported.is_some_and(|m| m.unresolved.contains(&name)) {
                    return err;
                }
                let mut candidates: Vec<String> =
                    self.locals.iter().map(|l| l.name.clone()).collect();
                if let Some(STy::Def(def)) = expected {
                    candidates.extend(self.variant_names(*def));
                }
                let suggestion =
                    did_you_mean(&name, candidates.iter().map(String::as_str)).map(str::to_owned);
                self.cx.report(NameError::UnknownName {
                    span: path.span(),
                    name,
                    suggestion,
                });
                err
            }
        }
    }

    fn resolve_alias(&self, def: DefId) -> DefId {
        match self.table().resolve(&Ty::Ref { def }) {
            Some(Ty::Ref { def }) => *def,
            _ => def,
        }
    }

    fn variant_names(&self, def: DefId) -> Vec<String> {
        match self.table().get(def).map(|d| &d.kind) {
            Some(DefKind::Enum { variants, .. }) => {
                variants.iter().map(|v| v.name.clone()).collect()
            }
            _ => Vec::new(),
        }
    }

    fn unit_variant(&self, def: DefId, name: &str) -> Option<rt::Expr> {
        let Some(DefKind::Enum { variants, .. }) = self.table().get(def).map(|d| &d.kind) else {
            return None;
        };
        let index = variants
            .iter()
            .position(|v| v.name == name && v.fields.is_none())?;
        Some(rt::Expr::Variant {
            def,
            variant: index as u32,
            fields: Vec::new(),
        })
    }

    fn field(&mut self, base: &ast::Expr, name: &ast::Ident) -> (STy, rt::Expr) {
        let (t, x) = self.expr(base, None);
        let found: Option<(usize, STy)> = match &t {
            STy::Error => return (STy::Error, rt::Expr::None),
            STy::Def(def) => match self.table().get(*def).map(|d| &d.kind) {
                Some(DefKind::Struct { fields }) => fields
                    .iter()
                    .position(|f| f.name == name.name)
                    .and_then(|i| Some((i, STy::of(&fields.get(i)?.ty, self.table())))),
                _ => None,
            },
            STy::Media(_) => MEDIA_FIELDS
                .iter()
                .position(|f| f.name == name.name)
                .map(|i| {
                    let f = MEDIA_FIELDS.get(i).copied();
                    let base = match f.map(|f| f.kind) {
                        Some(MediaFieldKind::Count) => STy::Int,
                        _ => STy::Str,
                    };
                    let ty = if f.is_some_and(|f| f.required) {
                        base
                    } else {
                        STy::Option(Box::new(base))
                    };
                    (i, ty)
                }),
            _ => None,
        };
        match found {
            Some((index, ty)) => {
                if let STy::Def(def) = t {
                    self.cx.refer(name.span, || field_symbol(def, &name.name));
                    let whole = Span {
                        start: base.span.start,
                        ..name.span
                    };
                    self.cx.typed(whole, &ty);
                }
                (ty, rt::Expr::field(x, index as u32))
            }
            None => {
                let candidates: Vec<String> = match &t {
                    STy::Def(def) => match self.table().get(*def).map(|d| &d.kind) {
                        Some(DefKind::Struct { fields }) => {
                            fields.iter().map(|f| f.name.clone()).collect()
                        }
                        _ => Vec::new(),
                    },
                    STy::Media(_) => MEDIA_FIELDS.iter().map(|f| f.name.to_owned()).collect(),
                    _ => Vec::new(),
                };
                let ty = self.describe(&t);
                let suggestion = did_you_mean(&name.name, candidates.iter().map(String::as_str))
                    .map(str::to_owned);
                self.cx.report(NameError::NoField {
                    span: name.span,
                    ty,
                    field: name.name.to_string(),
                    fields: candidates,
                    option: matches!(t, STy::Option(_)),
                    suggestion,
                });
                (STy::Error, rt::Expr::None)
            }
        }
    }

    fn closure(
        &mut self,
        arg: Option<&ast::Expr>,
        item: &STy,
        span: Span,
    ) -> Option<(STy, Closure)> {
        let Some(arg) = arg else {
            self.cx.report(ExprError::NeedsClosure { span });
            return None;
        };
        let ExprKind::Closure { params, body } = &arg.kind else {
            self.cx
                .report(ExprError::ExpectedClosure { span: arg.span });
            return None;
        };
        let [param] = params.as_slice() else {
            self.cx.report(ExprError::ClosureParams { span: arg.span });
            return None;
        };
        let depth = self.locals.len();
        let slot = self.bind_declared(param, param.span, SymbolKind::Local, None, item.clone());
        let (t, x) = self.expr(body, None);
        self.locals.truncate(depth);
        Some((
            t,
            Closure {
                param: Slot(slot),
                body: Box::new(x),
            },
        ))
    }

    fn method(
        &mut self,
        receiver: &ast::Expr,
        method: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> (STy, rt::Expr) {
        let err = (STy::Error, rt::Expr::None);
        let (t, x) = self.expr(receiver, None);
        let name = method.name.as_str();
        let arg0 = args.first();
        let expect_args = |me: &mut Self, n: usize| -> bool {
            if args.len() != n {
                me.cx.report(ExprError::MethodArity {
                    span,
                    method: name.to_owned(),
                    expected: n,
                    found: args.len(),
                });
                return false;
            }
            true
        };
        let mk = |m: Method| rt::Expr::method(x.clone(), m);
        let arg_of = |me: &mut Self, want: &STy| -> Box<rt::Expr> {
            let Some(a) = arg0 else {
                return Box::new(rt::Expr::None);
            };
            let (at, ax) = me.expr(a, Some(want));
            if !at.fits(want) {
                me.mismatch(a.span, want, &at);
            }
            Box::new(ax)
        };
        match (&t, name) {
            (STy::Error, _) => err,
            (STy::Str, "len") if expect_args(self, 0) => (STy::Int, mk(Method::Len)),
            (STy::Str, "is_empty") if expect_args(self, 0) => (STy::Bool, mk(Method::IsEmpty)),
            (STy::Str, "trim") if expect_args(self, 0) => (STy::Str, mk(Method::Trim)),
            (STy::Str, "to_lower") if expect_args(self, 0) => (STy::Str, mk(Method::ToLower)),
            (STy::Str, "to_upper") if expect_args(self, 0) => (STy::Str, mk(Method::ToUpper)),
            (STy::Str, "contains") if expect_args(self, 1) => {
                let a = arg_of(self, &STy::Str);
                (STy::Bool, mk(Method::Contains { arg: a }))
            }
            (STy::Str, "starts_with") if expect_args(self, 1) => {
                let a = arg_of(self, &STy::Str);
                (STy::Bool, mk(Method::StartsWith { arg: a }))
            }
            (STy::Str, "ends_with") if expect_args(self, 1) => {
                let a = arg_of(self, &STy::Str);
                (STy::Bool, mk(Method::EndsWith { arg: a }))
            }
            (STy::Str, "matches") if expect_args(self, 1) => match arg0.map(|a| &a.kind) {
                Some(ExprKind::Lit(ast::Literal {
                    kind: LitKind::Str { value, raw },
                    span: lspan,
                })) => {
                    for d in super::pattern_check::check(&mut self.cx.patterns, value, *lspan, *raw)
                    {
                        self.cx.report(d);
                    }
                    (
                        STy::Bool,
                        mk(Method::Matches {
                            pattern: value.to_string(),
                        }),
                    )
                }
                _ => {
                    self.cx.report(ExprError::MatchesLiteral {
                        span: arg0.map_or(span, |a| a.span),
                    });
                    err
                }
            },
            (STy::List { item, unique }, _)
                if methods::of(Receiver::List).any(|m| m.name == name) =>
            {
                let item = item.as_ref().clone();
                let unique = *unique;
                match name {
                    "len" if expect_args(self, 0) => (STy::Int, mk(Method::Len)),
                    "is_empty" if expect_args(self, 0) => (STy::Bool, mk(Method::IsEmpty)),
                    "contains" if expect_args(self, 1) => {
                        let a = arg_of(self, &item);
                        (STy::Bool, mk(Method::Contains { arg: a }))
                    }
                    "first" | "last" if expect_args(self, 0) => {
                        if matches!(item, STy::Option(_)) {
                            self.option_of_option(receiver.span, NestedOption::FirstOrLast);
                            return err;
                        }
                        let method = if name == "first" {
                            Method::First
                        } else {
                            Method::Last
                        };
                        (STy::Option(Box::new(item)), mk(method))
                    }
                    "sum" if expect_args(self, 0) => match item {
                        STy::Int => (STy::Int, mk(Method::Sum { float: false })),
                        STy::Float => (STy::Float, mk(Method::Sum { float: true })),
                        STy::Error | STy::Unknown => err,
                        other => {
                            let found = self.describe(&other);
                            self.cx.report(ExprError::SumOfNonNumbers {
                                span: receiver.span,
                                found,
                            });
                            err
                        }
                    },
                    "all" | "any" | "count" | "filter" | "map" | "sort_by" if args.len() == 1 => {
                        let Some((body_ty, closure)) = self.closure(arg0, &item, span) else {
                            return err;
                        };
                        let needs_bool = matches!(name, "all" | "any" | "count" | "filter");
                        if needs_bool && !body_ty.fits(&STy::Bool) {
                            let found = self.describe(&body_ty);
                            self.cx.report(ExprError::ClosureNotBool {
                                span: arg0.map_or(span, |a| a.span),
                                method: name.to_owned(),
                                found,
                            });
                        }
                        if name == "sort_by"
                            && !matches!(
                                body_ty,
                                STy::Int
                                    | STy::Float
                                    | STy::Str
                                    | STy::Bool
                                    | STy::Def(_)
                                    | STy::Error
                            )
                        {
                            let found = self.describe(&body_ty);
                            self.cx.report(ExprError::SortKey {
                                span: arg0.map_or(span, |a| a.span),
                                found,
                            });
                        }
                        let list = STy::List {
                            item: Box::new(item.clone()),
                            unique,
                        };
                        match name {
                            "all" => (STy::Bool, mk(Method::All { closure })),
                            "any" => (STy::Bool, mk(Method::Any { closure })),
                            "count" => (STy::Int, mk(Method::Count { closure })),
                            "filter" => (list, mk(Method::Filter { closure })),
                            "sort_by" => (list, mk(Method::SortBy { closure })),
                            _ => (
                                STy::List {
                                    item: Box::new(body_ty),
                                    unique: false,
                                },
                                mk(Method::Map { closure }),
                            ),
                        }
                    }
                    _ => {
                        expect_args(self, 1);
                        err
                    }
                }
            }
            (STy::Map { key, .. }, "len" | "is_empty" | "contains") => match name {
                "len" if expect_args(self, 0) => (STy::Int, mk(Method::Len)),
                "is_empty" if expect_args(self, 0) => (STy::Bool, mk(Method::IsEmpty)),
                "contains" if expect_args(self, 1) => {
                    let key = key.as_ref().clone();
                    let a = arg_of(self, &key);
                    (STy::Bool, mk(Method::Contains { arg: a }))
                }
                _ => err,
            },
            (STy::Option(inner), "is_some" | "is_none" | "unwrap_or") => match name {
                "is_some" if expect_args(self, 0) => (STy::Bool, mk(Method::IsSome)),
                "is_none" if expect_args(self, 0) => (STy::Bool, mk(Method::IsNone)),
                "unwrap_or" if expect_args(self, 1) => {
                    let inner = inner.as_ref().clone();
                    let a = arg_of(self, &inner);
                    (inner, mk(Method::UnwrapOr { default: a }))
                }
                _ => err,
            },
            _ => {
                let known: Vec<&str> = match &t {
                    STy::Str => methods::names(Receiver::Text),
                    STy::List { .. } => methods::names(Receiver::List),
                    STy::Map { .. } => methods::names(Receiver::Map),
                    STy::Option(_) => methods::names(Receiver::Option),
                    _ => Vec::new(),
                };
                if known.contains(&name) {
                    return err; // wrong arity, already reported
                }
                let ty = self.describe(&t);
                let suggestion = did_you_mean(name, known.iter().copied()).map(str::to_owned);
                self.cx.report(NameError::NoMethod {
                    span: method.span,
                    ty,
                    method: name.to_owned(),
                    known: known.iter().map(|m| m.to_string()).collect(),
                    suggestion,
                });
                err
            }
        }
    }

    fn call(&mut self, callee: &ast::Path, args: &[ast::Expr], span: Span) -> (STy, rt::Expr) {
        let err = (STy::Error, rt::Expr::None);
        match self.cx.lookup(self.module, callee) {
            Some(ItemRef::Fn(id)) => {
                let Some(sig) = self.cx.fn_sigs.get(id as usize).cloned().flatten() else {
                    for a in args {
                        self.expr(a, None);
                    }
                    return err;
                };
                self.calls.push((id, callee.span()));
                let lowered = self.args(&sig.params, args, span, callee);
                let ret = sig
                    .ret
                    .as_ref()
                    .map_or(STy::Error, |t| STy::of(t, &self.cx.table));
                let func = rt::FnId(id);
                let x = if sig.is_extern {
                    rt::Expr::CallExtern {
                        func,
                        args: lowered,
                    }
                } else {
                    rt::Expr::Call {
                        func,
                        args: lowered,
                    }
                };
                (ret, x)
            }
            Some(ItemRef::Node(id)) if self.allow_node_calls => {
                let Some(sig) = self.cx.node_sigs.get(id as usize).cloned().flatten() else {
                    return err;
                };
                self.node_calls.push(id);
                let lowered = self.args(&sig.params, args, span, callee);
                (
                    STy::of(sig.ret.as_ref().unwrap_or(&Ty::Bool), &self.cx.table),
                    rt::Expr::CallNode {
                        node: id,
                        args: lowered,
                    },
                )
            }
            Some(ItemRef::Node(_)) => {
                self.cx.report(ExprError::NodeCall {
                    span: callee.span(),
                });
                err
            }
            Some(other) => {
                self.cx.report(ExprError::NotAFn {
                    span: callee.span(),
                    path: callee.to_text(),
                    noun: other.noun(),
                });
                err
            }
            None => {
                self.cx.unknown(
                    "E0205",
                    self.module,
                    callee,
                    "fn",
                    |r| matches!(r, ItemRef::Fn(_) | ItemRef::Node(_)),
                    &[],
                );
                for a in args {
                    self.expr(a, None);
                }
                err
            }
        }
    }

    fn args(
        &mut self,
        params: &[(String, Ty)],
        args: &[ast::Expr],
        span: Span,
        callee: &ast::Path,
    ) -> Vec<rt::Expr> {
        if params.len() != args.len() {
            self.cx.report(ExprError::CallArity {
                span,
                name: callee.to_text(),
                params: params.iter().map(|(p, _)| p.clone()).collect(),
                found: args.len(),
            });
        }
        let mut out = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match params.get(i) {
                Some((_, ty)) => out.push(self.expr_against(a, ty)),
                None => out.push(self.expr(a, None).1),
            }
        }
        out
    }

    fn struct_lit(
        &mut self,
        path: &ast::Path,
        inits: &[ast::FieldInit],
        base: Option<&ast::Expr>,
        span: Span,
    ) -> (STy, rt::Expr) {
        let err = (STy::Error, rt::Expr::None);
        let def = match self.cx.lookup(self.module, path) {
            Some(ItemRef::Type(d)) => self.resolve_alias(DefId(d)),
            Some(_) | None => {
                self.cx.unknown(
                    "E0204",
                    self.module,
                    path,
                    "struct",
                    |r| matches!(r, ItemRef::Type(_)),
                    &[],
                );
                return err;
            }
        };
        let Some(DefKind::Struct { fields }) = self.table().get(def).map(|d| d.kind.clone()) else {
            self.cx.report(ExprError::NotAStruct {
                span: path.span(),
                path: path.to_text(),
            });
            return err;
        };
        let base_slot = base.map(|b| {
            let (bt, bx) = self.expr(b, Some(&STy::Def(def)));
            if !bt.fits(&STy::Def(def)) {
                self.mismatch(b.span, &STy::Def(def), &bt);
            }
            (self.bind("..base", STy::Def(def)), bx)
        });
        let mut given: Vec<Option<rt::Expr>> = vec![None; fields.len()];
        let mut seen: Vec<Option<Span>> = vec![None; fields.len()];
        for init in inits {
            let Some(i) = fields.iter().position(|f| f.name == init.name.name) else {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                let suggestion =
                    did_you_mean(&init.name.name, names.iter().copied()).map(str::to_owned);
                self.cx.report(NameError::NoStructField {
                    span: init.name.span,
                    strukt: path.to_text(),
                    field: init.name.name.to_string(),
                    suggestion,
                });
                if let Some(v) = &init.value {
                    self.expr(v, None);
                }
                continue;
            };
            if let Some(first) = seen.get(i).copied().flatten() {
                self.cx.report(ExprError::FieldTwice {
                    span: init.name.span,
                    first,
                    field: init.name.name.to_string(),
                });
                continue;
            }
            if let Some(s) = seen.get_mut(i) {
                *s = Some(init.name.span);
            }
            let Some(field) = fields.get(i) else { continue };
            self.cx
                .refer(init.name.span, || field_symbol(def, &init.name.name));
            let x = match &init.value {
                Some(v) => self.expr_against(v, &field.ty),
                None => {
                    let shorthand = ast::Expr {
                        kind: ExprKind::Path(ast::Path {
                            segments: std::iter::once(init.name.clone()).collect(),
                        }),
                        span: init.name.span,
                    };
                    self.expr_against(&shorthand, &field.ty)
                }
            };
            if let Some(g) = given.get_mut(i) {
                *g = Some(x);
            }
        }
        let mut missing = Vec::new();
        let mut lowered = Vec::new();
        for (i, field) in fields.iter().enumerate() {
            let value = given.get_mut(i).and_then(Option::take);
            lowered.push(match (value, &base_slot) {
                (Some(v), _) => v,
                (None, Some((slot, _))) => rt::Expr::field(rt::Expr::local(*slot), i as u32),
                (None, None) if matches!(field.ty, Ty::Option { .. }) => rt::Expr::None,
                (None, None) => match &field.default {
                    Some(json) => {
                        let bytes = serde_json::to_vec(json).unwrap_or_default();
                        match aelc_runtime::decode::decode(
                            &bytes,
                            &field.ty,
                            &self.cx.table,
                            "default",
                            usize::MAX,
                        ) {
                            Ok(value) => rt::Expr::Const { value },
                            Err(_) => rt::Expr::None,
                        }
                    }
                    None => {
                        missing.push(field.name.clone());
                        rt::Expr::None
                    }
                },
            });
        }
        if !missing.is_empty() {
            self.cx.report(ExprError::MissingFields {
                span,
                strukt: path.to_text(),
                missing,
            });
        }
        let literal = rt::Expr::Struct {
            def,
            fields: lowered,
        };
        let x = match base_slot {
            Some((slot, bx)) => rt::Expr::Let {
                slot: Slot(slot),
                value: Box::new(bx),
                body: Box::new(literal),
            },
            None => literal,
        };
        (STy::Def(def), x)
    }

    fn block(
        &mut self,
        stmts: &[ast::Stmt],
        value: &ast::Expr,
        expected: Option<&STy>,
    ) -> (STy, rt::Expr) {
        let depth = self.locals.len();
        let mut lets = Vec::new();
        for stmt in stmts {
            match stmt {
                ast::Stmt::Let {
                    name,
                    ty,
                    value,
                    span,
                } => {
                    let (t, x) = self.let_value(ty.as_ref(), value);
                    let slot = self.bind_declared(name, *span, SymbolKind::Local, ty.as_ref(), t);
                    lets.push((slot, x));
                }
                ast::Stmt::Return { span, .. } => {
                    self.cx.report(ExprError::ReturnInBlock { span: *span });
                }
            }
        }
        let (t, mut x) = self.expr(value, expected);
        self.locals.truncate(depth);
        for (slot, v) in lets.into_iter().rev() {
            x = rt::Expr::Let {
                slot: Slot(slot),
                value: Box::new(v),
                body: Box::new(x),
            };
        }
        (t, x)
    }

    pub(crate) fn let_value(
        &mut self,
        ty: Option<&ast::TypeExpr>,
        value: &ast::Expr,
    ) -> (STy, rt::Expr) {
        match ty.and_then(|t| self.cx.lower_ty(self.module, t)) {
            Some(declared) => {
                let x = self.expr_against(value, &declared);
                (STy::of(&declared, &self.cx.table), x)
            }
            None => self.expr(value, None),
        }
    }

    fn binary(&mut self, op: BinaryOp, lhs: &ast::Expr, rhs: &ast::Expr) -> (STy, rt::Expr) {
        let rop = match op {
            BinaryOp::Or => RB::Or,
            BinaryOp::And => RB::And,
            BinaryOp::Eq => RB::Eq,
            BinaryOp::Ne => RB::Ne,
            BinaryOp::Lt => RB::Lt,
            BinaryOp::Le => RB::Le,
            BinaryOp::Gt => RB::Gt,
            BinaryOp::Ge => RB::Ge,
            BinaryOp::Add => RB::Add,
            BinaryOp::Sub => RB::Sub,
            BinaryOp::Mul => RB::Mul,
            BinaryOp::Div => RB::Div,
            BinaryOp::Rem => RB::Rem,
        };
        let (lt, lx) = self.expr(lhs, None);
        let (rt_, rx) = self.expr(rhs, Some(&lt));
        let out = |t| (t, rt::Expr::binary(rop, lx.clone(), rx.clone()));
        if lt.is_error() || rt_.is_error() || chained_comparison(op, lhs, rhs) {
            return (STy::Error, rt::Expr::None);
        }
        let same = rt_.fits(&lt) || lt.fits(&rt_);
        let ok_ty = match op {
            BinaryOp::Or | BinaryOp::And => {
                (lt == STy::Bool && rt_ == STy::Bool).then_some(STy::Bool)
            }
            BinaryOp::Eq | BinaryOp::Ne => same.then_some(STy::Bool),
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => (same
                && matches!(
                    lt,
                    STy::Int | STy::Float | STy::Str | STy::Bool | STy::Def(_)
                ))
            .then_some(STy::Bool),
            BinaryOp::Add => {
                (same && matches!(lt, STy::Int | STy::Float | STy::Str)).then(|| lt.clone())
            }
            _ => {
                if let (
                    BinaryOp::Div | BinaryOp::Rem,
                    ExprKind::Lit(ast::Literal {
                        kind: LitKind::Int(0),
                        ..
                    }),
                ) = (op, &rhs.kind)
                {
                    self.cx.report(ExprError::DivisionByZero { span: rhs.span });
                }
                (same && matches!(lt, STy::Int | STy::Float)).then(|| lt.clone())
            }
        };
        match ok_ty {
            Some(t) => out(t),
            None => {
                let (left, right) = (self.describe(&lt), self.describe(&rt_));
                self.cx.report(ExprError::Operands {
                    span: lhs.span.to(rhs.span),
                    op: op.symbol(),
                    left,
                    right,
                    int_and_float: matches!(
                        (&lt, &rt_),
                        (STy::Int, STy::Float) | (STy::Float, STy::Int)
                    ),
                });
                (STy::Error, rt::Expr::None)
            }
        }
    }

    fn match_expr(
        &mut self,
        scrutinee: &ast::Expr,
        arms: &[ast::MatchArm],
        expected: Option<&STy>,
        span: Span,
    ) -> (STy, rt::Expr) {
        let (st, sx) = self.expr(scrutinee, None);
        let mut result: Option<STy> = expected.cloned().filter(|t| !matches!(t, STy::Unknown));
        let mut lowered = Vec::new();
        let mut cover = Coverage::default();
        for arm in arms {
            let depth = self.locals.len();
            let mut alternatives = Vec::new();
            self.pattern(&arm.pattern, &st, &mut alternatives, &mut cover, true);
            let (bt, bx) = self.expr(&arm.body, result.as_ref());
            self.locals.truncate(depth);
            result = Some(match &result {
                None => bt,
                Some(r) => {
                    if !bt.fits(r) && !r.is_error() {
                        self.mismatch(value_span(&arm.body), r, &bt);
                    }
                    if matches!(r, STy::Unknown) {
                        bt
                    } else {
                        r.clone()
                    }
                }
            });
            for p in alternatives {
                lowered.push(rt::Arm {
                    pattern: p,
                    body: bx.clone(),
                });
            }
        }
        if !st.is_error() {
            let missing = cover.missing(&st, self.table());
            if !missing.is_empty() {
                self.cx.report(ExprError::NotCovered { span, missing });
            }
        }
        (
            result.unwrap_or(STy::Error),
            rt::Expr::Match {
                scrutinee: Box::new(sx),
                arms: lowered,
            },
        )
    }

    /// Checks one pattern against `ty`, binding names; pushes its lowered alternatives.
    fn pattern(
        &mut self,
        p: &ast::Pattern,
        ty: &STy,
        out: &mut Vec<rt::Pattern>,
        cover: &mut Coverage,
        top: bool,
    ) {
        let ty = match ty {
            STy::Def(d) => STy::Def(self.resolve_alias(*d)),
            other => other.clone(),
        };
        match &p.kind {
            PatternKind::Wildcard => {
                if top {
                    cover.all = true;
                }
                out.push(rt::Pattern::Wildcard);
            }
            PatternKind::Or(alts) => {
                for a in alts {
                    self.pattern(a, &ty, out, cover, top);
                }
            }
            PatternKind::None => match ty {
                STy::Option(_) | STy::Error => {
                    if top {
                        cover.none = true;
                    }
                    out.push(rt::Pattern::None);
                }
                _ => self.bad_pattern(p.span, &ty, PatternShape::None),
            },
            PatternKind::Some(inner) => match &ty {
                STy::Option(t) => {
                    let mut inner_out = Vec::new();
                    let mut inner_cover = Coverage::default();
                    self.pattern(inner, t, &mut inner_out, &mut inner_cover, true);
                    if top && inner_cover.missing(t, self.table()).is_empty() {
                        cover.some = true;
                    }
                    for ip in inner_out {
                        out.push(rt::Pattern::Some {
                            pattern: Box::new(ip),
                        });
                    }
                }
                STy::Error => {}
                _ => self.bad_pattern(p.span, &ty, PatternShape::Some),
            },
            PatternKind::Lit(lit) => {
                let (lt, lx) = self.literal(lit);
                if !lt.fits(&ty) {
                    self.mismatch(lit.span, &ty, &lt);
                }
                if let (STy::Bool, LitKind::Bool(b)) = (&ty, &lit.kind) {
                    if top {
                        if *b {
                            cover.bool_true = true
                        } else {
                            cover.bool_false = true
                        }
                    }
                }
                if let rt::Expr::Const { value } = lx {
                    out.push(rt::Pattern::Literal { value });
                }
            }
            PatternKind::Name(name) => {
                if let STy::Def(def) = &ty {
                    let variants = self.variant_names(*def);
                    if let Some(i) = variants.iter().position(|v| *v == name.name) {
                        let def = *def;
                        self.cx.refer(name.span, || variant_symbol(def, &name.name));
                        if top {
                            cover.variants.push(i as u32);
                        }
                        out.push(rt::Pattern::Variant {
                            variant: i as u32,
                            fields: Vec::new(),
                            bind: None,
                        });
                        return;
                    }
                    if !variants.is_empty() {
                        if let Some(s) =
                            did_you_mean(&name.name, variants.iter().map(String::as_str))
                        {
                            let ty = self.describe(&ty);
                            self.cx.report(NameError::NotAVariant {
                                span: name.span,
                                name: name.name.to_string(),
                                ty,
                                suggestion: Some(s.to_owned()),
                            });
                            return;
                        }
                    }
                }
                if top {
                    cover.all = true;
                }
                let slot = self.bind_declared(name, name.span, SymbolKind::Local, None, ty.clone());
                out.push(rt::Pattern::Bind { slot: Slot(slot) });
            }
            PatternKind::Variant { name, fields, rest } => {
                let STy::Def(def) = &ty else {
                    self.bad_pattern(p.span, &ty, PatternShape::Variant);
                    return;
                };
                let Some(DefKind::Enum { variants, .. }) =
                    self.table().get(*def).map(|d| d.kind.clone())
                else {
                    self.bad_pattern(p.span, &ty, PatternShape::Variant);
                    return;
                };
                let Some(index) = variants.iter().position(|v| v.name == name.name) else {
                    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                    let suggestion =
                        did_you_mean(&name.name, names.iter().copied()).map(str::to_owned);
                    let ty = self.describe(&ty);
                    self.cx.report(NameError::NotAVariant {
                        span: name.span,
                        name: name.name.to_string(),
                        ty,
                        suggestion,
                    });
                    return;
                };
                let def = *def;
                self.cx.refer(name.span, || variant_symbol(def, &name.name));
                let declared = variants
                    .get(index)
                    .and_then(|v| v.fields.clone())
                    .unwrap_or_default();
                let mut field_patterns = Vec::new();
                let mut named = 0;
                for fp in fields {
                    let Some(fi) = declared.iter().position(|f| f.name == fp.name.name) else {
                        self.cx.report(NameError::NoVariantField {
                            span: fp.name.span,
                            variant: name.name.to_string(),
                            field: fp.name.name.to_string(),
                        });
                        continue;
                    };
                    named += 1;
                    self.cx
                        .refer(fp.name.span, || field_symbol(def, &fp.name.name));
                    let fty = declared
                        .get(fi)
                        .map_or(STy::Error, |f| STy::of(&f.ty, self.table()));
                    let pattern = match &fp.pattern {
                        Some(inner) => {
                            let mut alts = Vec::new();
                            let mut c = Coverage::default();
                            self.pattern(inner, &fty, &mut alts, &mut c, false);
                            alts.into_iter().next().unwrap_or(rt::Pattern::Wildcard)
                        }
                        None => rt::Pattern::Bind {
                            slot: Slot(self.bind_declared(
                                &fp.name,
                                fp.name.span,
                                SymbolKind::Local,
                                None,
                                fty,
                            )),
                        },
                    };
                    field_patterns.push(rt::FieldPattern {
                        index: fi as u32,
                        pattern,
                    });
                }
                if !rest && named < declared.len() {
                    self.cx.report(ExprError::FieldsNotNamed {
                        span: p.span,
                        variant: name.name.to_string(),
                    });
                }
                if top {
                    cover.variants.push(index as u32);
                }
                out.push(rt::Pattern::Variant {
                    variant: index as u32,
                    fields: field_patterns,
                    bind: None,
                });
            }
        }
    }

    fn bad_pattern(&mut self, span: Span, ty: &STy, shape: PatternShape) {
        if ty.is_error() {
            return;
        }
        let ty = self.describe(ty);
        self.cx.report(ExprError::BadPattern { span, ty, shape });
    }
}

/// Which cases the arms of a `match` cover so far.
#[derive(Default)]
struct Coverage {
    all: bool,
    none: bool,
    some: bool,
    bool_true: bool,
    bool_false: bool,
    variants: Vec<u32>,
}

impl Coverage {
    fn missing(&self, ty: &STy, table: &aelc_runtime::ty::TypeTable) -> Vec<String> {
        if self.all {
            return Vec::new();
        }
        match ty {
            STy::Option(_) => {
                let mut m = Vec::new();
                if !self.some {
                    m.push("`some(_)`".to_owned());
                }
                if !self.none {
                    m.push("`none`".to_owned());
                }
                m
            }
            STy::Bool => {
                let mut m = Vec::new();
                if !self.bool_true {
                    m.push("`true`".to_owned());
                }
                if !self.bool_false {
                    m.push("`false`".to_owned());
                }
                m
            }
            STy::Def(def) => match table.get(*def).map(|d| &d.kind) {
                Some(DefKind::Enum { variants, .. }) => variants
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !self.variants.contains(&(*i as u32)))
                    .map(|(_, v)| format!("`{}`", v.name))
                    .collect(),
                _ => vec!["every value (add `_ => …`)".to_owned()],
            },
            STy::Error => Vec::new(),
            _ => vec!["every value (add `_ => …`)".to_owned()],
        }
    }
}

/// Where the value of `e` is written: the last expression of a block (`{ let x = 1; x }` is
/// `x`), inside parentheses. A type error about a value points there, not at the whole block.
fn value_span(e: &ast::Expr) -> Span {
    match &e.kind {
        ExprKind::Block { value, .. } => value_span(value),
        ExprKind::Paren(inner) => value_span(inner),
        _ => e.span,
    }
}

/// `a < b < c`: the parser reports the chain (E0103) and keeps `(a < b) < c` unparenthesized;
/// typing it would only add a confusing "bool and an integer" error.
fn chained_comparison(op: BinaryOp, lhs: &ast::Expr, rhs: &ast::Expr) -> bool {
    let comparison = |op: BinaryOp| op.precedence() == BinaryOp::Eq.precedence();
    let is_comparison =
        |e: &ast::Expr| matches!(&e.kind, ExprKind::Binary { op, .. } if comparison(*op));
    comparison(op) && (is_comparison(lhs) || is_comparison(rhs))
}

fn field_symbol(owner: DefId, name: &str) -> Symbol {
    Symbol::Field {
        owner: owner.0,
        name: name.into(),
    }
}

fn variant_symbol(owner: DefId, name: &str) -> Symbol {
    Symbol::Variant {
        owner: owner.0,
        name: name.into(),
    }
}
