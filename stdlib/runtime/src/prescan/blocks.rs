//! The pre-scan's fast walk: 64 bytes at a time, with no stop per string or per token.
//!
//! Each block becomes bit masks (one bit per byte) of its quotes, backslashes, opening and
//! closing brackets, commas and colons, from 16-byte vector compares (`wide`: SSE2 or NEON,
//! a scalar fallback elsewhere; the runtime has no `unsafe` of its own). The escaped quotes
//! are found from runs of backslashes and the bytes inside strings from a prefix XOR of the
//! other quotes, the way simdjson's first stage does; what is left outside strings is the
//! document's structure. Model output is mostly text, which the byte walk enters and leaves
//! string by string: here a block full of strings costs what any block costs.
//!
//! It measures what the bounds need: the nesting depth exactly (stopping where it first
//! breaks), and, for documents large enough to break a count bound, the separators outside
//! strings. In JSON every value but the first follows a `[`, a `,` or a `:`, and an array of
//! `n` items holds `n - 1` commas of its own; so while the separators stay below the bounds
//! (the commas counted per open array or object), so do the values and the items. When they
//! come close, the walk gives up and the byte walk counts value by value.
//!
//! A backslash outside every string is no JSON, and the two ways of reading escapes (runs of
//! backslashes here, a backslash and the byte after it in the byte walk) could then cut the
//! strings differently: the walk gives up there too. Everywhere else the strings, and so the
//! depth, are exactly the byte walk's.

use crate::ty::limits::{MAX_DEPTH, MAX_ITEMS, MAX_VALUES};
use wide::u8x16;

/// What the block walk found in a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    /// Whether the nesting stays within [`MAX_DEPTH`] (the walk stops where it does not).
    pub depth_ok: bool,
    /// `[`, `{`, `,` and `:` outside strings, counted when the values bound is asked for.
    /// One count of the four together: the bytes are distinct, so one population count of
    /// their masks' union is the sum of four (x86-64's baseline has no `popcnt`
    /// instruction, and each count was a dozen instructions a block).
    pub separators: usize,
    /// The most commas of one array or object, counted when the items bound is asked for.
    pub widest: usize,
}

impl Shape {
    /// An upper bound on the values of a JSON document: every value but the first follows a
    /// `[` (an array's first item), a `,` (any other item) or a `:` (an object's value).
    pub fn max_values(&self) -> usize {
        1 + self.separators
    }
}

/// The masks of one block, bit `i` for byte `i`.
struct Masks {
    quotes: u64,
    backslashes: u64,
    opens: u64,
    closes: u64,
    commas: u64,
    colons: u64,
}

/// Compares the 64 bytes of `block` four vectors at a time. `ITEMS`, `VALUES`: whether the
/// commas, and the colons, are wanted (documents too small to break a count bound skip them).
#[inline(always)]
fn masks<const ITEMS: bool, const VALUES: bool>(block: &[u8; 64]) -> Masks {
    let mut m = Masks {
        quotes: 0,
        backslashes: 0,
        opens: 0,
        closes: 0,
        commas: 0,
        colons: 0,
    };
    let mask = |v: u8x16, shift: usize| u64::from(v.to_bitmask()) << shift;
    for (k, lane) in block.chunks_exact(16).enumerate() {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(lane);
        let v = u8x16::new(bytes);
        // `[` and `{` (0x5b, 0x7b) are one byte with the 0x20 bit set, as are `]` and `}`.
        let folded = v | u8x16::splat(0x20);
        let shift = 16 * k;
        m.quotes |= mask(v.simd_eq(u8x16::splat(b'"')), shift);
        m.backslashes |= mask(v.simd_eq(u8x16::splat(b'\\')), shift);
        m.opens |= mask(folded.simd_eq(u8x16::splat(b'{')), shift);
        m.closes |= mask(folded.simd_eq(u8x16::splat(b'}')), shift);
        if ITEMS || VALUES {
            m.commas |= mask(v.simd_eq(u8x16::splat(b',')), shift);
        }
        if VALUES {
            m.colons |= mask(v.simd_eq(u8x16::splat(b':')), shift);
        }
    }
    m
}

