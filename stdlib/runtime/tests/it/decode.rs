//! Decoder tests: every code of spec §4 (and §8's bounds), the exact-integer rules, defaults,
//! options, enums, paths and messages. Each test asserts the exact pointer and code, so a wrong
//! behaviour fails it.

use aelc_runtime::decode::Decoder;
use aelc_runtime::error::Code;
use aelc_runtime::testing::{self, named, review_json, review_types, REVIEW, REVIEW_REQUEST};
use aelc_runtime::ty::{
    DefId, DefKind, FloatKind, FloatTy, Format, IntKind, IntTy, ListTy, MapTy, MediaKind, MediaTy,
    StrTy, Ty, TypeDef, TypeTable,
};
use aelc_runtime::value::Value;

fn errors(table: &TypeTable, ty: &Ty, doc: &str) -> Vec<(String, Code)> {
    match Decoder::new(table).decode(doc.as_bytes(), ty, "request") {
        Ok(_) => Vec::new(),
        Err(errs) => errs.into_iter().map(|e| (e.pointer, e.code)).collect(),
    }
}

fn one(table: &TypeTable, ty: &Ty, doc: &str) -> (String, Code) {
    let errs = errors(table, ty, doc);
    assert_eq!(errs.len(), 1, "{doc}: {errs:?}");
    errs.into_iter()
        .next()
        .unwrap_or((String::new(), Code::InvalidJson))
}

fn int(kind: IntKind) -> Ty {
    Ty::Int(IntTy::base(kind))
}

fn ok(table: &TypeTable, ty: &Ty, doc: &str) -> Value {
    match Decoder::new(table).decode(doc.as_bytes(), ty, "request") {
        Ok(v) => v,
        Err(e) => panic!("{doc}: {e:?}"),
    }
}

#[test]
fn the_seed_request_decodes_with_defaults() {
    let t = review_types();
    let v = ok(
        &t,
        &named(REVIEW_REQUEST),
        r#"{"document": "hello", "locale": "en-GB"}"#,
    );
    assert_eq!(
        v,
        Value::Struct(vec![
            Value::Str("hello".into()),
            Value::Bool(false),
            Value::Int(10),
            Value::some(Value::Str("en-GB".into())),
        ])
    );
    let v = ok(
        &t,
        &named(REVIEW_REQUEST),
        r#"{"document": "x", "locale": null}"#,
    );
    assert!(matches!(v, Value::Struct(f) if f.get(3) == Some(&Value::None)));
}

#[test]
fn the_spec_message_is_exact() {
    let t = review_types();
    let errs = Decoder::new(&t)
        .decode(
            br#"{"document": "x", "locale": "abcdefghijklmnopq"}"#,
            &named(REVIEW_REQUEST),
            "request",
        )
        .err()
        .unwrap_or_default();
    let first = errs.first().map(|e| e.message.as_str()).unwrap_or_default();
    assert_eq!(
        first,
        "request.locale: text has 17 characters, at most 16 are allowed (too_long)"
    );
    assert_eq!(errs.first().map(|e| e.pointer.as_str()), Some("/locale"));
    assert_eq!(
        errs.first().map(|e| e.path.as_str()),
        Some("request.locale")
    );
    // The pattern fails too: every error is reported.
    assert_eq!(errs.get(1).map(|e| e.code), Some(Code::PatternMismatch));
}

