//! How the pipeline reaches a model: the [`Model`] trait, its request and answer, and the
//! [`ReplayModel`] that answers from a JSON Lines file (spec §11). Real HTTP providers implement
//! the same trait elsewhere.

use crate::rejection::Rejection;
use crate::reserved::ReservedCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// What one model call asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelRequest {
    /// The binding this call goes to (`primary_model`, or a fallback's).
    pub binding: String,
    /// The prompt as rendered for the node's inputs.
    pub prompt: String,
    /// For `repair`: the rejection reasons of the previous attempt only (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<Rejection>,
    /// Step 1's limit, from which providers derive their token limit.
    pub max_answer: u64,
    /// 1 for the first call of a run, then 2, 3, …
    pub attempt: u32,
    /// The node making the call (in a delegated call, the callee, not the run's first node).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node: String,
    /// What a live provider needs besides the prompt, for this node: the input builder's parts,
    /// the model-facing output schemas, the timeout and temperature. `None`: the provider's own
    /// defaults (a replay needs none of it).
    #[serde(skip)]
    #[schemars(skip)]
    pub call: Option<std::sync::Arc<crate::provider::NodeCall>>,
}

impl ModelRequest {
    /// The prompt with the repair reasons appended (what a text-only provider sends).
    pub fn full_prompt(&self) -> String {
        if self.repair.is_empty() {
            return self.prompt.clone();
        }
        let mut out = self.prompt.clone();
        out.push_str("\n\nYour previous answer was rejected:\n");
        for r in &self.repair {
            out.push_str("- ");
            out.push_str(&r.message);
            out.push('\n');
        }
        out.push_str("Answer again with one JSON value that fixes these problems.\n");
        out
    }
}

/// Why the model stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The answer is complete.
    Stop,
    /// The provider cut it off (length / max tokens).
    Length,
    /// A stream ended without its end marker.
    Incomplete,
}

/// Tokens a call used (for cost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
}

/// A model's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelAnswer {
    pub text: String,
    pub finish_reason: FinishReason,
    pub usage: Usage,
}

/// Why a call produced no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The endpoint could not be reached or refused (`model_unavailable`).
    Unavailable(String),
    /// The call took longer than the node's `timeout` (`timeout`).
    Timeout,
}

impl ModelError {
    /// The reserved failure code.
    pub fn code(&self) -> &'static str {
        match self {
            ModelError::Unavailable(_) => ReservedCode::ModelUnavailable.as_str(),
            ModelError::Timeout => ReservedCode::Timeout.as_str(),
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Unavailable(why) => write!(f, "the model is unavailable: {why}"),
            ModelError::Timeout => f.write_str("the model call timed out"),
        }
    }
}

/// A model endpoint (or a router over several bindings: the request names its binding).
pub trait Model {
    fn call(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError>;
}

/// One line of a replay file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplayLine {
    text: String,
    finish_reason: FinishReason,
    #[serde(default)]
    usage: Usage,
}

/// A malformed replay file: the 1-based line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Answers each call with the next line of a JSON Lines file:
/// `{"text": "…", "finish_reason": "stop" | "length"}` (optionally `"usage": {"input_tokens":
/// …, "output_tokens": …}`). Blank lines are skipped. It records every request it receives,
/// so tests can look at what a repair sent.
#[derive(Clone, Debug, Default)]
pub struct ReplayModel {
    answers: VecDeque<ModelAnswer>,
    pub requests: Vec<ModelRequest>,
}

impl ReplayModel {
    pub fn from_jsonl(text: &str) -> Result<ReplayModel, ReplayError> {
        let mut answers = VecDeque::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: ReplayLine = serde_json::from_str(line).map_err(|e| ReplayError {
                line: i + 1,
                message: format!(
                    "{e}; each line is {{\"text\": \"…\", \"finish_reason\": \"stop\" | \"length\"}}"
                ),
            })?;
            answers.push_back(ModelAnswer {
                text: parsed.text,
                finish_reason: parsed.finish_reason,
                usage: parsed.usage,
            });
        }
        Ok(ReplayModel {
            answers,
            requests: Vec::new(),
        })
    }

    /// Answers given directly (tests).
    pub fn new(answers: impl IntoIterator<Item = ModelAnswer>) -> ReplayModel {
        ReplayModel {
            answers: answers.into_iter().collect(),
            requests: Vec::new(),
        }
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        self.answers.len()
    }
}

impl Model for ReplayModel {
    fn call(&mut self, request: &ModelRequest) -> Result<ModelAnswer, ModelError> {
        self.requests.push(request.clone());
        self.answers.pop_front().ok_or_else(|| {
            ModelError::Unavailable(format!(
                "the replay file has no answer for call {}",
                self.requests.len()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_lines_parse_or_say_which_line_is_wrong() {
        let ok = ReplayModel::from_jsonl(
            "{\"text\": \"{}\", \"finish_reason\": \"stop\"}\n\n{\"text\": \"x\", \"finish_reason\": \"length\"}\n",
        );
        assert_eq!(ok.map(|m| m.remaining()), Ok(2));
        let bad = ReplayModel::from_jsonl(
            "{\"text\": \"{}\", \"finish_reason\": \"stop\"}\n{\"text\": 1}",
        );
        assert_eq!(bad.as_ref().err().map(|e| e.line), Some(2));
        let unknown = ReplayModel::from_jsonl("{\"text\": \"\", \"finish_reason\": \"done\"}");
        assert!(unknown
            .err()
            .is_some_and(|e| e.message.contains("unknown variant")));
    }
}
