//! Phase 4: nodes and agents (spec §6): their blocks, the wiring of checks, transforms and
//! builders to the node's types, failure policies, budgets, publishing, and the prompt.

use aelc_runtime::ty::Ty;

use super::blocks;
use super::error::{CombineAt, Expected, ExprError, NameError, NodeError};
use super::expr::ExprCx;
use super::items::{check_code, resolve_fails};
use super::resolution::{Symbol, SymbolKind};
use super::sty::STy;
use super::types::Special;
use super::{Cx, ItemRef};
use crate::diagnostics::suggest::did_you_mean;

use crate::ir;
use crate::ir::size;
use crate::span::Span;
use crate::syntax::ast::{self, ExprKind, LitKind};

/// How far above the largest encoding an explicit `max_answer` may be before it is a warning.
const FAR_ABOVE: u64 = 4;

pub(crate) fn check_all(cx: &mut Cx<'_, '_>) {
    // Sized once (see `types::lower_all`).
    cx.out.nodes.reserve_exact(cx.nodes.len());
    for i in 0..cx.nodes.len() {
        check_node(cx, i);
    }
}

struct NodeCx<'n> {
    module: usize,
    def: &'n ast::NodeDef,
    params: Vec<(String, Ty)>,
    output: Ty,
    fails: Option<u32>,
}

/// The stream a node parameter's type names (`readings: Readings`), by its index in the
/// program's streams, so the executor knows to feed it chunk by chunk (spec §7.1).
fn stream_of(cx: &mut Cx<'_, '_>, module: usize, def: &ast::NodeDef, name: &str) -> Option<u32> {
    let param = def.params.iter().find(|p| p.name.name == name)?;
    match &param.ty.kind {
        ast::TypeKind::Named { path, .. } => match cx.lookup(module, path)? {
            super::ItemRef::Stream(index) => Some(index),
            _ => None,
        },
        ast::TypeKind::Error { .. } => None,
    }
}

