//! `parse`, `Decoder` and `decodeLines`: core's decode stage.
//!
//! A transcript is data, never an error: lines that are not JSON, or not
//! UTF-8 (from bytes), are skipped and counted, as the CLI does.

use agentshape_core::decode::{DecodeOptions, Decoder, Format, decode_bytes};
use agentshape_core::summary::SummaryBuilder;
use agentshape_core::{ErrorCategory, RunSummary};
use serde::Serialize;
use serde_json::Value;

use crate::errors::{Failure, Result, to_json};

/// The format names of the CLI's `--format` (plus the provider bodies and
/// the agents' own session files), `_` or `-` alike: the Python package's.
pub fn format_of(name: &str) -> Result<Format> {
    Ok(match name {
        "auto" => Format::Auto,
        "claude" => Format::Claude,
        "codex" => Format::Codex,
        "anthropic" => Format::Anthropic,
        "openai_chat" | "openai-chat" => Format::OpenaiChat,
        "openai_responses" | "openai-responses" => Format::OpenaiResponses,
        "ollama" => Format::Ollama,
        "gemini" => Format::Gemini,
        "text" => Format::Text,
        "claude_session" | "claude-session" => Format::ClaudeSession,
        "codex_rollout" | "codex-rollout" => Format::CodexRollout,
        "gemini_chat" | "gemini-chat" => Format::GeminiChat,
        other => {
            return Err(Failure::usage(format!(
                "unknown format `{other}` (known: auto, claude, codex, anthropic, openai_chat, \
                 openai_responses, ollama, gemini, text, claude_session, codex_rollout, gemini_chat)"
            )));
        }
    })
}

/// Decode options; `max_line_bytes` 0 keeps core's default.
pub fn options(max_line_bytes: usize) -> DecodeOptions {
    let mut opts = DecodeOptions::default();
    if max_line_bytes > 0 {
        opts.max_line_bytes = max_line_bytes;
    }
    opts
}

/// A run summary as the package reads it: `agentshape parse --json`'s
/// fields, and `failed` (the agent reported an error, not a heuristic).
#[derive(Serialize)]
struct Out<'a> {
    failed: bool,
    summary: &'a RunSummary,
}

/// The JSON of `summary` for the package.
pub fn summary_json(summary: &RunSummary) -> String {
    to_json(&Out {
        failed: summary
            .error_category
            .is_some_and(|c: ErrorCategory| !c.is_heuristic()),
        summary,
    })
}

/// `parse(transcript, {format, maxLineBytes})` over bytes (a string's UTF-8).
pub fn parse(bytes: &[u8], format: &str, max_line_bytes: usize) -> Result<String> {
    let format = format_of(format)?;
    Ok(summary_json(&decode_bytes(
        bytes,
        format,
        &options(max_line_bytes),
    )))
}

/// An incremental decoder: chunks in, events out, the summary at the end.
pub struct Stream {
    state: Option<(Decoder, SummaryBuilder)>,
}

impl Stream {
    /// A decoder for `format`.
    pub fn new(format: &str, max_line_bytes: usize) -> Result<Stream> {
        let decoder = Decoder::new(format_of(format)?, options(max_line_bytes));
        Ok(Stream {
            state: Some((decoder, SummaryBuilder::new())),
        })
    }

    /// Decode `chunk`; the events of the lines it completed, as a JSON array.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<String> {
        let (decoder, builder) = self.state.as_mut().ok_or_else(finished)?;
        let mut events = Vec::new();
        decoder.feed(chunk, &mut |e| {
            events.push(serde_json::to_value(&e).unwrap_or(Value::Null));
            builder.push(e);
        });
        Ok(to_json(&events))
    }

    /// Flush the last line; the run summary. The decoder is spent after.
    pub fn finish(&mut self) -> Result<String> {
        let (mut decoder, mut builder) = self.state.take().ok_or_else(finished)?;
        decoder.finish(&mut |e| builder.push(e));
        Ok(summary_json(&builder.finish(decoder.format())))
    }
}

fn finished() -> Failure {
    Failure::usage("the decoder has finished; make a new one")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = concat!(
        r#"{"type":"system","subtype":"init","session_id":"abc","model":"claude-x"}"#,
        "\n",
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"done"}]}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":true,"result":"Rate limit reached (429)","num_turns":2}"#,
        "\nnot json\n"
    );

    #[test]
    fn parse_and_chunked_decoding_agree() {
        let whole: Value =
            serde_json::from_str(&parse(CLAUDE.as_bytes(), "auto", 0).unwrap()).unwrap();
        assert_eq!(whole["failed"], true);
        let s = &whole["summary"];
        assert_eq!(
            (
                &s["format"],
                &s["session_id"],
                &s["output"],
                &s["error_category"],
                &s["skipped_lines"]
            ),
            (
                &"claude".into(),
                &"abc".into(),
                &"done".into(),
                &"rate_limit".into(),
                &1.into()
            )
        );
        let mut d = Stream::new("auto", 0).unwrap();
        let mut events = 0;
        for chunk in CLAUDE.as_bytes().chunks(7) {
            let got: Vec<Value> = serde_json::from_str(&d.feed(chunk).unwrap()).unwrap();
            events += got.len();
        }
        let chunked: Value = serde_json::from_str(&d.finish().unwrap()).unwrap();
        assert_eq!(chunked, whole);
        assert!(events >= 3);
        assert!(d.finish().is_err() && d.feed(b"x").is_err());
    }

    #[test]
    fn bad_utf8_lines_are_skipped_and_unknown_formats_refused() {
        let bytes = b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n{\"type\":\xff}\n";
        let out: Value = serde_json::from_str(&parse(bytes, "claude", 0).unwrap()).unwrap();
        assert_eq!(
            (&out["summary"]["output"], &out["summary"]["skipped_lines"]),
            (&"ok".into(), &1.into())
        );
        assert!(parse(b"x", "nope", 0).is_err());
        assert!(Stream::new("nope", 0).is_err());
    }
}
