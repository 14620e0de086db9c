//! `aelc-store`: the durable state of the platform (spec §15), behind one trait, [`Store`].
//!
//! What lives here: accounts (tenants) and their hashed API keys; the **ledger** (double-entry,
//! append-only: money moves only in balanced transfers, a reservation is a *pending* transfer
//! that is later posted or voided, TigerBeetle's model); **runs** (a reservation plus an
//! optional idempotency key, begun before the agent runs and finished in one transaction with
//! its receipt); **receipts**; **mandates** and **approvals** of the MCP server (§14); and the
//! metadata of stored files (§12.1; the bytes live in a content-addressed folder).
//!
//! Rules every implementation keeps (the shared conformance suite checks them):
//! - Every operation that moves money, finishes a run or changes an approval is one
//!   transaction, safe under concurrent callers in several processes.
//! - A tenant's balance always equals the sum of its entries; `available` never goes below zero.
//! - A receipt is stored in the same transaction that posts or voids its run's reservation, so a
//!   process killed at any moment leaves either an open run (voided by [`Store::recover`] once
//!   its owner's lease has ended, or when its owner starts again) or a finished one, never a
//!   charge without a receipt. A process's runs are never voided while its lease lives.
//! - Ids given out by callers (receipt ids, approval ids) are stored as given.
//!
//! Amounts are the runtime's exact [`Amount`]; a backend stores them as integers of
//! [`LEDGER_SCALE`] (10⁻⁹ of a unit) and refuses an amount finer than that
//! ([`StoreError::Precision`]), so nothing is ever rounded.

use aelc_runtime::money::Amount;
pub use aelc_runtime::pipeline::Status;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Decimals the ledger keeps: amounts are stored as integer nano-units.
pub const LEDGER_SCALE: u32 = 9;

/// Milliseconds since the Unix epoch (the store's only time type; the caller's clock).
pub type UnixMs = i64;

/// The longest account name: a DNS label's length, so an owner fits a host name and a path.
pub const MAX_ACCOUNT_NAME: usize = 63;

/// Whether `name` can name an account: `[a-z0-9][a-z0-9_-]*`, at most [`MAX_ACCOUNT_NAME`]
/// bytes (the owner part of an agent's name). The one rule: the store refuses any other name,
/// and the command line and the gateway ask this before they reach it. It also keeps the
/// ledger's own accounts (`@funding`, `NAME@held`) out of the tenants' names.
pub fn valid_account_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.len() <= MAX_ACCOUNT_NAME
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// A tenant: who calls agents, who is paid for them, whose money a mandate spends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// Unique, [`valid_account_name`] (the owner part of `acme/review`).
    pub name: String,
    /// The one currency of its balance (`EUR` unless set).
    pub currency: String,
    pub created_ms: UnixMs,
}

/// An account's money.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balance {
    /// What the account can spend now.
    pub available: Amount,
    /// What open reservations hold.
    pub reserved: Amount,
}

/// One side of a transfer as the account sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub transfer: String,
    pub account: String,
    /// Money in (`true`) or out.
    pub credit: bool,
    pub amount: Amount,
    /// `fund` (money from outside), `reserve` (a run's hold), `post` (a held price paid to
    /// the agent's owner, the rest given back) or `void` (a hold given back whole).
    pub kind: String,
    pub at_ms: UnixMs,
}

/// What a caller asks before an agent runs: reserve its worst case, remember its idempotency
/// key, and (through a mandate) count it against the mandate's budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeginRun {
    /// A new id, chosen by the caller (the receipt id the run will get).
    pub run: String,
    pub tenant: String,
    /// `owner/name` and version of the agent.
    pub agent: String,
    pub version: String,
    /// SHA-256 of the input document as received (what an idempotency key is bound to).
    pub input_sha256: String,
    /// What to hold on the tenant's balance (the agent's price); zero holds nothing.
    pub reserve: Amount,
    pub currency: String,
    pub idempotency_key: Option<String>,
    /// `ACCOUNT/NAME` of the mandate the call is made under (the MCP server), if any.
    pub mandate: Option<String>,
    /// The instance name of the process running it ([`Store::renew_lease`]): only that
    /// process, or any once its lease has run out, may void the run as abandoned.
    pub owner: String,
    pub at_ms: UnixMs,
    /// The input document as received, kept for its owner to see ([`Store::run_details`]);
    /// `None` when the operator keeps only its SHA-256 (`aelc serve --no-keep-inputs`).
    pub input_json: Option<String>,
    /// The W3C trace id (32 hex digits) its spans went to, when traces are exported.
    pub trace_id: Option<String>,
}

