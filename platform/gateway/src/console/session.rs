//! Signing in to the console and staying signed in.
//!
//! The account's API key is posted once, checked as every API request's key is, and exchanged
//! for a session: a random secret in a cookie (`HttpOnly`, `SameSite=Strict`, `Path=/console`,
//! expiring; `Secure` when the request came over TLS) whose SHA-256 the store keeps with the
//! account and a CSRF token. The key never reaches the browser's storage, and the session lives
//! in the store, so any gateway on the same database knows it and signing out ends it there.
//!
//! Every state-changing form carries the session's CSRF token and is refused without it; a
//! request whose `Origin` is another site's is refused before that (`SameSite=Strict` already
//! keeps the cookie from cross-site requests: the token and the origin check are the layers
//! behind it, as OWASP's cheat sheet asks).

use std::sync::Arc;
use std::time::Duration;

use aelc_store::{Account, ConsoleSession};
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use super::{page, view, PREFIX};
use crate::accounts::{key_sha256, random_secret};
use crate::{now_ms, AppState};

/// The session cookie's name.
pub const COOKIE: &str = "aelc_console";

/// How long a session lasts after signing in.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 60 * 60);

/// A signed-in request: the account it acts for and its session.
pub struct Signed {
    pub account: Account,
    pub session: ConsoleSession,
}

/// Why a request is not [`Signed`]: pages send the browser to the sign-in form.
pub struct NotSignedIn;

impl IntoResponse for NotSignedIn {
    fn into_response(self) -> Response {
        Redirect::to("/console/sign-in").into_response()
    }
}

impl FromRequestParts<Arc<AppState>> for Signed {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        app: &Arc<AppState>,
    ) -> Result<Signed, Response> {
        let Some(secret) = cookie(&parts.headers, COOKIE) else {
            return Err(NotSignedIn.into_response());
        };
        let now = now_ms();
        let found = app
            .store
            .console_session(&key_sha256(secret), now)
            .await
            .map_err(|e| view::store_failure(&e))?;
        let Some(session) = found else {
            return Err(NotSignedIn.into_response());
        };
        let account = app
            .store
            .account(&session.account)
            .await
            .map_err(|e| view::store_failure(&e))?
            .ok_or_else(|| NotSignedIn.into_response())?;
        Ok(Signed { account, session })
    }
}

impl Signed {
    /// The page's view of this session.
    pub fn viewer(&self) -> view::Viewer<'_> {
        view::Viewer {
            account: &self.account.name,
            csrf: &self.session.csrf,
        }
    }

    /// The refusal (403) of a state-changing form that may be forged: one posted from another
    /// site's page, or without this session's CSRF token (compared in constant time).
    pub fn forgery(&self, headers: &HeaderMap, token: &str) -> Option<Response> {
        if !same_origin(headers) {
            return Some(forbidden(
                "This form was sent from another site's page; the console accepts its forms \
                 only from its own pages.",
            ));
        }
        if !constant_time_eq(token.as_bytes(), self.session.csrf.as_bytes()) {
            return Some(forbidden(
                "This form is not from your console session (its CSRF token is missing or \
                 stale). Reload the page and try again.",
            ));
        }
        None
    }
}

/// The value of cookie `name`, if the request sent exactly one.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let mut found = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Whether a state-changing request comes from this site: with no `Origin` (an old browser,
/// a non-browser client), the CSRF token alone decides; with one, its host must be the
/// request's `Host`.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(host)) = (
        origin.to_str(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
    ) else {
        return false;
    };
    origin
        .split_once("://")
        .is_some_and(|(_, rest)| rest.trim_end_matches('/') == host)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A 403 page saying why.
pub fn forbidden(why: &str) -> Response {
    page(
        StatusCode::FORBIDDEN,
        view::message_page(None, "Refused", why),
    )
}

/// `GET /console/sign-in`.
pub async fn sign_in_page() -> Response {
    page(StatusCode::OK, view::sign_in(None))
}

#[derive(Deserialize)]
pub struct SignInForm {
    key: String,
}

