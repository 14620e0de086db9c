//! A store whose refusals go through a [`Journal`]: the gateway's store. Every read of receipts
//! sees the journaled ones too, so that moving them into the database later is invisible: a
//! receipt is found by id the moment its caller was answered, and counts (the success rate)
//! wait until every refusal recorded before them is stored.
//!
//! Everything else is the wrapped store's, unchanged.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use crate::journal::Journal;
use crate::{
    journal, Account, AgentStats, Amount, Approval, ApprovalUse, Balance, BeginRun, Begun,
    ConsoleSession, Entry, FileMeta, Mandate, MandateToken, MandateUse, Recovered, Result,
    RunDetails, RunQuery, RunRow, Settlement, Store, StoredReceipt, UnixMs,
};

/// `store`, with the receipts of refused calls journaled ([`Journaled::record_refusal`]).
pub struct Journaled {
    store: Arc<dyn Store>,
    journal: Journal,
}

impl Journaled {
    /// Wraps `store`, with this process's journal in `dir` (journals left there by processes
    /// that are gone are moved into `store` first).
    pub async fn open(store: Arc<dyn Store>, dir: &Path) -> Result<Journaled> {
        let journal = Journal::open(Arc::clone(&store), dir).await?;
        Ok(Journaled { store, journal })
    }

    /// Keeps the receipt of a call refused at the gate: nothing reserved, nothing billed.
    /// Returns once it is durable (see [`crate::journal`]).
    pub async fn record_refusal(&self, receipt: StoredReceipt) -> Result<()> {
        self.journal.record(receipt).await
    }

    /// Waits until every refusal recorded so far is in the database.
    pub async fn settle(&self) -> Result<()> {
        self.journal.settle().await
    }
}

