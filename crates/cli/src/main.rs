//! The `agentshape` binary: argument parsing and output only; the work is in
//! `agentshape-core`.

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

mod args;
mod commands;
mod exit;
mod input;
mod mask;
mod otel;
mod output;
mod prices;
mod replace;
mod signals;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;

/// mimalloc rather than the system allocator: `extract --jsonl` and
/// `validate --jsonl` build and drop many small strings and maps per line
/// on every core, where glibc's malloc and free were about a fifth of the
/// profile (measured in the README's speed section).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A panic is a bug: the hook prints one line saying so, and the unwind is
/// caught here to exit 70 instead of Rust's 101 (a panic inside a rayon
/// worker reaches here too; rayon re-raises it on the calling thread).
fn main() -> ExitCode {
    // Runtime's Note [Huge pages for bulk only]: before the first thread.
    agentshape_runtime::pages::small();
    exit::install_panic_hook();
    let result = catch_unwind(AssertUnwindSafe(|| {
        #[cfg(debug_assertions)]
        exit::debug_panic();
        exit::report(commands::run(std::env::args_os()))
    }));
    result.unwrap_or(ExitCode::from(exit::INTERNAL_ERROR))
}
