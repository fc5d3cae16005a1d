//! The growing structured object, while the agent is still writing it
//! (`run --partial`, which passes `--include-partial-messages` to Claude).
//!
//! Note \[Partial objects\]: Claude streams a tool call's input as
//! `input_json_delta` fragments of one content block. When a
//! `content_block_start` names the `StructuredOutput` tool, that block's
//! fragments are the structured output being written; otherwise text deltas
//! are used (an agent writing its JSON as prose). After each fragment the
//! buffer is parsed with core's tolerant parser (the same one `extract`
//! uses), which closes open strings and containers. A top-level field is
//! *complete* once the text has moved past it (a later key started, or the
//! object closed); the field being written, and every field the schema
//! requires that has not started, is *pending*. A snapshot is published only
//! when the value changed.

use std::collections::BTreeMap;

use agentshape_core::Event;
use agentshape_core::extract::repair_json;
use serde_json::Value;

use crate::hub::FieldState;

/// A snapshot of the partial object.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The value so far.
    pub value: Value,
    /// Each field's state.
    pub fields: BTreeMap<String, FieldState>,
}

/// Tracks deltas of one session.
#[derive(Debug, Default)]
pub struct PartialTracker {
    required: Vec<String>,
    structured_index: Option<u64>,
    json: BTreeMap<u64, String>,
    text: String,
    last: Option<Value>,
}

impl PartialTracker {
    /// A tracker; `schema`'s top-level `required` fields are pending until seen.
    pub fn new(schema: Option<&Value>) -> Self {
        let required = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        PartialTracker {
            required,
            ..PartialTracker::default()
        }
    }

    /// Look at a raw line for the block starts the core decoder does not
    /// surface (which block is the `StructuredOutput` call, when a message starts).
    pub fn observe_line(&mut self, line: &[u8]) {
        let finder = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
        if !finder(b"stream_event") {
            return;
        }
        if finder(b"\"message_start\"") {
            self.json.clear();
            self.text.clear();
            self.structured_index = None;
            return;
        }
        if finder(b"\"content_block_start\"") && finder(b"StructuredOutput") {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                return;
            };
            let ev = &v["event"];
            if ev["content_block"]["name"] == "StructuredOutput" {
                self.structured_index = ev["index"].as_u64();
                if let Some(i) = self.structured_index {
                    self.json.remove(&i);
                }
            }
        }
    }

    /// Feed a decoded event; returns a snapshot when the object changed.
    pub fn feed(&mut self, event: &Event) -> Option<Snapshot> {
        let Event::Partial {
            index,
            text,
            partial_json,
        } = event
        else {
            return None;
        };
        let buffer = if let Some(piece) = partial_json {
            let i = index.unwrap_or(0);
            // Without a known StructuredOutput block, any tool input is a candidate.
            if self.structured_index.is_some_and(|s| s != i) {
                return None;
            }
            let b = self.json.entry(i).or_default();
            b.push_str(piece);
            b.clone()
        } else if let Some(t) = text {
            if self.structured_index.is_some() {
                return None;
            }
            self.text.push_str(t);
            let start = self.text.find('{')?;
            self.text[start..].to_owned()
        } else {
            return None;
        };
        let snapshot = self.snapshot(&buffer)?;
        if self.last.as_ref() == Some(&snapshot.value) {
            return None;
        }
        self.last = Some(snapshot.value.clone());
        Some(snapshot)
    }

    fn snapshot(&self, buffer: &str) -> Option<Snapshot> {
        let repaired = repair_json(buffer)?;
        let Value::Object(map) = &repaired.value else {
            return None;
        };
        let (closed, last_key) = scan_top_level(buffer);
        let mut fields = BTreeMap::new();
        for key in map.keys() {
            let pending = !closed && last_key.as_deref() == Some(key.as_str());
            let state = if pending {
                FieldState::Pending
            } else {
                FieldState::Complete
            };
            fields.insert(key.clone(), state);
        }
        for key in &self.required {
            fields.entry(key.clone()).or_insert(FieldState::Pending);
        }
        Some(Snapshot {
            value: repaired.value,
            fields,
        })
    }
}

/// Whether the first top-level object in `text` closed, and the last key
/// started at depth 1 (string-aware: brackets and quotes inside strings do not count).
fn scan_top_level(text: &str) -> (bool, Option<String>) {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0usize;
    let mut last_key: Option<String> = None;
    let mut started = false;
    // At depth 1, after `{` or `,` the next string is a key.
    let mut expect_key = false;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(bytes.len());
                if depth == 1 && expect_key {
                    let raw = text.get(start..end).unwrap_or_default();
                    let key = serde_json::from_str::<String>(&format!("\"{raw}\""))
                        .unwrap_or_else(|_| raw.to_owned());
                    last_key = Some(key);
                    expect_key = false;
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                started = true;
                expect_key = depth == 1 && bytes[i] == b'{';
            }
            b',' if depth == 1 => expect_key = true,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if started && depth == 0 {
                    return (true, last_key);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (false, last_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delta(piece: &str) -> Event {
        Event::Partial {
            index: Some(1),
            text: None,
            partial_json: Some(piece.to_owned()),
        }
    }

    #[test]
    fn fields_turn_complete_as_the_agent_moves_on() {
        let schema = json!({"required": ["summary", "events", "escalation"]});
        let mut t = PartialTracker::new(Some(&schema));
        t.observe_line(br#"{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"StructuredOutput","input":{}}}}"#);
        let s1 = t.feed(&delta(r#"{"summary": "jellyfin is do"#)).unwrap();
        assert_eq!(s1.value, json!({"summary": "jellyfin is do"}));
        let pending = |s: &Snapshot, k: &str| s.fields[k] == FieldState::Pending;
        assert!(pending(&s1, "summary") && pending(&s1, "events") && pending(&s1, "escalation"));
        let s2 = t
            .feed(&delta(r#"wn", "events": [{"level": "crit"#))
            .unwrap();
        assert_eq!(
            s2.value,
            json!({"summary": "jellyfin is down", "events": [{"level": "crit"}]})
        );
        assert_eq!(s2.fields["summary"], FieldState::Complete);
        assert!(pending(&s2, "events"));
        assert!(t.feed(&delta(r#"ical""#)).is_some());
        // A fragment that changes nothing publishes nothing.
        assert_eq!(t.feed(&delta("}")), None);
        let s3 = t
            .feed(&delta(r#"], "escalation": {"needed": false}}"#))
            .unwrap();
        assert!(s3.fields.values().all(|f| *f == FieldState::Complete));
        // Fragments of another block are ignored once the StructuredOutput block is known.
        let other = Event::Partial {
            index: Some(0),
            text: None,
            partial_json: Some("{\"command\": \"ls\"}".into()),
        };
        assert_eq!(t.feed(&other), None);
    }

    #[test]
    fn text_deltas_are_used_when_no_structured_block_exists() {
        let mut t = PartialTracker::new(None);
        let text = |s: &str| Event::Partial {
            index: Some(0),
            text: Some(s.to_owned()),
            partial_json: None,
        };
        assert_eq!(t.feed(&text("Here is the report: ")), None);
        let s = t
            .feed(&text("{\"action\": \"complete\", \"confidence\": 9"))
            .unwrap();
        assert_eq!(s.value, json!({"action": "complete", "confidence": 9}));
        assert_eq!(s.fields["action"], FieldState::Complete);
        assert_eq!(s.fields["confidence"], FieldState::Pending);
    }
}
