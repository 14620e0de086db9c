//! Integer ranges as digit automata: `lo..=hi` to an expression that matches exactly the
//! canonical decimal spellings (no `+`, no leading zeros, no `-0`) of the integers in it.
//!
//! The construction splits the range by number of digits, then, for a run of equal length,
//! by the first digit where the two ends differ: `123..=456` is `12[3-9] | 1[3-9][0-9] |
//! [2-3][0-9][0-9] | 4[0-4][0-9] | 45[0-6]`. Each part is a sequence of digit classes, so the
//! result has at most `2 × 10 × digits` alternatives: linear in the digits of the bounds, and
//! exact at both edges (`u64::MAX` included).

use super::expr::G;

/// The spellings of the integers in `lo..=hi`; `None` when the range is empty.
pub fn int_range(lo: i128, hi: i128) -> Option<G> {
    if lo > hi {
        return None;
    }
    let mut alts = Vec::new();
    if lo < 0 {
        // Negative part: `-` followed by the magnitudes `max(1, -hi)..=-lo`.
        let neg_hi = lo.unsigned_abs();
        let neg_lo = if hi < 0 { hi.unsigned_abs() } else { 1 };
        let mut mags = Vec::new();
        unsigned_range(neg_lo, neg_hi, &mut mags);
        alts.push(G::Seq(vec![G::lit("-"), G::alt(mags)]));
    }
    if hi >= 0 {
        let lo = lo.max(0).unsigned_abs();
        unsigned_range(lo, hi.unsigned_abs(), &mut alts);
    }
    Some(G::alt(alts))
}

/// Pushes the alternatives spelling `lo..=hi` (non-negative, `lo <= hi`).
fn unsigned_range(lo: u128, hi: u128, out: &mut Vec<G>) {
    let (mut lo, hi) = (lo, hi);
    while lo <= hi {
        let digits = digit_count(lo);
        // The largest number with as many digits as `lo`.
        let top = 10u128.checked_pow(digits).map_or(u128::MAX, |p| p - 1);
        let end = top.min(hi);
        same_length(&lo.to_string(), &end.to_string(), out);
        match end.checked_add(1) {
            Some(next) if end < hi => lo = next,
            _ => break,
        }
    }
}

fn digit_count(n: u128) -> u32 {
    n.checked_ilog10().map_or(1, |d| d + 1)
}

/// Pushes the alternatives for `lo..=hi`, both spelled with the same number of digits.
fn same_length(lo: &str, hi: &str, out: &mut Vec<G>) {
    let (lo, hi) = (lo.as_bytes(), hi.as_bytes());
    let common = lo.iter().zip(hi).take_while(|(a, b)| a == b).count();
    let prefix = std::str::from_utf8(lo.get(..common).unwrap_or_default()).unwrap_or_default();
    let (Some(&a), Some(&b)) = (lo.get(common), hi.get(common)) else {
        // Equal: one number.
        out.push(G::lit(prefix));
        return;
    };
    let lo_rest = lo.get(common + 1..).unwrap_or_default();
    let hi_rest = hi.get(common + 1..).unwrap_or_default();
    let width = lo_rest.len() as u32;
    let all = |rest: &[u8], d: u8| rest.iter().all(|c| *c == d);
    let with_prefix = |mut parts: Vec<G>| {
        if !prefix.is_empty() {
            parts.insert(0, G::lit(prefix));
        }
        G::seq(parts)
    };
    // The first differing digit takes `a..=b` whole where the rests span everything.
    let first = if all(lo_rest, b'0') { a } else { a + 1 };
    let last = if all(hi_rest, b'9') { b } else { b - 1 };
    if !all(lo_rest, b'0') {
        let mut tail = Vec::new();
        let nines = "9".repeat(lo_rest.len());
        same_length(
            std::str::from_utf8(lo_rest).unwrap_or_default(),
            &nines,
            &mut tail,
        );
        out.push(with_prefix(vec![
            G::lit(&(a as char).to_string()),
            G::alt(tail),
        ]));
    }
    if first <= last {
        out.push(with_prefix(vec![
            G::digits(first, last),
            G::rep(G::digits(b'0', b'9'), width, Some(width)),
        ]));
    }
    if !all(hi_rest, b'9') {
        let mut tail = Vec::new();
        let zeros = "0".repeat(hi_rest.len());
        same_length(
            &zeros,
            std::str::from_utf8(hi_rest).unwrap_or_default(),
            &mut tail,
        );
        out.push(with_prefix(vec![
            G::lit(&(b as char).to_string()),
            G::alt(tail),
        ]));
    }
}

#[cfg(test)]
mod tests {
    use super::super::matcher::matches;
    use super::*;
    use proptest::prelude::*;

    fn check(lo: i128, hi: i128, n: i128) {
        let g = int_range(lo, hi);
        let inside = lo <= n && n <= hi;
        assert_eq!(
            g.as_ref().is_some_and(|g| matches(g, &n.to_string())),
            inside,
            "{n} in {lo}..={hi}"
        );
    }

    #[test]
    fn edges_are_exact() {
        let u64_max = u64::MAX as i128;
        for (lo, hi) in [
            (0, u64_max),
            (i64::MIN as i128, i64::MAX as i128),
            (0, 0),
            (-5, -5),
            (1, 50),
            (123, 456),
            (-300, 7),
            (99, 1000),
        ] {
            for n in [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0, -1, 10, 100] {
                check(lo, hi, n);
            }
        }
        let g = int_range(0, u64_max).unwrap();
        assert!(matches(&g, "18446744073709551615"));
        assert!(!matches(&g, "18446744073709551616"));
        assert!(!matches(&g, "007"));
        assert!(!matches(&g, "-0"));
        assert!(int_range(3, 2).is_none());
    }

    proptest! {
        #[test]
        fn matches_exactly_the_range(
            a in -100_000i128..100_000,
            b in -100_000i128..100_000,
            n in -200_000i128..200_000,
        ) {
            let (lo, hi) = (a.min(b), a.max(b));
            check(lo, hi, n);
            check(lo, hi, lo);
            check(lo, hi, hi);
            check(lo, hi, hi + 1);
            check(lo, hi, lo - 1);
        }

        #[test]
        fn matches_exactly_wide_ranges(a in any::<i64>(), b in any::<u64>(), n in any::<i64>()) {
            let (lo, hi) = (i128::from(a).min(i128::from(b)), i128::from(a).max(i128::from(b)));
            check(lo, hi, i128::from(n));
            check(lo, hi, hi + 1);
            check(lo, hi, lo - 1);
        }
    }
}
