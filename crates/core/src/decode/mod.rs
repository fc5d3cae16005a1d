//! Decode: bytes of an agent transcript into normalized [`Event`]s.
//!
//! Decoding is sans-IO: a [`Decoder`] is fed bytes in chunks of any size (one
//! byte at a time works) and pushes events into a sink; a
//! [`SummaryBuilder`] folds them into a
//! [`RunSummary`]; [`summarize_reader`] and [`decode_body`] are the thin
//! conveniences on top. Memory stays bounded: a line is held only up to
//! [`DecodeOptions::max_line_bytes`]; a longer one is skipped and counted
//! (`too_long_lines`) while the decoder reads past it chunk by chunk.
//!
//! Formats: Claude Code stream-json ([`claude`], seed 004's contract), Codex
//! `exec --json` ([`codex`]), provider response bodies ([`provider`]),
//! plain text, and the session files agents write themselves: Claude Code
//! sessions ([`claude_session`]), Codex rollouts ([`codex_rollout`]), both
//! JSON Lines, and Gemini CLI chats ([`gemini_chat`], one document). The
//! native formats emit an [`Event::Line`] per line and fill the summary's
//! `session` object (Note \[Native tokens\] and Note \[Native output\] in
//! `summary`). [`Format::Auto`] picks one from the first lines, see
//! Note [Format detection].

pub mod claude;
pub mod claude_session;
pub mod codex;
pub mod codex_rollout;
pub mod gemini_chat;
mod native;
mod native_line;
pub mod provider;
pub mod raw;
mod skim;

use std::io::{BufRead, ErrorKind};

use memchr::memchr;
use serde::de::IgnoredAny;
use serde_json::Value;

pub use crate::classify;
pub use crate::facts::Format;

use crate::event::{Event, SkipReason};
use crate::facts::RunSummary;
use crate::summary::SummaryBuilder;

/// Decoder settings.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// Lines longer than this are skipped and counted as `too_long`, never
    /// loaded. It also bounds a provider body (one document) and plain text:
    /// a longer one is skipped and counted too (Note [Over-long text]).
    pub max_line_bytes: usize,
    /// Keep tool-result content as text in [`Event::ToolResult`]. Off by
    /// default: tool results are most of a transcript's bytes, and without
    /// this Claude `user` lines are validated but not read again.
    pub keep_tool_results: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_line_bytes: 64 << 20,
            keep_tool_results: false,
        }
    }
}

/// How many non-blank lines [`Format::Auto`] looks at before settling on text.
const DETECT_MAX_LINES: usize = 64;

/// Where a [`Decoder`] is in its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `Auto`, still looking; bytes are held in `buf` until a decision.
    Detect,
    /// JSON Lines (Claude or Codex): `buf` holds the current partial line.
    Lines,
    /// One document (a provider body): `buf` holds it, up to the limit.
    Body,
    /// Plain text: `buf` holds it, up to the limit.
    Text,
}

/// The sans-IO decoder: feed it byte chunks, it pushes [`Event`]s.
///
/// ```
/// use agentshape_core::decode::{Decoder, DecodeOptions, Format};
/// use agentshape_core::summary::SummaryBuilder;
///
/// let mut decoder = Decoder::new(Format::Auto, DecodeOptions::default());
/// let mut builder = SummaryBuilder::new();
/// let input = b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n";
/// for chunk in input.chunks(5) {
///     decoder.feed(chunk, &mut |e| builder.push(e));
/// }
/// decoder.finish(&mut |e| builder.push(e));
/// let summary = builder.finish(decoder.format());
/// assert_eq!(summary.format, Format::Claude);
/// assert_eq!(summary.output, "hi");
/// ```
#[derive(Debug)]
pub struct Decoder {
    opts: DecodeOptions,
    format: Format,
    /// For `Auto` decisions that land on a body: the provider is detected
    /// from the whole document at the end.
    auto: bool,
    mode: Mode,
    buf: Vec<u8>,
    /// Lines: inside a line over the limit (its bytes are dropped as they come).
    skipping: bool,
    /// Body/Text: the limit was reached; later bytes are dropped.
    overflow: bool,
    lines: u64,
    objects: u64,
    /// Body/Text: newlines seen, and whether the last byte seen was one.
    newlines: u64,
    ends_with_newline: bool,
    /// Detect: where the next unexamined line starts, and lines examined.
    detect_cursor: usize,
    detect_lines: usize,
    codex: codex::CodexState,
    /// Native session files: state across lines (tool names by call id,
    /// the Codex turn's model).
    native: native::NativeLines,
    finished: bool,
}

