//! Text formats in the grammar, as `aelc_runtime::format::is_valid` checks them, spelled
//! without escapes, within the type's length bounds:
//!
//! - `date` (`YYYY-MM-DD`, a real calendar day, leap years included), `uuid` (8-4-4-4-12 hex
//!   digits) and `date-time` (RFC 3339 as the decoder reads it: a date, `T`, a time with hours
//!   to 23, minutes to 59 and seconds to 60, an optional fraction of any length, then `Z` or
//!   `±HH:MM`, `T`/`Z` in either case) exactly: every text of the format whose length fits is
//!   accepted, and nothing else;
//! - `email` and `uri` as a sound subset, named in [`Spelled::covers`]: their definitions count
//!   characters across pieces of different widths (dot-separated runs within 64 characters,
//!   `%XX` escapes within the type's length), which a regular expression of reasonable size
//!   cannot count exactly, so the pieces are bounded separately such that every accepted text
//!   fits the bounds.

use aelc_runtime::ty::Format;

use super::expr::G;

/// How a format is spelled in the grammar: the content between the quotes, and, for a sound
/// subset, a sentence naming what it covers (for the header).
pub struct Spelled {
    pub content: G,
    pub covers: Option<String>,
}

/// The content (between the quotes) of a text of `format` of `min..=max` characters, spelled
/// without escapes; `None` when the grammar does not express it (the type's minimum is above
/// the format's shortest text for a subset, or its maximum leaves no room for one).
pub fn spelled(format: Format, min: u32, max: u32) -> Option<Spelled> {
    let exact = |content: G| {
        Some(Spelled {
            content,
            covers: None,
        })
    };
    match format {
        Format::Date => exact(fixed_length(date(), 10, min, max)),
        Format::Uuid => exact(fixed_length(uuid(), 36, min, max)),
        Format::DateTime => exact(date_time(min, max)),
        Format::Email => email(min, max),
        Format::Uri => uri(min, max),
    }
}

/// `content` when `len` fits `min..=max`, else nothing.
fn fixed_length(content: G, len: u32, min: u32, max: u32) -> G {
    if (min..=max).contains(&len) {
        content
    } else {
        super::never()
    }
}

fn d(a: u8, b: u8) -> G {
    G::digits(a, b)
}

fn lit(s: &str) -> G {
    G::lit(s)
}

