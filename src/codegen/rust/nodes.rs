//! The glue's behaviour: `errors` enums, `mod externs` (a trait per AEL module with its
//! `extern fn`s and `extern check`s, and the runtime's dispatch to them), the embedded
//! program, and one module per node (decoder and runs).

use std::fmt::Write as _;

use super::names::field_ident;
use super::types::{field_item, raw_str, str_lit};
use super::{docs, names, submodule, Gen};
use crate::ir::{CheckIr, FnIr, NodeIr, Program};

const WIDTH: usize = 100;

/// The `extern fn`s the author writes in Rust, with their ids: all but the ones that stand
/// for a node's model call, which the executor answers (`rt::answers_fn`).
pub(super) fn rust_fns(program: &Program) -> impl Iterator<Item = (usize, &FnIr)> {
    program.fns.iter().enumerate().filter(move |(i, _)| {
        aelc_runtime::glue::answers_fn(program, aelc_runtime::glue::FnId(*i as u32))
    })
}

/// A signature on one line, or one parameter per line as rustfmt writes a long one.
fn signature(indent: &str, head: &str, params: &[String], tail: &str) -> String {
    let one = format!("{indent}{head}({}){tail}", params.join(", "));
    if one.len() <= WIDTH {
        return format!("{one}\n");
    }
    let mut out = format!("{indent}{head}(\n");
    for p in params {
        let _ = writeln!(out, "{indent}    {p},");
    }
    let _ = writeln!(out, "{indent}){tail}");
    out
}