impl Decoder {
    /// A decoder for `format` (`Format::Auto` detects).
    pub fn new(format: Format, opts: DecodeOptions) -> Self {
        let mode = match format {
            Format::Auto => Mode::Detect,
            f if f.is_lines() => Mode::Lines,
            Format::Text => Mode::Text,
            _ => Mode::Body,
        };
        Decoder {
            opts,
            format,
            auto: format == Format::Auto,
            mode,
            buf: Vec::new(),
            skipping: false,
            overflow: false,
            lines: 0,
            objects: 0,
            newlines: 0,
            ends_with_newline: false,
            detect_cursor: 0,
            detect_lines: 0,
            codex: codex::CodexState::default(),
            native: native::NativeLines::default(),
            finished: false,
        }
    }

    /// The format being decoded: the requested one, or what `Auto` detected
    /// (still `Auto` before the decision; after [`Decoder::finish`] never).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Feed the next chunk of input; events go to `sink` as lines complete.
    pub fn feed(&mut self, chunk: &[u8], sink: &mut dyn FnMut(Event)) {
        if self.finished || chunk.is_empty() {
            return;
        }
        match self.mode {
            Mode::Detect => self.feed_detect(chunk, sink),
            Mode::Lines => self.feed_lines(chunk, sink),
            Mode::Body | Mode::Text => self.feed_whole(chunk),
        }
    }

    /// End of input: decode what is left (a last line without a newline, the
    /// body, the text) and emit [`Event::End`]. Further calls do nothing.
    pub fn finish(&mut self, sink: &mut dyn FnMut(Event)) {
        if self.finished {
            return;
        }
        if self.mode == Mode::Detect {
            let end = self.buf.len();
            let decided = self.probe_line(self.detect_cursor, end);
            self.switch(decided.unwrap_or(Format::Text), sink);
        }
        match self.mode {
            Mode::Lines => {
                if self.skipping {
                    self.skipping = false;
                    self.too_long(sink);
                } else if !self.buf.is_empty() {
                    let line = std::mem::take(&mut self.buf);
                    self.line(&line, sink);
                }
            }
            Mode::Body => self.finish_body(sink),
            Mode::Text => self.finish_text(sink),
            Mode::Detect => {}
        }
        self.finished = true;
        sink(Event::End {
            lines: self.lines,
            objects: self.objects,
        });
    }

    // ---- Lines ----------------------------------------------------------

    fn feed_lines(&mut self, chunk: &[u8], sink: &mut dyn FnMut(Event)) {
        let max = self.opts.max_line_bytes;
        let mut rest = chunk;
        while !rest.is_empty() {
            if let Some(i) = memchr(b'\n', rest) {
                let piece = rest.get(..i).unwrap_or_default();
                rest = rest.get(i + 1..).unwrap_or_default();
                if self.skipping {
                    self.skipping = false;
                    self.too_long(sink);
                } else if self.buf.len() + piece.len() > max {
                    self.buf.clear();
                    self.too_long(sink);
                } else if self.buf.is_empty() {
                    // Fast path: the whole line is inside this chunk, no copy.
                    self.line(piece, sink);
                } else {
                    self.buf.extend_from_slice(piece);
                    let line = std::mem::take(&mut self.buf);
                    self.line(&line, sink);
                    self.buf = line;
                    self.buf.clear();
                }
            } else {
                if !self.skipping {
                    if self.buf.len() + rest.len() > max {
                        self.skipping = true;
                        self.buf = Vec::new();
                    } else {
                        self.buf.extend_from_slice(rest);
                    }
                }
                rest = &[];
            }
        }
    }

    fn too_long(&mut self, sink: &mut dyn FnMut(Event)) {
        self.lines += 1;
        sink(Event::Skipped {
            line: self.lines,
            reason: SkipReason::TooLong,
        });
    }

