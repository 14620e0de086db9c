//! `@pattern` as grammar: the anchored patterns whose length the grammar can bound.
//!
//! A pattern is matched unanchored against the decoded text, and a grammar cannot intersect
//! it with the length bound, so only patterns anchored at both ends (`^…$`) are translated, and
//! only when every text they match has a length inside `min..=max`, or when one unbounded
//! repetition of a single character (`[a-z]+`) among fixed-length parts can take the length
//! bound itself. The result spells each character as JSON does: `"` and `\` escaped, control
//! characters as their short or `\u00XX` escape, everything else as itself (so a text the
//! decoder would read through other `\u` escapes is not accepted: stricter, never looser).

use regex_syntax::hir::{Class as HirClass, Hir, HirKind, Look};

use super::expr::{Class, G};

/// The content of a JSON string (without its quotes) that matches `pattern` with a length in
/// `min..=max`; `None` when the pattern is not translated.
pub fn translate(pattern: &str, min: u32, max: u32) -> Option<G> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let parts: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(parts) => parts.iter().collect(),
        _ => return None,
    };
    let (first, rest) = parts.split_first()?;
    let (last, inner) = rest.split_last()?;
    let is_look = |h: &Hir, want: &[Look]| matches!(h.kind(), HirKind::Look(l) if want.contains(l));
    if !is_look(first, &[Look::Start]) || !is_look(last, &[Look::End]) {
        return None;
    }
    let lens: Vec<(u64, Option<u64>)> = inner.iter().map(|h| char_len(h)).collect();
    let unbounded: Vec<usize> = (0..lens.len())
        .filter(|i| lens.get(*i).is_some_and(|l| l.1.is_none()))
        .collect();
    let (min, max) = (u64::from(min), u64::from(max));
    let mut out = Vec::with_capacity(inner.len());
    match unbounded.as_slice() {
        [] => {
            let lo: u64 = lens.iter().map(|l| l.0).sum();
            let hi: u64 = lens.iter().filter_map(|l| l.1).sum();
            if lo < min || hi > max {
                return None;
            }
            for h in inner {
                out.push(convert(h)?);
            }
        }
        [one] => {
            // Every other part has a fixed length; the repetition takes what the bound leaves.
            let mut fixed = 0u64;
            for (i, l) in lens.iter().enumerate() {
                if i != *one {
                    if Some(l.0) != l.1 {
                        return None;
                    }
                    fixed += l.0;
                }
            }
            for (i, h) in inner.iter().enumerate() {
                if i != *one {
                    out.push(convert(h)?);
                    continue;
                }
                let HirKind::Repetition(rep) = h.kind() else {
                    return None;
                };
                if char_len(&rep.sub) != (1, Some(1)) {
                    return None;
                }
                let lo = u64::from(rep.min).max(min.saturating_sub(fixed));
                let hi = max.checked_sub(fixed)?;
                if lo > hi {
                    return None;
                }
                let (lo, hi) = (u32::try_from(lo).ok()?, u32::try_from(hi).ok()?);
                out.push(G::rep(convert(&rep.sub)?, lo, Some(hi)));
            }
        }
        _ => return None,
    }
    Some(G::seq(out))
}

/// The fewest and most characters `h` matches (`None`: no most).
fn char_len(h: &Hir) -> (u64, Option<u64>) {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => (0, Some(0)),
        HirKind::Literal(lit) => {
            let n = String::from_utf8_lossy(&lit.0).chars().count() as u64;
            (n, Some(n))
        }
        HirKind::Class(_) => (1, Some(1)),
        HirKind::Repetition(rep) => {
            let (lo, hi) = char_len(&rep.sub);
            let max = match (rep.max, hi) {
                (Some(m), Some(h)) => Some(u64::from(m).saturating_mul(h)),
                (_, Some(0)) => Some(0),
                _ => None,
            };
            (u64::from(rep.min).saturating_mul(lo), max)
        }
        HirKind::Capture(cap) => char_len(&cap.sub),
        HirKind::Concat(parts) => parts.iter().fold((0, Some(0)), |(lo, hi), p| {
            let (a, b) = char_len(p);
            (lo + a, hi.zip(b).map(|(x, y)| x.saturating_add(y)))
        }),
        HirKind::Alternation(alts) => {
            let lens: Vec<_> = alts.iter().map(char_len).collect();
            let lo = lens.iter().map(|l| l.0).min().unwrap_or(0);
            let hi = lens.iter().try_fold(0u64, |m, l| l.1.map(|h| m.max(h)));
            (lo, hi)
        }
    }
}

