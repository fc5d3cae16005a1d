//! The `agentshape` binary: argument parsing and output only; the work is in
//! `agentshape-core`.

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]

mod args;
mod commands;
mod exit;
mod input;
mod output;

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::report(commands::run(std::env::args_os()))
}
