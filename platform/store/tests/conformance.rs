//! The store's conformance suite (spec §15): every rule is one generic `async fn` taking the URL
//! of a fresh, empty database, run once on SQLite (a temp file) and once on PostgreSQL.
//!
//! PostgreSQL: `AELC_TEST_POSTGRES_URL` (a server where the suite may create databases), or
//! else a throwaway cluster this binary starts itself (initdb + pg_ctl on a free 127.0.0.1
//! port, in a temp dir, stopped at the end). Without PostgreSQL binaries the PostgreSQL half is
//! skipped with a loud message, except under `CI`, where it fails (`.ci/run` installs them).

#[path = "rules/ledger_upgrade.rs"]
mod ledger_upgrade;
#[path = "support/pg.rs"]
mod pg;

use aelc_runtime::money::Amount;
use aelc_store::{
    held_account, Account, Approval, ApprovalState, ApprovalUse, BeginRun, Begun, ConsoleSession,
    FileMeta, Mandate, MandateToken, RunQuery, Settlement, SqlStore, Status, Store, StoreError,
    StoredReceipt,
};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

type Rule = fn(String) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// Every rule, by name.
const RULES: &[(&str, Rule)] = &[
    ("accounts_and_keys", |u| Box::pin(accounts_and_keys(u))),
    ("amounts_are_exact", |u| Box::pin(amounts_are_exact(u))),
    ("balances_equal_entries_after_mixed_operations", |u| {
        Box::pin(balances_equal_entries_after_mixed_operations(u))
    }),
    ("old_ledgers_read_the_same_after_the_upgrade", |u| {
        Box::pin(ledger_upgrade::old_ledgers_read_the_same_after_the_upgrade(
            u,
        ))
    }),
    ("concurrent_runs_never_overdraw", |u| {
        Box::pin(concurrent_runs_never_overdraw(u))
    }),
    ("concurrent_runs_never_exceed_a_mandate", |u| {
        Box::pin(concurrent_runs_never_exceed_a_mandate(u))
    }),
    ("idempotency_replays_refuses_and_waits", |u| {
        Box::pin(idempotency_replays_refuses_and_waits(u))
    }),
    ("a_run_finishes_once", |u| Box::pin(a_run_finishes_once(u))),
    ("recover_voids_open_runs", |u| {
        Box::pin(recover_voids_open_runs(u))
    }),
    ("recover_leaves_live_leases_alone", |u| {
        Box::pin(recover_leaves_live_leases_alone(u))
    }),
    ("tenants_see_only_their_own", |u| {
        Box::pin(tenants_see_only_their_own(u))
    }),
    ("mandates_and_their_expiry", |u| {
        Box::pin(mandates_and_their_expiry(u))
    }),
    ("approval_state_machine", |u| {
        Box::pin(approval_state_machine(u))
    }),
    ("mandate_tokens_are_hashed_and_revoked_once", |u| {
        Box::pin(mandate_tokens_are_hashed_and_revoked_once(u))
    }),
    ("two_instances_never_lose_an_approval", |u| {
        Box::pin(two_instances_never_lose_an_approval(u))
    }),
    ("receipts_commit_in_groups_all_or_nothing", |u| {
        Box::pin(receipts_commit_in_groups_all_or_nothing(u))
    }),
    ("receipts_carry_only_the_indexes_they_use", |u| {
        Box::pin(receipts_carry_only_the_indexes_they_use(u))
    }),
    ("cancelled_calls_leave_the_store_usable", |u| {
        Box::pin(cancelled_calls_leave_the_store_usable(u))
    }),
    ("refusals_are_journaled_read_at_once_and_replayed", |u| {
        Box::pin(refusals_are_journaled_read_at_once_and_replayed(u))
    }),
    (
        "documents_are_stored_compressed_and_old_rows_still_read",
        |u| Box::pin(documents_are_stored_compressed_and_old_rows_still_read(u)),
    ),
    ("files_are_listed_counted_and_deleted", |u| {
        Box::pin(files_are_listed_counted_and_deleted(u))
    }),
    ("runs_written_together_stand_or_fall_alone", |u| {
        Box::pin(runs_written_together_stand_or_fall_alone(u))
    }),
    ("console_sessions_runs_and_approvals", |u| {
        Box::pin(console_sessions_runs_and_approvals(u))
    }),
    ("concurrent_uploads_never_pass_the_quota", |u| {
        Box::pin(concurrent_uploads_never_pass_the_quota(u))
    }),
    ("expired_files_are_found_and_turns_taken_once", |u| {
        Box::pin(expired_files_are_found_and_turns_taken_once(u))
    }),
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Runs every rule on fresh databases made by `fresh`, naming the rule that fails.
fn run_all(backend: &str, fresh: &dyn Fn(&str) -> String) {
    let rt = runtime();
    for (name, rule) in RULES {
        let url = fresh(name);
        eprintln!("-- {backend}: {name}");
        rt.block_on(rule(url));
    }
}

#[test]
fn sqlite() {
    let dir = std::env::temp_dir().join(format!("aelc-store-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    // A folder per rule that `open` must create, as `.ael/` in a fresh project.
    // One rule opens a plain path, the others a `sqlite:` URL.
    let fresh = |name: &str| {
        let path = dir.join(name).join("store.db").display().to_string();
        if name == "accounts_and_keys" {
            path
        } else {
            format!("sqlite:{path}")
        }
    };
    run_all("sqlite", &fresh);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres() {
    let Some(server) = pg::server() else { return };
    let rt = runtime();
    let fresh = |name: &str| rt.block_on(server.fresh_database(name));
    run_all("postgres", &fresh);
    for (name, _) in RULES {
        rt.block_on(server.drop_database(name));
    }
}

// ---- helpers ----

fn amt(text: &str) -> Amount {
    Amount::parse(text).expect("a test amount")
}

static IDS: AtomicU32 = AtomicU32::new(0);

fn id(prefix: &str) -> String {
    format!("{prefix}_{}", IDS.fetch_add(1, Ordering::Relaxed))
}

async fn open(url: &str) -> Arc<dyn Store> {
    aelc_store::open(url).await.expect("the store opens")
}

fn account(name: &str) -> Account {
    Account {
        name: name.to_owned(),
        currency: "EUR".to_owned(),
        created_ms: 1,
    }
}

async fn tenant(store: &dyn Store, name: &str, funds: &str) {
    store.ensure_account(&account(name)).await.expect("account");
    if funds != "0" {
        store.fund(name, amt(funds), "EUR", 2).await.expect("fund");
    }
}

fn begin(tenant: &str, reserve: &str) -> BeginRun {
    BeginRun {
        run: id("rcpt"),
        tenant: tenant.to_owned(),
        agent: "acme/review".to_owned(),
        version: "1.0.0".to_owned(),
        input_sha256: "in".to_owned(),
        reserve: amt(reserve),
        currency: "EUR".to_owned(),
        idempotency_key: None,
        mandate: None,
        owner: "gw-a".to_owned(),
        at_ms: 10,
        input_json: None,
        trace_id: None,
    }
}

fn receipt_of(run: &BeginRun, status: &str) -> StoredReceipt {
    StoredReceipt {
        id: run.run.clone(),
        tenant: run.tenant.clone(),
        agent: run.agent.clone(),
        version: run.version.clone(),
        status: aelc_store::Status::parse(status).expect("a status word"),
        code: None,
        mandate: run.mandate.clone(),
        json: format!("{{\"id\":\"{}\",\"status\":\"{status}\"}}", run.run),
        at_ms: 20,
    }
}

fn charge(payee: &str, amount: &str) -> Settlement {
    Settlement::Charge {
        payee: payee.to_owned(),
        amount: amt(amount),
    }
}

/// Each tenant's `available` and `reserved` equal the sums of its two ledger accounts'
/// entries, and each transfer seen has one debit and one credit of the same amount.
async fn assert_ledger(store: &dyn Store, tenants: &[&str]) {
    let mut sides: HashMap<String, Vec<(bool, Amount)>> = HashMap::new();
    for t in tenants {
        let balance = store.balance(t).await.expect("balance");
        let (mut available, mut held) = (0i128, 0i128);
        for e in store.entries(t).await.expect("entries") {
            let signed = if e.credit {
                e.amount.0 as i128
            } else {
                -(e.amount.0 as i128)
            };
            if e.account == *t {
                available += signed;
            } else {
                assert_eq!(e.account, held_account(t), "an entry of another account");
                held += signed;
            }
            sides
                .entry(e.transfer.clone())
                .or_default()
                .push((e.credit, e.amount));
        }
        assert_eq!(
            available, balance.available.0 as i128,
            "{t}: available ≠ its entries"
        );
        assert_eq!(
            held, balance.reserved.0 as i128,
            "{t}: reserved ≠ its entries"
        );
    }
    for (transfer, sides) in sides {
        assert!(sides.len() <= 2, "{transfer} has {} entries", sides.len());
        if let [(a, x), (b, y)] = sides[..] {
            assert!(
                a != b && x == y,
                "{transfer} is not one debit and one credit: {sides:?}"
            );
        }
    }
}

// ---- rules ----

async fn accounts_and_keys(url: String) {
    let store = open(&url).await;
    store
        .create_account(&account("acme"), "k1")
        .await
        .expect("create");
    assert!(matches!(
        store.create_account(&account("acme"), "k2").await,
        Err(StoreError::Exists(_))
    ));
    assert!(matches!(
        store.create_account(&account("other"), "k1").await,
        Err(StoreError::Exists(_))
    ));
    store
        .ensure_account(&account("acme"))
        .await
        .expect("ensure keeps it");
    assert_eq!(
        store.account_by_key("k1").await.unwrap(),
        Some(account("acme"))
    );
    assert_eq!(store.account_by_key("nope").await.unwrap(), None);
    assert_eq!(store.account("missing").await.unwrap(), None);
    // The funding account's name and a held account's name are not tenants' names.
    for bad in ["@funding", "acme@held", "", "Acme"] {
        assert!(
            store.ensure_account(&account(bad)).await.is_err(),
            "{bad:?} accepted"
        );
    }
    assert!(matches!(
        store.balance("missing").await,
        Err(StoreError::NotFound(_))
    ));
}

async fn amounts_are_exact(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "0").await;
    assert!(matches!(
        store.fund("demo", amt("0.0000000001"), "EUR", 1).await,
        Err(StoreError::Precision(_))
    ));
    assert!(matches!(
        store.fund("demo", amt("1"), "USD", 1).await,
        Err(StoreError::Currency { .. })
    ));
    assert!(matches!(
        store.fund("nobody", amt("1"), "EUR", 1).await,
        Err(StoreError::NotFound(_))
    ));
    store
        .fund("demo", amt("0.000000001"), "EUR", 1)
        .await
        .unwrap();
    store
        .fund("demo", amt("12345678.123456789"), "EUR", 1)
        .await
        .unwrap();
    assert_eq!(
        store.balance("demo").await.unwrap().available,
        amt("12345678.12345679")
    );
    let mut run = begin("demo", "1");
    run.currency = "USD".into();
    assert!(matches!(
        store.begin_run(&run).await,
        Err(StoreError::Currency { .. })
    ));
    assert_ledger(&*store, &["demo"]).await;
}

/// A seeded random sequence of funds, runs begun, charged, voided and left open (then
/// recovered): every balance equals its entries throughout, and no money is made or lost.
async fn balances_equal_entries_after_mixed_operations(url: String) {
    let store = open(&url).await;
    let tenants = ["t0", "t1", "t2"];
    for t in tenants {
        tenant(&*store, t, "0").await;
    }
    tenant(&*store, "acme", "0").await;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut funded: u128 = 0;
    let mut open_runs: Vec<BeginRun> = Vec::new();
    let (mut started, mut refused) = (0, 0);
    for step in 0..400 {
        let t = tenants[next(3) as usize];
        match next(4) {
            0 => {
                let a = Amount(u128::from(next(5_000) + 1) * 1_000_000_000_000_000 / 1000);
                store.fund(t, a, "EUR", step).await.unwrap();
                funded += a.0;
            }
            1 => {
                let mut run = begin(t, "0");
                run.reserve = Amount(u128::from(next(3_000)) * 1_000_000_000_000_000 / 1000);
                match store.begin_run(&run).await.unwrap() {
                    Begun::Started => {
                        started += 1;
                        open_runs.push(run);
                    }
                    Begun::Insufficient { .. } => refused += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
            _ if !open_runs.is_empty() => {
                let run = open_runs.swap_remove(next(open_runs.len() as u64) as usize);
                let settlement = match next(3) {
                    0 => Settlement::Void,
                    1 => Settlement::Charge {
                        payee: "acme".into(),
                        amount: run.reserve,
                    },
                    _ => Settlement::Charge {
                        payee: "acme".into(),
                        amount: Amount(run.reserve.0 / 1_000_000_000 / 2 * 1_000_000_000),
                    },
                };
                let status = if matches!(settlement, Settlement::Void) {
                    "error"
                } else {
                    "succeeded"
                };
                store
                    .finish_run(&receipt_of(&run, status), &settlement)
                    .await
                    .unwrap();
            }
            _ => {}
        }
        if step % 50 == 0 {
            assert_ledger(&*store, &["t0", "t1", "t2", "acme"]).await;
        }
    }
    assert!(
        started > 20 && refused > 0,
        "the sequence exercised little: {started} started, {refused} refused"
    );
    assert_eq!(store.open_runs().await.unwrap(), open_runs.len() as u64);
    store.recover(None, 20).await.unwrap();
    assert_ledger(&*store, &["t0", "t1", "t2", "acme"]).await;
    let mut total = 0u128;
    for t in ["t0", "t1", "t2", "acme"] {
        let b = store.balance(t).await.unwrap();
        assert_eq!(
            b.reserved,
            Amount::ZERO,
            "{t} still holds money after recover"
        );
        total += b.available.0;
    }
    assert_eq!(total, funded, "money was made or lost");
}

async fn concurrent_runs_never_overdraw(url: String) {
    let first = open(&url).await;
    let second = open(&url).await; // another pool: like a second process
    tenant(&*first, "demo", "10").await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tasks.push(tokio::spawn(async move {
            let run = begin("demo", "1");
            let begun = store.begin_run(&run).await.expect("begin");
            let b = store.balance("demo").await.expect("balance");
            (begun, run, b)
        }));
    }
    let mut started = Vec::new();
    for task in tasks {
        let (begun, run, _) = task.await.unwrap();
        match begun {
            Begun::Started => started.push(run),
            Begun::Insufficient { needed, .. } => assert_eq!(needed, amt("1")),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(started.len(), 10, "exactly the funded runs start");
    let b = first.balance("demo").await.unwrap();
    assert_eq!((b.available, b.reserved), (Amount::ZERO, amt("10")));
    assert_ledger(&*first, &["demo"]).await;
}

async fn concurrent_runs_never_exceed_a_mandate(url: String) {
    let first = open(&url).await;
    let second = open(&url).await;
    tenant(&*first, "demo", "100").await;
    tenant(&*first, "acme", "0").await;
    first
        .create_mandate(&mandate("demo", "sandbox", "5", None))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..30 {
        let store = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tasks.push(tokio::spawn(async move {
            let mut run = begin("demo", "1");
            run.mandate = Some("demo/sandbox".into());
            let begun = store.begin_run(&run).await.expect("begin");
            if begun == Begun::Started {
                let mut receipt = receipt_of(&run, "succeeded");
                receipt.mandate = run.mandate.clone();
                store
                    .finish_run(&receipt, &charge("acme", "1"))
                    .await
                    .expect("finish");
            }
            begun
        }));
    }
    let mut started = 0;
    for task in tasks {
        match task.await.unwrap() {
            Begun::Started => started += 1,
            Begun::OverBudget { needed, left } => {
                assert_eq!(needed, amt("1"));
                assert!(left < amt("1"), "refused with {left} left");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(started, 5, "the budget allows five runs of 1");
    let used = first.mandate_use("demo/sandbox").await.unwrap();
    assert_eq!((used.spent, used.reserved), (amt("5"), Amount::ZERO));
    assert_eq!(first.balance("demo").await.unwrap().available, amt("95"));
    assert_eq!(first.balance("acme").await.unwrap().available, amt("5"));
    assert_ledger(&*first, &["demo", "acme"]).await;
}

async fn idempotency_replays_refuses_and_waits(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    tenant(&*store, "acme", "0").await;
    let mut run = begin("demo", "2");
    run.idempotency_key = Some("k".into());
    assert_eq!(store.begin_run(&run).await.unwrap(), Begun::Started);
    let mut retry = run.clone();
    retry.run = id("rcpt");
    assert_eq!(store.begin_run(&retry).await.unwrap(), Begun::InProgress);
    let mut other = retry.clone();
    other.input_sha256 = "other".into();
    assert_eq!(store.begin_run(&other).await.unwrap(), Begun::KeyConflict);
    let receipt = receipt_of(&run, "succeeded");
    store
        .finish_run(&receipt, &charge("acme", "2"))
        .await
        .unwrap();
    assert_eq!(
        store.begin_run(&retry).await.unwrap(),
        Begun::Replayed {
            status: aelc_store::Status::Succeeded,
            receipt: receipt.json.clone()
        }
    );
    assert_eq!(store.begin_run(&other).await.unwrap(), Begun::KeyConflict);
    // Billed once; the same key of another tenant is another key.
    assert_eq!(store.balance("demo").await.unwrap().available, amt("8"));
    tenant(&*store, "zed", "5").await;
    let mut theirs = retry.clone();
    theirs.run = id("rcpt");
    theirs.tenant = "zed".into();
    assert_eq!(store.begin_run(&theirs).await.unwrap(), Begun::Started);
    // A refused run claims no key, and is told what the tenant had.
    let mut poor = begin("demo", "100");
    poor.idempotency_key = Some("k2".into());
    assert_eq!(
        store.begin_run(&poor).await.unwrap(),
        Begun::Insufficient {
            available: amt("8"),
            needed: amt("100")
        }
    );
    poor.reserve = amt("1");
    assert_eq!(store.begin_run(&poor).await.unwrap(), Begun::Started);
    assert_ledger(&*store, &["demo", "acme", "zed"]).await;
}

/// Many runs' reservations and settlements at once, as a loaded gateway sends them (SQLite
/// writes whatever is queued in one transaction): a refused or failed run changes nothing,
/// and takes nothing of the runs written beside it.
async fn runs_written_together_stand_or_fall_alone(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "20").await;
    tenant(&*store, "poor", "1").await;
    tenant(&*store, "acme", "0").await;
    let twice = begin("demo", "1");
    let mut keyed = begin("demo", "1");
    keyed.idempotency_key = Some("same".into());
    let mut tasks = Vec::new();
    for i in 0..48 {
        let store = store.clone();
        let run = match i % 6 {
            // Funded: starts.
            0 => begin("demo", "1"),
            // Over the balance: refused, holds nothing.
            1 => begin("poor", "2"),
            // One key, one input: one starts, the rest wait for it.
            2 => BeginRun {
                run: id("rcpt"),
                ..keyed.clone()
            },
            // The same key with another input: a conflict, never a claim.
            3 => BeginRun {
                run: id("rcpt"),
                input_sha256: format!("other {i}"),
                ..keyed.clone()
            },
            // One run id begun again and again: one starts, the rest exist.
            4 => twice.clone(),
            // In a currency the tenant does not hold: an error, nothing written.
            _ => BeginRun {
                currency: "USD".into(),
                ..begin("demo", "1")
            },
        };
        tasks.push(tokio::spawn(async move {
            let begun = store.begin_run(&run).await;
            (i % 6, run, begun)
        }));
    }
    let mut started = Vec::new();
    let mut keyed_started = 0;
    for task in tasks {
        let (kind, run, begun) = task.await.unwrap();
        match (kind, begun) {
            (0, Ok(Begun::Started)) => started.push(run),
            (1, Ok(Begun::Insufficient { .. })) => {}
            // Whichever input claims the key first starts; the others wait or conflict.
            (2 | 3, Ok(Begun::Started)) => {
                keyed_started += 1;
                started.push(run);
            }
            (2 | 3, Ok(Begun::InProgress | Begun::KeyConflict)) => {}
            (4, Ok(Begun::Started)) => started.push(run),
            (4, Err(StoreError::Exists(_))) => {}
            (5, Err(StoreError::Currency { .. })) => {}
            (kind, other) => panic!("kind {kind}: unexpected {other:?}"),
        }
    }
    // One key, one run started, whichever input claimed it.
    assert_eq!(keyed_started, 1, "{keyed_started} keyed runs started");
    let twice_started = started.iter().filter(|r| r.run == twice.run).count();
    assert_eq!(twice_started, 1, "one run id started once");
    let reserved = amt(&started.len().to_string());
    let b = store.balance("demo").await.unwrap();
    assert_eq!(
        (b.reserved, b.available),
        (reserved, amt(&(20 - started.len()).to_string()))
    );
    let poor = store.balance("poor").await.unwrap();
    assert_eq!((poor.available, poor.reserved), (amt("1"), Amount::ZERO));

    // Settled together: every other one charges more than it reserved and is refused alone.
    let mut tasks = Vec::new();
    for (i, run) in started.iter().enumerate() {
        let store = store.clone();
        let receipt = receipt_of(run, "succeeded");
        let over = i % 2 == 1;
        tasks.push(tokio::spawn(async move {
            let charged = if over { "2" } else { "1" };
            (
                over,
                store.finish_run(&receipt, &charge("acme", charged)).await,
            )
        }));
    }
    let mut charged = 0u32;
    for task in tasks {
        match task.await.unwrap() {
            (false, Ok(())) => charged += 1,
            (true, Err(StoreError::Insufficient { .. })) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    let acme = store.balance("acme").await.unwrap();
    assert_eq!(acme.available, amt(&charged.to_string()));
    let b = store.balance("demo").await.unwrap();
    let still_open = started.len() as u32 - charged;
    assert_eq!(b.reserved, amt(&still_open.to_string()));
    // The refused settlements left their runs open, to be finished once.
    for run in started.iter().skip(1).step_by(2) {
        store
            .finish_run(&receipt_of(run, "error"), &Settlement::Void)
            .await
            .expect("a run refused its settlement is still open");
    }
    let b = store.balance("demo").await.unwrap();
    assert_eq!(b.reserved, Amount::ZERO);
    assert_eq!(b.available, amt(&(20 - charged).to_string()));
    assert_ledger(&*store, &["demo", "poor", "acme"]).await;
}

async fn a_run_finishes_once(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    tenant(&*store, "acme", "0").await;
    let run = begin("demo", "3");
    assert_eq!(store.begin_run(&run).await.unwrap(), Begun::Started);
    assert!(
        matches!(store.begin_run(&run).await, Err(StoreError::Exists(_))),
        "a run id twice"
    );
    // More than reserved is refused and changes nothing.
    assert!(store
        .finish_run(&receipt_of(&run, "succeeded"), &charge("acme", "4"))
        .await
        .is_err());
    store
        .finish_run(&receipt_of(&run, "succeeded"), &charge("acme", "2"))
        .await
        .unwrap();
    let again = store
        .finish_run(&receipt_of(&run, "succeeded"), &charge("acme", "2"))
        .await;
    assert!(matches!(again, Err(StoreError::Exists(_))), "{again:?}");
    let void = store
        .finish_run(&receipt_of(&run, "error"), &Settlement::Void)
        .await;
    assert!(matches!(void, Err(StoreError::Exists(_))), "{void:?}");
    let b = store.balance("demo").await.unwrap();
    assert_eq!((b.available, b.reserved), (amt("8"), Amount::ZERO));
    assert_eq!(store.balance("acme").await.unwrap().available, amt("2"));
    let ghost = begin("demo", "1");
    assert!(matches!(
        store
            .finish_run(&receipt_of(&ghost, "succeeded"), &Settlement::Void)
            .await,
        Err(StoreError::NotFound(_))
    ));
    // A receipt recorded at the gate moves nothing and counts in the stats.
    let gate = begin("demo", "0");
    store
        .record_receipts(&[receipt_of(&gate, "rejected_input")])
        .await
        .unwrap();
    assert!(matches!(
        store
            .record_receipts(&[receipt_of(&gate, "rejected_input")])
            .await,
        Err(StoreError::Exists(_))
    ));
    let stats = store.agent_stats("acme/review").await.unwrap();
    assert_eq!(
        (stats.succeeded, stats.rejected_input, stats.error),
        (1, 1, 0)
    );
    assert_eq!(stats.success_rate(), Some(1.0));
    assert_ledger(&*store, &["demo", "acme"]).await;
}

async fn recover_voids_open_runs(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    store
        .create_mandate(&mandate("demo", "m", "5", None))
        .await
        .unwrap();
    let plain = begin("demo", "1");
    let mut keyed = begin("demo", "2");
    keyed.idempotency_key = Some("k".into());
    let mut mandated = begin("demo", "3");
    mandated.mandate = Some("demo/m".into());
    for run in [&plain, &keyed, &mandated] {
        assert_eq!(store.begin_run(run).await.unwrap(), Begun::Started);
    }
    assert_eq!(store.open_runs().await.unwrap(), 3);
    // Another process starting: a second instance recovers. The runs' owner never held a
    // lease, so they are abandoned.
    let restarted = open(&url).await;
    assert_eq!(restarted.recover(None, 20).await.unwrap().voided_runs, 3);
    assert_eq!(store.open_runs().await.unwrap(), 0);
    let b = store.balance("demo").await.unwrap();
    assert_eq!((b.available, b.reserved), (amt("10"), Amount::ZERO));
    assert_eq!(
        store.mandate_use("demo/m").await.unwrap().reserved,
        Amount::ZERO
    );
    // The key is free again; the voided run cannot be finished.
    let mut again = keyed.clone();
    again.run = id("rcpt");
    assert_eq!(store.begin_run(&again).await.unwrap(), Begun::Started);
    assert!(store
        .finish_run(&receipt_of(&keyed, "succeeded"), &Settlement::Void)
        .await
        .is_err());
    assert_eq!(restarted.recover(None, 20).await.unwrap().voided_runs, 1);
    assert_ledger(&*store, &["demo"]).await;
}

/// Several processes on one database: a process starting voids only its own earlier life's
/// runs and those whose owner's lease ran out, never a live process's runs in flight.
async fn recover_leaves_live_leases_alone(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    tenant(&*store, "acme", "0").await;
    let run_of = |owner: &str| {
        let mut run = begin("demo", "1");
        run.owner = owner.to_owned();
        run
    };
    store.renew_lease("live", 1_000).await.unwrap();
    store.renew_lease("ended", 500).await.unwrap();
    store.renew_lease("me", 1_000).await.unwrap();
    let live = run_of("live");
    let ended = run_of("ended");
    let mine = run_of("me");
    for run in [&live, &ended, &mine] {
        assert_eq!(store.begin_run(run).await.unwrap(), Begun::Started);
    }
    // A late renewal never shortens a lease.
    store.renew_lease("live", 900).await.unwrap();
    let other = open(&url).await;
    assert_eq!(other.recover(Some("me"), 600).await.unwrap().voided_runs, 2);
    assert_eq!(store.open_runs().await.unwrap(), 1);
    store
        .finish_run(&receipt_of(&live, "succeeded"), &charge("acme", "1"))
        .await
        .expect("the live process's run was voided under it");
    assert!(store
        .finish_run(&receipt_of(&ended, "succeeded"), &Settlement::Void)
        .await
        .is_err());
    // Once `live` stops renewing, its next run is recoverable after its lease ends, and
    // a released lease at once.
    let late = run_of("live");
    store.begin_run(&late).await.unwrap();
    assert_eq!(
        other.recover(Some("me"), 1_000).await.unwrap().voided_runs,
        0
    );
    assert_eq!(
        other.recover(Some("me"), 1_001).await.unwrap().voided_runs,
        1
    );
    store.renew_lease("live", 5_000).await.unwrap();
    let released = run_of("live");
    store.begin_run(&released).await.unwrap();
    store.release_lease("live").await.unwrap();
    assert_eq!(
        other.recover(Some("me"), 1_002).await.unwrap().voided_runs,
        1
    );
    let b = store.balance("demo").await.unwrap();
    assert_eq!((b.available, b.reserved), (amt("9"), Amount::ZERO));
    assert_ledger(&*store, &["demo", "acme"]).await;
}

async fn tenants_see_only_their_own(url: String) {
    let store = open(&url).await;
    tenant(&*store, "a", "5").await;
    tenant(&*store, "b", "5").await;
    let mut run = begin("a", "1");
    run.mandate = None;
    store.begin_run(&run).await.unwrap();
    let mut receipt = receipt_of(&run, "succeeded");
    receipt.mandate = Some("a/m".into());
    store.finish_run(&receipt, &Settlement::Void).await.unwrap();
    assert_eq!(
        store.receipt("a", &run.run).await.unwrap(),
        Some(receipt.clone())
    );
    assert_eq!(store.receipt("b", &run.run).await.unwrap(), None);
    assert_eq!(
        store.mandate_receipt("a/m", &run.run).await.unwrap(),
        Some(receipt)
    );
    assert_eq!(
        store.mandate_receipt("a/other", &run.run).await.unwrap(),
        None
    );
    let file = FileMeta {
        id: "f1".into(),
        tenant: "a".into(),
        sha256: "abc".into(),
        size: 12,
        media_type: "image/png".into(),
        created_ms: 1,
        expires_ms: Some(99),
        source: Some("scan.png".into()),
    };
    store.put_file(&file, u64::MAX).await.unwrap();
    assert!(matches!(
        store.put_file(&file, u64::MAX).await,
        Err(StoreError::Exists(_))
    ));
    assert_eq!(store.file("a", "f1").await.unwrap(), Some(file));
    assert_eq!(store.file("b", "f1").await.unwrap(), None);
}

fn mandate(account: &str, name: &str, budget: &str, expires_ms: Option<i64>) -> Mandate {
    Mandate {
        account: account.into(),
        name: name.into(),
        budget: amt(budget),
        currency: "EUR".into(),
        threshold: amt("0.5"),
        allow: vec!["extraction.*".into()],
        deny: vec!["acme/bad".into()],
        expires_ms,
        created_ms: 1,
    }
}

async fn mandates_and_their_expiry(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    tenant(&*store, "zed", "10").await;
    let m = mandate("demo", "sandbox", "5", Some(100));
    store.create_mandate(&m).await.unwrap();
    assert!(matches!(
        store.create_mandate(&m).await,
        Err(StoreError::Exists(_))
    ));
    assert!(store
        .create_mandate(&mandate("ghost", "x", "1", None))
        .await
        .is_err());
    store
        .create_mandate(&mandate("zed", "a", "1", None))
        .await
        .unwrap();
    assert_eq!(
        store.mandate("demo/sandbox").await.unwrap(),
        Some(m.clone())
    );
    assert_eq!(store.mandate("demo/none").await.unwrap(), None);
    assert_eq!(store.mandate("malformed").await.unwrap(), None);
    assert_eq!(store.mandates(Some("demo")).await.unwrap(), vec![m.clone()]);
    assert_eq!(store.mandates(None).await.unwrap().len(), 2);
    let mut run = begin("demo", "1");
    run.mandate = Some("demo/sandbox".into());
    run.at_ms = 100;
    let expired = store.begin_run(&run).await;
    assert!(
        matches!(&expired, Err(StoreError::Approval(why)) if why.contains("expired")),
        "{expired:?}"
    );
    run.at_ms = 99;
    run.tenant = "zed".into();
    assert!(
        store.begin_run(&run).await.is_err(),
        "another account's mandate"
    );
    run.tenant = "demo".into();
    assert_eq!(store.begin_run(&run).await.unwrap(), Begun::Started);
    let used = store.mandate_use("demo/sandbox").await.unwrap();
    assert_eq!((used.spent, used.reserved), (Amount::ZERO, amt("1")));
    run.run = id("rcpt");
    run.reserve = amt("4.5");
    assert_eq!(
        store.begin_run(&run).await.unwrap(),
        Begun::OverBudget {
            left: amt("4"),
            needed: amt("4.5")
        }
    );
    assert_eq!(
        store.balance("demo").await.unwrap().reserved,
        amt("1"),
        "refused: nothing held"
    );
}

/// A token belongs to an existing mandate, is found by its hash only, expires by the caller's
/// clock, and its first revocation is the one kept.
async fn mandate_tokens_are_hashed_and_revoked_once(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "10").await;
    store
        .create_mandate(&mandate("demo", "sandbox", "5", None))
        .await
        .unwrap();
    let token = |hash: &str, mandate: &str, expires_ms| MandateToken {
        token_sha256: hash.into(),
        mandate: mandate.into(),
        created_ms: 1,
        expires_ms,
        revoked_ms: None,
    };
    let t = token("h1", "demo/sandbox", Some(100));
    store.create_mandate_token(&t).await.unwrap();
    assert!(matches!(
        store.create_mandate_token(&t).await,
        Err(StoreError::Exists(_))
    ));
    assert!(matches!(
        store
            .create_mandate_token(&token("h2", "demo/none", None))
            .await,
        Err(StoreError::NotFound(_))
    ));
    let found = store.mandate_token("h1").await.unwrap().expect("found");
    assert_eq!(found, t);
    assert_eq!(found.refusal(99), None);
    assert_eq!(found.refusal(100), Some("the token expired"));
    assert_eq!(store.mandate_token("h2").await.unwrap(), None);
    let revoked = store.revoke_mandate_token("h1", 50).await.unwrap();
    assert_eq!(revoked.revoked_ms, Some(50));
    assert_eq!(revoked.refusal(10), Some("the token was revoked"));
    let again = store.revoke_mandate_token("h1", 70).await.unwrap();
    assert_eq!(again.revoked_ms, Some(50), "the first revocation is kept");
    assert!(matches!(
        store.revoke_mandate_token("nope", 70).await,
        Err(StoreError::NotFound(_))
    ));
}

fn approval(id: &str, expires_ms: i64) -> Approval {
    Approval {
        id: id.into(),
        mandate: "demo/sandbox".into(),
        agent: "acme/review".into(),
        version: "1.0.0".into(),
        input_sha256: "in".into(),
        input_json: "{}".into(),
        worst_case: amt("0.75"),
        currency: "EUR".into(),
        state: ApprovalState::Pending,
        created_ms: 1,
        expires_ms,
    }
}

fn use_of(id: &str, at_ms: i64) -> ApprovalUse {
    ApprovalUse {
        id: id.into(),
        mandate: "demo/sandbox".into(),
        agent: "acme/review".into(),
        version: "1.0.0".into(),
        input_sha256: "in".into(),
        at_ms,
    }
}

fn refused(result: aelc_store::Result<impl std::fmt::Debug>, because: &str) {
    match result {
        Err(StoreError::Approval(why)) => {
            assert!(why.contains(because), "`{why}` lacks `{because}`")
        }
        other => panic!("expected a refusal ({because}), got {other:?}"),
    }
}

async fn approval_state_machine(url: String) {
    let store = open(&url).await;
    store
        .create_approval(&approval("appr_1", 1000))
        .await
        .unwrap();
    assert!(matches!(
        store.create_approval(&approval("appr_1", 1000)).await,
        Err(StoreError::Exists(_))
    ));
    let read = |id: &'static str, now| {
        let store = store.clone();
        async move { store.approval(id, now).await.unwrap().map(|a| a.state) }
    };
    assert_eq!(read("appr_1", 10).await, Some(ApprovalState::Pending));
    refused(store.use_approval(&use_of("appr_1", 10)).await, "pending");
    assert_eq!(
        store
            .decide_approval("appr_1", true, 10)
            .await
            .unwrap()
            .state,
        ApprovalState::Approved
    );
    refused(store.decide_approval("appr_1", false, 11).await, "approved");
    let mut other = use_of("appr_1", 12);
    other.input_sha256 = "other".into();
    refused(store.use_approval(&other).await, "another input");
    let mut other = use_of("appr_1", 12);
    other.version = "1.0.1".into();
    refused(store.use_approval(&other).await, "another agent version");
    let mut other = use_of("appr_1", 12);
    other.mandate = "demo/other".into();
    refused(store.use_approval(&other).await, "another mandate");
    store.use_approval(&use_of("appr_1", 12)).await.unwrap();
    refused(store.use_approval(&use_of("appr_1", 13)).await, "used");
    assert_eq!(
        read("appr_1", 2000).await,
        Some(ApprovalState::Used),
        "used never expires"
    );

    store
        .create_approval(&approval("appr_2", 1000))
        .await
        .unwrap();
    assert_eq!(
        store
            .decide_approval("appr_2", false, 10)
            .await
            .unwrap()
            .state,
        ApprovalState::Rejected
    );
    refused(store.use_approval(&use_of("appr_2", 11)).await, "rejected");
    refused(store.decide_approval("appr_2", true, 12).await, "rejected");

    store
        .create_approval(&approval("appr_3", 1000))
        .await
        .unwrap();
    assert_eq!(read("appr_3", 999).await, Some(ApprovalState::Pending));
    assert_eq!(read("appr_3", 1000).await, Some(ApprovalState::Expired));
    refused(store.decide_approval("appr_3", true, 1000).await, "expired");
    store
        .create_approval(&approval("appr_4", 1000))
        .await
        .unwrap();
    store.decide_approval("appr_4", true, 10).await.unwrap();
    assert_eq!(read("appr_4", 1500).await, Some(ApprovalState::Expired));
    refused(store.use_approval(&use_of("appr_4", 1500)).await, "expired");
    assert_eq!(
        read("appr_4", 999).await,
        Some(ApprovalState::Approved),
        "not used by the refusal"
    );

    assert_eq!(store.approval("appr_none", 1).await.unwrap(), None);
    assert!(matches!(
        store.use_approval(&use_of("appr_none", 1)).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.decide_approval("appr_none", true, 1).await,
        Err(StoreError::NotFound(_))
    ));
}

/// The race seed `002_…` admits: one process finishes runs in a loop while another decides
/// approvals on the same database; every decision survives.
async fn two_instances_never_lose_an_approval(url: String) {
    let runner = open(&url).await;
    // A separate pool on the same database, as `aelc approve` in another process.
    let approver: Arc<dyn Store> = Arc::new(SqlStore::open(&url).await.unwrap());
    tenant(&*runner, "demo", "1000").await;
    tenant(&*runner, "acme", "0").await;
    runner
        .create_mandate(&mandate("demo", "sandbox", "1000", None))
        .await
        .unwrap();
    let ids: Vec<String> = (0..40).map(|i| format!("appr_race_{i}")).collect();
    for id in &ids {
        runner
            .create_approval(&approval(id, i64::MAX))
            .await
            .unwrap();
    }
    let runs = {
        let runner = runner.clone();
        tokio::spawn(async move {
            for _ in 0..60 {
                let mut run = begin("demo", "1");
                run.mandate = Some("demo/sandbox".into());
                assert_eq!(runner.begin_run(&run).await.unwrap(), Begun::Started);
                tokio::task::yield_now().await;
                runner
                    .finish_run(&receipt_of(&run, "succeeded"), &charge("acme", "0.5"))
                    .await
                    .unwrap();
            }
        })
    };
    let decisions = {
        let approver = approver.clone();
        let ids = ids.clone();
        tokio::spawn(async move {
            for (i, id) in ids.iter().enumerate() {
                approver.decide_approval(id, i % 3 != 0, 5).await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    runs.await.unwrap();
    decisions.await.unwrap();
    for (i, id) in ids.iter().enumerate() {
        let want = if i % 3 != 0 {
            ApprovalState::Approved
        } else {
            ApprovalState::Rejected
        };
        assert_eq!(
            runner.approval(id, 6).await.unwrap().map(|a| a.state),
            Some(want),
            "{id}"
        );
    }
    let used = runner.mandate_use("demo/sandbox").await.unwrap();
    assert_eq!((used.spent, used.reserved), (amt("30"), Amount::ZERO));
    assert_ledger(&*approver, &["demo", "acme"]).await;
}

/// `record_receipts` stores a batch (more rows than one `INSERT` holds) all or nothing, and so
/// does the store's own blocking writer where it has one (SQLite's, which the refusal
/// journal's mover uses): a duplicate fails the whole batch with `Exists`.
async fn receipts_commit_in_groups_all_or_nothing(url: String) {
    let store = open(&url).await;
    let gates: Vec<StoredReceipt> = (0..150)
        .map(|_| receipt_of(&begin("demo", "0"), "rejected_input"))
        .collect();
    store.record_receipts(&gates).await.unwrap();
    for r in [&gates[0], &gates[70], &gates[149]] {
        assert_eq!(
            store.receipt("demo", &r.id).await.unwrap().as_ref(),
            Some(r)
        );
    }
    // One row already stored makes the whole batch fail: none of the new ones is kept.
    let fresh: Vec<StoredReceipt> = (0..10)
        .map(|_| receipt_of(&begin("demo", "0"), "rejected_input"))
        .collect();
    let mut with_duplicate = fresh.clone();
    with_duplicate.push(gates[3].clone());
    assert!(matches!(
        store.record_receipts(&with_duplicate).await,
        Err(StoreError::Exists(_))
    ));
    for r in &fresh {
        assert_eq!(store.receipt("demo", &r.id).await.unwrap(), None);
    }

    // SQLite's groups can also go through its own writer thread (the journal's mover uses it).
    let writer = store.receipt_writer().unwrap();
    assert_eq!(writer.is_some(), store.backend() == "sqlite");
    if let Some(mut writer) = writer {
        let more: Vec<StoredReceipt> = (0..40)
            .map(|_| receipt_of(&begin("demo", "0"), "rejected_input"))
            .collect();
        let mut bad = more.clone();
        bad.push(gates[5].clone());
        assert!(matches!(writer.record(&bad), Err(StoreError::Exists(_))));
        assert_eq!(store.receipt("demo", &more[0].id).await.unwrap(), None);
        writer.record(&more).unwrap();
        assert_eq!(
            store.receipt("demo", &more[39].id).await.unwrap().as_ref(),
            Some(&more[39])
        );
    }
    let stats = store.agent_stats("acme/review").await.unwrap();
    let written_by_the_writer = if store.backend() == "sqlite" { 40 } else { 0 };
    assert_eq!(stats.rejected_input, 150 + written_by_the_writer);
}

/// Every index of `receipts` is written by every receipt (on SQLite, a page of the log per
/// index and commit): the table keeps its primary key, by which a receipt is found (and then
/// checked against its tenant or mandate), and the index of an agent's success rate; no index
/// by owner alone, which nothing reads (migration 0003). A receipt is still found by its
/// tenant and by its mandate, and by no one else.
async fn receipts_carry_only_the_indexes_they_use(url: String) {
    let store = open(&url).await;
    tenant(&*store, "acme", "0").await;
    let mut r = receipt_of(&begin("acme", "0"), "rejected_input");
    r.mandate = Some("acme/sandbox".to_owned());
    store
        .record_receipts(std::slice::from_ref(&r))
        .await
        .unwrap();
    assert!(store.receipt("acme", &r.id).await.unwrap().is_some());
    assert!(store.receipt("other", &r.id).await.unwrap().is_none());
    assert!(store
        .mandate_receipt("acme/sandbox", &r.id)
        .await
        .unwrap()
        .is_some());
    assert!(store
        .mandate_receipt("acme/other", &r.id)
        .await
        .unwrap()
        .is_none());

    sqlx::any::install_default_drivers();
    let (pool_url, query) = match url.strip_prefix("sqlite:") {
        Some(path) => (
            format!("sqlite://{path}"),
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'receipts' \
             ORDER BY name",
        ),
        None => (
            url.clone(),
            "SELECT indexname::text FROM pg_indexes WHERE tablename = 'receipts' ORDER BY 1",
        ),
    };
    let pool = sqlx::AnyPool::connect(&pool_url).await.unwrap();
    let names: Vec<String> = sqlx::query_scalar(query).fetch_all(&pool).await.unwrap();
    pool.close().await;
    let primary = if url.starts_with("sqlite:") {
        "sqlite_autoindex_receipts_1"
    } else {
        "receipts_pkey"
    };
    let mut wanted = vec!["receipts_agent_status", primary];
    wanted.sort_unstable();
    assert_eq!(names, wanted);
}

/// A caller that stops waiting (an HTTP client that hangs up: axum drops the handler's future)
/// cancels a store call at whatever await it had reached. sqlx 0.8 begins a SQLite
/// transaction in two steps, and a call cancelled between them left its connection in the pool
/// inside a transaction nothing would end: every later write on that connection failed
/// ("begin_with at non-zero transaction depth"), which the gateway bench found after a round's
/// clients hung up mid-run. Calls cancelled at every point of their way, then every
/// connection of the pool still writes, and the money balances.
async fn cancelled_calls_leave_the_store_usable(url: String) {
    let store = open(&url).await;
    tenant(&*store, "demo", "1000").await;
    tenant(&*store, "acme", "0").await;
    for i in 0..600u64 {
        let run = begin("demo", "1");
        let wait = std::time::Duration::from_micros((i * 7) % 400);
        let _ = tokio::time::timeout(wait, store.begin_run(&run)).await;
    }
    // Let the cancelled calls' connections come back to the pool.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // All at once, so the pool hands out every one of its connections.
    let mut tasks = Vec::new();
    for _ in 0..48 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let run = begin("demo", "1");
            let begun = store.begin_run(&run).await;
            (run, begun)
        }));
    }
    let mut runs = Vec::new();
    for task in tasks {
        let (run, begun) = task.await.unwrap();
        assert_eq!(begun.expect("a write after cancelled ones"), Begun::Started);
        runs.push(run);
    }
    for run in &runs {
        store
            .finish_run(&receipt_of(run, "succeeded"), &charge("acme", "1"))
            .await
            .expect("a run finishes after cancelled ones");
    }
    assert_ledger(&*store, &["demo", "acme"]).await;
}

/// The refusal journal (`aelc_store::journal`): a refused call's receipt is read back the moment
/// its caller is answered (by its tenant and mandate only), counts wait for it, it reaches the
/// database behind the caller's back; a journal left by a process that is gone is moved into
/// the store by the next one (skipping what is stored already and a last line cut short), one
/// that a live process holds is left alone, and a damaged one is named, file and line.
async fn refusals_are_journaled_read_at_once_and_replayed(url: String) {
    use aelc_store::journaled::Journaled;
    use std::io::Write;
    let store = open(&url).await;
    let dir = std::env::temp_dir().join(format!(
        "aelc-journal-{}-{}",
        std::process::id(),
        id("rule")
    ));
    let journaled = Arc::new(Journaled::open(Arc::clone(&store), &dir).await.unwrap());
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..300 {
        let journaled = Arc::clone(&journaled);
        calls.spawn(async move {
            let mut run = begin("demo", "0");
            if i % 3 == 0 {
                run.mandate = Some("demo/bot".to_owned());
            }
            let row = receipt_of(&run, "rejected_input");
            journaled.record_refusal(row.clone()).await.unwrap();
            assert_eq!(
                journaled.receipt("demo", &row.id).await.unwrap().as_ref(),
                Some(&row),
                "{i}: answered and not found"
            );
            assert_eq!(journaled.receipt("other", &row.id).await.unwrap(), None);
            let by_mandate = journaled
                .mandate_receipt("demo/bot", &row.id)
                .await
                .unwrap();
            assert_eq!(by_mandate.is_some(), i % 3 == 0, "{i}");
            row
        });
    }
    let mut rows = Vec::new();
    while let Some(done) = calls.join_next().await {
        rows.push(done.unwrap());
    }
    // Counting waits for every refusal recorded before it; then all are in the database.
    let stats = journaled.agent_stats("acme/review").await.unwrap();
    assert_eq!(stats.rejected_input, 300);
    for row in &rows {
        assert_eq!(
            store.receipt("demo", &row.id).await.unwrap().as_ref(),
            Some(row)
        );
    }
    drop(journaled);

    // Journals left behind: one orphan (a stored receipt again, two new ones, a last line cut
    // short by the crash), one held by a live process.
    let line = |r: &StoredReceipt| {
        serde_json::json!({
            "id": r.id, "tenant": r.tenant, "agent": r.agent, "version": r.version,
            "status": r.status, "code": r.code, "mandate": r.mandate, "json": r.json,
            "at_ms": r.at_ms,
        })
        .to_string()
            + "\n"
    };
    let left = std::env::temp_dir().join(format!(
        "aelc-journal-{}-{}",
        std::process::id(),
        id("left")
    ));
    std::fs::create_dir_all(&left).unwrap();
    let new: Vec<StoredReceipt> = (0..2)
        .map(|_| receipt_of(&begin("demo", "0"), "rejected_input"))
        .collect();
    let cut = receipt_of(&begin("demo", "0"), "rejected_input");
    let mut orphan = line(&rows[0]) + &line(&new[0]) + &line(&new[1]);
    orphan.push_str(&line(&cut)[..40]);
    std::fs::write(left.join("refusals-a.ndjson"), orphan).unwrap();
    let held_row = receipt_of(&begin("demo", "0"), "rejected_input");
    let held_path = left.join("refusals-b.ndjson");
    let mut held = std::fs::File::create(&held_path).unwrap();
    held.write_all(line(&held_row).as_bytes()).unwrap();
    held.try_lock().unwrap();

    let reopened = Journaled::open(Arc::clone(&store), &left).await.unwrap();
    for r in &new {
        assert_eq!(
            store.receipt("demo", &r.id).await.unwrap().as_ref(),
            Some(r)
        );
    }
    assert_eq!(store.receipt("demo", &cut.id).await.unwrap(), None);
    assert!(
        !left.join("refusals-a.ndjson").exists(),
        "a moved journal is removed"
    );
    assert_eq!(store.receipt("demo", &held_row.id).await.unwrap(), None);
    assert!(held_path.exists(), "a live process's journal is left alone");
    drop(reopened);
    drop(held);
    let _again = Journaled::open(Arc::clone(&store), &left).await.unwrap();
    assert_eq!(
        store.receipt("demo", &held_row.id).await.unwrap().as_ref(),
        Some(&held_row)
    );

    // A line that does not read, before the end, stops the start with its file and line.
    let damaged = std::env::temp_dir().join(format!(
        "aelc-journal-{}-{}",
        std::process::id(),
        id("damaged")
    ));
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(
        damaged.join("refusals-c.ndjson"),
        line(&new[0]) + "{not json\n",
    )
    .unwrap();
    let error = Journaled::open(Arc::clone(&store), &damaged)
        .await
        .err()
        .expect("a damaged journal is refused");
    let text = error.to_string();
    assert!(
        text.contains("refusals-c.ndjson line 2"),
        "the error names the file and line: {text}"
    );
    for folder in [dir, left, damaged] {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// A receipt's document is stored compressed (migration 0004: `document`, a tag byte and a zstd
/// frame), a store migrated from before keeps reading the plain JSON rows it had, and a
/// damaged row is an error naming its receipt, never a wrong document.
async fn documents_are_stored_compressed_and_old_rows_still_read(url: String) {
    sqlx::any::install_default_drivers();
    let (pool_url, folder) = match url.strip_prefix("sqlite:") {
        Some(path) => {
            let parent = std::path::Path::new(path).parent().expect("a folder");
            std::fs::create_dir_all(parent).expect("the rule's folder");
            (format!("sqlite://{path}?mode=rwc"), "sqlite")
        }
        None => (url.clone(), "postgres"),
    };
    // The database as migration 0003 left it, with one receipt in the old `json` text column.
    let pool = sqlx::AnyPool::connect(&pool_url).await.unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(folder);
    let mut before = sqlx::migrate::Migrator::new(dir).await.unwrap();
    let old: Vec<_> = before
        .migrations
        .iter()
        .filter(|m| m.version <= 3)
        .cloned()
        .collect();
    assert_eq!(old.len(), 3, "migrations 0001–0003");
    before.migrations = old.into();
    before.run(&pool).await.unwrap();
    let plain = r#"{"status":"rejected_input","receipt":{"receipt":"rcpt_old"}}"#;
    sqlx::query(
        "INSERT INTO receipts (id, tenant, agent, version, status, code, mandate, json, at_ms) \
         VALUES ('rcpt_old', 'acme', 'acme/review', '1.0.0', 'rejected_input', NULL, NULL, $1, 5)",
    )
    .bind(plain)
    .execute(&pool)
    .await
    .unwrap();

    let store = open(&url).await;
    let old = store.receipt("acme", "rcpt_old").await.unwrap().unwrap();
    assert_eq!(old.json, plain);

    // New rows: compressed, and read back as written.
    tenant(&*store, "acme", "0").await;
    let run = begin("acme", "0");
    let mut r = receipt_of(&run, "rejected_input");
    r.json = format!(
        r#"{{"status":"rejected_input","code":"invalid_input","output":null,"receipt":{{"receipt":"{}","agent":"acme/review","version":"1.0.0","node":"review","status":"rejected_input","code":"invalid_input","input_sha256":"{}","output_sha256":null,"attempts":[],"cost":{{"amount":"0","currency":null}},"spent":{{"amount":"0","currency":null}},"reserved":{{"amount":"0","currency":null}},"delegated":[]}},"errors":[{{"pointer":"/document","path":"request.document","code":"missing_field","message":"request.document: required field is missing (missing_field)"}}]}}"#,
        r.id,
        "5e".repeat(32)
    );
    store
        .record_receipts(std::slice::from_ref(&r))
        .await
        .unwrap();
    assert_eq!(store.receipt("acme", &r.id).await.unwrap().unwrap(), r);
    let stored: Vec<u8> = sqlx::query_scalar("SELECT document FROM receipts WHERE id = $1")
        .bind(&r.id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored[0], 0x02, "the tag of a frame over dictionary v2");
    assert!(
        stored.len() * 3 < r.json.len(),
        "{} bytes stored for {} of JSON",
        stored.len(),
        r.json.len()
    );

    // A row written over dictionary v1 (before v2) still reads.
    let v1_row = "0128b52ffd20767500002076317d7d020041e71af1cf2482";
    let v1_row: Vec<u8> = (0..v1_row.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&v1_row[i..i + 2], 16).unwrap())
        .collect();
    sqlx::query("UPDATE receipts SET document = $1 WHERE id = $2")
        .bind(v1_row)
        .bind(&r.id)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(
        store.receipt("acme", &r.id).await.unwrap().unwrap().json,
        r#"{"status":"rejected_input","code":"invalid_input","output":null,"receipt":{"receipt":"rcpt_v1","agent":"acme/review"}}"#
    );

    // A damaged row is an error that names it.
    sqlx::query("UPDATE receipts SET document = $1 WHERE id = $2")
        .bind(vec![0x02u8, 0x28, 0xb5, 0x2f])
        .bind(&r.id)
        .execute(&pool)
        .await
        .unwrap();
    let error = store.receipt("acme", &r.id).await.unwrap_err().to_string();
    assert!(error.contains(&format!("`{}`", r.id)), "{error}");
    pool.close().await;
}

fn file_of(tenant: &str, id: &str, size: u64, created_ms: i64) -> FileMeta {
    FileMeta {
        id: id.into(),
        tenant: tenant.into(),
        sha256: format!("{id:0>64}"),
        size,
        media_type: "application/octet-stream".into(),
        created_ms,
        expires_ms: None,
        source: None,
    }
}

/// A tenant's files: listed oldest first and only its own, counted by size, refused past the
/// quota with nothing recorded, and deleted by id (which frees their bytes in the count).
async fn files_are_listed_counted_and_deleted(url: String) {
    let store = open(&url).await;
    assert_eq!(store.stored_bytes("a").await.unwrap(), 0);
    assert!(store.files("a").await.unwrap().is_empty());
    let first = file_of("a", "f1", 600, 1);
    let second = file_of("a", "f2", 400, 2);
    store.put_file(&second, 1_000).await.unwrap();
    store.put_file(&first, 1_000).await.unwrap();
    store
        .put_file(&file_of("b", "g1", 5, 1), 1_000)
        .await
        .unwrap();
    assert_eq!(
        store.files("a").await.unwrap(),
        vec![first.clone(), second.clone()]
    );
    assert_eq!(store.stored_bytes("a").await.unwrap(), 1_000);
    assert_eq!(store.stored_bytes("b").await.unwrap(), 5);
    // Full: one byte more is refused, saying how much is stored, and nothing is recorded.
    match store.put_file(&file_of("a", "f3", 1, 3), 1_000).await {
        Err(StoreError::Quota {
            stored,
            size,
            limit,
        }) => assert_eq!((stored, size, limit), (1_000, 1, 1_000)),
        other => panic!("expected a quota refusal, got {other:?}"),
    }
    assert_eq!(store.file("a", "f3").await.unwrap(), None);
    assert_eq!(store.stored_bytes("a").await.unwrap(), 1_000);
    // Deleting frees the room; deleting again finds nothing.
    assert_eq!(store.delete_file("f1").await.unwrap(), Some(first));
    assert_eq!(store.delete_file("f1").await.unwrap(), None);
    assert_eq!(store.file("a", "f1").await.unwrap(), None);
    assert_eq!(store.stored_bytes("a").await.unwrap(), 400);
    store
        .put_file(&file_of("a", "f3", 600, 3), 1_000)
        .await
        .unwrap();
    assert_eq!(store.stored_bytes("a").await.unwrap(), 1_000);
    // Another tenant's count is its own.
    assert_eq!(store.files("b").await.unwrap().len(), 1);
}

/// The sweep's two questions: which files expired (any tenant's, soonest first, at most the
/// limit, never one without an expiry), and whose turn it is (twenty processes asking at once:
/// one gets it; nobody else until it lapses).
async fn expired_files_are_found_and_turns_taken_once(url: String) {
    let store = open(&url).await;
    let with = |tenant: &str, id: &str, expires_ms: Option<i64>| FileMeta {
        expires_ms,
        ..file_of(tenant, id, 1, 1)
    };
    for file in [
        with("a", "late", Some(300)),
        with("b", "early", Some(100)),
        with("a", "never", None),
        with("b", "future", Some(10_000)),
        with("a", "now", Some(500)),
    ] {
        store.put_file(&file, u64::MAX).await.unwrap();
    }
    let ids = |files: Vec<FileMeta>| files.into_iter().map(|f| f.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.expired_files(500, 10).await.unwrap()),
        ["early", "late", "now"]
    );
    assert_eq!(
        ids(store.expired_files(500, 2).await.unwrap()),
        ["early", "late"]
    );
    assert!(store.expired_files(99, 10).await.unwrap().is_empty());

    let mut tasks = Vec::new();
    for _ in 0..20 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store.take_turn("sweep", 2_000, 1_000).await.unwrap()
        }));
    }
    let mut taken = 0;
    for task in tasks {
        taken += usize::from(task.await.unwrap());
    }
    assert_eq!(taken, 1, "the turn was taken {taken} times at once");
    assert!(!store.take_turn("sweep", 3_000, 1_999).await.unwrap());
    assert!(store.take_turn("sweep", 4_000, 2_001).await.unwrap());
    // Another turn is another name.
    assert!(store.take_turn("other", 4_000, 2_001).await.unwrap());
}

/// Forty uploads of one tenant at once, each 100 bytes against a quota of 1,000: exactly ten
/// are recorded, whatever the interleaving (each is counted inside its own transaction).
async fn concurrent_uploads_never_pass_the_quota(url: String) {
    let store = open(&url).await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store
                .put_file(&file_of("a", &format!("f{i}"), 100, i), 1_000)
                .await
        }));
    }
    let mut recorded = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(()) => recorded += 1,
            Err(StoreError::Quota { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(recorded, 10);
    assert_eq!(store.stored_bytes("a").await.unwrap(), 1_000);
    assert_eq!(store.files("a").await.unwrap().len(), 10);
}

/// The console's reads: sessions found until they expire and gone when ended; an account's
/// runs newest first, page by page, by agent, status and time, open runs included and
/// another tenant's never; a mandate's approvals newest first with their state now.
/// An input as a caller sends it: escapes, non-ASCII text, nesting (kept byte for byte).
const INPUT_KEPT: &str = r#"{"text":"Grüße, \"world\" \u00e9\n","items":[1,2,{"k":null}]}"#;

async fn console_sessions_runs_and_approvals(url: String) {
    let store = open(&url).await;
    tenant(&*store, "acme", "10").await;
    tenant(&*store, "other", "10").await;

    let session = ConsoleSession {
        id_sha256: "s1".into(),
        account: "acme".into(),
        csrf: "token".into(),
        created_ms: 100,
        expires_ms: 200,
    };
    store.create_console_session(&session).await.unwrap();
    assert_eq!(
        store.console_session("s1", 150).await.unwrap(),
        Some(session.clone())
    );
    assert_eq!(store.console_session("s1", 200).await.unwrap(), None);
    assert_eq!(store.console_session("s2", 150).await.unwrap(), None);
    let later = ConsoleSession {
        id_sha256: "s2".into(),
        expires_ms: 10_000,
        ..session.clone()
    };
    store.create_console_session(&later).await.unwrap();
    // Ending one also sweeps the expired.
    store.end_console_session("s2", 300).await.unwrap();
    assert_eq!(store.console_session("s2", 150).await.unwrap(), None);
    assert_eq!(store.console_session("s1", 150).await.unwrap(), None);
    // A session for no account is refused by the database.
    let orphan = ConsoleSession {
        id_sha256: "s3".into(),
        account: "nobody".into(),
        ..session
    };
    assert!(store.create_console_session(&orphan).await.is_err());

    // Five runs of acme (ids in time order, as UUIDv7 ones are), one of another tenant.
    let mut runs = Vec::new();
    for (i, (agent, status)) in [
        ("acme/review", Some("succeeded")),
        ("acme/review", Some("invalid_output")),
        ("acme/other", Some("succeeded")),
        ("acme/review", None),
        ("acme/review", Some("succeeded")),
    ]
    .into_iter()
    .enumerate()
    {
        let mut run = begin("acme", "0.01");
        run.run = format!("rcpt_console_{i}");
        run.agent = agent.into();
        run.at_ms = 1_000 + i as i64;
        if i == 0 {
            // Kept with the run for its page: the input as received, and its trace.
            run.input_json = Some(INPUT_KEPT.to_owned());
            run.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".to_owned());
        }
        assert_eq!(store.begin_run(&run).await.unwrap(), Begun::Started);
        if let Some(status) = status {
            let settlement = if status == "succeeded" {
                charge("acme", "0.01")
            } else {
                Settlement::Void
            };
            store
                .finish_run(&receipt_of(&run, status), &settlement)
                .await
                .unwrap();
        }
        runs.push(run.run);
    }
    let mut theirs = begin("other", "0.01");
    theirs.run = "rcpt_console_9".into();
    store.begin_run(&theirs).await.unwrap();

    // What a run's page shows beside its receipt: only to its tenant.
    assert_eq!(
        store.run_details("acme", &runs[0]).await.unwrap(),
        Some(aelc_store::RunDetails {
            input_json: Some(INPUT_KEPT.to_owned()),
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".to_owned()),
        })
    );
    assert_eq!(
        store.run_details("acme", &runs[1]).await.unwrap(),
        Some(aelc_store::RunDetails {
            input_json: None,
            trace_id: None,
        }),
        "a run begun without its input keeps none"
    );
    assert_eq!(store.run_details("other", &runs[0]).await.unwrap(), None);
    assert_eq!(
        store.run_details("acme", "rcpt_nothing").await.unwrap(),
        None
    );

    let ids = |rows: Vec<aelc_store::RunRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = store
        .runs_page(
            "acme",
            &RunQuery {
                limit: 10,
                ..RunQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].id, runs[4]);
    assert_eq!(all[0].status, Some(Status::Succeeded));
    assert_eq!(
        all[1].status, None,
        "the open run is listed, without a status"
    );
    assert_eq!(all[1].state, "open");
    assert_eq!(all[1].reserved, amt("0.01"));
    let page = |before: Option<&str>| RunQuery {
        before: before.map(str::to_owned),
        limit: 2,
        ..RunQuery::default()
    };
    let first = ids(store.runs_page("acme", &page(None)).await.unwrap());
    assert_eq!(first, [runs[4].clone(), runs[3].clone()]);
    let second = ids(store
        .runs_page("acme", &page(Some(&first[1])))
        .await
        .unwrap());
    assert_eq!(second, [runs[2].clone(), runs[1].clone()]);
    let last = ids(store
        .runs_page("acme", &page(Some(&second[1])))
        .await
        .unwrap());
    assert_eq!(last, [runs[0].clone()]);
    assert!(store
        .runs_page("acme", &page(Some(&runs[0])))
        .await
        .unwrap()
        .is_empty());

    let of_agent = RunQuery {
        agent: Some("acme/other".into()),
        limit: 10,
        ..RunQuery::default()
    };
    assert_eq!(
        ids(store.runs_page("acme", &of_agent).await.unwrap()),
        [runs[2].clone()]
    );
    let succeeded = RunQuery {
        status: Some(Status::Succeeded),
        agent: Some("acme/review".into()),
        limit: 10,
        ..RunQuery::default()
    };
    assert_eq!(
        ids(store.runs_page("acme", &succeeded).await.unwrap()),
        [runs[4].clone(), runs[0].clone()]
    );
    let recent = RunQuery {
        since_ms: Some(1_003),
        limit: 10,
        ..RunQuery::default()
    };
    assert_eq!(
        ids(store.runs_page("acme", &recent).await.unwrap()),
        [runs[4].clone(), runs[3].clone()]
    );
    assert_eq!(
        ids(store
            .runs_page(
                "other",
                &RunQuery {
                    limit: 10,
                    ..RunQuery::default()
                }
            )
            .await
            .unwrap()),
        ["rcpt_console_9".to_owned()]
    );
    assert!(store
        .runs_page(
            "nobody",
            &RunQuery {
                limit: 10,
                ..RunQuery::default()
            }
        )
        .await
        .unwrap()
        .is_empty());

    // What acme paid, per agent and day: the two succeeded runs of acme/review (0.01 each,
    // paid to acme itself here) and one of acme/other, at the receipts' time (day 0).
    let spend = store.spend_by_agent("acme", 0).await.unwrap();
    assert_eq!(
        spend,
        [
            (0, "acme/other".to_owned(), amt("0.01")),
            (0, "acme/review".to_owned(), amt("0.02"))
        ]
    );
    assert!(store.spend_by_agent("other", 0).await.unwrap().is_empty());

    // Receipts per day and status (all three acme/review receipts are of day 0).
    let days = store.agent_days("acme/review", 0).await.unwrap();
    assert_eq!(days.len(), 1, "{days:?}");
    assert_eq!(
        (days[0].0, days[0].1.succeeded, days[0].1.invalid_output),
        (0, 2, 1)
    );
    assert!(store
        .agent_days("acme/review", 86_400_000)
        .await
        .unwrap()
        .is_empty());

    // Approvals of one mandate, newest first, expired ones reported so.
    let mut old = approval("appr_console_old", 50);
    old.created_ms = 1;
    let mut new = approval("appr_console_new", 10_000);
    new.created_ms = 2;
    let mut elsewhere = approval("appr_console_else", 10_000);
    elsewhere.mandate = "demo/other".into();
    for a in [&old, &new, &elsewhere] {
        store.create_approval(a).await.unwrap();
    }
    let listed = store.approvals("demo/sandbox", 100).await.unwrap();
    let states: Vec<(&str, ApprovalState)> =
        listed.iter().map(|a| (a.id.as_str(), a.state)).collect();
    assert_eq!(
        states,
        [
            ("appr_console_new", ApprovalState::Pending),
            ("appr_console_old", ApprovalState::Expired)
        ]
    );
    assert!(store.approvals("demo/none", 100).await.unwrap().is_empty());
}
