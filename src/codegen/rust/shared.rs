//! Repeated JSON in the glue embedded once (the encoder of `aelc_runtime::glue`'s
//! `expand_shared`): every array or object that occurs more than once across the embedded
//! texts, when its copies take more bytes than its markers and one entry, becomes
//! `{"$shared":N}`, and entry `N` of `SHARED_JSON` holds it once. Expanding gives back each
//! text byte for byte.
//!
//! Why: a node's output schema is self-contained (the shared definitions it reaches are
//! copied into it), and so are its three model-facing variants, so the embedded schemas held
//! every definition as many times as nodes reach it, four times over (issue 42: 24.7 MB of an
//! 800-node project's 30 MB glue, which each user's crate compiled). Sharing subtrees rather
//! than rewriting the schemas with references keeps every document exactly what the runtime
//! reads elsewhere, whatever each provider's rewrite does to a definition.
//!
//! Two passes over the trees: the first gives each distinct subtree an id (its text with its
//! children's ids in place of their text, so each node costs its own size) and counts its
//! occurrences; the second writes the texts, putting each shared subtree in the pool after
//! the entries it refers to. Deterministic: ids and entries follow the order of the walk.

use std::collections::HashMap;
use std::fmt::Write as _;

use aelc_runtime::glue::SHARED_OPEN;
use serde_json::Value;

/// The longest marker counted on (`{"$shared":N}` with `N` of up to 5 digits): a subtree is
/// shared only when its markers and its entry take fewer bytes than its copies did.
const MARKER: usize = 17;

/// The texts to embed, with markers, and the pool (`SHARED_JSON`: one entry a line).
pub(super) struct Embedded {
    pub texts: Vec<String>,
    pub pool: String,
}

/// `values` as compact JSON, each repeated subtree in the pool.
pub(super) fn embed(values: &[&Value]) -> Embedded {
    let mut interner = Interner::default();
    let roots: Vec<usize> = values.iter().filter_map(|v| interner.intern(v).0).collect();
    interner.decide(&roots);
    let mut writer = Writer {
        interner: &interner,
        entries: HashMap::new(),
        pool: Vec::new(),
        marker_free: true,
    };
    let texts: Vec<String> = values
        .iter()
        .map(|v| {
            let mut text = String::new();
            writer.write(v, &mut text, true);
            text
        })
        .collect();
    if !writer.marker_free {
        // A text that holds a marker's bytes of its own could not be told apart: no sharing.
        return Embedded {
            texts: values.iter().map(|v| compact(v)).collect(),
            pool: String::new(),
        };
    }
    Embedded {
        texts,
        pool: writer.pool.join("\n"),
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The address of a node of the trees being embedded: its identity for the second pass (the
/// trees are borrowed and unchanged between the passes).
fn addr(v: &Value) -> usize {
    v as *const Value as usize
}

#[derive(Default)]
struct Interner {
    /// A subtree's text with its children's ids in place of theirs → its id.
    ids: HashMap<String, usize>,
    /// By id: its compact length, and the ids of its children that are arrays or objects,
    /// once per occurrence.
    len: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// By id, once [`Interner::decide`]d: whether it is written once, in the pool.
    shared: Vec<bool>,
    /// Each array or object of the trees → its id.
    nodes: HashMap<usize, usize>,
}

impl Interner {
    /// The node's id (`None` for a scalar) and its compact length.
    fn intern(&mut self, v: &Value) -> (Option<usize>, usize) {
        let mut key = String::new();
        let mut children = Vec::new();
        let mut len = 2;
        match v {
            Value::Array(items) => {
                key.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        key.push(',');
                        len += 1;
                    }
                    len += self.child(&mut key, &mut children, item);
                }
                key.push(']');
            }
            Value::Object(map) => {
                key.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        key.push(',');
                        len += 1;
                    }
                    let name = compact(&Value::String(k.clone()));
                    key.push_str(&name);
                    key.push(':');
                    len += name.len() + 1 + self.child(&mut key, &mut children, item);
                }
                key.push('}');
            }
            scalar => return (None, compact(scalar).len()),
        }
        let next = self.len.len();
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.len.push(len);
            self.children.push(children);
        }
        self.nodes.insert(addr(v), id);
        (Some(id), len)
    }

    /// Appends a child to its parent's key (`#id`, or a scalar's text) and its id to
    /// `children`; its length.
    fn child(&mut self, key: &mut String, children: &mut Vec<usize>, item: &Value) -> usize {
        match self.intern(item) {
            (Some(id), len) => {
                let _ = write!(key, "#{id}");
                children.push(id);
                len
            }
            (None, len) => {
                key.push_str(&compact(item));
                len
            }
        }
    }

    /// Decides which subtrees are written once, by how often each would be written: once
    /// per occurrence in a subtree written in place, but once in all inside a shared one (its
    /// entry), so a part of a shared definition is not shared again for copies that are gone.
    /// A parent's id is above its children's (they are interned first), so going down the ids
    /// sees every parent of a subtree before it. A subtree is shared when its copies take
    /// more bytes than as many markers and one entry with its newline (short ones that occur
    /// in every node, `{"checks":[]}`, too).
    fn decide(&mut self, roots: &[usize]) {
        let mut written = vec![0usize; self.len.len()];
        for root in roots {
            written[*root] += 1;
        }
        self.shared = vec![false; self.len.len()];
        for id in (0..self.len.len()).rev() {
            let (count, len) = (written[id], self.len[id]);
            let shared = count >= 2 && count * len.saturating_sub(MARKER) > len + 1;
            self.shared[id] = shared;
            let copies = if shared { 1 } else { count };
            for child in &self.children[id] {
                written[*child] += copies;
            }
        }
    }

    fn shared(&self, id: usize) -> bool {
        self.shared.get(id).copied().unwrap_or(false)
    }
}

