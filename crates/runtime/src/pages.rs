//! Huge pages for bulk work only: the process asks the kernel for small
//! pages while it starts, takes huge pages back once a command has bulk
//! input, and gives its children the setting it was started with.
//!
//! Note \[Huge pages for bulk only\]: the CLI's allocator (mimalloc)
//! reserves a 1 GiB arena and marks it `MADV_HUGEPAGE`, so where the
//! kernel's transparent huge pages are `madvise` (the common default) the
//! first byte a thread touches in each 2 MiB of it faults in a whole huge
//! page, zeroed. A 12 KB `parse` touched four such pages (8 MiB zeroed by
//! the kernel for kilobytes used), six or seven with masking on (the
//! masker is built on a thread of its own, whose allocations land in
//! fresh pages): perf showed `clear_page_erms` as the largest item of a
//! short command. With the process's `PR_SET_THP_DISABLE` set at start
//! (measured, 101 interleaved rounds): a 12 KB `parse --json` 8.46 →
//! 7.16 ms masked and 7.13 → 6.24 ms with `--no-mask`; `parse` of 40 MB of
//! session files about 5% faster; `import` no slower. `extract --jsonl`
//! over 40 MB was about 5% slower in CPU with small pages (its batches of
//! lines and results are megabytes, reused batch after batch, where one
//! fault per 2 MiB beats 512), so a command that reads more than one batch
//! of lines takes huge pages back ([`bulk`]): then as fast as before.
//!
//! The setting is inherited across `fork` and `execve`, so every child
//! this process starts (an agent, an alert's command) is started after
//! [`for_children`], with the setting the process itself was started with.
//! A process started with huge pages off (its parent's choice) keeps them
//! off throughout. Elsewhere than Linux these do nothing.

#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicU8, Ordering};

/// What the process was started with: 0 unknown (never asked), 1 huge
/// pages allowed, 2 off.
#[cfg(target_os = "linux")]
static STARTED_WITH: AtomicU8 = AtomicU8::new(0);

/// Small pages from now on (Note \[Huge pages for bulk only\]); call first
/// thing in `main`. Remembers the setting the process was started with.
pub fn small() {
    #[cfg(target_os = "linux")]
    {
        let Ok(off) = nix::sys::prctl::get_thp_disable() else {
            return;
        };
        // Only the first call finds what the process was started with.
        let _ = STARTED_WITH.compare_exchange(
            0,
            if off { 2 } else { 1 },
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        if STARTED_WITH.load(Ordering::SeqCst) == 1 {
            let _ = nix::sys::prctl::set_thp_disable(true);
        }
    }
}

/// Huge pages again, as the process was started with, for a command that
/// has bulk input (more than one batch of lines).
pub fn bulk() {
    restore();
}

/// The setting the process was started with, before a child is spawned
/// (the kernel passes it on to the child).
pub fn for_children() {
    restore();
}

/// Back to the setting [`small`] found; nothing when it was never called.
fn restore() {
    #[cfg(target_os = "linux")]
    if STARTED_WITH.load(Ordering::SeqCst) == 1 {
        let _ = nix::sys::prctl::set_thp_disable(false);
    }
}
