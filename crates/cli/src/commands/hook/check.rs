//! `agentshape hook stop|subagent-stop`.

use crate::args::HookCheckArgs;
use crate::exit::Exit;

pub fn run(_args: &HookCheckArgs, _subagent: bool) -> Exit {
    Exit::Ok
}
