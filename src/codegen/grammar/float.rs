//! Float spellings: every finite `f64` (or `f32`) as the usual shortest-round-trip printers
//! write it, and nothing that would decode as infinite; and the floats of a range (one end or
//! two, any magnitude), exact against the decoder in the spellings [`range`] names.
//!
//! A printer writes at most 17 significant digits, but where they sit varies: `serde_json`
//! (ryu) writes `0.0001234…` with up to 4 leading zeros and `1e100` past 10^16, Python
//! `1e-05` and `1e+100`, JavaScript `0.000001234…` (5 leading zeros) and up to 21 integer
//! digits before switching to `1e+21`. So the grammar bounds the digits generously rather
//! than significantly: up to 21 before the point and 22 after it (bounded, so a model cannot
//! run away in digits), an exponent of up to 2 digits after such a number, and the
//! scientific form `d.ddd…e±NNN` (one digit before the point, up to 16 after) with an
//! exponent of up to 3 digits. Finiteness: a fixed number with a 2-digit exponent stays
//! below 10^120; a 3-digit positive exponent is at most 307 — or 308 with a mantissa of at
//! most `1.7976931348623158`, the largest 17-digit mantissa whose value rounds to `f64::MAX`
//! rather than to infinity (exact at the edge, checked by the tests below). An `f32` takes
//! no exponent after a fixed number (10^21 × 10^99 overflows it) and scientific exponents up
//! to 38, with a mantissa of at most `3.4028235677973364` at 38 (the decoder rounds the `f64`
//! to `f32`, and the largest value that does not round to infinity is there).

use std::fmt::Write as _;

use aelc_runtime::ty::{FloatBound, FloatKind, FloatTy};

use super::expr::G;

/// Most digits before the point of a fixed-notation number (JavaScript writes up to 10^21).
const INT_DIGITS: u32 = 21;
/// Most digits after the point of a fixed-notation number (JavaScript writes 5 leading zeros
/// before 17 significant digits from 10^-6).
const FRACTION_DIGITS: u32 = 22;
/// Most digits after the point of a mantissa in scientific notation (17 significant).
const MANTISSA_FRACTION: u32 = 16;
/// The largest 17-digit mantissa at the largest decimal exponent, per kind: `f64` at 308,
/// `f32` at 38.
const F64_EDGE: (&str, &str) = ("17976931348623158", "308");
const F32_EDGE: (&str, &str) = ("34028235677973364", "38");

/// The spellings of a float of `kind`, without a minus sign when `nonnegative`.
pub fn float(kind: FloatKind, nonnegative: bool) -> G {
    let digit = || G::digits(b'0', b'9');
    let int_part = G::alt(vec![
        G::lit("0"),
        G::seq(vec![
            G::digits(b'1', b'9'),
            G::rep(digit(), 0, Some(INT_DIGITS - 1)),
        ]),
    ]);
    let fraction = G::opt(G::seq(vec![
        G::lit("."),
        G::rep(digit(), 1, Some(FRACTION_DIGITS)),
    ]));
    let e = || G::class(&[('e', 'e'), ('E', 'E')]);
    let plus = || G::opt(G::lit("+"));
    let fixed = match kind {
        FloatKind::F64 => G::seq(vec![
            int_part,
            fraction,
            G::opt(G::seq(vec![
                e(),
                G::opt(G::class(&[('+', '+'), ('-', '-')])),
                G::rep(digit(), 1, Some(2)),
            ])),
        ]),
        FloatKind::F32 => G::seq(vec![int_part, fraction]),
    };
    let mantissa = G::seq(vec![
        digit(),
        G::opt(G::seq(vec![
            G::lit("."),
            G::rep(digit(), 1, Some(MANTISSA_FRACTION)),
        ])),
    ]);
    // Positive exponents below the edge, and any negative one (small numbers only underflow).
    let (below_edge, negative, edge) = match kind {
        FloatKind::F64 => (
            G::alt(vec![
                G::seq(vec![G::digits(b'1', b'2'), digit(), digit()]),
                G::seq(vec![G::lit("30"), G::digits(b'0', b'7')]),
            ]),
            G::rep(digit(), 3, Some(3)),
            F64_EDGE,
        ),
        FloatKind::F32 => (
            G::alt(vec![
                G::seq(vec![G::opt(G::lit("0")), digit()]),
                G::seq(vec![G::digits(b'1', b'2'), digit()]),
                G::seq(vec![G::lit("3"), G::digits(b'0', b'7')]),
            ]),
            G::rep(digit(), 1, Some(3)),
            F32_EDGE,
        ),
    };
    let scientific = G::seq(vec![
        mantissa,
        e(),
        G::alt(vec![
            G::seq(vec![G::lit("-"), negative]),
            G::seq(vec![plus(), below_edge]),
        ]),
    ]);
    let at_edge = G::seq(vec![mantissa_at_most(edge.0), e(), plus(), G::lit(edge.1)]);
    let sign = if nonnegative {
        G::Seq(Vec::new())
    } else {
        G::opt(G::lit("-"))
    };
    G::seq(vec![sign, G::Alt(vec![fixed, scientific, at_edge])])
}

