//! A session's transcript: its feed rows, or (for a session with none) the
//! same rows decoded again from its forensic log, and their HTML lines.
//!
//! The lines are drawn by [`lines`] (issue 41): agent text and thinking as
//! Markdown (`markdown`, Note \[Safe Markdown\]) with code highlighted
//! (`highlight`, Note \[Highlight budget\]), each tool call as what it did
//! with its result (`tools`, `shell`, `diff`), noise folded (`fold`).
//!
//! Note \[Transcript source\]: the feed is what `run` streamed live; a
//! session ingested from a log (whose feed holds only the `ended` row
//! `ingest` wrote), or written by a build before the feed existed, has no
//! rows of what the agent did. Its forensic log holds every byte, so it is
//! decoded again with core's decoder, streaming and bounded (at most
//! [`MAX_LOG_BYTES`] bytes, lines of at most [`MAX_LINE_BYTES`]; strings
//! cut to [`MAX_STRING`] like the feed's bodies), into rows shaped like the
//! feed's `event` rows (ids 1, 2, ...). The answer says which source it
//! used. A `running` session that is alive is never read from its log: its
//! live rows are still coming. Which source a session has is decided on its
//! first [`BATCH`] feed rows, so every page of it agrees.
//!
//! Note \[Transcript pages\]: a transcript is shown a page at a time, at
//! most [`PAGE_ROWS`] rows and about [`PAGE_BYTES`] of row bodies (the row
//! that crosses it ends the page), with the `after` of the next page (the
//! last row id shown, as `?after=` for the feed's SSE). A whole transcript
//! in one answer cost its size per request, held until the client read it:
//! 20 slow readers of a 40 MB session page took 2 GB. Pages rather than a
//! body streamed as the client drains: the page's script follows the
//! session live and marks the latest partial object, both of which need the
//! page's rows at hand, a person can link to a page, and 1 MiB of text is
//! already more than anyone reads at once. The feed is read in batches of
//! [`BATCH`] rows by id, so a page never reads more than it shows plus one
//! batch; a log is decoded from its start, keeping only the page's rows.

use std::io::{BufRead, BufReader, Read};

use agentshape_core::decode::{DecodeOptions, Decoder, Format};
use agentshape_runtime::infile;
use agentshape_store::FeedRow;
use agentshape_store::query::Source as Store;
use agentshape_store::query::{Session, feed_for_session};
use serde::Serialize;
use serde_json::{Value, json};

mod diff;
mod fold;
mod highlight;
mod lines;
mod markdown;
mod outcome;
mod shell;
mod tools;

pub(crate) use lines::{Known, lines, lines_with};

/// The most rows one page of a transcript holds (Note \[Transcript pages\]).
pub(crate) const PAGE_ROWS: usize = 1_000;
/// About the most bytes of row bodies one page holds (Note \[Transcript pages\]).
pub(crate) const PAGE_BYTES: usize = 1 << 20;
/// Feed rows read per query while a page is filled.
const BATCH: usize = 64;
/// The most bytes of a forensic log read for one page.
pub(crate) const MAX_LOG_BYTES: u64 = 64 << 20;
/// Longer log lines are skipped (and counted by the decoder's `skipped`).
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;
/// Longer strings in a row decoded from a log are cut.
pub(crate) const MAX_STRING: usize = 64 * 1024;

/// Where the rows came from (Note \[Transcript source\]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Source {
    /// The store's feed.
    Feed,
    /// The forensic log, decoded again.
    Log,
    /// Neither: no feed rows and no readable log.
    None,
}

/// One transcript row, shaped like a feed row on the SSE feed (body as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Row {
    pub(crate) id: i64,
    pub(crate) session_id: String,
    pub(crate) kind: String,
    pub(crate) created_at: String,
    pub(crate) body: Value,
}

impl Row {
    fn of_feed(r: FeedRow) -> Self {
        let body = serde_json::from_str(&r.body).unwrap_or(Value::String(r.body));
        Row {
            id: r.id,
            session_id: r.session_id,
            kind: r.kind,
            created_at: r.created_at,
            body,
        }
    }
}

