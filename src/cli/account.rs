//! `aelc account add NAME [--currency C]` (prints the API key once) and
//! `aelc fund NAME AMOUNT` (`"5 EUR"`, `5EUR` or `5`): the tenants of the gateway and the MCP
//! server, in the store of the project (or `--store URL`).

use std::path::PathBuf;

use super::args::{AccountArgs, AccountCommand, FundArgs, StoreArgs};
use super::{Output, Status};
use crate::driver::{self, DiskWorld};

pub fn run(out: &Output, args: &AccountArgs) -> Status {
    match &args.command {
        AccountCommand::Add {
            name,
            currency,
            store,
        } => with_store(out, store, |s| async move {
            let key =
                aelc_gateway::accounts::add_account(&*s, name, currency, aelc_gateway::now_ms())
                    .await?;
            super::print_line(&format!("created account {name} ({currency})"));
            super::print_line(&format!("API key (shown once): {key}"));
            Ok(())
        }),
    }
}

pub fn fund(out: &Output, args: &FundArgs) -> Status {
    with_store(out, &args.store, |s| async move {
        let balance =
            aelc_gateway::accounts::fund(&*s, &args.name, &args.amount, aelc_gateway::now_ms())
                .await?;
        super::print_line(&format!("{}: {balance} available", args.name));
        Ok(())
    })
}

/// Opens the store named by `--store`, `AELC_STORE` or the project's `.ael/store.db`, and runs
/// `f` on it.
pub fn with_store<F, Fut>(out: &Output, args: &StoreArgs, f: F) -> Status
where
    F: FnOnce(std::sync::Arc<dyn aelc_store::Store>) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let state_dir = match (&args.store, std::env::var("AELC_STORE").ok()) {
        (None, None) => {
            let start = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
            match driver::find_project_root(&DiskWorld, &start) {
                Some(root) => root.join(".ael"),
                None => {
                    return out.fatal(&format!(
                        "no ael.toml at or above {}: pass --store URL or --project DIR",
                        start.display()
                    ))
                }
            }
        }
        _ => PathBuf::from(".ael"),
    };
    let url = super::serve::store_url(args.store.as_deref(), &state_dir);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return out.fatal(&format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(async {
        let store = aelc_store::open(&url)
            .await
            .map_err(|e| format!("cannot open the store {url}: {e}"))?;
        f(store).await
    });
    match result {
        Ok(()) => Status::Ok,
        Err(message) => {
            super::eprint_line(&format!("error: {message}"));
            Status::Failed
        }
    }
}
