//! The walk over the span-preserving TOML tree (`toml::de::DeTable`) of `ael.toml`: known keys
//! become typed fields, everything else a diagnostic at its span.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::{ProjectError, Suggestion};
use super::values;
use super::{
    BindingConfig, LimitsConfig, PackageConfig, PartKind, PriceConfig, ProjectConfig, Provider,
};
use crate::diagnostics::suggest::did_you_mean;
use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};

const TOP_KEYS: &[&str] = &["package", "bindings", "limits"];
const PACKAGE_KEYS: &[&str] = &["name", "version", "description"];
const BINDING_KEYS: &[&str] = &[
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "accepts",
    "price",
    "constrain",
];
const PRICE_KEYS: &[&str] = &["input_per_mtok", "output_per_mtok", "currency"];
const LIMITS_KEYS: &[&str] = &["max_input_bytes", "max_stored_bytes_per_account"];

/// Keys that would hold a secret if written: refused, the file may be committed.
const SECRET_KEYS: &[&str] = &[
    "api_key",
    "key",
    "token",
    "api_token",
    "secret",
    "password",
    "auth",
];

type Value<'i> = Spanned<DeValue<'i>>;

struct Cx<'t> {
    file: FileId,
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
}

/// What the file says as far as it can be read ([`super::Loaded::known`]; the configuration
/// itself when no diagnostic is an error), and every diagnostic.
pub(super) fn load(file: FileId, text: &str) -> (ProjectConfig, Vec<Diagnostic>) {
    let mut cx = Cx {
        file,
        text,
        diagnostics: Vec::new(),
    };
    let (root, errors) = DeTable::parse_recoverable(text);
    for error in &errors {
        let range = error.span().unwrap_or(0..0);
        let span = cx.span(range);
        let message = error.message().trim().to_owned();
        cx.diagnostics
            .push(ProjectError::InvalidToml { span, message }.into());
    }
    let mut known = ProjectConfig {
        package: PackageConfig {
            name: String::new(),
            version: String::new(),
            description: None,
        },
        bindings: BTreeMap::new(),
        limits: LimitsConfig::default(),
    };
    if !errors.is_empty() {
        return (known, cx.diagnostics);
    }
    let root = root.get_ref();
    cx.unknown_keys(root, TOP_KEYS, "at the top of ael.toml");
    match root.get("package") {
        Some(value) => {
            if let Some(t) = cx.table(value, "package") {
                known.package = cx.package(t, value);
            }
        }
        None => {
            cx.diagnostics.push(
                ProjectError::NoPackage {
                    span: cx.span(0..0),
                }
                .into(),
            );
        }
    }
    if let Some(value) = root.get("bindings") {
        if let Some(table) = cx.table(value, "bindings") {
            for (name, binding) in table.iter() {
                let span = cx.span(name.span());
                if !values::is_identifier(name.get_ref()) {
                    cx.diagnostics.push(
                        ProjectError::BindingName {
                            span,
                            name: name.get_ref().to_string(),
                        }
                        .into(),
                    );
                    // Known all the same (read without a word more about it): its uses are
                    // not also unknown bindings.
                    let mut quiet = Cx {
                        file,
                        text,
                        diagnostics: Vec::new(),
                    };
                    if let Some(body) = quiet.table(binding, "") {
                        let as_written = quiet.binding(body, binding, span);
                        known
                            .bindings
                            .insert(name.get_ref().to_string(), as_written);
                    }
                    continue;
                }
                let Some(body) = cx.table(binding, &format!("bindings.{}", name.get_ref())) else {
                    continue;
                };
                let as_written = cx.binding(body, binding, span);
                known
                    .bindings
                    .insert(name.get_ref().to_string(), as_written);
            }
        }
    }
    if let Some(t) = root
        .get("limits")
        .and_then(|value| cx.table(value, "limits"))
    {
        known.limits = cx.limits(t);
    }
    (known, cx.diagnostics)
}

