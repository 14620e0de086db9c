//! The iterative pre-scan (spec §8): before anything recursive touches a payload, one pass over
//! its bytes with no recursion and a fixed-size stack checks
//!
//! - its size against `max_input_bytes` (`too_large`),
//! - its nesting depth against [`MAX_DEPTH`] (`too_deep`),
//! - how many values it holds against [`MAX_VALUES`] (`too_many_values`; every scalar, array and
//!   object counts one),
//! - how many items each array holds against [`MAX_ITEMS`] (`too_many_items`).
//!
//! It stops at the first bound broken, so a 1 MB `[[[[…` or ten million tiny values are refused
//! after a few dozen bytes or a few hundred kilobytes, in memory bounded by the depth limit.
//! It is not a JSON validator: syntax errors are left to the decoder, which may then rely on
//! depth ≤ 64. Strings are skipped exactly (escapes included), so brackets inside text do not
//! count.
//!
//! Two walks do it. [`blocks`] reads 64 bytes at a time with vector compares and measures the
//! depth exactly, and counts the separators outside strings: in JSON every value but the first
//! follows a `[`, `,` or `:`, and an array's items are one more than its own commas, so when
//! those counts are below the bounds, the counts of values and items are too. Only a document
//! whose separators come close to a bound (or that has a backslash outside strings) is walked
//! byte by byte, value by value ([`within_bounds`]), and a refusal is located by a last walk
//! ([`locate`]) that keeps the path.
//!
//! So on JSON the verdict is the byte walk's. On bytes that are not JSON, a refusal may come
//! later, from the decoder, as `invalid_json` at the first syntax error: 20,000 numbers with no
//! commas between them pass the separator counts. The decoder reads only what precedes that
//! error, valid JSON whose values and items the counts do bound, so no input gets past the
//! bounds into anything recursive.

mod blocks;

use crate::error::{Code, DecodeError, PathBuf};
use crate::json::skip_string;
use crate::ty::limits::{MAX_DEPTH, MAX_ITEMS, MAX_VALUES};

/// One open array or object.
#[derive(Clone, Copy, Default)]
struct Open {
    is_object: bool,
    /// Items of an array; entries of an object.
    count: u32,
    /// The byte range of the current key (objects), for the error's pointer.
    key: (usize, usize),
}

/// The open arrays and objects: a fixed array (no allocation per document; the depth bound
/// keeps it from ever filling).
struct Stack {
    open: [Open; MAX_DEPTH],
    len: usize,
}

impl Stack {
    fn as_slice(&self) -> &[Open] {
        self.open.get(..self.len).unwrap_or_default()
    }

    fn last(&self) -> Option<&Open> {
        self.as_slice().last()
    }

    fn last_mut(&mut self) -> Option<&mut Open> {
        self.open.get_mut(..self.len).and_then(|s| s.last_mut())
    }

    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// Pushes `open`; the caller has checked that fewer than [`MAX_DEPTH`] are open.
    fn push(&mut self, open: Open) {
        if let Some(slot) = self.open.get_mut(self.len) {
            *slot = open;
            self.len += 1;
        }
    }
}

