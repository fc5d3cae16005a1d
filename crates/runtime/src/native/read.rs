//! One pass over one native session file: core's decoder fed one line at a
//! time, so every event is tied to the line it came from, and the lines
//! past a given one become feed rows.
//!
//! Note \[Whole lines only\]: a line is decoded once its newline has been
//! written. The bytes after the last newline are either a line the agent
//! is still writing (wait for the rest: they are not decoded, and the
//! offset stays before them) or a last line that will never get a newline
//! (some files end so): when those bytes are one complete JSON value they
//! are taken as a line, since no prefix of a line an agent writes is
//! itself a complete JSON object (if a newline is written after it later,
//! that line no longer ends at the mark's offset and the file is read again
//! whole, once: rare, and never a line stored twice). A line longer than the decoder's limit is
//! streamed into it piece by piece (it skips and counts it) and never held.
//!
//! Note \[Native feed rows\]: each decoded event worth showing becomes one
//! feed row of kind `event`, with the body `run` writes for the same event
//! (`{"kind":"event","event":{…}}`, hub.rs `HubBody::Event`, cut to
//! [`crate::feed::FeedOptions::max_body`] as `run` cuts it) plus where it
//! came from: `line` (1-based physical line of the file), and when known
//! `uuid` (the agent's id of the line), `sidechain: true`, `agent_id` and
//! `model`. Its `created_at` is the line's own timestamp (else the previous
//! line's, else the file's mtime). Not rows: the line context itself
//! (folded into each body), `end`, lines of types the decoder does not
//! interpret (`other`), blank lines, partial deltas and the glued-line
//! notice. A line the decoder skips for any other reason (too long, not
//! JSON, not an object) is a row too, its event `{"type":"skipped",
//! "line":N,"reason":…}`, as `run`'s feed has it: a 300 MB line used to
//! leave no trace but a count in the summary (issue 40).
//!
//! Note \[Absurd usage\]: a usage count is a number another program
//! wrote. One of 5e18 tokens is no model call; summed with another it
//! passed `i64::MAX` and broke the store's sums (store's Note \[Sums that
//! cannot overflow\]). So each count of a `usage` event above
//! [`MAX_CALL_TOKENS`] (10^12, about 5,000 times the largest context
//! window of 2025 and a bill of millions of dollars) is clamped to it
//! before the summary sees it, and the pass lists the lines clamped
//! ([`Pass::clamped`]) for the importer to warn about, naming the file and
//! line. Codex's running totals are clamped the same way: a session of
//! 10^12 tokens is as absurd.

use std::io::{ErrorKind, Read};

use agentshape_core::Event;
use agentshape_core::decode::{DecodeOptions, Decoder, Format};
use agentshape_core::event::{LineInfo, SkipReason};
use agentshape_core::summary::{RunSummary, SummaryBuilder};
use agentshape_store::{FeedEntry, time};
use memchr::memchr;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::feed::capped_body;

/// The most tokens one count of one `usage` event may hold (Note \[Absurd usage\]).
pub const MAX_CALL_TOKENS: u64 = 1_000_000_000_000;

/// How many clamped lines a pass lists (it counts them all).
const CLAMPED_LISTED: usize = 10;

/// How much of a file's head [`probe`] decodes.
pub const PROBE_BYTES: usize = 256 * 1024;

/// The largest whole-document session file (a Gemini CLI chat) read.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// What a file's head says it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// A native format (`claude-session`, `codex-rollout`, `gemini-chat`).
    pub format: Format,
    /// The summary of the head (the agent's session id, parent, agent id).
    pub summary: RunSummary,
}

/// Decode the head of a file (up to its last newline) and tell its
/// format; `None` when it is no native session file, or no line of it is
/// complete yet.
pub fn probe(head: &[u8]) -> Option<Probe> {
    let end = head.iter().rposition(|b| *b == b'\n')? + 1;
    let mut decoder = Decoder::new(Format::Auto, DecodeOptions::default());
    let mut builder = SummaryBuilder::new();
    decoder.feed(&head[..end], &mut |e| builder.push(e));
    decoder.finish(&mut |e| builder.push(e));
    let format = decoder.format();
    format.is_native().then(|| Probe {
        format,
        summary: builder.finish(format),
    })
}

