//! `aelc serve [DIR] [--addr A] [--store URL]`: builds the project, then serves its agents
//! with the gateway (`aelc-gateway`, spec §13) until Ctrl-C or SIGTERM; in-flight runs finish
//! first. `--built DIR` serves a build output as it is, without the compiler (a deployment).
//!
//! The store defaults to `.ael/store.db` (SQLite) in the project (with `--built`, the project
//! the build output is the `target/ael` of; a build output outside a project needs `--store`);
//! uploaded bytes live in `.ael/files/`, the journal of refused calls' receipts in
//! `.ael/refusals/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::args::{BuildArgs, ServeArgs};
use super::{Output, Status};
use crate::driver::{self, DiskWorld};

/// Where a served project's pieces are: its build output, its `.ael/` folder, its store.
pub struct Served {
    pub built: PathBuf,
    pub state_dir: PathBuf,
    pub store_url: String,
    /// Where uploaded files live (`files_url`): `None` for the project's `.ael/files/`.
    pub files_url: Option<String>,
}

/// Builds the project at or above `path` (unless `built` names a build output) and says where
/// its pieces are. Build diagnostics go to stderr, so stdout stays the command's own (the MCP
/// server speaks on it).
pub fn prepare(
    out: &Output,
    path: Option<&Path>,
    built: Option<&Path>,
    store: Option<&str>,
) -> Result<Served, Status> {
    let (state_dir, built) = match built {
        Some(built) => (built_state_dir(out, built, store)?, built.to_owned()),
        None => {
            let start = path.map_or_else(|| PathBuf::from("."), Path::to_owned);
            let Some(root) = driver::find_project_root(&DiskWorld, &start) else {
                return Err(out.fatal(&format!("no ael.toml at or above {}", start.display())));
            };
            let build = BuildArgs {
                path: Some(root.clone()),
                out: None,
                check: false,
            };
            let status = super::build::run(out, &build);
            if status != Status::Ok {
                return Err(status);
            }
            (root.join(".ael"), root.join("target").join("ael"))
        }
    };
    Ok(Served {
        store_url: store_url(store, &state_dir),
        files_url: files_url(None),
        built,
        state_dir,
    })
}

/// The `.ael/` folder of a build output served with `--built`: the project's the build came
/// from (`ROOT/target/ael` → `ROOT/.ael`, where `aelc account add` put the accounts), so every
/// key made for the project works. A build output found in no project has no default store:
/// without `--store` (or `AELC_STORE`) that is refused, naming the store it would have been,
/// rather than a new empty store opened where every key answers 401.
fn built_state_dir(out: &Output, built: &Path, store: Option<&str>) -> Result<PathBuf, Status> {
    let absolute = std::path::absolute(built).unwrap_or_else(|_| built.to_owned());
    let root = absolute
        .parent()
        .filter(|_| absolute.file_name().is_some_and(|n| n == "ael"))
        .filter(|target| target.file_name().is_some_and(|n| n == "target"))
        .and_then(Path::parent)
        .filter(|root| root.join("ael.toml").is_file());
    if let Some(root) = root {
        return Ok(root.join(".ael"));
    }
    let explicit = store.is_some() || std::env::var("AELC_STORE").is_ok_and(|u| !u.is_empty());
    if explicit {
        return Ok(built.join(".ael"));
    }
    Err(out.fatal(&format!(
        "{} is not the `target/ael` of a project (no ael.toml two folders up), so it has no \
         default store; without --store this would open a new, empty one at {} (where no \
         account exists yet): pass --store URL or set AELC_STORE",
        built.display(),
        store_url(None, &built.join(".ael"))
    )))
}

/// Loads the served project and opens its store: the state the gateway and the MCP server
/// share.
pub async fn app_state(
    served: &Served,
    limits: &aelc_gateway::Limits,
) -> Result<aelc_gateway::AppState, String> {
    let project = aelc_gateway::Project::load(&served.built)?;
    let store = aelc_store::open(&served.store_url)
        .await
        .map_err(|e| format!("cannot open the store {}: {e}", served.store_url))?;
    // The state folder is `<root>/.ael`: the files live in its `files/`.
    let root = served
        .state_dir
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let files = aelc_gateway::files::open(served.files_url.as_deref(), root)?;
    let journal = served.state_dir.join("refusals");
    aelc_gateway::AppState::new(project, store, files, &journal, limits).await
}

