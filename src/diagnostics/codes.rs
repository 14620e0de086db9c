//! The registry of diagnostic codes: code, title, explanation and an example.
//!
//! Ranges: `E00xx` lexing, `E01xx` parsing, `E02xx` names and modules, `E03xx` types and
//! bounds, `E04xx` expressions, checks and fns, `E05xx` nodes and agents, `E06xx` project and
//! `ael.toml`, `E07xx` prompt templates, `E08xx` emitting and publishing; `W0xxx` likewise for
//! warnings. Each range lives in its own file; a test checks that codes are unique and that
//! every code has a page in the book.

mod codegen;
mod project;
mod sema;
mod syntax;

/// What `aelc explain CODE` prints, and what the book's page for the code shows.
#[derive(Clone, Copy, Debug)]
pub struct CodeInfo {
    pub code: &'static str,
    /// A short title, e.g. "unknown type".
    pub title: &'static str,
    /// A paragraph or more: what the rule is and why it exists.
    pub explanation: &'static str,
    /// AEL source that triggers the diagnostic.
    pub example: &'static str,
}

/// Every code, in code order.
pub fn all() -> Vec<&'static CodeInfo> {
    let mut all: Vec<&'static CodeInfo> = syntax::CODES
        .iter()
        .chain(sema::CODES)
        .chain(codegen::CODES)
        .chain(project::CODES)
        .collect();
    all.sort_by_key(|c| c.code);
    all
}

/// A code that is no longer emitted: `(code, the code reported instead, why)`; the code
/// instead is empty when nothing is (what the code reported is no longer a problem). Codes are
/// never reused, so a retired code stays listed here, and `aelc explain` points to its
/// successor.
pub const RETIRED: &[(&str, &str, &str)] = &[
    (
        "E0801",
        "E0408",
        "a reserved failure code is refused by the checker where it is declared",
    ),
    (
        "E0802",
        "E0303",
        "a `Set` over 1000 items is refused by the checker where its type is written",
    ),
    (
        "E0803",
        "E0303",
        "a `List` over 10000 items is refused by the checker where its type is written",
    ),
    (
        "E0804",
        "E0313",
        "a type too deep for any payload is refused by the checker where it is declared",
    ),
    (
        "W0851",
        "",
        "the Rust glue runs every node through the one executor, so a body that calls another node runs there as under `aelc run`",
    ),
];

/// The retired code `code` (case-insensitively): what is reported instead, and why.
pub fn retired(code: &str) -> Option<(&'static str, &'static str, &'static str)> {
    RETIRED
        .iter()
        .find(|(c, _, _)| c.eq_ignore_ascii_case(code))
        .copied()
}

/// Looks a code up, case-insensitively (`e0101` finds `E0101`).
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    all()
        .into_iter()
        .find(|c| c.code.eq_ignore_ascii_case(code))
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_are_unique_and_well_formed() {
        let all = super::all();
        for pair in all.windows(2) {
            assert_ne!(pair[0].code, pair[1].code, "code used twice");
        }
        for info in all {
            let c = info.code;
            assert!(
                c.len() == 5
                    && (c.starts_with('E') || c.starts_with('W'))
                    && c[1..].bytes().all(|b| b.is_ascii_digit()),
                "malformed code {c}"
            );
            assert!(!info.title.is_empty() && !info.explanation.is_empty());
        }
    }

    #[test]
    fn retired_codes_stay_retired_and_name_a_live_successor() {
        for (code, instead, why) in super::RETIRED {
            assert!(
                super::lookup(code).is_none(),
                "{code} is retired: never reuse it"
            );
            // Empty: nothing is reported instead (what the code reported is no problem now).
            assert!(
                instead.is_empty() || super::lookup(instead).is_some(),
                "{code}: {instead} is no code"
            );
            assert!(!why.is_empty());
        }
        assert_eq!(super::retired("e0801").map(|r| r.1), Some("E0408"));
        assert_eq!(super::retired("W0851").map(|r| r.1), Some(""));
    }
}