#[async_trait]
impl Store for Journaled {
    fn backend(&self) -> &'static str {
        self.store.backend()
    }

    async fn receipt(&self, tenant: &str, id: &str) -> Result<Option<StoredReceipt>> {
        if let Some(found) = self.journal.pending(id, |r| r.tenant == tenant) {
            return Ok(Some(found));
        }
        self.store.receipt(tenant, id).await
    }

    async fn mandate_receipt(&self, mandate: &str, id: &str) -> Result<Option<StoredReceipt>> {
        if let Some(found) = self
            .journal
            .pending(id, |r| r.mandate.as_deref() == Some(mandate))
        {
            return Ok(Some(found));
        }
        self.store.mandate_receipt(mandate, id).await
    }

    async fn agent_stats(&self, agent: &str) -> Result<AgentStats> {
        self.journal.settle().await?;
        self.store.agent_stats(agent).await
    }

    // ---- the wrapped store's, unchanged ----

    async fn create_account(&self, account: &Account, key_sha256: &str) -> Result<()> {
        self.store.create_account(account, key_sha256).await
    }
    async fn ensure_account(&self, account: &Account) -> Result<()> {
        self.store.ensure_account(account).await
    }
    async fn account(&self, name: &str) -> Result<Option<Account>> {
        self.store.account(name).await
    }
    async fn account_by_key(&self, key_sha256: &str) -> Result<Option<Account>> {
        self.store.account_by_key(key_sha256).await
    }
    async fn fund(
        &self,
        account: &str,
        amount: Amount,
        currency: &str,
        at_ms: UnixMs,
    ) -> Result<String> {
        self.store.fund(account, amount, currency, at_ms).await
    }
    async fn balance(&self, account: &str) -> Result<Balance> {
        self.store.balance(account).await
    }
    async fn entries(&self, account: &str) -> Result<Vec<Entry>> {
        self.store.entries(account).await
    }
    async fn begin_run(&self, run: &BeginRun) -> Result<Begun> {
        self.store.begin_run(run).await
    }
    async fn finish_run(&self, receipt: &StoredReceipt, settlement: &Settlement) -> Result<()> {
        self.store.finish_run(receipt, settlement).await
    }
    async fn record_receipts(&self, receipts: &[StoredReceipt]) -> Result<()> {
        self.store.record_receipts(receipts).await
    }
    fn receipt_writer(&self) -> Result<Option<Box<dyn journal::ReceiptWriter>>> {
        self.store.receipt_writer()
    }
    async fn renew_lease(&self, owner: &str, until_ms: UnixMs) -> Result<()> {
        self.store.renew_lease(owner, until_ms).await
    }
    async fn release_lease(&self, owner: &str) -> Result<()> {
        self.store.release_lease(owner).await
    }
    async fn recover(&self, restarting: Option<&str>, now_ms: UnixMs) -> Result<Recovered> {
        self.store.recover(restarting, now_ms).await
    }
    async fn open_runs(&self) -> Result<u64> {
        self.store.open_runs().await
    }
    async fn create_mandate(&self, mandate: &Mandate) -> Result<()> {
        self.store.create_mandate(mandate).await
    }
    async fn mandate(&self, id: &str) -> Result<Option<Mandate>> {
        self.store.mandate(id).await
    }
    async fn mandates(&self, account: Option<&str>) -> Result<Vec<Mandate>> {
        self.store.mandates(account).await
    }
    async fn mandate_use(&self, id: &str) -> Result<MandateUse> {
        self.store.mandate_use(id).await
    }
    async fn create_approval(&self, approval: &Approval) -> Result<()> {
        self.store.create_approval(approval).await
    }
    async fn approval(&self, id: &str, now_ms: UnixMs) -> Result<Option<Approval>> {
        self.store.approval(id, now_ms).await
    }
    async fn decide_approval(&self, id: &str, approve: bool, now_ms: UnixMs) -> Result<Approval> {
        self.store.decide_approval(id, approve, now_ms).await
    }
    async fn use_approval(&self, call: &ApprovalUse) -> Result<()> {
        self.store.use_approval(call).await
    }
    async fn create_mandate_token(&self, token: &MandateToken) -> Result<()> {
        self.store.create_mandate_token(token).await
    }
    async fn mandate_token(&self, token_sha256: &str) -> Result<Option<MandateToken>> {
        self.store.mandate_token(token_sha256).await
    }
    async fn revoke_mandate_token(
        &self,
        token_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<MandateToken> {
        self.store.revoke_mandate_token(token_sha256, now_ms).await
    }
    async fn put_file(&self, file: &FileMeta, max_stored_bytes: u64) -> Result<()> {
        self.store.put_file(file, max_stored_bytes).await
    }
    async fn files(&self, tenant: &str) -> Result<Vec<FileMeta>> {
        self.store.files(tenant).await
    }
    async fn stored_bytes(&self, tenant: &str) -> Result<u64> {
        self.store.stored_bytes(tenant).await
    }
    async fn delete_file(&self, id: &str) -> Result<Option<FileMeta>> {
        self.store.delete_file(id).await
    }
    async fn file(&self, tenant: &str, id: &str) -> Result<Option<FileMeta>> {
        self.store.file(tenant, id).await
    }
    async fn create_console_session(&self, session: &ConsoleSession) -> Result<()> {
        self.store.create_console_session(session).await
    }
    async fn console_session(
        &self,
        id_sha256: &str,
        now_ms: UnixMs,
    ) -> Result<Option<ConsoleSession>> {
        self.store.console_session(id_sha256, now_ms).await
    }
    async fn end_console_session(&self, id_sha256: &str, now_ms: UnixMs) -> Result<()> {
        self.store.end_console_session(id_sha256, now_ms).await
    }
    /// Runs are rows of the database only: a journaled refusal never began a run.
    async fn run_details(&self, tenant: &str, id: &str) -> Result<Option<RunDetails>> {
        self.store.run_details(tenant, id).await
    }
    /// Runs are rows of the database only: a journaled refusal never began a run.
    async fn runs_page(&self, tenant: &str, query: &RunQuery) -> Result<Vec<RunRow>> {
        self.store.runs_page(tenant, query).await
    }
    /// Counts wait for the journal, as [`Store::agent_stats`] does.
    async fn agent_days(&self, agent: &str, since_ms: UnixMs) -> Result<Vec<(i64, AgentStats)>> {
        self.journal.settle().await?;
        self.store.agent_days(agent, since_ms).await
    }
    async fn spend_by_agent(
        &self,
        tenant: &str,
        since_ms: UnixMs,
    ) -> Result<Vec<(i64, String, Amount)>> {
        self.store.spend_by_agent(tenant, since_ms).await
    }
    async fn approvals(&self, mandate: &str, now_ms: UnixMs) -> Result<Vec<Approval>> {
        self.store.approvals(mandate, now_ms).await
    }
    async fn expired_files(&self, now_ms: UnixMs, limit: u32) -> Result<Vec<FileMeta>> {
        self.store.expired_files(now_ms, limit).await
    }
    async fn take_turn(&self, name: &str, until_ms: UnixMs, now_ms: UnixMs) -> Result<bool> {
        self.store.take_turn(name, until_ms, now_ms).await
    }
}
