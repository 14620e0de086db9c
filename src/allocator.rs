//! The global allocator of aelc's binaries (`aelc`, `aelc-lsp`) and of the benches, which
//! measure what the binaries ship: mimalloc, with freed memory kept for a second.
//!
//! Why: parsing and checking build many small nodes and drop them together. With glibc's
//! malloc a third of the parse time went to malloc/free and to faulting trimmed pages back in;
//! mimalloc's default of returning freed pages to the OS after 10 ms made every re-parse in
//! the language server (and every round of a benchmark) fault them in again. One second keeps
//! them across a burst of edits and still gives memory back to the OS when the server idles.
//!
//! The library never installs an allocator itself: a binary opts in with
//! `#[global_allocator] static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;`
//! and calls [`configure`] first thing in `main`.

// The crate's only unsafe code: mimalloc's option table is set through its C API.
#![allow(unsafe_code)]

pub use mimalloc::MiMalloc as Allocator;

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_e` (`mimalloc.h`: right after
/// `mi_option_eager_commit_delay`, 14, which the `-sys` crate names); the test below checks
/// that the index still holds an option whose default is the documented 10 ms.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_eager_commit_delay + 1;

/// How long freed memory stays with the process before it is returned to the OS.
const PURGE_DELAY_MS: std::os::raw::c_long = 1000;

/// Sets the allocator's options; call it at the start of `main`.
pub fn configure() {
    // SAFETY: `mi_option_set` only stores a value in mimalloc's option table; it may be called
    // at any time, from any thread.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) }
}

/// Gives the memory freed so far back to the OS now rather than after the purge delay. The
/// language server calls it when it drops a stale analysis before building the next: pages
/// freed in a burst and left waiting for their delay count in its peak beside the new one.
/// Harmless when mimalloc is not the global allocator (its own heap is then empty).
pub fn release_freed() {
    // SAFETY: `mi_collect` only walks and trims mimalloc's own heaps; it may be called at any
    // time, from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_index_names_the_purge_delay() {
        // SAFETY: reads mimalloc's option table.
        let value = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        assert!(
            value == 10 || value == PURGE_DELAY_MS,
            "option {PURGE_DELAY} is {value}: not mimalloc's purge delay (default 10 ms)"
        );
        configure();
        // SAFETY: as above.
        let value = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        assert_eq!(value, PURGE_DELAY_MS);
    }
}
