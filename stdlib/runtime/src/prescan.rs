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

use crate::error::{Code, DecodeError, PathBuf};
use crate::ty::limits::{MAX_DEPTH, MAX_ITEMS, MAX_VALUES};

/// One open array or object.
#[derive(Clone, Copy)]
struct Open {
    is_object: bool,
    /// Items of an array; entries of an object.
    count: u32,
    /// The byte range of the current key (objects), for the error's pointer.
    key: (usize, usize),
}

/// Checks the platform bounds of `bytes`; `Err` holds the one bound broken first.
/// `root` names the document in error paths (`request`).
pub fn prescan(bytes: &[u8], max_input_bytes: usize, root: &str) -> Result<(), DecodeError> {
    if bytes.len() > max_input_bytes {
        return Err(DecodeError::new(
            Code::TooLarge,
            &PathBuf::new(root),
            format!(
                "the document has {} bytes, at most {max_input_bytes} are allowed",
                bytes.len()
            ),
        ));
    }
    let mut stack: Vec<Open> = Vec::with_capacity(MAX_DEPTH + 1);
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
                let path = path_of(bytes, &stack, root, true);
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
                &path_of(bytes, &stack, root, false),
                format!("the document holds more than {MAX_VALUES} values, the platform limit"),
            ));
        }
        match b {
            b'"' => {}
            b'[' | b'{' => {
                if stack.len() >= MAX_DEPTH {
                    return Err(DecodeError::new(
                        Code::TooDeep,
                        &path_of(bytes, &stack, root, false),
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

/// Returns the index just past the closing quote of a string whose content starts at `i`
/// (or the end of input if it never closes).
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    bytes.len()
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

    #[test]
    fn keys_are_not_values() {
        // 1 object + 3 values; keys do not count.
        let doc = br#"{"a": 1, "b": "x", "c": true}"#;
        assert_eq!(code(doc), None);
    }
}