/// Checks the platform bounds of `bytes`; `Err` holds the one bound broken first.
/// `root` names the document in error paths (`request`).
pub fn prescan(bytes: &[u8], max_input_bytes: usize, root: &str) -> Result<(), DecodeError> {
    // The sentence does not count the bytes: a reader holds a document to its bound by
    // reading one byte past it (`aelc validate --input /dev/zero`), so past the bound only
    // "more" is known, and the answer is the same whether the document was read whole or not.
    if bytes.len() > max_input_bytes {
        return Err(DecodeError::new(
            Code::TooLarge,
            &PathBuf::new(root),
            format!("the document has more than the {max_input_bytes} bytes allowed"),
        ));
    }
    // Only the bounds a document could break are measured. In JSON every value has a first
    // byte of its own, and every value but an array's first item follows a `,` or a `:`; an
    // array or object also has its closing byte. So a document of n bytes holds at most
    // (n + 1) / 2 values, and an array of k items takes at least 2k + 1 bytes: below twice a
    // bound's number of bytes, that bound cannot break (on bytes that are not JSON, the
    // decoder reads only the JSON before the first syntax error, which the same holds for).
    // Below both, only the depth can break, and each level of nesting opens with a `[` or
    // `{`: a document with at most `MAX_DEPTH` of them (counted anywhere, strings included, by
    // a pass the compiler vectorizes) is not walked at all. That is most model answers: a few
    // kilobytes holding a few dozen brackets.
    let (values, items) = bounds_that_can_break(bytes.len());
    if !items && opens_at_most(bytes, MAX_DEPTH) {
        return Ok(());
    }
    let shape = match (values, items) {
        (true, _) => blocks::shape::<true, true>(bytes),
        (false, true) => blocks::shape::<true, false>(bytes),
        (false, false) => blocks::shape::<false, false>(bytes),
    };
    let lean = match shape {
        // The counts, when asked for, are below the bounds, or the walk would have given up.
        Some(shape) => shape.depth_ok,
        // Separators too many to rule a count bound out, or no JSON: count value by value.
        None => byte_walk(bytes),
    };
    if lean {
        return Ok(());
    }
    locate(bytes, root)
}

/// Whether a JSON document of `len` bytes can hold more than [`MAX_VALUES`] values, and an
/// array of more than [`MAX_ITEMS`] items: `n` values take at least `2n - 1` bytes, `k` items
/// `2k + 1` (see [`prescan`]).
fn bounds_that_can_break(len: usize) -> (bool, bool) {
    (len > 2 * MAX_VALUES, len > 2 * (MAX_ITEMS as usize + 1))
}

/// [`within_bounds`], counting what the size of `bytes` lets break.
fn byte_walk(bytes: &[u8]) -> bool {
    match bounds_that_can_break(bytes.len()) {
        (true, _) => within_bounds::<true, true>(bytes),
        (false, true) => within_bounds::<false, true>(bytes),
        (false, false) => within_bounds::<false, false>(bytes),
    }
}

/// Whether `bytes` holds at most `max` `[` and `{` bytes, wherever they stand. The count
/// stops at the first block that passes `max` (a document with many brackets is walked
/// anyway; counting all of them first was an eighth of its pre-scan).
fn opens_at_most(bytes: &[u8], max: usize) -> bool {
    let mut opens = 0;
    for block in bytes.chunks(255) {
        // Per block, a narrow counter the compiler keeps in vector lanes; a block of 255
        // bytes cannot overflow it.
        let in_block = block
            .iter()
            .fold(0u8, |n, &b| n + u8::from(b == b'[' || b == b'{'));
        opens += usize::from(in_block);
        if opens > max {
            return false;
        }
    }
    true
}

