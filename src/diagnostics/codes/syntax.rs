//! Diagnostic codes of the `syntax` layer.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[];
