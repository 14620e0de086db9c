//! Rust types for AEL types: type expressions, the struct or enum of each definition, their
//! `Glue` conversions and decoders (`decode.rs`), and the marker types of refined text and floats.

use std::fmt::Write as _;

use aelc_runtime::ty::{DefId, DefKind, FieldTy, FloatKind, FloatTy, IntTy, StrTy, Ty, VariantTy};

use super::{decode, docs, names, Gen};

/// The widest line rustfmt leaves alone.
const WIDTH: usize = 100;

impl Gen<'_> {
    /// The Rust type of `ty`. `prefix` reaches the glue's top level from where the type is
    /// written (`""` or `"super::"`); `owner` names marker types; `within` is the definition
    /// being written, for boxing a recursive `Option`.
    pub(super) fn ty(
        &mut self,
        ty: &Ty,
        owner: &str,
        prefix: &str,
        within: Option<DefId>,
    ) -> String {
        match ty {
            Ty::Bool => "bool".to_owned(),
            Ty::Int(it) => int_ty(it),
            Ty::Float(ft) => self.float_ty(ft, owner, prefix),
            Ty::Str(st) => self.str_ty(st, owner, prefix),
            Ty::List(l) => {
                let item = self.ty(&l.item, owner, prefix, within);
                let name = if l.unique { "BoundedSet" } else { "BoundedVec" };
                with_min(&format!("rt::{name}<{item}, {}", l.max), l.min)
            }
            Ty::Map(m) => {
                let key = self.ty(&m.key, &format!("{owner}Key"), prefix, within);
                let value = self.ty(&m.value, owner, prefix, within);
                with_min(&format!("rt::BoundedMap<{key}, {value}, {}", m.max), m.min)
            }
            Ty::Option { some } => {
                let inner = self.ty(some, owner, prefix, within);
                let boxed = match (some.as_ref(), within) {
                    (Ty::Ref { def }, Some(w)) => self.reaches(*def, w),
                    _ => false,
                };
                if boxed {
                    format!("Option<Box<{inner}>>")
                } else {
                    format!("Option<{inner}>")
                }
            }
            Ty::Ref { def } => format!(
                "{prefix}{}",
                self.naming
                    .defs
                    .get(def.0 as usize)
                    .cloned()
                    .unwrap_or_else(|| "rt::Value".to_owned())
            ),
            Ty::Media(_) => "rt::MediaRef".to_owned(),
        }
    }

    /// Whether definition `from` refers (through any path) to `to`.
    fn reaches(&self, from: DefId, to: DefId) -> bool {
        let mut seen = vec![false; self.program.types.defs.len()];
        let mut stack = vec![from];
        while let Some(d) = stack.pop() {
            if d == to {
                return true;
            }
            let Some(slot) = seen.get_mut(d.0 as usize) else {
                continue;
            };
            if std::mem::replace(slot, true) {
                continue;
            }
            if let Some(def) = self.program.types.get(d) {
                let mut refs = Vec::new();
                match &def.kind {
                    DefKind::Struct { fields } => {
                        fields.iter().for_each(|f| refs_of(&f.ty, &mut refs))
                    }
                    DefKind::Enum { variants, .. } => variants
                        .iter()
                        .flat_map(|v| v.fields.iter().flatten())
                        .for_each(|f| refs_of(&f.ty, &mut refs)),
                    DefKind::Alias { ty } => refs_of(ty, &mut refs),
                }
                stack.extend(refs);
            }
        }
        false
    }

    fn str_ty(&mut self, st: &StrTy, owner: &str, prefix: &str) -> String {
        if st.pattern.is_none() && st.format.is_none() {
            return with_min(&format!("rt::BoundedStr<{}", st.max), st.min);
        }
        let mut body = format!("    const MAX: u32 = {};\n", st.max);
        if st.min > 0 {
            body = format!("    const MIN: u32 = {};\n{body}", st.min);
        }
        if let Some(p) = &st.pattern {
            let _ = writeln!(
                body,
                "    const PATTERN: Option<&'static str> = Some({});",
                raw_str(p)
            );
        }
        if let Some(f) = st.format {
            let variant = match f {
                aelc_runtime::ty::Format::Email => "Email",
                aelc_runtime::ty::Format::Uri => "Uri",
                aelc_runtime::ty::Format::Date => "Date",
                aelc_runtime::ty::Format::DateTime => "DateTime",
                aelc_runtime::ty::Format::Uuid => "Uuid",
            };
            let _ = writeln!(
                body,
                "    const FORMAT: Option<rt::Format> = Some(rt::Format::{variant});"
            );
        }
        let name = self.rule(&format!("{owner}Text"), "TextRules", &body);
        format!("rt::RuledStr<{prefix}rules::{name}>")
    }

    fn float_ty(&mut self, ft: &FloatTy, owner: &str, prefix: &str) -> String {
        if ft.min.is_none() && ft.max.is_none() {
            return match ft.kind {
                FloatKind::F64 => "rt::BoundedFloat<rt::AnyF64>".to_owned(),
                FloatKind::F32 => "rt::BoundedFloat<rt::AnyF32>".to_owned(),
            };
        }
        let kind = match ft.kind {
            FloatKind::F64 => "F64",
            FloatKind::F32 => "F32",
        };
        let mut body = format!("    const KIND: rt::FloatKind = rt::FloatKind::{kind};\n");
        for (name, b) in [("MIN", ft.min), ("MAX", ft.max)] {
            if let Some(b) = b {
                let _ = writeln!(
                    body,
                    "    const {name}: Option<(f64, bool)> = Some(({}, {}));",
                    float_lit(b.value),
                    b.exclusive
                );
            }
        }
        let name = self.rule(&format!("{owner}Float"), "FloatRules", &body);
        format!("rt::BoundedFloat<{prefix}rules::{name}>")
    }

    /// A marker type implementing `rules_trait` with `body`, shared by equal rules.
    fn rule(&mut self, hint: &str, rules_trait: &str, body: &str) -> String {
        let key = format!("{rules_trait}\n{body}");
        if let Some(name) = self.rules.get(&key) {
            return name.clone();
        }
        let base = names::camel(hint);
        let mut name = base.clone();
        let mut n = 2;
        while self.rules.values().any(|v| *v == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.rules.insert(key, name.clone());
        self.rule_items.push(format!(
            "pub enum {name} {{}}\n\nimpl rt::{rules_trait} for {name} {{\n{body}}}\n"
        ));
        name
    }

    /// Every type definition: its Rust item and its `Glue` impl.
    pub(super) fn type_items(&mut self, out: &mut String) {
        for (i, def) in self.program.types.defs.iter().enumerate() {
            let id = DefId(i as u32);
            let name = self.naming.defs[i].clone();
            out.push('\n');
            match &def.kind {
                DefKind::Alias { ty } => {
                    docs(out, "", def.docs.as_deref());
                    let t = self.ty(ty, &name, "", Some(id));
                    let _ = writeln!(out, "pub type {name} = {t};");
                }
                DefKind::Struct { fields } => {
                    docs(out, "", def.docs.as_deref());
                    out.push_str(&derive(&["Clone", "Debug", "PartialEq"]));
                    if has_defaults(&def.kind) {
                        out.push_str(&format!("#[serde(crate = \"rt::serde\", {TRY_FROM})]\n"));
                    } else {
                        out.push_str("#[serde(crate = \"rt::serde\", deny_unknown_fields)]\n");
                    }
                    let body = self.fields(fields, &name, "    ", id, "pub ");
                    if body.is_empty() {
                        let _ = writeln!(out, "pub struct {name} {{}}");
                    } else {
                        let _ = write!(out, "pub struct {name} {{\n{body}}}\n");
                    }
                    out.push('\n');
                    let defaults = has_defaults(&def.kind).then_some(i);
                    out.push_str(&struct_glue(&name, fields, defaults));
                }
                DefKind::Enum { tag, variants } => {
                    let unit = variants.iter().all(|v| v.fields.is_none());
                    docs(out, "", def.docs.as_deref());
                    if unit {
                        out.push_str(&derive(&[
                            "Clone",
                            "Copy",
                            "Debug",
                            "PartialEq",
                            "Eq",
                            "PartialOrd",
                            "Ord",
                            "Hash",
                        ]));
                        out.push_str("#[serde(crate = \"rt::serde\")]\n");
                    } else {
                        out.push_str(&derive(&["Clone", "Debug", "PartialEq"]));
                        let rest = if has_defaults(&def.kind) {
                            TRY_FROM
                        } else {
                            "deny_unknown_fields"
                        };
                        let _ = writeln!(
                            out,
                            "#[serde(crate = \"rt::serde\", tag = {}, {rest})]",
                            str_lit(tag)
                        );
                    }
                    let _ = writeln!(out, "pub enum {name} {{");
                    self.variants(out, variants, &name, id);
                    out.push_str("}\n\n");
                    out.push_str(&enum_glue(&name, variants));
                    out.push('\n');
                    out.push_str(&decode::enum_decode(&name, variants));
                    if has_defaults(&def.kind) {
                        out.push('\n');
                        out.push_str(&try_from_json(&name, i));
                    }
                    if unit {
                        out.push('\n');
                        out.push_str(&map_key(&name, variants));
                    }
                }
            }
        }
    }

    /// The variants of an enum, a variant's fields on one line (up to 35 columns of fields)
    /// where rustfmt keeps them so.
    fn variants(&mut self, out: &mut String, variants: &[VariantTy], owner: &str, id: DefId) {
        let mut bodies = Vec::new();
        for v in variants {
            let rust = names::type_ident(&v.name).unwrap_or_default();
            bodies.push(match &v.fields {
                Some(fields) if !fields.is_empty() => {
                    Some(self.fields(fields, &format!("{owner}{rust}"), "        ", id, ""))
                }
                _ => None,
            });
        }
        let one_line = |body: &str| -> Option<String> {
            let lines: Vec<&str> = body.lines().map(str::trim).collect();
            let inner = lines.join(" ");
            let inner = inner.strip_suffix(',').unwrap_or(&inner).to_owned();
            (lines
                .iter()
                .all(|l| !l.starts_with('#') && !l.starts_with("//"))
                && inner.len() <= 35)
                .then_some(inner)
        };
        // rustfmt formats each variant (with its attributes) on its own; when some come out
        // on several lines and some on one, it formats every variant with fields vertically.
        let multi: Vec<bool> = variants
            .iter()
            .zip(&bodies)
            .map(|(v, body)| {
                v.docs.is_some()
                    || names::type_ident(&v.name).as_deref() != Some(v.name.as_str())
                    || body.as_deref().is_some_and(|b| one_line(b).is_none())
            })
            .collect();
        let flat = !(multi.contains(&true) && multi.contains(&false));
        for (v, body) in variants.iter().zip(&bodies) {
            docs(out, "    ", v.docs.as_deref());
            let rust = names::type_ident(&v.name).unwrap_or_default();
            if rust != v.name {
                let _ = writeln!(out, "    #[serde(rename = {})]", str_lit(&v.name));
            }
            match (&v.fields, body) {
                (None, _) => {
                    let _ = writeln!(out, "    {rust},");
                }
                (Some(_), None) => {
                    let _ = writeln!(out, "    {rust} {{}},");
                }
                (Some(_), Some(body)) => match one_line(body).filter(|_| flat) {
                    Some(inner) => {
                        let _ = writeln!(out, "    {rust} {{ {inner} }},");
                    }
                    None => {
                        let _ = write!(out, "    {rust} {{\n{body}    }},\n");
                    }
                },
            }
        }
    }

    /// Field declarations with docs and serde attributes.
    fn fields(
        &mut self,
        fields: &[FieldTy],
        owner: &str,
        indent: &str,
        id: DefId,
        vis: &str,
    ) -> String {
        let mut out = String::new();
        for f in fields {
            docs(&mut out, indent, f.docs.as_deref());
            let rust = names::field_ident(&f.name);
            let field_owner = format!("{owner}_{}", f.name);
            let t = self.ty(&f.ty, &names::camel(&field_owner), "", Some(id));
            let mut attrs = Vec::new();
            if rust.strip_prefix("r#").unwrap_or(&rust) != f.name {
                attrs.push(format!("rename = {}", str_lit(&f.name)));
            }
            // A field with a default needs nothing here: its type deserializes through the
            // runtime decoder, which fills the default in (see `try_from_json`).
            if f.default.is_none() && matches!(f.ty, Ty::Option { .. }) {
                attrs.push("default".to_owned());
                attrs.push("skip_serializing_if = \"Option::is_none\"".to_owned());
            }
            if !attrs.is_empty() {
                let _ = writeln!(out, "{indent}#[serde({})]", attrs.join(", "));
            }
            out.push_str(&wrap_ty(&t, indent, &format!("{vis}{rust}: "), ","));
        }
        out
    }
}

