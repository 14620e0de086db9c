//! Accounts (tenants) and their API keys: creating one (`aelc account add`), crediting it
//! (`aelc fund`), and finding the caller of a request from its `Authorization: Bearer KEY`.
//!
//! A key is `ael_` and 64 random hex digits (two UUIDv4s' 244 random bits); only its SHA-256
//! is stored, so a leaked database holds no usable key.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use aelc_runtime::money::Amount;
use aelc_store::{Account, Store, StoreError, UnixMs};
use axum::http::HeaderMap;

use crate::error::ApiError;
use crate::AppState;

/// The currency of an account created without one.
pub const DEFAULT_CURRENCY: &str = "EUR";

/// Lowercase hex SHA-256 of an API key: what the store keeps.
pub fn key_sha256(key: &str) -> String {
    aelc_runtime::receipt::sha256_hex(key.as_bytes())
}

/// A new random API key.
pub fn new_key() -> String {
    format!("ael_{}", random_secret())
}

/// 244 random bits as 64 hex digits (two UUIDv4s): the secret part of an API key, a mandate
/// token and a console session.
pub fn random_secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

pub use aelc_store::valid_account_name;

/// Creates `name` and returns its API key (shown once).
pub async fn add_account(
    store: &dyn Store,
    name: &str,
    currency: &str,
    now_ms: UnixMs,
) -> Result<String, String> {
    if !valid_account_name(name) {
        return Err(format!(
            "`{name}` cannot name an account: use lowercase letters, digits, `_` and `-`, \
             starting with a letter or digit"
        ));
    }
    if !valid_currency(currency) {
        return Err(format!(
            "`{currency}` is not a currency code: three uppercase letters (EUR, USD)"
        ));
    }
    let key = new_key();
    let account = Account {
        name: name.to_owned(),
        currency: currency.to_owned(),
        created_ms: now_ms,
    };
    match store.create_account(&account, &key_sha256(&key)).await {
        Ok(()) => Ok(key),
        Err(StoreError::Exists(_)) => Err(format!("the account `{name}` exists already")),
        Err(e) => Err(e.to_string()),
    }
}

/// Credits `amount` (`"5 EUR"`, `"5EUR"`, `"5"`) to `name`; returns the new available balance.
pub async fn fund(
    store: &dyn Store,
    name: &str,
    amount: &str,
    now_ms: UnixMs,
) -> Result<Amount, String> {
    let Some(account) = store.account(name).await.map_err(|e| e.to_string())? else {
        return Err(format!(
            "no account `{name}` (create it with `aelc account add {name}`)"
        ));
    };
    let (value, currency) = parse_money(amount)?;
    let currency = currency.unwrap_or_else(|| account.currency.clone());
    if currency != account.currency {
        return Err(format!(
            "`{name}` pays in {}; {amount} is in {currency}",
            account.currency
        ));
    }
    store
        .fund(name, value, &currency, now_ms)
        .await
        .map_err(|e| e.to_string())?;
    Ok(store
        .balance(name)
        .await
        .map_err(|e| e.to_string())?
        .available)
}

/// `"5 EUR"`, `"5EUR"`, `"0.50 EUR"` or a bare `"5"` (the account's currency): the amount and
/// the currency when one is written.
pub fn parse_money(text: &str) -> Result<(Amount, Option<String>), String> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, currency) = text.split_at(split);
    let number = number.trim();
    let currency = currency.trim();
    let amount = Amount::parse(number).ok_or_else(|| {
        format!("`{text}` is not an amount: write a decimal and a currency, e.g. \"5 EUR\"")
    })?;
    if currency.is_empty() {
        return Ok((amount, None));
    }
    if !valid_currency(currency) {
        return Err(format!(
            "`{currency}` is not a currency code: three uppercase letters (EUR, USD)"
        ));
    }
    Ok((amount, Some(currency.to_owned())))
}