/// `-0` with up to 22 zeros after the point: the spellings of -0.0 among [`float`]'s.
pub fn negative_zero() -> G {
    G::seq(vec![
        G::lit("-0"),
        G::opt(G::seq(vec![
            G::lit("."),
            G::rep(G::lit("0"), 1, Some(FRACTION_DIGITS)),
        ])),
    ])
}

/// Mantissas `d` or `d.ddd…` (up to 16 digits after the point) whose digits, read as a
/// decimal fraction, are at most `bound`'s (17 digits).
fn mantissa_at_most(bound: &str) -> G {
    digit_interval(0, bound.parse().unwrap_or(0), MANTISSA_FRACTION)
}

/// Where the exact fixed-notation part of a range stops (±10^16, inclusive) and
/// [`far`] takes over: 10^16 is where `serde_json` switches to `1e16`. The accepted decimals
/// below it are computed in units of 10^-22, and (10^16 + 1) × 10^22 still fits an `i128`.
const FAR: f64 = 1e16;

/// Largest exponent magnitude a scientific spelling in a range takes (three digits).
const MAX_EXPONENT: u32 = 999;

/// The smallest positive exponent of `d.ddd…e+N` in a range: 10^16 and up.
const FAR_EXPONENT: u32 = 16;

/// The spellings of the floats of `ft` when it has an end and its ends are finite (inclusive
/// or exclusive, whole or fractional, of any magnitude), else `None`. Exact in the spellings
/// it covers: a decimal in fixed notation with at most 21 digits before the point and 22
/// after it, `d.ddd…e-N` (a digit 1–9, at most 16 after the point, `N` of at most three
/// digits) or `d.ddd…e+N` (`N` from 16, `+` optional) is accepted exactly when the decoder
/// accepts it. The accepted decimals of each spelling are found with the decoder's own
/// comparison ([`aelc_runtime::bounds::check_float`], finiteness included) on the parsed
/// value: parsing rounds monotonically, so they form one interval per sign and exponent,
/// which [`digit_interval`] spells. Fixed notation is searched in two parts: up to 10^16 in
/// units of 10^-22, with the range's ends clamped to ±10^16 (every decimal below 10^16 parses
/// to at most 10^16, so nothing in the range falls between the parts), and from 10^16 on by
/// integer part and then fraction ([`far`]).
pub fn range(ft: &FloatTy) -> Option<G> {
    if ft.min.is_none() && ft.max.is_none() {
        return None;
    }
    if ![ft.min, ft.max]
        .iter()
        .flatten()
        .all(|b| b.value.is_finite())
    {
        return None;
    }
    let exact = Bounds::new(ft);
    let mirrored = mirror(ft);
    let exact_mirrored = Bounds::new(&mirrored);
    // The near part's range: each end clamped to ±10^16 (inclusive) when it is beyond it or
    // open. A clamped range holds no more than the range, and every decimal of magnitude
    // below 10^16 in the range is in it.
    let clamp = |b: Option<FloatBound>, far: f64| match b {
        Some(b) if b.value.abs() <= FAR => b,
        Some(b) if (b.value > 0.0) != (far > 0.0) => b,
        _ => FloatBound {
            value: far,
            exclusive: false,
        },
    };
    let near = FloatTy {
        min: Some(clamp(ft.min, -FAR)),
        max: Some(clamp(ft.max, FAR)),
        ..*ft
    };
    let bounds = Bounds::new(&near);
    let mut alts = Vec::new();
    // Fixed notation: signed units of 10^-22 (10^16 + 1 in magnitude is the widest needed).
    let limit = (FAR as i128 + 1) * pow10(FRACTION_DIGITS);
    let fixed = |k: i128| spell_units(k, FRACTION_DIGITS);
    if let Some((a, b)) = accepted_interval(-limit, limit, fixed, &bounds) {
        if b >= 0 {
            alts.push(digit_interval(a.max(0), b, FRACTION_DIGITS));
        }
        if a <= 0 {
            // `-0` and `-0.0` decode to -0.0, which the bounds compare as 0.
            let (top, bottom) = (-a, (-b).max(0));
            alts.push(G::seq(vec![
                G::lit("-"),
                digit_interval(bottom, top, FRACTION_DIGITS),
            ]));
        }
    }
    // `-x` is in the range when `x` is in the mirrored one.
    // Past 10^16 only when the side reaches it (every such decimal parses to at least 10^16),
    // which spares the search of every positive exponent for most ranges.
    let reaches = |top: Option<FloatBound>| top.is_none_or(|t| t.value >= FAR);
    for (b, sign, top) in [(&exact, "", ft.max), (&exact_mirrored, "-", mirrored.max)] {
        let parts = if reaches(top) {
            [scientific(b, false), scientific(b, true), far(b)]
        } else {
            [scientific(b, false), None, None]
        };
        for part in parts.into_iter().flatten() {
            alts.push(if sign.is_empty() {
                part
            } else {
                G::seq(vec![G::lit(sign), part])
            });
        }
    }
    Some(if alts.is_empty() {
        super::never()
    } else {
        G::alt(alts)
    })
}

/// `ft` mirrored at 0: `x` is in it when `-x` is in `ft`.
fn mirror(ft: &FloatTy) -> FloatTy {
    let neg = |b: FloatBound| FloatBound {
        value: -b.value,
        ..b
    };
    FloatTy {
        min: ft.max.map(neg),
        max: ft.min.map(neg),
        ..*ft
    }
}