/// The serde attribute of a type whose fields have defaults: it deserializes through the
/// runtime decoder, so the decoder fills the defaults in from the compiled program and no
/// generated code constructs a default value (nothing that could fail, nothing to panic).
const TRY_FROM: &str = "try_from = \"rt::serde_json::Value\"";

/// Whether a field of the definition (or of one of its variants) has a default.
fn has_defaults(kind: &DefKind) -> bool {
    match kind {
        DefKind::Struct { fields } => fields.iter().any(|f| f.default.is_some()),
        DefKind::Enum { variants, .. } => variants
            .iter()
            .flat_map(|v| v.fields.iter().flatten())
            .any(|f| f.default.is_some()),
        DefKind::Alias { .. } => false,
    }
}

/// `TryFrom<serde_json::Value>` through the runtime decoder, for [`TRY_FROM`].
fn try_from_json(name: &str, def: usize) -> String {
    format!(
        "impl TryFrom<rt::serde_json::Value> for {name} {{\n    \
         type Error = rt::DecodeErrors;\n\n    \
         fn try_from(json: rt::serde_json::Value) -> Result<Self, Self::Error> {{\n        \
         rt::from_json(program(), {def}, &json)\n    }}\n}}\n"
    )
}

/// `{indent}{lead}{ty}{tail}\n`, with the type's generic arguments one per line, as rustfmt
/// writes them, when the line is wider than [`WIDTH`] (recursively for an argument that still
/// does not fit).
fn wrap_ty(ty: &str, indent: &str, lead: &str, tail: &str) -> String {
    let line = format!("{indent}{lead}{ty}{tail}\n");
    if line.len() <= WIDTH + 1 {
        return line;
    }
    // A field's type that fits on the next line goes there whole.
    let next = format!("{indent}    {ty}{tail}\n");
    if !lead.is_empty() && next.len() <= WIDTH + 1 {
        return format!("{indent}{}\n{next}", lead.trim_end());
    }
    let Some((head, args)) = generic_args(ty) else {
        return line;
    };
    let inner = format!("{indent}    ");
    let mut out = format!("{indent}{lead}{head}<\n");
    for a in args {
        out.push_str(&wrap_ty(a, &inner, "", ","));
    }
    out.push_str(&format!("{indent}>{tail}\n"));
    out
}