    /// One complete line (without its `\n`).
    fn line(&mut self, line: &[u8], sink: &mut dyn FnMut(Event)) {
        self.lines += 1;
        let trimmed = line.trim_ascii();
        let reason = if trimmed.is_empty() {
            SkipReason::Blank
        } else if trimmed.first() == Some(&b'{') && self.format.is_native() {
            let line_no = self.lines;
            if native_line::native_line(
                &mut self.native,
                trimmed,
                line_no,
                self.format,
                &self.opts,
                sink,
            ) {
                self.objects += 1;
                return;
            }
            SkipReason::Malformed
        } else if trimmed.first() == Some(&b'{') {
            let ok = if self.format == Format::Codex {
                codex::decode_line(trimmed, &mut self.codex, &self.opts, sink)
            } else {
                claude::decode_line(trimmed, &self.opts, sink)
            };
            if ok {
                self.objects += 1;
                return;
            }
            SkipReason::Malformed
        } else if serde_json::from_slice::<IgnoredAny>(trimmed).is_ok() {
            SkipReason::NonObject
        } else {
            SkipReason::Malformed
        };
        sink(Event::Skipped {
            line: self.lines,
            reason,
        });
    }

    // ---- Detect ---------------------------------------------------------

    fn feed_detect(&mut self, chunk: &[u8], sink: &mut dyn FnMut(Event)) {
        self.buf.extend_from_slice(chunk);
        while let Some(i) = memchr(
            b'\n',
            self.buf.get(self.detect_cursor..).unwrap_or_default(),
        ) {
            let start = self.detect_cursor;
            let end = start + i;
            self.detect_cursor = end + 1;
            // Held bytes are capped at `max_line_bytes`; deciding by where a
            // line ends (not by chunk boundaries) keeps the decision the same
            // however the input is chunked.
            if self.detect_cursor > self.opts.max_line_bytes {
                self.switch(Format::Text, sink);
                return;
            }
            if let Some(format) = self.probe_line(start, end) {
                self.switch(format, sink);
                return;
            }
            if self.detect_lines >= DETECT_MAX_LINES {
                self.switch(Format::Text, sink);
                return;
            }
        }
        if self.buf.len() > self.opts.max_line_bytes {
            self.switch(Format::Text, sink);
        }
    }

    /// Note [Format detection]: `Auto` looks at whole lines from the start,
    /// skipping blank ones, and decides on the first line that says
    /// something:
    ///
    /// - a complete JSON object that is a native session line decides that
    ///   first: a string `type` with a camelCase session field (`sessionId`,
    ///   `parentUuid`, `leafUuid`, `isSidechain`, or `messageId` with
    ///   `snapshot`) is a Claude Code session, whatever the type (a type a
    ///   future release invents included; stream-json writes `session_id`
    ///   in snake case, so it stays Claude); the `{timestamp, type,
    ///   payload}` envelope (any type), or the older Codex layout (a header
    ///   with `id` + `timestamp` and no `type`, a `record_type` line, a bare
    ///   response item: `function_call`, `reasoning`, ..., or a `message`
    ///   with `input_text`/`output_text` parts and no `model`, so an
    ///   Anthropic body is not taken) is a Codex rollout; an object with
    ///   `sessionId` or `projectHash` and a `messages` list is a Gemini chat;
    /// - a complete JSON object whose `type` is a Claude stream-json type
    ///   (`system`, `assistant`, `user`, `result`, `stream_event`, ...) is
    ///   Claude; a Codex type (`thread.started`, `turn.*`, `item.*`, or
    ///   `error` with a top-level `message`) is Codex;
    /// - a complete object with a provider's keys (Anthropic `type:
    ///   "message"`, `OpenAI` `choices`, Responses `object: "response"`, Gemini
    ///   `candidates`, Ollama `message` + `done`, an error body) is that
    ///   provider's body;
    /// - a line opening an object or array that is not complete on the line
    ///   (`serde_json` reports end of input) is the start of a pretty-printed
    ///   document: it is read whole, and judged from its keys at the end (a
    ///   Gemini chat, else a provider body); if it is neither, it is text;
    /// - any other complete object (a bare JSON reply) is text;
    /// - a line that is not a JSON object (an npm warning, a debug line, a
    ///   scalar) decides nothing: CLIs print such lines before their stream.
    ///   After 64 such lines, or input longer than `max_line_bytes` with no
    ///   decision, or at end of input, it is text.
    ///
    /// Everything read while detecting is replayed into the chosen decoder,
    /// so lines skipped during detection are still counted.
    fn probe_line(&mut self, start: usize, end: usize) -> Option<Format> {
        let line = self.buf.get(start..end).unwrap_or_default().trim_ascii();
        if line.is_empty() {
            return None;
        }
        self.detect_lines += 1;
        let first = line.first().copied();
        if first != Some(b'{') && first != Some(b'[') {
            return None;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(value @ Value::Object(_)) => Some(detect_object(&value)),
            Err(e) if e.is_eof() => Some(Format::Auto),
            Ok(_) | Err(_) => None,
        }
    }