/// Fixed notation from 10^16 on (17 to 21 digits before the point, up to 22 after it) that
/// the decoder accepts: the first integer part whose largest fraction is not below the
/// minimum and the last whose zero fraction is not above the maximum, each by bisection, then
/// the fractions of those two integer parts, each by bisection too.
fn far(bounds: &Bounds) -> Option<G> {
    let (lo, hi) = (pow10(16), pow10(INT_DIGITS) - 1);
    let nines = "9".repeat(FRACTION_DIGITS as usize);
    let first = first_true(lo, hi, |i| bounds.above_min(&format!("{i}.{nines}")))?;
    let last = last_true(lo, hi, |i| bounds.below_max(&i.to_string()))?;
    if first > last {
        return None;
    }
    let spell = |i: i128, f: i128| format!("{i}.{f:0width$}", width = FRACTION_DIGITS as usize);
    let top = pow10(FRACTION_DIGITS) - 1;
    let from = first_true(0, top, |f| bounds.above_min(&spell(first, f)))?;
    let to = last_true(0, top, |f| bounds.below_max(&spell(last, f)))?;
    if first == last && from > to {
        return None;
    }
    let frac = |f: i128| format!("{f:0width$}", width = FRACTION_DIGITS as usize).into_bytes();
    Some(spell_interval(first, &frac(from), last, &frac(to)))
}

/// The first `k` in `lo..=hi` where `p` holds, `p` turning true once along the way.
fn first_true(lo: i128, hi: i128, p: impl Fn(i128) -> bool) -> Option<i128> {
    let (mut x, mut y) = (lo, hi + 1);
    while x < y {
        let mid = floor_mid(x, y);
        if p(mid) {
            y = mid;
        } else {
            x = mid + 1;
        }
    }
    (x <= hi).then_some(x)
}

/// The last `k` in `lo..=hi` where `p` holds, `p` turning false once along the way.
fn last_true(lo: i128, hi: i128, p: impl Fn(i128) -> bool) -> Option<i128> {
    let (mut x, mut y) = (lo - 1, hi);
    while x < y {
        let mid = floor_mid(x, y) + ((x ^ y) & 1);
        if p(mid) {
            x = mid;
        } else {
            y = mid - 1;
        }
    }
    (x >= lo).then_some(x)
}

/// The spellings `d.ddd…e-N` (`positive`: `d.ddd…e+N` from `N` = 16, the `+` optional) the
/// decoder accepts: for each exponent `N` the accepted mantissas form an interval (units of
/// 10^-16 from 1 to 10); the exponents whose whole decade is accepted are spelled as one
/// integer range, the others (at most the two holding an end, or the largest finite value)
/// each with their mantissa interval.
fn scientific(bounds: &Bounds, positive: bool) -> Option<G> {
    let (first, last) = (pow10(MANTISSA_FRACTION), 10 * pow10(MANTISSA_FRACTION) - 1);
    let sign = if positive { "" } else { "-" };
    let spell = |k: i128, n: u32| format!("{}e{sign}{n}", spell_units(k, MANTISSA_FRACTION));
    let mut whole: Vec<u32> = Vec::new();
    let mut alts = Vec::new();
    let e = || G::class(&[('e', 'e'), ('E', 'E')]);
    // Python writes `1e-05` and `1e+16`.
    let signed = || {
        if positive {
            G::opt(G::lit("+"))
        } else {
            G::seq(vec![G::lit("-"), G::rep(G::lit("0"), 0, Some(2))])
        }
    };
    let exponents = if positive {
        FAR_EXPONENT..=MAX_EXPONENT
    } else {
        1..=MAX_EXPONENT
    };
    // The two ends of every decade, spelled once: this loop runs up to a thousand times.
    let (mut lo_text, mut hi_text) = (spell(first, 0), spell(last, 0));
    let stem = lo_text.len() - 1;
    for n in exponents {
        for text in [&mut lo_text, &mut hi_text] {
            text.truncate(stem);
            let _ = write!(text, "{n}");
        }
        // A decade wholly below the minimum or above the maximum holds nothing (each verdict
        // changes once along the numbers): no search. Most of the thousand exponents are such.
        if !bounds.above_min(&hi_text) || !bounds.below_max(&lo_text) {
            continue;
        }
        // Its smallest value not below the minimum and its largest not above the maximum:
        // the whole decade is in.
        if bounds.above_min(&lo_text) && bounds.below_max(&hi_text) {
            whole.push(n);
            continue;
        }
        // A decade partly in the range holds an end: search it.
        if let Some((a, b)) = accepted_interval(first, last, |k| spell(k, n), bounds) {
            alts.push(G::seq(vec![
                digit_interval(a, b, MANTISSA_FRACTION),
                e(),
                signed(),
                G::lit(&n.to_string()),
            ]));
        }
    }
    // The whole decades are consecutive (the range is an interval).
    if let (Some(&lo), Some(&hi)) = (whole.first(), whole.last()) {
        if let Some(exponents) = super::range::int_range(i128::from(lo), i128::from(hi)) {
            alts.push(G::seq(vec![
                digit_interval(first, last, MANTISSA_FRACTION),
                e(),
                signed(),
                exponents,
            ]));
        }
    }
    if alts.is_empty() {
        return None;
    }
    Some(G::alt(alts))
}