impl Cx<'_> {
    fn span(&self, range: std::ops::Range<usize>) -> Span {
        let end = range.end.min(self.text.len());
        let start = range.start.min(end);
        Span::new(self.file, start..end)
    }

    /// `word` as a suggestion for the key or string at `span`, with the quotes it is written
    /// in (`"openai"` for `"openia"`, `'text'` for `'txt'`; none for a bare key).
    fn suggestion(&self, span: Span, word: Option<&str>) -> Option<Suggestion> {
        let written = self
            .text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("");
        let quote = written.chars().next().filter(|c| matches!(c, '"' | '\''));
        word.map(|word| Suggestion {
            word: word.to_owned(),
            quote,
        })
    }

    /// The text of a value as written (for exact decimals).
    fn written(&self, value: &Value<'_>) -> &str {
        self.text.get(value.span()).unwrap_or("").trim()
    }

    /// Where to point for a table: its header or inline braces; the file start if it has none.
    fn table_span(&self, value: &Value<'_>) -> Span {
        self.span(value.span())
    }

    fn unknown_keys(
        &mut self,
        table: &DeTable<'_>,
        known: &'static [&'static str],
        place: &'static str,
    ) {
        for key in table.keys() {
            let name: &str = key.get_ref();
            if known.contains(&name) {
                continue;
            }
            let span = self.span(key.span());
            if SECRET_KEYS.contains(&name) && known.contains(&"api_key_env") {
                self.diagnostics.push(
                    ProjectError::SecretKey {
                        span,
                        name: name.to_owned(),
                    }
                    .into(),
                );
                continue;
            }
            let suggestion = self.suggestion(span, did_you_mean(name, known.iter().copied()));
            self.diagnostics.push(
                ProjectError::UnknownKey {
                    span,
                    name: name.to_owned(),
                    place,
                    known,
                    suggestion,
                }
                .into(),
            );
        }
    }

    fn wrong_type(&mut self, value: &Value<'_>, key: &str, expected: &'static str) {
        let found = value.get_ref().type_str();
        let span = self.span(value.span());
        self.diagnostics.push(
            ProjectError::WrongType {
                span,
                key: key.to_owned(),
                expected,
                found,
            }
            .into(),
        );
    }

    fn missing(&mut self, at: Span, table: &'static str, key: &str, example: &'static str) {
        self.diagnostics.push(
            ProjectError::Missing {
                at,
                table,
                key: key.to_owned(),
                example,
            }
            .into(),
        );
    }

    fn table<'a, 'i>(&mut self, value: &'a Value<'i>, key: &str) -> Option<&'a DeTable<'i>> {
        match value.get_ref() {
            DeValue::Table(table) => Some(table),
            _ => {
                self.wrong_type(value, key, "a table");
                None
            }
        }
    }

    fn string<'a>(&mut self, table: &'a DeTable<'_>, key: &str) -> Option<(&'a str, Span)> {
        let value = table.get(key)?;
        match value.get_ref() {
            DeValue::String(s) => Some((s.as_ref(), self.span(value.span()))),
            _ => {
                self.wrong_type(value, key, "a string");
                None
            }
        }
    }

    /// `[package]` as written (what is missing empty), each problem reported.
    fn package(&mut self, table: &DeTable<'_>, value: &Value<'_>) -> PackageConfig {
        self.unknown_keys(table, PACKAGE_KEYS, "in `[package]`");
        let at = self.table_span(value);
        let name = self.string(table, "name");
        let version = self.string(table, "version");
        let description = self.string(table, "description").map(|(s, _)| s.to_owned());
        if name.is_none() && table.get("name").is_none() {
            self.missing(at, "package", "name", "\"owner/name\"");
        }
        if version.is_none() && table.get("version").is_none() {
            self.missing(at, "package", "version", "\"0.1.0\"");
        }
        let as_written = PackageConfig {
            name: name.map(|(n, _)| n.to_owned()).unwrap_or_default(),
            version: version.map(|(v, _)| v.to_owned()).unwrap_or_default(),
            description: description.clone(),
        };
        let (Some((name, name_span)), Some((version, version_span))) = (name, version) else {
            return as_written;
        };
        if let Err(why) = values::package_name(name) {
            self.diagnostics.push(
                ProjectError::PackageName {
                    span: name_span,
                    name: name.to_owned(),
                    why,
                }
                .into(),
            );
        }
        if let Err(why) = values::version(version) {
            self.diagnostics.push(
                ProjectError::Version {
                    span: version_span,
                    version: version.to_owned(),
                    why,
                }
                .into(),
            );
        }
        as_written
    }

    /// A binding as written, each problem reported (see [`super::Loaded::known`] for what
    /// stands in for an unreadable key).
    fn binding(
        &mut self,
        table: &DeTable<'_>,
        value: &Value<'_>,
        name_span: Span,
    ) -> BindingConfig {
        self.unknown_keys(table, BINDING_KEYS, "in a binding");
        let at = self.table_span(value);
        let at = if at.is_empty() { name_span } else { at };
        let provider = match self.string(table, "provider") {
            Some((text, span)) => match Provider::ALL.iter().find(|p| p.as_str() == text) {
                Some(p) => Some(*p),
                None => {
                    let close = did_you_mean(text, Provider::ALL.iter().map(|p| p.as_str()));
                    let suggestion = self.suggestion(span, close);
                    self.diagnostics.push(
                        ProjectError::UnknownProvider {
                            span,
                            provider: text.to_owned(),
                            suggestion,
                        }
                        .into(),
                    );
                    None
                }
            },
            None => {
                if table.get("provider").is_none() {
                    self.missing(at, "bindings.…", "provider", "\"openai\"");
                }
                None
            }
        };
        let model = self.string(table, "model").map(|(s, _)| s.to_owned());
        if model.is_none() && table.get("model").is_none() {
            self.missing(at, "bindings.…", "model", "\"gpt-4o-mini\"");
        }
        let base_url = match self.string(table, "base_url") {
            Some((url, span)) => {
                if !(url.starts_with("http://") || url.starts_with("https://"))
                    || url.len() <= "https://".len()
                {
                    self.diagnostics.push(
                        ProjectError::NotAnUrl {
                            span,
                            url: url.to_owned(),
                        }
                        .into(),
                    );
                }
                Some(url.to_owned())
            }
            None => None,
        };
        let api_key_env = match self.string(table, "api_key_env") {
            Some((name, span)) => {
                if values::looks_like_a_key(name) {
                    self.diagnostics
                        .push(ProjectError::KeyInApiKeyEnv { span }.into());
                } else if !values::is_env_name(name) {
                    self.diagnostics.push(
                        ProjectError::NotAnEnvName {
                            span,
                            name: name.to_owned(),
                        }
                        .into(),
                    );
                }
                Some(name.to_owned())
            }
            None => None,
        };
        let accepts = match table.get("accepts") {
            Some(value) => self.accepts(value),
            None => vec![PartKind::Text],
        };
        let price = match table.get("price") {
            Some(value) => match self.table(value, "price") {
                Some(t) => self.price(t, value).map(Some),
                None => None,
            },
            None => Some(None),
        };
        let constrain = self.constrain(table, provider);
        // An unreadable provider is `replay`: it calls nothing, and what is wrong with the
        // binding is reported above.
        BindingConfig {
            span: name_span,
            provider: provider.unwrap_or(Provider::Replay),
            model: model.unwrap_or_default(),
            base_url,
            api_key_env,
            accepts,
            price: price.flatten(),
            constrain: constrain.flatten(),
        }
    }

    /// `constrain = "grammar" | "schema" | "output_format" | "none"`; a grammar needs an
    /// OpenAI-compatible server, `output_format` Anthropic.
    fn constrain(
        &mut self,
        table: &DeTable<'_>,
        provider: Option<Provider>,
    ) -> Option<Option<String>> {
        let Some((word, span)) = self.string(table, "constrain") else {
            return Some(None);
        };
        if aelc_runtime::provider::Constrain::parse(word).is_none() {
            self.diagnostics.push(
                ProjectError::UnknownConstrain {
                    span,
                    word: word.to_owned(),
                }
                .into(),
            );
            return None;
        }
        if word == "output_format" && provider != Some(Provider::Anthropic) {
            self.diagnostics
                .push(ProjectError::OutputFormatNotAnthropic { span }.into());
            return None;
        }
        if word == "grammar" && provider != Some(Provider::OpenAi) {
            self.diagnostics
                .push(ProjectError::GrammarNotOpenAi { span }.into());
            return None;
        }
        Some(Some(word.to_owned()))
    }

    /// The known part kinds of `accepts`, each unknown one reported (`text` alone when
    /// `accepts` is not an array).
    fn accepts(&mut self, value: &Value<'_>) -> Vec<PartKind> {
        let DeValue::Array(items) = value.get_ref() else {
            self.wrong_type(value, "accepts", "an array of part kinds");
            return vec![PartKind::Text];
        };
        let mut kinds = Vec::new();
        for item in items.iter() {
            let span = self.span(item.span());
            let DeValue::String(text) = item.get_ref() else {
                self.wrong_type(item, "accepts", "an array of strings");
                continue;
            };
            let text: &str = text.as_ref();
            match PartKind::parse(text) {
                Some(kind) if kinds.contains(&kind) => {
                    self.diagnostics.push(
                        ProjectError::PartKindTwice {
                            span,
                            kind: text.to_owned(),
                        }
                        .into(),
                    );
                }
                Some(kind) => kinds.push(kind),
                None => {
                    let close = did_you_mean(text, PartKind::ALL.iter().map(|k| k.as_str()));
                    let suggestion = self.suggestion(span, close);
                    self.diagnostics.push(
                        ProjectError::UnknownPartKind {
                            span,
                            kind: text.to_owned(),
                            suggestion,
                        }
                        .into(),
                    );
                }
            }
        }
        kinds
    }

    fn price(&mut self, table: &DeTable<'_>, value: &Value<'_>) -> Option<PriceConfig> {
        self.unknown_keys(table, PRICE_KEYS, "in `price`");
        let at = self.table_span(value);
        let input = self.decimal(table, "input_per_mtok", at);
        let output = self.decimal(table, "output_per_mtok", at);
        let currency = match self.string(table, "currency") {
            Some((code, span)) => {
                if values::is_currency(code) {
                    Some(code.to_owned())
                } else {
                    self.diagnostics.push(
                        ProjectError::Currency {
                            span,
                            code: code.to_owned(),
                        }
                        .into(),
                    );
                    None
                }
            }
            None => {
                if table.get("currency").is_none() {
                    self.missing(at, "price", "currency", "\"EUR\"");
                }
                None
            }
        };
        Some(PriceConfig {
            input_per_mtok: input?,
            output_per_mtok: output?,
            currency: currency?,
        })
    }

    /// A non-negative decimal, kept exactly as written: `0.15` stays "0.15" (no float).
    fn decimal(&mut self, table: &DeTable<'_>, key: &str, at: Span) -> Option<String> {
        let Some(value) = table.get(key) else {
            self.missing(at, "price", key, "0.15");
            return None;
        };
        let written = match value.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => self.written(value).replace('_', ""),
            DeValue::String(s) => s.to_string(),
            _ => {
                self.wrong_type(value, key, "a decimal number");
                return None;
            }
        };
        match values::decimal(&written) {
            Some(exact) => Some(exact),
            None => {
                let span = self.span(value.span());
                self.diagnostics
                    .push(ProjectError::Decimal { span, written }.into());
                None
            }
        }
    }

    fn limits(&mut self, table: &DeTable<'_>) -> LimitsConfig {
        self.unknown_keys(table, LIMITS_KEYS, "in `[limits]`");
        let mut limits = LimitsConfig::default();
        if let Some(n) = self.positive_limit(table, "max_input_bytes") {
            limits.max_input_bytes = n;
        }
        limits.max_stored_bytes_per_account =
            self.positive_limit(table, "max_stored_bytes_per_account");
        limits
    }

    /// `[limits] key` when written as a positive integer; an error otherwise.
    fn positive_limit(&mut self, table: &DeTable<'_>, key: &'static str) -> Option<u64> {
        let value = table.get(key)?;
        match value.get_ref() {
            DeValue::Integer(_) => {
                let written = self.written(value).replace('_', "");
                match written.parse::<u64>() {
                    Ok(n) if n > 0 => Some(n),
                    _ => {
                        let span = self.span(value.span());
                        self.diagnostics
                            .push(ProjectError::Limit { span, key, written }.into());
                        None
                    }
                }
            }
            _ => {
                self.wrong_type(value, key, "an integer (bytes)");
                None
            }
        }
    }
}
