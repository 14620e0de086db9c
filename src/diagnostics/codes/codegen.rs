//! Diagnostic codes of the `codegen` layer.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[];
