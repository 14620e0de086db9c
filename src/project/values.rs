//! The shapes of `ael.toml` values: package names, versions, identifiers, decimals. Pure
//! functions over text, so each rule is tested on its own.

use super::error::{NameProblem, VersionProblem};

/// `owner/name`: each part 1–64 of lowercase ASCII letters, digits, `-`, `_`, starting with a
/// letter or digit.
pub(super) fn package_name(text: &str) -> Result<(), NameProblem> {
    let Some((owner, name)) = text.split_once('/') else {
        return Err(NameProblem::NoSlash);
    };
    for part in [owner, name] {
        if part.is_empty() || part.len() > 64 {
            return Err(NameProblem::PartLength);
        }
        if !part.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
            return Err(NameProblem::PartStart);
        }
        if !part
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(NameProblem::PartCharacters);
        }
    }
    Ok(())
}

/// `MAJOR.MINOR.PATCH[-pre][+build]`, numbers without leading zeros.
pub(super) fn version(text: &str) -> Result<(), VersionProblem> {
    let (rest, build) = match text.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (text, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    if numbers.len() != 3 {
        return Err(VersionProblem::NotThreeNumbers);
    }
    for n in numbers {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(VersionProblem::NotNumbers);
        }
        if n.len() > 1 && n.starts_with('0') {
            return Err(VersionProblem::LeadingZero);
        }
    }
    for label in [pre, build].into_iter().flatten() {
        let ok = label.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
        if !ok {
            return Err(VersionProblem::Labels);
        }
    }
    Ok(())
}

/// An AEL identifier: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_identifier(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_env_name(text: &str) -> bool {
    is_identifier(text)
}

/// Whether an `api_key_env` value is probably a key pasted by mistake: a known key prefix, or a
/// long run with no `_` that no variable name looks like.
pub(super) fn looks_like_a_key(text: &str) -> bool {
    const PREFIXES: &[&str] = &["sk-", "sk_", "xoxb-", "ghp_", "AKIA", "AIza"];
    PREFIXES.iter().any(|p| text.starts_with(p))
        || (text.len() >= 32 && !text.contains('_') && text.chars().any(|c| c.is_ascii_digit()))
}

/// Three capital letters.
pub(super) fn is_currency(text: &str) -> bool {
    text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase())
}

/// `digits[.digits]`, returned as written (the exact amount).
pub(super) fn decimal(text: &str) -> Option<String> {
    let (whole, fraction) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(whole) && fraction.is_none_or(digits)).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert!(package_name("acme/review").is_ok());
        assert!(package_name("a1/b-c_d").is_ok());
        assert!(package_name("review").is_err());
        assert!(package_name("Acme/review").is_err());
        assert!(package_name("acme/").is_err());
        assert!(package_name("acme/re/view").is_err());
        assert!(package_name("-a/b").is_err());
    }

    #[test]
    fn versions() {
        for good in [
            "0.1.0",
            "1.2.3",
            "1.0.0-beta.1",
            "1.0.0+build.5",
            "10.20.30-rc-1+x",
        ] {
            assert!(version(good).is_ok(), "{good}");
        }
        for bad in [
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.x.3",
            "1.2.3-",
            "1.2.3-a..b",
            "",
        ] {
            assert!(version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn decimals() {
        assert_eq!(decimal("0.15").as_deref(), Some("0.15"));
        assert_eq!(decimal("3").as_deref(), Some("3"));
        for bad in ["-1", "1e3", ".5", "5.", "inf", "nan", "1.2.3", ""] {
            assert_eq!(decimal(bad), None, "{bad}");
        }
    }

    #[test]
    fn keys_are_told_from_names() {
        assert!(looks_like_a_key("sk-proj-abc"));
        assert!(looks_like_a_key("AKIAIOSFODNN7EXAMPLE"));
        assert!(!looks_like_a_key("OPENAI_API_KEY"));
        assert!(is_env_name("OPENAI_API_KEY"));
        assert!(!is_env_name("1KEY"));
        assert!(is_currency("EUR"));
        assert!(!is_currency("eur"));
    }
}