    /// Leave detection: `Format::Auto` here means "a document, provider to be
    /// judged at the end".
    fn switch(&mut self, format: Format, sink: &mut dyn FnMut(Event)) {
        let pending = std::mem::take(&mut self.buf);
        self.detect_cursor = 0;
        self.format = format;
        self.mode = match format {
            f if f.is_lines() => Mode::Lines,
            Format::Text => Mode::Text,
            _ => Mode::Body,
        };
        self.feed(&pending, sink);
    }

    // ---- Body and text --------------------------------------------------

    fn feed_whole(&mut self, chunk: &[u8]) {
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.ends_with_newline = chunk.last() == Some(&b'\n');
        if self.overflow {
            return;
        }
        let room = self.opts.max_line_bytes.saturating_sub(self.buf.len());
        if chunk.len() > room {
            self.buf
                .extend_from_slice(chunk.get(..room).unwrap_or_default());
            self.overflow = true;
        } else {
            self.buf.extend_from_slice(chunk);
        }
    }

    fn physical_lines(&self) -> u64 {
        if self.newlines == 0 && self.buf.is_empty() {
            0
        } else {
            self.newlines + u64::from(!self.ends_with_newline)
        }
    }

    fn finish_body(&mut self, sink: &mut dyn FnMut(Event)) {
        self.lines = self.physical_lines();
        if self.overflow {
            if self.auto {
                self.format = Format::Text;
                self.finish_text(sink);
                return;
            }
            sink(Event::Warning {
                message: format!(
                    "response body exceeds {} bytes; not decoded",
                    self.opts.max_line_bytes
                ),
            });
            sink(Event::Skipped {
                line: 1,
                reason: SkipReason::TooLong,
            });
            return;
        }
        let parsed = serde_json::from_slice::<Value>(&self.buf);
        let detected = match &parsed {
            Ok(value) if self.format == Format::Auto => {
                if gemini_chat::is_chat(value) {
                    Some(Format::GeminiChat)
                } else {
                    provider::detect(value)
                }
            }
            Ok(Value::Object(_)) => Some(self.format),
            _ => None,
        };
        match (parsed, detected) {
            (Ok(value), Some(format)) => {
                self.format = format;
                self.objects = 1;
                if format == Format::GeminiChat {
                    gemini_chat::decode(&value, &mut self.native, &self.opts, sink);
                } else {
                    provider::decode(&value, format, sink);
                }
            }
            (parsed, _) if self.auto => {
                let _ = parsed;
                self.format = Format::Text;
                self.finish_text(sink);
            }
            (parsed, _) => {
                let reason = match parsed {
                    Ok(_) => SkipReason::NonObject,
                    Err(_) if self.buf.trim_ascii().is_empty() => SkipReason::Blank,
                    Err(_) => SkipReason::Malformed,
                };
                sink(Event::Warning {
                    message: format!("response body is not a JSON object ({reason:?})"),
                });
                sink(Event::Skipped { line: 1, reason });
            }
        }
    }

    /// Note [Over-long text]: plain text (or a document that is no provider
    /// body) longer than `max_line_bytes` is skipped and counted like an
    /// over-long line, with a warning. Keeping its first bytes would hand a
    /// cut reply to extraction, whose repairs close a cut value up into a
    /// valid-looking answer that the agent never gave.
    fn finish_text(&mut self, sink: &mut dyn FnMut(Event)) {
        self.lines = self.physical_lines();
        if self.overflow {
            self.buf = Vec::new();
            sink(Event::Warning {
                message: format!(
                    "text exceeds {} bytes (--max-line-bytes); skipped, not extracted",
                    self.opts.max_line_bytes
                ),
            });
            sink(Event::Skipped {
                line: 1,
                reason: SkipReason::TooLong,
            });
            return;
        }
        // Note [Replaced text] in `extract::replaced`: the one place bytes become
        // text lossily; what was replaced is counted, not hidden.
        let text = match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(text) => text,
            Err(e) => {
                let bytes = e.into_bytes();
                let sequences = bytes
                    .utf8_chunks()
                    .filter(|c| !c.invalid().is_empty())
                    .count();
                sink(Event::ReplacedText {
                    sequences: u64::try_from(sequences).unwrap_or(u64::MAX),
                });
                String::from_utf8_lossy(&bytes).into_owned()
            }
        };
        if !text.is_empty() {
            sink(Event::Text { text });
        }
    }
}

