//! The codes the platform itself puts on receipts (spec §5), as one type: the runtime, the
//! gateway and the MCP server write them through [`ReservedCode`]; the checker and the
//! publishing rules read [`RESERVED_CODES`]. Nothing here depends on the rest of the runtime.

/// A code the platform itself puts on receipts (spec §5): the one vocabulary. No `errors` set
/// may declare one (E0408 in the checker, the publishing rules on the IR), and an example may
/// expect one without declaring it. The runtime, the gateway and the MCP server write these
/// codes through this type, never as string literals (`tests/it/tidy.rs` guards it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReservedCode {
    InvalidInput,
    InvalidOutput,
    RejectedInput,
    TruncatedOutput,
    UndecodableOutput,
    StaleInput,
    Timeout,
    BudgetExceeded,
    ModelUnavailable,
    Cancelled,
    InternalError,
}

impl ReservedCode {
    /// Every reserved code, in the spec's order.
    pub const ALL: [ReservedCode; 11] = [
        ReservedCode::InvalidInput,
        ReservedCode::InvalidOutput,
        ReservedCode::RejectedInput,
        ReservedCode::TruncatedOutput,
        ReservedCode::UndecodableOutput,
        ReservedCode::StaleInput,
        ReservedCode::Timeout,
        ReservedCode::BudgetExceeded,
        ReservedCode::ModelUnavailable,
        ReservedCode::Cancelled,
        ReservedCode::InternalError,
    ];

    /// The code as receipts write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ReservedCode::InvalidInput => "invalid_input",
            ReservedCode::InvalidOutput => "invalid_output",
            ReservedCode::RejectedInput => "rejected_input",
            ReservedCode::TruncatedOutput => "truncated_output",
            ReservedCode::UndecodableOutput => "undecodable_output",
            ReservedCode::StaleInput => "stale_input",
            ReservedCode::Timeout => "timeout",
            ReservedCode::BudgetExceeded => "budget_exceeded",
            ReservedCode::ModelUnavailable => "model_unavailable",
            ReservedCode::Cancelled => "cancelled",
            ReservedCode::InternalError => "internal_error",
        }
    }

    /// The code as an owned receipt field.
    pub fn to_code(self) -> String {
        self.as_str().to_owned()
    }
}

impl std::fmt::Display for ReservedCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reserved codes as words, for the checker and the publishing rules.
pub const RESERVED_CODES: [&str; ReservedCode::ALL.len()] = {
    let mut words = [""; ReservedCode::ALL.len()];
    let mut i = 0;
    while i < words.len() {
        words[i] = ReservedCode::ALL[i].as_str();
        i += 1;
    }
    words
};
