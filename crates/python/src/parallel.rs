//! Batch work over every core, with the interpreter released.
//!
//! Note [Batch threads]: `extract_many` and `validate_many` split their
//! items over `threads` scoped threads (default: the machine's cores), each
//! taking the next block of [`BLOCK`] items from a shared counter, so a few
//! slow items (a 5 MB reply) do not leave the other threads idle. Results
//! land in input order. No global thread pool: a call owns its threads, so
//! `threads=1` and `threads=2` measure exactly that, and nothing outlives
//! the call. Each thread gets an 8 MiB stack, the main thread's, because
//! validating deeply nested values recurses.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Items a thread takes at a time.
const BLOCK: usize = 32;

/// Stack of each worker thread (Note [Batch threads]).
const STACK: usize = 8 << 20;

/// The number of threads for `threads` (None: every core), at most one per
/// block of items.
pub fn thread_count(threads: Option<usize>, items: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    threads
        .unwrap_or(cores)
        .max(1)
        .min(items.div_ceil(BLOCK).max(1))
}

/// `items.iter().map(f).collect()`, on [`thread_count`] threads.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let n = thread_count(threads, items.len());
    if n <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Vec<R>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..n {
            let work = || {
                loop {
                    let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                    if start >= items.len() {
                        break;
                    }
                    let end = (start + BLOCK).min(items.len());
                    let out: Vec<R> = items[start..end].iter().map(&f).collect();
                    done.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((start, out));
                }
            };
            let spawned = std::thread::Builder::new()
                .stack_size(STACK)
                .spawn_scoped(scope, work);
            if spawned.is_err() {
                // No thread could be started: the calling thread does the rest.
                work();
            }
        }
    });
    let mut blocks = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    blocks.sort_unstable_by_key(|(start, _)| *start);
    blocks.into_iter().flat_map(|(_, out)| out).collect()
}
