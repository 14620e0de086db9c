//! The glue's decoders: `rt::Decode` (and `rt::DecodeFields`) for each generated struct and
//! enum and for a node's `Input` of several parameters, so a document is read straight into
//! the generated types by the runtime's reader and rules (issue 23), with no `Value` between.
//!
//! A struct's fields are read in one pass of `rt::Session::read_fields`, which calls back with
//! each field's index (the program's declaration order, which is the generated order); the
//! runtime reports every error, so the generated code only keeps the slots. A struct's impls
//! (and a node's `Input`'s) are the runtime's `glue_struct!` / `glue_node!`, given the fields
//! by index (`types::field_item`); an enum's are written out here.

use std::fmt::Write as _;

use aelc_runtime::ty::VariantTy;

use super::names::{self, field_ident};

/// rustfmt's widest line.
const WIDTH: usize = 100;

/// rustfmt keeps a struct literal on one line while its fields take at most this many columns
/// (`struct_lit_width`).
const STRUCT_LIT_WIDTH: usize = 18;

const DECODE_SIG: &str = "    fn decode(s: &mut rt::Session<'_>, ty: &rt::Ty, trail: &rt::Trail<'_>) -> rt::Decoded<Self> {\n";

/// `rt::Decode` for the enum `name`: a unit enum from its string, a data enum from its
/// object's tag and then the variant's fields.
pub(super) fn enum_decode(name: &str, variants: &[VariantTy]) -> String {
    let mut out = format!("impl rt::Decode for {name} {{\n{DECODE_SIG}");
    let unit = variants.iter().all(|v| v.fields.is_none());
    if unit {
        out.push_str("        match s.variant(ty, trail)? {\n");
        for (i, v) in variants.iter().enumerate() {
            let rust = names::type_ident(&v.name).unwrap_or_default();
            let _ = writeln!(
                out,
                "            Some(({i}, _, _)) => Ok(Some({name}::{rust})),"
            );
        }
        out.push_str("            Some((i, _, tag)) => s.unknown_variant(i, tag, trail),\n");
        out.push_str("            None => Ok(None),\n        }\n    }\n}\n");
        return out;
    }
    out.push_str(
        "        let Some((variant, fields, tag)) = s.variant(ty, trail)? else {\n            \
         return Ok(None);\n        };\n        match variant {\n",
    );
    for (i, v) in variants.iter().enumerate() {
        let rust = names::type_ident(&v.name).unwrap_or_default();
        let ctor = format!("{name}::{rust}");
        let _ = writeln!(out, "            {i} => {{");
        let idents: Option<Vec<String>> = v
            .fields
            .as_ref()
            .map(|fields| fields.iter().map(|f| field_ident(&f.name)).collect());
        out.push_str(&fields_body("                ", &ctor, idents.as_deref()));
        out.push_str("            }\n");
    }
    out.push_str("            i => s.unknown_variant(i, tag, trail),\n        }\n    }\n}\n");
    out
}

/// The statements that read an object's fields into slots `f0`, `f1`, … and build `ctor`
/// from them; `idents` is `None` for a unit variant (`ctor` alone, no braces).
fn fields_body(indent: &str, ctor: &str, idents: Option<&[String]>) -> String {
    let mut out = String::new();
    let fields = idents.unwrap_or_default();
    if fields.is_empty() {
        let _ = writeln!(
            out,
            "{indent}let ok = s.read_fields(fields, tag, trail, |s, _, fill| s.skip(fill))?;"
        );
        let value = if idents.is_some() {
            format!("{ctor} {{}}")
        } else {
            ctor.to_owned()
        };
        let _ = writeln!(out, "{indent}Ok(ok.then_some({value}))");
        return out;
    }
    for i in 0..fields.len() {
        let _ = writeln!(out, "{indent}let mut f{i} = None;");
    }
    let _ = writeln!(
        out,
        "{indent}let ok = s.read_fields(fields, tag, trail, |s, i, fill| match i {{"
    );
    for i in 0..fields.len() {
        let _ = writeln!(out, "{indent}    {i} => s.fill(&mut f{i}, fill),");
    }
    let _ = writeln!(out, "{indent}    _ => s.skip(fill),\n{indent}}})?;");
    let _ = writeln!(
        out,
        "{indent}if !ok {{\n{indent}    return Ok(None);\n{indent}}}"
    );
    for i in 0..fields.len() {
        let _ = writeln!(
            out,
            "{indent}let Some(f{i}) = f{i} else {{ return Ok(None) }};"
        );
    }
    let inits: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(i, ident)| format!("{ident}: f{i}"))
        .collect();
    let inner = inits.join(", ");
    let one = format!("{indent}Ok(Some({ctor} {{ {inner} }}))");
    if inner.len() <= STRUCT_LIT_WIDTH && one.len() <= WIDTH {
        let _ = writeln!(out, "{one}");
    } else {
        let _ = writeln!(out, "{indent}Ok(Some({ctor} {{");
        for init in &inits {
            let _ = writeln!(out, "{indent}    {init},");
        }
        let _ = writeln!(out, "{indent}}}))");
    }
    out
}
