//! The bound checks on scalars and lengths, shared by the decoder (which runs them while reading
//! bytes) and [`crate::validate::validate_value`] (which runs them on a computed value), so the
//! two say the same thing in the same words.

use crate::error::{quoted, Code};
use crate::format;
pub use crate::patterns::Patterns;
use crate::ty::{FloatKind, FloatTy, IntTy, StrTy};

/// An issue found by a check: its code and the middle of the sentence.
pub type Issue = (Code, String);

/// Whether `s` surely meets every bound of `ty` without a closer look: no pattern, no format,
/// and a byte length that puts its character count inside the bounds (a character takes 1–4
/// bytes). The decoder's fast path; [`check_str`] decides the rest.
#[inline]
pub fn str_surely_fits(s: &str, ty: &StrTy) -> bool {
    let bytes = s.len();
    ty.pattern.is_none()
        && ty.format.is_none()
        && bytes <= ty.max as usize
        && (ty.min == 0 || bytes >= 4 * ty.min as usize)
}

/// Checks text against `Str<min..=max> @pattern @format`; pushes every issue.
pub fn check_str(s: &str, ty: &StrTy, patterns: &Patterns, issues: &mut Vec<Issue>) {
    let bytes = s.len();
    // A scalar value takes 1–4 bytes, so counting is needed only near the bounds.
    let needs_count = bytes > ty.max as usize || (ty.min > 0 && bytes < 4 * ty.min as usize);
    if needs_count {
        let chars = s.chars().count();
        if chars > ty.max as usize {
            issues.push((
                Code::TooLong,
                format!(
                    "text has {chars} characters, at most {} {} allowed",
                    ty.max,
                    if ty.max == 1 { "is" } else { "are" }
                ),
            ));
        } else if chars < ty.min as usize {
            issues.push((
                Code::TooShort,
                format!(
                    "text has {chars} characters, at least {} {} required",
                    ty.min,
                    if ty.min == 1 { "is" } else { "are" }
                ),
            ));
        }
    }
    if let Some(pattern) = &ty.pattern {
        let matched = patterns.is_match(pattern, s);
        match matched {
            Some(true) => {}
            Some(false) => issues.push((
                Code::PatternMismatch,
                format!("text does not match the pattern {pattern}"),
            )),
            None => issues.push((
                Code::PatternMismatch,
                format!("the pattern {pattern} does not compile, so no text matches it"),
            )),
        }
    }
    if let Some(f) = ty.format {
        if !format::is_valid(f, s) {
            issues.push((
                Code::InvalidFormat,
                format!("text is not {}", format::describe(f)),
            ));
        }
    }
}

/// Describes an integer range as AEL writes it: `u16 in 1..=50`.
pub fn describe_int(ty: &IntTy) -> String {
    let (lo, hi) = ty.kind.range();
    let name = ty.kind.name();
    // By value: the bounds of a packed `IntTy` cannot be borrowed, as `format!` would.
    let (min, max) = (ty.min, ty.max);
    if min == lo && max == hi && !ty.max_exclusive {
        format!("{name} ({lo}..={hi})")
    } else if ty.max_exclusive {
        format!("{name} in {min}..{max}")
    } else {
        format!("{name} in {min}..={max}")
    }
}

/// Checks an integer against its range.
pub fn check_int(v: i128, ty: &IntTy) -> Option<Issue> {
    if ty.contains(v) {
        None
    } else {
        Some((
            Code::OutOfRange,
            format!("{v} is out of range for {}", describe_int(ty)),
        ))
    }
}

/// Checks a float: finite, representable in `f32` when asked, inside its bounds. `text` gives
/// the value as written for the sentence, and is only called when there is an issue (callers
/// holding only the `f64` would otherwise format every value in case of an error).
pub fn check_float<S: AsRef<str>>(v: f64, text: impl FnOnce() -> S, ty: &FloatTy) -> Option<Issue> {
    if !v.is_finite() {
        let text = text();
        let text = text.as_ref();
        return Some((
            Code::NotFinite,
            format!("{} is not a finite number", quoted(text)),
        ));
    }
    if ty.kind == FloatKind::F32 && !(v as f32).is_finite() {
        let text = text();
        let text = text.as_ref();
        return Some((
            Code::NotFinite,
            format!("{} is too large for an f32", quoted(text)),
        ));
    }
    if let Some(min) = ty.min {
        let below = if min.exclusive {
            v <= min.value
        } else {
            v < min.value
        };
        if below {
            let text = text();
            let text = text.as_ref();
            let op = if min.exclusive { ">" } else { ">=" };
            return Some((
                Code::OutOfRange,
                format!(
                    "{} is out of range: must be {op} {}",
                    quoted(text),
                    min.value
                ),
            ));
        }
    }
    if let Some(max) = ty.max {
        let above = if max.exclusive {
            v >= max.value
        } else {
            v > max.value
        };
        if above {
            let text = text();
            let text = text.as_ref();
            let op = if max.exclusive { "<" } else { "<=" };
            return Some((
                Code::OutOfRange,
                format!(
                    "{} is out of range: must be {op} {}",
                    quoted(text),
                    max.value
                ),
            ));
        }
    }
    None
}

/// The `too_many_items` sentence for a list (or map, `noun = "entries"`) with `count` > `max`.
pub fn too_many(noun: &str, count: usize, max: u32) -> Issue {
    (
        Code::TooManyItems,
        format!("has {count} {noun}, at most {max} {} allowed", are(max)),
    )
}

/// The `too_few_items` sentence.
pub fn too_few(noun: &str, count: usize, min: u32) -> Issue {
    (
        Code::TooFewItems,
        format!("has {count} {noun}, at least {min} {} required", are(min)),
    )
}

fn are(n: u32) -> &'static str {
    if n == 1 {
        "is"
    } else {
        "are"
    }
}