fn pow10(n: u32) -> i128 {
    10i128.pow(n)
}

/// `k` units of 10^-`digits` in fixed notation with all `digits` after the point.
fn spell_units(k: i128, digits: u32) -> String {
    let sign = if k < 0 { "-" } else { "" };
    let m = k.unsigned_abs();
    let unit = pow10(digits).unsigned_abs();
    format!(
        "{sign}{}.{:0width$}",
        m / unit,
        m % unit,
        width = digits as usize
    )
}

/// The `k` in `lo..=hi` whose spelling the decoder accepts: from the first one that is not
/// below the minimum to the last one not above the maximum, each found by bisection (parsing
/// rounds monotonically, so each verdict changes once); `None` when there is none.
fn accepted_interval(
    lo: i128,
    hi: i128,
    spell: impl Fn(i128) -> String,
    b: &Bounds,
) -> Option<(i128, i128)> {
    let first = first_true(lo, hi, |k| b.above_min(&spell(k)))?;
    let last = last_true(lo, hi, |k| b.below_max(&spell(k)))?;
    (first <= last).then_some((first, last))
}

/// `⌊(x + y) / 2⌋` without overflow (the units span more than half of `i128`).
fn floor_mid(x: i128, y: i128) -> i128 {
    (x >> 1) + (y >> 1) + (x & y & 1)
}

/// The two ends of a range, each as the decoder judges it.
struct Bounds {
    min: FloatTy,
    max: FloatTy,
}

impl Bounds {
    fn new(ft: &FloatTy) -> Bounds {
        Bounds {
            min: FloatTy { max: None, ..*ft },
            max: FloatTy { min: None, ..*ft },
        }
    }

    /// Not below the minimum: a number too large to be finite is above it (finiteness is
    /// the maximum's side, so each verdict changes once along the numbers).
    fn above_min(&self, text: &str) -> bool {
        text.parse::<f64>().is_ok_and(|v| {
            match aelc_runtime::bounds::check_float(v, || text, &self.min) {
                None => true,
                Some((code, _)) => code == aelc_runtime::error::Code::NotFinite && v > 0.0,
            }
        })
    }

    /// Not above the maximum, nor too large to be finite (a number too small to be finite is
    /// the minimum's side).
    fn below_max(&self, text: &str) -> bool {
        text.parse::<f64>().is_ok_and(|v| {
            match aelc_runtime::bounds::check_float(v, || text, &self.max) {
                None => true,
                Some((code, _)) => code == aelc_runtime::error::Code::NotFinite && v < 0.0,
            }
        })
    }
}

/// Digit strings `int[.frac]` (a canonical integer part, then up to `digits` digits after the
/// point) whose value, in units of 10^-`digits`, is in `a..=b` (`0 <= a <= b`). The integer
/// parts strictly between the ends take any fraction ([`super::range::int_range`]); an end's
/// integer part takes the fractions on its side of the end's, compared digit by digit
/// ([`frac_at_least`], [`frac_at_most`], [`frac_between`]).
fn digit_interval(a: i128, b: i128, digits: u32) -> G {
    let unit = pow10(digits);
    let frac = |k: i128| format!("{:0width$}", k % unit, width = digits as usize).into_bytes();
    spell_interval(a / unit, &frac(a), b / unit, &frac(b))
}

/// Digit strings `int[.frac]` from integer part `ia` with fraction digits `fa` to `ib` with
/// `fb` (as many digits each, the ends read with trailing zeros), as [`digit_interval`].
fn spell_interval(ia: i128, fa: &[u8], ib: i128, fb: &[u8]) -> G {
    let digits = fa.len();
    let (fa, fb) = (fa.to_vec(), fb.to_vec());
    let int = |i: i128| G::lit(&i.to_string());
    if ia == ib {
        return G::seq(vec![int(ia), frac_between(&fa, &fb, 0).spelled()]);
    }
    // An end whose fraction takes every digit string (`.000…` below, `.999…` above) joins the
    // integer parts in between, so a whole decade of mantissas is one `[1-9]` and not three.
    let (lo_whole, hi_whole) = (zeros_from(&fa, 0), fb.iter().all(|d| *d == b'9'));
    let mut alts = Vec::new();
    if !lo_whole {
        alts.push(G::seq(vec![int(ia), frac_at_least(&fa, 0).spelled()]));
    }
    let middle = (ia + i128::from(!lo_whole), ib - i128::from(!hi_whole));
    if let Some(middle) = super::range::int_range(middle.0, middle.1) {
        alts.push(G::seq(vec![middle, any_frac(digits).spelled()]));
    }
    if !hi_whole {
        alts.push(G::seq(vec![int(ib), frac_at_most(&fb, 0).spelled()]));
    }
    G::alt(alts)
}

/// A set of digit strings after the point: the nonempty ones, and whether no fraction at all
/// (no point) belongs too.
struct Frac {
    nonempty: Option<G>,
    empty: bool,
}

impl Frac {
    /// `.ddd` or nothing, as the set says.
    fn spelled(self) -> G {
        let dotted = self.nonempty.map(|g| G::seq(vec![G::lit("."), g]));
        match (dotted, self.empty) {
            (Some(d), true) => G::opt(d),
            (Some(d), false) => d,
            (None, _) => G::Seq(Vec::new()),
        }
    }