fn check_node(cx: &mut Cx<'_, '_>, index: usize) {
    let Some(decl) = cx.nodes.get(index) else {
        return;
    };
    let (module, item, def) = (decl.module, decl.item, decl.def);
    let fails = resolve_fails(cx, module, &def.fails);
    let Some(sig) = cx.node_sigs.get(index).cloned().flatten() else {
        return;
    };
    let Some(output) = sig.ret.clone() else {
        return;
    };
    let n = NodeCx {
        module,
        def,
        params: sig.params.clone(),
        output,
        fails,
    };
    let mut config = ir::NodeConfig {
        prompt: None,
        model: None,
        max_answer: size::default_max_answer(&n.output, &cx.table),
        max_answer_explicit: false,
        max_prompt: None,
        timeout_ms: None,
        temperature: None,
    };
    let mut input = ir::InputStage::default();
    let mut output_stage = ir::OutputStage::default();
    let mut inputs = None;
    // Whether `combine:` is written at all (a misspelled value is its own error, not a
    // missing `combine`; `fresh:` alone does not say how to combine).
    let mut combine_written = false;
    let mut budget = ir::Budget::default();
    let mut max_cost_span: Option<Span> = None;
    let mut publish = None;
    let mut max_answer_span = None;
    let mut fallbacks: Vec<(String, Span)> = Vec::new();
    let mut model_span = None;
    let mut seen_blocks: Vec<(&str, Span)> = Vec::new();
    for block in &def.blocks {
        let name = block.name.name.as_str();
        let Some(keys) = blocks::node_block_keys(name) else {
            cx.report(NodeError::UnknownBlock {
                span: block.name.span,
                name: name.to_owned(),
                suggestion: did_you_mean(name, blocks::node_block_names()).map(str::to_owned),
            });
            continue;
        };
        if let Some((_, first)) = seen_blocks.iter().find(|(b, _)| *b == name) {
            cx.report(NodeError::BlockTwice {
                span: block.name.span,
                first: *first,
                name: name.to_owned(),
            });
            continue;
        }
        seen_blocks.push((name, block.name.span));
        if name == "publish" && def.kind == ast::NodeKind::Node {
            cx.report(NodeError::PublishNode {
                span: block.name.span,
                node: def.name.name.to_string(),
            });
            continue;
        }
        let mut seen_keys: Vec<(&str, Span)> = Vec::new();
        for entry in &block.entries {
            let key = entry.key.name.as_str();
            if !keys.contains(&key) {
                cx.report(NodeError::UnknownKey {
                    span: entry.key.span,
                    block: name.to_owned(),
                    key: key.to_owned(),
                    keys,
                    suggestion: did_you_mean(key, keys.iter().copied()).map(str::to_owned),
                });
                continue;
            }
            let repeatable = key == "check";
            if let Some((_, first)) = seen_keys.iter().find(|(k, _)| *k == key) {
                if !repeatable {
                    cx.report(NodeError::KeyTwice {
                        span: entry.key.span,
                        first: *first,
                        key: key.to_owned(),
                    });
                    continue;
                }
            }
            seen_keys.push((key, entry.key.span));
            // A value the parser could not read (`timeout: 5min;`) was reported there.
            if entry
                .args
                .iter()
                .any(|a| matches!(a.value.kind, ExprKind::Error))
            {
                continue;
            }
            let arg = entry.args.first().map(|a| &a.value);
            match (name, key) {
                ("config", "prompt") => {
                    if let Some(path) = file_arg(cx, arg, entry.span) {
                        config.prompt = Some(path);
                    }
                }
                ("config", "model") => {
                    if let Some(b) = binding_arg(cx, arg, entry.span) {
                        model_span = Some(entry.span);
                        config.model = Some(b);
                    }
                }
                ("config", "max_answer" | "max_prompt") => match size_arg(arg) {
                    Some(bytes) if bytes > 0 => {
                        if key == "max_answer" {
                            config.max_answer = bytes;
                            config.max_answer_explicit = true;
                            max_answer_span = arg.map(|a| a.span);
                        } else {
                            config.max_prompt = Some(bytes);
                        }
                    }
                    _ => wrong_value(cx, entry.span, key, Expected::Size),
                },
                ("config", "timeout") => match duration_arg(arg) {
                    Some(ms) if ms > 0 => config.timeout_ms = Some(ms),
                    _ => wrong_value(cx, entry.span, key, Expected::Timeout),
                },
                ("config", "temperature") => match arg.map(|a| &a.kind) {
                    Some(ExprKind::Lit(ast::Literal {
                        kind: LitKind::Float { text },
                        ..
                    })) if (0.0..=2.0).contains(&ast::float_value(text)) => {
                        config.temperature = Some(ast::float_value(text));
                    }
                    Some(ExprKind::Lit(ast::Literal {
                        kind: LitKind::Int(v),
                        ..
                    })) if *v <= 2 => {
                        config.temperature = Some(*v as f64);
                    }
                    _ => wrong_value(cx, entry.span, key, Expected::Temperature),
                },
                ("input", "check") | ("output", "check") => {
                    if let Some(id) = wire_check(cx, &n, arg, entry.span, name == "output") {
                        if name == "output" {
                            output_stage.checks.push(ir::CheckId(id));
                        } else {
                            input.checks.push(ir::CheckId(id));
                        }
                    }
                }
                ("input", "builder") => {
                    input.builder = wire_builder(cx, &n, arg, entry.span).map(ir::BuilderId);
                }
                ("output", "transform") => {
                    output_stage.transform = wire_transform(cx, &n, arg, entry.span).map(ir::FnId);
                }
                ("output", "raw") if !entry.args.is_empty() => {
                    wrong_value(cx, entry.span, key, Expected::Nothing);
                }
                ("output", "raw") => {}
                ("output", "parse") => {
                    output_stage.raw_parse = wire_parse(cx, &n, arg, entry.span).map(ir::FnId);
                }
                ("output", "on_failure") => {
                    output_stage.on_failure = policies(cx, &n, entry, &mut fallbacks);
                }
                ("inputs", "combine") => {
                    combine_written = true;
                    let word = path_word(arg);
                    let combine = match word.as_deref() {
                        Some("together") => Some(ir::Combine::Together),
                        Some("latest") => Some(ir::Combine::Latest),
                        Some("zip") => Some(ir::Combine::Zip),
                        _ => None,
                    };
                    match combine {
                        Some(c) => {
                            let fresh =
                                inputs.take().map_or_else(Vec::new, |i: ir::Inputs| i.fresh);
                            inputs = Some(ir::Inputs { combine: c, fresh });
                        }
                        None => {
                            let suggestion = word
                                .as_deref()
                                .and_then(|w| did_you_mean(w, ["together", "latest", "zip"]));
                            cx.report(NodeError::UnknownCombine {
                                span: entry.span,
                                suggestion: suggestion.map(str::to_owned),
                            });
                        }
                    }
                }
                ("inputs", "fresh") => {
                    let fresh = fresh_entries(cx, &n, entry);
                    match &mut inputs {
                        Some(i) => i.fresh = fresh,
                        None => {
                            inputs = Some(ir::Inputs {
                                combine: ir::Combine::Together,
                                fresh,
                            })
                        }
                    }
                }
                ("budget", "max_calls") => match arg.map(|a| &a.kind) {
                    Some(ExprKind::Lit(ast::Literal {
                        kind: LitKind::Int(v),
                        ..
                    })) if *v >= 1 && *v <= u32::MAX as u64 => {
                        budget.max_calls = Some(*v as u32);
                    }
                    _ => wrong_value(cx, entry.span, key, Expected::PositiveCount),
                },
                ("budget", "max_cost") | ("publish", "price") => match money_arg(arg) {
                    Some(m) => {
                        if key == "price" {
                            publish.get_or_insert_with(empty_publish).price = Some(m);
                        } else {
                            budget.max_cost = Some(m);
                            max_cost_span = Some(entry.span);
                        }
                    }
                    None => wrong_value(cx, entry.span, key, Expected::Money),
                },
                ("budget", "max_time") => match duration_arg(arg) {
                    Some(ms) if ms > 0 => budget.max_time_ms = Some(ms),
                    _ => wrong_value(cx, entry.span, key, Expected::MaxTime),
                },
                ("publish", "capability") => match str_arg(arg) {
                    Some(s) if !s.is_empty() => {
                        publish.get_or_insert_with(empty_publish).capability = Some(s)
                    }
                    _ => wrong_value(cx, entry.span, key, Expected::Capability),
                },
                ("publish", "examples") => match str_arg(arg) {
                    Some(s) if !s.is_empty() => {
                        publish.get_or_insert_with(empty_publish).examples = Some(s)
                    }
                    _ => wrong_value(cx, entry.span, key, Expected::ExamplesGlob),
                },
                _ => {}
            }
        }
        if name == "publish" && def.kind == ast::NodeKind::Agent {
            publish.get_or_insert_with(empty_publish);
        }
    }
    if n.params.len() >= 2 && !combine_written {
        let at = |span: Span| Span::new(span.file, span.start as usize..span.start as usize);
        let insert = match def.blocks.iter().find(|b| b.name.name == "inputs") {
            Some(block) => block
                .entries
                .first()
                .map(|entry| CombineAt::InInputs(at(entry.key.span))),
            None => def
                .blocks
                .first()
                .map(|block| CombineAt::NewBlock(at(block.span))),
        };
        cx.report(NodeError::NoCombine {
            span: def.name.span,
            node: def.name.name.to_string(),
            inputs: n.params.len(),
            insert,
        });
    }
    if !output_stage.on_failure.is_empty() || output_stage.raw_parse.is_some() {
        // nothing more to check here
    }
    check_raw(cx, def, &output_stage);
    check_max_answer(cx, &n, &config, max_answer_span);
    check_accepts(cx, &config, input.builder, model_span, &fallbacks);
    if let (Some(max_cost), Some(span)) = (&budget.max_cost, max_cost_span) {
        check_budget_currency(cx, &config, max_cost, span, &fallbacks);
    }
    let mut delegates = Vec::new();
    let mut body = None;
    let has_body = !def.body.is_empty();
    if has_body {
        (delegates, body) = check_body(cx, &n);
    }
    let model_call = match (&body, &config.model) {
        (Some(b), Some(_)) => model_call(cx, &n, &b.expr),
        _ => None,
    };
    // A prompt shared by nodes with the same parameters is checked (and lowered) once.
    let template = config.prompt.clone().and_then(|prompt| {
        let key = (module, prompt.clone());
        if let Some((_, done)) = cx
            .checked_prompts
            .get(&key)
            .and_then(|seen| seen.iter().find(|(params, _)| *params == n.params))
        {
            return done.clone();
        }
        let done = super::template::check_prompt(cx, module, &prompt, &n.params, &n.def.params)
            // Checked either way; kept only for emission and running (`CheckInput::lean`).
            .filter(|_| !cx.input.lean);
        cx.checked_prompts
            .entry(key)
            .or_default()
            .push((n.params.clone(), done.clone()));
        done
    });
    let module_path = cx.module_path(module);
    let streams: Vec<Option<u32>> = n
        .params
        .iter()
        .map(|(name, _)| stream_of(cx, module, def, name))
        .collect();
    cx.out.nodes.push(ir::NodeIr {
        name: def.name.name.to_string(),
        module: module_path,
        kind: match def.kind {
            ast::NodeKind::Node => ir::NodeKind::Node,
            ast::NodeKind::Agent => ir::NodeKind::Agent,
        },
        docs: cx.docs(&item.docs),
        params: n
            .params
            .iter()
            .zip(streams)
            .map(|((name, ty), stream)| ir::Param {
                name: name.clone(),
                ty: ty.clone(),
                raw: false,
                stream,
            })
            .collect(),
        output: n.output.clone(),
        fails: n.fails.map(ir::ErrorSetId),
        config,
        input,
        output_stage,
        inputs,
        budget,
        publish,
        delegates: delegates.into_iter().map(ir::NodeId).collect(),
        has_body,
        // Checked either way; kept only for emission and running (`CheckInput::lean`).
        body: body.filter(|_| !cx.input.lean),
        model_call,
        template,
    });
}