/// `Head<a, b<c, d>, e>` → `("Head", ["a", "b<c, d>", "e"])`.
fn generic_args(ty: &str) -> Option<(&str, Vec<&str>)> {
    let open = ty.find('<')?;
    let inner = ty.get(open + 1..)?.strip_suffix('>')?;
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '{' | '(' => depth += 1,
            '>' | '}' | ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim());
    Some((&ty[..open], args))
}

fn refs_of(ty: &Ty, out: &mut Vec<DefId>) {
    match ty {
        Ty::Ref { def } => out.push(*def),
        Ty::List(l) => refs_of(&l.item, out),
        Ty::Map(m) => {
            refs_of(&m.key, out);
            refs_of(&m.value, out);
        }
        Ty::Option { some } => refs_of(some, out),
        _ => {}
    }
}

fn is_plain_int(it: &IntTy) -> bool {
    let (lo, hi) = it.kind.range();
    it.min == lo && it.max == hi && !it.max_exclusive
}

fn int_ty(it: &IntTy) -> String {
    let name = it.kind.name();
    if is_plain_int(it) {
        return name.to_owned();
    }
    let arg = |v: i128| {
        if v < 0 {
            format!("{{ {v} }}")
        } else {
            v.to_string()
        }
    };
    if it.max_exclusive {
        format!(
            "rt::BoundedInt<{name}, {}, {}, true>",
            arg(it.min),
            arg(it.max)
        )
    } else {
        format!("rt::BoundedInt<{name}, {}, {}>", arg(it.min), arg(it.max))
    }
}