    /// The set as one expression (empty string included when it belongs).
    fn inner(self) -> G {
        match (self.nonempty, self.empty) {
            (Some(g), true) => G::opt(g),
            (Some(g), false) => g,
            (None, _) => G::Seq(Vec::new()),
        }
    }

    fn of(alts: Vec<G>, empty: bool) -> Frac {
        Frac {
            nonempty: (!alts.is_empty()).then(|| G::alt(alts)),
            empty,
        }
    }
}

fn any_digits(max: usize) -> G {
    G::rep(G::digits(b'0', b'9'), 0, Some(max as u32))
}

fn any_frac(len: usize) -> Frac {
    Frac::of(
        vec![G::rep(G::digits(b'0', b'9'), 1, Some(len as u32))],
        true,
    )
}

fn digit(d: u8) -> G {
    G::Lit(char::from(d).to_string())
}

/// Fractions from position `i` on, read with trailing zeros, at most `bound[i..]`: a shorter
/// string is compared with the bound's prefix (the zeros it stands for are never larger).
fn frac_at_most(bound: &[u8], i: usize) -> Frac {
    let Some(&d) = bound.get(i) else {
        return Frac::of(Vec::new(), true);
    };
    if bound
        .get(i..)
        .unwrap_or_default()
        .iter()
        .all(|d| *d == b'9')
    {
        return any_frac(bound.len() - i);
    }
    let rest = bound.len() - i - 1;
    if rest == 0 {
        // The last digit: one class (`[0-4]`, not `[0-3] | "4"`).
        return Frac::of(vec![G::digits(b'0', d)], true);
    }
    let mut alts = Vec::new();
    if d > b'0' {
        alts.push(G::seq(vec![G::digits(b'0', d - 1), any_digits(rest)]));
    }
    alts.push(G::seq(vec![digit(d), frac_at_most(bound, i + 1).inner()]));
    Frac::of(alts, true)
}

/// Fractions from position `i` on, read with trailing zeros, at least `bound[i..]`: stopping
/// early is only allowed when the bound's remaining digits are all zero.
fn frac_at_least(bound: &[u8], i: usize) -> Frac {
    let Some(&d) = bound.get(i) else {
        return Frac::of(Vec::new(), true);
    };
    if zeros_from(bound, i) {
        return any_frac(bound.len() - i);
    }
    let rest = bound.len() - i - 1;
    if rest == 0 {
        return Frac::of(vec![G::digits(d, b'9')], false);
    }
    let mut alts = Vec::new();
    alts.push(G::seq(vec![digit(d), frac_at_least(bound, i + 1).inner()]));
    if d < b'9' {
        alts.push(G::seq(vec![G::digits(d + 1, b'9'), any_digits(rest)]));
    }
    Frac::of(alts, zeros_from(bound, i))
}

/// Fractions between `lo[i..]` and `hi[i..]` (equal lengths, `lo <= hi`).
fn frac_between(lo: &[u8], hi: &[u8], i: usize) -> Frac {
    let (Some(&a), Some(&b)) = (lo.get(i), hi.get(i)) else {
        return Frac::of(Vec::new(), true);
    };
    if zeros_from(lo, i) && hi.get(i..).unwrap_or_default().iter().all(|d| *d == b'9') {
        return any_frac(lo.len() - i);
    }
    if a == b {
        return Frac::of(
            vec![G::seq(vec![digit(a), frac_between(lo, hi, i + 1).inner()])],
            zeros_from(lo, i),
        );
    }
    let rest = lo.len() - i - 1;
    if rest == 0 {
        return Frac::of(vec![G::digits(a, b)], a == b'0');
    }
    let mut alts = vec![G::seq(vec![digit(a), frac_at_least(lo, i + 1).inner()])];
    if a + 1 < b {
        alts.push(G::seq(vec![G::digits(a + 1, b - 1), any_digits(rest)]));
    }
    alts.push(G::seq(vec![digit(b), frac_at_most(hi, i + 1).inner()]));
    Frac::of(alts, zeros_from(lo, i))
}

fn zeros_from(digits: &[u8], i: usize) -> bool {
    digits
        .get(i..)
        .unwrap_or_default()
        .iter()
        .all(|d| *d == b'0')
}

#[cfg(test)]
mod tests {
    use super::super::matcher::matches;
    use super::*;
    use proptest::prelude::*;

    /// What the decoder takes as a float of `kind` (finite, and finite as an `f32`).
    fn decodes(kind: FloatKind, text: &str) -> bool {
        text.parse::<f64>()
            .is_ok_and(|v| v.is_finite() && (kind == FloatKind::F64 || (v as f32).is_finite()))
    }

    fn agree(kind: FloatKind, text: &str) {
        let g = float(kind, false);
        assert_eq!(matches(&g, text), decodes(kind, text), "{kind:?} {text}");
    }

