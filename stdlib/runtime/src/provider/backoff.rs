//! [`RateLimits`]: what the providers asked for in their 429s (`retry-after`), per binding,
//! kept with the connected providers so that every run of a process honours it, not only the
//! run that was told.
//!
//! A server is made once per program ([`super::router::Connected`]) and a router per run; a
//! back-off kept in the router was forgotten by the next run, which then met the rate limit
//! again at once. Here a binding's "not before" instant is shared by every router made from
//! the same providers, so a call to a limited binding waits out what the server asked (at most
//! [`MAX_RETRY_AFTER`]) whichever run makes it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest `retry-after` honoured: a server asking for more is treated as unavailable for
/// this run rather than holding the caller (the budget's `max_time` bounds the run anyway).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Per binding, no call before an instant (see the module doc). Cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct RateLimits {
    not_before: Arc<Mutex<HashMap<String, Instant>>>,
}

impl RateLimits {
    /// How long a call to `binding` must wait now (zero when the binding is not limited).
    pub fn wait_for(&self, binding: &str) -> Duration {
        let not_before = self
            .not_before
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        not_before.get(binding).map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(Instant::now())
        })
    }

    /// The server of `binding` asked for `delay` before the next call: every call to it waits
    /// until then. A delay over [`MAX_RETRY_AFTER`] is not kept (the binding counts as
    /// unavailable for the run that was told); a later instant already kept stays.
    pub fn hold(&self, binding: &str, delay: Duration) {
        if delay > MAX_RETRY_AFTER {
            return;
        }
        let until = Instant::now() + delay;
        let mut not_before = self
            .not_before
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let at = not_before.entry(binding.to_owned()).or_insert(until);
        *at = (*at).max(until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_is_seen_by_every_clone_and_only_for_its_binding() {
        let limits = RateLimits::default();
        let other_run = limits.clone();
        assert_eq!(other_run.wait_for("primary"), Duration::ZERO);
        limits.hold("primary", Duration::from_secs(30));
        let wait = other_run.wait_for("primary");
        assert!(
            wait > Duration::from_secs(29) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(other_run.wait_for("fallback"), Duration::ZERO);
        // A shorter hold does not shorten a longer one.
        limits.hold("primary", Duration::from_secs(1));
        assert!(other_run.wait_for("primary") > Duration::from_secs(29));
    }

    #[test]
    fn a_delay_past_the_cap_is_not_kept() {
        let limits = RateLimits::default();
        limits.hold("primary", MAX_RETRY_AFTER + Duration::from_secs(1));
        assert_eq!(limits.wait_for("primary"), Duration::ZERO);
    }
}