/// The format a complete first object names (see Note [Format detection]).
fn detect_object(value: &Value) -> Format {
    if claude_session::is_session_line(value) {
        return Format::ClaudeSession;
    }
    if codex_rollout::is_rollout_line(value) {
        return Format::CodexRollout;
    }
    if gemini_chat::is_chat(value) {
        return Format::GeminiChat;
    }
    let kind = value.get("type").and_then(Value::as_str);
    if let Some(kind) = kind {
        if claude::CLAUDE_TYPES.contains(&kind) {
            return Format::Claude;
        }
        if codex::is_codex_type(kind)
            || (kind == "error" && value.get("message").is_some_and(Value::is_string))
        {
            return Format::Codex;
        }
    }
    provider::detect(value).unwrap_or(Format::Text)
}

/// Decode a whole transcript from a reader into a run summary.
///
/// The reader is consumed chunk by chunk; nothing but the current line (up
/// to [`DecodeOptions::max_line_bytes`]) is held, except for provider
/// bodies and plain text, which are held up to that limit.
///
/// # Errors
/// Only when the reader fails; bad data is counted in the summary.
pub fn summarize_reader<R: BufRead>(
    reader: R,
    format: Format,
    opts: &DecodeOptions,
) -> crate::Result<RunSummary> {
    summarize_reader_with(reader, format, opts, &mut |_| {})
}

/// [`summarize_reader`], with `each` seeing (and free to change) every
/// event before the summary does: the native importer's usage pass clamps
/// absurd usage counts there.
///
/// # Errors
/// Only when the reader fails; bad data is counted in the summary.
pub fn summarize_reader_with<R: BufRead>(
    mut reader: R,
    format: Format,
    opts: &DecodeOptions,
    each: &mut dyn FnMut(&mut Event),
) -> crate::Result<RunSummary> {
    let mut decoder = Decoder::new(format, opts.clone());
    let mut builder = SummaryBuilder::new();
    let mut push = |mut e: Event| {
        each(&mut e);
        builder.push(e);
    };
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        decoder.feed(chunk, &mut push);
        reader.consume(n);
    }
    decoder.finish(&mut push);
    Ok(builder.finish(decoder.format()))
}

/// Decode bytes already in memory (a provider response body, a reply, a
/// whole transcript) as `format` into a run summary.
///
/// The provider clients call this with the body they received and the
/// format of the API they called.
pub fn decode_body(bytes: &[u8], format: Format) -> RunSummary {
    decode_bytes(bytes, format, &DecodeOptions::default())
}

/// [`decode_body`] with explicit options.
pub fn decode_bytes(bytes: &[u8], format: Format, opts: &DecodeOptions) -> RunSummary {
    let mut decoder = Decoder::new(format, opts.clone());
    let mut builder = SummaryBuilder::new();
    decoder.feed(bytes, &mut |e| builder.push(e));
    decoder.finish(&mut |e| builder.push(e));
    builder.finish(decoder.format())
}

/// Fuzz body: decode arbitrary bytes with every format, whole and in small
/// chunks, with the default and a tiny line limit. Must never panic; in debug
/// builds it also checks that chunking does not change the summary.
#[doc(hidden)]
pub fn fuzz_decode(data: &[u8]) {
    for format in Format::ALL {
        for max_line_bytes in [64 << 20, 16] {
            let opts = DecodeOptions {
                max_line_bytes,
                keep_tool_results: true,
            };
            let whole = decode_bytes(data, format, &opts);
            let mut decoder = Decoder::new(format, opts);
            let mut builder = SummaryBuilder::new();
            for chunk in data.chunks(7) {
                decoder.feed(chunk, &mut |e| builder.push(e));
            }
            decoder.finish(&mut |e| builder.push(e));
            let chunked = builder.finish(decoder.format());
            debug_assert_eq!(whole, chunked, "chunking changed the summary ({format:?})");
        }
    }
}

#[cfg(test)]
mod native_tests;
#[cfg(test)]
mod tests;