#[test]
fn wrong_type_and_no_coercion() {
    let t = review_types();
    let r = named(REVIEW_REQUEST);
    assert_eq!(
        one(&t, &r, r#"{"document": 3}"#),
        ("/document".into(), Code::WrongType)
    );
    assert_eq!(
        one(&t, &r, r#"{"document": "x", "strict": "true"}"#),
        ("/strict".into(), Code::WrongType)
    );
    assert_eq!(
        one(&t, &r, r#"{"document": "x", "max_findings": "3"}"#),
        ("/max_findings".into(), Code::WrongType)
    );
    assert_eq!(one(&t, &r, "[]"), ("".into(), Code::WrongType));
    assert_eq!(
        one(&t, &r, r#"{"document": null}"#),
        ("/document".into(), Code::WrongType)
    );
}

#[test]
fn unknown_and_missing_fields() {
    let t = review_types();
    let r = named(REVIEW_REQUEST);
    assert_eq!(
        one(&t, &r, r#"{"document": "x", "extra": {"a": [1]}}"#),
        ("/extra".into(), Code::UnknownField)
    );
    assert_eq!(one(&t, &r, "{}"), ("/document".into(), Code::MissingField));
}

#[test]
fn text_lengths_count_scalar_values() {
    let t = TypeTable::default();
    let ty = Ty::Str(StrTy {
        min: 2,
        max: 3,
        pattern: None,
        format: None,
    });
    ok(&t, &ty, r#""ééé""#); // 6 bytes, 3 scalars
    ok(&t, &ty, r#""😀😀😀""#);
    assert_eq!(one(&t, &ty, r#""éééé""#), ("".into(), Code::TooLong));
    assert_eq!(one(&t, &ty, r#""é""#), ("".into(), Code::TooShort));
}

#[test]
fn integers_are_exact_and_integral() {
    let t = TypeTable::default();
    for doc in ["3", "3.0", "3e0", "0.3e1", "30e-1"] {
        assert_eq!(ok(&t, &int(IntKind::U8), doc), Value::Int(3), "{doc}");
    }
    assert_eq!(ok(&t, &int(IntKind::U16), "1.0e2"), Value::Int(100));
    assert_eq!(
        ok(&t, &int(IntKind::U64), "18446744073709551615"),
        Value::Int(18_446_744_073_709_551_615)
    );
    assert_eq!(
        ok(&t, &int(IntKind::I64), "-9223372036854775808"),
        Value::Int(i64::MIN.into())
    );
    assert_eq!(
        one(&t, &int(IntKind::U64), "18446744073709551616").1,
        Code::OutOfRange
    );
    assert_eq!(
        one(&t, &int(IntKind::I64), "-9223372036854775809").1,
        Code::OutOfRange
    );
    assert_eq!(one(&t, &int(IntKind::U8), "256").1, Code::OutOfRange);
    assert_eq!(one(&t, &int(IntKind::U8), "-1").1, Code::OutOfRange);
    assert_eq!(one(&t, &int(IntKind::U8), "1e400").1, Code::OutOfRange);
    assert_eq!(one(&t, &int(IntKind::U8), "2.5").1, Code::NotInteger);
    assert_eq!(
        one(&t, &int(IntKind::U64), "18446744073709551615.5").1,
        Code::NotInteger
    );
    let refined = Ty::Int(IntTy {
        kind: IntKind::U16,
        min: 1,
        max: 50,
        max_exclusive: true,
    });
    assert_eq!(one(&t, &refined, "50").1, Code::OutOfRange);
    ok(&t, &refined, "49");
}

#[test]
fn floats_are_finite_and_bounded() {
    let t = review_types();
    let f32_ty = Ty::Float(FloatTy {
        kind: FloatKind::F32,
        min: None,
        max: None,
    });
    let f64_ty = Ty::Float(FloatTy {
        kind: FloatKind::F64,
        min: None,
        max: None,
    });
    assert_eq!(ok(&t, &f64_ty, "7"), Value::Float(7.0));
    assert_eq!(one(&t, &f64_ty, "1e400").1, Code::NotFinite);
    assert_eq!(one(&t, &f32_ty, "1e39").1, Code::NotFinite);
    ok(&t, &f32_ty, "3.4e38");
    let doc = review_json(1).replace("0.72", "1.5");
    assert_eq!(
        one(&t, &named(REVIEW), &doc),
        ("/score".into(), Code::OutOfRange)
    );
}

#[test]
fn enums() {
    let t = review_types();
    let doc = review_json(2).replacen("\"low\"", "\"urgent\"", 1);
    let (pointer, code) = one(&t, &named(REVIEW), &doc);
    assert_eq!(
        (pointer.as_str(), code),
        ("/findings/0/severity", Code::UnknownVariant)
    );
    // The tag may stand anywhere in its object.
    let late_tag = review_json(0).replace(
        r#"{"kind": "request_changes", "reasons": ["unbounded queue"]}"#,
        r#"{"reasons": ["a"], "kind": "request_changes"}"#,
    );
    ok(&t, &named(REVIEW), &late_tag);
    let unknown = review_json(0).replace(r#""kind": "request_changes""#, r#""kind": "reject""#);
    assert_eq!(
        one(&t, &named(REVIEW), &unknown),
        ("/verdict/kind".into(), Code::UnknownVariant)
    );
    let untagged = review_json(0).replace(r#""kind": "request_changes", "#, "");
    assert_eq!(
        one(&t, &named(REVIEW), &untagged),
        ("/verdict/kind".into(), Code::MissingField)
    );
    let unit = review_json(0).replace(
        r#"{"kind": "request_changes", "reasons": ["unbounded queue"]}"#,
        r#"{"kind": "approve", "reasons": []}"#,
    );
    assert_eq!(
        one(&t, &named(REVIEW), &unit),
        ("/verdict/reasons".into(), Code::UnknownField)
    );
}

#[test]
fn lists_and_sets() {
    let t = review_types();
    let few = review_json(0).replace(r#"["unbounded queue"]"#, "[]");
    assert_eq!(
        one(&t, &named(REVIEW), &few),
        ("/verdict/reasons".into(), Code::TooFewItems)
    );
    let dup = review_json(1).replace(r#"["perf", "memory"]"#, r#"["perf", "memory", "perf"]"#);
    assert_eq!(
        one(&t, &named(REVIEW), &dup),
        ("/findings/0/tags/2".into(), Code::DuplicateItem)
    );
    let many = review_json(1).replace(
        r#"["perf", "memory"]"#,
        r#"["1","2","3","4","5","6","7","8","9"]"#,
    );
    assert_eq!(
        one(&t, &named(REVIEW), &many),
        ("/findings/0/tags".into(), Code::TooManyItems)
    );
}

#[test]
fn duplicate_keys_are_rejected() {
    let t = review_types();
    let r = named(REVIEW_REQUEST);
    assert_eq!(
        one(&t, &r, r#"{"document": "a", "document": "b"}"#),
        ("/document".into(), Code::DuplicateKey)
    );
    let map = Ty::Map(MapTy {
        key: Box::new(testing::text(8)),
        value: Box::new(int(IntKind::U8)),
        min: 0,
        max: 2,
    });
    assert_eq!(
        one(&t, &map, r#"{"a": 1, "a": 2}"#),
        ("/a".into(), Code::DuplicateKey)
    );
}

#[test]
fn maps_check_keys_and_entries() {
    let t = review_types();
    let key = Ty::Str(StrTy {
        min: 1,
        max: 3,
        pattern: Some("^[a-z]+$".into()),
        format: None,
    });
    let map = Ty::Map(MapTy {
        key: Box::new(key),
        value: Box::new(int(IntKind::U8)),
        min: 0,
        max: 2,
    });
    assert_eq!(
        ok(&t, &map, r#"{"b": 2, "a": 1}"#),
        Value::Map(vec![
            ("a".into(), Value::Int(1)),
            ("b".into(), Value::Int(2))
        ])
    );
    assert_eq!(
        one(&t, &map, r#"{"abcd": 1}"#),
        ("/abcd".into(), Code::TooLong)
    );
    assert_eq!(
        one(&t, &map, r#"{"A": 1}"#),
        ("/A".into(), Code::PatternMismatch)
    );
    assert_eq!(
        one(&t, &map, r#"{"a": 1, "b": 2, "c": 3}"#),
        ("".into(), Code::TooManyItems)
    );
    let enum_keys = Ty::Map(MapTy {
        key: Box::new(named(testing::SEVERITY)),
        value: Box::new(int(IntKind::U8)),
        min: 0,
        max: 3,
    });
    ok(&t, &enum_keys, r#"{"low": 1}"#);
    assert_eq!(
        one(&t, &enum_keys, r#"{"lowest": 1}"#),
        ("/lowest".into(), Code::UnknownVariant)
    );
}

#[test]
fn patterns_are_unanchored_and_formats_checked() {
    let t = TypeTable::default();
    let pat = Ty::Str(StrTy {
        min: 0,
        max: 50,
        pattern: Some("[0-9]".into()),
        format: None,
    });
    ok(&t, &pat, r#""abc1def""#);
    assert_eq!(one(&t, &pat, r#""abc""#).1, Code::PatternMismatch);
    let date = Ty::Str(StrTy {
        min: 0,
        max: 50,
        pattern: None,
        format: Some(Format::Date),
    });
    ok(&t, &date, r#""2024-02-29""#);
    assert_eq!(one(&t, &date, r#""2023-02-29""#).1, Code::InvalidFormat);
}

#[test]
fn bad_text_is_invalid_text() {
    let t = TypeTable::default();
    let ty = testing::text(10);
    assert_eq!(one(&t, &ty, r#""\ud800""#).1, Code::InvalidText);
    assert_eq!(one(&t, &ty, r#""\udc00\ud800""#).1, Code::InvalidText);
    let errs = Decoder::new(&t)
        .decode(b"\"\xc3\x28\"", &ty, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(errs.first().map(|e| e.code), Some(Code::InvalidText));
    ok(&t, &ty, r#""\ud83d\ude00""#);
}

#[test]
fn syntax_errors_are_invalid_json() {
    let t = review_types();
    let r = named(REVIEW_REQUEST);
    for doc in [
        "",
        "{",
        r#"{"document": "x",}"#,
        r#"{"document": "x"} {}"#,
        "{\"document\": \"x\"} trailing",
        "nul",
    ] {
        let errs = errors(&t, &r, doc);
        assert_eq!(
            errs.last().map(|e| e.1),
            Some(Code::InvalidJson),
            "{doc}: {errs:?}"
        );
    }
}

/// 20,000 numbers with no commas between them are no JSON. The pre-scan's separator counts
/// let them through (`prescan::not_json_may_pass_the_separator_counts`); the decoder stops at
/// the second number, with one value read, and says why.
#[test]
fn numbers_without_commas_are_invalid_json_not_too_many_items() {
    let t = TypeTable::default();
    let ty = Ty::List(ListTy {
        item: Box::new(int(IntKind::U8)),
        min: 0,
        max: 10_000,
        unique: false,
    });
    let spaced = format!("[{}]", vec!["1"; 20_000].join(" "));
    let errs = Decoder::new(&t)
        .with_max_input_bytes(1 << 20)
        .decode(spaced.as_bytes(), &ty, "request")
        .err()
        .unwrap_or_default();
    let got: Vec<(Code, &str)> = errs.iter().map(|e| (e.code, e.message.as_str())).collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got.first().map(|g| g.0), Some(Code::InvalidJson));
    assert!(
        got.first()
            .is_some_and(|g| g.1.contains("line 1, column 4")),
        "{got:?}"
    );
}

#[test]
fn platform_bounds() {
    let t = TypeTable::default();
    let deep = Ty::List(ListTy {
        item: Box::new(int(IntKind::U8)),
        min: 0,
        max: 10,
        unique: false,
    });
    let doc = "[".repeat(500_000);
    let errs = Decoder::new(&t)
        .with_max_input_bytes(1 << 20)
        .decode(doc.as_bytes(), &deep, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(
        errs.iter().map(|e| e.code).collect::<Vec<_>>(),
        vec![Code::TooDeep]
    );
    let big = "1".repeat(100);
    let errs = Decoder::new(&t)
        .with_max_input_bytes(10)
        .decode(big.as_bytes(), &deep, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(errs.first().map(|e| e.code), Some(Code::TooLarge));
    let items = format!("[{}]", vec!["0"; 10_001].join(","));
    assert_eq!(one(&t, &deep, &items).1, Code::TooManyItems);
    let inner = format!("[{}]", vec!["0"; 5_000].join(","));
    let values = format!("[{}]", vec![inner; 41].join(","));
    let errs = Decoder::new(&t)
        .with_max_input_bytes(10 << 20)
        .decode(values.as_bytes(), &deep, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(errs.first().map(|e| e.code), Some(Code::TooManyValues));
}

#[test]
fn errors_are_capped_and_in_document_order() {
    let t = TypeTable::default();
    let ty = Ty::List(ListTy {
        item: Box::new(int(IntKind::U8)),
        min: 0,
        max: 1000,
        unique: false,
    });
    let doc = format!("[{}]", vec!["\"x\""; 300].join(","));
    let errs = Decoder::new(&t)
        .decode(doc.as_bytes(), &ty, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(errs.len(), 100);
    let pointers: Vec<String> = errs.iter().map(|e| e.pointer.clone()).collect();
    let expected: Vec<String> = (0..100).map(|i| format!("/{i}")).collect();
    assert_eq!(pointers, expected);
    // After the cap a syntax error is still found.
    let broken = format!("[{},]", vec!["\"x\""; 300].join(","));
    let errs = Decoder::new(&t)
        .decode(broken.as_bytes(), &ty, "request")
        .err()
        .unwrap_or_default();
    assert_eq!(errs.last().map(|e| e.code), Some(Code::InvalidJson));
}

fn media_table() -> (TypeTable, Ty) {
    let ty = Ty::Media(Box::new(MediaTy {
        kind: MediaKind::Image,
        max_bytes: 5 << 20,
        content_types: vec!["image/png".into(), "image/jpeg".into()],
        max_pixels: Some((4096, 4096)),
        max_duration_ms: None,
        sample_rate: None,
    }));
    let table = TypeTable::new(vec![TypeDef {
        name: "Photo".into(),
        module: "m".into(),
        docs: None,
        kind: DefKind::Struct {
            fields: vec![testing::field("photo", ty.clone())],
        },
    }]);
    (table, ty)
}

#[test]
fn media_references() {
    let (t, ty) = media_table();
    let sha = "a".repeat(64);
    let good = format!(
        r#"{{"ref": "holon://files/9f3c", "content_type": "image/png", "size": 48213, "sha256": "{sha}", "expires_at": "2026-12-02T15:00:00Z", "source": "upload:caller-42", "width": 800, "height": 600}}"#
    );
    assert!(matches!(ok(&t, &ty, &good), Value::Media(_)));
    let photo = named(DefId(0));
    ok(&t, &photo, &format!(r#"{{"photo": {good}}}"#));
    let cases = [
        (
            good.replace("holon://files/", "http://x/"),
            "/ref",
            Code::InvalidFormat,
        ),
        (
            good.replace("image/png", "image/gif"),
            "/content_type",
            Code::UnknownVariant,
        ),
        (good.replace("48213", "6000000"), "/size", Code::TooLarge),
        (good.replace("800", "5000"), "/width", Code::OutOfRange),
        (good.replace(&sha, "xyz"), "/sha256", Code::InvalidFormat),
        (
            good.replace(r#""width""#, r#""colour""#),
            "/colour",
            Code::UnknownField,
        ),
        (
            good.replace(r#""size": 48213, "#, ""),
            "/size",
            Code::MissingField,
        ),
    ];
    for (doc, pointer, code) in cases {
        assert_eq!(one(&t, &ty, &doc), (pointer.to_owned(), code), "{doc}");
    }
}

#[test]
fn several_parameters() {
    let t = review_types();
    let u8_ty = int(IntKind::U8);
    let r = named(REVIEW_REQUEST);
    let params = [("count", &u8_ty), ("request", &r)];
    let v =
        Decoder::new(&t).decode_params(br#"{"count": 3, "request": {"document": "d"}}"#, &params);
    assert_eq!(v.as_ref().map(Vec::len), Ok(2));
    let errs = Decoder::new(&t)
        .decode_params(br#"{"count": 300, "request": {"document": 1}}"#, &params)
        .err()
        .unwrap_or_default();
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, vec!["count", "request.document"]);
    assert_eq!(errs.first().map(|e| e.pointer.as_str()), Some("/count"));
}

#[test]
fn every_code_is_exercised() {
    // A reminder that binds the list of codes to the tests above: adding a code fails here
    // until a test for it is written and listed.
    let tested = [
        Code::InvalidJson,
        Code::WrongType,
        Code::UnknownField,
        Code::MissingField,
        Code::TooLong,
        Code::TooShort,
        Code::OutOfRange,
        Code::NotInteger,
        Code::NotFinite,
        Code::UnknownVariant,
        Code::TooManyItems,
        Code::TooFewItems,
        Code::DuplicateItem,
        Code::DuplicateKey,
        Code::PatternMismatch,
        Code::InvalidFormat,
        Code::InvalidText,
        Code::TooDeep,
        Code::TooManyValues,
        Code::TooLarge,
    ];
    assert_eq!(tested.len(), Code::ALL.len());
}

#[test]
fn large_review_round_trips_canonically() {
    let t = review_types();
    let doc = review_json(50);
    let v = ok(&t, &named(REVIEW), &doc);
    let canonical = v.to_json_string(&named(REVIEW), &t);
    let again = ok(&t, &named(REVIEW), &canonical);
    assert_eq!(v, again);
    // Canonical JSON omits `none` fields rather than writing `null`.
    let without_nulls = doc.replace(r#""suggestion": null, "#, "");
    let reparsed: serde_json::Value = serde_json::from_str(&without_nulls).unwrap_or_default();
    assert!(v.to_json(&named(REVIEW), &t) == reparsed);
}

#[test]
fn validate_value_reports_like_the_decoder() {
    use aelc_runtime::validate::validate_value;
    let t = review_types();
    let doc = review_json(2);
    let good = ok(&t, &named(REVIEW), &doc);
    assert!(validate_value(&good, &named(REVIEW), &t, "output").is_empty());
    // Break the second finding's line (u32<1..>) and duplicate a tag.
    let Value::Struct(mut fields) = good else {
        panic!("a struct")
    };
    if let Some(Value::List(findings)) = fields.get_mut(2) {
        if let Some(Value::Struct(f)) = findings.get_mut(1) {
            f[0] = Value::Int(0);
            f[4] = Value::List(vec![Value::Str("a".into()), Value::Str("a".into())]);
        }
    }
    let bad = Value::Struct(fields);
    let errs = validate_value(&bad, &named(REVIEW), &t, "output");
    let got: Vec<(&str, &str, Code)> = errs
        .iter()
        .map(|e| (e.pointer.as_str(), e.path.as_str(), e.code))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "/findings/1/line",
                "output.findings[1].line",
                Code::OutOfRange
            ),
            (
                "/findings/1/tags/1",
                "output.findings[1].tags[1]",
                Code::DuplicateItem
            ),
        ]
    );
    // The same document through the decoder says the same.
    let broken_doc = doc.replacen("\"line\": 2", "\"line\": 0", 1);
    let decoded = errors(&t, &named(REVIEW), &broken_doc);
    assert_eq!(
        decoded,
        vec![("/findings/1/line".to_owned(), Code::OutOfRange)]
    );
    // A value of the wrong shape is wrong_type, not a panic.
    let errs = validate_value(&Value::Int(3), &named(REVIEW), &t, "output");
    assert_eq!(errs.first().map(|e| e.code), Some(Code::WrongType));
}

/// The two hostile payloads of spec §8: a 1 MB `[[[[…` 500,000+ deep, and ten million tiny
/// values. Both are refused by the pre-scan with one error whose pointer shows where it stopped
/// (the 65th level; the 200,001st value), so neither the decoder's recursion nor a tree of ten
/// million values is ever reached. Their speed is measured in `stdlib/runtime/benches/decode.rs`.
#[test]
fn hostile_payloads_are_refused_where_the_bound_breaks() {
    let t = TypeTable::default();
    let nested = Ty::List(ListTy {
        item: Box::new(Ty::List(ListTy {
            item: Box::new(int(IntKind::U8)),
            min: 0,
            max: 10_000,
            unique: false,
        })),
        min: 0,
        max: 10_000,
        unique: false,
    });
    let deep = "[".repeat(1 << 20);
    let errs = Decoder::new(&t)
        .with_max_input_bytes(1 << 20)
        .decode(deep.as_bytes(), &nested, "request")
        .err()
        .unwrap_or_default();
    let got: Vec<(&str, Code)> = errs.iter().map(|e| (e.pointer.as_str(), e.code)).collect();
    let pointer = "/0".repeat(64);
    assert_eq!(got, vec![(pointer.as_str(), Code::TooDeep)]);

    // 10,000 arrays of 1,000 zeros: 10,010,001 values in 20 MB. Values are counted in document
    // order (the outer array, then each inner array and its items), so value 200,001 is item
    // 799 of inner array 199: 1 + 199 × 1,001 + 1 + 799 = 200,001.
    let inner = format!("[{}]", vec!["0"; 1_000].join(","));
    let many = format!("[{}]", vec![inner.as_str(); 10_000].join(","));
    assert!(many.len() > 20_000_000);
    let errs = Decoder::new(&t)
        .with_max_input_bytes(32 << 20)
        .decode(many.as_bytes(), &nested, "request")
        .err()
        .unwrap_or_default();
    let got: Vec<(&str, Code)> = errs.iter().map(|e| (e.pointer.as_str(), e.code)).collect();
    assert_eq!(got, vec![("/199/799", Code::TooManyValues)]);

    // Ten million values in one flat array: the array's 10,001st item.
    let flat = format!("[{}]", vec!["0"; 10_000_000].join(","));
    let errs = Decoder::new(&t)
        .with_max_input_bytes(32 << 20)
        .decode(flat.as_bytes(), &nested, "request")
        .err()
        .unwrap_or_default();
    let got: Vec<(&str, Code)> = errs.iter().map(|e| (e.pointer.as_str(), e.code)).collect();
    assert_eq!(got, vec![("", Code::TooManyItems)]);
}

/// Issue 42: a pattern is compiled once per program, not once per decoder. A gateway makes a
/// decoder (and a validator, an evaluator) per request; each used to compile every `@pattern`
/// again, a fifth of a loaded gateway's CPU. Decoders on two threads, one after the other,
/// compile the request's `locale` pattern into the table's one cache, and a validator of the
/// same table finds it there.
#[test]
fn a_pattern_is_compiled_once_per_program() {
    let table = review_types();
    let request = named(REVIEW_REQUEST);
    let doc = r#"{"document": "Teh cat.", "locale": "en-GB"}"#;
    assert!(table.patterns().is_empty());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| ok(&table, &request, doc)).join().ok();
        }
    });
    assert_eq!(table.patterns().len(), 1, "one pattern, compiled once");
    // Every handle of the table's cache is the same cache; a clone of the table shares it.
    let clone = table.clone();
    assert!(clone.patterns().same_cache(table.patterns()));
    let mismatch = r#"{"document": "Teh cat.", "locale": "english"}"#;
    assert_eq!(
        one(&table, &request, mismatch),
        ("/locale".to_owned(), Code::PatternMismatch)
    );
    let value = ok(&clone, &request, doc);
    assert!(aelc_runtime::validate::Validator::new(&clone)
        .validate(&value, &request, "request")
        .is_empty());
    assert_eq!(table.patterns().len(), 1, "still the one pattern");
}

/// A decoder lent a buffer another decoder kept (`with_scratch`, as the generated glue does
/// per thread) gives the value a fresh decoder gives, whatever the buffer held: escaped
/// strings are unescaped into it from its start, and it is handed back for the next one.
#[test]
fn a_lent_scratch_buffer_changes_nothing() {
    let table = review_types();
    let ty = named(REVIEW);
    let doc = testing::model_output_json(3);
    let fresh = ok(&table, &ty, &doc);
    let mut scratch = b"left over from an earlier document \\\" \xff".to_vec();
    for _ in 0..3 {
        let mut decoder = Decoder::new(&table).with_scratch(scratch);
        let value = decoder.decode(doc.as_bytes(), &ty, "request");
        assert_eq!(value, Ok(fresh.clone()));
        scratch = decoder.into_scratch();
        assert!(scratch.capacity() > 0, "the buffer is handed back");
    }
}