/// The extern fn that stands for the node's model call in its body (spec §12, the seed's
/// `return write_review(request);`): the first extern fn the body calls whose parameter types
/// are the node's, in order, and which returns the node's output type.
fn model_call(
    cx: &Cx<'_, '_>,
    n: &NodeCx<'_>,
    body: &aelc_runtime::expr::Expr,
) -> Option<ir::FnId> {
    let mut calls = Vec::new();
    body.callees(&mut calls);
    calls.into_iter().find_map(|call| {
        let aelc_runtime::expr::Callee::Extern(f) = call else {
            return None;
        };
        let sig = cx.fn_sigs.get(f.0 as usize)?.as_ref()?;
        let same_params = sig.params.len() == n.params.len()
            && sig.params.iter().zip(&n.params).all(|(a, b)| a.1 == b.1);
        (sig.is_extern && same_params && sig.ret.as_ref() == Some(&n.output)).then_some(f)
    })
}

fn empty_publish() -> ir::Publish {
    ir::Publish {
        capability: None,
        price: None,
        examples: None,
    }
}

fn wrong_value(cx: &mut Cx<'_, '_>, span: Span, key: &str, expected: Expected) {
    cx.report(NodeError::WrongValue {
        span,
        key: key.to_owned(),
        expected,
    });
}

