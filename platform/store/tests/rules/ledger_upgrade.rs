//! The conformance rule for migration 0009 (a ledger of transfers only, `entries` a view): a
//! database written before it reads the same entries in the same order after it, a database
//! whose entries do not match its transfers is refused rather than changed, and the ledger goes
//! on balancing afterwards.
//!
//! The old database is made by the migrations before 0009 (copied to a temp folder, so their
//! checksums are those `open` finds) and filled with the statements the store ran then: each
//! transfer a row, and its debit and credit rows in `entries`, with ids interleaved as two
//! concurrent PostgreSQL transactions could leave them.

use aelc_store::{Settlement, Store};
use sqlx::{AnyPool, Row};

/// The first migration whose ledger is transfers only.
const TRANSFERS_ONLY: u32 = 9;

/// An entry as a tuple: (transfer, account, credit, nano-units, kind, at_ms).
type Row6 = (String, String, bool, i64, String, i64);

/// A transfer of the old history: (id, kind, debit, credit, nano-units, at_ms) and its two
/// entries' ids (debit, credit).
type OldTransfer = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    i64,
    i64,
    i64,
    i64,
);

pub async fn old_ledgers_read_the_same_after_the_upgrade(url: String) {
    let (pool, dialect) = old_database(&url).await;
    // The two reservations' entries interleave.
    let history: [OldTransfer; 4] = [
        ("tr_1", "fund", "@funding", "t", 10_000_000_000, 1, 1, 2),
        (
            "r1:reserve",
            "reserve",
            "t",
            "t@held",
            4_000_000_000,
            2,
            3,
            5,
        ),
        (
            "r2:reserve",
            "reserve",
            "t",
            "t@held",
            3_000_000_000,
            2,
            4,
            6,
        ),
        ("r1:post", "post", "t@held", "acme", 4_000_000_000, 3, 7, 8),
    ];
    for (account, amount) in [("t", 3), ("t@held", 3), ("acme", 4), ("@funding", -10)] {
        let nano = amount * 1_000_000_000i64;
        if account == "@funding" {
            sqlx::query("UPDATE balances SET amount = $1 WHERE account = $2")
                .bind(nano)
                .bind(account)
                .execute(&pool)
                .await
                .expect("funding");
            continue;
        }
        if !account.contains('@') {
            sqlx::query("INSERT INTO accounts (name, currency, created_ms) VALUES ($1, 'EUR', 1)")
                .bind(account)
                .execute(&pool)
                .await
                .expect("account");
        }
        sqlx::query("INSERT INTO balances (account, amount) VALUES ($1, $2)")
            .bind(account)
            .bind(nano)
            .execute(&pool)
            .await
            .expect("balance");
    }
    for (id, kind, debit, credit, nano, at, debit_id, credit_id) in history {
        sqlx::query(
            "INSERT INTO transfers (id, kind, debit_account, credit_account, amount, currency, \
             run, at_ms) VALUES ($1, $2, $3, $4, $5, 'EUR', NULL, $6)",
        )
        .bind(id)
        .bind(kind)
        .bind(debit)
        .bind(credit)
        .bind(nano)
        .bind(at)
        .execute(&pool)
        .await
        .expect("transfer");
        for (entry, account, side) in [(debit_id, debit, 0i64), (credit_id, credit, 1)] {
            sqlx::query(
                "INSERT INTO entries (id, transfer, account, credit, amount, kind, at_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(entry)
            .bind(id)
            .bind(account)
            .bind(side)
            .bind(nano)
            .bind(kind)
            .bind(at)
            .execute(&pool)
            .await
            .expect("entry");
        }
    }
    let before_t = old_entries(&pool, "t").await;
    let before_acme = old_entries(&pool, "acme").await;
    assert_eq!(
        before_t.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        [
            "tr_1",
            "r1:reserve",
            "r2:reserve",
            "r1:reserve",
            "r2:reserve",
            "r1:post"
        ],
        "the old order (by entry id) interleaves the two reservations"
    );

    // An entry that is not its transfer's side: the upgrade refuses the database, changing
    // nothing, and the same database set right upgrades.
    sqlx::query("UPDATE entries SET amount = amount + 1 WHERE id = 4")
        .execute(&pool)
        .await
        .expect("spoil an entry");
    pool.close().await;
    let refused = aelc_store::open(&url)
        .await
        .err()
        .expect("a spoiled ledger is refused");
    assert!(
        refused
            .to_string()
            .contains("every_entry_matches_its_transfer"),
        "{dialect}: {refused}"
    );
    let (pool, _) = connect(&url).await;
    sqlx::query("UPDATE entries SET amount = amount - 1 WHERE id = 4")
        .execute(&pool)
        .await
        .expect("mend the entry");
    pool.close().await;

    let store = aelc_store::open(&url).await.expect("the upgrade");
    assert_eq!(entries(&*store, "t").await, before_t, "{dialect}: t");
    assert_eq!(
        entries(&*store, "acme").await,
        before_acme,
        "{dialect}: acme"
    );

    // New transfers are one row each, read after the old ones, and the ledger balances.
    let mut run = crate::begin("t", "2");
    run.run = "r3".to_owned();
    store.begin_run(&run).await.expect("begin");
    let settle = Settlement::Charge {
        payee: "acme".into(),
        amount: crate::amt("1.5"),
    };
    store
        .finish_run(&crate::receipt_of(&run, "succeeded"), &settle)
        .await
        .expect("finish");
    let after = entries(&*store, "t").await;
    assert_eq!(
        after[..before_t.len()],
        before_t[..],
        "{dialect}: history kept"
    );
    let new: Vec<(&str, &str, bool)> = after[before_t.len()..]
        .iter()
        .map(|e| (e.0.as_str(), e.1.as_str(), e.2))
        .collect();
    assert_eq!(
        new,
        [
            ("r3:reserve", "t", false),
            ("r3:reserve", "t@held", true),
            ("r3:post", "t@held", false),
            ("r3:void", "t@held", false),
            ("r3:void", "t", true),
        ],
        "{dialect}: new entries in the order written"
    );
    crate::assert_ledger(&*store, &["t", "acme"]).await;
}

/// A pool on `url` (SQLite's file created) and the name of its migrations' folder.
async fn connect(url: &str) -> (AnyPool, &'static str) {
    sqlx::any::install_default_drivers();
    let (dialect, connect) = match url.strip_prefix("sqlite:") {
        Some(path) => {
            let parent = std::path::Path::new(path).parent().expect("a folder");
            std::fs::create_dir_all(parent).expect("the store's folder");
            ("sqlite", format!("sqlite://{path}?mode=rwc"))
        }
        None => ("postgres", url.to_owned()),
    };
    let pool = AnyPool::connect(&connect).await.expect("the database");
    (pool, dialect)
}

/// Opens `url` and applies the migrations before 0009 only.
async fn old_database(url: &str) -> (AnyPool, &'static str) {
    let (pool, dialect) = connect(url).await;
    let all = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(dialect);
    let old = std::env::temp_dir().join(format!(
        "aelc-ledger-upgrade-{dialect}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&old).expect("a temp folder");
    for file in std::fs::read_dir(&all).expect("the migrations") {
        let path = file.expect("a migration").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let version: u32 = name
            .get(..4)
            .and_then(|v| v.parse().ok())
            .unwrap_or(u32::MAX);
        if version < TRANSFERS_ONLY {
            std::fs::copy(&path, old.join(name)).expect("copy a migration");
        }
    }
    sqlx::migrate::Migrator::new(old.as_path())
        .await
        .expect("the old migrations")
        .run(&pool)
        .await
        .expect("migrate to 0008");
    let _ = std::fs::remove_dir_all(&old);
    (pool, dialect)
}

/// `tenant`'s entries as `read_entries` read them before 0009: by the `entries` table's id.
async fn old_entries(pool: &AnyPool, tenant: &str) -> Vec<Row6> {
    let rows = sqlx::query(
        "SELECT transfer, account, credit, amount, kind, at_ms FROM entries \
         WHERE account IN ($1, $2) ORDER BY id",
    )
    .bind(tenant)
    .bind(aelc_store::held_account(tenant))
    .fetch_all(pool)
    .await
    .expect("old entries");
    rows.iter()
        .map(|r| {
            (
                r.get(0),
                r.get(1),
                r.get::<i64, _>(2) == 1,
                r.get(3),
                r.get(4),
                r.get(5),
            )
        })
        .collect()
}

async fn entries(store: &dyn Store, tenant: &str) -> Vec<Row6> {
    store
        .entries(tenant)
        .await
        .expect("entries")
        .into_iter()
        .map(|e| {
            let nano = i64::try_from(e.amount.0 / 1_000_000_000).expect("an amount in range");
            (e.transfer, e.account, e.credit, nano, e.kind, e.at_ms)
        })
        .collect()
}
