//! The human's side of the MCP server (spec §14): `aelc mandate create|show|list`,
//! `aelc mandate token|revoke` (the bearer tokens of MCP over HTTP, one mandate each),
//! `aelc approve ID [--no-run]`, `aelc reject ID`, and `aelc mcp --mandate ACCOUNT/NAME`, the
//! server itself over stdio (or, with `--http`, over Streamable HTTP for that mandate's tokens).
//!
//! `aelc approve ID` approves a pending call and runs it at once (printing its receipt and
//! output); with `--no-run` it only approves, and the agent re-submits the call with
//! `approval: ID`. Either way the approval is used once, for exactly that call.

use std::sync::Arc;

use aelc_store::{Mandate, MandateToken, Store};

use super::account::with_store;
use super::args::{ApproveArgs, MandateArgs, MandateCommand, McpArgs, RejectArgs};
use super::serve::{app_state, prepare};
use super::{Output, Status};

pub fn run(out: &Output, args: &MandateArgs) -> Status {
    match &args.command {
        MandateCommand::Create {
            id,
            budget,
            threshold,
            allow,
            deny,
            expires,
            store,
        } => with_store(out, store, |s| async move {
            let (account, name) = split_id(id)?;
            let Some(owner) = s.account(account).await.map_err(|e| e.to_string())? else {
                return Err(format!(
                    "no account `{account}` (create it with `aelc account add {account}`)"
                ));
            };
            let (budget, budget_currency) = aelc_gateway::accounts::parse_money(budget)?;
            let (threshold, threshold_currency) = aelc_gateway::accounts::parse_money(threshold)?;
            for c in [budget_currency, threshold_currency].into_iter().flatten() {
                if c != owner.currency {
                    return Err(format!(
                        "`{account}` pays in {}; {c} was given",
                        owner.currency
                    ));
                }
            }
            for pattern in allow.iter().chain(deny) {
                if aelc_mcp::scope::matcher(pattern).is_none() {
                    return Err(format!("`{pattern}` is not a valid glob"));
                }
            }
            let now = aelc_gateway::now_ms();
            let expires_ms = expires
                .as_deref()
                .map(|e| parse_expiry(e, now))
                .transpose()?;
            let mandate = Mandate {
                account: account.to_owned(),
                name: name.to_owned(),
                budget,
                currency: owner.currency.clone(),
                threshold,
                allow: allow.clone(),
                deny: deny.clone(),
                expires_ms,
                created_ms: now,
            };
            s.create_mandate(&mandate)
                .await
                .map_err(|e| e.to_string())?;
            super::print_line(&describe(&mandate, &*s).await?);
            Ok(())
        }),
        MandateCommand::Show { id, store } => with_store(out, store, |s| async move {
            let mandate = s
                .mandate(id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no mandate {id}"))?;
            super::print_line(&describe(&mandate, &*s).await?);
            Ok(())
        }),
        MandateCommand::Token { id, expires, store } => with_store(out, store, |s| async move {
            let mandate = s
                .mandate(id)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no mandate {id} (aelc mandate create {id} …)"))?;
            let now = aelc_gateway::now_ms();
            let expires_ms = match expires {
                Some(e) => Some(parse_expiry(e, now)?),
                None => mandate.expires_ms,
            };
            if let Some(at) = expires_ms.filter(|at| *at <= now) {
                return Err(format!(
                    "a token of {id} would have expired already (at {}){}",
                    format_ms(at),
                    if expires.is_none() {
                        "; the mandate itself has expired: a human creates a new one"
                    } else {
                        ""
                    }
                ));
            }
            let token = aelc_mcp::http::new_token();
            s.create_mandate_token(&MandateToken {
                token_sha256: aelc_mcp::http::token_sha256(&token),
                mandate: mandate.id(),
                created_ms: now,
                expires_ms,
                revoked_ms: None,
            })
            .await
            .map_err(|e| e.to_string())?;
            // The token alone on stdout (a script captures it); what it is on stderr.
            super::print_line(&token);
            super::eprint_line(&format!(
                "a bearer token for /mcp acting as the mandate {}{}; shown once, only its hash \
                 is stored (aelc mandate revoke TOKEN ends it)",
                mandate.id(),
                match expires_ms {
                    Some(ms) => format!(", until {}", format_ms(ms)),
                    None => String::new(),
                }
            ));
            Ok(())
        }),
        MandateCommand::Revoke { token, store } => with_store(out, store, |s| async move {
            let t = s
                .revoke_mandate_token(&aelc_mcp::http::token_sha256(token), aelc_gateway::now_ms())
                .await
                .map_err(|e| e.to_string())?;
            super::print_line(&format!(
                "revoked a token of the mandate {} at {}",
                t.mandate,
                format_ms(t.revoked_ms.unwrap_or_default())
            ));
            Ok(())
        }),
        MandateCommand::List { account, store } => with_store(out, store, |s| async move {
            for mandate in s
                .mandates(account.as_deref())
                .await
                .map_err(|e| e.to_string())?
            {
                super::print_line(&describe(&mandate, &*s).await?);
            }
            Ok(())
        }),
    }
}

async fn describe(m: &Mandate, store: &dyn Store) -> Result<String, String> {
    let used = store
        .mandate_use(&m.id())
        .await
        .map_err(|e| e.to_string())?;
    let c = &m.currency;
    Ok(format!(
        "{}: budget {} {c} (spent {}, reserved {}), approval above {} {c}, allows [{}], denies [{}]{}",
        m.id(),
        m.budget,
        used.spent,
        used.reserved,
        m.threshold,
        m.allow.join(", "),
        m.deny.join(", "),
        match m.expires_ms {
            Some(ms) => format!(", expires at {}", format_ms(ms)),
            None => String::new(),
        }
    ))
}

fn split_id(id: &str) -> Result<(&str, &str), String> {
    match id.split_once('/') {
        Some((a, n)) if aelc_gateway::accounts::valid_account_name(a) && !n.is_empty() => {
            Ok((a, n))
        }
        _ => Err(format!("`{id}` is not ACCOUNT/NAME (e.g. demo/sandbox)")),
    }
}

/// `2026-12-31T00:00:00Z` (RFC 3339), or a duration from now: `30m`, `24h`, `7d`.
fn parse_expiry(text: &str, now_ms: i64) -> Result<i64, String> {
    let unit = |s: &str, n: i64| {
        s.parse::<i64>()
            .ok()
            .map(|v| now_ms.saturating_add(v.saturating_mul(n)))
    };
    let by_duration = if let Some(v) = text.strip_suffix('m') {
        unit(v, 60_000)
    } else if let Some(v) = text.strip_suffix('h') {
        unit(v, 3_600_000)
    } else if let Some(v) = text.strip_suffix('d') {
        unit(v, 86_400_000)
    } else {
        None
    };
    if let Some(ms) = by_duration {
        return Ok(ms);
    }
    text.parse::<jiff::Timestamp>()
        .map(|t| t.as_millisecond())
        .map_err(|_| {
            format!("`{text}` is neither an RFC 3339 time nor a duration like 30m, 24h, 7d")
        })
}

fn format_ms(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| ms.to_string(), |t| t.to_string())
}

