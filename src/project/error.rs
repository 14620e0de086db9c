//! Typed errors of `ael.toml`, and their one conversion into [`Diagnostic`]s.
//!
//! The loader ([`super::load`]) reports [`ProjectError`] values holding spans and the words as
//! written; the text for people is made only in [`ProjectError::to_diagnostic`]. The codes are
//! registered in `diagnostics/codes/project.rs`.

use aelc_runtime::error::quoted;

use super::Provider;
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// A close known word for a misspelt one, and how the misspelt one is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// The known word.
    pub word: String,
    /// The quote the misspelt word is written in (`"` or `'`), `None` for a bare key: the fix
    /// writes the known word in the same quotes.
    pub quote: Option<char>,
}

/// Which rule of `owner/name` a package name breaks (`E0605`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    NoSlash,
    /// A part is empty or longer than 64 characters.
    PartLength,
    /// A part starts with something other than a lowercase letter or a digit.
    PartStart,
    /// A part holds something other than lowercase letters, digits, `-` and `_`.
    PartCharacters,
}

/// Which rule of `MAJOR.MINOR.PATCH[-pre][+build]` a version breaks (`E0606`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionProblem {
    NotThreeNumbers,
    NotNumbers,
    LeadingZero,
    /// A pre-release or build label that is not dot-separated letters, digits and `-`.
    Labels,
}

/// One problem in `ael.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProjectError {
    /// `E0600`: the TOML parser's own `message` at `span`.
    InvalidToml { span: Span, message: String },
    /// `E0603`: the file has no `[package]` table (`span`: the file's start).
    NoPackage { span: Span },
    /// `E0603`: `[table]` has no `key`; `example` is a value to add.
    Missing {
        at: Span,
        table: &'static str,
        key: String,
        example: &'static str,
    },
    /// `E0611`: the binding name `name` is not an identifier.
    BindingName { span: Span, name: String },
    /// `E0604`: a key (`name`, e.g. `api_key`) that would hold a secret.
    SecretKey { span: Span, name: String },
    /// `E0604`: `api_key_env`'s value looks like a key rather than a variable's name.
    KeyInApiKeyEnv { span: Span },
    /// `E0601`: the key `name` is not known `place` ("in `[package]`"); `known` are the keys
    /// there.
    UnknownKey {
        span: Span,
        name: String,
        place: &'static str,
        known: &'static [&'static str],
        suggestion: Option<Suggestion>,
    },
    /// `E0602`: `key` holds a `found` (TOML's type name) where `expected` is needed.
    WrongType {
        span: Span,
        key: String,
        expected: &'static str,
        found: &'static str,
    },
    /// `E0605`: `name` is not `owner/name`; `why` says which rule it breaks.
    PackageName {
        span: Span,
        name: String,
        why: NameProblem,
    },
    /// `E0606`: `version` is not a semantic version; `why` says which rule it breaks.
    Version {
        span: Span,
        version: String,
        why: VersionProblem,
    },
    /// `E0607`: `provider` is not one of [`Provider::ALL`].
    UnknownProvider {
        span: Span,
        provider: String,
        suggestion: Option<Suggestion>,
    },
    /// `E0608`: `kind` in `accepts` is not a part kind.
    UnknownPartKind {
        span: Span,
        kind: String,
        suggestion: Option<Suggestion>,
    },
    /// `W0600`: the part kind `kind` is listed twice in `accepts`.
    PartKindTwice { span: Span, kind: String },
    /// `E0609`: `base_url` is not an http(s) URL.
    NotAnUrl { span: Span, url: String },
    /// `E0609`: `api_key_env` is not an environment variable's name.
    NotAnEnvName { span: Span, name: String },
    /// `E0609`: `constrain = "word"` names no way to constrain answers.
    UnknownConstrain { span: Span, word: String },
    /// `E0609`: `constrain = "output_format"` on a binding that is not Anthropic's.
    OutputFormatNotAnthropic { span: Span },
    /// `E0609`: `constrain = "grammar"` on a binding that is not OpenAI-compatible.
    GrammarNotOpenAi { span: Span },
    /// `E0609`: `currency` is not an ISO 4217 code.
    Currency { span: Span, code: String },
    /// `E0609`: a price (`written`, as read) is not a plain decimal.
    Decimal { span: Span, written: String },
    /// `E0610`: a `[limits]` key (`key`; `written`, as read) is not a positive number.
    Limit {
        span: Span,
        key: &'static str,
        written: String,
    },
}

