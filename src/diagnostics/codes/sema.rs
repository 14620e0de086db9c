//! Diagnostic codes of the `sema` layer.

use super::CodeInfo;

pub(super) static CODES: &[CodeInfo] = &[];
