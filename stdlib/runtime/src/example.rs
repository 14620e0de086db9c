//! Example files (spec §6): `examples/<agent>/<name>.json`, what `aelc test` replays.
//!
//! ```json
//! {"input": {…}, "answers": ["…model answer…"], "output": {…}}
//! {"input": {…}, "answers": ["…"], "status": "failed", "code": "too_many_findings"}
//! ```
//!
//! `input` and `output` are kept as the exact text written ([`RawValue`]), so the typed
//! decoder still sees duplicate keys, number spellings and lone surrogates, and reports the
//! exact JSON Pointer of what is wrong. An answer is the model's text (finish reason `stop`), or
//! the object a replay line holds (spec §11) — `{"text": "…", "finish_reason": "length"}`,
//! optionally with `usage` — so that an example can show a cut-off answer or a call's cost.

use crate::model::{FinishReason, ModelAnswer, Usage};
use crate::pipeline::Status;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;

/// One example file.
#[derive(Debug)]
pub struct ExampleFile {
    /// The input document, as written.
    pub input: Box<RawValue>,
    /// The model's answers, one per call, in order.
    pub answers: Vec<ModelAnswer>,
    pub expect: Expect,
}

/// What the example expects.
#[derive(Debug)]
pub enum Expect {
    /// The run succeeds with this output (as written).
    Output(Box<RawValue>),
    /// The run ends with this status (`rejected_input`, `invalid_output`, `failed`, `error`)
    /// and, when given, this code.
    Failure {
        status: String,
        code: Option<String>,
    },
}

/// The file as serde sees it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    input: Box<RawValue>,
    #[serde(default)]
    answers: Vec<RawAnswer>,
    #[serde(default)]
    output: Option<Box<RawValue>>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    code: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawAnswer {
    Text(String),
    Line(AnswerLine),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerLine {
    text: String,
    finish_reason: FinishReason,
    #[serde(default)]
    usage: Usage,
}

/// Why a file is not an example.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExampleError(pub String);

impl fmt::Display for ExampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The statuses a failing example may expect (spec §10).
pub const FAILURE_STATUSES: [&str; 4] = [
    Status::RejectedInput.as_str(),
    Status::InvalidOutput.as_str(),
    Status::Failed.as_str(),
    Status::Error.as_str(),
];

impl ExampleFile {
    /// Reads an example file's text.
    pub fn parse(text: &str) -> Result<ExampleFile, ExampleError> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            ExampleError(format!(
                "it is not an example ({e}); an example is {{\"input\": …, \"answers\": [\"…\"], \"output\": …}}, or with \"status\" and \"code\" instead of \"output\""
            ))
        })?;
        let answers = raw
            .answers
            .into_iter()
            .map(|a| match a {
                RawAnswer::Text(text) => ModelAnswer {
                    text,
                    finish_reason: FinishReason::Stop,
                    usage: Usage::default(),
                },
                RawAnswer::Line(line) => ModelAnswer {
                    text: line.text,
                    finish_reason: line.finish_reason,
                    usage: line.usage,
                },
            })
            .collect();
        let expect = match (raw.output, raw.status) {
            (Some(output), None) => {
                if raw.code.is_some() {
                    return Err(ExampleError(
                        "it has both `output` and `code`; `code` goes with `status`".to_owned(),
                    ));
                }
                Expect::Output(output)
            }
            (None, Some(status)) => {
                if !FAILURE_STATUSES.contains(&status.as_str()) {
                    return Err(ExampleError(format!(
                        "its `status` \"{status}\" is not one of {}",
                        FAILURE_STATUSES.join(", ")
                    )));
                }
                Expect::Failure {
                    status,
                    code: raw.code,
                }
            }
            (Some(_), Some(_)) => {
                return Err(ExampleError("it has both `output` and `status`".to_owned()))
            }
            (None, None) => {
                return Err(ExampleError(
                    "it has neither `output` nor `status`".to_owned(),
                ))
            }
        };
        Ok(ExampleFile {
            input: raw.input,
            answers,
            expect,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_parse_with_both_answer_forms() {
        let e = ExampleFile::parse(
            r#"{"input": {"a": 1, "a": 2}, "answers": ["{}", {"text": "{", "finish_reason": "length"}], "output": {}}"#,
        );
        let e = e.unwrap_or_else(|err| panic!("{err}"));
        // The input is kept as written: the decoder still sees the duplicate key.
        assert_eq!(e.input.get(), r#"{"a": 1, "a": 2}"#);
        let finishes: Vec<FinishReason> = e.answers.iter().map(|a| a.finish_reason).collect();
        assert_eq!(finishes, vec![FinishReason::Stop, FinishReason::Length]);
        assert!(matches!(e.expect, Expect::Output(_)));
    }

    #[test]
    fn malformed_examples_say_why() {
        let cases = [
            (r#"{"answers": []}"#, "missing field `input`"),
            (
                r#"{"input": 1, "extra": 2, "status": "failed"}"#,
                "unknown field",
            ),
            (r#"{"input": 1}"#, "neither"),
            (r#"{"input": 1, "output": 1, "status": "failed"}"#, "both"),
            (r#"{"input": 1, "status": "broken"}"#, "is not one of"),
            (
                r#"{"input": 1, "output": 1, "code": "x"}"#,
                "`code` goes with",
            ),
        ];
        for (text, why) in cases {
            let err = ExampleFile::parse(text)
                .err()
                .map(|e| e.0)
                .unwrap_or_default();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