impl ProjectError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            ProjectError::InvalidToml { span, message } => {
                Diagnostic::new("E0600", format!("ael.toml is not valid TOML: {message}"))
                    .primary(*span, "here")
                    .help(
                        "see https://toml.io for the syntax; keys are `name = value`, tables `[name]`",
                    )
            }
            ProjectError::NoPackage { span } => {
                Diagnostic::new("E0603", "ael.toml has no `[package]` table")
                    .primary(*span, "expected `[package]` with `name` and `version`")
                    .help("add:\n[package]\nname = \"owner/name\"\nversion = \"0.1.0\"")
            }
            ProjectError::Missing {
                at,
                table,
                key,
                example,
            } => Diagnostic::new("E0603", format!("`[{table}]` has no `{key}`"))
                .primary(*at, format!("`{key}` is required here"))
                .help(format!("add `{key} = {example}`")),
            ProjectError::BindingName { span, name } => Diagnostic::new(
                "E0611",
                format!("`{}` is not a valid binding name", quoted(name)),
            )
            .primary(*span, "not an identifier")
            .help("a binding is named in AEL as `binding(\"name\")`: use letters, digits and `_`, not starting with a digit"),
            ProjectError::SecretKey { span, name } => Diagnostic::new(
                "E0604",
                format!("`{}` would put a secret in ael.toml", quoted(name)),
            )
            .primary(*span, "secrets are never written in project files")
            .help("use api_key_env = \"NAME_OF_THE_VARIABLE\" and set the key in the environment"),
            ProjectError::KeyInApiKeyEnv { span } => {
                Diagnostic::new("E0604", "`api_key_env` holds what looks like a key itself")
                    .primary(*span, "this should be the name of an environment variable")
                    .help("write the variable's name, e.g. api_key_env = \"OPENAI_API_KEY\", and never the key")
            }
            ProjectError::UnknownKey {
                span,
                name,
                place,
                known,
                suggestion,
            } => {
                let d = Diagnostic::new("E0601", format!("unknown key `{}` {place}", quoted(name)))
                    .primary(*span, "not a known key");
                with_suggestion(d, *span, suggestion.as_ref(), || {
                    format!("the keys here are: {}", known.join(", "))
                })
            }
            ProjectError::WrongType {
                span,
                key,
                expected,
                found,
            } => Diagnostic::new("E0602", format!("`{key}` must be {expected}, found {found}"))
                .primary(*span, format!("expected {expected}")),
            ProjectError::PackageName { span, name, why } => Diagnostic::new(
                "E0605",
                format!("`{}` is not a valid package name", quoted(name)),
            )
            .primary(
                *span,
                match why {
                    NameProblem::NoSlash => "expected `owner/name`",
                    NameProblem::PartLength => "each part must have 1 to 64 characters",
                    NameProblem::PartStart => "each part starts with a lowercase letter or a digit",
                    NameProblem::PartCharacters => "only lowercase letters, digits, `-` and `_`",
                },
            )
            .help("write `owner/name`, e.g. \"acme/review\": lowercase letters, digits, `-` and `_`"),
            ProjectError::Version { span, version, why } => Diagnostic::new(
                "E0606",
                format!("`{}` is not a valid version", quoted(version)),
            )
            .primary(
                *span,
                match why {
                    VersionProblem::NotThreeNumbers => "expected three numbers: MAJOR.MINOR.PATCH",
                    VersionProblem::NotNumbers => "MAJOR, MINOR and PATCH are numbers",
                    VersionProblem::LeadingZero => "numbers have no leading zeros",
                    VersionProblem::Labels => {
                        "pre-release and build labels are dot-separated letters, digits and `-`"
                    }
                },
            )
            .help("write MAJOR.MINOR.PATCH, e.g. \"0.1.0\" or \"1.0.0-beta.1\""),
            ProjectError::UnknownProvider {
                span,
                provider,
                suggestion,
            } => {
                let d = Diagnostic::new("E0607", format!("unknown provider `{}`", quoted(provider)))
                    .primary(*span, "not a provider");
                with_suggestion(d, *span, suggestion.as_ref(), || {
                    format!(
                        "the providers are {} (`openai` is any OpenAI-compatible endpoint)",
                        Provider::ALL
                            .iter()
                            .map(|p| format!("`{}`", p.as_str()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            }
            ProjectError::UnknownPartKind {
                span,
                kind,
                suggestion,
            } => {
                let d = Diagnostic::new("E0608", format!("unknown part kind `{}`", quoted(kind)))
                    .primary(*span, "not a part kind");
                with_suggestion(d, *span, suggestion.as_ref(), || {
                    let words = aelc_runtime::provider::PartKind::ALL.map(|k| k.as_str());
                    match words.split_last() {
                        Some((last, rest)) => {
                            format!("the part kinds are {} and {last}", rest.join(", "))
                        }
                        None => String::new(),
                    }
                })
            }
            ProjectError::PartKindTwice { span, kind } => {
                Diagnostic::new("W0600", format!("`{}` is listed twice", quoted(kind)))
                    .primary(*span, "already listed")
                    .help("remove the repetition")
            }
            ProjectError::NotAnUrl { span, url } => {
                Diagnostic::new("E0609", format!("`{}` is not an http(s) URL", quoted(url)))
                    .primary(*span, "expected `http://…` or `https://…`")
                    .help("write the endpoint's base URL, e.g. \"http://127.0.0.1:8080/v1\"")
            }
            ProjectError::NotAnEnvName { span, name } => Diagnostic::new(
                "E0609",
                format!("`{}` is not an environment variable name", quoted(name)),
            )
            .primary(
                *span,
                "expected letters, digits and `_`, not starting with a digit",
            )
            .help("e.g. api_key_env = \"OPENAI_API_KEY\""),
            ProjectError::UnknownConstrain { span, word } => Diagnostic::new(
                "E0609",
                format!("`constrain = \"{word}\"` is not a way to constrain answers"),
            )
            .primary(*span, "expected `grammar`, `schema`, `output_format` or `none`")
            .help("`grammar` sends the node's GBNF grammar, `schema` its JSON Schema, `output_format` the schema as Anthropic's structured outputs, `none` neither"),
            ProjectError::OutputFormatNotAnthropic { span } => Diagnostic::new(
                "E0609",
                "`constrain = \"output_format\"` is Anthropic's structured outputs",
            )
            .primary(*span, "only `provider = \"anthropic\"` bindings send `output_config.format`")
            .help("use `schema`: every provider sends its model-facing schema in its own structured-output mode"),
            ProjectError::GrammarNotOpenAi { span } => Diagnostic::new(
                "E0609",
                "`constrain = \"grammar\"` needs an OpenAI-compatible server",
            )
            .primary(*span, "only `provider = \"openai\"` bindings send a grammar")
            .help("llama.cpp's server and vLLM take the grammar; use `schema` or `none` with other providers"),
            ProjectError::Currency { span, code } => Diagnostic::new(
                "E0609",
                format!("`{}` is not a currency code", quoted(code)),
            )
            .primary(*span, "expected three capital letters")
            .help("write an ISO 4217 code, e.g. \"EUR\" or \"USD\""),
            ProjectError::Decimal { span, written } => Diagnostic::new(
                "E0609",
                format!("`{}` is not a plain decimal amount", quoted(written)),
            )
            .primary(*span, "expected digits with an optional fraction, e.g. 0.15")
            .help("prices are exact: no sign, exponent, `inf` or `nan`"),
            ProjectError::Limit { span, key, written } => Diagnostic::new(
                "E0610",
                format!("`{key} = {}` is not a usable limit", quoted(written)),
            )
            .primary(*span, "expected a positive number of bytes")
            .help(match *key {
                "max_stored_bytes_per_account" => "the default is 1073741824 (1 GiB)",
                _ => "the default is 1048576 (1 MiB)",
            }),
        }
    }
}

impl From<ProjectError> for Diagnostic {
    fn from(error: ProjectError) -> Diagnostic {
        error.to_diagnostic()
    }
}

/// "did you mean …?" with the fix that writes the known word in the misspelt one's quotes, or
/// `otherwise` as the help when no word is close.
fn with_suggestion(
    d: Diagnostic,
    span: Span,
    suggestion: Option<&Suggestion>,
    otherwise: impl FnOnce() -> String,
) -> Diagnostic {
    match suggestion {
        Some(Suggestion { word, quote }) => {
            let fixed = match quote {
                Some(q) => format!("{q}{word}{q}"),
                None => word.clone(),
            };
            d.help(format!("did you mean `{word}`?")).fix(span, fixed)
        }
        None => d.help(otherwise()),
    }
}

#[cfg(test)]
mod list_tests {
    use super::*;
    use crate::span::FileId;

    /// E0608's list is made from the runtime's part kinds; these are its words as first written.
    #[test]
    fn the_part_kinds_help_reads_as_written() {
        let d = ProjectError::UnknownPartKind {
            span: Span::new(FileId(0), 0..1),
            kind: "x".into(),
            suggestion: None,
        }
        .to_diagnostic();
        assert_eq!(
            d.help.as_deref(),
            Some("the part kinds are text, image, audio, video and file")
        );
    }
}
