//! Tests of the JSON reader: exact integers, strict syntax, and strings read as the byte-by-byte
//! reference unescaper reads them.

use super::*;

fn int(text: &str) -> Result<i128, IntIssue> {
    let mut r = Reader::new(text.as_bytes());
    r.number().map_err(|_| IntIssue::TooBig)?.to_integer()
}

#[test]
fn integers_are_exact() {
    assert_eq!(int("3"), Ok(3));
    assert_eq!(int("3.0"), Ok(3));
    assert_eq!(int("3e0"), Ok(3));
    assert_eq!(int("1.0e2"), Ok(100));
    assert_eq!(int("1.5e1"), Ok(15));
    assert_eq!(int("-0"), Ok(0));
    assert_eq!(int("0.000e5"), Ok(0));
    assert_eq!(int("18446744073709551615"), Ok(u64::MAX as i128));
    assert_eq!(int("-9223372036854775808"), Ok(i64::MIN as i128));
    assert_eq!(int("1844674407370955161.5e1"), Ok(u64::MAX as i128));
    assert_eq!(int("2.5"), Err(IntIssue::NotIntegral));
    assert_eq!(int("1e-1"), Err(IntIssue::NotIntegral));
    assert_eq!(int("1e400"), Err(IntIssue::TooBig));
    assert_eq!(int("1e999999999999999999999"), Err(IntIssue::TooBig));
}

proptest::proptest! {
    /// The eight-bytes-at-a-time scan stops exactly where a byte-by-byte one does, from
    /// any start, on bytes rich in quotes, backslashes, control and non-ASCII bytes.
    #[test]
    fn scan_plain_matches_a_byte_loop(
        bytes in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(vec![b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff]),
                proptest::prelude::any::<u8>(),
            ],
            0..80,
        ),
        start in 0usize..90,
    ) {
        let stops = |i: &usize| bytes.get(*i).is_some_and(|&b| b == b'"' || b == b'\\' || b < 0x20);
        let naive = (start..bytes.len()).find(stops).unwrap_or(bytes.len());
        proptest::prop_assert_eq!(scan_plain(&bytes, start), naive);
        // The copying scan stops at the same byte and appends exactly the run before it.
        let mut out = b"kept".to_vec();
        let end = copy_plain(&bytes, start, &mut out);
        proptest::prop_assert_eq!(end, naive);
        let run = bytes.get(start..naive).unwrap_or_default();
        proptest::prop_assert_eq!(out, [&b"kept"[..], run].concat());
    }
}

/// The plain-digits fast path reads exactly what the general path reads, and declines
/// (consuming nothing but whitespace) whatever it does not handle.
#[test]
fn plain_ints_agree_with_numbers() {
    let cases = [
        ("0", Some(0)),
        ("-0", Some(0)),
        (" 42,", Some(42)),
        ("-17]", Some(-17)),
        ("999999999999999999", Some(999_999_999_999_999_999)),
        ("-999999999999999999", Some(-999_999_999_999_999_999)),
        ("9999999999999999999", None),
        ("18446744073709551615", None),
        ("01", None),
        ("1.0", None),
        ("1e2", None),
        ("1E2", None),
        ("-", None),
        ("x", None),
    ];
    for (text, want) in cases {
        let mut r = Reader::new(text.as_bytes());
        let got = r.plain_int();
        assert_eq!(got, want, "{text}");
        match got {
            Some(v) => assert_eq!(int(text.trim()).ok(), Some(i128::from(v)), "{text}"),
            None => assert_eq!(r.pos, text.len() - text.trim_start().len(), "{text}"),
        }
    }
}

#[test]
fn syntax_is_strict() {
    for bad in ["01", "1.", ".5", "+1", "1e", "-", "--1"] {
        let mut r = Reader::new(bad.as_bytes());
        let ok = r.number().is_ok() && r.pos == bad.len();
        assert!(!ok, "{bad}");
    }
    for bad in [
        "[1,]",
        "{\"a\":1,}",
        "[1 2]",
        "\"a\tb\"",
        "tru",
        "{'a':1}",
        "\"\\x\"",
    ] {
        let mut r = Reader::new(bad.as_bytes());
        assert!(r.skip_value().is_err(), "{bad}");
    }
}

