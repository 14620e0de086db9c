//! The provider-facing part of an `ael.toml` binding (spec §1) and [`connect`], which turns it
//! into a [`Provider`]. Reading `ael.toml` is the driver's job; it fills a [`ProviderConfig`].

use super::error::ProviderError;
use super::request::{Part, PartKind};
use super::secret::ApiKey;

/// Which wire protocol a binding speaks (`provider = "…"`). `replay` bindings are served by the
/// pipeline's replay model, not by an HTTP provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// Chat Completions: OpenAI and every compatible server (vLLM, llama.cpp, Ollama).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
    /// The Gemini API (`generateContent`).
    Gemini,
}

impl ProviderKind {
    /// Every HTTP protocol, in the order the model-facing variants are made and listed
    /// (`model/<node>.openai.json`, `.gemini.json`, `.anthropic.json`).
    pub const ALL: [ProviderKind; 3] = [
        ProviderKind::OpenAi,
        ProviderKind::Gemini,
        ProviderKind::Anthropic,
    ];

    /// The HTTP kind of a `provider` word; the words are [`crate::program::Provider`]'s, the
    /// one table of them.
    pub fn parse(word: &str) -> Option<ProviderKind> {
        crate::program::Provider::parse(word)?.http()
    }

    /// The `provider` word of `ael.toml` that speaks this protocol.
    pub fn provider(self) -> crate::program::Provider {
        match self {
            ProviderKind::OpenAi => crate::program::Provider::OpenAi,
            ProviderKind::Anthropic => crate::program::Provider::Anthropic,
            ProviderKind::Gemini => crate::program::Provider::Gemini,
        }
    }

    /// The `provider` word (also the variant's name in file names and on the command line:
    /// `--variant openai`).
    pub fn as_str(self) -> &'static str {
        self.provider().as_str()
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }

    /// The output-token cap used when the binding sets no `max_output_tokens`: the smallest
    /// output limit among current models of that provider, so the request is never refused
    /// for asking too much.
    pub fn default_max_output_tokens(self) -> u32 {
        match self {
            ProviderKind::OpenAi => 16_384,
            ProviderKind::Anthropic => 8_192,
            ProviderKind::Gemini => 8_192,
        }
    }
}

/// How an OpenAI-compatible request names its output-token limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenLimitField {
    /// `max_tokens`: what llama.cpp, Ollama and vLLM read.
    MaxTokens,
    /// `max_completion_tokens`: what OpenAI itself wants (its reasoning models refuse
    /// `max_tokens`).
    MaxCompletionTokens,
}

impl TokenLimitField {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// How a binding constrains the model's answer (`constrain` in `ael.toml`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Constrain {
    /// The model-facing JSON Schema in the provider's structured-output mode (when
    /// [`ProviderConfig::structured_output`] is on).
    #[default]
    Schema,
    /// The node's GBNF grammar (codegen's `grammar/<node>.gbnf`), for OpenAI-compatible local
    /// servers: llama.cpp's `grammar` and vLLM's `guided_grammar` field.
    Grammar,
    /// Neither: the prompt alone asks for the format, and the pipeline checks the answer.
    None,
    /// Anthropic only: the model-facing JSON Schema as structured outputs'
    /// `output_config.format` (the answer is the message text) instead of a forced tool.
    OutputFormat,
}

impl Constrain {
    pub const WORDS: [&'static str; 4] = ["grammar", "schema", "none", "output_format"];

    pub fn parse(word: &str) -> Option<Constrain> {
        match word {
            "grammar" => Some(Constrain::Grammar),
            "schema" => Some(Constrain::Schema),
            "none" => Some(Constrain::None),
            "output_format" => Some(Constrain::OutputFormat),
            _ => None,
        }
    }
}

/// A binding as a provider needs it. `Debug` shows the variable name, never a key.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub model: String,
    /// Without a trailing `/chat/completions` (OpenAI) or `/v1/messages` (Anthropic).
    pub base_url: Option<String>,
    /// The environment variable holding the key; `None` sends no key (local servers).
    pub api_key_env: Option<String>,
    /// The part kinds the endpoint takes; text is always needed for prompts.
    pub accepts: Vec<PartKind>,
    /// Send the model-facing schema in the provider's structured-output mode.
    pub structured_output: bool,
    /// What the answer is constrained by; `Schema` unless the binding says otherwise.
    pub constrain: Constrain,
    /// Stream the answer (SSE), so `max_answer` stops a runaway answer as it arrives.
    pub stream: bool,
    /// The model's output-token limit; [`ProviderKind::default_max_output_tokens`] when unset.
    pub max_output_tokens: Option<u32>,
    /// OpenAI only; when unset, `max_completion_tokens` for the default OpenAI base URL and
    /// `max_tokens` for every other server.
    pub token_limit_field: Option<TokenLimitField>,
}