/// The answer to [`Store::begin_run`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Begun {
    /// The reservation is held; run the agent, then [`Store::finish_run`].
    Started,
    /// The idempotency key was used before with the same input and that run finished: its
    /// status and receipt (JSON as stored). Nothing was reserved.
    Replayed { status: Status, receipt: String },
    /// The same key with the same input is still running elsewhere.
    InProgress,
    /// The same key was used with another input.
    KeyConflict,
    /// The balance cannot cover the reservation.
    Insufficient { available: Amount, needed: Amount },
    /// The mandate's budget cannot cover it (`left` = budget − spent − reserved).
    OverBudget { left: Amount, needed: Amount },
}

/// How a run's reservation ends, with its receipt, in one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// `succeeded`: `amount` (≤ the reservation) goes to `payee`; the rest back to the tenant.
    Charge { payee: String, amount: Amount },
    /// Anything else: the whole reservation goes back to the tenant.
    Void,
}

/// A receipt as stored: the indexed fields and the receipt's JSON (also one line of the
/// refusal journal, [`journal`], as JSON with these field names).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredReceipt {
    /// `rcpt_…`.
    pub id: String,
    pub tenant: String,
    pub agent: String,
    pub version: String,
    /// How the run ended (stored as its word, [`Status::as_str`]).
    pub status: Status,
    pub code: Option<String>,
    pub mandate: Option<String>,
    /// The whole receipt (with its delegated tree) as JSON text (stored compressed:
    /// `document.rs`).
    pub json: String,
    pub at_ms: UnixMs,
}

/// Counts of an agent's receipts by status (spec §13's success rate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentStats {
    pub succeeded: u64,
    pub invalid_output: u64,
    pub error: u64,
    pub failed: u64,
    pub rejected_input: u64,
}

impl AgentStats {
    /// Counts `n` more receipts of `status`.
    pub fn add(&mut self, status: Status, n: u64) {
        let count = match status {
            Status::Succeeded => &mut self.succeeded,
            Status::InvalidOutput => &mut self.invalid_output,
            Status::Error => &mut self.error,
            Status::Failed => &mut self.failed,
            Status::RejectedInput => &mut self.rejected_input,
        };
        *count += n;
    }

    /// succeeded / (succeeded + invalid_output + error); `None` before any counted run.
    pub fn success_rate(&self) -> Option<f64> {
        let counted = self.succeeded + self.invalid_output + self.error;
        (counted > 0).then(|| self.succeeded as f64 / counted as f64)
    }
}

/// What [`Store::recover`] did at start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Runs begun and never finished (their process died): reservations voided, keys freed.
    pub voided_runs: u64,
}

/// A human's grant (spec §14): what may be hired on an account's money.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mandate {
    /// The paying account.
    pub account: String,
    /// The mandate's name within the account (`sandbox` of `demo/sandbox`).
    pub name: String,
    pub budget: Amount,
    pub currency: String,
    /// A call whose worst case is above this needs a human's approval.
    pub threshold: Amount,
    /// Agent globs (`extraction.*` matches a capability, `acme/*` an agent name).
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub expires_ms: Option<UnixMs>,
    pub created_ms: UnixMs,
}

impl Mandate {
    /// `ACCOUNT/NAME`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.account, self.name)
    }
}

/// What a mandate has spent and holds now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MandateUse {
    pub spent: Amount,
    pub reserved: Amount,
}

/// An approval's state (`check_approval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    Pending,
    Approved,
    Rejected,
    Used,
    Expired,
}

impl ApprovalState {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
            ApprovalState::Used => "used",
            ApprovalState::Expired => "expired",
        }
    }
}

