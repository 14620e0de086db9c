//! The console's pages, one handler each, thin over the store's queries: a signed-in account
//! sees its own runs, money, mandates and files, and another account's ids answer 404 as
//! unknown ones do. Bad input (an unknown status, a malformed filter) gets a 400 page.

use std::collections::BTreeMap;
use std::sync::Arc;

use aelc_runtime::money::Amount;
use aelc_runtime::receipt::Receipt;
use aelc_store::{Approval, ApprovalState, RunQuery, Status, StoreError};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use maud::html;
use serde::Deserialize;

use super::page;
use super::session::{Signed, TokenForm};
use super::view::{self, Bar};
use crate::{now_ms, AppState};

/// Rows of the runs list per page.
const RUNS_PER_PAGE: u32 = 50;
/// Ledger entries per page.
const ENTRIES_PER_PAGE: usize = 100;
/// Days the plots cover.
const PLOT_DAYS: i64 = 30;
const DAY_MS: i64 = 86_400_000;

/// `GET /console`: the agents, or the sign-in form.
pub async fn home(_signed: Signed) -> Redirect {
    Redirect::to("/console/agents")
}

/// Anything else under `/console`.
pub async fn not_found() -> Response {
    view::not_found(None, "such page")
}

/// `GET /console/agents`: the served agents with their published figures.
pub async fn agents(State(app): State<Arc<AppState>>, signed: Signed) -> Response {
    let mut rows = Vec::new();
    for agent in &app.project.agents {
        let stats = match app.store.agent_stats(&agent.name).await {
            Ok(stats) => stats,
            Err(e) => return view::store_failure(&e),
        };
        rows.push((agent, stats));
    }
    let body = html! {
        p.hint { "Success rate = succeeded / (succeeded + invalid output + error), the figure "
                 code { "search_agents" } " ranks by; declared failures and refused inputs are not counted." }
        table {
            thead { tr {
                th { "Agent" } th { "Version" } th { "Capability" } th { "Price" }
                th { "Success rate" } th { "Cost per successful run" } th { "Succeeded" }
                th { "Counted runs" } th { "Earned (succeeded × price)" }
            } }
            tbody {
                @for (agent, stats) in &rows {
                    @let rate = stats.success_rate();
                    @let price = agent.currency.as_ref().map(|c| format!("{} {c}", agent.price));
                    tr {
                        td { a href={ "/console/agents/" (agent.name) } { (agent.name) } }
                        td { (agent.version) }
                        td { (agent.capability.as_deref().unwrap_or("–")) }
                        td { (price.as_deref().unwrap_or("free")) }
                        td.number { (view::percent(rate)) }
                        td.number { (cost_per_success(agent.price, agent.currency.as_deref(), rate)) }
                        td.number { (stats.succeeded) }
                        td.number { (stats.succeeded + stats.invalid_output + stats.error) }
                        td.number { (earned(agent.price, agent.currency.as_deref(), stats.succeeded)) }
                    }
                }
            }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), "Agents", body),
    )
}

/// What a caller pays on average for one good answer: the price over the success rate.
fn cost_per_success(price: Amount, currency: Option<&str>, rate: Option<f64>) -> String {
    match (currency, rate) {
        (None, _) => "free".to_owned(),
        (Some(_), None) => "–".to_owned(),
        (Some(_), Some(rate)) if rate <= 0.0 => "no success yet".to_owned(),
        (Some(c), Some(rate)) => {
            let price: f64 = price.to_string().parse().unwrap_or(0.0);
            format!("{:.4} {c}", price / rate)
        }
    }
}

fn earned(price: Amount, currency: Option<&str>, succeeded: u64) -> String {
    let Some(currency) = currency else {
        return "free".to_owned();
    };
    match price.0.checked_mul(u128::from(succeeded)) {
        Some(total) => format!("{} {currency}", Amount(total)),
        None => "–".to_owned(),
    }
}

