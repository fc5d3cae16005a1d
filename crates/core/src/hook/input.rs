//! The JSON object Claude Code writes to a command hook's stdin.
//!
//! Note \[Lenient hook input\]: the fields differ between Claude Code
//! versions (`last_assistant_message` is recent; `agent_type` and
//! `agent_transcript_path` came with sub-agent hooks) and between events,
//! so every field but `session_id` is optional, unknown fields are ignored
//! and a field of the wrong type is treated as absent and named in
//! [`HookInput::ignored`]: a hook must still answer for an input it only
//! half understands. Only bytes that are not one JSON object are an error.

use serde_json::{Map, Value};

/// The hook event an input is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// The main agent's turn ends.
    Stop,
    /// A sub-agent's turn ends.
    SubagentStop,
    /// A tool call returned.
    PostToolUse,
    /// Any other event (named in [`HookInput::event_name`]).
    Other,
}

impl HookEvent {
    /// The event as Claude Code names it.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Other => "Other",
        }
    }

    fn of(name: &str) -> HookEvent {
        match name {
            "Stop" => HookEvent::Stop,
            "SubagentStop" => HookEvent::SubagentStop,
            "PostToolUse" => HookEvent::PostToolUse,
            _ => HookEvent::Other,
        }
    }
}

/// What a hook input holds (Note \[Lenient hook input\]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    /// Claude Code's session id (the id of its session file).
    pub session_id: Option<String>,
    /// The main session's file.
    pub transcript_path: Option<String>,
    /// The project directory.
    pub cwd: Option<String>,
    /// `hook_event_name` as written.
    pub event_name: Option<String>,
    /// True when the model is already continuing because a stop hook blocked.
    pub stop_hook_active: bool,
    /// The text the turn ends with (recent versions).
    pub last_assistant_message: Option<String>,
    /// `SubagentStop`: the sub-agent's id.
    pub agent_id: Option<String>,
    /// `SubagentStop`: the sub-agent's type (`reviewer`, `general-purpose`).
    pub agent_type: Option<String>,
    /// `SubagentStop`: the sub-agent's own session file.
    pub agent_transcript_path: Option<String>,
    /// `PostToolUse`: the tool.
    pub tool_name: Option<String>,
    /// `PostToolUse`: the call's id.
    pub tool_use_id: Option<String>,
    /// `PostToolUse`: what the tool was given.
    pub tool_input: Option<Value>,
    /// `PostToolUse`: what the tool returned.
    pub tool_response: Option<Value>,
    /// Fields present with a type we do not take, by name.
    pub ignored: Vec<String>,
}

/// Why hook input could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Nothing on stdin.
    #[error("empty hook input")]
    Empty,
    /// Not JSON.
    #[error("hook input is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("hook input is JSON but not an object")]
    NotObject,
}

impl HookInput {
    /// Read hook input bytes.
    ///
    /// # Errors
    /// Empty input, bytes that are not JSON, or JSON that is not an object.
    pub fn parse(bytes: &[u8]) -> Result<HookInput, InputError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(InputError::Empty);
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| InputError::NotJson(e.to_string()))?;
        let Value::Object(mut map) = value else {
            return Err(InputError::NotObject);
        };
        let mut ignored = Vec::new();
        let mut text = |map: &mut Map<String, Value>, key: &str| match map.remove(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                ignored.push(key.to_owned());
                None
            }
        };
        let mut input = HookInput {
            session_id: text(&mut map, "session_id"),
            transcript_path: text(&mut map, "transcript_path"),
            cwd: text(&mut map, "cwd"),
            event_name: text(&mut map, "hook_event_name"),
            last_assistant_message: None,
            agent_id: text(&mut map, "agent_id"),
            agent_type: text(&mut map, "agent_type"),
            agent_transcript_path: text(&mut map, "agent_transcript_path"),
            tool_name: text(&mut map, "tool_name"),
            tool_use_id: text(&mut map, "tool_use_id"),
            ..HookInput::default()
        };
        // An empty last message is a message (the model said nothing), not
        // an absent one: it must not send the hook to an older transcript.
        input.last_assistant_message = match map.remove("last_assistant_message") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                ignored.push("last_assistant_message".to_owned());
                None
            }
        };
        input.stop_hook_active = match map.remove("stop_hook_active") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(_) => {
                ignored.push("stop_hook_active".to_owned());
                false
            }
        };
        input.tool_input = map.remove("tool_input");
        input.tool_response = map.remove("tool_response");
        input.ignored = ignored;
        Ok(input)
    }

    /// The event, from `hook_event_name`; `None` when absent.
    pub fn event(&self) -> Option<HookEvent> {
        self.event_name.as_deref().map(HookEvent::of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_of_each_event_and_version() {
        let stop = HookInput::parse(
            br#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default",
                "hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"{}"}"#,
        )
        .unwrap();
        assert_eq!(stop.session_id.as_deref(), Some("s1"));
        assert_eq!(stop.event(), Some(HookEvent::Stop));
        assert!(stop.stop_hook_active);
        assert_eq!(stop.last_assistant_message.as_deref(), Some("{}"));
        assert!(stop.ignored.is_empty());

        let old = HookInput::parse(br#"{"session_id":"s1","hook_event_name":"Stop"}"#).unwrap();
        assert_eq!(old.last_assistant_message, None);
        assert!(!old.stop_hook_active);

        let sub = HookInput::parse(
            br#"{"session_id":"s1","hook_event_name":"SubagentStop","agent_id":"a1",
                "agent_type":"reviewer","agent_transcript_path":"/a.jsonl","last_assistant_message":""}"#,
        )
        .unwrap();
        assert_eq!(sub.event(), Some(HookEvent::SubagentStop));
        assert_eq!(sub.agent_type.as_deref(), Some("reviewer"));
        assert_eq!(sub.last_assistant_message.as_deref(), Some(""));

        let tool = HookInput::parse(
            br#"{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash",
                "tool_use_id":"t1","tool_input":{"command":"ls"},"tool_response":{"stdout":"a"}}"#,
        )
        .unwrap();
        assert_eq!(tool.event(), Some(HookEvent::PostToolUse));
        assert_eq!(tool.tool_input.unwrap()["command"], "ls");
    }

    #[test]
    fn wrong_types_are_ignored_and_named_bad_bytes_are_errors() {
        let odd = HookInput::parse(
            br#"{"session_id":7,"stop_hook_active":"yes","last_assistant_message":["x"],"hook_event_name":"Nope"}"#,
        )
        .unwrap();
        assert_eq!(odd.session_id, None);
        assert!(!odd.stop_hook_active);
        assert_eq!(
            odd.ignored,
            ["session_id", "last_assistant_message", "stop_hook_active"]
        );
        assert_eq!(odd.event(), Some(HookEvent::Other));
        assert_eq!(HookInput::parse(b" \n"), Err(InputError::Empty));
        assert_eq!(HookInput::parse(b"[1]"), Err(InputError::NotObject));
        assert!(matches!(
            HookInput::parse(b"{\"session_id\": "),
            Err(InputError::NotJson(_))
        ));
    }
}
