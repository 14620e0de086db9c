//! Parsing a project's modules, on every core when there is enough text to share.
//!
//! A module's parse reads nothing but its own text (names are resolved later, by sema), so
//! the modules of a project are parsed side by side, as rust-analyzer, ruff and Gleam do. The
//! results are put back in the order of the files, so everything after — file ids, the
//! diagnostics' order, the program — is what a parse on one thread gives, byte for byte.
//! A small project is parsed on the calling thread: starting a thread costs more than a
//! module of a few kilobytes takes to parse.

use crate::span::FileId;
use crate::syntax::{self, Parse};

use crate::parallel::PARALLEL_FROM_BYTES;

/// Parses each text, in the order given: `parses[i]` is the parse of `texts[i]`. With
/// `lean_parse`, trees for checking alone ([`syntax::parse_lean`]).
pub(crate) fn parse_all(texts: &[(FileId, &str)], lean_parse: bool) -> Vec<Parse> {
    let total: usize = texts.iter().map(|(_, text)| text.len()).sum();
    crate::parallel::map_in_order(texts, total >= PARALLEL_FROM_BYTES, |&(file, text)| {
        match lean_parse {
            true => syntax::parse_lean(file, text),
            false => syntax::parse(file, text),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same parses, in the same order, whether the modules are parsed on one thread or
    /// shared between several (enough text to cross [`PARALLEL_FROM_BYTES`]).
    #[test]
    fn parsing_side_by_side_gives_what_one_thread_gives() {
        let texts: Vec<String> = (0..120)
            .map(|k| {
                let mut text = String::new();
                for i in 0..120 {
                    text.push_str(&format!(
                        "/// Item {i}.\nstruct Item{k}x{i} {{\n    /// Its name.\n    name: Str<{}>,\n    broken: ,\n}}\n\n",
                        i + 1
                    ));
                }
                text
            })
            .collect();
        let files: Vec<(FileId, &str)> = texts
            .iter()
            .enumerate()
            .map(|(k, text)| (FileId(k as u32), text.as_str()))
            .collect();
        assert!(texts.iter().map(String::len).sum::<usize>() >= PARALLEL_FROM_BYTES);
        let shared = parse_all(&files, false);
        let alone: Vec<Parse> = files
            .iter()
            .map(|&(file, text)| syntax::parse(file, text))
            .collect();
        assert_eq!(shared.len(), alone.len());
        for (a, b) in shared.iter().zip(&alone) {
            assert_eq!(format!("{:?}", a.module), format!("{:?}", b.module));
            assert_eq!(a.diagnostics, b.diagnostics);
            assert!(
                !a.diagnostics.is_empty(),
                "each module has its syntax errors"
            );
        }
    }
}
