//! The last assistant message of a session file, for hook input without
//! `last_assistant_message` (Claude Code before it had the field).
//!
//! Note \[The last message of a file\]: a Claude Code session file writes
//! one line per content block, so one assistant message (one message id)
//! may be several lines: its text is the text blocks of every line with
//! that id, joined with a newline, as Claude Code joins them for
//! `last_assistant_message`. The last message that has any text wins (a
//! final message of only tool calls is not what the turn ends with). For a
//! `Stop` the sub-agents' lines (`isSidechain`) are skipped; a sub-agent's
//! own file is all sidechain, so they are kept there ([`LastMessage::new`]).
//! The file may lag behind the turn that just ended; the hook says so when
//! it falls back on it.

use crate::event::Event;

/// Fold decoded events into the last assistant message with text (Note
/// \[The last message of a file\]).
#[derive(Debug, Default)]
pub struct LastMessage {
    keep_sidechain: bool,
    in_sidechain: bool,
    current_id: Option<String>,
    current: String,
    current_has_text: bool,
    last: Option<String>,
}

impl LastMessage {
    /// A fold; `keep_sidechain` for a sub-agent's own file.
    pub fn new(keep_sidechain: bool) -> LastMessage {
        LastMessage {
            keep_sidechain,
            ..LastMessage::default()
        }
    }

    /// Take one event.
    pub fn push(&mut self, event: &Event) {
        match event {
            Event::Line(info) => self.in_sidechain = info.sidechain,
            _ if self.in_sidechain && !self.keep_sidechain => {}
            Event::Message { id, .. } if id.is_none() || *id != self.current_id => {
                self.close();
                self.current_id.clone_from(id);
            }
            Event::Text { text } if !text.trim().is_empty() => {
                if self.current_has_text {
                    self.current.push('\n');
                }
                self.current.push_str(text);
                self.current_has_text = true;
            }
            _ => {}
        }
    }

    fn close(&mut self) {
        if self.current_has_text {
            self.last = Some(std::mem::take(&mut self.current));
        }
        self.current.clear();
        self.current_has_text = false;
    }

    /// The last message with text, if any.
    pub fn finish(mut self) -> Option<String> {
        self.close();
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{DecodeOptions, Decoder, Format};

    fn last(file: &str, keep_sidechain: bool) -> Option<String> {
        let mut fold = LastMessage::new(keep_sidechain);
        let mut d = Decoder::new(Format::ClaudeSession, DecodeOptions::default());
        d.feed(file.as_bytes(), &mut |e| fold.push(&e));
        d.finish(&mut |e| fold.push(&e));
        fold.finish()
    }

    fn assistant(uuid: &str, msg: &str, block: &str, side: bool) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","sessionId":"s1","isSidechain":{side},"timestamp":"2026-11-26T10:00:00Z","message":{{"id":"{msg}","role":"assistant","model":"claude-sonnet-4-5","content":[{block}]}}}}"#
        )
    }

    fn text(t: &str) -> String {
        format!(
            r#"{{"type":"text","text":{}}}"#,
            serde_json::to_string(t).unwrap()
        )
    }

    #[test]
    fn the_last_message_with_text_joined_over_its_lines() {
        let tool = r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#;
        let user = r#"{"type":"user","uuid":"u2","sessionId":"s1","isSidechain":false,"timestamp":"2026-11-26T10:00:01Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#;
        let file = [
            assistant("a1", "m1", &text("first answer"), false),
            assistant("a2", "m1", tool, false),
            user.to_owned(),
            assistant("a3", "m2", &text("Here it is:"), false),
            assistant("a4", "m2", &text("{\"ok\": true}"), false),
            assistant("a5", "m3", &text("sub-agent talk"), true),
            assistant("a6", "m4", tool, false),
        ]
        .join("\n");
        assert_eq!(
            last(&file, false).as_deref(),
            Some("Here it is:\n{\"ok\": true}")
        );
        assert_eq!(last(&file, true).as_deref(), Some("sub-agent talk"));
        assert_eq!(last("", false), None);
        assert_eq!(last("not json\n{\"type\":\"user\"}", false), None);
    }
}
