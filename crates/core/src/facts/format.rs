//! The names of the transcript formats a run can be decoded from.

use serde::{Deserialize, Serialize};

/// Transcript formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Detect from the first non-blank bytes.
    #[default]
    Auto,
    /// Claude Code `--output-format stream-json`.
    Claude,
    /// Codex CLI `exec --json`.
    Codex,
    /// Anthropic Messages API response body.
    Anthropic,
    /// `OpenAI` Chat Completions response body.
    OpenaiChat,
    /// `OpenAI` Responses API response body.
    OpenaiResponses,
    /// Ollama `/api/chat` response body.
    Ollama,
    /// Gemini `generateContent` response body.
    Gemini,
    /// Plain text (a reply pasted from a log).
    Text,
    /// A Claude Code session file (`~/.claude/projects/<cwd>/<uuid>.jsonl`).
    #[serde(rename = "claude-session", alias = "claude_session")]
    ClaudeSession,
    /// A Codex rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    #[serde(rename = "codex-rollout", alias = "codex_rollout")]
    CodexRollout,
    /// A Gemini CLI chat file (one JSON document per session).
    #[serde(rename = "gemini-chat", alias = "gemini_chat")]
    GeminiChat,
}

impl Format {
    /// Every format, `Auto` first (for fuzzing and for listing in `--help`).
    pub const ALL: [Format; 12] = [
        Format::Auto,
        Format::Claude,
        Format::Codex,
        Format::Anthropic,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Ollama,
        Format::Gemini,
        Format::Text,
        Format::ClaudeSession,
        Format::CodexRollout,
        Format::GeminiChat,
    ];

    /// Whether this format is a session file an agent wrote itself
    /// (the run summary then carries a `session` object).
    pub fn is_native(self) -> bool {
        matches!(
            self,
            Format::ClaudeSession | Format::CodexRollout | Format::GeminiChat
        )
    }

    /// Whether this format is read line by line (JSON Lines).
    pub(crate) fn is_lines(self) -> bool {
        matches!(
            self,
            Format::Claude | Format::Codex | Format::ClaudeSession | Format::CodexRollout
        )
    }

    /// Whether this format is one provider response body (read whole).
    pub fn is_provider(self) -> bool {
        matches!(
            self,
            Format::Anthropic
                | Format::OpenaiChat
                | Format::OpenaiResponses
                | Format::Ollama
                | Format::Gemini
        )
    }
}
