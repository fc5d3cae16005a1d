//! The sessions agents write themselves (Claude Code, Codex, Gemini CLI
//! session files), imported into the store and followed live: `agentshape
//! import`, `agentshape watch`, `serve --watch` (issue 28).
//!
//! - [`discover`]: which files, from the paths given or the agents'
//!   standard folders.
//! - [`read`]: one pass over one file with core's decoders, each event tied
//!   to the line it came from.
//! - [`import`]: a file against its import mark (unchanged, grown,
//!   replaced), the session record, the feed rows, one store transaction.
//! - [`watch`]: file-system notifications plus a periodic rescan.

pub mod discover;
pub mod import;
pub mod read;
pub mod watch;

use serde::Serialize;

/// An agent whose session files can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Agent {
    /// Claude Code (`~/.claude/projects`).
    #[serde(rename = "claude-code")]
    Claude,
    /// `OpenAI` Codex (`~/.codex/sessions`).
    #[serde(rename = "codex")]
    Codex,
    /// Gemini CLI (`~/.gemini/tmp/<hash>/chats`).
    #[serde(rename = "gemini-cli")]
    Gemini,
}

impl Agent {
    /// Every agent, in the order folders are scanned.
    pub const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Gemini];

    /// The name stored in `sessions.agent` (`claude-code`, `codex`, `gemini-cli`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini-cli",
        }
    }

    /// From `--agent` (`claude`, `codex`, `gemini`) or a stored name.
    pub fn from_name(name: &str) -> Option<Agent> {
        match name {
            "claude" | "claude-code" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "gemini" | "gemini-cli" => Some(Agent::Gemini),
            _ => None,
        }
    }
}