/// `GET /console/agents/{owner}/{name}`: one agent, its days and its schemas.
pub async fn agent(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    Path((owner, name)): Path<(String, String)>,
) -> Response {
    let full = format!("{owner}/{name}");
    let Some(agent) = app.project.agent(&full) else {
        return view::not_found(Some(signed.viewer()), &format!("agent {full}"));
    };
    let today = now_ms() / DAY_MS;
    let since = (today - PLOT_DAYS + 1) * DAY_MS;
    let days = match app.store.agent_days(&agent.name, since).await {
        Ok(days) => days,
        Err(e) => return view::store_failure(&e),
    };
    let by_day: BTreeMap<i64, aelc_store::AgentStats> = days.into_iter().collect();
    let window = (today - PLOT_DAYS + 1)..=today;
    let runs: Vec<Bar> = window
        .clone()
        .map(|d| {
            let s = by_day.get(&d).copied().unwrap_or_default();
            let n = s.succeeded + s.invalid_output + s.error + s.failed;
            Bar {
                label: view::day(d).get(5..).unwrap_or_default().to_owned(),
                value: n as f64,
                title: format!("{}: {n} runs", view::day(d)),
            }
        })
        .collect();
    let rates: Vec<Bar> = window
        .map(|d| {
            let rate = by_day.get(&d).and_then(|s| s.success_rate());
            Bar {
                label: view::day(d).get(5..).unwrap_or_default().to_owned(),
                value: rate.unwrap_or(0.0) * 100.0,
                title: format!("{}: {}", view::day(d), view::percent(rate)),
            }
        })
        .collect();
    let examples = &agent.manifest["examples"];
    let body = html! {
        @if let Some(description) = &agent.description { p { (description) } }
        dl {
            dt { "Version" } dd { (agent.version) }
            dt { "Capability" } dd { (agent.capability.as_deref().unwrap_or("–")) }
            dt { "Price" } dd {
                @match &agent.currency { Some(c) => { (agent.price) " " (c) }, None => "free" }
            }
            dt { "Runs here" } dd {
                @if agent.missing.is_empty() { "yes" } @else { "no: needs " (agent.missing.join(", ")) }
            }
            dt { "Your runs" } dd { a href={ "/console/runs?agent=" (agent.name) } { "list" } }
        }
        (view::bar_plot(&format!("Runs per day, last {PLOT_DAYS} days (all callers)"), &runs))
        (view::bar_plot(&format!("Success rate per day (%), last {PLOT_DAYS} days"), &rates))
        h2 { "Input schema" }
        pre.json { (pretty_value(&agent.input_schema)) }
        h2 { "Output schema" }
        pre.json { (pretty_value(&agent.output_schema)) }
        @if !examples.is_null() {
            h2 { "Examples" }
            pre.json { (pretty_value(examples)) }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), &full, body),
    )
}