/// Settings of one pass.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The session the feed rows belong to.
    pub session_id: String,
    /// Lines already stored: only later lines become feed rows.
    pub from_line: u64,
    /// Where line `from_line` ended when it was stored (the import mark's
    /// offset): if it ends elsewhere now, the file was rewritten.
    pub from_offset: u64,
    /// Feed rows per batch handed to the caller (bounded memory).
    pub batch_rows: usize,
    /// The most bytes of one feed body.
    pub max_body: usize,
    /// `created_at` of rows before any line with a timestamp.
    pub fallback_time: String,
    /// Decoder settings (tool results are kept, cut like the feed).
    pub decode: DecodeOptions,
}

/// Feed rows for lines up to `lines` (ending at byte `offset`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// The rows.
    pub entries: Vec<FeedEntry>,
    /// Bytes read up to the end of the last line of these rows.
    pub offset: u64,
    /// Lines read up to there.
    pub lines: u64,
}

/// What a whole pass read.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// The session's summary, from the whole file.
    pub summary: RunSummary,
    /// Bytes read: the end of the last whole line (Note \[Whole lines only\]).
    pub offset: u64,
    /// Whole lines read.
    pub lines: u64,
    /// Feed rows made (after `from_line`).
    pub rows: u64,
    /// The first real prompt of the main chain, cut to 300 characters.
    pub first_prompt: Option<String>,
    /// The rows not handed out in a batch yet (stored with the session).
    pub tail: Vec<FeedEntry>,
    /// Lines after `from_line` the decoder skipped (not blank): each is
    /// also a `skipped` row.
    pub skipped: u64,
    /// Usage counts clamped on lines after `from_line` (Note \[Absurd usage\]).
    pub clamped: Clamped,
}

/// The lines whose usage was clamped (Note \[Absurd usage\]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clamped {
    /// How many lines.
    pub lines: u64,
    /// The first few: (line, the largest count it wrote).
    pub first: Vec<(u64, u64)>,
}

/// Clamp the counts of a `usage` event to [`MAX_CALL_TOKENS`]; the
/// largest count it had when one was over.
pub(crate) fn clamp_usage(e: &mut Event) -> Option<u64> {
    let Event::Usage { tokens, .. } = e else {
        return None;
    };
    let mut worst: Option<u64> = None;
    for count in [
        &mut tokens.input,
        &mut tokens.output,
        &mut tokens.cache_read,
        &mut tokens.cache_write,
        &mut tokens.cache_write_1h,
        &mut tokens.reasoning,
    ] {
        if *count > MAX_CALL_TOKENS {
            worst = Some(worst.unwrap_or(0).max(*count));
            *count = MAX_CALL_TOKENS;
        }
    }
    worst
}

/// How a pass ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Read to the end.
    Done(Box<Pass>),
    /// Line `from_line` no longer ends at `from_offset`: the file was
    /// rewritten in place; read it again whole.
    Rewritten,
}

/// The most characters of the first prompt kept.
const PROMPT_CHARS: usize = 300;

/// Events of one line, turned into rows (Note \[Native feed rows\]).
struct Rows<'a> {
    opts: &'a ReadOptions,
    ctx: Option<Box<LineInfo>>,
    last_time: String,
    first_prompt: Option<String>,
    pending: Vec<FeedEntry>,
    /// Bytes of the bodies in `pending`.
    bytes: usize,
    made: u64,
    /// Skipped lines kept as rows.
    skipped: u64,
    clamped: Clamped,
    /// The last line whose usage was clamped (a line has several events).
    clamped_line: u64,
}

/// A batch is handed out once its bodies reach this many bytes (bounded
/// memory whatever the rows' sizes).
pub const BATCH_BYTES: usize = 8 << 20;

/// `HubBody::Event`'s JSON (`{"kind":"event","event":…}`) plus the line's
/// context, serialised from a borrowed event (no copy of its text).
#[derive(Serialize)]
struct NativeBody<'a> {
    kind: &'static str,
    event: &'a Event,
    line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    sidechain: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
}

/// Whether an event becomes a feed row (Note \[Native feed rows\]).
fn worth_showing(e: &Event) -> bool {
    !matches!(
        e,
        Event::Line(_)
            | Event::End { .. }
            | Event::Other { .. }
            | Event::Skipped {
                reason: SkipReason::Blank,
                ..
            }
            | Event::Partial { .. }
            | Event::Glued { .. }
    )
}