/// The pre-scan proper, on the happy path: `true` if no bound is broken. It keeps only what
/// the bounds need (a depth, which levels are objects, an item count per open array), no key
/// positions, so it is lean; when it says `false`, [`locate`] walks again with the same rules
/// to say which bound broke and where (a refusal costs two short walks, an acceptance one).
/// `VALUES`/`ITEMS`: whether to count values and array items (the depth is always checked).
fn within_bounds<const VALUES: bool, const ITEMS: bool>(bytes: &[u8]) -> bool {
    // One bit per open level in `objects`.
    const _: () = assert!(MAX_DEPTH <= 64);
    // Item counts of the open levels (used for arrays only) and a bit per level: object.
    let mut counts = [0u32; MAX_DEPTH];
    let mut objects: u64 = 0;
    let mut depth: usize = 0;
    let mut values: usize = 0;
    // Only values need it: inside an array no string is a key, so items do not.
    let mut expect_key = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | b':' => continue,
            b',' => {
                if VALUES {
                    expect_key = depth > 0 && (objects >> (depth - 1)) & 1 == 1;
                }
                continue;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                expect_key = false;
                continue;
            }
            b'"' => {
                i = skip_string(bytes, i);
                if expect_key {
                    expect_key = false;
                    continue;
                }
            }
            _ => {}
        }
        // A value starts at `b`.
        if VALUES {
            values += 1;
            if values > MAX_VALUES {
                return false;
            }
        }
        if ITEMS && depth > 0 && (objects >> (depth - 1)) & 1 == 0 {
            match counts.get_mut(depth - 1) {
                Some(count) => {
                    *count += 1;
                    if *count > MAX_ITEMS {
                        return false;
                    }
                }
                None => return false,
            }
        }
        match b {
            b'"' => {}
            b'[' | b'{' => {
                if depth >= MAX_DEPTH {
                    return false;
                }
                if ITEMS {
                    if let Some(count) = counts.get_mut(depth) {
                        *count = 0;
                    }
                }
                let bit = 1u64 << depth;
                if b == b'{' {
                    objects |= bit;
                } else {
                    objects &= !bit;
                }
                depth += 1;
                expect_key = VALUES && b == b'{';
            }
            _ => {
                // A literal or a number (or garbage the decoder will reject): skip its run.
                while bytes
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
                {
                    i += 1;
                }
            }
        }
    }
    true
}

/// The walk of [`within_bounds`] again, keeping the key of every open object, to report the
/// bound broken first with its path (`Ok` if none is, which `within_bounds` rules out).
fn locate(bytes: &[u8], root: &str) -> Result<(), DecodeError> {
    let mut stack = Stack {
        open: [Open::default(); MAX_DEPTH],
        len: 0,
    };
    let mut values: usize = 0;
    // Whether the next string in an object is a key (after `{` or `,`) rather than a value.
    let mut expect_key = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | b':' => {
                i += 1;
                continue;
            }
            b',' => {
                expect_key = stack.last().is_some_and(|o| o.is_object);
                i += 1;
                continue;
            }
            b']' | b'}' => {
                stack.pop();
                expect_key = false;
                i += 1;
                continue;
            }
            _ => {}
        }
        if b == b'"' {
            let start = i + 1;
            i = skip_string(bytes, start);
            if expect_key {
                if let Some(top) = stack.last_mut() {
                    top.key = (start, i.saturating_sub(1));
                }
                expect_key = false;
                continue;
            }
        }
        // A value starts here.
        values += 1;
        if let Some(top) = stack.last_mut() {
            top.count = top.count.saturating_add(1);
            if !top.is_object && top.count > MAX_ITEMS {
                let path = path_of(bytes, stack.as_slice(), root, true);
                return Err(DecodeError::new(
                    Code::TooManyItems,
                    &path,
                    format!("an array has more than {MAX_ITEMS} items, the platform limit"),
                ));
            }
        }
        if values > MAX_VALUES {
            return Err(DecodeError::new(
                Code::TooManyValues,
                &path_of(bytes, stack.as_slice(), root, false),
                format!("the document holds more than {MAX_VALUES} values, the platform limit"),
            ));
        }
        match b {
            b'"' => {}
            b'[' | b'{' => {
                if stack.len >= MAX_DEPTH {
                    return Err(DecodeError::new(
                        Code::TooDeep,
                        &path_of(bytes, stack.as_slice(), root, false),
                        format!("the document nests deeper than {MAX_DEPTH} levels"),
                    ));
                }
                stack.push(Open {
                    is_object: b == b'{',
                    count: 0,
                    key: (0, 0),
                });
                expect_key = b == b'{';
                i += 1;
            }
            _ => {
                // A literal or a number (or garbage the decoder will reject): skip its run.
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
                {
                    i += 1;
                }
            }
        }
    }
    Ok(())
}