fn pretty_value(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The runs list's filters (`?agent=&status=&days=&before=`).
#[derive(Deserialize, Default)]
pub struct RunFilter {
    #[serde(default)]
    agent: String,
    #[serde(default)]
    status: String,
    /// The last N days; empty for all.
    #[serde(default)]
    days: String,
    /// The cursor: runs older than this id.
    #[serde(default)]
    before: String,
}

/// `GET /console/runs`: the account's runs, newest first, a page at a time.
pub async fn runs(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    filter: Result<Query<RunFilter>, QueryRejection>,
) -> Response {
    let Ok(Query(filter)) = filter else {
        return view::bad_request(Some(signed.viewer()), "The runs filter could not be read.");
    };
    let status = match filter.status.as_str() {
        "" => None,
        word => match Status::parse(word) {
            Some(s) => Some(s),
            None => {
                return view::bad_request(
                    Some(signed.viewer()),
                    &format!("`{word}` is not a run status."),
                )
            }
        },
    };
    let since_ms = match filter.days.as_str() {
        "" => None,
        text => match text.parse::<u16>() {
            Ok(days) if days > 0 => Some(now_ms() - i64::from(days) * DAY_MS),
            _ => {
                return view::bad_request(
                    Some(signed.viewer()),
                    &format!("`{text}` is not a number of days (1 to 65535)."),
                )
            }
        },
    };
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let query = RunQuery {
        agent: non_empty(&filter.agent),
        status,
        before: non_empty(&filter.before),
        since_ms,
        limit: RUNS_PER_PAGE,
    };
    let rows = match app.store.runs_page(&signed.account.name, &query).await {
        Ok(rows) => rows,
        Err(e) => return view::store_failure(&e),
    };
    let next = (rows.len() == RUNS_PER_PAGE as usize)
        .then(|| rows.last().map(|r| r.id.clone()))
        .flatten();
    let body = html! {
        form.filters method="get" action="/console/runs" {
            label { "Agent "
                select name="agent" {
                    option value="" { "all" }
                    @for a in &app.project.agents {
                        option value=(a.name) selected[a.name == filter.agent] { (a.name) }
                    }
                }
            }
            label { "Status "
                select name="status" {
                    option value="" { "all" }
                    @for s in Status::ALL {
                        option value=(s.as_str()) selected[Some(s) == status] { (s.as_str()) }
                    }
                }
            }
            label { "Period "
                select name="days" {
                    @for (value, label) in [("", "all time"), ("1", "last day"), ("7", "last 7 days"), ("30", "last 30 days")] {
                        option value=(value) selected[value == filter.days] { (label) }
                    }
                }
            }
            button type="submit" { "Filter" }
        }
        @if rows.is_empty() {
            p.hint { "No runs match." }
        } @else {
            table.runs {
                thead { tr {
                    th { "Run" } th { "Agent" } th { "Status" } th { "Code" } th { "Held" }
                    th { "Mandate" } th { "Began" }
                } }
                tbody {
                    @for r in &rows {
                        tr {
                            td { @if r.status.is_some() {
                                a href={ "/console/runs/" (r.id) } { code { (r.id) } }
                            } @else { code { (r.id) } } }
                            td { (r.agent) " " (r.version) }
                            td { @match r.status {
                                Some(s) => (view::status_badge(s.as_str())),
                                None => (view::status_badge(&r.state)),
                            } }
                            td { (r.code.as_deref().unwrap_or("")) }
                            td.number { (r.reserved) " " (r.currency) }
                            td { (r.mandate.as_deref().unwrap_or("")) }
                            td { (view::time(r.created_ms)) }
                        }
                    }
                }
            }
        }
        @if let Some(next) = next {
            p { a.next href={ "/console/runs?agent=" (filter.agent) "&status=" (filter.status)
                               "&days=" (filter.days) "&before=" (next) } { "Older runs →" } }
        }
        p.hint { "Calls refused at the gate begin no run and are not listed; each has a receipt
                  (its id is in the caller's answer) and counts in the agent's figures." }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), "Runs", body),
    )
}

/// `GET /console/runs/{id}`: one run's receipt tree and its answer.
pub async fn run(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    Path(id): Path<String>,
) -> Response {
    let stored = match app.store.receipt(&signed.account.name, &id).await {
        Ok(Some(stored)) => stored,
        Ok(None) => return view::not_found(Some(signed.viewer()), &format!("run {id}")),
        Err(e) => return view::store_failure(&e),
    };
    let document: serde_json::Value = match serde_json::from_str(&stored.json) {
        Ok(d) => d,
        Err(e) => {
            return view::store_failure(&StoreError::Backend(format!(
                "the receipt {id} is not JSON: {e}"
            )))
        }
    };
    // Kept beside the receipt: the input (unless the operator keeps only its hash) and the
    // trace. A refusal at the gate began no run, so it has neither.
    let details = match app.store.run_details(&signed.account.name, &id).await {
        Ok(details) => details,
        Err(e) => return view::store_failure(&e),
    };
    let input: Option<serde_json::Value> = details
        .as_ref()
        .and_then(|d| d.input_json.as_deref())
        .and_then(|text| serde_json::from_str(text).ok());
    let trace_id = details.as_ref().and_then(|d| d.trace_id.clone());
    let trace_href = trace_id
        .as_deref()
        .zip(app.trace_link.as_deref())
        .and_then(|(trace, template)| super::trace_link(template, trace));
    let receipt: Option<Receipt> = serde_json::from_value(document["receipt"].clone()).ok();
    let output = &document["output"];
    let body = html! {
        dl {
            dt { "Status" } dd { (view::status_badge(stored.status.as_str())) }
            dt { "Agent" } dd { (stored.agent) " " (stored.version) }
            dt { "Stored" } dd { (view::time(stored.at_ms)) }
            @if let Some(m) = &stored.mandate { dt { "Mandate" } dd { (m) } }
            @if let Some(trace) = &trace_id {
                dt { "Trace" }
                dd {
                    @if let Some(href) = &trace_href {
                        a.trace href=(href) rel="noreferrer" { code { (trace) } }
                    } @else {
                        code.trace { (trace) }
                    }
                }
            }
        }
        h2 { "Receipt" }
        @match &receipt {
            Some(r) => (view::receipt_tree(r)),
            None => pre.json { (pretty_value(&document["receipt"])) },
        }
        h2 { "Input" }
        @match &input {
            Some(input) => pre.json.input { (pretty_value(input)) },
            None => p.hint { "The input was not kept (a call refused at the gate, or a gateway run with
                              --no-keep-inputs): the receipt holds its SHA-256." },
        }
        h2 { "Accepted output" }
        @if output.is_null() {
            p.hint { "No output was accepted." }
        } @else {
            pre.json.output { (pretty_value(output)) }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), &id, body),
    )
}

#[derive(Deserialize, Default)]
pub struct Paging {
    #[serde(default)]
    page: String,
}

/// `GET /console/money`: balance, what is held, spend per day and the ledger, newest first.
pub async fn money(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    paging: Result<Query<Paging>, QueryRejection>,
) -> Response {
    let Ok(Query(paging)) = paging else {
        return view::bad_request(Some(signed.viewer()), "The page could not be read.");
    };
    let page_number = match paging.page.as_str() {
        "" => 1,
        text => match text.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return view::bad_request(
                    Some(signed.viewer()),
                    &format!("`{text}` is not a page number."),
                )
            }
        },
    };
    let name = &signed.account.name;
    let today = now_ms() / DAY_MS;
    let since = (today - PLOT_DAYS + 1) * DAY_MS;
    let (balance, entries, spend) = match (
        app.store.balance(name).await,
        app.store.entries(name).await,
        app.store.spend_by_agent(name, since).await,
    ) {
        (Ok(b), Ok(e), Ok(s)) => (b, e, s),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return view::store_failure(&e),
    };
    // Per agent: its total over the period, and its amount per day.
    let mut per_agent: BTreeMap<&str, (Amount, BTreeMap<i64, f64>)> = BTreeMap::new();
    for (day, agent, amount) in &spend {
        let (total, days) = per_agent.entry(agent.as_str()).or_default();
        *total = total.saturating_add(*amount);
        *days.entry(*day).or_default() += amount.to_string().parse::<f64>().unwrap_or(0.0);
    }
    let held = aelc_store::held_account(name);
    let mut spent_by_day: BTreeMap<i64, f64> = BTreeMap::new();
    let mut earned_by_day: BTreeMap<i64, f64> = BTreeMap::new();
    for e in &entries {
        if e.kind != "post" {
            continue;
        }
        let value: f64 = e.amount.to_string().parse().unwrap_or(0.0);
        if e.account == held && !e.credit {
            *spent_by_day.entry(e.at_ms / DAY_MS).or_default() += value;
        } else if e.account == *name && e.credit {
            *earned_by_day.entry(e.at_ms / DAY_MS).or_default() += value;
        }
    }
    let bars = |by_day: &BTreeMap<i64, f64>, what: &str| -> Vec<Bar> {
        ((today - PLOT_DAYS + 1)..=today)
            .map(|d| {
                let v = by_day.get(&d).copied().unwrap_or(0.0);
                Bar {
                    label: view::day(d).get(5..).unwrap_or_default().to_owned(),
                    value: v,
                    title: format!("{}: {what} {v} {}", view::day(d), signed.account.currency),
                }
            })
            .collect()
    };
    let pages = entries.len().div_ceil(ENTRIES_PER_PAGE).max(1);
    if page_number > pages {
        return view::not_found(
            Some(signed.viewer()),
            &format!("page {page_number} of the ledger"),
        );
    }
    let shown: Vec<_> = entries
        .iter()
        .rev()
        .skip((page_number - 1) * ENTRIES_PER_PAGE)
        .take(ENTRIES_PER_PAGE)
        .collect();
    let currency = &signed.account.currency;
    let body = html! {
        dl.balance {
            dt { "Available" } dd { (balance.available) " " (currency) }
            dt { "Reserved by runs in flight" } dd { (balance.reserved) " " (currency) }
        }
        (view::bar_plot(&format!("Spent per day ({currency}), last {PLOT_DAYS} days"), &bars(&spent_by_day, "spent")))
        (view::bar_plot(&format!("Earned per day ({currency}), last {PLOT_DAYS} days"), &bars(&earned_by_day, "earned")))
        h2 { "Spend per agent, last " (PLOT_DAYS) " days" }
        @if per_agent.is_empty() {
            p.hint { "No agent was paid in this period." }
        }
        @for (agent, (total, days)) in &per_agent {
            (view::bar_plot(&format!("{agent}: {total} {currency} in all"), &bars(days, "spent on it")))
        }
        h2 { "Ledger" }
        table.ledger {
            thead { tr { th { "When" } th { "Kind" } th { "Account" } th { "In" } th { "Out" } th { "Transfer" } } }
            tbody {
                @for e in &shown {
                    tr {
                        td { (view::time(e.at_ms)) }
                        td { (e.kind) }
                        td { (e.account) }
                        td.number { @if e.credit { (e.amount) } }
                        td.number { @if !e.credit { (e.amount) } }
                        td { code { (e.transfer) } }
                    }
                }
            }
        }
        p.pager {
            "Page " (page_number) " of " (pages) " "
            @if page_number > 1 { a href={ "/console/money?page=" (page_number - 1) } { "← newer" } " " }
            @if page_number < pages { a href={ "/console/money?page=" (page_number + 1) } { "older →" } }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), "Money", body),
    )
}

