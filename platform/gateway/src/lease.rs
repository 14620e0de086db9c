//! The process's lease on the runs it begins, so that several gateways (and MCP servers, and
//! `aelc mandate approve`) can share one store.
//!
//! Every run is stored with its owner, this process's instance name ([`Limits::instance`]).
//! While the process lives it renews a lease in the store every third of [`Limits::lease`];
//! a run whose owner's lease ran out was abandoned by a process that died, and any process's
//! next sweep voids it (its reservation goes back, its idempotency key is freed). So a process
//! starting never voids what another live process has in flight, and a killed one's runs are
//! released within one lease. A process started again under its old name voids its earlier
//! life's runs at once (`aelc serve`'s default name is its host and port, so a gateway
//! restarted in place does not wait for its own lease).
//!
//! A process that cannot renew for a whole lease (its store unreachable) may see its runs voided
//! by another: their finish is then refused by the store, the caller is answered
//! `503 store_unavailable`, and nothing is billed — the store's one-finish rule keeps the money
//! right whichever process wins.
//!
//! The same keeper sweeps expired files ([`crate::files::sweep`]) on each renewal, when it
//! gets the store's turn to: one sweeper at a time among the processes sharing the store.

use std::sync::Arc;
use std::time::Duration;

use aelc_runtime::files::Files;
use aelc_store::{Recovered, Store};

use crate::{now_ms, Limits};

/// This process's lease: kept alive by a background task until it is released or dropped.
pub struct Lease {
    /// The instance name runs are stored with.
    pub instance: String,
    keeper: tokio::task::AbortHandle,
}

impl Lease {
    /// Takes the lease of `limits.instance` and voids the runs abandoned so far (this instance's
    /// earlier life's included); then keeps renewing it, sweeping abandoned runs and, in
    /// turn with the other processes, the expired files of `files`.
    pub async fn take(
        store: &Arc<dyn Store>,
        files: &Files,
        limits: &Limits,
    ) -> Result<(Lease, Recovered), String> {
        let length = limits.lease.max(Duration::from_millis(300));
        let instance = limits.instance.clone();
        store
            .renew_lease(&instance, until(length))
            .await
            .map_err(|e| format!("taking the lease of {instance}: {e}"))?;
        let recovered = store
            .recover(Some(&instance), now_ms())
            .await
            .map_err(|e| e.to_string())?;
        let keeper = tokio::spawn(keep(
            Arc::clone(store),
            files.clone(),
            instance.clone(),
            length,
        ));
        let lease = Lease {
            instance,
            keeper: keeper.abort_handle(),
        };
        Ok((lease, recovered))
    }

    /// Stops renewing and gives the lease up (after a graceful stop: no run is in flight).
    pub async fn release(&self, store: &dyn Store) {
        self.keeper.abort();
        if let Err(e) = store.release_lease(&self.instance).await {
            tracing::warn!(error = %e, "could not release the lease");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

fn until(length: Duration) -> i64 {
    now_ms().saturating_add(i64::try_from(length.as_millis()).unwrap_or(i64::MAX))
}

/// Renews every third of the lease (two renewals may fail before it runs out), voids what
/// processes that died left open, and sweeps expired files when it is this process's turn (a
/// turn lasts a third of the lease, so a sweeper that died is replaced by the next renewal).
async fn keep(store: Arc<dyn Store>, files: Files, instance: String, length: Duration) {
    let mut tick = tokio::time::interval(length / 3);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if let Err(e) = store.renew_lease(&instance, until(length)).await {
            tracing::warn!(error = %e, %instance, "could not renew the lease");
            continue;
        }
        match store.recover(None, now_ms()).await {
            Ok(recovered) if recovered.voided_runs > 0 => tracing::warn!(
                runs = recovered.voided_runs,
                "voided the reservations of runs whose process stopped renewing its lease"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not sweep abandoned runs"),
        }
        match crate::files::sweep(&store, &files, now_ms(), length / 3).await {
            Ok(swept) if swept.files > 0 => {
                tracing::info!(files = swept.files, "deleted expired files")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not sweep expired files"),
        }
    }
}

/// `ROLE@HOST:DISCRIMINATOR`: the default instance name, unique among live processes of one
/// host when the discriminator is a bound port or a process id.
pub fn instance_name(role: &str, discriminator: impl std::fmt::Display) -> String {
    let host = gethostname::gethostname();
    format!("{role}@{}:{discriminator}", host.to_string_lossy())
}
