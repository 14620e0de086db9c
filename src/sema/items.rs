//! Phase 3: `errors` sets, `fn`s, `check`s, builders and streams (spec §5, §6, §7.1), and the
//! rule that `fn` calls form no cycle, so every check terminates.

use super::Map;

use aelc_runtime::expr as rt;
use aelc_runtime::ty::Ty;

use super::bodies::{Deferred, ModuleBodies};
use super::error::{ExprError, NameError, NodeError};
use super::expr::ExprCx;
use super::resolution::Symbol;
use super::sty::STy;
use super::types::{special, Special};
use super::{Cx, ItemRef};
use crate::ir;
use crate::span::Span;
use crate::syntax::ast::{self, LitKind};

/// Codes the platform itself uses (spec §5); no `errors` may declare them.
pub(crate) use aelc_runtime::reserved::RESERVED_CODES;

/// The signature of a fn or node, once its types are lowered.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    pub params: Vec<(String, Ty)>,
    /// `None` when the return type is not a data type (`Parts`) or failed to lower.
    pub ret: Option<Ty>,
    pub param_special: Vec<Option<Special>>,
    pub is_extern: bool,
}

pub(crate) fn check_all(cx: &mut Cx<'_, '_>) {
    lower_errors(cx);
    lower_sigs(cx);
    let graph = lower_bodies(cx);
    report_call_cycles(cx, &graph);
    lower_builders(cx);
    lower_streams(cx);
}

fn lower_errors(cx: &mut Cx<'_, '_>) {
    cx.out.errors.reserve_exact(cx.errors.len());
    for i in 0..cx.errors.len() {
        let Some(decl) = cx.errors.get(i) else {
            continue;
        };
        let (module, item, def) = (decl.module, decl.item, decl.def);
        let mut seen: Map<&str, Span> = Map::default();
        let mut codes = Vec::new();
        for code in &def.codes {
            if RESERVED_CODES.contains(&code.name.name.as_str()) {
                cx.report(ExprError::ReservedCode {
                    span: code.name.span,
                    code: code.name.name.to_string(),
                });
            }
            if let Some(first) = seen.get(code.name.name.as_str()) {
                cx.report(ExprError::CodeTwice {
                    span: code.name.span,
                    first: *first,
                    code: code.name.name.to_string(),
                });
                continue;
            }
            seen.insert(&code.name.name, code.name.span);
            codes.push(ir::ErrorCode {
                name: code.name.name.to_string(),
                docs: cx.docs(&code.docs),
            });
        }
        let module_path = cx.module_path(module);
        cx.out.errors.push(ir::ErrorSet {
            name: def.name.name.to_string(),
            module: module_path,
            docs: cx.docs(&item.docs),
            codes,
        });
    }
}

/// Lowers parameter types; `Raw` is allowed only where `allow_raw`.
pub(crate) fn lower_params(
    cx: &mut Cx<'_, '_>,
    module: usize,
    params: &[ast::Param],
    allow_raw: bool,
) -> (Vec<(String, Ty)>, Vec<Option<Special>>, bool) {
    let mut out = Vec::with_capacity(params.len());
    let mut specials = Vec::with_capacity(params.len());
    let mut ok = true;
    let mut seen: Map<&str, Span> = Map::default();
    for p in params {
        if let Some(first) = seen.get(p.name.name.as_str()) {
            cx.report(NameError::DeclaredTwice {
                span: p.name.span,
                first: *first,
                what: "parameter",
                name: p.name.name.to_string(),
            });
            ok = false;
        }
        seen.insert(&p.name.name, p.name.span);
        if let Some(sp) = special(&p.ty) {
            if sp == Special::Raw && allow_raw {
                specials.push(Some(sp));
                // Raw text is as long as an answer may be; `max_answer` bounds it at run time.
                let raw = Ty::Str(aelc_runtime::ty::StrTy {
                    min: 0,
                    max: u32::MAX,
                    pattern: None,
                    format: None,
                });
                out.push((p.name.name.to_string(), raw));
                continue;
            }
        }
        specials.push(None);
        match cx.lower_ty(module, &p.ty) {
            Some(ty) => out.push((p.name.name.to_string(), ty)),
            None => {
                ok = false;
                out.push((p.name.name.to_string(), Ty::Bool));
            }
        }
    }
    (out, specials, ok)
}

