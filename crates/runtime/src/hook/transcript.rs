//! The last assistant message of a session file, read from its end.
//!
//! Note \[Reading the end of a session file\]: a session file may be
//! hundreds of MB and the hook has 2 s, so only its last
//! [`TAIL_BYTES`] are read (bounded memory, tens of ms): from the first
//! line that starts inside that window to the end, decoded by core's
//! native-session decoder (the format probed from the window) and folded by
//! [`LastMessage`]. A final message longer than the window is not found
//! whole; the hook then says it found nothing to check.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use agentshape_core::decode::{DecodeOptions, Decoder, Format};
use agentshape_core::hook::LastMessage;

use crate::error::{Error, Result};

/// How much of a session file's end is read.
pub const TAIL_BYTES: u64 = 8 << 20;

/// The last assistant message with text in the file at `path` (Note
/// \[Reading the end of a session file\]); `keep_sidechain` for a
/// sub-agent's own file.
///
/// # Errors
/// When the file cannot be opened or read.
pub fn last_message(path: &Path, keep_sidechain: bool) -> Result<Option<String>> {
    last_message_within(path, keep_sidechain, TAIL_BYTES)
}

fn last_message_within(path: &Path, keep_sidechain: bool, window: u64) -> Result<Option<String>> {
    let io = |source: std::io::Error| Error::Io {
        context: format!("reading the session file {}", path.display()),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let start = size.saturating_sub(window);
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size - start).unwrap_or(0));
    file.take(window).read_to_end(&mut bytes).map_err(io)?;
    let from = if start == 0 {
        0
    } else {
        // The window starts inside a line: decode from the next one.
        memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1)
    };
    let body = &bytes[from..];
    let mut fold = LastMessage::new(keep_sidechain);
    let mut decoder = Decoder::new(Format::Auto, DecodeOptions::default());
    decoder.feed(body, &mut |e| fold.push(&e));
    decoder.finish(&mut |e| fold.push(&e));
    // Text that is no transcript would be "said" whole: not a message.
    if !(decoder.format().is_native() || matches!(decoder.format(), Format::Claude | Format::Codex))
    {
        return Ok(None);
    }
    Ok(fold.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(uuid: &str, msg: &str, text: &str) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"{uuid}","sessionId":"s1","isSidechain":false,"timestamp":"2026-11-26T10:00:00Z","message":{{"id":"{msg}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"{text}"}}]}}}}"#
        )
    }

    #[test]
    fn the_end_of_a_file_gives_its_last_message_even_past_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.jsonl");
        let mut body = String::new();
        for i in 0..200 {
            body.push_str(&line(
                &format!("u{i}"),
                &format!("m{i}"),
                &format!("message {i}"),
            ));
            body.push('\n');
        }
        std::fs::write(&path, &body).unwrap();
        assert_eq!(
            last_message(&path, false).unwrap().as_deref(),
            Some("message 199")
        );
        // A window that starts mid-line skips to the next line.
        assert_eq!(
            last_message_within(&path, false, 1000).unwrap().as_deref(),
            Some("message 199")
        );
        assert!(last_message(&dir.path().join("absent.jsonl"), false).is_err());
        std::fs::write(&path, "just some text\nno transcript\n").unwrap();
        assert_eq!(last_message(&path, false).unwrap(), None);
        std::fs::write(&path, "").unwrap();
        assert_eq!(last_message(&path, false).unwrap(), None);
    }
}