    #[test]
    fn shortest_spellings_of_every_printer_are_accepted() {
        let f64s = [
            "-0.039999999999999813", // the seed of issue 26's flaky property test
            "0.00012345678901234567",
            "0.0000012345678901234567",
            "100000000000000000000",
            "1e100",
            "1e+100",
            "1e-05",
            "5e-324",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.0E10",
            "12.5e3",
        ];
        let g = float(FloatKind::F64, false);
        for t in f64s {
            assert!(matches(&g, t), "{t}");
            agree(FloatKind::F64, t);
        }
        let g = float(FloatKind::F32, false);
        for t in [
            "3.4028235e38",
            "3.4028234663852886e38",
            "3.4028235677973364e38",
            "1e-45",
            "1.17549435e-38",
            "0.1",
            "1e+21",
        ] {
            assert!(matches(&g, t), "{t}");
        }
    }

    #[test]
    fn edges_are_exact_and_nothing_infinite_is_accepted() {
        for t in [
            "1.7976931348623159e308",
            "1.8e308",
            "2e308",
            "1e309",
            "9.9e307",
            "1e308",
        ] {
            agree(FloatKind::F64, t);
        }
        for t in [
            "3.4028235677973365e38",
            "3.5e38",
            "4e38",
            "1e39",
            "9.9999e37",
            "3.4e38",
        ] {
            agree(FloatKind::F32, t);
        }
        let unsigned = float(FloatKind::F64, true);
        assert!(!matches(&unsigned, "-1"));
        assert!(matches(&unsigned, "0.5"));
    }

    /// `kind<lo..hi>` with each end inclusive unless marked exclusive.
    fn ty(kind: FloatKind, lo: f64, lo_excl: bool, hi: f64, hi_excl: bool) -> FloatTy {
        let bound = |value, exclusive| Some(FloatBound { value, exclusive });
        FloatTy {
            kind,
            min: bound(lo, lo_excl),
            max: bound(hi, hi_excl),
        }
    }

    /// `kind` with only the ends given, each `(value, exclusive)`.
    fn open(kind: FloatKind, lo: Option<(f64, bool)>, hi: Option<(f64, bool)>) -> FloatTy {
        let bound = |(value, exclusive)| FloatBound { value, exclusive };
        FloatTy {
            kind,
            min: lo.map(bound),
            max: hi.map(bound),
        }
    }

    /// The decoder's verdict on `text` for `ft`.
    fn in_ty(ft: &FloatTy, text: &str) -> bool {
        text.parse::<f64>()
            .is_ok_and(|v| aelc_runtime::bounds::check_float(v, || text, ft).is_none())
    }

    /// Whether `text` is in a spelling a range's grammar covers: fixed notation with at most
    /// 21 digits before the point and 22 after it, or `d.ddd…e-N` (a digit 1 to 9, at most 16
    /// after the point, `N` of at most 3 digits), or `d.ddd…e+N` with `N` from 16.
    fn covered(text: &str) -> bool {
        let t = text.strip_prefix('-').unwrap_or(text);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if let Some((m, e)) = t.split_once(['e', 'E']) {
            let (int, frac) = m.split_once('.').unwrap_or((m, "1"));
            // Positive exponents from 16 (canonical, `+` optional): past every closed end.
            let Some(n) = e.strip_prefix('-') else {
                let n = e.strip_prefix('+').unwrap_or(e);
                return int.len() == 1
                    && int != "0"
                    && digits(int)
                    && digits(frac)
                    && frac.len() <= 16
                    && digits(n)
                    && !n.starts_with('0')
                    && n.parse::<u32>().is_ok_and(|n| (16..1000).contains(&n));
            };
            return int.len() == 1
                && int != "0"
                && digits(int)
                && digits(frac)
                && frac.len() <= 16
                && digits(n)
                && n.len() <= 3
                && n.bytes().any(|b| b != b'0');
        }
        let (int, frac) = t.split_once('.').unwrap_or((t, "0"));
        digits(int)
            && (int == "0" || !int.starts_with('0'))
            && int.len() <= 21
            && digits(frac)
            && frac.len() <= 22
    }

    /// The spellings of `v` a test tries: Rust's shortest round trip (fixed and scientific),
    /// `serde_json`'s, fixed with 17 and 22 digits after the point, and 16 after a scientific
    /// mantissa.
    fn spellings(v: f64) -> Vec<String> {
        vec![
            format!("{v}"),
            format!("{v:e}"),
            serde_json::to_string(&v).unwrap_or_default(),
            format!("{v:.17}"),
            format!("{v:.22}"),
            format!("{v:.16e}"),
            format!("{v:.3e}"),
        ]
    }

    /// Grammar and decoder on `text` for `ft`: never accepted by the grammar alone, and in a
    /// covered spelling the same verdict.
    fn agree_in(ft: &FloatTy, g: &G, text: &str) {
        let (by_grammar, by_decoder) = (matches(g, text), in_ty(ft, text));
        assert!(
            !by_grammar || by_decoder,
            "grammar accepts {text} for {ft:?}"
        );
        if covered(text) {
            assert_eq!(by_grammar, by_decoder, "{text} for {ft:?}");
        }
    }

    /// The next `f64` up from `v` (`f64::next_up`, stable only since Rust 1.86; the MSRV is 1.85).
    fn next_up(v: f64) -> f64 {
        if v.is_nan() || v == f64::INFINITY {
            return v;
        }
        if v == 0.0 {
            return f64::from_bits(1);
        }
        let bits = v.to_bits();
        f64::from_bits(if v > 0.0 { bits + 1 } else { bits - 1 })
    }

