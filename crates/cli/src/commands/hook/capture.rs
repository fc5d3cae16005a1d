//! `agentshape hook post-tool-use`: the runtime's `hook::capture`; always
//! exit 0, nothing on stdout.

use agentshape_runtime::hook::capture::capture;

use super::check::{process_start, read_input, store_side, warn};
use crate::args::HookCaptureArgs;
use crate::exit::Exit;
use crate::output::eprint;

/// Record the tool call; always exit 0.
pub fn run(args: &HookCaptureArgs) -> Exit {
    let started = process_start();
    let bytes = match read_input() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("agentshape hook: {e}"));
            return Exit::Ok;
        }
    };
    let (open, spool) = store_side(&args.store);
    let answer = capture(&bytes, started, open, spool);
    warn(&answer.warnings);
    if let Some(call) = &answer.call {
        crate::otel::hook_export(&args.otlp, started, call, &bytes);
    }
    Exit::Ok
}
