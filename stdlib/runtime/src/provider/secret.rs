//! API keys: read only from the environment variable a binding names, and never printed.
//!
//! [`ApiKey`] has no `Display`, its `Debug` prints `***`, and every error message built from a
//! provider's response passes through [`ApiKey::redact`], so a server that echoes the key back
//! cannot make it appear in an error, a log or a receipt.

use super::error::ProviderError;
use std::fmt;

/// A secret that is only ever written into a request header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Reads the key from `var`; a missing, empty or non-UTF-8 variable is an error naming the
    /// variable (never its value) and saying which of the three it is.
    pub fn from_env(var: &str) -> Result<ApiKey, ProviderError> {
        let unusable = |problem| ProviderError::UnusableApiKey {
            var: var.to_string(),
            problem,
        };
        match std::env::var(var) {
            Ok(value) if !value.trim().is_empty() => Ok(ApiKey(value.trim().to_string())),
            Ok(value) if value.is_empty() => Err(unusable("is set but empty")),
            Ok(_) => Err(unusable("is set but holds only whitespace")),
            Err(std::env::VarError::NotUnicode(_)) => Err(unusable("is set but not UTF-8")),
            Err(std::env::VarError::NotPresent) => Err(ProviderError::MissingApiKey {
                var: var.to_string(),
            }),
        }
    }

    /// Wraps a key obtained elsewhere (tests, embedders with their own secret store).
    pub fn new(secret: impl Into<String>) -> ApiKey {
        ApiKey(secret.into())
    }

    /// The secret, for the one place that writes it into a header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.0, "***")
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Redacts with an optional key (bindings for local servers have none).
pub(crate) fn redact(key: Option<&ApiKey>, text: &str) -> String {
    match key {
        Some(key) => key.redact(text),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let key = ApiKey::new("sk-very-secret");
        assert_eq!(format!("{key:?}"), "***");
        assert_eq!(format!("{:?}", Some(&key)), "Some(***)");
    }

    #[test]
    fn redaction_removes_every_copy() {
        let key = ApiKey::new("sk-1");
        assert_eq!(
            key.redact("bad key sk-1, really sk-1"),
            "bad key ***, really ***"
        );
    }

    /// Issue 25, finding L: a variable set to nothing was reported as "not set".
    #[test]
    fn a_variable_set_but_empty_is_told_apart_from_an_unset_one() {
        let var = "AEL_TEST_SET_BUT_EMPTY_KEY_31337";
        std::env::set_var(var, "");
        let error = ApiKey::from_env(var).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "the environment variable `AEL_TEST_SET_BUT_EMPTY_KEY_31337` named by the \
                 binding's `api_key_env` is set but empty"
            )
        );
        std::env::set_var(var, "  ");
        let error = ApiKey::from_env(var).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.ends_with("is set but holds only whitespace")));
        std::env::remove_var(var);
    }

    #[test]
    fn a_missing_variable_is_named() {
        let error = ApiKey::from_env("AEL_TEST_SURELY_UNSET_VARIABLE_31337");
        assert_eq!(
            error,
            Err(ProviderError::MissingApiKey {
                var: "AEL_TEST_SURELY_UNSET_VARIABLE_31337".into()
            })
        );
    }
}
