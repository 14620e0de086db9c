//! Small hand-written validators for `@format(…)` (spec §3), ASCII only:
//!
//! - `email`: `local@domain`. The local part is 1–64 characters of letters, digits and
//!   ``!#$%&'*+/=?^_`{|}~-`` in dot-separated non-empty runs; the domain is one or more
//!   dot-separated labels of letters, digits and inner `-`, each 1–63 long, at most 253 in all.
//!   No quoted local parts, no IP-literal domains, no comments.
//! - `uri`: an absolute URI (RFC 3986): a scheme `[A-Za-z][A-Za-z0-9+.-]*`, `:`, then only
//!   characters URIs allow (unreserved, reserved, `%` followed by two hex digits); no spaces.
//! - `date`: `YYYY-MM-DD`, a real day of the Gregorian calendar (leap years counted).
//! - `date-time`: RFC 3339, `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T`/`Z` in either case;
//!   hours 00–23, minutes 00–59, seconds 00–60 (leap second).
//! - `uuid`: `8-4-4-4-12` hex digits, either case.

use crate::ty::Format;

/// Whether `s` is valid text of `format`.
pub fn is_valid(format: Format, s: &str) -> bool {
    match format {
        Format::Email => is_email(s),
        Format::Uri => is_uri(s),
        Format::Date => is_date(s.as_bytes()),
        Format::DateTime => is_date_time(s.as_bytes()),
        Format::Uuid => is_uuid(s.as_bytes()),
    }
}

/// What a format expects, for error sentences.
pub fn describe(format: Format) -> &'static str {
    match format {
        Format::Email => "an email address (local@domain.example)",
        Format::Uri => "an absolute URI (scheme:…)",
        Format::Date => "a date (YYYY-MM-DD)",
        Format::DateTime => "a date-time (RFC 3339, 2026-12-02T15:00:00Z)",
        Format::Uuid => "a UUID (8-4-4-4-12 hex digits)",
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local.split('.').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~-".contains(&b))
        });
    local_ok && is_domain(domain)
}

fn is_domain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut scheme_bytes = scheme.bytes();
    let scheme_ok = scheme_bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme_bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'));
    if !scheme_ok {
        return false;
    }
    let bytes = rest.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
            continue;
        }
        let allowed = b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&b);
        if !allowed {
            return false;
        }
        i += 1;
    }
    true
}

fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0')))
}

fn is_date(b: &[u8]) -> bool {
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (
        digits(b.get(0..4).unwrap_or_default()),
        digits(b.get(5..7).unwrap_or_default()),
        digits(b.get(8..10).unwrap_or_default()),
    ) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn is_time(b: &[u8]) -> bool {
    // HH:MM:SS
    b.len() == 8
        && b.get(2) == Some(&b':')
        && b.get(5) == Some(&b':')
        && digits(b.get(0..2).unwrap_or_default()).is_some_and(|h| h <= 23)
        && digits(b.get(3..5).unwrap_or_default()).is_some_and(|m| m <= 59)
        && digits(b.get(6..8).unwrap_or_default()).is_some_and(|s| s <= 60)
}

fn is_date_time(b: &[u8]) -> bool {
    if b.len() < 20 || !matches!(b.get(10), Some(b'T' | b't')) {
        return false;
    }
    if !is_date(b.get(0..10).unwrap_or_default()) || !is_time(b.get(11..19).unwrap_or_default()) {
        return false;
    }
    let mut rest = b.get(19..).unwrap_or_default();
    if rest.first() == Some(&b'.') {
        let frac = rest
            .iter()
            .skip(1)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if frac == 0 {
            return false;
        }
        rest = rest.get(1 + frac..).unwrap_or_default();
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            digits(&[*h1, *h2]).is_some_and(|h| h <= 23)
                && digits(&[*m1, *m2]).is_some_and(|m| m <= 59)
        }
        _ => false,
    }
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_accept_and_reject() {
        let cases: &[(Format, &str, bool)] = &[
            (Format::Email, "a.b+c@example.com", true),
            (Format::Email, "a..b@example.com", false),
            (Format::Email, "@example.com", false),
            (Format::Email, "a@-x.com", false),
            (Format::Uri, "https://example.com/a?b=c#d", true),
            (Format::Uri, "urn:isbn:0451450523", true),
            (Format::Uri, "/relative/path", false),
            (Format::Uri, "http://a b", false),
            (Format::Uri, "http://a%zz", false),
            (Format::Date, "2024-02-29", true),
            (Format::Date, "2023-02-29", false),
            (Format::Date, "2023-13-01", false),
            (Format::Date, "2023-1-01", false),
            (Format::DateTime, "2026-12-02T15:00:00Z", true),
            (Format::DateTime, "2026-12-02t15:00:00.123+01:00", true),
            (Format::DateTime, "2026-12-02T24:00:00Z", false),
            (Format::DateTime, "2026-12-02T15:00:00", false),
            (Format::DateTime, "2026-12-02T15:00:00.Z", false),
            (Format::Uuid, "123e4567-e89b-12d3-A456-426614174000", true),
            (Format::Uuid, "123e4567e89b12d3a456426614174000", false),
        ];
        for (format, text, ok) in cases {
            assert_eq!(is_valid(*format, text), *ok, "{format:?} {text}");
        }
    }
}
