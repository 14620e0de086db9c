//! Float spellings: every finite `f64` (or `f32`) as the usual shortest-round-trip printers
//! write it, and nothing that would decode as infinite.
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

use aelc_runtime::ty::FloatKind;

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

/// Mantissas `d` or `d.ddd…` (up to 16 digits after the point) whose digits, read as a
/// decimal fraction, are at most `bound`'s (17 digits).
fn mantissa_at_most(bound: &str) -> G {
    let b: Vec<u8> = bound.bytes().collect();
    let digit = || G::digits(b'0', b'9');
    // `rest[i]`: the nonempty digit strings from position `i` on that stay at most `b[i..]`.
    let mut rest: Option<G> = None;
    for i in (1..b.len()).rev() {
        let mut alts = Vec::new();
        if b[i] > b'0' {
            let tail = b.len() - 1 - i;
            alts.push(G::seq(vec![
                G::digits(b'0', b[i] - 1),
                G::rep(digit(), 0, Some(tail as u32)),
            ]));
        }
        alts.push(G::seq(vec![
            G::Lit(char::from(b[i]).to_string()),
            rest.map_or(G::Seq(Vec::new()), G::opt),
        ]));
        rest = Some(G::alt(alts));
    }
    let mut alts = Vec::new();
    if b[0] > b'0' {
        alts.push(G::seq(vec![
            G::digits(b'0', b[0] - 1),
            G::opt(G::seq(vec![
                G::lit("."),
                G::rep(digit(), 1, Some(MANTISSA_FRACTION)),
            ])),
        ]));
    }
    alts.push(G::seq(vec![
        G::Lit(char::from(b[0]).to_string()),
        rest.map_or(G::Seq(Vec::new()), |r| G::opt(G::seq(vec![G::lit("."), r]))),
    ]));
    G::alt(alts)
}

/// Largest bound magnitude [`in_range`] takes: up to 2^53 every integer is an `f64`, so the
/// decoder compares against exactly the bound the grammar spells.
const RANGE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// The spellings of the floats in `lo..=hi` when both ends are integers of at most 2^53 in
/// magnitude (inclusive; finite for `f32` as for `f64`), else `None` (the range stays with the pipeline). Every decimal in
/// the range decodes into it, since rounding to `f64` is monotonic and the ends are exact.
/// Spellings: fixed notation (the printers' choice below 10^16), and when 0 is in the range
/// and so is 1, the small numbers in scientific notation with a negative exponent.
pub fn in_range(lo: f64, hi: f64) -> Option<G> {
    let integral = |v: f64| v.fract() == 0.0 && v.abs() <= RANGE_LIMIT;
    if !integral(lo) || !integral(hi) || lo > hi {
        return None;
    }
    // Exact: both are integers within 2^53.
    let (lo, hi) = (lo as i128, hi as i128);
    let mut alts = Vec::new();
    if hi >= 0 {
        alts.push(magnitudes(lo.max(0), hi));
    }
    if lo < 0 {
        let top = lo.unsigned_abs() as i128;
        let bottom = if hi >= 0 {
            0
        } else {
            hi.unsigned_abs() as i128
        };
        alts.push(G::seq(vec![G::lit("-"), magnitudes(bottom, top)]));
    }
    Some(G::alt(alts))
}

/// Unsigned decimals `a..=b` (`0 <= a <= b`, integers): an integer part strictly between with
/// any fraction, `a` with any fraction, `b` with a zero fraction, and below 1 (when `a` is 0
/// and `b` at least 1) the scientific `d.ddd…e-N`.
fn magnitudes(a: i128, b: i128) -> G {
    let digit = || G::digits(b'0', b'9');
    let any_fraction = || {
        G::opt(G::seq(vec![
            G::lit("."),
            G::rep(digit(), 1, Some(FRACTION_DIGITS)),
        ]))
    };
    let zero_fraction = G::opt(G::seq(vec![
        G::lit("."),
        G::rep(G::lit("0"), 1, Some(FRACTION_DIGITS)),
    ]));
    if a == b {
        return G::seq(vec![G::lit(&a.to_string()), zero_fraction]);
    }
    let mut alts = Vec::new();
    // Integer parts `a..b`, any fraction (the range module spells them exactly).
    if let Some(ints) = super::range::int_range(a, b - 1) {
        alts.push(G::seq(vec![ints, any_fraction()]));
    }
    alts.push(G::seq(vec![G::lit(&b.to_string()), zero_fraction]));
    if a == 0 {
        // Below 1: a mantissa under 10 times a negative power of ten.
        let exponent = G::alt(vec![
            G::seq(vec![G::rep(G::lit("0"), 0, Some(2)), G::digits(b'1', b'9')]),
            G::seq(vec![G::opt(G::lit("0")), G::digits(b'1', b'9'), digit()]),
            G::seq(vec![G::digits(b'1', b'9'), digit(), digit()]),
        ]);
        alts.push(G::seq(vec![
            digit(),
            G::opt(G::seq(vec![
                G::lit("."),
                G::rep(digit(), 1, Some(MANTISSA_FRACTION)),
            ])),
            G::class(&[('e', 'e'), ('E', 'E')]),
            G::lit("-"),
            exponent,
        ]));
    }
    G::alt(alts)
}

#[cfg(test)]
mod tests {
    use super::super::range::tests::matches;
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

    #[test]
    fn ranges_with_integer_ends_are_exact() {
        let g = in_range(0.0, 1e9).unwrap();
        for (t, ok) in [
            ("0", true),
            ("0.0", true),
            ("1000000000", true),
            ("1000000000.0", true),
            ("1000000000.5", false),
            ("999999999.999", true),
            ("1e-7", true),
            ("1.5e-05", true),
            ("-1", false),
            ("1e9", false),
            ("2000000000", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = in_range(-1.0, 1.0).unwrap();
        for (t, ok) in [
            ("-1", true),
            ("-1.0", true),
            ("-1.25", false),
            ("-0.75", true),
            ("1.0", true),
            ("1.25", false),
            ("0.5", true),
            ("-1e-7", true),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        let g = in_range(2.0, 5.0).unwrap();
        for (t, ok) in [
            ("1.5", false),
            ("2", true),
            ("4.75", true),
            ("5.0", true),
            ("5.5", false),
        ] {
            assert_eq!(matches(&g, t), ok, "{t}");
        }
        assert!(in_range(0.0, 0.5).is_none());
    }

    proptest! {
        /// In a range with integer ends, a value's `serde_json` spelling is accepted exactly
        /// when the value is in the range.
        #[test]
        fn range_verdicts_follow_the_value(a in -50i32..50, b in 0i32..60, x in -120.0f64..120.0) {
            let (lo, hi) = (f64::from(a), f64::from(a + b));
            let g = in_range(lo, hi).unwrap();
            let text = serde_json::to_string(&x).unwrap_or_default();
            prop_assert_eq!(matches(&g, &text), lo <= x && x <= hi, "{} in {}..={}", text, lo, hi);
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