fn valid_currency(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// The caller of a request (`Authorization: Bearer KEY`), from the cache of known keys or the
/// store.
pub async fn caller(app: &AppState, headers: &HeaderMap) -> Result<Account, ApiError> {
    let key = bearer_key(headers).ok_or(ApiError::Unauthorized)?;
    let hash = key_sha256(key);
    if let Some(account) = app.keys.get(&hash, Instant::now()) {
        return Ok(account);
    }
    let account = app
        .store
        .account_by_key(&hash)
        .await?
        .ok_or(ApiError::Unauthorized)?;
    app.keys.put(hash, account.clone(), Instant::now());
    Ok(account)
}

/// The API key of `Authorization: Bearer KEY`: exactly one `Authorization` header (two are
/// refused rather than one of them chosen, since a proxy and the gateway might choose
/// differently), the scheme in any case (RFC 7235: schemes are case-insensitive), one or more
/// spaces after it, and the key exactly as sent: nothing trimmed inside the header, no space
/// in the key.
pub fn bearer_key(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(axum::http::header::AUTHORIZATION).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let value = value.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let key = rest.trim_start_matches(' ');
    let token68 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    (!key.is_empty() && key.bytes().all(token68)).then_some(key)
}

/// The accounts of keys seen lately, so a request does not read the store to learn who sent
/// it. Only keys the store knows are kept (an unknown key is looked up each time, so a key
/// created by `aelc account add` in another process works at once), each for [`KeyCache::TTL`]
/// (an account and its currency never change; the bound is for keys a future revocation
/// removes), and at most [`KeyCache::CAPACITY`] (then the cache starts again, empty).
#[derive(Default)]
pub struct KeyCache {
    known: RwLock<HashMap<String, (Account, Instant)>>,
}

impl KeyCache {
    pub const TTL: Duration = Duration::from_secs(60);
    pub const CAPACITY: usize = 100_000;

    fn get(&self, key_sha256: &str, now: Instant) -> Option<Account> {
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        let (account, seen) = known.get(key_sha256)?;
        (now.duration_since(*seen) < Self::TTL).then(|| account.clone())
    }

    fn put(&self, key_sha256: String, account: Account, now: Instant) {
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        if known.len() >= Self::CAPACITY {
            known.clear();
        }
        known.insert(key_sha256, (account, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_is_written_three_ways() {
        let five = Amount::parse("5").unwrap();
        assert_eq!(parse_money("5 EUR").unwrap(), (five, Some("EUR".into())));
        assert_eq!(parse_money("5EUR").unwrap(), (five, Some("EUR".into())));
        assert_eq!(parse_money("5").unwrap(), (five, None));
        assert_eq!(
            parse_money("0.50 USD").unwrap().0,
            Amount::parse("0.5").unwrap()
        );
        for bad in ["", "EUR", "-5 EUR", "5 eur", "5 EURO", "1e3"] {
            assert!(parse_money(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_are_random_and_only_their_hash_is_kept() {
        let (a, b) = (new_key(), new_key());
        assert_ne!(a, b);
        assert!(a.starts_with("ael_") && a.len() == 68);
        assert_eq!(key_sha256(&a).len(), 64);
        assert_ne!(key_sha256(&a), key_sha256(&b));
    }

    #[test]
    fn cached_keys_expire_and_the_cache_is_bounded() {
        let cache = KeyCache::default();
        let t0 = Instant::now();
        let demo = Account {
            name: "demo".into(),
            currency: "EUR".into(),
            created_ms: 0,
        };
        assert_eq!(cache.get("h", t0), None);
        cache.put("h".into(), demo.clone(), t0);
        assert_eq!(
            cache.get("h", t0 + Duration::from_secs(1)),
            Some(demo.clone())
        );
        assert_eq!(cache.get("h", t0 + KeyCache::TTL), None);
        for i in 0..KeyCache::CAPACITY {
            cache.put(format!("k{i}"), demo.clone(), t0);
        }
        // The cache filled up and started again: never over its capacity, the oldest gone.
        assert!(cache.known.read().unwrap().len() <= KeyCache::CAPACITY);
        assert_eq!(cache.get("h", t0), None);
        assert_eq!(cache.get("k99999", t0), Some(demo));
    }

    #[test]
    fn one_authorization_header_any_scheme_case_the_key_exact() {
        use axum::http::header::AUTHORIZATION;
        let one = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, value.parse().unwrap());
            bearer_key(&headers).map(str::to_owned)
        };
        for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
            assert_eq!(one(&format!("{scheme} ael_k1")).as_deref(), Some("ael_k1"));
        }
        assert_eq!(one("Bearer  ael_k1").as_deref(), Some("ael_k1"));
        for refused in [
            "Basic ael_k1",
            "Bearerael_k1",
            "Bearer ",
            "Bearer ael_k1 ",
            "Bearer ael k1",
            "Bearer\tael_k1",
            "ael_k1",
        ] {
            assert_eq!(one(refused), None, "{refused:?}");
        }
        let mut two = HeaderMap::new();
        two.append(AUTHORIZATION, "Bearer ael_k1".parse().unwrap());
        two.append(AUTHORIZATION, "Bearer ael_k2".parse().unwrap());
        assert_eq!(bearer_key(&two), None);
        assert_eq!(bearer_key(&HeaderMap::new()), None);
    }

    #[test]
    fn account_names() {
        for good in ["acme", "demo-1", "a_b", "0x"] {
            assert!(valid_account_name(good), "{good}");
        }
        for bad in ["", "Acme", "-a", "a/b", "@funding", &"a".repeat(64)] {
            assert!(!valid_account_name(bad), "{bad}");
        }
    }
}