/// Bit `i` set when byte `i` is escaped: it follows an odd run of backslashes. `carry` says
/// whether the previous block ended with an unfinished escape, and is updated.
#[inline(always)]
fn escaped(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    if backslashes == 0 {
        return std::mem::take(carry);
    }
    let backslashes = backslashes & !*carry;
    let follows_escape = (backslashes << 1) | *carry;
    // A run of backslashes that starts on an odd bit, plus the run, carries into the bit past
    // its end exactly when the run is odd; the same on even bits comes from the XOR below.
    let odd_starts = backslashes & !EVEN & !follows_escape;
    let (sums, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    (EVEN ^ (sums << 1)) & follows_escape
}

/// Bit `i` is the XOR of bits `0..=i`: with the unescaped quotes in, the bytes from an
/// opening quote up to (not including) its closing quote.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Walks `bytes` block by block. `ITEMS`, `VALUES`: whether the items bound, and the values
/// bound, are to be ruled out too. `None`: the walk gives up and the byte walk decides, for a
/// backslash outside strings, or separators enough that a bound counted might break.
pub(super) fn shape<const ITEMS: bool, const VALUES: bool>(bytes: &[u8]) -> Option<Shape> {
    let mut walk = Walk {
        in_string: 0,
        escape: 0,
        depth: 0,
        level_commas: [0; MAX_DEPTH + 1],
        shape: Shape {
            depth_ok: true,
            separators: 0,
            widest: 0,
        },
    };
    let mut blocks = bytes.chunks_exact(64);
    for block in blocks.by_ref() {
        let block: &[u8; 64] = block.try_into().ok()?;
        if !walk.block::<ITEMS, VALUES>(block)? {
            return Some(walk.shape);
        }
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // Padded with spaces, which are nothing to any mask.
        let mut block = [b' '; 64];
        block.get_mut(..rest.len())?.copy_from_slice(rest);
        walk.block::<ITEMS, VALUES>(&block)?;
    }
    Some(walk.shape)
}

/// The state carried from block to block.
struct Walk {
    /// All ones while a string is open at the end of the last block.
    in_string: u64,
    /// 1 when the last block ended with an escaping backslash.
    escape: u64,
    depth: usize,
    /// The commas of the array or object open at each depth (depth 0: outside any), so far.
    level_commas: [usize; MAX_DEPTH + 1],
    shape: Shape,
}

impl Walk {
    /// Takes one block; `Some(false)` once the depth breaks, `None` to give up.
    #[inline(always)]
    fn block<const ITEMS: bool, const VALUES: bool>(&mut self, block: &[u8; 64]) -> Option<bool> {
        let m = masks::<ITEMS, VALUES>(block);
        let quotes = m.quotes & !escaped(m.backslashes, &mut self.escape);
        let inside = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        if m.backslashes & !inside != 0 {
            return None;
        }
        let outside = !inside;
        let opens = m.opens & outside;
        let closes = m.closes & outside;
        let mut commas = m.commas & outside;
        if VALUES {
            self.shape.separators += ((opens | commas | m.colons) & outside).count_ones() as usize;
            if self.shape.max_values() > MAX_VALUES {
                return None;
            }
        }
        // Without counting, the usual block can neither reach past the bound nor close more
        // than is open, so the order of its brackets does not matter.
        if !ITEMS {
            let (n_opens, n_closes) = (opens.count_ones() as usize, closes.count_ones() as usize);
            if self.depth + n_opens <= MAX_DEPTH && n_closes <= self.depth {
                self.depth = self.depth + n_opens - n_closes;
                return Some(true);
            }
        }
        // Bracket by bracket, as the byte walk: a `[` at the bound breaks it, a stray `]`
        // at depth 0 is left to the decoder. The commas before a bracket are its level's.
        let mut brackets = opens | closes;
        while brackets != 0 {
            let bit = brackets & brackets.wrapping_neg();
            if ITEMS {
                let before = commas & (bit - 1);
                if before != 0 {
                    self.add_commas(before.count_ones() as usize)?;
                    commas &= !before;
                }
            }
            if opens & bit != 0 {
                if self.depth >= MAX_DEPTH {
                    self.shape.depth_ok = false;
                    return Some(false);
                }
                self.depth += 1;
                if let Some(level) = self.level_commas.get_mut(self.depth) {
                    *level = 0;
                }
            } else {
                self.depth = self.depth.saturating_sub(1);
            }
            brackets ^= bit;
        }
        if ITEMS && commas != 0 {
            self.add_commas(commas.count_ones() as usize)?;
        }
        Some(true)
    }

    /// Counts `n` commas at the current depth; `None` once an array there could hold more
    /// than [`MAX_ITEMS`] items.
    #[inline(always)]
    fn add_commas(&mut self, n: usize) -> Option<()> {
        let level = self.level_commas.get_mut(self.depth)?;
        *level += n;
        self.shape.widest = self.shape.widest.max(*level);
        (*level < MAX_ITEMS as usize).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_runs_of_backslashes() {
        let mut carry = 0;
        // `\"` escapes the quote, `\\"` does not, `\\\"` does.
        assert_eq!(escaped(0b1, &mut carry), 0b10);
        assert_eq!(escaped(0b11, &mut carry), 0b10);
        assert_eq!(escaped(0b111, &mut carry), 0b1010);
        assert_eq!(carry, 0);
        // A backslash in the last byte escapes the first byte of the next block.
        assert_eq!(escaped(1 << 63, &mut carry), 0);
        assert_eq!(carry, 1);
        assert_eq!(escaped(0, &mut carry), 1);
        assert_eq!(carry, 0);
    }

    #[test]
    fn strings_hide_brackets_and_separators() {
        let doc = br#"{"a": "[{,:", "b": [1, 2], "c": "\"]"}"#;
        let shape = shape::<true, true>(doc);
        assert_eq!(
            shape,
            Some(Shape {
                depth_ok: true,
                // 2 brackets, 3 commas, 3 colons.
                separators: 8,
                // The object's two commas; the array has one.
                widest: 2,
            })
        );
    }

    #[test]
    fn a_backslash_outside_strings_gives_up() {
        assert_eq!(shape::<false, false>(br#"[\"[[[[]"#), None);
    }

    #[test]
    fn separators_near_a_bound_give_up() {
        let items = |n: usize| format!("[{}]", vec!["0"; n].join(","));
        // 10,000 items: 9,999 commas, within the bound.
        assert!(shape::<true, true>(items(10_000).as_bytes()).is_some());
        assert_eq!(shape::<true, true>(items(10_001).as_bytes()), None);
        // Commas are counted per array: two arrays of 6,000 are fine.
        let two = format!("[{},{}]", items(6_000), items(6_000));
        assert!(shape::<true, true>(two.as_bytes()).is_some());
        // And the commas inside items are not the outer array's, nor the other way round.
        let empties = |n: usize| format!("[{}]", vec!["[]"; n].join(","));
        assert!(shape::<true, true>(empties(10_000).as_bytes()).is_some());
        assert_eq!(shape::<true, true>(empties(10_001).as_bytes()), None);
        // 200,000 values need more than 200,000 separators.
        let inner = items(1_000);
        let many = format!("[{}]", vec![inner.as_str(); 250].join(","));
        assert_eq!(shape::<true, true>(many.as_bytes()), None);
    }

    #[test]
    fn depth_breaks_where_the_byte_walk_breaks_it() {
        let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(
            shape::<false, false>(deep.as_bytes()).map(|s| s.depth_ok),
            Some(true)
        );
        let deeper = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(
            shape::<false, false>(deeper.as_bytes()).map(|s| s.depth_ok),
            Some(false)
        );
        // Stray closes at depth 0 do not lower the floor.
        let stray = format!("]]]{}", "[".repeat(64));
        assert_eq!(
            shape::<false, false>(stray.as_bytes()).map(|s| s.depth_ok),
            Some(true)
        );
    }
}
