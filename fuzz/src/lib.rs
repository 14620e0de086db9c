//! The targets of `aelc-fuzz` and what drives them, as a library: the stable driver
//! (`src/main.rs`) and the `cargo fuzz` targets of `fuzz/cargo-fuzz/` call the same functions.

pub mod corpus;
pub mod mutate;
pub mod targets;

use std::hash::{Hash, Hasher};

/// A stable 64-bit hash (std's SipHash with fixed keys): names finding files and seeds the
/// language-server sessions.
pub fn hash(bytes: &[u8]) -> u64 {
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}