fn lit_of(arg: Option<&ast::Expr>) -> Option<&LitKind> {
    match arg.map(|a| &a.kind) {
        Some(ExprKind::Lit(l)) => Some(&l.kind),
        _ => None,
    }
}

fn size_arg(arg: Option<&ast::Expr>) -> Option<u64> {
    match lit_of(arg)? {
        LitKind::Size { value, unit } => value.checked_mul(unit.bytes()),
        _ => None,
    }
}

fn duration_arg(arg: Option<&ast::Expr>) -> Option<u64> {
    match lit_of(arg)? {
        LitKind::Duration { value, unit } => value.checked_mul(unit.millis()),
        _ => None,
    }
}

fn money_arg(arg: Option<&ast::Expr>) -> Option<ir::Money> {
    match lit_of(arg)? {
        LitKind::Money { amount, currency } => Some(ir::Money {
            amount: amount.to_string(),
            currency: currency.to_string(),
        }),
        _ => None,
    }
}

fn str_arg(arg: Option<&ast::Expr>) -> Option<String> {
    match lit_of(arg)? {
        LitKind::Str { value, .. } => Some(value.to_string()),
        _ => None,
    }
}

fn path_word(arg: Option<&ast::Expr>) -> Option<String> {
    match arg.map(|a| &a.kind) {
        Some(ExprKind::Path(p)) => Some(p.to_text()),
        _ => None,
    }
}

