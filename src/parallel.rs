//! Independent work shared between the cores: items mapped on scoped threads, each thread
//! taking the next item not yet taken, the results returned in the items' order, so that a
//! caller's output is byte for byte what one thread gives. Used where the pieces of a pass
//! read nothing of each other (modules while they are parsed, output types while their
//! model-facing limitations are found), as rust-analyzer, ruff and Gleam share theirs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

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
            spawn_worker(scope, work);
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|&(at, _)| at);
    done.into_iter().map(|(_, result)| result).collect()
}

/// Starts a worker thread in `scope`. A thread that cannot be started leaves its share to the
/// others: the calling thread works too, so every item is still made.
fn spawn_worker<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    work: impl FnOnce() + Send + 'scope,
) {
    let _ = std::thread::Builder::new()
        .name("aelc-worker".to_owned())
        .stack_size(STACK_BYTES)
        .spawn_scoped(scope, work);
}

/// `make` over `items` in a pipeline: other threads make results up to `ahead` items past the
/// one the calling thread takes next, while the calling thread hands each result, in the
/// items' order, to `take`. A pass whose second half must stay on one thread (sema checking
/// the bodies that the parse gives it, with `&mut` of everything) so keeps the other cores
/// busy making what it will need next, instead of making a batch on every core and then
/// checking it alone. The calling thread makes an item itself when nobody has begun it, and
/// helps with the items ahead while it waits for one that is being made. At most `ahead`
/// results wait at once (and the one the calling thread is making), so what they hold stays
/// bounded.
pub(crate) fn map_ahead<T: Sync, R: Send>(
    items: &[T],
    worth_it: bool,
    ahead: usize,
    make: impl Fn(&T) -> R + Sync,
    mut take: impl FnMut(&T, R),
) {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if !worth_it || threads < 2 {
        for item in items {
            take(item, make(item));
        }
        return;
    }
    let pipeline = Pipeline {
        items,
        ahead: ahead.max(1),
        state: Mutex::new(Progress {
            next: 0,
            taken: 0,
            made: items.iter().map(|_| None).collect(),
            given_up: Vec::new(),
            stop: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            spawn_worker(scope, || pipeline.work(&make));
        }
        // Stops the workers however this thread leaves the scope, a panic in `take` included,
        // so that none waits for room that will never come.
        let _stop = StopOnDrop(&pipeline);
        for (at, item) in items.iter().enumerate() {
            let made = pipeline.result(at, &make);
            take(item, made);
        }
    });
}

/// What [`map_ahead`]'s threads share.
struct Pipeline<'i, T, R> {
    items: &'i [T],
    ahead: usize,
    state: Mutex<Progress<R>>,
    changed: Condvar,
}

struct Progress<R> {
    /// The first item nobody has begun.
    next: usize,
    /// How many results the calling thread has taken.
    taken: usize,
    /// Results made and not yet taken, by item.
    made: Vec<Option<R>>,
    /// Items begun by a worker that panicked: the calling thread makes them again.
    given_up: Vec<usize>,
    stop: bool,
}