fn lower_sigs(cx: &mut Cx<'_, '_>) {
    // Each table sized once (see `types::lower_all`).
    cx.fn_sigs.reserve_exact(cx.fns.len());
    cx.node_sigs.reserve_exact(cx.nodes.len());
    for i in 0..cx.fns.len() {
        let Some(decl) = cx.fns.get(i) else { continue };
        let (module, def) = (decl.module, decl.def);
        let (params, param_special, ok) = lower_params(cx, module, &def.params, def.is_extern);
        let ret = cx.lower_ty(module, &def.ret);
        let sig = (ok && ret.is_some()).then_some(Sig {
            params,
            ret,
            param_special,
            is_extern: def.is_extern,
        });
        cx.fn_sigs.push(sig.map(std::rc::Rc::new));
    }
    for i in 0..cx.nodes.len() {
        let Some(decl) = cx.nodes.get(i) else {
            continue;
        };
        let (module, def) = (decl.module, decl.def);
        let (params, param_special, ok) = lower_params(cx, module, &def.params, false);
        let ret = cx.lower_ty(module, &def.ret);
        let sig = (ok && ret.is_some()).then_some(Sig {
            params,
            ret,
            param_special,
            is_extern: false,
        });
        cx.node_sigs.push(sig.map(std::rc::Rc::new));
    }
}

/// Type-checks and lowers every fn and check, a module at a time. Deferred bodies
/// ([`ast::Body::Deferred`]) are parsed on the other cores up to [`MODULES_AHEAD`] modules
/// ahead of the module being checked (`parallel::map_ahead`), and dropped once their module is
/// checked. Returns the fns' call graph (callee ids with call spans), by fn id.
fn lower_bodies(cx: &mut Cx<'_, '_>) -> Vec<Vec<(u32, Span)>> {
    let mut lowered = Lowered {
        graph: Vec::with_capacity(cx.fns.len()),
        next_fn: 0,
        next_check: 0,
    };
    if !cx.input.lean {
        cx.out.fns.reserve_exact(cx.fns.len());
    }
    cx.out.checks.reserve_exact(cx.checks.len());
    let deferred = Deferred::lend_all(cx);
    let text: usize = deferred.iter().map(|d| d.text.len()).sum();
    crate::parallel::map_ahead(
        &deferred,
        text >= crate::parallel::PARALLEL_FROM_BYTES,
        MODULES_AHEAD,
        Deferred::parse,
        |module, parsed| {
            // The modules in between defer nothing.
            lowered.up_to(cx, module.module, &ModuleBodies::none());
            let bodies = ModuleBodies::new(cx, module, parsed);
            lowered.up_to(cx, module.module + 1, &bodies);
        },
    );
    Deferred::give_back_all(cx, deferred);
    lowered.up_to(cx, usize::MAX, &ModuleBodies::none());
    lowered.graph
}

/// How many modules' deferred bodies may be parsed ahead of the one being checked: enough to
/// keep the other cores busy while a module with many bodies is checked, few enough that what
/// they hold is a few megabytes.
const MODULES_AHEAD: usize = 128;

/// How far [`lower_bodies`] got: the next fn and check, and the fns' calls so far.
struct Lowered {
    graph: Vec<Vec<(u32, Span)>>,
    next_fn: usize,
    next_check: usize,
}