/// `name("text")`: the string argument of a call of `name`.
fn call_str<'e>(arg: Option<&'e ast::Expr>, name: &str) -> Option<(&'e str, Span)> {
    let Some(ExprKind::Call { callee, args }) = arg.map(|a| &a.kind) else {
        return None;
    };
    if callee.to_text() != name {
        return None;
    }
    match &args[..] {
        [ast::Expr {
            kind:
                ExprKind::Lit(ast::Literal {
                    kind: LitKind::Str { value, .. },
                    span,
                }),
            ..
        }] => Some((&**value, *span)),
        _ => None,
    }
}

fn file_arg(cx: &mut Cx<'_, '_>, arg: Option<&ast::Expr>, span: Span) -> Option<String> {
    let Some((path, pspan)) = call_str(arg, "file") else {
        wrong_value(cx, span, "prompt", Expected::PromptFile);
        return None;
    };
    cx.refer(pspan, || Symbol::File(path.into()));
    if !cx.input.files.exists(path) {
        cx.report(NodeError::NoFile {
            span: pspan,
            path: path.to_owned(),
        });
        return None;
    }
    Some(path.to_owned())
}

/// `binding("name")`, which must be declared in `ael.toml`.
fn binding_arg(cx: &mut Cx<'_, '_>, arg: Option<&ast::Expr>, span: Span) -> Option<String> {
    let Some((name, bspan)) = call_str(arg, "binding") else {
        wrong_value(cx, span, "model", Expected::Binding);
        return None;
    };
    check_binding(cx, name, bspan).then(|| name.to_owned())
}

fn check_binding(cx: &mut Cx<'_, '_>, name: &str, span: Span) -> bool {
    let Some(project) = cx.input.project else {
        cx.report(NameError::BindingWithoutProject {
            span,
            name: name.to_owned(),
        });
        return false;
    };
    if project.bindings.iter().any(|b| b.name == name) {
        cx.refer(span, || Symbol::Binding(name.into()));
        return true;
    }
    let suggestion = did_you_mean(name, project.bindings.iter().map(|b| b.name.as_str()));
    cx.report(NameError::UnknownBinding {
        span,
        name: name.to_owned(),
        suggestion: suggestion.map(str::to_owned),
        plain: span.end as usize - span.start as usize == name.len() + 2,
    });
    false
}

fn item_arg(
    cx: &mut Cx<'_, '_>,
    module: usize,
    arg: Option<&ast::Expr>,
    span: Span,
    want: &str,
    accept: fn(ItemRef) -> bool,
) -> Option<ItemRef> {
    let Some(ExprKind::Path(path)) = arg.map(|a| &a.kind) else {
        let expected = Expected::NameOf {
            want: want.to_owned(),
        };
        wrong_value(cx, span, want, expected);
        return None;
    };
    match cx.lookup(module, path) {
        Some(r) if accept(r) => Some(r),
        Some(r) => {
            cx.report(NameError::WrongItem {
                span: path.span(),
                path: path.to_text(),
                noun: r.noun(),
                want: want.to_owned(),
            });
            None
        }
        None => {
            cx.unknown(
                "E0205",
                module,
                path,
                want.trim_start_matches("a ").trim_start_matches("an "),
                accept,
                &[],
            );
            None
        }
    }
}

fn describe_ty(cx: &Cx<'_, '_>, ty: &Ty) -> String {
    STy::of(ty, &cx.table).describe(&cx.table)
}

