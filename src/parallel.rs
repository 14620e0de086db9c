//! Independent work shared between the cores: items mapped on scoped threads, each thread
//! taking the next item not yet taken, the results returned in the items' order, so that a
//! caller's output is byte for byte what one thread gives. Used where the pieces of a pass
//! read nothing of each other (modules while they are parsed, output types while their
//! model-facing limitations are found), as rust-analyzer, ruff and Gleam share theirs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// The stack of a worker thread. Nesting is bounded before anything recursive runs (`E0104`,
/// the type depth limit) and the parser grows its own stack where it recurses, so this is a
/// margin; it is address space, reserved, not memory used.
const STACK_BYTES: usize = 16 << 20;

/// Below this much source text in all (about 25k lines), a pass over modules stays on the
/// calling thread. A second thread saves a few milliseconds there and costs the pages of an
/// allocator heap of its own: a generated 10k-line project (380 KB) parsed on two threads was
/// checked in 0.93 times the time at 1.41 times the peak memory (32 MiB against 23).
pub(crate) const PARALLEL_FROM_BYTES: usize = 1 << 20;

/// `f` over `items`, on every core when `worth_it` (a thread costs more than a small item
/// takes) and there are two items or more: `result[i]` is `f(&items[i])`.
pub(crate) fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    worth_it: bool,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if !worth_it || threads < 2 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    // Taking the next item, rather than a fixed share of the list, keeps one large item from
    // leaving the other threads idle.
    let work = || {
        let mut mine = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(at) else {
                break;
            };
            mine.push((at, f(item)));
        }
        done.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(&mut mine);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            // A thread that cannot be started leaves its share to the others: the calling
            // thread works too, so every item is mapped.
            let _ = std::thread::Builder::new()
                .name("aelc-worker".to_owned())
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, work);
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|&(at, _)| at);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_items_order_whoever_made_them() {
        let items: Vec<u64> = (0..1000).collect();
        // Uneven work, so that the threads finish out of order.
        let slow_square = |&n: &u64| {
            let mut acc = 0u64;
            for _ in 0..(n % 7) * 1000 {
                acc = std::hint::black_box(acc.wrapping_add(1));
            }
            n * n + acc - acc
        };
        let shared = map_in_order(&items, true, slow_square);
        let alone = map_in_order(&items, false, slow_square);
        let expected: Vec<u64> = items.iter().map(|n| n * n).collect();
        assert_eq!(shared, expected);
        assert_eq!(alone, expected);
        assert!(map_in_order(&[] as &[u64], true, slow_square).is_empty());
    }
}
