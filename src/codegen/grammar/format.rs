//! Text formats a regular grammar can say exactly: `date` (`YYYY-MM-DD`, a real calendar day,
//! leap years included) and `uuid` (8-4-4-4-12 hex digits), as
//! `aelc_runtime::format::is_valid` checks them. `email`, `uri` and `date-time` stay with the
//! pipeline (listed in the grammar's header).

use aelc_runtime::ty::Format;

use super::expr::G;

/// The content (between the quotes) of a text of `format`, spelled without escapes; `None`
/// when the format is not expressed.
pub fn content(format: Format) -> Option<G> {
    match format {
        Format::Date => Some(date()),
        Format::Uuid => Some(uuid()),
        Format::Email | Format::Uri | Format::DateTime => None,
    }
}

/// How many characters every text of `format` has, when it is expressed.
pub fn length(format: Format) -> Option<u32> {
    match format {
        Format::Date => Some(10),
        Format::Uuid => Some(36),
        Format::Email | Format::Uri | Format::DateTime => None,
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
    use super::super::range::tests::matches;
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