/// `POST /console/sign-in`: the key for a session cookie.
pub async fn sign_in(
    State(app): State<Arc<AppState>>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    if !same_origin(&headers) {
        return forbidden("Signing in is accepted only from this console's own page.");
    }
    let key = form.key.trim();
    let account = match app.store.account_by_key(&key_sha256(key)).await {
        Ok(Some(account)) => account,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                view::sign_in(Some("That key belongs to no account here.")),
            )
        }
        Err(e) => return view::store_failure(&e),
    };
    let secret = random_secret();
    let now = now_ms();
    let ttl_ms = i64::try_from(SESSION_TTL.as_millis()).unwrap_or(i64::MAX);
    let session = ConsoleSession {
        id_sha256: key_sha256(&secret),
        account: account.name,
        csrf: random_secret(),
        created_ms: now,
        expires_ms: now.saturating_add(ttl_ms),
    };
    if let Err(e) = app.store.create_console_session(&session).await {
        return view::store_failure(&e);
    }
    let mut cookie = format!(
        "{COOKIE}={secret}; Path={PREFIX}; HttpOnly; SameSite=Strict; Max-Age={}",
        SESSION_TTL.as_secs()
    );
    if over_tls(&headers) {
        cookie.push_str("; Secure");
    }
    let mut response = Redirect::to("/console/agents").into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[derive(Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    pub csrf: String,
}

/// `POST /console/sign-out`: ends the session in the store and clears the cookie.
pub async fn sign_out(
    State(app): State<Arc<AppState>>,
    signed: Signed,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Some(refused) = signed.forgery(&headers, &form.csrf) {
        return refused;
    }
    if let Err(e) = app
        .store
        .end_console_session(&signed.session.id_sha256, now_ms())
        .await
    {
        return view::store_failure(&e);
    }
    let mut response = Redirect::to("/console/sign-in").into_response();
    let cleared = format!("{COOKIE}=; Path={PREFIX}; HttpOnly; SameSite=Strict; Max-Age=0");
    if let Ok(value) = HeaderValue::from_str(&cleared) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Whether the browser reached the gateway over TLS: a TLS-terminating proxy says so in
/// `X-Forwarded-Proto` or `Forwarded` (the gateway itself speaks plain HTTP). Trusting it only
/// ever adds `Secure` to the cookie.
fn over_tls(headers: &HeaderMap) -> bool {
    let said = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase)
    };
    said("x-forwarded-proto").is_some_and(|p| p.trim() == "https")
        || said("forwarded").is_some_and(|f| f.contains("proto=https"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_cookie_is_read_only_when_sent_once() {
        let h = headers(&[("cookie", "a=1; aelc_console=s3cret; b=2")]);
        assert_eq!(cookie(&h, COOKIE), Some("s3cret"));
        let twice = headers(&[("cookie", "aelc_console=x"), ("cookie", "aelc_console=y")]);
        assert_eq!(cookie(&twice, COOKIE), None);
        assert_eq!(cookie(&headers(&[("cookie", "other=1")]), COOKIE), None);
    }

    #[test]
    fn another_sites_origin_is_not_ours() {
        let ours = [
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ];
        assert!(same_origin(&headers(&ours)));
        assert!(same_origin(&headers(&[("host", "127.0.0.1:8080")])));
        let theirs = [
            ("host", "127.0.0.1:8080"),
            ("origin", "https://evil.example"),
        ];
        assert!(!same_origin(&headers(&theirs)));
        assert!(!same_origin(&headers(&[("host", "a"), ("origin", "null")])));
    }

    #[test]
    fn tls_is_read_from_the_proxy() {
        assert!(over_tls(&headers(&[("x-forwarded-proto", "https")])));
        assert!(over_tls(&headers(&[(
            "forwarded",
            "for=1.2.3.4;proto=https"
        )])));
        assert!(!over_tls(&headers(&[("x-forwarded-proto", "http")])));
        assert!(!over_tls(&HeaderMap::new()));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert_eq!(random_secret().len(), 64);
        assert_ne!(random_secret(), random_secret());
    }
}
