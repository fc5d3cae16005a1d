//! One object line of a native JSON Lines format, to its decoder: glued
//! lines split first.
//!
//! Note \[Glued lines\]: a crash or a concurrent writer can leave two JSON
//! objects on one physical line (`{...}{...}`). When a line fails to parse
//! whole, it is split with `serde_json`'s stream reader: every complete
//! object on it is decoded in order, an [`Event::Glued`] counts the line,
//! and bytes after the last complete object (a cut object) are reported in a
//! warning. A line with no complete object is malformed, as before.

use serde::de::IgnoredAny;

use super::native::NativeLines;
use super::{DecodeOptions, Format, claude_session, codex_rollout};
use crate::event::Event;

/// Decode one object line (trimmed, starting with `{`) of a native
/// JSON Lines format. Returns `false` when it holds no complete object.
pub fn native_line(
    state: &mut NativeLines,
    line: &[u8],
    line_no: u64,
    format: Format,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) -> bool {
    if object(state, line, format, opts, sink) {
        return true;
    }
    // Note [Glued lines].
    let mut stream = serde_json::Deserializer::from_slice(line).into_iter::<IgnoredAny>();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut cut = false;
    loop {
        match stream.next() {
            Some(Ok(_)) => {
                let end = stream.byte_offset();
                pieces.push(line.get(start..end).unwrap_or_default().trim_ascii());
                start = end;
            }
            Some(Err(_)) => {
                cut = true;
                break;
            }
            None => break,
        }
    }
    if pieces.is_empty() || (pieces.len() == 1 && !cut) {
        return false;
    }
    sink(Event::Glued {
        line: line_no,
        objects: u64::try_from(pieces.len()).unwrap_or(u64::MAX),
    });
    let mut undecoded = 0;
    for piece in &pieces {
        if !object(state, piece, format, opts, sink) {
            undecoded += 1;
        }
    }
    if cut || undecoded > 0 {
        sink(Event::Warning {
            message: format!(
                "line {line_no}: {} glued JSON value(s) were not objects of this format{}; skipped",
                undecoded,
                if cut {
                    ", and it ends in a cut object"
                } else {
                    ""
                }
            ),
        });
    }
    true
}

fn object(
    state: &mut NativeLines,
    line: &[u8],
    format: Format,
    opts: &DecodeOptions,
    sink: &mut dyn FnMut(Event),
) -> bool {
    if line.first() != Some(&b'{') {
        return false;
    }
    match format {
        Format::ClaudeSession => claude_session::decode_line(line, state, opts, sink),
        Format::CodexRollout => codex_rollout::decode_line(line, state, opts, sink),
        _ => false,
    }
}