/// One page of the rows of one session (Note \[Transcript pages\]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Transcript {
    pub(crate) rows: Vec<Row>,
    /// The forensic log was longer than [`MAX_LOG_BYTES`]: its end is not shown.
    pub(crate) truncated: bool,
    /// More rows follow this page: the `after` of the next page.
    pub(crate) next: Option<i64>,
    pub(crate) source: Source,
}

/// A page being filled: rows until [`PAGE_ROWS`] or [`PAGE_BYTES`].
struct Page {
    rows: Vec<Row>,
    bytes: usize,
    next: Option<i64>,
}

impl Page {
    fn new() -> Self {
        Page {
            rows: Vec::new(),
            bytes: 0,
            next: None,
        }
    }

    /// Take `row` (of about `bytes`), or, when the page is full, note that
    /// a next page exists and say `false`.
    fn push(&mut self, row: Row, bytes: usize) -> bool {
        if self.rows.len() >= PAGE_ROWS || self.bytes >= PAGE_BYTES {
            self.next = self.rows.last().map(|r| r.id);
            return false;
        }
        self.bytes += bytes;
        self.rows.push(row);
        true
    }
}

/// The page of `s`'s transcript after row `after` (Notes \[Transcript
/// source\], \[Transcript pages\]).
///
/// # Errors
/// When the store cannot be read; an unreadable log is [`Source::None`].
pub(crate) fn load(
    store: &dyn Store,
    s: &Session,
    after: i64,
) -> agentshape_store::Result<Transcript> {
    let first = feed_for_session(store, &s.id, 0, BATCH)?;
    let alive = s.status == "running" && !s.lost;
    // `ingest` writes the `ended` row only: a feed of bookends says nothing
    // the agent did.
    let said_something = first
        .iter()
        .any(|r| !matches!(r.kind.as_str(), "started" | "ended"));
    if !said_something && !alive {
        let logged = s.raw_log_path.as_deref().and_then(|p| {
            // A regular file only, checked on the handle: a FIFO is not
            // waited on (runtime's Note [Regular files only]).
            let f = infile::open(std::path::Path::new(p), infile::Options::REGULAR).ok()?;
            Some(from_log(f, &s.id, s.agent.as_deref(), after))
        });
        match logged {
            // Only the decoder's `end`: an empty log; the bookends say more.
            Some(t) if t.rows.iter().any(|r| r.body["event"]["type"] != "end") => return Ok(t),
            // A later page of a log (none of the above is a bookend only).
            Some(t) if after > 0 => return Ok(t),
            _ if first.is_empty() => {
                return Ok(Transcript {
                    rows: Vec::new(),
                    truncated: false,
                    next: None,
                    source: Source::None,
                });
            }
            _ => {}
        }
    }
    let mut page = Page::new();
    let mut cursor = after;
    'read: loop {
        let batch = feed_for_session(store, &s.id, cursor, BATCH)?;
        let full = batch.len() == BATCH;
        for r in batch {
            cursor = r.id;
            let bytes = r.body.len();
            if !page.push(Row::of_feed(r), bytes) {
                break 'read;
            }
        }
        if !full {
            break;
        }
    }
    Ok(Transcript {
        rows: page.rows,
        truncated: false,
        next: page.next,
        source: Source::Feed,
    })
}

/// Decode a forensic log into rows, keeping the page after row `after`
/// (Notes \[Transcript source\], \[Transcript pages\]).
pub(crate) fn from_log(
    log: impl Read,
    session_id: &str,
    agent: Option<&str>,
    after: i64,
) -> Transcript {
    let format = match agent {
        Some("claude") => Format::Claude,
        Some("codex") => Format::Codex,
        _ => Format::Auto,
    };
    let opts = DecodeOptions {
        max_line_bytes: MAX_LINE_BYTES,
        // As `run` does with a store: the tool results' text, for the page.
        keep_tool_results: true,
    };
    let mut decoder = Decoder::new(format, opts);
    let mut limited = log.take(MAX_LOG_BYTES);
    let mut reader = BufReader::new(&mut limited);
    let mut page = Page::new();
    let mut seen: i64 = 0;
    // `false` once the page is full and a row beyond it was seen.
    let mut push = |page: &mut Page, e: agentshape_core::Event| -> bool {
        seen += 1;
        if seen <= after {
            return true;
        }
        let mut body = json!({"kind": "event", "event": e});
        cut_strings(&mut body, MAX_STRING);
        let bytes = body.to_string().len();
        page.push(
            Row {
                id: seen,
                session_id: session_id.to_owned(),
                kind: "event".to_owned(),
                created_at: String::new(),
                body,
            },
            bytes,
        )
    };
    let mut more = true;
    while more {
        let n = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(chunk) => {
                let mut batch = Vec::new();
                decoder.feed(chunk, &mut |e| batch.push(e));
                for e in batch {
                    if !push(&mut page, e) {
                        more = false;
                        break;
                    }
                }
                chunk.len()
            }
        };
        reader.consume(n);
    }
    if more {
        let mut tail = Vec::new();
        decoder.finish(&mut |e| tail.push(e));
        for e in tail {
            if !push(&mut page, e) {
                break;
            }
        }
    }
    Transcript {
        truncated: page.next.is_none() && limited_hit(&limited),
        rows: page.rows,
        next: page.next,
        source: Source::Log,
    }
}