impl Rows<'_> {
    fn new(opts: &ReadOptions) -> Rows<'_> {
        Rows {
            opts,
            ctx: None,
            last_time: opts.fallback_time.clone(),
            first_prompt: None,
            pending: Vec::new(),
            bytes: 0,
            made: 0,
            skipped: 0,
            clamped: Clamped::default(),
            clamped_line: 0,
        }
    }

    /// Take one event of line `line`: its usage clamped (Note \[Absurd
    /// usage\]), a row when `keep`, then into the summary.
    fn take(&mut self, mut e: Event, line: u64, keep: bool, builder: &mut SummaryBuilder) {
        if let Some(worst) = clamp_usage(&mut e)
            && keep
            && line != self.clamped_line
        {
            self.clamped_line = line;
            self.clamped.lines += 1;
            if self.clamped.first.len() < CLAMPED_LISTED {
                self.clamped.first.push((line, worst));
            }
        }
        self.event(&e, line, keep);
        builder.push(e);
    }

    /// Take note of one event of line `line`; a row when `keep`.
    fn event(&mut self, e: &Event, line: u64, keep: bool) {
        match e {
            Event::Line(info) => {
                if let Some(at) = info.timestamp.as_deref().and_then(time::parse_ms) {
                    self.last_time = time::format_ms(at);
                }
                self.ctx = Some(info.clone());
            }
            Event::UserText { text }
                if self.first_prompt.is_none()
                    && !self.ctx.as_ref().is_some_and(|c| c.sidechain) =>
            {
                self.first_prompt = Some(text.trim().chars().take(PROMPT_CHARS).collect());
            }
            // A skipped line has no context of its own: not the line before's.
            Event::Skipped { reason, .. } => {
                self.ctx = None;
                self.skipped += u64::from(keep && *reason != SkipReason::Blank);
            }
            _ => {}
        }
        if !keep || !worth_showing(e) {
            return;
        }
        let ctx = self.ctx.as_deref();
        let body = NativeBody {
            kind: "event",
            event: e,
            line,
            uuid: ctx.and_then(|c| c.uuid.as_deref()),
            sidechain: ctx.is_some_and(|c| c.sidechain),
            agent_id: ctx.and_then(|c| c.agent_id.as_deref()),
            model: ctx.and_then(|c| c.model.as_deref()),
        };
        let (text, _) = capped_body(&body, self.opts.max_body);
        self.bytes += text.len();
        self.pending.push(FeedEntry {
            seq: None,
            session_id: self.opts.session_id.clone(),
            kind: "event".to_owned(),
            body: text,
            created_at: self.last_time.clone(),
        });
        self.made += 1;
    }
}

/// Read a JSON Lines session file from its start (`format` as probed),
/// folding every line into the summary and handing the rows of lines after
/// `opts.from_line` to `on_batch` in batches of `opts.batch_rows`; the
/// last rows stay in [`Pass::tail`] for the caller to store with the
/// session.
///
/// # Errors
/// Reading the file, or what `on_batch` returns.
pub fn read_lines(
    mut input: impl Read,
    format: Format,
    opts: &ReadOptions,
    on_batch: &mut dyn FnMut(Batch) -> Result<()>,
) -> Result<Outcome> {
    let mut decoder = Decoder::new(format, opts.decode.clone());
    let mut builder = SummaryBuilder::new();
    let mut rows = Rows::new(opts);
    let limit = opts.decode.max_line_bytes;
    let mut buf = vec![0u8; 256 * 1024];
    // The line being written: held until its newline (Note [Whole lines only]).
    let mut partial: Vec<u8> = Vec::new();
    // The current line is over the limit and is being streamed to the decoder.
    let mut streaming = false;
    let mut events: Vec<Event> = Vec::new();
    let mut lines: u64 = 0;
    // The end of the last whole line, and the file position of `buf[0]`.
    let mut offset: u64 = 0;
    let mut base: u64 = 0;
    let rewritten = |lines: u64, offset: u64| {
        lines == opts.from_line && opts.from_line > 0 && offset != opts.from_offset
    };
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(Error::Io {
                    context: "reading a session file".to_owned(),
                    source,
                });
            }
        };
        let chunk = &buf[..n];
        let mut start = 0;
        while let Some(i) = memchr(b'\n', &chunk[start..]) {
            let end = start + i + 1;
            let seg = &chunk[start..end];
            start = end;
            if partial.is_empty() || streaming {
                decoder.feed(seg, &mut |e| events.push(e));
            } else {
                partial.extend_from_slice(seg);
                decoder.feed(&partial, &mut |e| events.push(e));
            }
            partial.clear();
            streaming = false;
            offset = base + end as u64;
            lines += 1;
            if rewritten(lines, offset) {
                return Ok(Outcome::Rewritten);
            }
            let keep = lines > opts.from_line;
            for e in events.drain(..) {
                rows.take(e, lines, keep, &mut builder);
            }
            if rows.pending.len() >= opts.batch_rows.max(1) || rows.bytes >= BATCH_BYTES {
                rows.bytes = 0;
                on_batch(Batch {
                    entries: std::mem::take(&mut rows.pending),
                    offset,
                    lines,
                })?;
            }
        }
        let rest = &chunk[start..];
        if streaming {
            decoder.feed(rest, &mut |e| events.push(e));
        } else if !rest.is_empty() {
            partial.extend_from_slice(rest);
            if partial.len() > limit {
                // Over the limit: the decoder skips it as it streams, and
                // the offset stays before it until its newline.
                decoder.feed(&partial, &mut |e| events.push(e));
                partial.clear();
                streaming = true;
            }
        }
        base += n as u64;
    }
    // A last line with no newline (Note [Whole lines only]).
    let last_line = !streaming
        && !partial.is_empty()
        && serde_json::from_slice::<serde::de::IgnoredAny>(&partial).is_ok();
    if last_line {
        decoder.feed(&partial, &mut |e| events.push(e));
        offset = base;
        lines += 1;
        if rewritten(lines, offset) {
            return Ok(Outcome::Rewritten);
        }
    }
    decoder.finish(&mut |e| events.push(e));
    let keep = last_line && lines > opts.from_line;
    for e in events.drain(..) {
        rows.take(e, lines, keep, &mut builder);
    }
    if opts.from_line > lines {
        return Ok(Outcome::Rewritten);
    }
    Ok(Outcome::Done(Box::new(Pass {
        summary: builder.finish(decoder.format()),
        offset,
        lines,
        rows: rows.made,
        first_prompt: rows.first_prompt.take(),
        tail: std::mem::take(&mut rows.pending),
        skipped: rows.skipped,
        clamped: std::mem::take(&mut rows.clamped),
    })))
}

