//! Receipts (spec §10): what every run returns, as JSON with a published JSON Schema
//! ([`receipt_schema`]).
//!
//! - `input_sha256` is the SHA-256 of the input document's bytes as received; `output_sha256`
//!   that of the accepted output's canonical JSON ([`crate::value`]), `null` without output.
//! - `cost` is what the caller is billed: the calls' cost when the run `succeeded`, zero
//!   otherwise (`rejected_input`: nothing ran; `invalid_output`, `failed`, `error`: free for the
//!   caller). `spent` is what the model calls cost whatever the status.
//! - `reserved` is the sum of what was reserved before each model call (its worst case, spec
//!   §12), `spent` what the calls cost: `spent <= reserved`, and both cover the delegated
//!   calls below this one.
//! - `receipt` is `rcpt_` and a UUIDv7 in 32 hex digits ([`UuidIds`]): unique per run and
//!   ordered by time, never a hash of the content, so two identical runs have two receipts.
//!   The executor takes its ids from an [`IdSource`], so tests can make them predictable.

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
    /// What the model calls cost (this node's and its delegates').
    pub spent: Cost,
    /// What was reserved before the calls (the sum of their worst cases).
    pub reserved: Cost,
    /// Receipts of the delegated calls (nodes this node's body called).
    pub delegated: Vec<Receipt>,
    /// Why the run ended without an answer when no attempt says it: an input check, a stale
    /// input, `max_prompt`, a part kind, a body's error, a delegated call's failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex_digest(&Sha256::digest(bytes))
}

/// Lowercase hex of a digest (a streamed SHA-256's, `files::Incoming`).
pub(crate) fn hex_digest(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// Where receipt ids come from.
pub trait IdSource {
    /// A new `rcpt_…` id.
    fn receipt_id(&mut self) -> String;

    /// The id of the run a host asked for (not of a delegated call below it): a host that
    /// chose the run's id before it began (a gateway stores the run first) returns it here,
    /// so the receipt and its trace carry it from the start.
    fn run_receipt_id(&mut self) -> String {
        self.receipt_id()
    }
}

/// `rcpt_` and a UUIDv7 (time-ordered, 74 random bits) in 32 hex digits.
#[derive(Clone, Copy, Debug, Default)]
pub struct UuidIds;

impl IdSource for UuidIds {
    fn receipt_id(&mut self) -> String {
        // Every run and every gate refusal takes one: written into its place, not through
        // `format!` (a quarter of the instructions).
        let mut id = String::with_capacity(37);
        id.push_str("rcpt_");
        id.push_str(
            uuid::Uuid::now_v7()
                .simple()
                .encode_lower(&mut uuid::Uuid::encode_buffer()),
        );
        id
    }
}

/// `rcpt_` and a counter, for tests that compare whole receipts.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingIds(pub u64);

impl IdSource for CountingIds {
    fn receipt_id(&mut self) -> String {
        self.0 += 1;
        format!("rcpt_{:032x}", self.0)
    }
}

impl Receipt {
    /// The receipt `id` of a run of `node` on `input` (the document's bytes).
    pub fn new(
        id: String,
        agent: &str,
        version: &str,
        node: &str,
        input: &[u8],
        outcome: &Outcome,
        delegated: Vec<Receipt>,
    ) -> Receipt {
        let cost = |amount: Amount| Cost {
            amount: amount.to_string(),
            currency: outcome.currency.clone(),
        };
        let billed = if outcome.status == Status::Succeeded {
            outcome.cost
        } else {
            Amount::ZERO
        };
        Receipt {
            receipt: id,
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
            cost: cost(billed),
            spent: cost(outcome.cost),
            reserved: cost(outcome.reserved),
            delegated,
            refusal: None,
        }
    }

    /// The receipt of a refused input: nothing ran, nothing billed.
    pub fn rejected_input(
        id: String,
        agent: &str,
        version: &str,
        node: &str,
        input: &[u8],
    ) -> Receipt {
        Receipt::new(
            id,
            agent,
            version,
            node,
            input,
            &Outcome::rejected_input(),
            Vec::new(),
        )
    }

    /// How the run of this receipt ended, as its span shows it ([`crate::trace`]): ERROR
    /// when it ended `invalid_output` or `error`.
    pub fn ended(&self) -> crate::trace::Ended<'_> {
        crate::trace::Ended {
            receipt: &self.receipt,
            status: self.status.as_str(),
            code: self.code.as_deref(),
            cost: &self.cost.amount,
            spent: &self.spent.amount,
            currency: self.cost.currency.as_deref(),
            failed: matches!(self.status, Status::InvalidOutput | Status::Error),
        }
    }

    /// The receipt as one line of JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The published JSON Schema of receipts (draft 2020-12), every object's keys sorted: schemars
/// builds it in a `serde_json` map, whose order is the declaration order only where some crate
/// turned on `serde_json`'s `preserve_order`, so sorting gives the same document in every build
/// (the runtime does not turn that feature on, issue 23).
pub fn receipt_schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Receipt)).unwrap_or_default();
    schema.sort_all_objects();
    schema
}