/// `GET /console/mandates`: each mandate's budget and rules, and the approvals waiting.
pub async fn mandates(State(app): State<Arc<AppState>>, signed: Signed) -> Response {
    let now = now_ms();
    let mandates = match app.store.mandates(Some(&signed.account.name)).await {
        Ok(m) => m,
        Err(e) => return view::store_failure(&e),
    };
    let mut shown = Vec::new();
    for mandate in mandates {
        let id = mandate.id();
        let (used, approvals) = match (
            app.store.mandate_use(&id).await,
            app.store.approvals(&id, now).await,
        ) {
            (Ok(u), Ok(a)) => (u, a),
            (Err(e), _) | (_, Err(e)) => return view::store_failure(&e),
        };
        shown.push((mandate, used, approvals));
    }
    let number = |a: Amount| a.to_string().parse::<f64>().unwrap_or(0.0);
    let body = html! {
        @if shown.is_empty() {
            p.hint { "No mandates. A human grants one with " code { "aelc mandate add" } "." }
        }
        @for (m, used, approvals) in &shown {
            @let remaining = m.budget.saturating_sub(used.spent).saturating_sub(used.reserved);
            section.mandate id={ "mandate-" (m.name) } {
                h2 { (m.id()) }
                (view::budget_bar(number(used.spent), number(used.reserved), number(m.budget)))
                dl {
                    dt { "Budget" } dd { (m.budget) " " (m.currency) }
                    dt { "Spent" } dd { (used.spent) " " (m.currency) }
                    dt { "Reserved" } dd { (used.reserved) " " (m.currency) }
                    dt { "Remaining" } dd { (remaining) " " (m.currency) }
                    dt { "Approval above" } dd { (m.threshold) " " (m.currency) }
                    dt { "Allow" } dd { (if m.allow.is_empty() { "everything".to_owned() } else { m.allow.join(", ") }) }
                    dt { "Deny" } dd { (if m.deny.is_empty() { "nothing".to_owned() } else { m.deny.join(", ") }) }
                    dt { "Expires" } dd { (m.expires_ms.map_or_else(|| "never".to_owned(), view::time)) }
                }
                @let pending: Vec<&Approval> = approvals.iter().filter(|a| a.state == ApprovalState::Pending).collect();
                h3 { "Waiting for your approval (" (pending.len()) ")" }
                @for a in &pending {
                    article.approval id=(a.id) {
                        p {
                            strong { (a.agent) } " " (a.version) " · worst case "
                            strong { (a.worst_case) " " (a.currency) }
                            " · asked " (view::time(a.created_ms)) " · expires " (view::time(a.expires_ms))
                        }
                        pre.json { (view::pretty(&a.input_json)) }
                        form.decide method="post" action={ "/console/approvals/" (a.id) "/approve" } {
                            input type="hidden" name="csrf" value=(signed.session.csrf);
                            button.approve type="submit" { "Approve" }
                        }
                        form.decide method="post" action={ "/console/approvals/" (a.id) "/reject" } {
                            input type="hidden" name="csrf" value=(signed.session.csrf);
                            button.reject type="submit" { "Reject" }
                        }
                    }
                }
                @let decided: Vec<&Approval> = approvals.iter().filter(|a| a.state != ApprovalState::Pending).take(20).collect();
                @if !decided.is_empty() {
                    h3 { "Decided lately" }
                    table {
                        thead { tr { th { "Approval" } th { "Agent" } th { "Worst case" } th { "State" } } }
                        tbody { @for a in decided {
                            tr {
                                td { code { (a.id) } }
                                td { (a.agent) " " (a.version) }
                                td.number { (a.worst_case) " " (a.currency) }
                                td { (view::status_badge(a.state.as_str())) }
                            }
                        } }
                    }
                }
            }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), "Mandates", body),
    )
}