/// Input checks take node parameters; output checks take the output first, then parameters.
fn wire_check(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    arg: Option<&ast::Expr>,
    span: Span,
    output: bool,
) -> Option<u32> {
    let Some(ItemRef::Check(id)) = item_arg(cx, n.module, arg, span, "a check", |r| {
        matches!(r, ItemRef::Check(_))
    }) else {
        return None;
    };
    let params = cx
        .out
        .checks
        .get(id as usize)
        .map(|c| c.params.clone())
        .unwrap_or_default();
    let mut rest = params.as_slice();
    let what = if output { "output" } else { "input" };
    if output {
        match params.first() {
            Some(first) if first.ty == n.output => rest = params.get(1..).unwrap_or(&[]),
            _ => {
                let want = describe_ty(cx, &n.output);
                cx.report(NodeError::OutputCheckFirst {
                    span: arg.map_or(span, |a| a.span),
                    output: want,
                });
                return None;
            }
        }
    }
    for p in rest {
        let matches = n
            .params
            .iter()
            .any(|(name, ty)| *name == p.name && *ty == p.ty)
            || n.params.iter().any(|(_, ty)| *ty == p.ty);
        if !matches {
            let ty = describe_ty(cx, &p.ty);
            cx.report(NodeError::CheckParam {
                span: arg.map_or(span, |a| a.span),
                param: p.name.clone(),
                ty,
                what,
            });
            return None;
        }
    }
    // Its failure codes must be the node's.
    let check_fails = cx.out.checks.get(id as usize).and_then(|c| c.fails);
    if let (Some(cf), Some(nf)) = (check_fails, n.fails) {
        if cf.0 != nf {
            let names = super::items::code_names(cx, cf.0);
            let node_codes = super::items::code_names(cx, nf);
            if let Some(missing) = names.iter().find(|c| !node_codes.contains(c)) {
                cx.report(NodeError::CheckCode {
                    span: arg.map_or(span, |a| a.span),
                    code: missing.clone(),
                });
            }
        }
    }
    Some(id)
}

fn wire_builder(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    arg: Option<&ast::Expr>,
    span: Span,
) -> Option<u32> {
    let Some(ItemRef::Builder(id)) = item_arg(cx, n.module, arg, span, "a builder", |r| {
        matches!(r, ItemRef::Builder(_))
    }) else {
        return None;
    };
    let params = cx
        .out
        .builders
        .get(id as usize)
        .map(|b| b.params.clone())
        .unwrap_or_default();
    let same = params.len() == n.params.len()
        && params.iter().zip(&n.params).all(|(p, (_, t))| p.ty == *t);
    if !same {
        cx.report(NodeError::BuilderParams {
            span: arg.map_or(span, |a| a.span),
        });
        return None;
    }
    Some(id)
}

fn wire_transform(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    arg: Option<&ast::Expr>,
    span: Span,
) -> Option<u32> {
    let Some(ItemRef::Fn(id)) = item_arg(cx, n.module, arg, span, "a fn", |r| {
        matches!(r, ItemRef::Fn(_))
    }) else {
        return None;
    };
    let sig = cx.fn_sigs.get(id as usize).cloned().flatten()?;
    let ok = matches!(sig.params.as_slice(), [(_, t)] if *t == n.output)
        && sig.ret.as_ref() == Some(&n.output);
    if !ok {
        let want = describe_ty(cx, &n.output);
        cx.report(NodeError::Transform {
            span: arg.map_or(span, |a| a.span),
            output: want,
        });
        return None;
    }
    Some(id)
}

fn wire_parse(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    arg: Option<&ast::Expr>,
    span: Span,
) -> Option<u32> {
    let Some(ItemRef::Fn(id)) = item_arg(cx, n.module, arg, span, "a fn", |r| {
        matches!(r, ItemRef::Fn(_))
    }) else {
        return None;
    };
    let sig = cx.fn_sigs.get(id as usize).cloned().flatten()?;
    let ok = sig.is_extern
        && sig.param_special.as_slice() == [Some(Special::Raw)]
        && sig.ret.as_ref() == Some(&n.output);
    if !ok {
        let want = describe_ty(cx, &n.output);
        cx.report(NodeError::RawParser {
            span: arg.map_or(span, |a| a.span),
            output: want,
        });
        return None;
    }
    Some(id)
}

fn check_raw(cx: &mut Cx<'_, '_>, def: &ast::NodeDef, stage: &ir::OutputStage) {
    let mut raw = None;
    let mut parse = None;
    for b in def.blocks.iter().filter(|b| b.name.name == "output") {
        for e in &b.entries {
            match e.key.name.as_str() {
                "raw" => raw = Some(e.span),
                "parse" => parse = Some(e.span),
                _ => {}
            }
        }
    }
    match (raw, parse) {
        (Some(span), None) => cx.report(NodeError::RawWithoutParse { span }),
        (None, Some(span)) if stage.raw_parse.is_some() => {
            cx.report(NodeError::ParseWithoutRaw { span })
        }
        _ => {}
    }
}

