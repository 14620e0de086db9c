//! Rust names for AEL names: case conversion, raw identifiers for keywords, and the clashes
//! that no raw identifier can fix (reported as E0850, never emitted as code that fails to
//! compile).

use std::collections::BTreeMap;

/// Rust's keywords (2021 edition, strict and reserved) that `r#` makes usable.
const RAW_OK: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen", "union",
];

/// Names that cannot be identifiers at all, not even raw: they get a trailing `_` (`self_`),
/// and serde keeps the AEL spelling on the wire. A clash with a name that really ends in `_`
/// is then an ordinary case-conversion clash (E0850).
const NEVER: &[&str] = &["self", "Self", "super", "crate", "_"];

/// A Rust identifier for `name` as written (fields, parameters, modules): raw when it is a
/// keyword, `self_` for what not even `r#` can spell; `None` only for the empty name.
pub fn ident(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    if NEVER.contains(&name) {
        return Some(format!("{name}_"));
    }
    if RAW_OK.contains(&name) {
        Some(format!("r#{name}"))
    } else {
        Some(name.to_owned())
    }
}

/// `snake_case` of an AEL name (`maxFindings` → `max_findings`), for fields and fns.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// `UpperCamelCase` of an AEL name (`too_many` → `TooMany`, `Review` stays).
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// The prelude's types that generated code names bare at the top level of the glue, where
/// the project's types are declared: a type of the same name would shadow them.
const PRELUDE_TYPES: &[&str] = &["Option", "Result", "Vec", "String", "Box", "TryFrom"];

/// A top-level type name that does not shadow what generated code uses: `Option` → `Option_`
/// (type names are not on the wire, so nothing else changes).
pub fn unshadow(name: String) -> String {
    if PRELUDE_TYPES.contains(&name.as_str()) {
        format!("{name}_")
    } else {
        name
    }
}

/// A camel-case identifier (`Self_` for `Self`).
pub fn type_ident(name: &str) -> Option<String> {
    let c = camel(name);
    ident(&c)
}

/// A camel-case identifier that is always spellable (`Self_` for `Self`), for names that are
/// never empty (error codes, module traits).
pub fn type_name(name: &str) -> String {
    type_ident(name).unwrap_or_else(|| camel(name))
}

/// A clash found while naming: what collides, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clash {
    /// `struct Finding`, `field max_findings of ReviewRequest`, ….
    pub what: String,
    /// The other AEL names that map to the same Rust name.
    pub with: Vec<String>,
    pub rust: String,
}

/// Collects names in one Rust namespace and reports every Rust name taken twice.
#[derive(Default)]
pub struct Namespace {
    taken: BTreeMap<String, Vec<String>>,
}

impl Namespace {
    /// A namespace in which `reserved` (generated items) are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Namespace {
        let mut ns = Namespace::default();
        for r in reserved {
            ns.taken
                .entry(strip_raw(r).to_owned())
                .or_default()
                .push(format!("the generated `{r}`"));
        }
        ns
    }

    pub fn add(&mut self, rust: &str, ael: String) {
        self.taken
            .entry(strip_raw(rust).to_owned())
            .or_default()
            .push(ael);
    }

    /// Every Rust name claimed by more than one AEL name, in name order.
    pub fn clashes(&self) -> Vec<Clash> {
        self.taken
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(rust, v)| Clash {
                what: v[v.len() - 1].clone(),
                with: v[..v.len() - 1].to_vec(),
                rust: rust.clone(),
            })
            .collect()
    }
}

fn strip_raw(s: &str) -> &str {
    s.strip_prefix("r#").unwrap_or(s)
}

/// The field's Rust identifier (snake case; raw for a keyword).
pub(super) fn field_ident(name: &str) -> String {
    ident(&snake(name)).unwrap_or_else(|| snake(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(snake("maxFindings"), "max_findings");
        assert_eq!(snake("max_findings"), "max_findings");
        assert_eq!(camel("too_many_findings"), "TooManyFindings");
        assert_eq!(camel("Review"), "Review");
        assert_eq!(camel("3d"), "T3d");
        assert_eq!(ident("type").as_deref(), Some("r#type"));
        assert_eq!(ident("self").as_deref(), Some("self_"));
        assert_eq!(ident("crate").as_deref(), Some("crate_"));
        assert_eq!(type_ident("self").as_deref(), Some("Self_"));
        assert_eq!(type_ident("super").as_deref(), Some("Super"));
        assert_eq!(ident(""), None);
        assert_eq!(unshadow("Option".to_owned()), "Option_");
        assert_eq!(unshadow("Review".to_owned()), "Review");
    }
}
