//! Receipts (spec §10): what every run returns, as JSON with a published JSON Schema
//! ([`receipt_schema`]).
//!
//! - `input_sha256` is the SHA-256 of the input document's bytes as received; `output_sha256`
//!   that of the accepted output's canonical JSON ([`crate::value`]), `null` without output.
//! - `cost` is what the caller is billed: the calls' cost when the run `succeeded`, zero
//!   otherwise (`rejected_input`: nothing ran; `invalid_output`, `failed`, `error`: free for the
//!   caller). `spent` is what the model calls cost whatever the status.
//! - `receipt` is `rcpt_` and the first 32 hex digits of the SHA-256 of the receipt's own
//!   canonical JSON written with `"receipt": ""`: it is deterministic (the same input, node,
//!   attempts and output give the same id) and changes when anything recorded changes.

use crate::money::Amount;
use crate::pipeline::{Attempt, Outcome, Status};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// An amount of money as exact decimal text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cost {
    /// Decimal text, e.g. `"0.0021"`.
    pub amount: String,
    /// `null` when no binding has a price.
    pub currency: Option<String>,
}

/// One run's receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Receipt {
    /// `rcpt_…`, see the module doc.
    pub receipt: String,
    /// The package (`acme/review`).
    pub agent: String,
    pub version: String,
    pub node: String,
    pub status: Status,
    /// `null` when the run succeeded.
    pub code: Option<String>,
    pub input_sha256: String,
    pub output_sha256: Option<String>,
    pub attempts: Vec<Attempt>,
    /// What the caller is billed.
    pub cost: Cost,
    /// What the model calls cost.
    pub spent: Cost,
    /// Receipts of the delegated calls (nodes this node's body called).
    pub delegated: Vec<Receipt>,
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

impl Receipt {
    /// The receipt of a run of `node` on `input` (the document's bytes).
    pub fn new(
        agent: &str,
        version: &str,
        node: &str,
        input: &[u8],
        outcome: &Outcome,
        delegated: Vec<Receipt>,
    ) -> Receipt {
        let spent = Cost {
            amount: outcome.cost.to_string(),
            currency: outcome.currency.clone(),
        };
        let billed = if outcome.status == Status::Succeeded {
            outcome.cost
        } else {
            Amount::ZERO
        };
        let mut receipt = Receipt {
            receipt: String::new(),
            agent: agent.to_owned(),
            version: version.to_owned(),
            node: node.to_owned(),
            status: outcome.status,
            code: outcome.code.clone(),
            input_sha256: sha256_hex(input),
            output_sha256: outcome
                .output_json
                .as_deref()
                .map(|j| sha256_hex(j.as_bytes())),
            attempts: outcome.attempts.clone(),
            cost: Cost {
                amount: billed.to_string(),
                currency: outcome.currency.clone(),
            },
            spent,
            delegated,
        };
        receipt.receipt = receipt.compute_id();
        receipt
    }

    /// The receipt of a refused input: nothing ran, nothing billed.
    pub fn rejected_input(agent: &str, version: &str, node: &str, input: &[u8]) -> Receipt {
        Receipt::new(
            agent,
            version,
            node,
            input,
            &Outcome::rejected_input(),
            Vec::new(),
        )
    }

    /// `rcpt_` + 32 hex digits of the SHA-256 of this receipt with an empty id.
    pub fn compute_id(&self) -> String {
        let blank = Receipt {
            receipt: String::new(),
            ..self.clone()
        };
        let json = serde_json::to_string(&blank).unwrap_or_default();
        let hex = sha256_hex(json.as_bytes());
        format!("rcpt_{}", hex.get(..32).unwrap_or_default())
    }

    /// The receipt as one line of JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The published JSON Schema of receipts (draft 2020-12).
pub fn receipt_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Receipt)).unwrap_or_default()
}