/// A call put to a human, bound to exactly one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// `appr_…`, chosen by the caller.
    pub id: String,
    /// `ACCOUNT/NAME`.
    pub mandate: String,
    pub agent: String,
    pub version: String,
    /// SHA-256 of the input's canonical JSON (RFC 8785).
    pub input_sha256: String,
    /// The input itself, shown to the human.
    pub input_json: String,
    pub worst_case: Amount,
    pub currency: String,
    /// The state as stored; [`Store::approval`] reports `expired` for a pending or approved
    /// approval past `expires_ms`.
    pub state: ApprovalState,
    pub created_ms: UnixMs,
    pub expires_ms: UnixMs,
}

/// The exact call an approval must match to be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalUse {
    pub id: String,
    pub mandate: String,
    pub agent: String,
    pub version: String,
    pub input_sha256: String,
    pub at_ms: UnixMs,
}

/// A bearer token of MCP over HTTP (`/mcp`), bound to exactly one mandate (`aelc mandate
/// token`). The token itself is shown once and never stored: only its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MandateToken {
    /// SHA-256 of the token, hex.
    pub token_sha256: String,
    /// `ACCOUNT/NAME`.
    pub mandate: String,
    pub created_ms: UnixMs,
    pub expires_ms: Option<UnixMs>,
    /// Set once by [`Store::revoke_mandate_token`].
    pub revoked_ms: Option<UnixMs>,
}

impl MandateToken {
    /// Why the token cannot be used at `now_ms`, if it cannot.
    pub fn refusal(&self, now_ms: UnixMs) -> Option<&'static str> {
        if self.revoked_ms.is_some() {
            Some("the token was revoked")
        } else if self.expires_ms.is_some_and(|at| now_ms >= at) {
            Some("the token expired")
        } else {
            None
        }
    }
}

/// The metadata of a stored file (the bytes are content-addressed elsewhere).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// The reference's id (`holon://files/<id>`).
    pub id: String,
    pub tenant: String,
    pub sha256: String,
    pub size: u64,
    /// MIME type (`image/png`).
    pub media_type: String,
    pub created_ms: UnixMs,
    pub expires_ms: Option<UnixMs>,
    /// Where the file came from (a file name, a URL, another reference it was prepared from).
    pub source: Option<String>,
}

/// A browser signed in to the console: the account it acts for and its CSRF token. The cookie
/// holds a random secret; the store keeps only its SHA-256 (`id_sha256`), as for API keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleSession {
    pub id_sha256: String,
    pub account: String,
    /// Sent back with every state-changing form of the session, compared exactly.
    pub csrf: String,
    pub created_ms: UnixMs,
    pub expires_ms: UnixMs,
}

/// Which of an account's runs to list ([`Store::runs_page`]), newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Only this agent's (`owner/name`).
    pub agent: Option<String>,
    /// Only runs that ended so.
    pub status: Option<Status>,
    /// Only runs older than this run id (the cursor of the next page).
    pub before: Option<String>,
    /// Only runs begun at or after this time.
    pub since_ms: Option<UnixMs>,
    /// At most this many rows.
    pub limit: u32,
}

/// One run in a list: a call that passed the gate (refusals have receipts but no run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRow {
    /// The run's id, which is its receipt's (`rcpt_…`).
    pub id: String,
    pub agent: String,
    pub version: String,
    /// `None` while the run is open (its receipt not yet stored), or after it was voided.
    pub status: Option<Status>,
    pub code: Option<String>,
    pub mandate: Option<String>,
    /// What was held for it.
    pub reserved: Amount,
    pub currency: String,
    /// `open`, `finished` or `voided`.
    pub state: String,
    pub created_ms: UnixMs,
    pub finished_ms: Option<UnixMs>,
}

/// What a run's page shows beside its receipt ([`Store::run_details`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDetails {
    /// The input document as received; `None` when it was not kept.
    pub input_json: Option<String>,
    /// The trace its spans went to; `None` when traces were off or it was not sampled.
    pub trace_id: Option<String>,
}

