//! Why the acceptance pipeline (spec §6.1) rejected an answer, at which step: what a receipt
//! records per attempt and what a repair prompt tells the model. Its own module because both
//! the pipeline (which makes rejections) and the model request (which carries them into a
//! repair) need it, and neither should need the other for it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::DecodeError;

/// Why an answer was rejected, at which step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Rejection {
    /// 1–7, the step of §6.1.
    pub step: u8,
    pub code: String,
    /// The path from the output (`output.findings[3].line`) for structural errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The JSON Pointer for structural errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The failed check's name (step 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    pub message: String,
}

impl Rejection {
    pub(crate) fn simple(step: u8, code: &str, message: impl Into<String>) -> Rejection {
        Rejection {
            step,
            code: code.to_owned(),
            path: None,
            pointer: None,
            check: None,
            message: message.into(),
        }
    }

    pub(crate) fn structural(step: u8, e: DecodeError) -> Rejection {
        Rejection {
            step,
            code: e.code.as_str().to_owned(),
            path: (!e.path.is_empty()).then_some(e.path),
            pointer: Some(e.pointer),
            check: None,
            message: e.message,
        }
    }
}
