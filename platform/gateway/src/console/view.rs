//! What the console's pages share: the layout, messages, the receipt tree, the plots and the
//! small formatting rules. Markup only: the data comes from [`super::pages`].
//!
//! Plots are SVG drawn here with presentation attributes (`fill`, `width`…), never `style`
//! attributes, which the page's policy forbids.

use aelc_runtime::receipt::Receipt;
use aelc_store::StoreError;
use axum::http::StatusCode;
use axum::response::Response;
use maud::{html, Markup, DOCTYPE};

use super::{page, STYLESHEET_PATH};

/// The pages of the navigation bar: path and label.
const NAVIGATION: [(&str, &str); 5] = [
    ("/console/agents", "Agents"),
    ("/console/runs", "Runs"),
    ("/console/money", "Money"),
    ("/console/mandates", "Mandates"),
    ("/console/files", "Files"),
];

/// Who is looking at a page: the account named in the navigation bar and the session's CSRF
/// token for its sign-out form.
#[derive(Clone, Copy)]
pub struct Viewer<'a> {
    pub account: &'a str,
    pub csrf: &'a str,
}

/// A whole page: head, navigation (with the account and a sign-out form when signed in), body.
pub fn layout(viewer: Option<Viewer<'_>>, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · aelc console" }
                link rel="stylesheet" href=(*STYLESHEET_PATH);
            }
            body {
                header {
                    a.brand href="/console" { "aelc console" }
                    @if let Some(viewer) = viewer {
                        nav {
                            @for (path, label) in NAVIGATION {
                                a href=(path) { (label) }
                            }
                        }
                        form.sign-out method="post" action="/console/sign-out" {
                            input type="hidden" name="csrf" value=(viewer.csrf);
                            span.account { (viewer.account) }
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

/// The sign-in form, with why the last try failed.
pub fn sign_in(error: Option<&str>) -> Markup {
    layout(
        None,
        "Sign in",
        html! {
            @if let Some(error) = error {
                p.error role="alert" { (error) }
            }
            form.sign-in method="post" action="/console/sign-in" {
                label for="key" { "API key" }
                input id="key" type="password" name="key" autocomplete="off" required
                    placeholder="ael_…";
                button type="submit" { "Sign in" }
            }
            p.hint {
                "The key is exchanged for a session cookie and is not kept by the browser. "
                "An account's key is printed once by " code { "aelc account add NAME" } "."
            }
        },
    )
}

/// A page that only says something (a refusal, a missing thing).
pub fn message_page(viewer: Option<Viewer<'_>>, title: &str, message: &str) -> Markup {
    layout(
        viewer,
        title,
        html! {
            p.message { (message) }
            p { a href="/console" { "Back to the console" } }
        },
    )
}

/// A 404 page naming what was not found.
pub fn not_found(viewer: Option<Viewer<'_>>, what: &str) -> Response {
    page(
        StatusCode::NOT_FOUND,
        message_page(viewer, "Not found", &format!("There is no {what} here.")),
    )
}

/// A 400 page saying what was wrong with the request.
pub fn bad_request(viewer: Option<Viewer<'_>>, why: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        message_page(viewer, "Bad request", why),
    )
}

/// The store failed: 503 (the operator's log has the details).
pub fn store_failure(e: &StoreError) -> Response {
    tracing::error!(error = %e, "the console could not read the store");
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        message_page(
            None,
            "Unavailable",
            "The store did not answer. Try again in a moment.",
        ),
    )
}

/// Milliseconds since the epoch as `2026-12-07 12:03:52 UTC`.
pub fn time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(
        |_| ms.to_string(),
        |t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// A day number (days since the epoch) as `2026-12-07`.
pub fn day(day: i64) -> String {
    time(day.saturating_mul(86_400_000))
        .get(..10)
        .unwrap_or_default()
        .to_owned()
}

/// A share as a percentage with one decimal, `–` when there is none.
pub fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

/// JSON text indented for reading (as is, when it is not JSON).
pub fn pretty(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| json.to_owned())
}

/// A status word as a badge (its class colours it).
pub fn status_badge(status: &str) -> Markup {
    html! { span class={ "status " (status) } { (status) } }
}

/// A receipt and its delegated calls, nested: each run's status, cost and attempts, each
/// attempt's binding, tokens, bytes, cost and why it was refused.
pub fn receipt_tree(receipt: &Receipt) -> Markup {
    html! {
        details.receipt open {
            summary {
                (status_badge(receipt.status.as_str()))
                " " strong { (receipt.agent) } " " (receipt.version) " · " code { (receipt.node) }
                " · " (cost(&receipt.cost.amount, receipt.cost.currency.as_deref()))
                @if let Some(code) = &receipt.code { " · " code { (code) } }
            }
            dl {
                dt { "Receipt" } dd { code { (receipt.receipt) } }
                dt { "Billed" } dd { (cost(&receipt.cost.amount, receipt.cost.currency.as_deref())) }
                dt { "Model calls cost" } dd { (cost(&receipt.spent.amount, receipt.spent.currency.as_deref())) }
                dt { "Reserved" } dd { (cost(&receipt.reserved.amount, receipt.reserved.currency.as_deref())) }
                dt { "Input SHA-256" } dd { code { (receipt.input_sha256) } }
                @if let Some(output) = &receipt.output_sha256 {
                    dt { "Output SHA-256" } dd { code { (output) } }
                }
                @if let Some(refusal) = &receipt.refusal {
                    dt { "Refusal" } dd { (refusal) }
                }
            }
            @if !receipt.attempts.is_empty() {
                table.attempts {
                    thead { tr {
                        th { "#" } th { "Binding" } th { "Tokens in" } th { "Tokens out" }
                        th { "Bytes" } th { "Cost" } th { "Reserved" } th { "Refused because" }
                    } }
                    tbody {
                        @for (i, attempt) in receipt.attempts.iter().enumerate() {
                            tr {
                                td { (i + 1) }
                                td { code { (attempt.binding) } }
                                td.number { (attempt.usage.input_tokens) }
                                td.number { (attempt.usage.output_tokens) }
                                td.number { (attempt.bytes) }
                                td.number { (attempt.cost) }
                                td.number { (attempt.reserved) }
                                td {
                                    @match &attempt.rejected {
                                        Some(r) => {
                                            "step " (r.step) " " code { (r.code) }
                                            @if let Some(path) = &r.path { " at " code { (path) } }
                                            ": " (r.message)
                                        }
                                        None => "accepted",
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if !receipt.delegated.is_empty() {
                section.delegated {
                    h3 { "Delegated calls (" (receipt.delegated.len()) ")" }
                    @for child in &receipt.delegated {
                        (receipt_tree(child))
                    }
                }
            }
        }
    }
}

fn cost(amount: &str, currency: Option<&str>) -> String {
    match currency {
        Some(c) => format!("{amount} {c}"),
        None => amount.to_owned(),
    }
}

/// One bar of a [`bar_plot`]: its label (under it) and its value.
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// Shown on hover (an SVG `<title>`).
    pub title: String,
}

/// Bars for a series (runs per day, spend per day), scaled to the largest; empty series say so.
pub fn bar_plot(caption: &str, bars: &[Bar]) -> Markup {
    const WIDTH: f64 = 720.0;
    const HEIGHT: f64 = 160.0;
    const BASE: f64 = 140.0;
    let top = bars.iter().map(|b| b.value).fold(0.0_f64, f64::max);
    let slot = WIDTH / bars.len().max(1) as f64;
    let width = (slot * 0.7).max(1.0);
    html! {
        figure.plot {
            figcaption { (caption) }
            @if bars.is_empty() || top <= 0.0 {
                p.hint { "Nothing yet in this period." }
            } @else {
                svg xmlns="http://www.w3.org/2000/svg" viewBox={ "-16 0 " (WIDTH + 32.0) " " (HEIGHT) }
                    role="img" aria-label=(caption) {
                    line x1="0" y1=(BASE) x2=(WIDTH) y2=(BASE) stroke="#888" stroke-width="1" {}
                    @for (i, bar) in bars.iter().enumerate() {
                        @let h = (bar.value / top * (BASE - 10.0)).max(0.0);
                        @let x = i as f64 * slot + (slot - width) / 2.0;
                        rect class="bar" x=(fmt(x)) y=(fmt(BASE - h)) width=(fmt(width)) height=(fmt(h))
                            fill="#3b6ea8" {
                            title { (bar.title) }
                        }
                        @if bars.len() <= 14 || i % (bars.len() / 7).max(1) == 0 {
                            text x=(fmt(i as f64 * slot + slot / 2.0)) y=(fmt(HEIGHT - 4.0))
                                font-size="10" text-anchor="middle" fill="#444" { (bar.label) }
                        }
                    }
                }
            }
        }
    }
}

/// A budget as one bar: spent, reserved and what remains, to scale.
pub fn budget_bar(spent: f64, reserved: f64, budget: f64) -> Markup {
    const WIDTH: f64 = 300.0;
    let scale = |v: f64| {
        if budget > 0.0 {
            (v / budget * WIDTH).clamp(0.0, WIDTH)
        } else {
            0.0
        }
    };
    let (s, r) = (scale(spent), scale(reserved));
    let r = r.min(WIDTH - s);
    html! {
        svg.budget xmlns="http://www.w3.org/2000/svg" width=(WIDTH) height="14"
            viewBox={ "0 0 " (WIDTH) " 14" } role="img"
            aria-label={ "spent " (spent) ", reserved " (reserved) " of " (budget) } {
            rect x="0" y="0" width=(WIDTH) height="14" fill="#e6e6e6" {}
            rect x="0" y="0" width=(fmt(s)) height="14" fill="#3b6ea8" {}
            rect x=(fmt(s)) y="0" width=(fmt(r)) height="14" fill="#d9a441" {}
        }
    }
}

/// A coordinate with at most two decimals (deterministic, short).
fn fmt(v: f64) -> String {
    let v = (v * 100.0).round() / 100.0;
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_agent_wrote_is_text_never_markup() {
        let evil = "<script>alert(1)</script><img src=x onerror=alert(2)>";
        let markup = message_page(None, evil, evil).into_string();
        assert!(!markup.contains("<script>"), "{markup}");
        assert!(!markup.contains("<img"), "{markup}");
        assert!(markup.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn plots_scale_to_the_largest_bar() {
        let bars = [
            Bar {
                label: "a".into(),
                value: 2.0,
                title: "2".into(),
            },
            Bar {
                label: "b".into(),
                value: 4.0,
                title: "4".into(),
            },
        ];
        let svg = bar_plot("runs", &bars).into_string();
        assert!(svg.contains(r#"height="130""#), "{svg}");
        assert!(svg.contains(r#"height="65""#), "{svg}");
        assert!(!svg.contains("style="));
        let empty = bar_plot("runs", &[]).into_string();
        assert!(empty.contains("Nothing yet"));
    }

    #[test]
    fn times_and_days_read_as_utc() {
        assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(day(20_429), "2025-12-07");
        assert_eq!(percent(Some(0.5)), "50.0%");
        assert_eq!(percent(None), "–");
        assert_eq!(pretty("{\"a\":1}"), "{\n  \"a\": 1\n}");
        assert_eq!(pretty("not json"), "not json");
    }
}