/// `POST /console/approvals/{id}/approve|reject`: what `aelc approve ID --no-run` and
/// `aelc reject ID` do (the same store call), for an approval under one of the account's
/// mandates only.
pub async fn decide(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    headers: HeaderMap,
    Path((id, decision)): Path<(String, String)>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Some(refused) = signed.forgery(&headers, &form.csrf) {
        return refused;
    }
    let approve = match decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => return view::not_found(Some(signed.viewer()), "such decision"),
    };
    let now = now_ms();
    let ours = match app.store.approval(&id, now).await {
        Ok(Some(a)) => a
            .mandate
            .split_once('/')
            .is_some_and(|(account, _)| account == signed.account.name),
        Ok(None) => false,
        Err(e) => return view::store_failure(&e),
    };
    if !ours {
        return view::not_found(Some(signed.viewer()), &format!("approval {id}"));
    }
    match app.store.decide_approval(&id, approve, now).await {
        Ok(_) => Redirect::to("/console/mandates").into_response(),
        Err(StoreError::Approval(why)) => page(
            StatusCode::CONFLICT,
            view::message_page(
                Some(signed.viewer()),
                "Not decided",
                &format!("The approval {id} cannot be decided now: {why}."),
            ),
        ),
        Err(StoreError::NotFound(_)) => {
            view::not_found(Some(signed.viewer()), &format!("approval {id}"))
        }
        Err(e) => view::store_failure(&e),
    }
}

