//! The providers' host-name resolver: ureq's own, with what it resolves kept for a while and
//! IP addresses read as they are.
//!
//! Why: ureq resolves the host of every request, before it looks for a kept connection, and
//! under a deadline (every model call has one) it does so on a thread spawned for the lookup
//! (`getaddrinfo` cannot be interrupted). A loaded gateway started and tore down a thread per
//! model call — under callgrind, 15% of a full run's instructions went to new threads and
//! their allocator state — only to reach the connection it already had. Here an address
//! (`127.0.0.1`, `[::1]`) needs no lookup at all, and a name's answer is kept for [`KEEP`],
//! a lookup a connection pool's lifetime or so, as Java's and Go's clients keep theirs; a
//! provider's addresses rarely change faster, and a failed lookup is never kept.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a name's addresses are used before it is looked up again.
const KEEP: Duration = Duration::from_secs(30);

/// At most this many names kept (a gateway calls a handful of providers).
const NAMES: usize = 64;

#[derive(Debug, Default)]
pub(crate) struct KeepingResolver {
    lookup: DefaultResolver,
    /// `host:port` → when it was looked up, and its addresses.
    kept: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
}

impl Resolver for KeepingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return self.lookup.resolve(uri, config, timeout);
        };
        let Some(port) = authority
            .port_u16()
            .or_else(|| default_port(scheme.as_str()))
        else {
            return self.lookup.resolve(uri, config, timeout);
        };
        let host = authority.host();
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>() {
            let mut addrs = self.empty();
            addrs.push(SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{host}:{port}");
        let now = Instant::now();
        if let Ok(kept) = self.kept.lock() {
            if let Some((at, addrs)) = kept.get(&key) {
                if now.duration_since(*at) < KEEP {
                    return Ok(addrs.clone());
                }
            }
        }
        let addrs = self.lookup.resolve(uri, config, timeout)?;
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() >= NAMES {
                kept.retain(|_, (at, _)| now.duration_since(*at) < KEEP);
            }
            if kept.len() < NAMES {
                kept.insert(key, (now, addrs.clone()));
            }
        }
        Ok(addrs)
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ureq::unversioned::transport::time::Duration as UreqDuration;

    fn resolve(resolver: &KeepingResolver, url: &str) -> Vec<SocketAddr> {
        let uri: Uri = url.parse().expect("a URI");
        let config = Config::default();
        let timeout = NextTimeout {
            after: UreqDuration::from_secs(5),
            reason: ureq::Timeout::Resolve,
            per_read: None,
            per_write: None,
        };
        resolver
            .resolve(&uri, &config, timeout)
            .expect("resolved")
            .iter()
            .copied()
            .collect()
    }

    #[test]
    fn addresses_need_no_lookup_and_names_are_kept() {
        let resolver = KeepingResolver::default();
        assert_eq!(
            resolve(&resolver, "http://127.0.0.1:8080/v1"),
            vec!["127.0.0.1:8080".parse().unwrap()]
        );
        assert_eq!(
            resolve(&resolver, "https://[::1]/v1"),
            vec!["[::1]:443".parse().unwrap()]
        );
        assert!(
            resolver.kept.lock().unwrap().is_empty(),
            "no lookup for an address"
        );
        let first = resolve(&resolver, "http://localhost:9/v1");
        assert!(!first.is_empty());
        assert!(resolver.kept.lock().unwrap().contains_key("localhost:9"));
        assert_eq!(resolve(&resolver, "http://localhost:9/x"), first);
    }
}
