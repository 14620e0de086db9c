//! Parsing a project's modules, on every core when there is enough text to share.
//!
//! A module's parse reads nothing but its own text (names are resolved later, by sema), so
//! the modules of a project are parsed side by side, as rust-analyzer, ruff and Gleam do. The
//! results are put back in the order of the files, so everything after — file ids, the
//! diagnostics' order, the program — is what a parse on one thread gives, byte for byte.
//! A small project is parsed on the calling thread: starting a thread costs more than a
//! module of a few kilobytes takes to parse.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::span::FileId;
use crate::syntax::{self, Parse};

/// Below this much text in all, the modules are parsed on the calling thread (a generated
/// module of 800 lines, 30 KB, parses in about a millisecond).
const PARALLEL_FROM_BYTES: usize = 256 << 10;

/// The stack of a parsing thread. Nesting is bounded before parsing (`E0104`) and the parser
/// grows its own stack where it recurses (chumsky's `stacker`), so this is a margin; it is
/// address space, reserved, not memory used.
const STACK_BYTES: usize = 16 << 20;

/// Parses each text, in the order given: `parses[i]` is the parse of `texts[i]`.
pub(crate) fn parse_all(texts: &[(FileId, &str)]) -> Vec<Parse> {
    let total: usize = texts.iter().map(|(_, text)| text.len()).sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(texts.len());
    if threads < 2 || total < PARALLEL_FROM_BYTES {
        return texts
            .iter()
            .map(|&(file, text)| syntax::parse(file, text))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Parse)>> = Mutex::new(Vec::with_capacity(texts.len()));
    // Each worker takes the next module not yet taken, so a large module does not leave the
    // other threads idle behind a fixed share of the list.
    let work = || {
        let mut mine = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(file, text)) = texts.get(at) else {
                break;
            };
            mine.push((at, syntax::parse(file, text)));
        }
        done.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .append(&mut mine);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            // A thread that cannot be started leaves its share to the others (the calling
            // thread works too, so every module is parsed).
            let _ = std::thread::Builder::new()
                .name("aelc-parse".to_owned())
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, work);
        }
        work();
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_unstable_by_key(|&(at, _)| at);
    done.into_iter().map(|(_, parse)| parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same parses, in the same order, whether the modules are parsed on one thread or
    /// shared between several (enough text to cross [`PARALLEL_FROM_BYTES`]).
    #[test]
    fn parsing_side_by_side_gives_what_one_thread_gives() {
        let texts: Vec<String> = (0..40)
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
        let shared = parse_all(&files);
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