/// A store failure, for the caller to map to its own status.
#[derive(Clone, Debug)]
pub enum StoreError {
    /// The named thing does not exist (an account, a run, a mandate, an approval).
    NotFound(String),
    /// The thing exists already (an account name, a mandate, a file id).
    Exists(String),
    /// An amount finer than the ledger's 10⁻⁹, or in another currency than the account's.
    Precision(String),
    Currency {
        expected: String,
        got: String,
    },
    /// Not enough available money (a transfer other than a run's reservation).
    Insufficient {
        available: Amount,
        needed: Amount,
    },
    /// An approval that cannot be used for this call, with the reason (`expired`, `used`,
    /// `rejected`, `pending`, `bound to another input`, …).
    Approval(String),
    /// A file would take its tenant past its quota: `stored` bytes are recorded already,
    /// `size` more were asked for, `limit` is the most.
    Quota {
        stored: u64,
        size: u64,
        limit: u64,
    },
    /// The database failed (connection lost, constraint broken, disk full): the message.
    Backend(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotFound(what) => write!(f, "{what} does not exist"),
            StoreError::Exists(what) => write!(f, "{what} exists already"),
            StoreError::Precision(what) => write!(
                f,
                "{what} has more than {LEDGER_SCALE} decimals; the ledger keeps {LEDGER_SCALE}"
            ),
            StoreError::Currency { expected, got } => {
                write!(
                    f,
                    "the amount is in {got}, the account's currency is {expected}"
                )
            }
            StoreError::Insufficient { available, needed } => {
                write!(f, "{needed} needed, {available} available")
            }
            StoreError::Approval(why) => write!(f, "approval refused: {why}"),
            StoreError::Quota {
                stored,
                size,
                limit,
            } => write!(
                f,
                "the account stores {stored} bytes of files; {size} more would pass its quota \
                 of {limit} bytes"
            ),
            StoreError::Backend(why) => write!(f, "store: {why}"),
        }
    }
}

impl std::error::Error for StoreError {}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The platform's durable state (see the module doc). Implemented for SQLite and PostgreSQL.
#[async_trait]
pub trait Store: Send + Sync {
    /// Which backend this is (`sqlite`, `postgres`), for logs.
    fn backend(&self) -> &'static str;

    // ---- accounts ----

    /// Creates an account with the SHA-256 hex of its API key (the key itself is never stored).
    async fn create_account(&self, account: &Account, key_sha256: &str) -> Result<()>;
    /// Creates the account when missing (an agent's owner, `aelc serve` at start); no key.
    async fn ensure_account(&self, account: &Account) -> Result<()>;
    async fn account(&self, name: &str) -> Result<Option<Account>>;
    /// The account whose key hashes to `key_sha256`.
    async fn account_by_key(&self, key_sha256: &str) -> Result<Option<Account>>;

    // ---- ledger ----

    /// Credits `amount` to `account` from outside (a balanced transfer from the platform's
    /// funding account). Returns the transfer id.
    async fn fund(
        &self,
        account: &str,
        amount: Amount,
        currency: &str,
        at_ms: UnixMs,
    ) -> Result<String>;
    async fn balance(&self, account: &str) -> Result<Balance>;
    /// Every entry of `account`, oldest first (the balance is their sum).
    async fn entries(&self, account: &str) -> Result<Vec<Entry>>;

    // ---- runs and receipts ----