impl ProviderConfig {
    /// A text-only, streaming, structured-output binding on the provider's default endpoint.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> ProviderConfig {
        ProviderConfig {
            kind,
            model: model.into(),
            base_url: None,
            api_key_env: None,
            accepts: vec![PartKind::Text],
            structured_output: true,
            constrain: Constrain::Schema,
            stream: true,
            max_output_tokens: None,
            token_limit_field: None,
        }
    }

    /// The config of an `ael.toml` binding (as `ir.json` has it), with the defaults of
    /// [`Self::new`]; a `replay` binding is an error (no HTTP provider serves it).
    pub fn for_binding(binding: &crate::program::Binding) -> Result<ProviderConfig, ProviderError> {
        let Some(kind) = binding.provider.http() else {
            return Err(ProviderError::InvalidConfig {
                reason: format!(
                    "provider `{}` is not an HTTP provider (openai, anthropic, gemini)",
                    binding.provider.as_str()
                ),
            });
        };
        let mut config = ProviderConfig::new(kind, &binding.model);
        config.base_url = binding.base_url.clone();
        config.api_key_env = binding.api_key_env.clone();
        if !binding.accepts.is_empty() {
            config.accepts = binding.accepts.clone();
        }
        Ok(config)
    }

    /// The base URL without a trailing `/`.
    pub(crate) fn base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or(self.kind.default_base_url())
            .trim_end_matches('/')
    }

    pub(crate) fn output_token_cap(&self) -> u32 {
        self.max_output_tokens
            .unwrap_or(self.kind.default_max_output_tokens())
    }

    /// The key, read from the environment at call time (so a fallback binding whose key is
    /// missing fails on its own, when it is used).
    pub(crate) fn api_key(&self) -> Result<Option<ApiKey>, ProviderError> {
        self.api_key_env
            .as_deref()
            .map(ApiKey::from_env)
            .transpose()
    }

    /// Every part must be of a kind the binding `accepts`; checked before anything is sent.
    pub(crate) fn check_accepts(&self, parts: &[Part]) -> Result<(), ProviderError> {
        for part in parts {
            let kind = part.kind();
            if !self.accepts.contains(&kind) {
                let accepted: Vec<&str> = self.accepts.iter().map(|k| k.as_str()).collect();
                return Err(ProviderError::UnsupportedPart {
                    kind,
                    provider: self.kind.as_str(),
                    reason: format!(
                        "the binding accepts [{}]; add \"{kind}\" to its `accepts` if the model takes it",
                        accepted.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_convert_or_say_what_is_wrong() {
        let mut binding = crate::program::Binding {
            name: "primary".into(),
            provider: crate::program::Provider::OpenAi,
            model: "gpt-4o-mini".into(),
            base_url: Some("http://127.0.0.1:8080/v1/".into()),
            api_key_env: Some("OPENAI_API_KEY".into()),
            accepts: vec![PartKind::Text, PartKind::Image],
            price: None,
            constrain: None,
        };
        let config = ProviderConfig::for_binding(&binding);
        let config = config.as_ref().ok();
        assert_eq!(
            config.map(|c| c.accepts.clone()),
            Some(vec![PartKind::Text, PartKind::Image])
        );
        assert_eq!(
            config.map(|c| c.base_url()),
            Some("http://127.0.0.1:8080/v1")
        );
        binding.provider = crate::program::Provider::Replay;
        let replay = ProviderConfig::for_binding(&binding);
        assert!(replay.is_err_and(|e| e.to_string().contains("`replay`")));
    }
}
