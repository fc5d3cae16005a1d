//! A session's transcript: its feed rows, or (for a session with none) the
//! same rows decoded again from its forensic log, and their HTML lines.
//!
//! Note \[Transcript source\]: the feed is what `run` streamed live; a
//! session ingested from a log (whose feed holds only the `ended` row
//! `ingest` wrote), or written by a build before the feed existed, has no
//! rows of what the agent did. Its forensic log holds every byte, so it is
//! decoded again with core's decoder, streaming and bounded (at most
//! [`MAX_ROWS`] events, [`MAX_LOG_BYTES`] bytes, lines of at most
//! [`MAX_LINE_BYTES`]; strings cut to [`MAX_STRING`] like the feed's bodies),
//! into rows shaped like the feed's `event` rows (ids 1, 2, ...). The answer
//! says which source it used. A `running` session that is alive is never
//! read from its log: its live rows are still coming.

use std::io::{BufRead, BufReader, Read};

use agentshape_core::decode::{DecodeOptions, Decoder, Format};
use agentshape_runtime::infile;
use agentshape_store::FeedRow;
use agentshape_store::query::Source as Store;
use agentshape_store::query::{SessionRow, feed_for_session};
use maud::{Markup, html};
use serde::Serialize;
use serde_json::{Value, json};

/// The most rows a transcript holds; beyond, it says `truncated`.
pub(crate) const MAX_ROWS: usize = 5_000;
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

/// The rows of one session, bounded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Transcript {
    pub(crate) rows: Vec<Row>,
    /// More than [`MAX_ROWS`] rows (or log bytes) exist.
    pub(crate) truncated: bool,
    pub(crate) source: Source,
}

/// The transcript of `s` (Note \[Transcript source\]).
///
/// # Errors
/// When the store cannot be read; an unreadable log is [`Source::None`].
pub(crate) fn load(store: &dyn Store, s: &SessionRow) -> agentshape_store::Result<Transcript> {
    let mut rows = feed_for_session(store, &s.id, 0, MAX_ROWS + 1)?;
    let alive = s.status == "running" && !s.lost;
    // `ingest` writes the `ended` row only: a feed of bookends says nothing
    // the agent did.
    let said_something = rows
        .iter()
        .any(|r| !matches!(r.kind.as_str(), "started" | "ended"));
    if !said_something && !alive {
        let logged = s.raw_log_path.as_deref().and_then(|p| {
            // A regular file only, checked on the handle: a FIFO is not
            // waited on (runtime's Note [Regular files only]).
            let f = infile::open(std::path::Path::new(p), infile::Options::REGULAR).ok()?;
            Some(from_log(f, &s.id, s.agent.as_deref()))
        });
        match logged {
            // Only the decoder's `end`: an empty log; the bookends say more.
            Some(t) if t.rows.iter().any(|r| r.body["event"]["type"] != "end") => return Ok(t),
            _ if rows.is_empty() => {
                return Ok(Transcript {
                    rows: Vec::new(),
                    truncated: false,
                    source: Source::None,
                });
            }
            _ => {}
        }
    }
    let truncated = rows.len() > MAX_ROWS;
    rows.truncate(MAX_ROWS);
    Ok(Transcript {
        rows: rows.into_iter().map(Row::of_feed).collect(),
        truncated,
        source: Source::Feed,
    })
}

/// Decode a forensic log into rows (Note \[Transcript source\]).
pub(crate) fn from_log(log: impl Read, session_id: &str, agent: Option<&str>) -> Transcript {
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
    let mut rows = Vec::new();
    let mut truncated = false;
    let push = |rows: &mut Vec<Row>, e: agentshape_core::Event| {
        let mut body = json!({"kind": "event", "event": e});
        cut_strings(&mut body, MAX_STRING);
        rows.push(Row {
            id: i64::try_from(rows.len() + 1).unwrap_or(i64::MAX),
            session_id: session_id.to_owned(),
            kind: "event".to_owned(),
            created_at: String::new(),
            body,
        });
    };
    loop {
        if rows.len() > MAX_ROWS {
            truncated = true;
            break;
        }
        let n = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(chunk) => {
                let mut batch = Vec::new();
                decoder.feed(chunk, &mut |e| batch.push(e));
                for e in batch {
                    push(&mut rows, e);
                }
                chunk.len()
            }
        };
        reader.consume(n);
    }
    if !truncated {
        let mut tail = Vec::new();
        decoder.finish(&mut |e| tail.push(e));
        for e in tail {
            push(&mut rows, e);
        }
        truncated = rows.len() > MAX_ROWS || limited_hit(&limited);
    }
    rows.truncate(MAX_ROWS);
    Transcript {
        rows,
        truncated,
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

/// The transcript's lines: one `.line` per row, in order (the DOM contract
/// the browser tests read). Every partial object but the latest is hidden.
pub(crate) fn lines(rows: &[Row]) -> Markup {
    let last_partial = rows.iter().rposition(|r| r.kind == "partial");
    html! {
        @for (i, r) in rows.iter().enumerate() {
            (line(r, r.kind == "partial" && Some(i) != last_partial))
        }
    }
}

/// Event types that say nothing a reader needs (the row is kept, hidden).
const QUIET: &[&str] = &["message", "end", "partial"];

fn line(r: &Row, superseded: bool) -> Markup {
    let b = &r.body;
    let cut = b.get("truncated").and_then(Value::as_bool) == Some(true);
    let ev = b.get("event").unwrap_or(&Value::Null);
    let ty = if r.kind == "event" {
        str_of(ev, "type")
    } else {
        ""
    };
    let hidden = superseded || (r.kind == "event" && QUIET.contains(&ty));
    let class = format!(
        "line k-{} t-{}{}",
        r.kind,
        if ty.is_empty() { "none" } else { ty },
        if cut { " cut" } else { "" }
    );
    html! {
        div class=(class) hidden[hidden] data-feed-id=(r.id) data-kind=(r.kind)
            data-type=[(!ty.is_empty()).then_some(ty)] {
            @match (r.kind.as_str(), ty) {
                ("event", "text") => (str_of(ev, "text")),
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
        let t = from_log(format!("{line}\n").as_bytes(), "s", Some("claude"));
        assert_eq!(t.source, Source::Log);
        assert!(!t.truncated);
        let texts: Vec<&Value> = t
            .rows
            .iter()
            .map(|r| &r.body["event"])
            .filter(|e| e["type"] == "text")
            .collect();
        assert_eq!(texts.len(), 1);
        assert_eq!(texts[0]["text"], "hi <b>");
        assert!(t.rows.windows(2).all(|w| w[0].id + 1 == w[1].id));
        let many = format!("{line}\n").repeat(MAX_ROWS + 10);
        let t = from_log(many.as_bytes(), "s", Some("claude"));
        assert!(t.truncated);
        assert_eq!(t.rows.len(), MAX_ROWS);
    }

    #[test]
    fn first_line_is_cut() {
        assert_eq!(first_line("a\nb"), "a…");
        assert_eq!(first_line("abc"), "abc");
        assert_eq!(first_line(&"x".repeat(200)).chars().count(), 121);
    }
}