/// `GET /console/files`: the account's stored files.
pub async fn files(State(app): State<Arc<AppState>>, signed: Signed) -> Response {
    let files = match app.store.files(&signed.account.name).await {
        Ok(f) => f,
        Err(e) => return view::store_failure(&e),
    };
    let total: u64 = files.iter().map(|f| f.size).sum();
    let body = html! {
        p { (files.len()) " files, " (total) " bytes of a quota of " (app.max_stored_bytes) " bytes." }
        @if !files.is_empty() {
            table.files {
                thead { tr { th { "Reference" } th { "Type" } th { "Size" } th { "Source" } th { "Stored" } th { "Expires" } } }
                tbody { @for f in &files {
                    tr {
                        td { code { "holon://files/" (f.id) } }
                        td { (f.media_type) }
                        td.number { (f.size) }
                        td { (f.source.as_deref().unwrap_or("")) }
                        td { (view::time(f.created_ms)) }
                        td { (f.expires_ms.map_or_else(|| "never".to_owned(), view::time)) }
                    }
                } }
            }
        }
    };
    page(
        StatusCode::OK,
        view::layout(Some(signed.viewer()), "Files", body),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_answer_costs_the_price_over_the_rate() {
        let price = Amount::parse("0.01").unwrap();
        assert_eq!(
            cost_per_success(price, Some("EUR"), Some(0.5)),
            "0.0200 EUR"
        );
        assert_eq!(cost_per_success(price, Some("EUR"), None), "–");
        assert_eq!(
            cost_per_success(price, Some("EUR"), Some(0.0)),
            "no success yet"
        );
        assert_eq!(cost_per_success(price, None, Some(1.0)), "free");
        assert_eq!(earned(price, Some("EUR"), 3), "0.03 EUR");
    }
}