pub fn approve(out: &Output, args: &ApproveArgs) -> Status {
    if args.no_run {
        return with_store(out, &args.store, |s| async move {
            let a = s
                .decide_approval(&args.id, true, aelc_gateway::now_ms())
                .await
                .map_err(|e| e.to_string())?;
            super::print_line(&format!(
                "approved {} ({} for at most {} {}); the agent re-submits the call with approval: \"{}\"",
                a.id, a.agent, a.worst_case, a.currency, a.id
            ));
            Ok(())
        });
    }
    // Approve and run now: the project's agents, through the gateway's path.
    let served = match prepare(
        out,
        args.store.project.as_deref(),
        None,
        args.store.store.as_deref(),
    ) {
        Ok(s) => s,
        Err(status) => return status,
    };
    block_on(out, async {
        let state = Arc::new(app_state(&served, &process_limits("approve")).await?);
        // Once the call's money is reserved it is finished and settled whatever happens here:
        // Ctrl-C waits for it rather than leaving its reservation to the lease's sweep.
        tokio::spawn(async {
            while tokio::signal::ctrl_c().await.is_ok() {
                super::eprint_line(
                    "aelc approve: the call in flight finishes and settles before aelc exits",
                );
            }
        });
        let store = Arc::clone(&state.store);
        let now = aelc_gateway::now_ms();
        let approval = store
            .decide_approval(&args.id, true, now)
            .await
            .map_err(|e| e.to_string())?;
        let mandate = store
            .mandate(&approval.mandate)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("the mandate {} does not exist", approval.mandate))?;
        let agent = state
            .project
            .agent(&approval.agent)
            .ok_or_else(|| format!("this project has no agent {}", approval.agent))?;
        let input: serde_json::Value = serde_json::from_str(&approval.input_json)
            .map_err(|e| format!("the approval's input is not JSON: {e}"))?;
        store
            .use_approval(&aelc_store::ApprovalUse {
                id: approval.id.clone(),
                mandate: approval.mandate.clone(),
                agent: agent.name.clone(),
                version: agent.version.clone(),
                input_sha256: approval.input_sha256.clone(),
                at_ms: aelc_gateway::now_ms(),
            })
            .await
            .map_err(|e| e.to_string())?;
        let done = aelc_mcp::run_under_mandate(&state, &mandate, agent, &input).await;
        state.finish_in_flight().await;
        state.lease.release(&*state.store).await;
        let done = done?;
        super::print_line(&format!("approved and ran {}", approval.id));
        super::print_line(&done.text);
        Ok(())
    })
}