impl Gen<'_> {
    /// One enum per `errors` set, with `rt::ErrorCode`.
    pub(super) fn error_items(&mut self, out: &mut String) {
        for (i, set) in self.program.errors.iter().enumerate() {
            let name = &self.naming.errors[i];
            out.push('\n');
            docs(out, "", set.docs.as_deref());
            out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n");
            let _ = writeln!(out, "pub enum {name} {{");
            for c in &set.codes {
                docs(out, "    ", c.docs.as_deref());
                let _ = writeln!(out, "    {},", names::type_name(&c.name));
            }
            out.push_str("}\n\n");
            let _ = writeln!(out, "impl rt::ErrorCode for {name} {{");
            out.push_str("    fn as_str(&self) -> &'static str {\n");
            if set.codes.is_empty() {
                out.push_str("        match *self {}\n");
            } else {
                out.push_str("        match self {\n");
                for c in &set.codes {
                    let _ = writeln!(
                        out,
                        "            {name}::{} => {},",
                        names::type_name(&c.name),
                        str_lit(&c.name)
                    );
                }
                out.push_str("        }\n");
            }
            out.push_str("    }\n}\n");
        }
    }

    /// The name of the context parameter: `ctx`, unless a parameter is named so.
    fn ctx_name(params: &[crate::ir::Param]) -> String {
        let mut name = "ctx".to_owned();
        while params.iter().any(|p| field_ident(&p.name) == name) {
            name.push('_');
        }
        name
    }

    fn extern_fn_sig(&mut self, f: &FnIr) -> String {
        let ctx = Self::ctx_name(&f.params);
        let mut params = vec![
            "&mut self".to_owned(),
            format!("{ctx}: &mut rt::Context<'_>"),
        ];
        for p in &f.params {
            let owner = names::camel(&format!("{}_{}", f.name, p.name));
            let t = self.ty(&p.ty, &owner, "super::", None);
            params.push(format!("{}: {t}", field_ident(&p.name)));
        }
        let ret = match &f.ret {
            Some(t) => self.ty(
                t,
                &names::camel(&format!("{}_out", f.name)),
                "super::",
                None,
            ),
            None => "rt::Value".to_owned(),
        };
        let head = format!("fn {}", field_ident(&f.name));
        let mut out = String::new();
        docs(&mut out, "    ", f.docs.as_deref());
        out.push_str(&signature(
            "    ",
            &head,
            &params,
            &format!(" -> Result<{ret}, rt::Error>;"),
        ));
        out
    }

    fn extern_check_sig(&mut self, c: &CheckIr) -> String {
        let ctx = Self::ctx_name(&c.params);
        let mut params = vec![
            "&mut self".to_owned(),
            format!("{ctx}: &mut rt::Context<'_>"),
        ];
        for p in &c.params {
            let owner = names::camel(&format!("{}_{}", c.name, p.name));
            let t = self.ty(&p.ty, &owner, "super::", None);
            params.push(format!("{}: &{t}", field_ident(&p.name)));
        }
        let code = self.check_code_ty(c);
        let head = format!("fn {}", field_ident(&c.name));
        let mut out = String::new();
        docs(&mut out, "    ", c.docs.as_deref());
        out.push_str(&signature(
            "    ",
            &head,
            &params,
            &format!(" -> rt::CheckResult<{code}>;"),
        ));
        out
    }

    fn check_code_ty(&self, c: &CheckIr) -> String {
        c.fails
            .and_then(|e| self.naming.errors.get(e.0 as usize))
            .map(|n| format!("super::{n}"))
            .unwrap_or_else(|| "rt::NoCode".to_owned())
    }

    /// `mod externs`: the traits, `All`, and `Host`, the runtime's way to call them.
    pub(super) fn externs_module(&mut self) -> String {
        let program = self.program;
        let mut body = String::new();
        let traits = self.naming.traits.clone();
        for (module, trait_name) in &traits {
            let _ = writeln!(
                body,
                "/// The `extern fn`s and `extern check`s of `{module}`."
            );
            let _ = writeln!(body, "pub trait {trait_name} {{");
            let mut items = Vec::new();
            for (_, f) in rust_fns(program).filter(|(_, f)| &f.module == module) {
                items.push(self.extern_fn_sig(f));
            }
            for c in program
                .checks
                .iter()
                .filter(|c| c.is_extern && &c.module == module)
            {
                items.push(self.extern_check_sig(c));
            }
            body.push_str(&items.join("\n"));
            body.push_str("}\n\n");
        }
        body.push_str(
            "/// Everything the project's externs need: implement each module's trait.\n",
        );
        if traits.is_empty() {
            body.push_str("pub trait All {}\n\nimpl<T> All for T {}\n\n");
        } else {
            let bounds: Vec<&str> = traits.values().map(String::as_str).collect();
            let _ = writeln!(body, "pub trait All: {} {{}}\n", bounds.join(" + "));
            let _ = writeln!(body, "impl<T: {}> All for T {{}}\n", bounds.join(" + "));
        }
        body.push_str(
            "/// The executor's way to call an implementation of [`All`], by the program's ids.\npub struct Host<'h, H>(pub &'h mut H);\n\n",
        );
        body.push_str("impl<H: All> rt::NodeGlue for Host<'_, H> {\n");
        body.push_str(
            "    fn has_fn(&self, func: rt::FnId) -> bool {\n        rt::answers_fn(super::program(), func)\n    }\n\n",
        );
        body.push_str(&self.dispatch_fns());
        body.push('\n');
        body.push_str(
            "    fn has_check(&self, check: u32) -> bool {\n        rt::answers_check(super::program(), check)\n    }\n",
        );
        body.push('\n');
        body.push_str(&self.dispatch_checks());
        body.push_str("}\n");
        submodule(
            "/// The Rust side of the project: what its `extern fn`s and `extern check`s need.",
            "externs",
            &body,
        )
    }

    fn dispatch_fns(&mut self) -> String {
        let program = self.program;
        let externs: Vec<(usize, &FnIr)> = rust_fns(program).collect();
        let mut out = String::new();
        out.push_str("    fn call_fn(\n        &mut self,\n");
        let any_params = externs.iter().any(|(_, f)| !f.params.is_empty());
        if externs.is_empty() {
            out.push_str("        _ctx: &mut rt::Context<'_>,\n        func: rt::FnId,\n        _args: &[rt::Value],\n");
            out.push_str("    ) -> Result<rt::Value, rt::Error> {\n");
            out.push_str("        Err(rt::unknown_extern(func.0))\n    }\n");
            return out;
        }
        out.push_str("        ctx: &mut rt::Context<'_>,\n        func: rt::FnId,\n        args: &[rt::Value],\n");
        out.push_str("    ) -> Result<rt::Value, rt::Error> {\n");
        if any_params {
            out.push_str("        let mut args = args.iter().cloned();\n");
        } else {
            out.push_str("        let _ = args;\n");
        }
        out.push_str("        match func.0 {\n");
        for (id, f) in externs {
            let trait_name = self
                .naming
                .traits
                .get(&f.module)
                .cloned()
                .unwrap_or_default();
            let _ = writeln!(out, "            {id} => {{");
            let mut call_args = vec!["&mut *self.0".to_owned(), "ctx".to_owned()];
            for p in &f.params {
                let _ = writeln!(
                    out,
                    "                let {} = rt::field(&mut args, {})?;",
                    field_ident(&p.name),
                    str_lit(&p.name)
                );
                call_args.push(field_ident(&p.name));
            }
            let call = format!(
                "<H as {trait_name}>::{}({})",
                field_ident(&f.name),
                call_args.join(", ")
            );
            let line = format!("                let out = {call}?;");
            if line.len() <= WIDTH {
                let _ = writeln!(out, "{line}");
            } else {
                let _ = writeln!(
                    out,
                    "                let out = <H as {trait_name}>::{}(",
                    field_ident(&f.name)
                );
                for a in &call_args {
                    let _ = writeln!(out, "                    {a},");
                }
                out.push_str("                )?;\n");
            }
            out.push_str("                Ok(rt::Glue::to_value(&out))\n            }\n");
        }
        out.push_str("            _ => Err(rt::unknown_extern(func.0)),\n        }\n    }\n");
        out
    }

    fn dispatch_checks(&mut self) -> String {
        let program = self.program;
        let externs: Vec<(usize, &CheckIr)> = program
            .checks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_extern)
            .collect();
        let mut out = String::new();
        out.push_str("    fn call_check(\n        &mut self,\n");
        if externs.is_empty() {
            out.push_str("        _ctx: &mut rt::Context<'_>,\n        check: u32,\n        _args: &[&rt::Value],\n");
            out.push_str("    ) -> Result<rt::CheckVerdict, rt::Error> {\n");
            out.push_str("        Err(rt::unknown_check(check))\n    }\n");
            return out;
        }
        out.push_str("        ctx: &mut rt::Context<'_>,\n        check: u32,\n        args: &[&rt::Value],\n");
        out.push_str("    ) -> Result<rt::CheckVerdict, rt::Error> {\n");
        out.push_str("        match check {\n");
        for (id, c) in externs {
            let trait_name = self
                .naming
                .traits
                .get(&c.module)
                .cloned()
                .unwrap_or_default();
            let _ = writeln!(out, "            {id} => {{");
            let mut call_args = vec!["&mut *self.0".to_owned(), "ctx".to_owned()];
            for (i, p) in c.params.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "                let {} = rt::arg(args, {i}, {})?;",
                    field_ident(&p.name),
                    str_lit(&p.name)
                );
                call_args.push(format!("&{}", field_ident(&p.name)));
            }
            let call = format!(
                "<H as {trait_name}>::{}({})",
                field_ident(&c.name),
                call_args.join(", ")
            );
            let line = format!("                rt::check_answer({call})");
            if line.len() <= WIDTH {
                let _ = writeln!(out, "{line}");
            } else {
                let _ = writeln!(
                    out,
                    "                rt::check_answer(<H as {trait_name}>::{}(",
                    field_ident(&c.name)
                );
                for a in &call_args {
                    let _ = writeln!(out, "                    {a},");
                }
                out.push_str("                ))\n");
            }
            out.push_str("            }\n");
        }
        out.push_str("            _ => Err(rt::unknown_check(check)),\n        }\n    }\n");
        out
    }

    /// `PROGRAM_JSON`, `SCHEMAS_JSON`, `SHARED_JSON`, `program()` and `executor()`.
    ///
    /// The two texts hold each repeated subtree once, in `SHARED_JSON` (`rust/shared.rs`);
    /// expanded, they are the program and the embedded schemas' compact JSON (`rust/schemas.rs`:
    /// the documents, whose model-facing variants the runtime derives), which is checked here:
    /// a text that would not come back whole is embedded whole.
    pub(super) fn program_items(&self) -> String {
        let exec = super::schemas::embedded(self.program);
        let program = serde_json::to_value(self.program).unwrap_or_default();
        let schemas = serde_json::to_value(&exec).unwrap_or_default();
        let plain = [
            serde_json::to_string(self.program).unwrap_or_else(|_| "{}".to_owned()),
            serde_json::to_string(&exec).unwrap_or_else(|_| "[]".to_owned()),
        ];
        let shared = super::shared::embed(&[&program, &schemas]);
        let whole = shared.texts.len() == plain.len()
            && shared.texts.iter().zip(&plain).all(|(text, plain)| {
                aelc_runtime::glue::expand_shared(text, &shared.pool) == *plain
            });
        let (texts, pool) = if whole {
            (shared.texts, shared.pool)
        } else {
            (plain.to_vec(), String::new())
        };
        let mut out = String::new();
        out.push_str(
            "\n/// The whole program, as `aelc build` writes `ir.json` (compact), its repeated parts\n\
             /// in [`SHARED_JSON`].\n",
        );
        let _ = writeln!(
            out,
            "pub const PROGRAM_JSON: &str = {};",
            raw_str(&texts[0])
        );
        out.push_str(
            "\n/// Every node's output schema as `schemas/` holds it, its named types once (what\n\
             /// `{{ output_schema }}` inserts; the model-facing variants a provider's structured\n\
             /// output is asked for are derived from it), their repeated parts in [`SHARED_JSON`].\n",
        );
        let _ = writeln!(
            out,
            "pub const SCHEMAS_JSON: &str = {};",
            raw_str(&texts[1])
        );
        out.push_str(
            "\n/// Each JSON subtree the two texts above repeat, once a line: a text's\n\
             /// `{\"$shared\":N}` stands for line `N` (`rt::expand_shared`).\n",
        );
        let _ = writeln!(out, "pub const SHARED_JSON: &str = {};", raw_str(&pool));
        out.push_str("\n/// The embedded program, read once.\n");
        out.push_str("pub fn program() -> &'static rt::Program {\n");
        // `::std`: a node module of the glue may be called `std`.
        out.push_str("    static PROGRAM: ::std::sync::OnceLock<rt::Program> = ::std::sync::OnceLock::new();\n");
        out.push_str(
            "    PROGRAM.get_or_init(|| rt::read_program_shared(PROGRAM_JSON, SHARED_JSON))\n}\n",
        );
        out.push_str(
            "\n/// The one executor over the embedded program and schemas, made once (a node's\n\
             /// model-facing variants on its first model call).\n",
        );
        out.push_str("pub fn executor() -> &'static rt::Executor<'static> {\n");
        out.push_str("    static EXECUTOR: ::std::sync::OnceLock<rt::Executor<'static>> = ::std::sync::OnceLock::new();\n");
        out.push_str(
            "    EXECUTOR.get_or_init(|| rt::embedded_executor(program(), SCHEMAS_JSON, SHARED_JSON))\n}\n",
        );
        out
    }

    /// `pub mod <node>`: its input and output types, decoder and runs, written by the
    /// runtime's `glue_node!` from the node's index, prompt file, parameters and output type
    /// (one short call per node rather than the module spelled out: issue 42).
    pub(super) fn node_module(&mut self, index: usize, node: &NodeIr) -> String {
        let name = self.naming.nodes[index].clone();
        let mut out = String::from("\nrt::glue_node! {\n");
        let mut doc = String::new();
        docs(&mut doc, "    ", node.docs.as_deref());
        if doc.is_empty() {
            doc = format!("    /// The node `{}`.\n", node.name);
        }
        out.push_str(&doc);
        let _ = write!(out, "    mod {name} = {index}");
        if let Some(prompt) = &node.config.prompt {
            let _ = write!(out, ", prompt {}", str_lit(prompt));
        }
        out.push_str(";\n");
        let node_camel = names::camel(&node.name);
        if let [p] = node.params.as_slice() {
            let t = self.ty(&p.ty, &format!("{node_camel}Input"), "super::", None);
            let _ = writeln!(out, "    input {}: {t};", str_lit(&p.name));
        } else if node.params.is_empty() {
            out.push_str("    inputs {}\n");
        } else {
            out.push_str("    inputs {\n");
            for (i, p) in node.params.iter().enumerate() {
                let owner = names::camel(&format!("{}_{}", node.name, p.name));
                let t = self.ty(&p.ty, &owner, "super::", None);
                let _ = writeln!(out, "        {i} {}: {t},", field_item(&p.name));
            }
            out.push_str("    }\n");
        }
        let out_ty = self.ty(
            &node.output,
            &format!("{node_camel}Output"),
            "super::",
            None,
        );
        let _ = writeln!(out, "    output {out_ty};\n}}");
        out
    }
}