fn date() -> G {
    let any = || d(b'0', b'9');
    let day28 = || {
        G::Alt(vec![
            G::seq(vec![lit("0"), d(b'1', b'9')]),
            G::seq(vec![lit("1"), any()]),
            G::seq(vec![lit("2"), d(b'0', b'8')]),
        ])
    };
    let day30 = || G::Alt(vec![day28(), lit("29"), lit("30")]);
    let day31 = G::Alt(vec![day28(), lit("29"), lit("30"), lit("31")]);
    let month31 = G::Alt(vec![
        G::seq(vec![
            lit("0"),
            G::class(&[('1', '1'), ('3', '3'), ('5', '5'), ('7', '8')]),
        ]),
        G::seq(vec![lit("1"), G::class(&[('0', '0'), ('2', '2')])]),
    ]);
    let month30 = G::Alt(vec![
        G::seq(vec![
            lit("0"),
            G::class(&[('4', '4'), ('6', '6'), ('9', '9')]),
        ]),
        lit("11"),
    ]);
    // Two digits divisible by 4, `00` aside.
    let by4 = || {
        G::Alt(vec![
            G::seq(vec![lit("0"), G::class(&[('4', '4'), ('8', '8')])]),
            G::seq(vec![
                G::class(&[('2', '2'), ('4', '4'), ('6', '6'), ('8', '8')]),
                G::class(&[('0', '0'), ('4', '4'), ('8', '8')]),
            ]),
            G::seq(vec![
                G::class(&[('1', '1'), ('3', '3'), ('5', '5'), ('7', '7'), ('9', '9')]),
                G::class(&[('2', '2'), ('6', '6')]),
            ]),
        ])
    };
    // Leap years: divisible by 4 and not by 100, or by 400 (`0000` included).
    let leap = G::Alt(vec![
        G::seq(vec![any(), any(), by4()]),
        G::seq(vec![G::Alt(vec![by4(), lit("00")]), lit("00")]),
    ]);
    let year = G::rep(any(), 4, Some(4));
    G::Alt(vec![
        G::seq(vec![
            year,
            lit("-"),
            G::Alt(vec![
                G::seq(vec![month31, lit("-"), day31]),
                G::seq(vec![month30, lit("-"), day30()]),
                G::seq(vec![lit("02-"), day28()]),
            ]),
        ]),
        G::seq(vec![leap, lit("-02-29")]),
    ])
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` of `min..=max` characters: 20 with `Z`, 25 with
/// an offset, and a fraction of `n` digits adds `n + 1`, so each ending takes the fraction
/// lengths that fit.
fn date_time(min: u32, max: u32) -> G {
    let hours = || {
        G::alt(vec![
            G::seq(vec![d(b'0', b'1'), d(b'0', b'9')]),
            G::seq(vec![lit("2"), d(b'0', b'3')]),
        ])
    };
    let minutes = || G::seq(vec![d(b'0', b'5'), d(b'0', b'9')]);
    let seconds = G::alt(vec![minutes(), lit("60")]);
    let head = G::seq(vec![
        date(),
        G::class(&[('T', 'T'), ('t', 't')]),
        hours(),
        lit(":"),
        minutes(),
        lit(":"),
        seconds,
    ]);
    let zulu = G::class(&[('Z', 'Z'), ('z', 'z')]);
    let offset = G::seq(vec![
        G::class(&[('+', '+'), ('-', '-')]),
        hours(),
        lit(":"),
        minutes(),
    ]);
    let mut endings = Vec::new();
    for (end, len) in [(zulu, 20u32), (offset, 25)] {
        // No fraction, or `.` and `n` digits: `len + n + 1` characters.
        let mut alts = Vec::new();
        if (min..=max).contains(&len) {
            alts.push(G::Seq(Vec::new()));
        }
        let lo = min.saturating_sub(len + 1).max(1);
        if let Some(hi) = max.checked_sub(len + 1).filter(|hi| *hi >= lo) {
            alts.push(G::seq(vec![lit("."), G::rep(d(b'0', b'9'), lo, Some(hi))]));
        }
        if !alts.is_empty() {
            endings.push(G::seq(vec![G::alt(alts), end]));
        }
    }
    if endings.is_empty() {
        return super::never();
    }
    G::seq(vec![head, G::alt(endings)])
}

/// The characters of an email's local part besides letters, digits and `.` (RFC 5322's
/// atext), as the decoder lists them.
const ATEXT: &str = "!#$%&'*+/=?^_`{|}~-";

/// Most labels of an email's domain the subset takes.
const EMAIL_LABELS: u32 = 5;

/// Email addresses `local@domain` as a sound subset: a local part of at most `a + 1`
/// characters besides its dots (at most 63 in all), and a domain of at most [`EMAIL_LABELS`]
/// labels of at most `c` characters each, `a` and `c` chosen so that the longest accepted
/// address fits the type's maximum and the domain 253 characters. `None` when the type's
/// minimum is above 3 (the shortest address, `a@b`): the lengths would have to be counted
/// together.
fn email(min: u32, max: u32) -> Option<Spelled> {
    if min > 3 || max < 3 {
        return None;
    }
    let budget = max - 1;
    // Local parts of up to `a + 1` characters besides dots, `2a + 1` at most.
    let local_max = (budget / 3).clamp(1, 63);
    let a = (local_max - 1) / 2;
    let domain_budget = (budget - (2 * a + 1)).min(253);
    // `q` labels of `c` characters and the dots between: `(c + 1) q - 1`.
    let q = EMAIL_LABELS.min(domain_budget.div_ceil(2)).max(1);
    let c = ((domain_budget + 1) / q).saturating_sub(1).min(63);
    if c == 0 {
        return None;
    }
    let mut atext = vec![('a', 'z'), ('A', 'Z'), ('0', '9')];
    atext.extend(ATEXT.chars().map(|c| (c, c)));
    let atext = || G::class(&atext);
    let local = G::seq(vec![
        atext(),
        G::rep(G::seq(vec![G::opt(lit(".")), atext()]), 0, Some(a)),
    ]);
    let alnum = || G::class(&[('a', 'z'), ('A', 'Z'), ('0', '9')]);
    let label = if c == 1 {
        alnum()
    } else {
        G::seq(vec![
            alnum(),
            G::opt(G::seq(vec![
                G::rep(
                    G::class(&[('a', 'z'), ('A', 'Z'), ('0', '9'), ('-', '-')]),
                    0,
                    Some(c - 2),
                ),
                alnum(),
            ])),
        ])
    };
    let domain = G::seq(vec![
        label.clone(),
        G::rep(G::seq(vec![lit("."), label]), 0, Some(q - 1)),
    ]);
    Some(Spelled {
        content: G::seq(vec![local, lit("@"), domain]),
        covers: Some(format!(
            "`email` text is an address with a local part of at most {} characters besides its dots and a domain of at most {q} labels of at most {c} characters (a subset of what the decoder takes, so that every one fits the type's length)",
            a + 1
        )),
    })
}

/// Most characters of a URI's scheme the subset takes.
const URI_SCHEME: u32 = 32;

/// URIs `scheme:rest` as a sound subset: a scheme of at most [`URI_SCHEME`] characters, then
/// at most `r` characters URIs allow besides `%`, or at most `r / 3` characters or `%XX`
/// escapes, where `r` is what the type's maximum leaves after the longest scheme. `None` when
/// the type's minimum is above 2 (the shortest URI, `a:`).
fn uri(min: u32, max: u32) -> Option<Spelled> {
    if min > 2 || max < 2 {
        return None;
    }
    let scheme_max = URI_SCHEME.min(max - 1);
    let r = max - 1 - scheme_max;
    let plain: Vec<(char, char)> = [('a', 'z'), ('A', 'Z'), ('0', '9')]
        .into_iter()
        .chain("-._~:/?#[]@!$&'()*+,;=".chars().map(|c| (c, c)))
        .collect();
    let hex = || G::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
    let escaped = G::alt(vec![G::class(&plain), G::seq(vec![lit("%"), hex(), hex()])]);
    let scheme = G::seq(vec![
        G::class(&[('a', 'z'), ('A', 'Z')]),
        G::rep(
            G::class(&[
                ('a', 'z'),
                ('A', 'Z'),
                ('0', '9'),
                ('+', '+'),
                ('.', '.'),
                ('-', '-'),
            ]),
            0,
            Some(scheme_max - 1),
        ),
    ]);
    let rest = G::alt(vec![
        G::rep(G::class(&plain), 0, Some(r)),
        G::rep(escaped, 0, Some(r / 3)),
    ]);
    Some(Spelled {
        content: G::seq(vec![scheme, lit(":"), rest]),
        covers: Some(format!(
            "`uri` text has a scheme of at most {scheme_max} characters and, after the colon, at most {r} characters, or {} when a `%XX` escape appears (a subset of what the decoder takes, so that every one fits the type's length)",
            r / 3
        )),
    })
}

fn uuid() -> G {
    let hex = |n: u32| G::rep(G::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]), n, Some(n));
    G::seq(vec![
        hex(8),
        lit("-"),
        hex(4),
        lit("-"),
        hex(4),
        lit("-"),
        hex(4),
        lit("-"),
        hex(12),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::matcher::matches;
    use super::*;
    use aelc_runtime::format::is_valid;

    #[test]
    fn every_day_of_four_centuries_and_then_some() {
        let g = date();
        for y in (0..=2400)
            .step_by(7)
            .chain([1900, 2000, 2100, 2024, 2023, 0, 400, 9999])
        {
            for m in 0..=13 {
                for day in 0..=32 {
                    let text = format!("{y:04}-{m:02}-{day:02}");
                    assert_eq!(matches(&g, &text), is_valid(Format::Date, &text), "{text}");
                }
            }
        }
        assert!(!matches(&g, "2024-2-01"));
    }

    /// The grammar of `format` for `min..=max` characters, and the decoder's verdict with the
    /// length bound (characters are ASCII here, one byte each).
    fn judge(format: Format, min: u32, max: u32, text: &str) -> (bool, bool) {
        let g = spelled(format, min, max).map(|s| s.content);
        let by_grammar = g.is_some_and(|g| matches(&g, text));
        let len = text.chars().count() as u32;
        (
            by_grammar,
            is_valid(format, text) && (min..=max).contains(&len),
        )
    }

    #[test]
    fn date_times_at_every_field_edge_and_fraction_length() {
        let mut texts = Vec::new();
        for (date, time) in [
            ("2024-02-29", "23:59:60"),
            ("2023-02-29", "00:00:00"),
            ("2026-12-02", "24:00:00"),
            ("2026-12-02", "15:60:00"),
            ("2026-12-02", "15:00:61"),
            ("2026-12-02", "19:09:59"),
        ] {
            for t in ["T", "t", " ", "_"] {
                for frac in [
                    "",
                    ".",
                    ".0",
                    ".123456789",
                    ".1234567890123456789012345678901234567890123",
                ] {
                    for end in [
                        "Z", "z", "+23:59", "-00:00", "+24:00", "-05:60", "", "+0530", "Z+01:00",
                    ] {
                        texts.push(format!("{date}{t}{time}{frac}{end}"));
                    }
                }
            }
        }
        for (min, max) in [
            (0, 64),
            (0, 20),
            (20, 25),
            (21, 21),
            (22, 30),
            (26, 26),
            (0, 19),
            (30, 200),
        ] {
            for text in &texts {
                let (by_grammar, by_decoder) = judge(Format::DateTime, min, max, text);
                assert_eq!(by_grammar, by_decoder, "{text} in {min}..={max}");
            }
        }
    }

    #[test]
    fn emails_and_uris_are_sound_and_cover_what_they_say() {
        let emails = [
            "a.b+c@example.com",
            "a@b",
            "first.last@mail.sub.example.co",
            "a..b@example.com",
            ".a@example.com",
            "a.@example.com",
            "@example.com",
            "a@-x.com",
            "a@x-.com",
            "a@x--y.com",
            "xn--bcher-kva@xn--bcher-kva.example",
            "a@b@c.d",
            "a@b..c",
            "a@b.",
            "{|}~@example.com",
            "a\"b@example.com",
            "a b@example.com",
        ];
        let long_local = format!("{}@example.com", "a".repeat(33));
        let long_label = format!("a@{}.com", "b".repeat(64));
        for max in [3, 10, 64, 254, 400] {
            for text in emails
                .iter()
                .copied()
                .chain([long_local.as_str(), long_label.as_str()])
            {
                let (by_grammar, by_decoder) = judge(Format::Email, 0, max, text);
                assert!(!by_grammar || by_decoder, "{text} for Str<{max}>");
                // Covered: local parts of up to 32 characters, up to 5 labels of up to 37
                // characters, for `Str<254>` (the std `Email`).
                if max == 254 && text.len() < 40 {
                    assert_eq!(by_grammar, by_decoder, "{text}");
                }
            }
        }
        let uris = [
            "https://example.com/a?b=c#d",
            "urn:isbn:0451450523",
            "a:",
            "/relative/path",
            "http://a b",
            "http://a%zz",
            "http://a%2F%2f",
            "http://a%2",
            "1http://a",
            "h+t.t-p:x",
            "mailto:a@b.example",
            "http://é",
        ];
        for max in [2, 10, 64, 2048] {
            for text in uris {
                let (by_grammar, by_decoder) = judge(Format::Uri, 0, max, text);
                assert!(!by_grammar || by_decoder, "{text} for Str<{max}>");
                if max == 2048 {
                    assert_eq!(by_grammar, by_decoder, "{text}");
                }
            }
        }
        // The longest texts the subsets take still fit the type.
        assert!(spelled(Format::Email, 4, 254).is_none());
        assert!(spelled(Format::Uri, 3, 2048).is_none());
    }

    #[test]
    fn uuids() {
        let g = uuid();
        for text in [
            "123e4567-e89b-12d3-A456-426614174000",
            "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-42661417400g",
            "123e4567-e89b-12d3-a456-4266141740000",
        ] {
            assert_eq!(matches(&g, text), is_valid(Format::Uuid, text), "{text}");
        }
    }
}