/// The byte bound was reached: there may be more log than was read.
fn limited_hit<R>(r: &std::io::Take<R>) -> bool {
    r.limit() == 0
}

/// Cut every string longer than `limit` bytes (at a char boundary).
fn cut_strings(v: &mut Value, limit: usize) {
    match v {
        Value::String(s) if s.len() > limit => {
            let mut end = limit;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            s.push('…');
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_strings(x, limit)),
        Value::Object(m) => m.values_mut().for_each(|x| cut_strings(x, limit)),
        _ => {}
    }
}

/// The first line of `s`, at most 120 characters (`…` when cut).
pub(crate) fn first_line(s: &str) -> String {
    let line = s.trim_start().lines().next().unwrap_or("");
    let mut out: String = line.chars().take(120).collect();
    if out.len() < s.trim().len() {
        out.push('…');
    }
    out
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_decoded_into_the_same_rows_bounded() {
        let line =
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi <b>"}]}}"#;
        let t = from_log(format!("{line}\n").as_bytes(), "s", Some("claude"), 0);
        assert_eq!(t.source, Source::Log);
        assert!(!t.truncated);
        assert_eq!(t.next, None);
        let texts: Vec<&Value> = t
            .rows
            .iter()
            .map(|r| &r.body["event"])
            .filter(|e| e["type"] == "text")
            .collect();
        assert_eq!(texts.len(), 1);
        assert_eq!(texts[0]["text"], "hi <b>");
        assert!(t.rows.windows(2).all(|w| w[0].id + 1 == w[1].id));
        // Pages of PAGE_ROWS rows, each from where the last one ended,
        // every row once, in order.
        let many = format!("{line}\n").repeat(PAGE_ROWS + 10);
        let whole = from_log(many.as_bytes(), "s", Some("claude"), 0);
        assert_eq!(whole.rows.len(), PAGE_ROWS);
        let mut ids: Vec<i64> = whole.rows.iter().map(|r| r.id).collect();
        let mut next = whole.next;
        while let Some(after) = next {
            assert_eq!(after, *ids.last().unwrap());
            let t = from_log(many.as_bytes(), "s", Some("claude"), after);
            assert!(t.rows.len() <= PAGE_ROWS);
            ids.extend(t.rows.iter().map(|r| r.id));
            next = t.next;
        }
        assert!(ids.len() > PAGE_ROWS + 10, "{}", ids.len());
        assert!(ids.iter().zip(1..).all(|(id, n)| *id == n));
    }

    #[test]
    fn a_page_of_big_rows_stops_at_about_page_bytes() {
        let big = "y".repeat(60 * 1024);
        let line = format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{big}"}}]}}}}"#
        );
        let many = format!("{line}\n").repeat(40);
        let t = from_log(many.as_bytes(), "s", Some("claude"), 0);
        let bytes: usize = t.rows.iter().map(|r| r.body.to_string().len()).sum();
        assert!(t.next.is_some());
        assert!(bytes < PAGE_BYTES + 64 * 1024, "{bytes}");
        assert!(t.rows.len() < 40);
    }

    #[test]
    fn first_line_is_cut() {
        assert_eq!(first_line("a\nb"), "a…");
        assert_eq!(first_line("abc"), "abc");
        assert_eq!(first_line(&"x".repeat(200)).chars().count(), 121);
    }
}