pub fn reject(out: &Output, args: &RejectArgs) -> Status {
    with_store(out, &args.store, |s| async move {
        let a = s
            .decide_approval(&args.id, false, aelc_gateway::now_ms())
            .await
            .map_err(|e| e.to_string())?;
        super::print_line(&format!("rejected {} ({})", a.id, a.agent));
        Ok(())
    })
}

pub fn mcp(out: &Output, args: &McpArgs) -> Status {
    // A gateway's agents need no project: only its store and the account's key.
    let served = match &args.gateway {
        Some(_) => None,
        None => match prepare(
            out,
            args.project.as_deref(),
            args.built.as_deref(),
            args.store.as_deref(),
        ) {
            Ok(s) => Some(s),
            Err(status) => return status,
        },
    };
    super::serve::init_logs();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return out.fatal(&format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(async {
        // The local market's gateway state: its calls in flight are finished before exit.
        let mut local = None;
        let (market, store) = match (&served, &args.gateway) {
            (Some(served), _) => {
                let state = Arc::new(app_state(served, &process_limits("mcp")).await?);
                let store = Arc::clone(&state.store);
                local = Some(Arc::clone(&state));
                (aelc_mcp::market::Market::local(state), store)
            }
            (None, Some(gateway)) => {
                let key = std::env::var("AELC_API_KEY").ok().filter(|k| !k.is_empty()).ok_or(
                    "--gateway needs the mandate's account key in AELC_API_KEY".to_owned(),
                )?;
                let url = match args.store.clone().or_else(|| std::env::var("AELC_STORE").ok()) {
                    Some(url) => url,
                    None => {
                        return Err("--gateway needs the gateway's store: --store URL or AELC_STORE".to_owned())
                    }
                };
                let store = aelc_store::open(&url)
                    .await
                    .map_err(|e| format!("cannot open the store {url}: {e}"))?;
                (aelc_mcp::market::Market::remote(gateway, &key).await?, store)
            }
            (None, None) => unreachable!("a project is prepared when no gateway is given"),
        };
        if store.mandate(&args.mandate).await.map_err(|e| e.to_string())?.is_none() {
            return Err(format!(
                "no mandate {} (a human creates it: aelc mandate create {} --budget \"5 EUR\" --threshold \"0.50 EUR\" --allow \"*\")",
                args.mandate, args.mandate
            ));
        }
        let served = match &args.http {
            None => {
                let server = aelc_mcp::McpServer::new(market, store, args.mandate.clone());
                aelc_mcp::serve_stdio(server).await
            }
            // Over HTTP only the mandate's tokens are accepted (`aelc mandate token`).
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
                let local = listener.local_addr().map_err(|e| e.to_string())?;
                let server = aelc_mcp::McpServer::for_tokens(market, Arc::clone(&store));
                let cancel = aelc_mcp::http::CancellationToken::new();
                let router = aelc_mcp::http::router(
                    server,
                    store,
                    &args.limits.limits(),
                    Some(args.mandate.clone()),
                    cancel.clone(),
                );
                super::print_line(&format!("serving MCP on http://{local}/mcp"));
                aelc_mcp::http::serve(router, listener, cancel, super::serve::shutdown_signal())
                    .await
            }
        };
        // A call the client cancelled, or left running when it went away, still stores its
        // receipt and settles its budget before the process ends.
        if let Some(state) = local {
            state.finish_in_flight().await;
            state.lease.release(&*state.store).await;
        }
        served
    });
    match result {
        Ok(()) => Status::Ok,
        Err(message) => out.fatal(&message),
    }
}

fn block_on(out: &Output, f: impl std::future::Future<Output = Result<(), String>>) -> Status {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return out.fatal(&format!("cannot start the async runtime: {e}")),
    };
    match runtime.block_on(f) {
        Ok(()) => Status::Ok,
        Err(message) => {
            super::eprint_line(&format!("error: {message}"));
            Status::Failed
        }
    }
}

/// The gateway's defaults for a short-lived or per-client process that runs agents on the
/// store: its own instance name (`ROLE@HOST:PID`), so it never takes another's runs for its own.
fn process_limits(role: &str) -> aelc_gateway::Limits {
    aelc_gateway::Limits {
        instance: aelc_gateway::lease::instance_name(role, std::process::id()),
        ..aelc_gateway::Limits::default()
    }
}