fn policies(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    entry: &ast::Entry,
    fallbacks: &mut Vec<(String, Span)>,
) -> Vec<ir::Policy> {
    let mut out = Vec::new();
    let count = entry.args.len();
    for (i, arg) in entry.args.iter().enumerate() {
        let ExprKind::Call { callee, args } = &arg.value.kind else {
            wrong_value(cx, arg.span, "on_failure", Expected::Policy);
            continue;
        };
        let name = callee.to_text();
        let times = |args: &[ast::Expr]| match args {
            [ast::Expr {
                kind:
                    ExprKind::Lit(ast::Literal {
                        kind: LitKind::Int(v),
                        ..
                    }),
                ..
            }] if *v >= 1 && *v <= 100 => Some(*v as u32),
            _ => None,
        };
        match name.as_str() {
            "retry" | "repair" => match times(args) {
                Some(t) if name == "retry" => out.push(ir::Policy::Retry { times: t }),
                Some(t) => out.push(ir::Policy::Repair { times: t }),
                None => wrong_value(cx, arg.span, &name, Expected::Times),
            },
            "fallback" => match call_str(args.first(), "binding") {
                Some((b, span)) if args.len() == 1 => {
                    if check_binding(cx, b, span) {
                        fallbacks.push((b.to_owned(), span));
                        out.push(ir::Policy::Fallback {
                            binding: b.to_owned(),
                        });
                    }
                }
                _ => wrong_value(cx, arg.span, "fallback", Expected::Fallback),
            },
            "fail" => {
                let code = match &args[..] {
                    [ast::Expr {
                        kind: ExprKind::Path(p),
                        ..
                    }] if p.segments.len() == 1 => p.segments.first(),
                    _ => None,
                };
                let Some(code) = code else {
                    wrong_value(cx, arg.span, "fail", Expected::Fail);
                    continue;
                };
                if i + 1 != count {
                    cx.report(NodeError::FailNotLast { span: arg.span });
                }
                check_code(
                    cx,
                    n.fails,
                    n.def.fails.is_some(),
                    code,
                    &format!("node `{}`", n.def.name.name),
                );
                out.push(ir::Policy::Fail {
                    code: code.name.to_string(),
                });
            }
            other => {
                let known = super::blocks::POLICIES.iter().map(|(name, _)| *name);
                cx.report(NodeError::UnknownPolicy {
                    span: callee.span(),
                    policy: other.to_owned(),
                    suggestion: did_you_mean(other, known).map(str::to_owned),
                });
            }
        }
    }
    out
}

fn fresh_entries(cx: &mut Cx<'_, '_>, n: &NodeCx<'_>, entry: &ast::Entry) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for arg in &entry.args {
        let (ExprKind::Path(p), Some(q)) = (&arg.value.kind, &arg.qualifier) else {
            wrong_value(cx, arg.span, "fresh", Expected::FreshEntry);
            continue;
        };
        let name = p.to_text();
        if !n.params.iter().any(|(pn, _)| *pn == name) {
            let suggestion = did_you_mean(&name, n.params.iter().map(|(pn, _)| pn.as_str()));
            cx.report(NodeError::NotAParam {
                span: p.span(),
                name: name.clone(),
                node: n.def.name.name.to_string(),
                suggestion: suggestion.map(str::to_owned),
            });
            continue;
        }
        match &q.kind {
            LitKind::Duration { value, unit } => {
                out.push((name, value.saturating_mul(unit.millis())))
            }
            _ => wrong_value(cx, q.span, "fresh", Expected::FreshDuration),
        }
    }
    out
}

fn check_max_answer(
    cx: &mut Cx<'_, '_>,
    n: &NodeCx<'_>,
    config: &ir::NodeConfig,
    span: Option<Span>,
) {
    let (Some(span), true) = (span, config.max_answer_explicit) else {
        return;
    };
    let largest = size::default_max_answer(&n.output, &cx.table);
    if config.max_answer < largest {
        cx.report(NodeError::MaxAnswer {
            span,
            max_answer: config.max_answer,
            largest,
            below: true,
        });
    } else if config.max_answer / FAR_ABOVE > largest {
        cx.report(NodeError::MaxAnswer {
            span,
            max_answer: config.max_answer,
            largest,
            below: false,
        });
    }
}