/// The path of the value being opened (an array item counts its index from 1 in `count`).
fn path_of(bytes: &[u8], stack: &[Open], root: &str, last_is_overflow: bool) -> PathBuf {
    let mut path = PathBuf::new(root);
    let n = stack.len();
    for (depth, open) in stack.iter().enumerate() {
        if open.is_object {
            let key = bytes.get(open.key.0..open.key.1).unwrap_or_default();
            path.push_key(&String::from_utf8_lossy(key));
        } else if !(last_is_overflow && depth + 1 == n) {
            path.push_index(open.count.saturating_sub(1) as usize);
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(bytes: &[u8]) -> Option<Code> {
        prescan(bytes, 10 << 20, "request").err().map(|e| e.code)
    }

    #[test]
    fn accepts_documents_within_bounds() {
        assert_eq!(code(br#"{"a": [1, 2, {"b": "[[[["}], "c": null}"#), None);
        let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(code(deep.as_bytes()), None);
    }

    #[test]
    fn refuses_deep_nesting_early() {
        let deep = "[".repeat(500_000);
        let err = prescan(deep.as_bytes(), 1 << 20, "request").err();
        assert_eq!(err.as_ref().map(|e| e.code), Some(Code::TooDeep));
        let err = err.map(|e| e.pointer).unwrap_or_default();
        assert!(err.starts_with("/0/0/0"), "{err}");
    }

    #[test]
    fn refuses_too_many_values_and_items() {
        let inner = format!("[{}]", vec!["0"; 4_000].join(","));
        let many = format!("[{}]", vec![inner; 60].join(","));
        assert_eq!(code(many.as_bytes()), Some(Code::TooManyValues));
        let wide = format!("[{}]", vec!["0"; 10_001].join(","));
        assert_eq!(code(wide.as_bytes()), Some(Code::TooManyItems));
        let ok = format!("[{}]", vec!["0"; 10_000].join(","));
        assert_eq!(code(ok.as_bytes()), None);
    }

    #[test]
    fn refuses_large_input() {
        let err = prescan(b"[1, 2]", 3, "request").err();
        assert_eq!(err.map(|e| e.code), Some(Code::TooLarge));
    }

    /// The lean walk and the locating walk agree on every document (the locating one is what
    /// the tests above exercise on refusals).
    #[test]
    fn both_walks_agree() {
        let inner = format!("[{}]", vec!["0"; 4_000].join(","));
        let docs = [
            r#"{"a": [1, 2, {"b": "[[[[\"]]"}], "c": null}"#.to_owned(),
            format!("{}{}", "[".repeat(64), "]".repeat(64)),
            format!("{}{}", "[".repeat(65), "]".repeat(65)),
            format!(r#"{{"k": {}1{}}}"#, "[".repeat(63), "]".repeat(63)),
            format!(r#"{{"k": {}1{}}}"#, "[".repeat(64), "]".repeat(64)),
            format!("[{}]", vec![inner.as_str(); 60].join(",")),
            format!("[{}]", vec!["0"; 10_001].join(",")),
            format!("[{}]", vec!["0"; 10_000].join(",")),
            format!(r#"{{"a": [{}]}}"#, vec!["{}"; 10_001].join(",")),
            r#"]]]}}} [1, "x\"y", tru , {"a" "b": ,}"#.to_owned(),
        ];
        for doc in &docs {
            let bytes = doc.as_bytes();
            let located = locate(bytes, "request").is_ok();
            let what = doc.get(..80).unwrap_or(doc);
            assert_eq!(within_bounds::<true, true>(bytes), located, "{what}");
            // The walks that count less agree wherever `prescan` uses them.
            let (values, items) = bounds_that_can_break(bytes.len());
            if !values {
                assert_eq!(within_bounds::<false, true>(bytes), located, "{what}");
            }
            if !items {
                assert_eq!(within_bounds::<false, false>(bytes), located, "{what}");
            }
        }
    }

    proptest::proptest! {
        /// On bracket soup (the bytes the walks care about), the lean walk accepts exactly what
        /// the locating walk accepts.
        #[test]
        fn both_walks_agree_on_bracket_soup(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"[[[[{{\"\",,:]]}} \\1a".to_vec()),
                0..600,
            )
        ) {
            let located = locate(&bytes, "r").is_ok();
            proptest::prop_assert_eq!(within_bounds::<true, true>(&bytes), located);
            proptest::prop_assert_eq!(within_bounds::<false, true>(&bytes), located);
            proptest::prop_assert_eq!(within_bounds::<false, false>(&bytes), located);
            // And so does the whole pre-scan, bracket-count shortcut included.
            proptest::prop_assert_eq!(prescan(&bytes, 1 << 20, "r").is_ok(), located);
        }
    }

    #[test]
    fn brackets_in_text_are_no_nesting() {
        let text = format!(r#"{{"a": "{}", "b": [[1]]}}"#, "[{".repeat(100));
        assert_eq!(code(text.as_bytes()), None);
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert_eq!(code(deep.as_bytes()), Some(Code::TooDeep));
    }

    /// JSON nested up to 80 deep, with brackets and commas in its strings.
    fn json_doc() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("0".to_owned()),
            Just(r#""[{,]""#.to_owned()),
            Just("null".to_owned()),
        ];
        leaf.prop_recursive(80, 300, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                proptest::collection::vec(inner, 0..3).prop_map(|values| {
                    let entries: Vec<String> = values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| format!(r#""k{i}": {v}"#))
                        .collect();
                    format!("{{{}}}", entries.join(", "))
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Skipping the walk when the bracket count rules the depth bound out gives the
        /// verdict of walking value by value.
        #[test]
        fn prescan_agrees_with_the_locating_walk_on_json(
            doc in json_doc(),
            around in 50usize..70,
        ) {
            // Wrapped in enough arrays that some documents cross the depth bound.
            let doc = format!("{}{doc}{}", "[".repeat(around), "]".repeat(around));
            let located = locate(doc.as_bytes(), "r").is_ok();
            proptest::prop_assert_eq!(prescan(doc.as_bytes(), 10 << 20, "r").is_ok(), located);
        }

        /// The counting pass says what a byte loop's count says, on any bytes.
        #[test]
        fn open_counts_match_a_byte_loop(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"[{,]} a\"\\".to_vec()),
                0..1200,
            )
        ) {
            let opens = bytes.iter().filter(|&&b| b == b'[' || b == b'{').count();
            for max in [0, opens.saturating_sub(1), opens, opens + 1, 64] {
                proptest::prop_assert_eq!(opens_at_most(&bytes, max), opens <= max);
            }
        }
    }

    /// `[`/`{`, `,` and `:` outside strings, strings skipped as the byte walk skips them.
    fn separators_by_byte(bytes: &[u8]) -> (usize, usize, usize) {
        let (mut opens, mut commas, mut colons) = (0, 0, 0);
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            i += 1;
            match b {
                b'"' => i = skip_string(bytes, i),
                b'[' | b'{' => opens += 1,
                b',' => commas += 1,
                b':' => colons += 1,
                _ => {}
            }
        }
        (opens, commas, colons)
    }

    proptest::proptest! {
        /// On any bytes rich in quotes, backslashes and brackets, the block walk cuts the
        /// strings where the byte walk does (or gives up): same depth verdict, same separators.
        #[test]
        fn the_block_walk_reads_as_the_byte_walk(
            bytes in proptest::collection::vec(
                proptest::sample::select(b"[[[[{{\"\",,:]]}} \\1a\n".to_vec()),
                0..900,
            )
        ) {
            if let Some(shape) = blocks::shape::<true, true>(&bytes) {
                proptest::prop_assert_eq!(shape.depth_ok, within_bounds::<false, false>(&bytes));
                if shape.depth_ok {
                    let (opens, commas, colons) = separators_by_byte(&bytes);
                    proptest::prop_assert_eq!(shape.separators, opens + commas + colons);
                }
            } else {
                // It gives up only for a backslash outside strings, which is never JSON.
                proptest::prop_assert!(bytes.contains(&b'\\'));
            }
        }

        /// On JSON, the separator counts bound what the byte walk counts: values, and the
        /// items of the largest array.
        #[test]
        fn separators_bound_values_and_items(doc in json_doc()) {
            let bytes = doc.as_bytes();
            let shape = blocks::shape::<true, true>(bytes);
            proptest::prop_assert!(shape.is_some());
            let shape = shape.unwrap_or(blocks::Shape { depth_ok: false, separators: 0, widest: 0 });
            let counts = exact_counts(bytes);
            proptest::prop_assert!(counts.is_some(), "not JSON: {}", doc);
            let (values, items) = counts.unwrap_or_default();
            proptest::prop_assert!(values <= shape.max_values(), "{} > {}", values, shape.max_values());
            proptest::prop_assert!(items <= shape.widest + 1, "{} > {}", items, shape.widest + 1);
        }
    }

    /// The values of a JSON document and the items of its largest array, counted on the
    /// document as `serde_json` reads it (every scalar, array and object is one value).
    fn exact_counts(bytes: &[u8]) -> Option<(usize, usize)> {
        fn walk(v: &serde_json::Value, values: &mut usize, largest: &mut usize) {
            *values += 1;
            match v {
                serde_json::Value::Array(items) => {
                    *largest = (*largest).max(items.len());
                    items.iter().for_each(|item| walk(item, values, largest));
                }
                serde_json::Value::Object(entries) => {
                    entries
                        .values()
                        .for_each(|item| walk(item, values, largest));
                }
                _ => {}
            }
        }
        let doc = serde_json::from_slice::<serde_json::Value>(bytes).ok()?;
        let (mut values, mut largest) = (0, 0);
        walk(&doc, &mut values, &mut largest);
        Some((values, largest))
    }

    /// Numbers with no commas are no JSON: the separator counts let them through, and the
    /// decoder refuses them at the second number (`tests/it/decode.rs`).
    #[test]
    fn not_json_may_pass_the_separator_counts() {
        let spaced = format!("[{}]", vec!["1"; 20_000].join(" "));
        assert!(!within_bounds::<false, true>(spaced.as_bytes()));
        assert_eq!(code(spaced.as_bytes()), None);
    }

    /// The shortest documents that break the values and the items bounds are exactly as long
    /// as `bounds_that_can_break` says a document must be to break them, and are refused.
    #[test]
    fn the_shortest_documents_over_a_count_bound_are_counted() {
        let zeros = |n: usize| format!("[{}]", vec!["0"; n].join(","));
        let items = zeros(MAX_ITEMS as usize + 1);
        assert_eq!(bounds_that_can_break(items.len()), (false, true));
        assert_eq!(bounds_that_can_break(items.len() - 1), (false, false));
        assert_eq!(code(items.as_bytes()), Some(Code::TooManyItems));
        // 1 + 20 arrays + 20 × 9,999 zeros = 200,001 values.
        let inner = zeros(9_999);
        let values = format!("[{}]", vec![inner.as_str(); 20].join(","));
        assert_eq!(bounds_that_can_break(values.len()), (true, true));
        assert!(!bounds_that_can_break(values.len() - 1).0);
        assert_eq!(code(values.as_bytes()), Some(Code::TooManyValues));
    }

    #[test]
    fn keys_are_not_values() {
        // 1 object + 3 values; keys do not count.
        let doc = br#"{"a": 1, "b": "x", "c": true}"#;
        assert_eq!(code(doc), None);
    }
}
