//! Field defaults (spec §3.1): a default is a constant of the field's type, checked against its
//! bounds at compile time by the same decoder that checks inputs at run time, and written as
//! the schema's `default`.

use aelc_runtime::decode;
use aelc_runtime::ty::{DefKind, FieldTy, Ty};

use super::error::TypeError;
use super::{Cx, TypeDecl};
use crate::syntax::ast::{self, ExprKind, LitKind, UnaryOp};

pub(crate) fn check_defaults(cx: &mut Cx<'_, '_>) {
    for index in 0..cx.types.len() {
        let Some(decl) = cx.types.get(index) else {
            continue;
        };
        let fields: Vec<(Option<usize>, &ast::Field)> = match decl.def {
            TypeDecl::Struct(s) => s.fields.iter().map(|f| (None, f)).collect(),
            TypeDecl::Enum(e) => e
                .variants
                .iter()
                .enumerate()
                .flat_map(|(v, var)| var.fields.iter().flatten().map(move |f| (Some(v), f)))
                .collect(),
            TypeDecl::Alias(_) => continue,
        };
        for (variant, field) in fields {
            let Some(default) = &field.default else {
                continue;
            };
            let Some(ty) = field_ty(cx, index, variant, &field.name.name) else {
                continue;
            };
            if let Some(json) = check_default(cx, &ty, default, &field.name.name) {
                set_default(cx, index, variant, &field.name.name, json);
            }
        }
    }
}

fn field_list(kind: &mut DefKind, variant: Option<usize>) -> Option<&mut Vec<FieldTy>> {
    match (kind, variant) {
        (DefKind::Struct { fields }, None) => Some(fields),
        (DefKind::Enum { variants, .. }, Some(v)) => variants.get_mut(v)?.fields.as_mut(),
        _ => None,
    }
}

fn field_ty(cx: &mut Cx<'_, '_>, def: usize, variant: Option<usize>, name: &str) -> Option<Ty> {
    let kind = &mut cx.table.defs.get_mut(def)?.kind;
    field_list(kind, variant)?
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.ty.clone())
}

fn set_default(
    cx: &mut Cx<'_, '_>,
    def: usize,
    variant: Option<usize>,
    name: &str,
    json: serde_json::Value,
) {
    let Some(d) = cx.table.defs.get_mut(def) else {
        return;
    };
    if let Some(field) =
        field_list(&mut d.kind, variant).and_then(|f| f.iter_mut().find(|f| f.name == name))
    {
        field.default = Some(Box::new(json));
    }
}

/// The default as JSON when it is a constant valid for `ty`; reports otherwise.
fn check_default(
    cx: &mut Cx<'_, '_>,
    ty: &Ty,
    default: &ast::Expr,
    name: &str,
) -> Option<serde_json::Value> {
    if matches!(ty, Ty::Option { .. }) {
        cx.report(TypeError::OptionDefault { span: default.span });
        return None;
    }
    // A default the parser could not read (`18446744073709551616`) was reported there.
    if matches!(default.kind, ast::ExprKind::Error) {
        return None;
    }
    let Some(json) = constant(default) else {
        cx.report(TypeError::DefaultNotConstant { span: default.span });
        return None;
    };
    let text = serde_json::to_vec(&json).unwrap_or_default();
    match decode::decode(&text, ty, &cx.table, name, usize::MAX) {
        Ok(_) => Some(json),
        Err(errors) => {
            let first = errors
                .first()
                .map_or_else(String::new, |e| e.message.clone());
            cx.report(TypeError::DefaultInvalid {
                span: default.span,
                why: first,
            });
            None
        }
    }
}

/// A constant expression with no names in it (a name may be a local, not a variant).
pub(crate) fn literal_constant(e: &ast::Expr) -> Option<serde_json::Value> {
    match &e.kind {
        ExprKind::Path(_) => None,
        ExprKind::Paren(inner) => literal_constant(inner),
        ExprKind::Block { stmts, value } if stmts.is_empty() => literal_constant(value),
        ExprKind::List(items) => Some(serde_json::Value::Array(
            items.iter().map(literal_constant).collect::<Option<_>>()?,
        )),
        _ => constant(e),
    }
}

/// A constant expression as JSON: literals, negated numbers, lists, variant names.
pub(crate) fn constant(e: &ast::Expr) -> Option<serde_json::Value> {
    use serde_json::Value as J;
    Some(match &e.kind {
        ExprKind::Lit(lit) => match &lit.kind {
            LitKind::Bool(b) => J::Bool(*b),
            LitKind::Int(v) => J::from(*v),
            LitKind::Float { text } => {
                J::from(serde_json::Number::from_f64(ast::float_value(text))?)
            }
            LitKind::Str { value, .. } => J::String(value.to_string()),
            _ => return None,
        },
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => match &operand.kind {
            ExprKind::Lit(ast::Literal {
                kind: LitKind::Int(v),
                ..
            }) => {
                let v = i64::try_from(*v).ok()?;
                J::from(-v)
            }
            ExprKind::Lit(ast::Literal {
                kind: LitKind::Float { text },
                ..
            }) => J::from(serde_json::Number::from_f64(-ast::float_value(text))?),
            _ => return None,
        },
        ExprKind::Paren(inner) => constant(inner)?,
        ExprKind::List(items) => J::Array(items.iter().map(constant).collect::<Option<_>>()?),
        // A unit variant: `low` or `Severity::low`; the decoder checks it is one.
        ExprKind::Path(path) => J::String(path.last()?.name.to_string()),
        _ => return None,
    })
}