impl Lowered {
    /// Lowers the fns and checks not yet lowered of the modules before `end` (declarations are
    /// in module order).
    fn up_to(&mut self, cx: &mut Cx<'_, '_>, end: usize, bodies: &ModuleBodies) {
        while cx.fns.get(self.next_fn).is_some_and(|d| d.module < end) {
            self.graph.push(lower_fn(cx, self.next_fn, bodies));
            self.next_fn += 1;
        }
        while cx
            .checks
            .get(self.next_check)
            .is_some_and(|d| d.module < end)
        {
            lower_check(cx, self.next_check, bodies);
            self.next_check += 1;
        }
    }
}

/// Type-checks and lowers fn `i`; returns its calls (callee ids with call spans).
fn lower_fn(cx: &mut Cx<'_, '_>, i: usize, bodies: &ModuleBodies) -> Vec<(u32, Span)> {
    let Some(decl) = cx.fns.get(i) else {
        return Vec::new();
    };
    let (module, item, def) = (decl.module, decl.item, decl.def);
    let sig = cx.fn_sigs.get(i).cloned().flatten();
    let mut body_ir = None;
    let mut locals = 0;
    let mut calls = Vec::new();
    match (&def.body, &sig) {
        (Some(body), Some(sig)) => {
            // `None`: a deferred body that did not parse; its module is parsed again, whole.
            if let Some(body) = bodies.fn_body(body) {
                let mut ecx = ExprCx::new(cx, module);
                ecx.bind_params(&sig.params, &def.params);
                if let Some(ret) = &sig.ret {
                    body_ir = Some(ecx.expr_against(body, ret));
                }
                locals = ecx.locals_used();
                calls = std::mem::take(&mut ecx.calls);
            }
        }
        (None, _) if !def.is_extern => {
            // The item ends at the `;` written where the body should be.
            let end = item.span.end as usize;
            let semi = Span::new(item.span.file, end.saturating_sub(1)..end);
            cx.report(ExprError::NoBody {
                span: semi,
                name_span: def.name.span,
                name: def.name.name.to_string(),
            });
        }
        _ => {}
    }
    if cx.input.lean {
        // Checked above; a lean program keeps no fn (`CheckInput::lean`).
        return calls;
    }
    let module_path = cx.module_path(module);
    cx.out.fns.push(ir::FnIr {
        name: def.name.name.to_string(),
        module: module_path,
        docs: cx.docs(&item.docs),
        params: sig
            .as_ref()
            .map(|s| {
                s.params
                    .iter()
                    .zip(&s.param_special)
                    .map(|((n, t), special)| ir::Param {
                        name: n.clone(),
                        ty: t.clone(),
                        raw: *special == Some(Special::Raw),
                        stream: None,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        ret: sig.as_ref().and_then(|s| s.ret.clone()),
        is_extern: def.is_extern,
        body: body_ir,
        locals,
    });
    calls
}

fn report_call_cycles(cx: &mut Cx<'_, '_>, graph: &[Vec<(u32, Span)>]) {
    let n = graph.len();
    let mut state = vec![0u8; n];
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
                Some((to, span)) => match state.get(to as usize) {
                    Some(0) => {
                        if let Some(s) = state.get_mut(to as usize) {
                            *s = 1;
                        }
                        stack.push((to, 0));
                    }
                    Some(1) => {
                        let start = stack.iter().position(|(d, _)| *d == to).unwrap_or(0);
                        let names: Vec<String> = stack
                            .get(start..)
                            .unwrap_or(&[])
                            .iter()
                            .filter_map(|(d, _)| {
                                cx.fns.get(*d as usize).map(|f| f.def.name.name.to_string())
                            })
                            .collect();
                        cx.report(ExprError::FnCycle { span, names });
                    }
                    _ => {}
                },
            }
        }
    }
}

/// The error set a `fails E` names, if any.
pub(crate) fn resolve_fails(
    cx: &mut Cx<'_, '_>,
    module: usize,
    fails: &Option<ast::Path>,
) -> Option<u32> {
    let path = fails.as_ref()?;
    match cx.lookup(module, path) {
        Some(ItemRef::Errors(e)) => Some(e),
        Some(other) => {
            cx.report(NameError::NotAnErrorsSet {
                span: path.span(),
                path: path.to_text(),
                noun: other.noun(),
            });
            None
        }
        None => {
            cx.unknown(
                "E0205",
                module,
                path,
                "errors set",
                |r| matches!(r, ItemRef::Errors(_)),
                &[],
            );
            None
        }
    }
}

pub(crate) fn code_names(cx: &Cx<'_, '_>, set: u32) -> Vec<String> {
    cx.out
        .errors
        .get(set as usize)
        .map(|s| s.codes.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default()
}

/// Reports `code` unless it is declared in `set`. `fails_written` says whether a `fails` clause
/// is written: when it is but names no `errors` set, that clause is the error, already reported,
/// and its codes are not reported again.
pub(crate) fn check_code(
    cx: &mut Cx<'_, '_>,
    set: Option<u32>,
    fails_written: bool,
    code: &ast::Ident,
    whose: &str,
) {
    let Some(set) = set else {
        if fails_written {
            return;
        }
        cx.report(ExprError::NoFailsSet {
            span: code.span,
            code: code.name.to_string(),
            whose: whose.to_owned(),
        });
        return;
    };
    let names = code_names(cx, set);
    if names.iter().any(|n| *n == code.name) {
        cx.refer(code.span, || Symbol::ErrorCode {
            set,
            name: Box::from(&*code.name),
        });
    } else {
        let set_name = cx
            .out
            .errors
            .get(set as usize)
            .map_or_else(String::new, |s| s.name.clone());
        let suggestion =
            crate::diagnostics::suggest::did_you_mean(&code.name, names.iter().map(String::as_str))
                .map(str::to_owned);
        cx.report(ExprError::NotACode {
            span: code.span,
            code: code.name.to_string(),
            set: set_name,
            suggestion,
        });
    }
}

/// Type-checks and lowers check `i`.
fn lower_check(cx: &mut Cx<'_, '_>, i: usize, bodies: &ModuleBodies) {
    let Some(decl) = cx.checks.get(i) else {
        return;
    };
    let (module, item, def) = (decl.module, decl.item, decl.def);
    let (params, _, ok) = lower_params(cx, module, &def.params, false);
    let fails = resolve_fails(cx, module, &def.fails);
    let mut requires = Vec::new();
    let mut locals = 0;
    // `None`: a deferred body that did not parse; its module is parsed again, whole.
    let body = def.body.as_ref().and_then(|body| bodies.check_body(body));
    if let (Some(body), true) = (body, ok) {
        let mut ecx = ExprCx::new(cx, module);
        ecx.bind_params(&params, &def.params);
        let mut lowered = Vec::new();
        for req in body {
            let (t, x) = ecx.expr(&req.cond, Some(&STy::Bool));
            if !t.fits(&STy::Bool) {
                let found = t.describe(&ecx.cx.table);
                ecx.cx.report(ExprError::RequirementNotBool {
                    span: req.cond.span,
                    found,
                });
            }
            let message = req.message.as_ref().and_then(|m| match &m.kind {
                LitKind::Str { value, .. } => Some(value.to_string()),
                _ => None,
            });
            lowered.push((
                req.code.clone(),
                rt::Require {
                    cond: x,
                    code: req.code.name.to_string(),
                    message,
                },
            ));
        }
        locals = ecx.locals_used();
        for (code, r) in lowered {
            check_code(
                cx,
                fails,
                def.fails.is_some(),
                &code,
                &format!("check `{}`", def.name.name),
            );
            requires.push(r);
        }
    }
    let module_path = cx.module_path(module);
    cx.out.checks.push(ir::CheckIr {
        name: def.name.name.to_string(),
        module: module_path,
        docs: cx.docs(&item.docs),
        params: plain_params(params),
        fails: fails.map(ir::ErrorSetId),
        is_extern: def.is_extern,
        requires: if cx.input.lean { Vec::new() } else { requires },
        locals,
    });
}

/// The parameters of a check or a builder, which are neither raw nor streams.
fn plain_params(params: Vec<(String, Ty)>) -> Vec<ir::Param> {
    params
        .into_iter()
        .map(|(name, ty)| ir::Param {
            name,
            ty,
            raw: false,
            stream: None,
        })
        .collect()
}

fn lower_builders(cx: &mut Cx<'_, '_>) {
    cx.out.builders.reserve_exact(cx.builders.len());
    for i in 0..cx.builders.len() {
        let Some(decl) = cx.builders.get(i) else {
            continue;
        };
        let (module, def) = (decl.module, decl.def);
        let (params, _, ok) = lower_params(cx, module, &def.params, false);
        if special(&def.ret) != Some(Special::Parts) {
            cx.report(NodeError::BuilderReturn {
                span: def.ret.span(),
            });
        }
        let mut kinds = Vec::new();
        let mut parts = Vec::new();
        let mut locals = 0;
        if ok {
            let mut ecx = ExprCx::new(cx, module);
            ecx.bind_params(&params, &def.params);
            for part in &def.parts {
                let ast::ExprKind::Call { callee, args } = &part.kind else {
                    ecx.cx.report(NodeError::NotAPart { span: part.span });
                    continue;
                };
                let kind = callee.to_text();
                let Some(word) = aelc_runtime::prompt::PartWord::parse(&kind) else {
                    let suggestion = crate::diagnostics::suggest::did_you_mean(
                        &kind,
                        aelc_runtime::prompt::PartWord::ALL.map(|w| w.as_str()),
                    )
                    .map(str::to_owned);
                    ecx.cx.report(NodeError::UnknownPartKind {
                        span: callee.span(),
                        kind,
                        suggestion,
                    });
                    continue;
                };
                use aelc_runtime::prompt::PartWord;
                let want = match word {
                    PartWord::System | PartWord::Text => STy::Str,
                    PartWord::Image => STy::Media(aelc_runtime::ty::MediaKind::Image),
                    PartWord::Audio => STy::Media(aelc_runtime::ty::MediaKind::Audio),
                    PartWord::Video => STy::Media(aelc_runtime::ty::MediaKind::Video),
                    PartWord::File => STy::Media(aelc_runtime::ty::MediaKind::File),
                };
                match &args[..] {
                    [arg] => {
                        let (t, source) = builder_arg(&mut ecx, arg);
                        parts.push(aelc_runtime::prompt::BuilderPart { kind: word, source });
                        if !t.fits(&want) {
                            let (w, f) = (want.describe(&ecx.cx.table), t.describe(&ecx.cx.table));
                            ecx.cx.report(ExprError::PartArg {
                                span: arg.span,
                                kind: kind.clone(),
                                want: w,
                                found: f,
                            });
                        }
                    }
                    _ => ecx.cx.report(ExprError::PartArity {
                        span: part.span,
                        kind: kind.clone(),
                    }),
                }
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            locals = ecx.locals_used();
        }
        let module_path = cx.module_path(module);
        cx.out.builders.push(ir::BuilderIr {
            name: def.name.name.to_string(),
            module: module_path,
            params: plain_params(params),
            part_kinds: kinds,
            parts,
            locals,
        });
    }
}

/// `render(…)` inside a builder renders the node's prompt template: it is text. Its arguments,
/// when written, stand for the node's parameters in order; `render()` uses the builder's own.
fn builder_arg(
    ecx: &mut ExprCx<'_, '_, '_>,
    arg: &ast::Expr,
) -> (STy, aelc_runtime::prompt::PartSource) {
    use aelc_runtime::prompt::PartSource;
    if let ast::ExprKind::Call { callee, args } = &arg.kind {
        if callee.to_text() == "render" {
            let args = args.iter().map(|a| ecx.expr(a, None).1).collect();
            return (STy::Str, PartSource::Render { args });
        }
    }
    let (ty, expr) = ecx.expr(arg, None);
    (ty, PartSource::Expr { expr })
}

fn lower_streams(cx: &mut Cx<'_, '_>) {
    cx.out.streams.reserve_exact(cx.streams.len());
    for i in 0..cx.streams.len() {
        let Some(decl) = cx.streams.get(i) else {
            continue;
        };
        let (module, def) = (decl.module, decl.def);
        let chunk = cx.lower_ty(module, &def.of).unwrap_or(Ty::Bool);
        let mut s = ir::StreamIr {
            name: def.name.name.to_string(),
            module: cx.module_path(module),
            chunk,
            chunk_bytes: 0,
            buffer_bytes: 0,
            rate_per_second: 0.0,
            duration_ms: 0,
            fresh_ms: 0,
            on_full: String::new(),
            duplicates: String::new(),
            stale: String::new(),
        };
        let keys = super::blocks::STREAM_LIMITS;
        let mut seen = Vec::new();
        for entry in &def.entries {
            let key = entry.key.name.as_str();
            // A value the parser could not read (`5min`) was reported there; the limit is
            // written, so it is not reported missing either.
            let unread = entry
                .args
                .iter()
                .any(|a| matches!(a.value.kind, ast::ExprKind::Error));
            if unread && keys.contains(&key) {
                seen.push(key);
                continue;
            }
            let arg = entry.args.first().map(|a| &a.value.kind);
            let lit = match arg {
                Some(ast::ExprKind::Lit(l)) => Some(&l.kind),
                _ => None,
            };
            let word = match arg {
                Some(ast::ExprKind::Path(p)) => Some(p.to_text()),
                _ => None,
            };
            let ok = match (key, lit, word.as_deref()) {
                ("chunk" | "buffer", Some(LitKind::Size { value, unit }), _) => {
                    let b = value.saturating_mul(unit.bytes());
                    if key == "chunk" {
                        s.chunk_bytes = b
                    } else {
                        s.buffer_bytes = b
                    }
                    true
                }
                ("rate", Some(LitKind::Rate { count, per }), _) => {
                    s.rate_per_second = *count as f64 * 1000.0 / per.millis() as f64;
                    true
                }
                ("duration" | "fresh", Some(LitKind::Duration { value, unit }), _) => {
                    let ms = value.saturating_mul(unit.millis());
                    if key == "duration" {
                        s.duration_ms = ms
                    } else {
                        s.fresh_ms = ms
                    }
                    true
                }
                ("on_full", _, Some(w @ ("reject" | "drop_oldest" | "drop_newest" | "pause"))) => {
                    s.on_full = w.to_owned();
                    true
                }
                ("duplicates", _, Some(w @ ("reject" | "discard"))) => {
                    s.duplicates = w.to_owned();
                    true
                }
                ("stale", _, Some(w @ ("reject" | "discard"))) => {
                    s.stale = w.to_owned();
                    true
                }
                _ => false,
            };
            if !keys.contains(&key) {
                let suggestion =
                    crate::diagnostics::suggest::did_you_mean(key, keys.iter().copied())
                        .map(str::to_owned);
                cx.report(NodeError::UnknownStreamLimit {
                    span: entry.key.span,
                    key: key.to_owned(),
                    suggestion,
                });
            } else if !ok {
                cx.report(NodeError::StreamLimitValue {
                    span: entry.span,
                    key: key.to_owned(),
                });
            } else {
                seen.push(key);
            }
        }
        let missing: Vec<&str> = keys.iter().copied().filter(|k| !seen.contains(k)).collect();
        if !missing.is_empty() {
            cx.report(NodeError::StreamLacks {
                span: def.name.span,
                stream: def.name.name.to_string(),
                missing: missing.iter().map(|k| k.to_string()).collect(),
            });
        }
        cx.out.streams.push(s);
    }
}
