//! The last assistant message of a session file, read from its end.
//!
//! Note \[Reading the end of a session file\]: a session file may be
//! hundreds of MB and the hook has 2 s, so only its last
//! [`TAIL_BYTES`] are read (bounded memory, tens of ms): from the first
//! line that starts inside that window to the end, decoded by core's
//! native-session decoder (the format probed from the window) and folded by
//! [`LastMessage`]. A final message longer than the window is not found
//! whole; the hook then says it found nothing to check.
//!
//! The file is opened as every input is (Note [Regular files only] in
//! `infile`): a `transcript_path` naming a FIFO would block the open until
//! a writer came (past the hook's budget, forever if none does), and a
//! device or `/proc` file has no end to seek from, so anything but a
//! regular file is refused at once, with what it is.

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
/// When the file cannot be opened or read, or is not a regular file.
pub fn last_message(path: &Path, keep_sidechain: bool) -> Result<Option<String>> {
    last_message_within(path, keep_sidechain, TAIL_BYTES)
}

fn last_message_within(path: &Path, keep_sidechain: bool, window: u64) -> Result<Option<String>> {
    let io = |source: std::io::Error| Error::Io {
        context: format!("reading the session file {}", path.display()),
        source,
    };
    let mut file = crate::infile::open(path, crate::infile::Options::REGULAR)
        .map_err(Error::input("session file"))?;
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

    /// Issue 40: a FIFO blocked the open past the hook's budget; every
    /// file that is not regular is refused at once, saying what it is.
    #[test]
    fn what_is_not_a_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let cases = [
            (fifo, "is a FIFO, not a regular file"),
            (dir.path().to_owned(), "is a directory, not a regular file"),
            (
                "/dev/zero".into(),
                "is a character device, not a regular file",
            ),
        ];
        for (path, want) in cases {
            let started = std::time::Instant::now();
            let err = last_message(&path, false).unwrap_err().to_string();
            assert!(started.elapsed() < std::time::Duration::from_secs(1));
            assert!(err.starts_with("session file `"), "{err}");
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.ends_with(want), "{err}");
        }
        // A `/proc` file is regular but has no end to seek from: it reads as
        // no message, or fails; it never hangs.
        let started = std::time::Instant::now();
        let _ = last_message(Path::new("/proc/self/mem"), false);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