    /// In one transaction: the idempotency key (when given) is looked up and claimed, the
    /// mandate's budget (when given) checked, and `reserve` moved from the tenant's available
    /// money to a pending transfer of the run. Only [`Begun::Started`] holds anything.
    async fn begin_run(&self, run: &BeginRun) -> Result<Begun>;
    /// In one transaction: the receipt stored, the run's reservation posted or voided, its
    /// idempotency key bound to the receipt, the mandate's spending updated. `receipt.id` is
    /// the run's id.
    async fn finish_run(&self, receipt: &StoredReceipt, settlement: &Settlement) -> Result<()>;
    /// Stores the receipts of calls that never began a run (refused at the gate): nothing
    /// reserved, nothing billed. All of them or none, in one transaction, so a caller can
    /// commit many at once (the refusal journal's mover, [`journal`]).
    async fn record_receipts(&self, receipts: &[StoredReceipt]) -> Result<()>;
    /// A synchronous writer of receipt groups for a thread of its own, where the backend has a
    /// faster way than [`Store::record_receipts`] from an async task (SQLite); `None` where it
    /// has not. The refusal journal's mover ([`journal`]) uses it.
    fn receipt_writer(&self) -> Result<Option<Box<dyn journal::ReceiptWriter>>> {
        Ok(None)
    }
    /// A receipt of `tenant` (`None` for another tenant's: not found, never forbidden).
    async fn receipt(&self, tenant: &str, id: &str) -> Result<Option<StoredReceipt>>;
    /// Receipts made under a mandate (its `get_receipt` sees only these).
    async fn mandate_receipt(&self, mandate: &str, id: &str) -> Result<Option<StoredReceipt>>;
    async fn agent_stats(&self, agent: &str) -> Result<AgentStats>;
    /// Holds (or extends) `owner`'s lease until `until_ms`: while it lasts, no other process
    /// voids `owner`'s open runs. A process renews it well before it runs out.
    async fn renew_lease(&self, owner: &str, until_ms: UnixMs) -> Result<()>;
    /// Gives `owner`'s lease up (a graceful stop, after its runs finished).
    async fn release_lease(&self, owner: &str) -> Result<()>;
    /// Voids the runs begun and never finished by a process that died, and frees their
    /// idempotency keys: the open runs of every owner whose lease ended before `now_ms` or who
    /// holds none, and, when a process starts again under its old name (`restarting`), the
    /// open runs of its earlier life. Runs of owners with a live lease are left alone.
    async fn recover(&self, restarting: Option<&str>, now_ms: UnixMs) -> Result<Recovered>;
    /// Runs begun and not finished, for tests and metrics.
    async fn open_runs(&self) -> Result<u64>;

    // ---- mandates and approvals ----