    /// The next `f64` down from `v` (`f64::next_down`).
    fn next_down(v: f64) -> f64 {
        -next_up(-v)
    }

    /// The values a range test tries: each end, the next float each way, zero both ways, and
    /// a few inside and out.
    fn near(ft: &FloatTy) -> Vec<f64> {
        let mut out = vec![0.0, -0.0, 1e-7, -1e-7, 5e-324];
        {
            // Around 10^16, where the far part starts, and up to the largest finite values.
            for v in [
                FAR,
                next_down(FAR),
                next_up(FAR),
                9.5e15,
                1.5e17,
                1e21,
                1e300,
                f64::MAX,
                f64::from(f32::MAX),
                3.5e38,
            ] {
                out.extend([v, -v]);
            }
        }
        for b in [ft.min, ft.max].into_iter().flatten() {
            let v = b.value;
            out.extend([v, next_up(v), next_down(v), v + 0.25, v - 0.25, v / 3.0]);
            out.extend([next_up(next_up(v)), next_down(next_down(v))]);
        }
        out
    }

    fn check_range(ft: &FloatTy) {
        let g = range(ft).expect("a range with an end");
        for v in near(ft) {
            for text in spellings(v) {
                agree_in(ft, &g, &text);
            }
        }
    }

    #[test]
    fn ranges_are_exact_at_their_ends() {
        use FloatKind::{F32, F64};
        let g = range(&ty(F64, 0.0, false, 1e9, false)).unwrap();
        for (t, ok) in [
            ("0", true),
            ("0.0", true),
            ("-0.0", true),
            ("1000000000", true),
            ("1000000000.0", true),
            ("1000000000.5", false),
            ("999999999.999", true),
            ("1e-7", true),
            ("1.5e-05", true),
            ("-1", false),
            ("-1e-7", false),
            ("2000000000", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&ty(F64, 0.5, false, 2.75, false)).unwrap();
        for (t, ok) in [
            ("0.5", true),
            ("0.49999999999999994", false),
            ("0.49999999999999999", true), // rounds to 0.5
            ("2.75", true),
            ("2.7500000000000004", false),
            ("2.75000000000000001", true),
            ("1", true),
            ("3", false),
            ("5e-1", true), // the decade of 0.1 is partly in: its mantissas from 5 on
            ("4.9999999999999999e-1", true),
            ("4.9999999999999994e-1", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&ty(F64, 0.0, false, 1.0, true)).unwrap();
        for (t, ok) in [
            ("0.99999999999999989", true),
            ("0.99999999999999995", false), // rounds to 1.0
            ("1", false),
            ("1.0", false),
            ("0", true),
            ("-0.0", true),
            ("9.9999999999999989e-1", true),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&ty(F64, 0.0, true, 1.0, false)).unwrap();
        for (t, ok) in [
            ("0", false),
            ("-0.0", false),
            ("0.0000000000000000000001", true),
            ("5e-324", true),
            ("2e-324", false), // rounds to 0
            ("3e-324", true),  // rounds to 5e-324
            ("1e-400", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        for ft in [
            ty(F64, 0.5, false, 2.75, false),
            ty(F64, 0.0, false, 1.0, true),
            ty(F64, 0.0, true, 1.0, true),
            ty(F64, -2.5, true, -0.1, false),
            ty(F64, -1.0, false, 1.0, false),
            ty(F64, -1e-6, true, 3e-7, false),
            ty(F64, 0.1, false, 0.1, false),
            ty(F64, 1e9, false, 9_007_199_254_740_992.0, false),
            ty(F32, -0.3, false, 0.7, true),
            ty(F32, 0.0, false, 3.4e5, false),
        ] {
            check_range(&ft);
        }
        assert!(range(&open(F64, None, None)).is_none());
    }

    #[test]
    fn one_ended_ranges_take_every_finite_spelling_past_the_threshold() {
        use FloatKind::{F32, F64};
        let g = range(&open(F64, Some((0.5, false)), None)).unwrap();
        for (t, ok) in [
            ("0.5", true),
            ("0.49999999999999994", false),
            ("9999999999999999.5", true), // rounds to 10^16, the exact part's end
            ("10000000000000000", true),
            ("123456789012345678901.5", true),
            ("1234567890123456789012", false), // 22 digits: not a printer's spelling
            ("1e16", true),
            ("1.5e+17", true),
            ("1e300", true),
            ("1.7976931348623157e308", true),
            ("1.7976931348623158e308", true),
            ("1.7976931348623159e308", false), // infinite
            ("1e309", false),
            ("-1e300", false),
            ("-5", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&open(F64, None, Some((-1.0, false)))).unwrap();
        for (t, ok) in [
            ("-1", true),
            ("-0.99999999999999989", false),
            ("-1e300", true),
            ("-123456789012345678901", true),
            ("1e300", false),
            ("0", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&open(F32, Some((0.0, false)), None)).unwrap();
        for (t, ok) in [
            ("0", true),
            ("-0.0", true),
            ("-1e-7", false),
            ("3.4028235e38", true),
            ("3.4028235677973364e38", true),
            ("3.4028235677973365e38", false),
            ("1e39", false),
            ("1e300", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        for ft in [
            open(F64, Some((0.5, false)), None),
            open(F64, Some((-2.5, true)), None),
            open(F64, None, Some((-1.0, false))),
            open(F64, None, Some((0.1, true))),
            open(F64, Some((9_007_199_254_740_992.0, true)), None),
            open(F64, None, Some((-9_007_199_254_740_992.0, false))),
            open(F32, Some((0.0, false)), None),
            open(F32, None, Some((1e9, true))),
        ] {
            check_range(&ft);
        }
    }

    #[test]
    fn ends_beyond_two_to_the_53_are_exact() {
        use FloatKind::{F32, F64};
        let g = range(&ty(F64, 0.0, false, 1e300, false)).unwrap();
        for (t, ok) in [
            ("1e300", true),
            ("1.0000000000000001e300", true), // parses to 1e300
            ("1.000000000000001e300", false),
            ("9.99e299", true),
            ("123456789012345678901.5", true),
            ("1e301", false),
            ("-1", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = range(&open(F64, Some((1e20, true)), None)).unwrap();
        for (t, ok) in [
            ("100000000000000000000", false),
            ("100000000000000000000.00001", false), // parses to 1e20
            ("100000000000000008191.5", false),     // below the midpoint to the next float
            ("100000000000000008193", true),        // above it
            ("100000000000000008192", false),       // the midpoint: to even, 1e20
            ("100000000000000008192.0000000000000000000001", true),
            ("100000000000000016384.0", true),
            ("1.0000000000000002e20", true),
            ("1e21", true),
            ("1.7976931348623158e308", true),
            ("5", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        for ft in [
            ty(F64, 0.0, false, 1e300, false),
            ty(F64, -1e20, true, 12_345_678_901_234_567.0, false),
            ty(F64, 2e16, false, 3e16, true),
            ty(F64, -1e308, false, -1e17, false),
            ty(F64, 1e16, false, 1e16, false),
            ty(F32, -1e30, false, 1e38, false),
            ty(F32, 1e20, false, 1e300, false),
            open(F64, Some((1e20, true)), None),
            open(F64, None, Some((-1.5e200, false))),
            open(F32, Some((-3e38, false)), None),
        ] {
            check_range(&ft);
        }
    }

    proptest! {
        /// For random ends (whole, halves, arbitrary bits, inclusive or not), the grammar and
        /// the decoder agree on every covered spelling of values at and around the ends.
        #[test]
        fn range_verdicts_follow_the_decoder(
            a in -200.0f64..200.0,
            b in 0.0f64..300.0,
            whole in any::<bool>(),
            excl in any::<(bool, bool)>(),
            f32 in any::<bool>(),
            x in -500.0f64..500.0,
            scale in prop_oneof![-12i32..4, 14i32..22, 280i32..300],
            ends in 0u8..4,
        ) {
            let k = 10f64.powi(scale);
            let (lo, hi) = if whole { ((a * k).round(), (a * k + b * k).round()) } else { (a * k, a * k + b * k) };
            prop_assume!(lo < hi || (lo == hi && !excl.0 && !excl.1));
            let kind = if f32 { FloatKind::F32 } else { FloatKind::F64 };
            // Both ends (half the cases), only the minimum, or only the maximum.
            let ft = open(kind, (ends != 3).then_some((lo, excl.0)), (ends != 2).then_some((hi, excl.1)));
            let g = range(&ft).unwrap();
            for v in near(&ft).into_iter().chain([x * k, (lo + hi) / 2.0]) {
                for text in spellings(v) {
                    let (by_grammar, by_decoder) = (matches(&g, &text), in_ty(&ft, &text));
                    prop_assert!(!by_grammar || by_decoder, "grammar accepts {} for {:?}", text, ft);
                    if covered(&text) {
                        prop_assert_eq!(by_grammar, by_decoder, "{} for {:?}", text, ft);
                    }
                }
            }
        }

        /// Every finite value, as Rust writes it (shortest round trip, fixed notation) and in
        /// scientific notation, is accepted; the `f64` edge mantissas are exact.
        #[test]
        fn every_finite_f64_is_accepted(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            let g = float(FloatKind::F64, false);
            let sci = format!("{v:e}");
            prop_assert!(matches(&g, &sci), "{}", sci);
            let json = serde_json::to_string(&v).unwrap_or_default();
            prop_assert!(matches(&g, &json), "{}", json);
            if (1e-6..1e21).contains(&v.abs()) {
                let fixed = format!("{v}");
                prop_assert!(matches(&g, &fixed), "{}", fixed);
            }
        }

        #[test]
        fn every_finite_f32_is_accepted(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            prop_assume!(v.is_finite());
            let g = float(FloatKind::F32, false);
            for text in [format!("{v:e}"), format!("{:e}", f64::from(v))] {
                prop_assert!(matches(&g, &text), "{}", text);
            }
        }

        #[test]
        fn near_the_edge_grammar_and_decoder_agree(m in 17_976_931_348_600_000u64..17_976_931_348_700_000, n in 34_028_234_000_000_000u64..34_028_237_000_000_000) {
            let s = m.to_string();
            agree(FloatKind::F64, &format!("{}.{}e308", &s[..1], &s[1..]));
            let s = n.to_string();
            agree(FloatKind::F32, &format!("{}.{}e38", &s[..1], &s[1..]));
        }
    }
}