fn with_min(head: &str, min: u32) -> String {
    if min > 0 {
        format!("{head}, {min}>")
    } else {
        format!("{head}>")
    }
}

/// A float literal that reads back as the same `f64` and is a float in Rust (`1.0`, `1e300`).
fn float_lit(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

/// A Rust string literal (escaped).
pub(super) fn str_lit(s: &str) -> String {
    format!("{s:?}")
}

/// A raw string literal with enough `#`s for any content.
pub(super) fn raw_str(s: &str) -> String {
    let mut hashes = 0;
    while s.contains(&format!("\"{}", "#".repeat(hashes))) {
        hashes += 1;
    }
    let h = "#".repeat(hashes);
    format!("r{h}\"{s}\"{h}")
}

/// `#[derive(…, rt::serde::Serialize, rt::serde::Deserialize)]`, wrapped as rustfmt wraps it.
fn derive(traits: &[&str]) -> String {
    let mut all: Vec<&str> = traits.to_vec();
    all.extend(["rt::serde::Serialize", "rt::serde::Deserialize"]);
    let one = format!("#[derive({})]\n", all.join(", "));
    if one.len() - 1 <= WIDTH {
        return one;
    }
    // rustfmt puts one trait per line once the list does not fit.
    let mut out = String::from("#[derive(\n");
    for t in &all {
        out.push_str(&format!("    {t},\n"));
    }
    out.push_str(")]\n");
    out
}

/// `rt::Glue`, `rt::Decode` and `rt::DecodeFields` of a struct (and, when its fields have
/// defaults, the `TryFrom` of [`TRY_FROM`] for definition `defaults`): one call of the
/// runtime's `glue_struct!`, which writes the impls, so each struct costs a line rather than
/// its impls spelled out (issue 42).
fn struct_glue(name: &str, fields: &[FieldTy], defaults: Option<usize>) -> String {
    let items: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{i} {}", field_item(&f.name)))
        .collect();
    let tail = defaults.map_or_else(String::new, |def| format!(" defaults {def}"));
    macro_call("rt::glue_struct!", name, &items, &tail)
}

/// A field as the runtime's glue macros take it: its Rust name, then its AEL name when that
/// differs (`r#type "type"`), which conversion errors name.
pub(super) fn field_item(name: &str) -> String {
    let ident = names::field_ident(name);
    if ident == name {
        ident
    } else {
        format!("{ident} {}", str_lit(name))
    }
}

/// `{mac} { {name} { items… }{tail} }`: on one line when it fits, else one item a line (the
/// runtime's macros take brace-delimited input, which rustfmt leaves as it is).
pub(super) fn macro_call(mac: &str, name: &str, items: &[String], tail: &str) -> String {
    let one = if items.is_empty() {
        format!("{mac} {{ {name} {{}}{tail} }}")
    } else {
        format!("{mac} {{ {name} {{ {} }}{tail} }}", items.join(", "))
    };
    if one.len() <= WIDTH {
        return format!("{one}\n");
    }
    let mut out = format!("{mac} {{\n    {name} {{\n");
    for item in items {
        let _ = writeln!(out, "        {item},");
    }
    let _ = writeln!(out, "    }}{tail}\n}}");
    out
}

/// `head vec![items…] tail` at `indent`, one line when rustfmt would keep it on one.
fn values_expr(indent: &str, head: &str, items: &[String], tail: &str) -> String {
    if items.is_empty() {
        return format!("{indent}{head}Vec::new(){tail}\n");
    }
    let list = items.join(", ");
    let one = format!("{indent}{head}vec![{list}]{tail}");
    // rustfmt keeps a `vec![…]` on one line while its items take at most 60 columns.
    if one.len() <= WIDTH && list.len() <= 60 {
        return format!("{one}\n");
    }
    let mut out = format!("{indent}{head}vec![\n");
    for item in items {
        let _ = writeln!(out, "{indent}    {item},");
    }
    let _ = writeln!(out, "{indent}]{tail}");
    out
}

fn enum_glue(name: &str, variants: &[VariantTy]) -> String {
    let mut out = format!("impl rt::Glue for {name} {{\n");
    out.push_str("    fn from_value(value: rt::Value) -> Result<Self, rt::Error> {\n");
    out.push_str("        match value {\n");
    for (i, v) in variants.iter().enumerate() {
        let rust = names::type_ident(&v.name).unwrap_or_default();
        match &v.fields {
            Some(fields) if !fields.is_empty() => {
                let _ = writeln!(
                    out,
                    "            rt::Value::Enum {{ variant: {i}, fields }} => {{"
                );
                out.push_str("                let mut fields = fields.into_iter();\n");
                let _ = writeln!(out, "                Ok({name}::{rust} {{");
                for f in fields {
                    let _ = writeln!(
                        out,
                        "                    {}: rt::field(&mut fields, {})?,",
                        names::field_ident(&f.name),
                        str_lit(&f.name)
                    );
                }
                out.push_str("                })\n            }\n");
            }
            Some(_) => {
                let _ = writeln!(
                    out,
                    "            rt::Value::Enum {{ variant: {i}, .. }} => Ok({name}::{rust} {{}}),"
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "            rt::Value::Enum {{ variant: {i}, .. }} => Ok({name}::{rust}),"
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "            other => Err(rt::mismatch({}, &other)),",
        str_lit(&format!("a {name}"))
    );
    out.push_str("        }\n    }\n\n");
    out.push_str("    fn to_value(&self) -> rt::Value {\n");
    if variants.is_empty() {
        out.push_str("        match *self {}\n    }\n}\n");
        return out;
    }
    out.push_str("        match self {\n");
    for (i, v) in variants.iter().enumerate() {
        let rust = names::type_ident(&v.name).unwrap_or_default();
        match &v.fields {
            Some(fields) if !fields.is_empty() => {
                let binds: Vec<String> =
                    fields.iter().map(|f| names::field_ident(&f.name)).collect();
                let items: Vec<String> = binds
                    .iter()
                    .map(|b| format!("rt::Glue::to_value({b})"))
                    .collect();
                // rustfmt keeps a struct pattern on one line while its fields take at most
                // 18 columns.
                let inner = binds.join(", ");
                if inner.len() <= 18 {
                    let _ = writeln!(
                        out,
                        "            {name}::{rust} {{ {inner} }} => rt::Value::Enum {{"
                    );
                } else {
                    let _ = writeln!(out, "            {name}::{rust} {{");
                    for b in &binds {
                        let _ = writeln!(out, "                {b},");
                    }
                    out.push_str("            } => rt::Value::Enum {\n");
                }
                let _ = writeln!(out, "                variant: {i},");
                out.push_str(&values_expr("                ", "fields: ", &items, ","));
                out.push_str("            },\n");
            }
            Some(_) => {
                let _ = writeln!(out, "            {name}::{rust} {{}} => rt::Value::Enum {{");
                let _ = writeln!(out, "                variant: {i},");
                out.push_str("                fields: Vec::new(),\n            },\n");
            }
            None => {
                let _ = writeln!(out, "            {name}::{rust} => rt::Value::Enum {{");
                let _ = writeln!(out, "                variant: {i},");
                out.push_str("                fields: Vec::new(),\n            },\n");
            }
        }
    }
    out.push_str("        }\n    }\n}\n");
    out
}

fn map_key(name: &str, variants: &[VariantTy]) -> String {
    let mut out = format!("impl rt::MapKey for {name} {{\n");
    out.push_str("    fn key_str(&self) -> &str {\n");
    if variants.is_empty() {
        out.push_str("        match *self {}\n    }\n\n");
    } else {
        out.push_str("        match self {\n");
        for v in variants {
            let rust = names::type_ident(&v.name).unwrap_or_default();
            let _ = writeln!(out, "            {name}::{rust} => {},", str_lit(&v.name));
        }
        out.push_str("        }\n    }\n\n");
    }
    out.push_str("    fn from_key(key: String) -> Result<Self, rt::BoundError> {\n");
    out.push_str("        match key.as_str() {\n");
    for v in variants {
        let rust = names::type_ident(&v.name).unwrap_or_default();
        let _ = writeln!(
            out,
            "            {} => Ok({name}::{rust}),",
            str_lit(&v.name)
        );
    }
    let _ = writeln!(
        out,
        "            _ => Err(rt::unknown_key(&key, {})),",
        str_lit(&format!("a {name}"))
    );
    out.push_str("        }\n    }\n}\n");
    out
}