impl<T: Sync, R: Send> Pipeline<'_, T, R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A worker: begins the next item while it is within `ahead` of the calling thread.
    fn work(&self, make: &(impl Fn(&T) -> R + Sync)) {
        let mut state = self.lock();
        loop {
            if state.stop || state.next >= self.items.len() {
                return;
            }
            if state.next >= state.taken + self.ahead {
                state = self
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            let at = state.next;
            state.next += 1;
            drop(state);
            let guard = GiveUpOnPanic { pipeline: self, at };
            let made = make(&self.items[at]);
            std::mem::forget(guard);
            state = self.lock();
            state.made[at] = Some(made);
            self.changed.notify_all();
        }
    }

    /// The result for item `at`, once made (by this thread when nobody else has begun it).
    fn result(&self, at: usize, make: &impl Fn(&T) -> R) -> R {
        let mut state = self.lock();
        loop {
            if let Some(made) = state.made[at].take() {
                state.taken = at + 1;
                self.changed.notify_all();
                return made;
            }
            if state.next <= at || state.given_up.contains(&at) {
                state.next = state.next.max(at + 1);
                state.taken = at + 1;
                self.changed.notify_all();
                drop(state);
                return make(&self.items[at]);
            }
            // Item `at` is being made: help with the next one rather than wait idle.
            if state.next < self.items.len() && state.next < at + self.ahead {
                let later = state.next;
                state.next += 1;
                drop(state);
                let made = make(&self.items[later]);
                state = self.lock();
                state.made[later] = Some(made);
                continue;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Hands item `at` back to the calling thread if `make` panics on a worker (the panic itself
/// reaches the caller when the scope ends), so that the calling thread does not wait for it.
struct GiveUpOnPanic<'p, 'i, T, R> {
    pipeline: &'p Pipeline<'i, T, R>,
    at: usize,
}

impl<T, R> Drop for GiveUpOnPanic<'_, '_, T, R> {
    fn drop(&mut self) {
        let mut state = self
            .pipeline
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.given_up.push(self.at);
        self.pipeline.changed.notify_all();
    }
}

struct StopOnDrop<'p, 'i, T, R>(&'p Pipeline<'i, T, R>);

impl<T, R> Drop for StopOnDrop<'_, '_, T, R> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.stop = true;
        self.0.changed.notify_all();
    }
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

    #[test]
    fn results_ahead_are_taken_in_order_and_few_wait_at_once() {
        use std::sync::atomic::AtomicIsize;
        let items: Vec<u64> = (0..2000).collect();
        for ahead in [1, 3, 128] {
            let waiting = AtomicIsize::new(0);
            let most_waiting = AtomicIsize::new(0);
            let mut taken = Vec::new();
            map_ahead(
                &items,
                true,
                ahead,
                |&n| {
                    // Uneven work, so that results are made out of order.
                    let mut acc = 0u64;
                    for _ in 0..(n % 5) * 2000 {
                        acc = std::hint::black_box(acc.wrapping_add(1));
                    }
                    let now = waiting.fetch_add(1, Ordering::SeqCst) + 1;
                    most_waiting.fetch_max(now, Ordering::SeqCst);
                    n * n + acc - acc
                },
                |&n, square| {
                    waiting.fetch_sub(1, Ordering::SeqCst);
                    taken.push((n, square));
                },
            );
            let expected: Vec<(u64, u64)> = items.iter().map(|&n| (n, n * n)).collect();
            assert_eq!(taken, expected, "ahead {ahead}");
            // The window, and the one the calling thread makes itself.
            let most = most_waiting.load(Ordering::SeqCst);
            assert!(
                most <= ahead as isize + 1,
                "ahead {ahead}: {most} waited at once"
            );
        }
        let mut alone = Vec::new();
        map_ahead(&items, false, 8, |&n| n + 1, |_, m| alone.push(m));
        assert_eq!(alone, (1..=2000).collect::<Vec<u64>>());
    }

    #[test]
    fn a_panic_while_making_ahead_reaches_the_caller_and_nobody_waits_forever() {
        let items: Vec<u64> = (0..500).collect();
        for bad in [0, 1, 250, 499] {
            let outcome = std::panic::catch_unwind(|| {
                map_ahead(
                    &items,
                    true,
                    4,
                    |&n| {
                        assert_ne!(n, bad, "made to fail");
                        n
                    },
                    |_, _| {},
                )
            });
            assert!(
                outcome.is_err(),
                "item {bad} panicked, and so must the call"
            );
        }
        let outcome = std::panic::catch_unwind(|| {
            map_ahead(
                &items,
                true,
                4,
                |&n| n,
                |&n, _| assert_ne!(n, 300, "taken to fail"),
            )
        });
        assert!(outcome.is_err());
    }
}
