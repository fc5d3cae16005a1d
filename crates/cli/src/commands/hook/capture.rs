//! `agentshape hook post-tool-use`.

use crate::args::HookCaptureArgs;
use crate::exit::Exit;

pub fn run(_args: &HookCaptureArgs) -> Exit {
    Exit::Ok
}