/// The byte-by-byte unescaper the run-copying one replaced, kept as the reference: the
/// text, issue and end position, or the error's offset and message.
fn byte_by_byte(bytes: &[u8]) -> Result<(String, Option<TextIssue>, usize), (usize, String)> {
    let fail = |pos: usize, m: &str| Err((pos, m.to_owned()));
    if bytes.first() != Some(&b'"') {
        return fail(0, "expected a string");
    }
    let mut pos = 1;
    let mut buf = Vec::new();
    let mut issue = None;
    let hex4 = |pos: &mut usize| -> Result<u32, (usize, String)> {
        let mut v = 0;
        for _ in 0..4 {
            match bytes.get(*pos).and_then(|b| (*b as char).to_digit(16)) {
                Some(d) => v = v * 16 + d,
                None => return Err((*pos, "`\\u` must be followed by four hex digits".into())),
            }
            *pos += 1;
        }
        Ok(v)
    };
    loop {
        match bytes.get(pos) {
            None => return fail(pos, "unterminated string"),
            Some(b'"') => {
                pos += 1;
                break;
            }
            Some(b'\\') => {
                pos += 1;
                let Some(&esc) = bytes.get(pos) else {
                    return fail(pos, "unterminated string");
                };
                pos += 1;
                let c = match esc {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let hi = hex4(&mut pos)?;
                        if (0xD800..=0xDBFF).contains(&hi) {
                            let mut low = None;
                            if bytes.get(pos..pos + 2) == Some(b"\\u") {
                                let save = pos;
                                pos += 2;
                                let lo = hex4(&mut pos)?;
                                if (0xDC00..=0xDFFF).contains(&lo) {
                                    low = Some(lo);
                                } else {
                                    pos = save;
                                }
                            }
                            match low {
                                Some(lo) => {
                                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                        .unwrap_or('\u{FFFD}')
                                }
                                None => {
                                    issue = Some(TextIssue::LoneSurrogate);
                                    '\u{FFFD}'
                                }
                            }
                        } else if (0xDC00..=0xDFFF).contains(&hi) {
                            issue = Some(TextIssue::LoneSurrogate);
                            '\u{FFFD}'
                        } else {
                            char::from_u32(hi).unwrap_or('\u{FFFD}')
                        }
                    }
                    _ => return fail(pos - 1, "invalid escape in a string"),
                };
                buf.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes());
            }
            Some(&b) if b < 0x20 => {
                return fail(pos, "a control character must be escaped inside a string")
            }
            Some(&b) => {
                buf.push(b);
                pos += 1;
            }
        }
    }
    Ok(match String::from_utf8(buf) {
        Ok(s) => (s, issue, pos),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some(TextIssue::InvalidUtf8),
            pos,
        ),
    })
}

/// What [`Reader::string`] gives, in the reference's terms.
fn read(mut r: Reader<'_>) -> Result<(String, Option<TextIssue>, usize), (usize, String)> {
    match r.string() {
        Ok((s, issue)) => Ok((s.into_owned(), issue, r.pos)),
        Err(e) => Err((e.offset, e.message.clone())),
    }
}

/// Pieces of string content that exercise every branch: plain runs of every length, each
/// escape, surrogate pairs and lone halves, broken `\u`, control characters, multi-byte
/// and invalid UTF-8, and the closing quote.
fn piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-z .:;(){}]{0,20}".prop_map(String::into_bytes),
        proptest::sample::select(vec![
            r#"\""#,
            r"\\",
            r"\/",
            r"\b",
            r"\f",
            r"\n",
            r"\r",
            r"\t",
            r"\u00e9",
            r"\u2014",
            r"\ud83d\ude00",
            r"\ud800",
            r"\udc00",
            r"\ud800\u0041",
            r"\ud800\uzz",
            r"\u12",
            r"\x",
            "\\",
            "\"",
            "é",
            "😀",
            "\t",
            "\u{1}",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        proptest::sample::select(vec![vec![0xff], vec![0xc3], vec![0xe2, 0x82], vec![0x80]]),
    ]
}

proptest::proptest! {
    /// The run-copying unescaper gives exactly what the byte-by-byte one gave — the same
    /// text, issue and end, or the same error at the same offset — from bytes and from
    /// text; and on valid JSON strings, what serde_json reads.
    #[test]
    fn strings_read_as_byte_by_byte(
        pieces in proptest::collection::vec(piece(), 0..12),
        close in proptest::prelude::any::<bool>(),
    ) {
        let mut doc = b"\"".to_vec();
        for p in &pieces {
            doc.extend_from_slice(p);
        }
        if close {
            doc.push(b'"');
        }
        let want = byte_by_byte(&doc);
        proptest::prop_assert_eq!(read(Reader::new(&doc)), want.clone());
        if let Ok(text) = std::str::from_utf8(&doc) {
            proptest::prop_assert_eq!(read(Reader::from_text(text)), want.clone());
        }
        // The same string inside a document with invalid UTF-8 after it (so no text), when
        // the verdict does not depend on what follows.
        if want.as_ref().err().is_none_or(|(at, _)| *at < doc.len()) {
            let mut broken = doc.clone();
            broken.extend_from_slice(b" \xff");
            proptest::prop_assert_eq!(read(Reader::new(&broken)), want.clone());
        }
        if let Ok((ours, None, end)) = &want {
            if let Ok(theirs) = serde_json::from_slice::<String>(doc.get(..*end).unwrap_or_default()) {
                proptest::prop_assert_eq!(ours, &theirs);
            }
        }
    }
}

#[test]
fn strings_unescape_and_flag_bad_text() {
    let mut r = Reader::new(br#""a\u00e9\ud83d\ude00\n""#);
    assert_eq!(r.string(), Ok((Cow::Owned("aé😀\n".to_owned()), None)));
    let mut r = Reader::new(br#""\ud800x""#);
    assert_eq!(r.string().map(|s| s.1), Ok(Some(TextIssue::LoneSurrogate)));
    let mut r = Reader::new(b"\"\xff\"");
    assert_eq!(r.string().map(|s| s.1), Ok(Some(TextIssue::InvalidUtf8)));
}