struct Writer<'i> {
    interner: &'i Interner,
    /// Subtree id → its entry in `pool`.
    entries: HashMap<usize, usize>,
    pool: Vec<String>,
    /// No string or key of the trees holds a marker's bytes.
    marker_free: bool,
}

impl Writer<'_> {
    /// Writes `v`, a shared subtree as its marker unless it is the `whole` text or entry.
    fn write(&mut self, v: &Value, out: &mut String, whole: bool) {
        let id = self.interner.nodes.get(&addr(v)).copied();
        if let Some(id) = id.filter(|id| !whole && self.interner.shared(*id)) {
            let index = match self.entries.get(&id) {
                Some(index) => *index,
                None => {
                    let mut entry = String::new();
                    self.write(v, &mut entry, true);
                    self.pool.push(entry);
                    self.entries.insert(id, self.pool.len() - 1);
                    self.pool.len() - 1
                }
            };
            let _ = write!(out, "{SHARED_OPEN}{index}}}");
            return;
        }
        match v {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write(item, out, false);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let name = compact(&Value::String(k.clone()));
                    self.marker_free &= !name.contains("$shared");
                    out.push_str(&name);
                    out.push(':');
                    self.write(item, out, false);
                }
                out.push('}');
            }
            Value::String(s) => {
                self.marker_free &= !s.contains("$shared");
                out.push_str(&compact(v));
            }
            scalar => out.push_str(&compact(scalar)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::embed;
    use serde_json::json;

    /// What the runtime expands is the text the compiler would have embedded, byte for byte,
    /// and a repeated subtree is in the pool once.
    #[test]
    fn the_expanded_texts_are_the_compact_texts() {
        let def = json!({"type": "object", "description": "An address to write to.", "properties": {"city": {"type": "string", "maxLength": 100}}});
        let a =
            json!({"$defs": {"Address": def.clone()}, "items": [def.clone(), def.clone(), 1, "x"]});
        let b = json!([def.clone(), {"nested": [def.clone()]}]);
        let embedded = embed(&[&a, &b]);
        assert_eq!(embedded.pool.lines().count(), 1, "{}", embedded.pool);
        for (text, v) in embedded.texts.iter().zip([&a, &b]) {
            let whole = aelc_runtime::glue::expand_shared(text, &embedded.pool);
            assert_eq!(whole, serde_json::to_string(v).unwrap_or_default());
            assert!(text.len() < whole.len());
        }
    }

    /// A string that holds a marker's key could pass for one: then nothing is shared.
    #[test]
    fn a_text_holding_a_marker_is_embedded_whole() {
        let def = json!({"description": "{\"$shared\":0} is how the glue marks a shared part", "type": "string"});
        let a = json!([def.clone(), def.clone()]);
        let embedded = embed(&[&a]);
        assert!(embedded.pool.is_empty());
        assert_eq!(
            embedded.texts,
            [serde_json::to_string(&a).unwrap_or_default()]
        );
    }
}
