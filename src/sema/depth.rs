//! Recursion and nesting (spec §3.4, §8): a type may refer to itself only through `Option`,
//! `List`, `Set` or `Map`, so a finite value exists; and a type whose every value nests deeper
//! than 64 arrays or objects can never be sent, so it is an error too.

use aelc_runtime::ty::{limits, DefId, DefKind, FieldTy, Ty};

use super::error::TypeError;
use super::{Cx, TypeDecl};

pub(crate) fn check_all(cx: &mut Cx<'_, '_>) {
    if report_cycles(cx) {
        return;
    }
    report_too_deep(cx);
}

/// Definitions `ty` reaches without passing through a container.
fn direct_refs(ty: &Ty, out: &mut Vec<u32>) {
    if let Ty::Ref { def } = ty {
        out.push(def.0);
    }
}

fn fields_refs(fields: &[FieldTy], out: &mut Vec<u32>) {
    for f in fields {
        direct_refs(&f.ty, out);
    }
}

fn edges(kind: &DefKind) -> Vec<u32> {
    let mut out = Vec::new();
    match kind {
        DefKind::Struct { fields } => fields_refs(fields, &mut out),
        DefKind::Enum { variants, .. } => {
            for v in variants {
                fields_refs(v.fields.as_deref().unwrap_or(&[]), &mut out);
            }
        }
        DefKind::Alias { ty } => direct_refs(ty, &mut out),
    }
    out
}

/// Reports every cycle of direct references once; true when one was found.
fn report_cycles(cx: &mut Cx<'_, '_>) -> bool {
    let n = cx.table.defs.len();
    let graph: Vec<Vec<u32>> = cx.table.defs.iter().map(|d| edges(&d.kind)).collect();
    // 0 = unvisited, 1 = on the stack, 2 = done. Iterative, so deep chains cannot overflow.
    let mut state = vec![0u8; n];
    let mut found = false;
    for root in 0..n {
        if state.get(root) != Some(&0) {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        if let Some(s) = state.get_mut(root) {
            *s = 1;
        }
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let succ = graph.get(node as usize).and_then(|g| g.get(*next)).copied();
            *next += 1;
            match succ {
                None => {
                    if let Some(s) = state.get_mut(node as usize) {
                        *s = 2;
                    }
                    stack.pop();
                }
                Some(to) => match state.get(to as usize) {
                    Some(0) => {
                        if let Some(s) = state.get_mut(to as usize) {
                            *s = 1;
                        }
                        stack.push((to, 0));
                    }
                    Some(1) => {
                        let start = stack.iter().position(|(d, _)| *d == to).unwrap_or(0);
                        let cycle: Vec<u32> = stack
                            .get(start..)
                            .unwrap_or(&[])
                            .iter()
                            .map(|(d, _)| *d)
                            .collect();
                        report_cycle(cx, &cycle);
                        found = true;
                    }
                    _ => {}
                },
            }
        }
    }
    found
}

fn report_cycle(cx: &mut Cx<'_, '_>, cycle: &[u32]) {
    let names: Vec<String> = cycle
        .iter()
        .filter_map(|d| cx.table.get(DefId(*d)).map(|t| t.name.clone()))
        .collect();
    let Some(first) = cycle.first() else { return };
    let mut path = names.join(" -> ");
    if let Some(n) = names.first() {
        path.push_str(" -> ");
        path.push_str(n);
    }
    let error = TypeError::Cycle {
        span: name_span(cx, *first),
        name: names.first().cloned().unwrap_or_default(),
        path,
        others: cycle.iter().skip(1).map(|o| name_span(cx, *o)).collect(),
    };
    cx.report(error);
}

fn name_span(cx: &Cx<'_, '_>, def: u32) -> crate::span::Span {
    match cx.types.get(def as usize).map(|d| d.def) {
        Some(TypeDecl::Struct(s)) => s.name.span,
        Some(TypeDecl::Enum(e)) => e.name.span,
        Some(TypeDecl::Alias(a)) => a.name.span,
        None => crate::span::Span::default(),
    }
}

/// The least nesting depth of any value of each definition, by fixed point: after pass `k`
/// every definition whose least depth is below `k` has its final value, so 66 passes suffice.
fn report_too_deep(cx: &mut Cx<'_, '_>) {
    let cap = limits::MAX_DEPTH as u32 + 1;
    let n = cx.table.defs.len();
    let mut depth = vec![cap; n];
    for _ in 0..=cap {
        let mut changed = false;
        for i in 0..n {
            let Some(def) = cx.table.defs.get(i) else {
                continue;
            };
            let d = def_depth(&def.kind, &depth, cap);
            if let Some(slot) = depth.get_mut(i) {
                if d < *slot {
                    *slot = d;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (i, d) in depth.iter().enumerate() {
        if *d >= cap {
            let name = cx
                .table
                .defs
                .get(i)
                .map_or_else(String::new, |t| t.name.clone());
            let span = name_span(cx, i as u32);
            cx.report(TypeError::TooDeep {
                span,
                name,
                max_depth: limits::MAX_DEPTH,
            });
        }
    }
}

fn def_depth(kind: &DefKind, depth: &[u32], cap: u32) -> u32 {
    match kind {
        DefKind::Struct { fields } => 1 + fields_depth(fields, depth, cap),
        DefKind::Enum { variants, .. } => variants
            .iter()
            .map(|v| match &v.fields {
                None => 0,
                Some(f) => 1 + fields_depth(f, depth, cap),
            })
            .min()
            .unwrap_or(0)
            .min(cap),
        DefKind::Alias { ty } => ty_depth(ty, depth, cap),
    }
    .min(cap)
}

fn fields_depth(fields: &[FieldTy], depth: &[u32], cap: u32) -> u32 {
    fields
        .iter()
        .filter(|f| f.is_required())
        .map(|f| ty_depth(&f.ty, depth, cap))
        .max()
        .unwrap_or(0)
}

fn ty_depth(ty: &Ty, depth: &[u32], cap: u32) -> u32 {
    match ty {
        Ty::Bool | Ty::Int(_) | Ty::Float(_) | Ty::Str(_) | Ty::Option { .. } => 0,
        Ty::Media(_) => 1,
        Ty::List(l) if l.min == 0 => 1,
        Ty::List(l) => (1 + ty_depth(&l.item, depth, cap)).min(cap),
        Ty::Map(m) if m.min == 0 => 1,
        Ty::Map(m) => (1 + ty_depth(&m.value, depth, cap)).min(cap),
        Ty::Ref { def } => depth.get(def.0 as usize).copied().unwrap_or(0),
    }
}