fn convert(h: &Hir) -> Option<G> {
    Some(match h.kind() {
        HirKind::Empty => G::Seq(Vec::new()),
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0).ok()?;
            G::lit(&text.chars().map(spelled).collect::<String>())
        }
        HirKind::Class(HirClass::Unicode(cls)) => {
            let ranges: Vec<(char, char)> = cls.iter().map(|r| (r.start(), r.end())).collect();
            class(&ranges)
        }
        HirKind::Class(HirClass::Bytes(_)) | HirKind::Look(_) => return None,
        HirKind::Repetition(rep) => G::rep(convert(&rep.sub)?, rep.min, rep.max),
        HirKind::Capture(cap) => convert(&cap.sub)?,
        HirKind::Concat(parts) => G::seq(parts.iter().map(convert).collect::<Option<_>>()?),
        HirKind::Alternation(alts) => G::alt(alts.iter().map(convert).collect::<Option<_>>()?),
    })
}

/// How JSON spells `c` inside a string (serde_json's spelling).
fn spelled(c: char) -> String {
    serde_json::to_string(&c.to_string())
        .ok()
        .and_then(|s| s.get(1..s.len() - 1).map(str::to_owned))
        .unwrap_or_default()
}

/// A character class inside a JSON string: its characters that need no escape as a class,
/// and each one that does (`"`, `\`, control characters) as its escape.
fn class(ranges: &[(char, char)]) -> G {
    let special = |c: char| c == '"' || c == '\\' || c < '\u{20}';
    let mut plain = Vec::new();
    let mut escaped = Vec::new();
    for &(a, b) in ranges {
        // Split each range around the special characters (all below U+0060).
        let (mut start, end) = (a as u32, b as u32);
        for c in (a as u32)..=end.min(0x5f) {
            let ch = char::from_u32(c).unwrap_or('a');
            if special(ch) {
                if start < c {
                    plain.push((start, c - 1));
                }
                escaped.push(G::lit(&spelled(ch)));
                start = c + 1;
            }
        }
        if start <= end {
            plain.push((start, end));
        }
    }
    let plain: Vec<(char, char)> = plain
        .into_iter()
        .filter_map(|(a, b)| Some((char::from_u32(a)?, char::from_u32(b)?)))
        .collect();
    let mut alts = Vec::new();
    if !plain.is_empty() {
        alts.push(G::Class(Class {
            negated: false,
            ranges: plain,
        }));
    }
    alts.extend(escaped);
    G::alt(alts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_patterns_within_the_length_are_translated() {
        assert!(translate("^[A-Z]{3}$", 3, 3).is_some());
        assert!(translate("^[a-z]+$", 1, 20).is_some());
        assert!(translate("^ab-[0-9]*$", 0, 10).is_some());
        // Unanchored, too long, or two unbounded parts: left to the pipeline.
        assert!(translate("[A-Z]{3}", 3, 3).is_none());
        assert!(translate("^[A-Z]{3,5}$", 1, 4).is_none());
        assert!(translate("^[a-z]{2}$", 3, 10).is_none());
        assert!(translate("^a*b*$", 0, 10).is_none());
        assert!(translate("^a\\bb$", 0, 10).is_none());
    }

    #[test]
    fn special_characters_are_spelled_as_escapes() {
        let g = class(&[('\0', '\u{10FFFF}')]);
        let G::Alt(alts) = g else { panic!("{g:?}") };
        assert!(alts.contains(&G::lit("\\\"")));
        assert!(alts.contains(&G::lit("\\\\")));
        assert!(alts.contains(&G::lit("\\n")));
        assert!(alts.contains(&G::lit("\\u0001")));
        let G::Class(plain) = &alts[0] else { panic!() };
        assert!(plain.contains('a') && !plain.contains('"') && !plain.contains('\n'));
    }
}
