//! `agentshape hook`: Claude Code command hooks (issue 30).
//!
//! `stop` and `subagent-stop` validate what the agent hands back and block
//! the stop with the errors as the reason; `post-tool-use` feeds tool calls
//! to the live feed; `install`/`uninstall` edit Claude Code's settings.

mod capture;
mod check;
mod install;

use crate::args::{HookAction, HookArgs};
use crate::exit::Exit;

/// Run `agentshape hook …`.
///
/// # Errors
/// Only `install`/`uninstall` return errors (a settings file that is not
/// JSON, a failed write); the hooks themselves never fail the session
/// (Note \[A hook never breaks the session\] in the runtime's `hook`).
pub fn run(args: &HookArgs) -> anyhow::Result<Exit> {
    match &args.action {
        HookAction::Stop(a) => Ok(check::run(a, false)),
        HookAction::SubagentStop(a) => Ok(check::run(a, true)),
        HookAction::PostToolUse(a) => Ok(capture::run(a)),
        HookAction::Install(a) => install::install(a),
        HookAction::Uninstall(a) => install::uninstall(a),
    }
}
