//! The `agentshape` binary: argument parsing and output only; the work is in
//! `agentshape-core`.

mod args;
mod commands;
mod exit;
mod input;
mod output;

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::report(commands::run(std::env::args_os()))
}
