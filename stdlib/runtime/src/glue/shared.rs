//! Repeated JSON embedded once: the glue's `PROGRAM_JSON` and `SCHEMAS_JSON` hold each subtree
//! that occurs more than once (a shared definition in every node's self-contained schema, a
//! model-facing variant's copy of it, a field's type) as a marker, `{"$shared":N}`, and the
//! glue's `SHARED_JSON` holds entry `N` once, one compact JSON text per line.
//!
//! Expanding the markers gives back, byte for byte, the text the compiler would have embedded
//! without sharing, so everything read from it is what it was; the sharing only changes what
//! a user's crate compiles (issue 42: an 800-node project's glue was 30 MB, 24.7 MB of it
//! self-contained schemas that repeated the same definitions). The compiler writes an entry
//! after the entries it refers to, and an entry may refer only to earlier ones, so expanding
//! never loops. Compact JSON holds no raw newline (one in a string is `\n`), so a line is an
//! entry; and it holds `{"$shared":` only as a marker (a `"` inside a string is escaped), which
//! the compiler checks: a text that held one anyway is embedded without sharing.

/// How a marker starts; then the entry's index and `}`.
pub const SHARED_OPEN: &str = "{\"$shared\":";

/// `text` with every marker replaced by its entry of `shared` (expanded in turn). A marker
/// that names no entry (a hand-edited file) is left as it is, and reading the result fails
/// as it would have.
pub fn expand(text: &str, shared: &str) -> String {
    let entries: Vec<&str> = if shared.is_empty() {
        Vec::new()
    } else {
        shared.split('\n').collect()
    };
    let mut out = String::with_capacity(text.len());
    expand_into(&mut out, text, &entries, entries.len());
    out
}

/// Appends `text` expanded; its markers may name entries below `below` only.
fn expand_into(out: &mut String, text: &str, entries: &[&str], below: usize) {
    let mut rest = text;
    while let Some(at) = rest.find(SHARED_OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + SHARED_OPEN.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let index = after[..digits].parse::<usize>().ok().filter(|i| *i < below);
        match (index, after.as_bytes().get(digits)) {
            (Some(index), Some(b'}')) => {
                let entry = entries.get(index).copied().unwrap_or_default();
                expand_into(out, entry, entries, index);
                rest = &after[digits + 1..];
            }
            _ => {
                out.push_str(SHARED_OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn markers_expand_to_their_entries_in_turn() {
        let shared = "{\"a\":1}\n[{\"$shared\":0},{\"$shared\":0}]";
        assert_eq!(
            expand("{\"x\":{\"$shared\":1},\"y\":{\"$shared\":0}}", shared),
            "{\"x\":[{\"a\":1},{\"a\":1}],\"y\":{\"a\":1}}"
        );
        assert_eq!(expand("[1,2]", ""), "[1,2]");
    }

    /// An entry cannot name itself or a later one, and a marker naming no entry stays: a
    /// hand-edited pool never loops.
    #[test]
    fn a_marker_that_names_no_earlier_entry_stays() {
        let shared = "[{\"$shared\":0}]\n{\"$shared\":9}";
        assert_eq!(expand("{\"$shared\":0}", shared), "[{\"$shared\":0}]");
        assert_eq!(expand("{\"$shared\":1}", shared), "{\"$shared\":9}");
        assert_eq!(expand("{\"$shared\":x}", shared), "{\"$shared\":x}");
    }
}