/// A budget's `max_cost` and the prices of the bindings the node may call are in one currency:
/// money is never converted, so a reservation in another currency could not be compared.
fn check_budget_currency(
    cx: &mut Cx<'_, '_>,
    config: &ir::NodeConfig,
    max_cost: &ir::Money,
    span: Span,
    fallbacks: &[(String, Span)],
) {
    let Some(project) = cx.input.project else {
        return;
    };
    let targets = config
        .model
        .iter()
        .chain(fallbacks.iter().map(|(name, _)| name));
    let mut reported = Vec::new();
    for name in targets {
        let Some(price) = project
            .bindings
            .iter()
            .find(|b| &b.name == name)
            .and_then(|b| b.price.as_ref())
        else {
            continue;
        };
        if price.currency == max_cost.currency || reported.contains(name) {
            continue;
        }
        reported.push(name.clone());
        cx.report(NodeError::Currency {
            span,
            binding: name.clone(),
            price: price.currency.clone(),
            amount: max_cost.amount.clone(),
            currency: max_cost.currency.clone(),
        });
    }
}

/// A builder's media parts must be accepted by every binding the node may call.
fn check_accepts(
    cx: &mut Cx<'_, '_>,
    config: &ir::NodeConfig,
    builder: Option<ir::BuilderId>,
    model_span: Option<Span>,
    fallbacks: &[(String, Span)],
) {
    let (Some(project), Some(builder)) = (cx.input.project, builder) else {
        return;
    };
    let kinds = cx
        .out
        .builders
        .get(builder.0 as usize)
        .map(|b| b.part_kinds.clone())
        .unwrap_or_default();
    let mut targets: Vec<(String, Span)> = fallbacks.to_vec();
    if let (Some(m), Some(s)) = (&config.model, model_span) {
        targets.insert(0, (m.clone(), s));
    }
    for (binding, span) in targets {
        let Some(b) = project.bindings.iter().find(|b| b.name == binding) else {
            continue;
        };
        for kind in &kinds {
            let needed = if kind == "system" {
                "text"
            } else {
                kind.as_str()
            };
            if !b.accepts.iter().any(|a| a.as_str() == needed) {
                cx.report(NodeError::Accepts {
                    span,
                    binding: binding.clone(),
                    needed: needed.to_owned(),
                    kind: kind.clone(),
                });
            }
        }
    }
}

/// Checks a node body; returns the nodes it calls and its lowering (delegated calls are
/// `Expr::CallNode`).
fn check_body(cx: &mut Cx<'_, '_>, n: &NodeCx<'_>) -> (Vec<u32>, Option<ir::NodeBody>) {
    let mut ecx = ExprCx::new(cx, n.module);
    ecx.allow_node_calls = true;
    ecx.bind_params(&n.params, &n.def.params);
    let mut returned = None;
    let mut lets = Vec::new();
    for stmt in &n.def.body {
        match stmt {
            ast::Stmt::Let {
                name,
                ty,
                value,
                span,
            } => {
                let (t, x) = ecx.let_value(ty.as_ref(), value);
                let slot = ecx.bind_declared(name, *span, SymbolKind::Local, ty.as_ref(), t);
                if returned.is_none() {
                    lets.push((slot, x));
                }
            }
            ast::Stmt::Return { value, span } => {
                if returned.is_some() {
                    ecx.cx.report(ExprError::AfterReturn { span: *span });
                }
                let x = ecx.expr_against(value, &n.output);
                returned.get_or_insert(x);
            }
        }
    }
    if returned.is_none() {
        ecx.cx.report(ExprError::NoReturn {
            span: n.def.name.span,
        });
    }
    let locals = ecx.locals_used();
    let mut calls = std::mem::take(&mut ecx.node_calls);
    calls.sort_unstable();
    calls.dedup();
    let body = returned.map(|mut x| {
        for (slot, v) in lets.into_iter().rev() {
            x = aelc_runtime::expr::Expr::Let {
                slot: aelc_runtime::expr::Slot(slot),
                value: Box::new(v),
                body: Box::new(x),
            };
        }
        ir::NodeBody { locals, expr: x }
    });
    (calls, body)
}
