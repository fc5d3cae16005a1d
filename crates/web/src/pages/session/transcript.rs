//! A session's transcript: its feed rows, or (for a session with none) the
//! same rows decoded again from its forensic log, and their HTML lines.
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
use agentshape_store::query::{SessionRow, feed_for_session};
use maud::{Markup, html};
use serde::Serialize;
use serde_json::{Value, json};

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
    s: &SessionRow,
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

/// The transcript's lines: one `.line` per row, in order, each with the
/// anchor `row-<id>` (the DOM contract the browser tests read). Every
/// partial object but the latest is hidden, and so is every usage row but
/// the last of its message (Note \[Message tokens\]).
///
/// Note \[Message tokens\]: Claude Code writes one line per content block
/// of a message, each with the message's usage so far; the message's
/// tokens are those of its *last* line (the summary counts them so too,
/// core's Note \[Native tokens\]). On a page every usage row of a message
/// id but the last is hidden, so the one shown is the message's count
/// (a message cut by a page boundary shows its count so far). Codex's
/// running totals (`cumulative`) repeat about half the time: a repeat of
/// the previous total is hidden.
pub(crate) fn lines(rows: &[Row]) -> Markup {
    let last_partial = rows.iter().rposition(|r| r.kind == "partial");
    let mut last_usage: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        if let Some(id) = usage_of(r)
            .and_then(|u| u.get("message_id"))
            .and_then(Value::as_str)
        {
            last_usage.insert(id, i);
        }
    }
    let mut previous_total: Option<&Value> = None;
    let mut model: Option<&str> = None;
    let mut shown = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let superseded = match usage_of(r) {
            Some(u) if u.get("cumulative").and_then(Value::as_bool) == Some(true) => {
                let repeat = previous_total.is_some() && previous_total == u.get("tokens");
                previous_total = u.get("tokens");
                repeat
            }
            Some(u) => u
                .get("message_id")
                .and_then(Value::as_str)
                .is_some_and(|id| last_usage.get(id) != Some(&i)),
            None => r.kind == "partial" && Some(i) != last_partial,
        };
        // The model of a turn, shown where it changes (runtime's Note
        // [Native feed rows]: an imported row names its line's model).
        let turn_model = r
            .body
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !superseded && !quiet(r) && model != Some(*m));
        if turn_model.is_some() {
            model = turn_model;
        }
        shown.push((r, superseded, turn_model));
    }
    html! {
        @for (r, superseded, turn_model) in shown {
            (line(r, superseded, turn_model))
        }
    }
}

/// A row shown hidden whatever its neighbours (an event type in [`QUIET`]).
fn quiet(r: &Row) -> bool {
    r.kind == "event"
        && r.body
            .get("event")
            .and_then(|e| e.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| QUIET.contains(&t))
}

/// The usage event of a row, if it is one.
fn usage_of(r: &Row) -> Option<&Value> {
    let ev = r.body.get("event")?;
    (r.kind == "event" && ev.get("type").and_then(Value::as_str) == Some("usage")).then_some(ev)
}

