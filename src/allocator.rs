//! The global allocator of aelc's binaries (`aelc`, `aelc-lsp`) and of the benches, which
//! measure what the binaries ship: mimalloc, with freed memory kept for a second and arena
//! memory committed as it is used.
//!
//! Why: parsing and checking build many small nodes and drop them together. With glibc's
//! malloc a third of the parse time went to malloc/free and to faulting trimmed pages back in;
//! mimalloc's default of returning freed pages to the OS after 10 ms made every re-parse in
//! the language server (and every round of a benchmark) fault them in again. One second keeps
//! them across a burst of edits and still gives memory back to the OS when the server idles.
//!
//! [`Counting`] is the same allocator counting the bytes it hands out, for what measures
//! memory: the front end's benchmark (`benches/check_memory.rs`) and the fuzzers' heap bounds
//! (`aelc-fuzz`); the shipped binaries never install it.
//!
//! The library never installs an allocator itself: a binary opts in with
//! `#[global_allocator] static GLOBAL: aelc::allocator::Allocator = aelc::allocator::Allocator;`
//! and calls [`configure`] first thing in `main`.

// The crate's only unsafe code: mimalloc's option table is set through its C API.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

pub use mimalloc::MiMalloc as Allocator;

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_e` (`mimalloc.h`: right after
/// `mi_option_eager_commit_delay`, 14, which the `-sys` crate names); the test below checks
/// that the index still holds an option whose default is the documented 10 ms.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_eager_commit_delay + 1;

/// How long freed memory stays with the process before it is returned to the OS.
const PURGE_DELAY_MS: std::os::raw::c_long = 1000;

/// `mi_option_arena_eager_commit` in mimalloc v2's `mi_option_e` (`mimalloc.h`: after
/// `mi_option_verbose`, 2, and `mi_option_eager_commit`); the test below checks that the index
/// holds an option whose default is the documented 2 ("only where the OS overcommits").
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_verbose + 2;

/// Installs the shipped allocator in a binary: `aelc::ship_allocator!();` at the top of its
/// `main.rs`. mimalloc becomes the global allocator, and its options ([`configure`]) are set
/// from the executable's constructors (`.init_array`, on ELF targets), before the Rust
/// runtime's first allocation: set in `main`, the arena option came after the runtime had made
/// the first arena, committed whole. From the start, `aelc --version` is resident in 6.3 MiB
/// rather than 10.1, and `aelc check` of a 10k-line project in 19.4 rather than 23.0 (about
/// 6 MiB less at 1M lines). `main` still calls [`configure`] first thing, for the targets
/// without `.init_array`; a second call changes nothing.
#[macro_export]
macro_rules! ship_allocator {
    () => {
        /// mimalloc, kept warm: see [`aelc::allocator`].
        #[global_allocator]
        static GLOBAL: $crate::allocator::Allocator = $crate::allocator::Allocator;

        /// Run by the loader before `main` (an ELF constructor); it only stores option values.
        #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
        #[used]
        // A function pointer in the constructors' section: the one use of `link_section`.
        #[allow(unsafe_code)]
        #[link_section = ".init_array"]
        static CONFIGURE_ALLOCATOR_FIRST: extern "C" fn() = {
            extern "C" fn configure_allocator() {
                $crate::allocator::configure();
            }
            configure_allocator
        };
    };
}

/// Sets the allocator's options: at the start of `main`, and before it where the target allows
/// ([`ship_allocator!`]).
pub fn configure() {
    // SAFETY: `mi_option_set` only stores a value in mimalloc's option table; it may be called
    // at any time, from any thread.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) }
    // Arena memory is committed as it is used, not all at once: on Linux (which overcommits)
    // mimalloc's default commits whole arenas up front. Set in `main`, it held only for the
    // arenas made after the runtime's first allocations (`aelc check` of the generated
    // 1M-line project peaked 0.7% lower); from the process's start, as `ship_allocator!`
    // sets it, it saves the first arena too (see there).
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) }
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

/// `list` in a block of exactly its length, for a list that lives long (the syntax trees live
/// through a whole check). Not [`Vec::shrink_to_fit`]: mimalloc shrinks a block in place by
/// keeping it whole when the new size is at least half the old (`mi_realloc`), so a list grown
/// by doubling and then "shrunk" kept its slack resident, up to half its block, while the
/// counted bytes ([`Counting`]) said otherwise. A list already exact is returned as it is.
pub fn without_slack<T>(list: Vec<T>) -> Vec<T> {
    if list.capacity() == list.len() {
        return list;
    }
    let mut exact = Vec::with_capacity(list.len());
    exact.extend(list);
    exact
}

/// The shipped allocator, counting: the bytes live now and at most since the last
/// [`Counting::take_peak`], and the live allocations by size, for `benches/check_memory.rs`
/// and the fuzzers' heap bounds. Never installed by the shipped binaries: the counting costs
/// atomic adds per call. A failed allocation (null) is not counted.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Live allocations of each size up to [`SIZES`] bytes (larger ones counted in the last slot).
static BY_SIZE: [AtomicUsize; SIZES] = [const { AtomicUsize::new(0) }; SIZES];

/// How many sizes [`Counting::by_size`] tells apart.
pub const SIZES: usize = 2048;

fn added(size: usize) {
    let now = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(now, Relaxed);
    BY_SIZE[size.min(SIZES - 1)].fetch_add(1, Relaxed);
}

/// `ptr`, counted as `size` bytes when the allocation succeeded.
fn counted(ptr: *mut u8, size: usize) -> *mut u8 {
    if !ptr.is_null() {
        added(size);
    }
    ptr
}

fn removed(size: usize) {
    LIVE.fetch_sub(size, Relaxed);
    BY_SIZE[size.min(SIZES - 1)].fetch_sub(1, Relaxed);
}

impl Counting {
    /// Bytes allocated and not yet freed.
    pub fn live() -> usize {
        LIVE.load(Relaxed)
    }

    /// The most bytes live at once since the last call; starts the next period at the bytes
    /// live now.
    pub fn take_peak() -> usize {
        PEAK.swap(LIVE.load(Relaxed), Relaxed)
    }

    /// The live allocations of each size (`[size]`, the last slot for every larger one).
    pub fn by_size() -> Vec<usize> {
        BY_SIZE.iter().map(|n| n.load(Relaxed)).collect()
    }
}

// SAFETY: every call is passed on unchanged to mimalloc, which upholds `GlobalAlloc`'s
// contract; the counters are plain atomics beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        counted(unsafe { Allocator.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        counted(unsafe { Allocator.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        removed(layout.size());
        // SAFETY: as above.
        unsafe { Allocator.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let moved = unsafe { Allocator.realloc(ptr, layout, new_size) };
        // On failure the old block stays allocated, as it was counted.
        if !moved.is_null() {
            removed(layout.size());
            added(new_size);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // This test binary ships the allocator as `aelc` does, constructor included.
    crate::ship_allocator!();

    /// The options hold from before `main`: read first thing in a fresh process of this test
    /// binary, where nothing called [`configure`] but the constructor of [`ship_allocator!`].
    #[test]
    fn the_options_are_set_before_main() {
        let name = "allocator::tests::options_as_the_process_starts";
        let exe = std::env::current_exe().expect("the test binary's path");
        let out = std::process::Command::new(exe)
            .args([name, "--exact", "--ignored", "--test-threads=1"])
            .output()
            .expect("run the test binary");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{name} alone:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    #[ignore = "run alone, in a fresh process, by the test above"]
    fn options_as_the_process_starts() {
        // SAFETY: reads mimalloc's option table.
        let read = |option| unsafe { libmimalloc_sys::mi_option_get(option) };
        assert_eq!(
            (read(ARENA_EAGER_COMMIT), read(PURGE_DELAY)),
            (0, PURGE_DELAY_MS)
        );
    }

    #[test]
    fn a_list_without_slack_has_its_length_for_room() {
        let mut list: Vec<String> = Vec::new();
        for i in 0..13 {
            list.push(i.to_string());
        }
        assert!(list.capacity() > 13);
        let exact = without_slack(list.clone());
        assert_eq!((exact.len(), exact.capacity()), (13, 13));
        assert_eq!(exact, list);
        assert_eq!(without_slack(Vec::<u8>::new()).capacity(), 0);
    }

    /// Why [`without_slack`] copies: mimalloc "shrinks" 2432 bytes (16 fields of 152) to 1976
    /// (13) by keeping the whole block.
    #[test]
    fn mimalloc_keeps_a_block_shrunk_by_less_than_half() {
        // SAFETY: a block from mimalloc, resized and freed by mimalloc, never read.
        unsafe {
            let block = libmimalloc_sys::mi_malloc(2432);
            assert!(!block.is_null());
            let shrunk = libmimalloc_sys::mi_realloc(block, 1976);
            assert_eq!(
                shrunk, block,
                "moved: a shrink could then be left to the allocator"
            );
            assert!(libmimalloc_sys::mi_usable_size(shrunk) >= 2432);
            libmimalloc_sys::mi_free(shrunk);
        }
    }

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

    #[test]
    fn the_arena_eager_commit_index_names_arena_eager_commit() {
        // SAFETY: reads mimalloc's option table.
        let value = unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) };
        assert!(
            value == 2 || value == 0,
            "option {ARENA_EAGER_COMMIT} is {value}: not mimalloc's arena eager commit (default 2)"
        );
        configure();
        // SAFETY: as above.
        let value = unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) };
        assert_eq!(value, 0);
    }
}
