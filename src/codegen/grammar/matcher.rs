//! The unit tests' matcher of grammar expressions ([`G`]): whether a text is one spelling of an
//! expression, so the digit automata and format grammars can be checked against the decoder
//! without rendering them first.
//!
//! Memoised: the end positions of each (expression, start) pair are computed once. The float
//! range grammars nest alternatives of optional digit runs two dozen levels deep, and a plain
//! backtracking matcher revisits the same pair once per path that reaches it (minutes per range
//! on a few hundred texts); with the memo the work is at most the expression's size times the
//! text's length, times the few ends each pair has.

use std::collections::HashMap;
use std::rc::Rc;

use super::expr::G;

/// Whether `text` is one spelling of `g` (literals, classes, sequences, alternatives,
/// repetitions and tokens; an expression holding a rule or a JSON character matches nothing).
pub fn matches(g: &G, text: &str) -> bool {
    let mut m = Matcher {
        text: text.as_bytes(),
        memo: HashMap::new(),
    };
    m.ends(g, 0).contains(&text.len())
}

struct Matcher<'t> {
    text: &'t [u8],
    /// Ends per (address of the expression node, start). The expression is borrowed for the
    /// whole match, so an address names one node.
    memo: HashMap<(usize, usize), Rc<[usize]>>,
}

impl Matcher<'_> {
    /// The positions where a match of `g` from `at` can end, sorted, each once.
    fn ends(&mut self, g: &G, at: usize) -> Rc<[usize]> {
        let key = (std::ptr::from_ref(g) as usize, at);
        if let Some(found) = self.memo.get(&key) {
            return Rc::clone(found);
        }
        let mut out = self.compute(g, at);
        out.sort_unstable();
        out.dedup();
        let out: Rc<[usize]> = out.into();
        self.memo.insert(key, Rc::clone(&out));
        out
    }

    /// The ends of every start in `starts`, sorted, each once.
    fn ends_from(&mut self, g: &G, starts: &[usize]) -> Vec<usize> {
        let mut next = Vec::new();
        for s in starts {
            next.extend(self.ends(g, *s).iter().copied());
        }
        next.sort_unstable();
        next.dedup();
        next
    }

    fn compute(&mut self, g: &G, at: usize) -> Vec<usize> {
        match g {
            G::Lit(s) => {
                if self.text.get(at..at + s.len()) == Some(s.as_bytes()) {
                    vec![at + s.len()]
                } else {
                    Vec::new()
                }
            }
            G::Class(c) => match self.text.get(at) {
                Some(b) if c.contains(char::from(*b)) => vec![at + 1],
                _ => Vec::new(),
            },
            G::Seq(parts) => {
                let mut now = vec![at];
                for p in parts {
                    now = self.ends_from(p, &now);
                    if now.is_empty() {
                        break;
                    }
                }
                now
            }
            G::Alt(alts) => {
                let mut out = Vec::new();
                for a in alts {
                    out.extend(self.ends(a, at).iter().copied());
                }
                out
            }
            G::Rep(inner, min, max) => {
                // Each round's starts are the ends of the one before; past the minimum a
                // position already reached needs no second round (its ends are in `out`).
                let mut now = vec![at];
                let mut out = Vec::new();
                let mut count = 0u32;
                loop {
                    if count >= *min {
                        out.extend(&now);
                    }
                    if max.is_some_and(|m| count >= m) || now.is_empty() {
                        break;
                    }
                    let next = self.ends_from(inner, &now);
                    now = if count >= *min {
                        next.into_iter().filter(|i| !out.contains(i)).collect()
                    } else {
                        next
                    };
                    count += 1;
                }
                out
            }
            G::Token(inner) => self.ends(inner, at).to_vec(),
            G::Rule(_) | G::JsonChar => Vec::new(),
        }
    }
}