/// Decode a whole-document session file (a Gemini CLI chat): every
/// message's events are rows (the file is rewritten whole as the chat
/// goes on, so it is always read whole and its rows replaced).
pub fn read_document(bytes: &[u8], format: Format, opts: &ReadOptions) -> Pass {
    let mut decoder = Decoder::new(format, opts.decode.clone());
    let mut builder = SummaryBuilder::new();
    let mut rows = Rows::new(opts);
    let mut events = Vec::new();
    decoder.feed(bytes, &mut |e| events.push(e));
    decoder.finish(&mut |e| events.push(e));
    // One "line" per message: numbered by the message's line-context event.
    let mut message = 0u64;
    for e in events {
        if matches!(e, Event::Line(_)) {
            message += 1;
        }
        rows.take(e, message.max(1), true, &mut builder);
    }
    Pass {
        summary: builder.finish(decoder.format()),
        offset: bytes.len() as u64,
        lines: message,
        rows: rows.made,
        first_prompt: rows.first_prompt.take(),
        tail: rows.pending,
        skipped: rows.skipped,
        clamped: rows.clamped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::HubBody;

    const A: &str = r#"{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s","version":"2.1.231","type":"user","message":{"role":"user","content":"first"},"uuid":"u1","timestamp":"2026-01-01T00:00:01.000Z"}"#;
    const B: &str = r#"{"parentUuid":"u1","isSidechain":false,"cwd":"/w","sessionId":"s","version":"2.1.231","type":"user","message":{"role":"user","content":"second"},"uuid":"u2","timestamp":"2026-01-01T00:00:02.000Z"}"#;

    fn opts(from_line: u64, from_offset: u64) -> ReadOptions {
        ReadOptions {
            session_id: "s".into(),
            from_line,
            from_offset,
            batch_rows: 100,
            max_body: 64 * 1024,
            fallback_time: "2026-01-01T00:00:00.000Z".into(),
            decode: DecodeOptions::default(),
        }
    }

    fn pass(bytes: &[u8], o: &ReadOptions) -> Outcome {
        read_lines(bytes, Format::ClaudeSession, o, &mut |_| Ok(())).unwrap()
    }

    #[test]
    fn bodies_are_the_hub_event_plus_where_the_line_was() {
        let Outcome::Done(p) = pass(format!("{A}\n").as_bytes(), &opts(0, 0)) else {
            panic!("rewritten")
        };
        let row = &p.tail[0];
        let body: serde_json::Value = serde_json::from_str(&row.body).unwrap();
        let hub = serde_json::to_value(HubBody::Event {
            event: Event::UserText {
                text: "first".into(),
            },
        })
        .unwrap();
        assert_eq!(body["kind"], hub["kind"]);
        assert_eq!(body["event"], hub["event"]);
        assert_eq!(
            (body["line"].as_u64(), body["uuid"].as_str()),
            (Some(1), Some("u1"))
        );
        assert_eq!(row.created_at, "2026-01-01T00:00:01.000Z");
        assert_eq!(p.first_prompt.as_deref(), Some("first"));
    }

    #[test]
    fn a_complete_last_line_without_newline_is_read_and_a_partial_one_waits() {
        let whole = format!("{A}\n{B}");
        let Outcome::Done(p) = pass(whole.as_bytes(), &opts(0, 0)) else {
            panic!()
        };
        assert_eq!((p.lines, p.offset), (2, whole.len() as u64));
        let cut = &whole[..whole.len() - 5];
        let Outcome::Done(p) = pass(cut.as_bytes(), &opts(0, 0)) else {
            panic!()
        };
        assert_eq!((p.lines, p.offset), (1, A.len() as u64 + 1));
        // The newline arrives after a last line taken whole: that line now
        // ends elsewhere, so the file is read again whole (never a line twice).
        let later = format!("{A}\n{B}\n");
        assert_eq!(
            pass(later.as_bytes(), &opts(2, whole.len() as u64)),
            Outcome::Rewritten
        );
        let same = pass(whole.as_bytes(), &opts(2, whole.len() as u64));
        assert!(matches!(same, Outcome::Done(p) if p.tail.is_empty()));
    }

    /// Issue 40 §5: a line over the decoder's limit is a `skipped` row
    /// and counted, not dropped without a trace.
    #[test]
    fn a_line_over_the_limit_is_a_skipped_row_and_counted() {
        let long = format!("{{\"x\":\"{}\"}}", "z".repeat(5000));
        let text = format!("{A}\n{long}\n\n{B}\n");
        let mut o = opts(0, 0);
        o.decode.max_line_bytes = 1024;
        let Outcome::Done(p) = pass(text.as_bytes(), &o) else {
            panic!("rewritten")
        };
        assert_eq!((p.lines, p.skipped), (4, 1));
        let bodies: Vec<serde_json::Value> = p
            .tail
            .iter()
            .map(|r| serde_json::from_str(&r.body).unwrap())
            .collect();
        let skipped: Vec<&serde_json::Value> = bodies
            .iter()
            .filter(|b| b["event"]["type"] == "skipped")
            .collect();
        assert_eq!(skipped.len(), 1, "{bodies:?}");
        assert_eq!(skipped[0]["event"]["reason"], "too_long");
        assert_eq!(skipped[0]["line"], 2);
        // No context borrowed from the line before.
        assert!(skipped[0].get("uuid").is_none());
        // Lines already stored are not counted again.
        let Outcome::Done(p) = pass(
            text.as_bytes(),
            &ReadOptions {
                from_line: 2,
                from_offset: (A.len() + long.len() + 2) as u64,
                ..o
            },
        ) else {
            panic!("rewritten")
        };
        assert_eq!(p.skipped, 0);
    }

    /// Note [Absurd usage]: a count over `MAX_CALL_TOKENS` is clamped
    /// before the summary sums it, and its line is listed.
    #[test]
    fn absurd_usage_is_clamped_and_its_line_listed() {
        let call = |id: &str, input: u64| {
            format!(
                r#"{{"parentUuid":"u1","isSidechain":false,"cwd":"/w","sessionId":"s","version":"2.1.231","type":"assistant","message":{{"id":"{id}","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"hi"}}],"usage":{{"input_tokens":{input},"output_tokens":1}}}},"requestId":"r-{id}","uuid":"u-{id}","timestamp":"2026-01-01T00:00:03.000Z"}}"#
            )
        };
        let text = format!(
            "{A}\n{}\n{}\n",
            call("m1", 5_000_000_000_000_000_000),
            call("m2", 7)
        );
        let Outcome::Done(p) = pass(text.as_bytes(), &opts(0, 0)) else {
            panic!("rewritten")
        };
        let tokens = &p.summary.session.as_ref().unwrap().tokens;
        assert_eq!(tokens.input, MAX_CALL_TOKENS + 7);
        assert_eq!(
            p.clamped,
            Clamped {
                lines: 1,
                first: vec![(2, 5_000_000_000_000_000_000)]
            }
        );
    }

    #[test]
    fn a_line_that_no_longer_ends_at_the_mark_means_rewritten() {
        let text = format!("{B}\n{A}\n");
        assert_eq!(
            pass(text.as_bytes(), &opts(1, A.len() as u64 + 1)),
            Outcome::Rewritten
        );
        assert_eq!(pass(b"", &opts(1, 10)), Outcome::Rewritten);
    }
}