pub fn run(out: &Output, args: &ServeArgs) -> Status {
    let mut served = match prepare(
        out,
        args.path.as_deref(),
        args.built.as_deref(),
        args.store.as_deref(),
    ) {
        Ok(s) => s,
        Err(status) => return status,
    };
    served.files_url = files_url(args.files.as_deref());
    if args.header_timeout == 0 || args.idle_timeout == 0 {
        return out.fatal("--header-timeout and --idle-timeout are at least 1 second");
    }
    if let Some(url) = &args.trace_url {
        if let Err(why) = aelc_gateway::console::check_trace_link(url) {
            return out.fatal(&format!("--trace-url {url}: {why}"));
        }
    }
    let mut limits = aelc_gateway::Limits {
        max_connections: args.max_connections,
        max_connections_per_client: args
            .max_connections_per_client
            .unwrap_or_else(|| aelc_gateway::per_client_share(args.max_connections)),
        header_timeout: Duration::from_secs(args.header_timeout),
        idle_timeout: Duration::from_secs(args.idle_timeout),
        max_uploads: args.max_uploads,
        max_runs: args.max_runs,
        body_timeout: Duration::from_secs(args.body_timeout),
        lease: Duration::from_secs(args.lease),
        ..aelc_gateway::Limits::default()
    };
    init_logs();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return out.fatal(&format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // The bound port makes the default name unique on this host while the gateway lives,
        // and the same after a restart in place.
        limits.instance = args
            .instance
            .clone()
            .unwrap_or_else(|| aelc_gateway::lease::instance_name("gateway", addr.port()));
        let mut state = app_state(&served, &limits).await?;
        state.keep_inputs = !args.no_keep_inputs;
        state.trace_link = args.trace_url.clone();
        // The one line a script waits for (tests read the port from it).
        super::print_line(&format!(
            "serving {} agent(s) on http://{addr}",
            state.project.agents.len()
        ));
        tracing::info!(%addr, store = %redacted(&served.store_url), files = %state.files.location(), "serving");
        let state = Arc::new(state);
        // MCP over Streamable HTTP at `/mcp`, on the same port and store, hiring through the
        // same gateway state (its run slots, lease and calls in flight).
        let cancel = aelc_mcp::http::CancellationToken::new();
        let mcp = aelc_mcp::http::router(
            aelc_mcp::McpServer::for_tokens(
                aelc_mcp::market::Market::local(Arc::clone(&state)),
                Arc::clone(&state.store),
            ),
            Arc::clone(&state.store),
            &args.mcp.limits(),
            None,
            cancel.clone(),
        );
        let shutdown = async move {
            shutdown_signal().await;
            // Ends the MCP sessions' open streams, so the connections can finish.
            cancel.cancel();
        };
        aelc_gateway::serve(listener, state, &limits, mcp, shutdown)
            .await
            .map_err(|e| format!("the server stopped: {e}"))
    });
    match result {
        Ok(()) => Status::Ok,
        Err(message) => out.fatal(&message),
    }
}

/// `--files`, else `AELC_FILES`; `None` (neither, or empty) is the project's `.ael/files/`.
pub fn files_url(flag: Option<&str>) -> Option<String> {
    flag.map(str::to_owned)
        .or_else(|| std::env::var("AELC_FILES").ok())
        .filter(|url| !url.is_empty())
}

/// `--store`, else `AELC_STORE`, else SQLite under the project's `.ael/`.
pub fn store_url(flag: Option<&str>, state_dir: &Path) -> String {
    if let Some(url) = flag {
        return url.to_owned();
    }
    if let Ok(url) = std::env::var("AELC_STORE") {
        if !url.is_empty() {
            return url;
        }
    }
    // `aelc_store::open` makes the file's folder (`.ael/`) on first use.
    format!("sqlite:{}", state_dir.join("store.db").display())
}

/// A store URL without its password, for the log.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

pub fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AELC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing the runs in flight");
}
