//! Cold runs: each timed run starts with the caches holding none of its data, as a one-shot
//! `aelc check` does.
//!
//! A benchmark that runs the same 10k-line parse over and over finds that module's text,
//! tokens and the memory of the previous tree still in the caches (a 10k-line tree is about
//! 10 MB); a 100k-line one never fits. The hot ratio of the two sizes thus measures how much
//! of the small input the caches hold as much as how the work grows. Timing each run after
//! [`evict`] puts both sizes on the same footing: what is left is how the work itself grows.

use std::sync::Mutex;

/// Larger than any cache of the machines we measure on.
const EVICTION_BYTES: usize = 512 << 20;

static BUFFER: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Writes one byte in every cache line of a buffer larger than the caches, so that whatever
/// they held before is gone (written back, then replaced).
pub fn evict() {
    let mut buffer = BUFFER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if buffer.is_empty() {
        *buffer = vec![1u8; EVICTION_BYTES];
    }
    for line in buffer.chunks_mut(64) {
        line[0] = line[0].wrapping_add(1);
    }
    std::hint::black_box(&*buffer);
}
