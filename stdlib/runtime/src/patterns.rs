//! Compiled patterns (`@pattern`, `matches`), shared by everything that runs one program: its
//! own module so that the type table, which owns a program's cache, and the bound checks,
//! which read it, both depend on it and not on each other.

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// Compiled patterns (`@pattern`, `matches`), each compiled once for every user of one handle.
///
/// A program's [`crate::ty::TypeTable`] owns one, so every decoder, validator and evaluator
/// over the program, on every thread, shares what was compiled: a gateway makes a decoder per
/// request, and when each kept its own patterns a fifth of a loaded gateway's CPU went to
/// compiling the same regexes again. Cloning the handle shares the cache (the text is the key,
/// so sharing is right whatever program asks). A [`Regex`] is matched in place under the read
/// lock, never cloned out: a clone of a `Regex` starts an empty pool of search caches, which
/// would be rebuilt per request, while one `Regex` used from several threads keeps a cache per
/// thread in its own pool.
#[derive(Clone, Default)]
pub struct Patterns {
    compiled: Arc<RwLock<BTreeMap<Box<str>, Option<Regex>>>>,
}

impl Patterns {
    /// Whether `text` matches `pattern` (unanchored); `None` if the pattern does not compile
    /// (the compiler rejects such patterns, so this only happens with hand-made type tables).
    pub fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        {
            // A poisoned lock only means a panic elsewhere while compiling: the map is whole.
            let compiled = self.compiled.read().unwrap_or_else(|e| e.into_inner());
            if let Some(re) = compiled.get(pattern) {
                return re.as_ref().map(|re| re.is_match(text));
            }
        }
        // Compiled outside the lock: another thread asking for the same pattern meanwhile
        // compiles it too, and the first to insert wins (rare, and only at a program's start).
        let re = Regex::new(pattern).ok();
        let mut compiled = self.compiled.write().unwrap_or_else(|e| e.into_inner());
        let re = compiled.entry(pattern.into()).or_insert(re);
        re.as_ref().map(|re| re.is_match(text))
    }

    /// How many patterns were asked for so far (each compiled once).
    pub fn len(&self) -> usize {
        self.compiled.read().map_or(0, |c| c.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether two handles share one cache (so a pattern is compiled once for both).
    pub fn same_cache(&self, other: &Patterns) -> bool {
        Arc::ptr_eq(&self.compiled, &other.compiled)
    }
}

impl std::fmt::Debug for Patterns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Patterns({} compiled)", self.len())
    }
}

/// Equal always: a cache says nothing about the program it serves, so two type tables that
/// differ only in what they have compiled so far are the same table.
impl PartialEq for Patterns {
    fn eq(&self, _: &Patterns) -> bool {
        true
    }
}