    async fn create_mandate(&self, mandate: &Mandate) -> Result<()>;
    /// By `ACCOUNT/NAME`.
    async fn mandate(&self, id: &str) -> Result<Option<Mandate>>;
    async fn mandates(&self, account: Option<&str>) -> Result<Vec<Mandate>>;
    async fn mandate_use(&self, id: &str) -> Result<MandateUse>;
    async fn create_approval(&self, approval: &Approval) -> Result<()>;
    /// The approval with its state as of `now_ms` (expired once past its expiry).
    async fn approval(&self, id: &str, now_ms: UnixMs) -> Result<Option<Approval>>;
    /// A human's decision: `pending` → `approved` or `rejected`; anything else is refused
    /// ([`StoreError::Approval`] with the current state).
    async fn decide_approval(&self, id: &str, approve: bool, now_ms: UnixMs) -> Result<Approval>;
    /// Marks an approved approval used for exactly this call, once: another mandate, agent
    /// version or input, a second use, a rejected, pending or expired approval are refused
    /// with the reason.
    async fn use_approval(&self, call: &ApprovalUse) -> Result<()>;
    /// Stores a new token of an existing mandate ([`StoreError::NotFound`] otherwise).
    async fn create_mandate_token(&self, token: &MandateToken) -> Result<()>;
    /// The token whose SHA-256 is `token_sha256`, revoked or expired ones included.
    async fn mandate_token(&self, token_sha256: &str) -> Result<Option<MandateToken>>;
    /// Revokes a token at `now_ms` (a second revocation keeps the first time) and returns it.
    async fn revoke_mandate_token(
        &self,
        token_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<MandateToken>;

    // ---- files ----

    /// Records a stored file, in one transaction with the check of its tenant's quota: the
    /// sizes of the tenant's files, this one included, stay within `max_stored_bytes`, or
    /// nothing is recorded ([`StoreError::Quota`]). Concurrent uploads of one tenant are
    /// counted one after another, so together they cannot pass the quota either.
    async fn put_file(&self, file: &FileMeta, max_stored_bytes: u64) -> Result<()>;
    /// A file of `tenant` (`None` for another tenant's).
    async fn file(&self, tenant: &str, id: &str) -> Result<Option<FileMeta>>;
    /// The files of `tenant`, oldest first.
    async fn files(&self, tenant: &str) -> Result<Vec<FileMeta>>;
    /// The bytes `tenant`'s files take (what its quota counts).
    async fn stored_bytes(&self, tenant: &str) -> Result<u64>;
    /// Removes the record of file `id` (any tenant's: the operator's command) and returns it;
    /// `None` when there is none. Its bytes are the file store's to remove.
    async fn delete_file(&self, id: &str) -> Result<Option<FileMeta>>;

    // ---- the console ----

    /// Keeps a new console session.
    async fn create_console_session(&self, session: &ConsoleSession) -> Result<()>;
    /// The session whose secret hashes to `id_sha256`, if it has not expired by `now_ms`.
    async fn console_session(
        &self,
        id_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<Option<ConsoleSession>>;
    /// Ends a session (signing out), and every session expired by `now_ms`.
    async fn end_console_session(&self, id_sha256: &str, now_ms: UnixMs) -> Result<()>;
    /// What was kept of `tenant`'s run `id` beside its receipt: its input and trace id
    /// (`None` for another tenant's run or an unknown id, as [`Store::receipt`]).
    async fn run_details(&self, tenant: &str, id: &str) -> Result<Option<RunDetails>>;
    /// A page of `tenant`'s runs, newest first.
    async fn runs_page(&self, tenant: &str, query: &RunQuery) -> Result<Vec<RunRow>>;
    /// An agent's receipts by status for each day (days since the epoch, UTC) from
    /// `since_ms` on, oldest first: the console's runs-per-day and success-rate plots.
    async fn agent_days(&self, agent: &str, since_ms: UnixMs) -> Result<Vec<(i64, AgentStats)>>;
    /// What `tenant` paid for runs, per agent and day (days since the epoch, UTC), for the
    /// money posted from `since_ms` on; by day, then agent.
    async fn spend_by_agent(
        &self,
        tenant: &str,
        since_ms: UnixMs,
    ) -> Result<Vec<(i64, String, Amount)>>;
    /// The approvals asked under a mandate (`ACCOUNT/NAME`), newest first, with their state
    /// at `now_ms` (as [`Store::approval`] reports it).
    async fn approvals(&self, mandate: &str, now_ms: UnixMs) -> Result<Vec<Approval>>;

    /// At most `limit` files of any tenant whose expiry is at or before `now_ms`, soonest
    /// expired first: what a sweep deletes ([`Store::delete_file`], then the bytes).
    async fn expired_files(&self, now_ms: UnixMs, limit: u32) -> Result<Vec<FileMeta>>;

    // ---- turns ----

    /// Takes the turn `name` until `until_ms` when no one holds it at `now_ms`, and says
    /// whether it was taken: a job that any process may run but only one at a time (the
    /// sweep of expired files) runs in the process that took its turn. A turn is a lease
    /// ([`Store::renew_lease`]) that no run is stored under; it is never renewed by another
    /// while it lasts, and lapses by itself when its holder dies.
    async fn take_turn(&self, name: &str, until_ms: UnixMs, now_ms: UnixMs) -> Result<bool>;
}

/// Converts an amount to the ledger's integer nano-units, refusing finer amounts.
pub fn to_nano(amount: Amount, what: &str) -> Result<i64> {
    let unit = 10u128.pow(18 - LEDGER_SCALE);
    if !amount.0.is_multiple_of(unit) {
        return Err(StoreError::Precision(what.to_owned()));
    }
    i64::try_from(amount.0 / unit).map_err(|_| StoreError::Precision(format!("{what} (too large)")))
}

/// The amount of `nano` ledger units (negative values are a broken invariant: zero).
pub fn from_nano(nano: i64) -> Amount {
    Amount(u128::try_from(nano).unwrap_or(0) * 10u128.pow(18 - LEDGER_SCALE))
}

// The implementation: [`open`] a URL (`sqlite:PATH`, a path, `postgres://…`). In its ledger a
// tenant `NAME` is two ledger accounts, `NAME` (available) and `NAME@held` ([`held_account`]);
// [`Store::entries`] returns both, and each one's entries sum to its part of the [`Balance`].
mod document;
pub mod journal;
pub mod journaled;
mod sql;
pub use sql::{held_account, open, Dialect, SqlStore, FUNDING, MAX_RUNS_PAGE};
