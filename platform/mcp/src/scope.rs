//! What a mandate allows: its `--allow` and `--deny` globs against an agent's name
//! (`acme/review`) and capability (`review.document`), its expiry, its currency, and the
//! worst case of a call (the agent's price plus its delegates' worst cases).

use crate::market::{Card as Agent, Market};
use aelc_runtime::money::Amount;
use aelc_store::{Mandate, UnixMs};
use globset::{Glob, GlobMatcher};

/// Whether the mandate lets an agent be hired, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny(String),
}

impl Decision {
    pub fn word(&self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny(_) => "deny",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            Decision::Allow => None,
            Decision::Deny(why) => Some(why),
        }
    }
}

/// A glob of `--allow`/`--deny`: `*` matches any run of characters, `/` included.
pub fn matcher(pattern: &str) -> Option<GlobMatcher> {
    Glob::new(pattern).ok().map(|g| g.compile_matcher())
}

fn matches(pattern: &str, agent: &Agent) -> bool {
    let Some(m) = matcher(pattern) else {
        return pattern == agent.name;
    };
    m.is_match(&agent.name) || agent.capability.as_deref().is_some_and(|c| m.is_match(c))
}

/// Why `mandate` refuses everything now, if it does.
pub fn expired(mandate: &Mandate, now_ms: UnixMs) -> Option<String> {
    let at = mandate.expires_ms?;
    (now_ms >= at).then(|| {
        format!(
            "the mandate {} expired at {} (ms since the epoch); a human must create a new one",
            mandate.id(),
            at
        )
    })
}

/// The mandate's decision on `agent` (expiry, deny, allow, currency, availability).
pub fn decide(mandate: &Mandate, project: &Market, agent: &Agent, now_ms: UnixMs) -> Decision {
    if let Some(why) = expired(mandate, now_ms) {
        return Decision::Deny(why);
    }
    if let Some(p) = mandate.deny.iter().find(|p| matches(p, agent)) {
        return Decision::Deny(format!("the mandate denies `{p}`"));
    }
    if !mandate.allow.iter().any(|p| matches(p, agent)) {
        return Decision::Deny(format!(
            "outside the mandate's scope (allows {})",
            if mandate.allow.is_empty() {
                "nothing".to_owned()
            } else {
                mandate.allow.join(", ")
            }
        ));
    }
    if let Some(c) = &agent.currency {
        if c != &mandate.currency {
            return Decision::Deny(format!(
                "priced in {c}; the mandate spends {}",
                mandate.currency
            ));
        }
    }
    if !agent.missing.is_empty() {
        return Decision::Deny(format!(
            "cannot run here: it needs {}",
            agent.missing.join(", ")
        ));
    }
    match worst_case(project, agent) {
        Some(w) if w > mandate.budget => Decision::Deny(format!(
            "its worst case ({w} {}) is above the whole budget ({} {})",
            mandate.currency, mandate.budget, mandate.currency
        )),
        Some(_) => Decision::Allow,
        None => Decision::Deny("its worst case cannot be computed".to_owned()),
    }
}

/// The most one call can cost: the agent's price plus the worst cases of the agents it
/// delegates to (their manifests' `delegates`), each counted once per path. `None` when the
/// delegation graph has a cycle.
pub fn worst_case(project: &Market, agent: &Agent) -> Option<Amount> {
    fn walk(project: &Market, agent: &Agent, depth: usize) -> Option<Amount> {
        if depth > aelc_runtime::exec::MAX_DELEGATION_DEPTH {
            return None;
        }
        let mut total = agent.price;
        let delegates = agent.manifest.get("delegates").and_then(|d| d.as_array());
        for name in delegates.into_iter().flatten().filter_map(|d| d.as_str()) {
            if let Some(child) = project.card(name) {
                total = total.checked_add(walk(project, child, depth + 1)?)?;
            }
        }
        Some(total)
    }
    walk(project, agent, 0)
}