/// `t` as a count of tokens: `1234` as `1,234`.
fn count(v: Option<&Value>) -> String {
    let n = v.and_then(Value::as_u64).unwrap_or(0).to_string();
    let mut out = String::new();
    for (i, c) in n.chars().enumerate() {
        if i > 0 && (n.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Event types that mark a line as an error (highlighted).
fn is_error(ty: &str, ev: &Value) -> bool {
    match ty {
        "tool_result" => ev.get("is_error").and_then(Value::as_bool) == Some(true),
        "tool_error" | "api_error" => true,
        _ => false,
    }
}

/// Event types that say nothing a reader needs (the row is kept, hidden).
const QUIET: &[&str] = &["message", "end", "partial"];

fn line(r: &Row, superseded: bool, turn_model: Option<&str>) -> Markup {
    let b = &r.body;
    let cut = b.get("truncated").and_then(Value::as_bool) == Some(true);
    let ev = b.get("event").unwrap_or(&Value::Null);
    let ty = if r.kind == "event" {
        str_of(ev, "type")
    } else {
        ""
    };
    let hidden = superseded || (r.kind == "event" && QUIET.contains(&ty));
    let err = r.kind == "event" && is_error(ty, ev);
    let class = format!(
        "line k-{} t-{}{}{}",
        r.kind,
        if ty.is_empty() { "none" } else { ty },
        if cut { " cut" } else { "" },
        if err { " err" } else { "" }
    );
    // An imported session's row says which line of the agent's file it
    // came from; its `created_at` is that line's own timestamp.
    let source_line = b.get("line").and_then(Value::as_u64);
    html! {
        div id={ "row-" (r.id) } class=(class) hidden[hidden] data-feed-id=(r.id) data-kind=(r.kind)
            data-type=[(!ty.is_empty()).then_some(ty)] {
            @if let Some(n) = source_line {
                time.ts datetime=(r.created_at) title={ (r.created_at) " · line " (n) } {
                    (r.created_at.get(11..19).unwrap_or(&r.created_at))
                }
                " "
            }
            @if let Some(m) = turn_model {
                span.model title="model of this turn" { (m) } " "
            }
            @match (r.kind.as_str(), ty) {
                ("event", "text") => (str_of(ev, "text")),
                ("event", "user_text") => { span.tag.user { "user" } " " span.text { (str_of(ev, "text")) } },
                ("event", "usage") => {
                    @let t = ev.get("tokens").unwrap_or(&Value::Null);
                    span.usage.muted {
                        @if ev.get("cumulative").and_then(Value::as_bool) == Some(true) { "tokens so far · " } @else { "tokens · " }
                        span.tin { (count(t.get("input"))) } " in · "
                        span.tout { (count(t.get("output"))) } " out"
                        @if t.get("cache_read").and_then(Value::as_u64).unwrap_or(0) > 0 || t.get("cache_write").and_then(Value::as_u64).unwrap_or(0) > 0 {
                            " · cache " (count(t.get("cache_read"))) " read, " (count(t.get("cache_write"))) " written"
                        }
                        @if let Some(m) = ev.get("model").and_then(Value::as_str) { " · " span.usage-model { (m) } }
                    }
                },
                ("event", "compaction") => div.compaction role="separator" {
                    span.divider {
                        "context compacted"
                        @if let Some(t) = ev.get("trigger").and_then(Value::as_str) { " · " (t) }
                        @if let Some(n) = ev.get("pre_tokens").and_then(Value::as_u64) { " · " (count(Some(&Value::from(n)))) " tokens before" }
                        @let k = str_of(ev, "kind");
                        @if !k.is_empty() && k != "compact_boundary" { " · " (k) }
                    }
                },
                ("event", "compact_summary") => details.compact-summary {
                    summary { span.tag { "compact summary" } " " (first_line(str_of(ev, "text"))) }
                    pre { (str_of(ev, "text")) }
                },
                ("event", "tool_error") => span.bad { "tool error · " span.tool-name { (str_of(ev, "name")) } },
                ("event", "api_error") => span.bad {
                    "API error"
                    @let cat = str_of(ev, "category");
                    @if !cat.is_empty() { " (" (cat) @if let Some(st) = ev.get("status").and_then(Value::as_u64) { ", " (st) } ")" }
                    ": " (str_of(ev, "message"))
                },
                ("event", "sub_agent") => span.muted { "sub-agent " code { (str_of(ev, "agent_id")) } " reported progress" },
                ("event", "thinking") => details {
                    summary { span.tag { "thinking" } " " (first_line(str_of(ev, "text"))) }
                    pre { (str_of(ev, "text")) }
                },
                ("event", "tool_use") => {
                    @let input = ev.get("input").map(Value::to_string).unwrap_or_default();
                    details {
                        summary { span.tag { "tool" } " " span.tool-name { (str_of(ev, "name")) } " " (first_line(&input)) }
                        pre { (ev.get("input").and_then(|v| serde_json::to_string_pretty(v).ok()).unwrap_or_default()) }
                    }
                },
                ("event", "tool_result") => {
                    @let content = ev.get("content").and_then(Value::as_str);
                    @let error = ev.get("is_error").and_then(Value::as_bool) == Some(true);
                    details {
                        summary {
                            span.tag.bad[error] { @if error { "tool error" } @else { "result" } }
                            " " (content.map_or_else(|| "(content not kept)".to_owned(), first_line))
                        }
                        pre { (content.unwrap_or("The decoder keeps no tool-result text; the forensic log has it.")) }
                    }
                },
                ("event", "init") => span.muted { "init · model " (str_of(ev, "model")) },
                ("event", "result") => {
                    @let info = ev.get("info").unwrap_or(&Value::Null);
                    span.muted {
                        "result · " (str_of(info, "subtype"))
                        @if info.get("is_error").and_then(Value::as_bool) == Some(true) { " · error" }
                    }
                },
                ("event", "skipped") => span.muted {
                    "line " (ev.get("line").map(Value::to_string).unwrap_or_default())
                    " skipped (" (str_of(ev, "reason")) ")"
                },
                ("event", "warning") => span.warn { "warning: " (str_of(ev, "message")) },
                ("event", "other") => span.muted { (str_of(ev, "kind")) },
                ("event", other) => span.muted { (other) },
                ("partial", _) => details open {
                    summary { span.tag { "partial output" } }
                    pre { (b.get("value").and_then(|v| serde_json::to_string_pretty(v).ok()).unwrap_or_default()) }
                },
                ("started", _) => span.muted {
                    "started · tier " (b.get("tier").map(Value::to_string).unwrap_or_default())
                },
                ("ended", _) => span.muted { "ended · " (str_of(b, "status")) },
                ("feed_gap", _) => span.warn {
                    (b.get("dropped").map_or_else(|| "some".to_owned(), Value::to_string))
                    " lines not shown (feed gap)"
                },
                ("hook", _) => {
                    @let verdict = str_of(b, "verdict");
                    @let errors = b.get("errors").and_then(Value::as_array).map_or(0, Vec::len);
                    span class={ "hook " (if matches!(verdict, "blocked" | "gave_up") { "bad" } else { "muted" }) } {
                        span.tag { "hook" } " " (str_of(b, "event"))
                        @let t = str_of(b, "agent_type");
                        @if !t.is_empty() { " · " (t) }
                        " · " span.verdict { (verdict) }
                        @if let Some(n) = b.get("blocks").and_then(Value::as_u64).filter(|n| *n > 0) { " · block " (n) }
                        @if errors > 0 { " · " (errors) " error" @if errors > 1 { "s" } }
                    }
                },
                (kind, _) => span.muted { (kind) " " (b.to_string()) },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, kind: &str, body: Value) -> Row {
        Row {
            id,
            session_id: "s".into(),
            kind: kind.into(),
            created_at: String::new(),
            body,
        }
    }

    fn text(id: i64, t: &str) -> Row {
        row(
            id,
            "event",
            json!({"kind": "event", "event": {"type": "text", "text": t}}),
        )
    }

    #[test]
    fn one_line_per_row_in_order_with_the_text_as_its_text() {
        let rows = vec![
            row(1, "started", json!({"tier": 1})),
            text(2, "hello"),
            row(
                3,
                "event",
                json!({"event": {"type": "tool_use", "name": "Bash", "input": {"command": "ls\n-la"}}}),
            ),
            row(
                4,
                "event",
                json!({"event": {"type": "tool_result", "is_error": false, "content": null}}),
            ),
            row(5, "partial", json!({"value": {"a": 1}})),
            row(6, "partial", json!({"value": {"a": 2}})),
            row(7, "feed_gap", json!({"dropped": 7})),
            row(8, "ended", json!({"status": "completed"})),
        ];
        let html = lines(&rows).into_string();
        let ids: Vec<usize> = (1..=8)
            .map(|i| html.find(&format!(r#"data-feed-id="{i}""#)).unwrap())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{html}");
        assert!(
            html.contains(r#"data-kind="event" data-type="text">hello</div>"#),
            "{html}"
        );
        assert_eq!(html.matches("<details").count(), 4, "{html}");
        assert!(html.contains("7 lines not shown (feed gap)"), "{html}");
        // Only the latest partial object shows.
        assert!(html.contains(r#"hidden data-feed-id="5""#), "{html}");
        assert!(!html.contains(r#"hidden data-feed-id="6""#), "{html}");
        // A tool's summary is its name and the first line of its input.
        assert!(
            html.contains("Bash</span> {&quot;command&quot;:&quot;ls\\n-la&quot;}"),
            "{html}"
        );
    }

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
    fn a_hook_row_says_its_verdict_blocks_and_errors() {
        let r = row(
            3,
            "hook",
            json!({"hook_id": 1, "event": "SubagentStop", "verdict": "blocked", "blocks": 2,
                   "agent_id": "a1", "agent_type": "reviewer", "method": "none",
                   "errors": [{"instance_path": "/a"}, {"instance_path": "/b"}], "reason": "fix"}),
        );
        let html = line(&r, false, None).into_string();
        assert!(html.contains("class=\"hook bad\""), "{html}");
        assert!(html.contains("SubagentStop · reviewer · "), "{html}");
        assert!(
            html.contains("blocked</span> · block 2 · 2 errors"),
            "{html}"
        );
    }

    #[test]
    fn first_line_is_cut() {
        assert_eq!(first_line("a\nb"), "a…");
        assert_eq!(first_line("abc"), "abc");
        assert_eq!(first_line(&"x".repeat(200)).chars().count(), 121);
    }
}
