//! The Sessions list's sub-agents, totals, pages and transcript hits
//! (issue 41 §2), over a SQLite store, as the page reads them.
#![allow(clippy::unwrap_used, clippy::panic, clippy::format_collect)]

use std::collections::HashMap;

use agentshape_store::query::{self, FilterValues, Hits, SessionFilter, TranscriptHit};
use agentshape_store::{FeedEntry, NativeMark, Session, SqliteStore, Store};
use serde_json::json;

use super::{HITS, ListParams, ListTotal, PAGE, body, encode};

/// One imported session: `lines` are `(time, type, text)` rows of its feed.
struct Imported<'a> {
    id: &'a str,
    started: &'a str,
    parent: Option<&'a str>,
    agent: &'a str,
    project: &'a str,
    summary: &'a str,
    tokens: u64,
    lines: &'a [(&'a str, &'a str, &'a str)],
}

fn save(store: &mut SqliteStore, s: &Imported) {
    let mut r = Session::new(s.id, s.started, "completed");
    r.parent_id = s.parent.map(str::to_owned);
    r.agent = Some(s.agent.to_owned());
    r.project = Some(s.project.to_owned());
    r.summary = Some(s.summary.to_owned());
    r.input_tokens = agentshape_store::count(s.tokens);
    r.cost_usd = Some(0.01);
    r.source_path = Some(format!("/p/{}.jsonl", s.id));
    let feed: Vec<FeedEntry> = s
        .lines
        .iter()
        .enumerate()
        .map(|(i, (at, ty, text))| FeedEntry {
            seq: None,
            session_id: s.id.to_owned(),
            kind: "event".into(),
            body: json!({"kind": "event", "event": {"type": ty, "text": text}, "line": i + 1})
                .to_string(),
            created_at: (*at).to_owned(),
        })
        .collect();
    let mark = NativeMark {
        path: format!("/p/{}.jsonl", s.id),
        session_id: s.id.to_owned(),
        agent: s.agent.to_owned(),
        dev: 0,
        inode: 0,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: "2025-08-01T00:00:00.000Z".into(),
        reset: false,
        expect_offset: None,
    };
    store.save_native(&r, &feed, &mark).unwrap();
}

fn imported<'a>(id: &'a str, started: &'a str, parent: Option<&'a str>) -> Imported<'a> {
    Imported {
        id,
        started,
        parent,
        agent: "claude-code",
        project: "/home/ana/api",
        summary: "plain work",
        tokens: 100,
        lines: &[],
    }
}

fn params(pairs: &[(&str, &str)]) -> ListParams {
    let qs: String = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}&", encode(v)))
        .collect();
    axum::extract::Query::<ListParams>::try_from_uri(&format!("/s?{qs}").parse().unwrap())
        .unwrap()
        .0
}

/// What `page` reads and draws for `pairs`: the top-level ids, the ids
/// below them, and the page's HTML.
fn page(
    store: &SqliteStore,
    pairs: &[(&str, &str)],
    limit: usize,
) -> (Vec<String>, Vec<String>, String) {
    let p = params(pairs);
    let f = SessionFilter {
        top_level: true,
        ..p.filter(limit).unwrap()
    };
    let rows = query::sessions(store, &f).unwrap();
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let subs = query::sub_sessions(store, &f, &ids).unwrap();
    let hits = match f.q.as_deref() {
        Some(q) => query::search_hits(store, q, &f, p.hits_before().unwrap(), HITS).unwrap(),
        None => Hits::default(),
    };
    let total = ListTotal::of(
        &agentshape_core::usage::Group::default(),
        &query::session_totals(store, &f).unwrap(),
    );
    let html = body(
        &f,
        &FilterValues::default(),
        &rows,
        &subs,
        &hits,
        0,
        &HashMap::new(),
        Some(&total),
    )
    .into_string();
    (ids, subs.into_iter().map(|r| r.id).collect(), html)
}

/// The `tbody` of the family whose first row is `id`.
fn family<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!(r#"<tr data-session-id="{id}""#))
        .unwrap_or_else(|| panic!("no row {id}: {html}"));
    let start = html[..at].rfind("<tbody").unwrap();
    let end = at + html[at..].find("</tbody>").unwrap();
    &html[start..end]
}

#[test]
fn sub_agents_nest_under_their_parent_and_are_counted_once() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    save(&mut store, &imported("p", "2025-07-14T05:00:00.000Z", None));
    save(
        &mut store,
        &imported("c1", "2025-07-14T05:01:00.000Z", Some("p")),
    );
    save(
        &mut store,
        &Imported {
            summary: "the needle child",
            ..imported("c2", "2025-07-14T05:02:00.000Z", Some("p"))
        },
    );
    save(
        &mut store,
        &imported("g", "2025-07-14T05:03:00.000Z", Some("c1")),
    );
    // Its parent's file is not imported: the store keeps a placeholder
    // for the parent, and the sub-agent nests under it.
    save(
        &mut store,
        &imported("orphan", "2025-07-14T06:00:00.000Z", Some("gone")),
    );
    save(&mut store, &imported("x", "2025-07-14T04:00:00.000Z", None));

    let (top, below, html) = page(&store, &[], PAGE);
    assert_eq!(top, ["gone", "p", "x"]);
    assert_eq!(below, ["c1", "c2", "orphan", "g"]);
    // The parent's family: it, then each child with its own below it.
    let fam = family(&html, "p");
    let order: Vec<&str> = fam
        .split(r#"<tr data-session-id=""#)
        .skip(1)
        .map(|t| &t[..t.find('"').unwrap()])
        .collect();
    assert_eq!(order, ["p", "c1", "g", "c2"], "{fam}");
    assert!(fam.starts_with(r#"<tbody class="family">"#), "{fam}");
    assert!(
        fam.contains(
            r#"<input class="expand" type="checkbox" aria-label="show the 3 sub-agents">"#
        ),
        "{fam}"
    );
    assert!(
        fam.contains(r#"data-parent-id="c1" class="sub depth-2""#),
        "{fam}"
    );
    assert!(
        fam.contains(r#"data-parent-id="p" class="sub depth-1""#),
        "{fam}"
    );
    // A family without sub-agents has no disclosure.
    assert!(!family(&html, "x").contains("expand"));
    assert!(family(&html, "gone").contains(r#"data-session-id="orphan""#));
    // Every session counted once: seven (the placeholder too), 600 tokens.
    assert!(
        html.contains(r#"data-sessions="7" data-tokens="600""#),
        "{html}"
    );
    assert_eq!(html.matches("<tr data-session-id=").count(), 7);
    // A sub-agent whose parent is filtered out is at the top, naming it.
    let (top, _, html) = page(&store, &[("from", "2025-07-14"), ("q", "plain work")], PAGE);
    assert!(top.contains(&"orphan".to_owned()), "{top:?}");
    let orphan = family(&html, "orphan");
    assert!(!orphan.contains("class=\"sub depth"), "{orphan}");
    assert!(
        orphan.contains(r#"<div class="sub-of muted">sub-agent of <a href="/sessions/gone" title="gone">gone</a></div>"#),
        "{orphan}"
    );

    // A search that finds only a child: it is listed at the top, naming
    // its parent, and nothing else is.
    let (top, below, html) = page(&store, &[("q", "needle child")], PAGE);
    assert_eq!((top, below), (vec!["c2".to_owned()], Vec::<String>::new()));
    assert!(
        html.contains("sub-agent of <a href=\"/sessions/p\""),
        "{html}"
    );
    assert!(html.contains(r#"data-sessions="1""#), "{html}");

    // An agent filter that matches the parent and not a child keeps the
    // child out (and its own child, whose parent is filtered out, at the top).
    let mut other = SqliteStore::open_in_memory().unwrap();
    save(&mut other, &imported("p", "2025-07-14T05:00:00.000Z", None));
    save(
        &mut other,
        &Imported {
            agent: "codex",
            ..imported("c", "2025-07-14T05:01:00.000Z", Some("p"))
        },
    );
    save(
        &mut other,
        &imported("gc", "2025-07-14T05:02:00.000Z", Some("c")),
    );
    let (top, below, _) = page(&other, &[("agent", "claude-code")], PAGE);
    assert_eq!(
        (top, below),
        (vec!["gc".to_owned(), "p".to_owned()], Vec::<String>::new())
    );
    let (top, below, _) = page(&other, &[], PAGE);
    assert_eq!(
        (top, below),
        (vec!["p".to_owned()], vec!["c".to_owned(), "gc".to_owned()])
    );
}

#[test]
fn a_page_is_top_level_rows_and_the_cursor_names_the_last() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    for (p, day) in [("a", "01"), ("b", "02"), ("c", "03")] {
        let started = format!("2025-07-{day}T05:00:00.000Z");
        save(&mut store, &imported(p, &started, None));
        for k in 0..2 {
            let id = format!("{p}-sub{k}");
            let at = format!("2025-07-{day}T05:0{}:00.000Z", k + 1);
            save(&mut store, &imported(&id, &at, Some(p)));
        }
    }
    let (top, below, html) = page(&store, &[], 2);
    assert_eq!(top, ["c", "b"]);
    assert_eq!(below, ["b-sub0", "b-sub1", "c-sub0", "c-sub1"]);
    assert!(
        html.contains(r#"id="older" href="/sessions?before=b""#),
        "{html}"
    );
    assert!(html.contains(r#"data-sessions="9""#), "{html}");
    let (top, below, html) = page(&store, &[("before", "b")], 2);
    assert_eq!(top, ["a"]);
    assert_eq!(below, ["a-sub0", "a-sub1"]);
    assert!(!html.contains(r#"id="older""#), "{html}");
}

/// Lines written out of import order: `old` is imported after `new`, so
/// feed ids and times disagree.
fn searchable() -> SqliteStore {
    let mut store = SqliteStore::open_in_memory().unwrap();
    save(
        &mut store,
        &Imported {
            lines: &[
                (
                    "2025-07-20T10:00:00.000Z",
                    "user_text",
                    "find the needle please",
                ),
                (
                    "2025-07-20T10:05:00.000Z",
                    "text",
                    "the needle is in main.rs",
                ),
            ],
            ..imported("new", "2025-07-20T10:00:00.000Z", None)
        },
    );
    save(
        &mut store,
        &Imported {
            agent: "codex",
            project: "/srv/other",
            lines: &[("2025-07-01T09:00:00.000Z", "text", "an old needle")],
            ..imported("old", "2025-07-01T09:00:00.000Z", None)
        },
    );
    save(
        &mut store,
        &Imported {
            lines: &[("2025-07-20T10:02:00.000Z", "text", "a sub-agent's needle")],
            ..imported("kid", "2025-07-20T10:01:00.000Z", Some("new"))
        },
    );
    store
}

fn hit_ids(hits: &[TranscriptHit]) -> Vec<(String, String)> {
    hits.iter()
        .map(|h| (h.session_id.clone(), h.created_at[11..16].to_owned()))
        .collect()
}

#[test]
fn hits_are_newest_line_first_paged_and_filtered() {
    let store = searchable();
    let all = query::search_hits(&store, "needle", &SessionFilter::default(), None, HITS)
        .unwrap()
        .hits;
    let want = [
        ("new", "10:05"),
        ("kid", "10:02"),
        ("new", "10:00"),
        ("old", "09:00"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| ((*a).into(), (*b).into()))
        .collect();
    assert_eq!(hit_ids(&all), want);
    // Each names its project and parent.
    assert_eq!(all[1].parent_id.as_deref(), Some("new"));
    assert_eq!(all[3].project.as_deref(), Some("/srv/other"));
    // Two at a time: the cursor is the last hit's feed id.
    let first = query::search_hits(&store, "needle", &SessionFilter::default(), None, 2)
        .unwrap()
        .hits;
    let next = query::search_hits(
        &store,
        "needle",
        &SessionFilter::default(),
        Some(first[1].feed_id),
        2,
    )
    .unwrap()
    .hits;
    let rest = query::search_hits(
        &store,
        "needle",
        &SessionFilter::default(),
        Some(next[1].feed_id),
        2,
    )
    .unwrap()
    .hits;
    assert_eq!([hit_ids(&first), hit_ids(&next)].concat(), want);
    assert!(rest.is_empty());
    assert!(
        query::search_hits(
            &store,
            "needle",
            &SessionFilter::default(),
            Some(987_654),
            2
        )
        .unwrap()
        .hits
        .is_empty()
    );
    // The filters hold for hits too: agent, project, dates.
    let f = |pairs: &[(&str, &str)]| params(pairs).filter(PAGE).unwrap();
    let hits = |f: &SessionFilter| {
        hit_ids(
            &query::search_hits(&store, "needle", f, None, HITS)
                .unwrap()
                .hits,
        )
    };
    assert_eq!(hits(&f(&[("agent", "codex")])), [want[3].clone()]);
    assert_eq!(hits(&f(&[("project", "/home/ana/api")])), want[..3]);
    assert_eq!(hits(&f(&[("from", "2025-07-02")])), want[..3]);
    assert_eq!(hits(&f(&[("to", "2025-07-19")])), [want[3].clone()]);
    // The list's `q` is the text: a session's own text need not hold it.
    assert_eq!(hits(&f(&[("q", "zzz"), ("agent", "codex")])).len(), 1);
}

#[test]
fn the_page_shows_hits_with_their_place_and_links_the_next_ones() {
    let store = searchable();
    let (_, _, html) = page(
        &store,
        &[("q", "needle"), ("project", "/home/ana/api")],
        PAGE,
    );
    let hits = &html[html.find(r#"id="transcript-hits""#).unwrap()..];
    assert!(hits.contains(r#"data-count="3""#), "{hits}");
    assert!(!hits.contains("old needle"), "{hits}");
    assert!(
        hits.contains(r#"<span class="hit-project" title="/home/ana/api">ana/api</span>"#),
        "{hits}"
    );
    assert!(
        hits.contains(r#"parent <a href="/sessions/new" title="new"><code>new</code></a>"#),
        "{hits}"
    );
    // Three hits: no next page.
    assert!(!hits.contains("more-hits"), "{hits}");
    // A full page of hits links the next, keeping the filters.
    let mut many = SqliteStore::open_in_memory().unwrap();
    let lines: Vec<(String, &str, &str)> = (0..HITS + 5)
        .map(|i| {
            (
                format!("2025-07-20T10:{:02}:{:02}.000Z", i / 60, i % 60),
                "text",
                "a needle again",
            )
        })
        .collect();
    let lines: Vec<(&str, &str, &str)> =
        lines.iter().map(|(a, b, c)| (a.as_str(), *b, *c)).collect();
    save(
        &mut many,
        &Imported {
            lines: &lines,
            ..imported("busy", "2025-07-20T10:00:00.000Z", None)
        },
    );
    let (_, _, html) = page(&many, &[("q", "needle"), ("agent", "claude-code")], PAGE);
    let found = query::search_hits(&many, "needle", &SessionFilter::default(), None, HITS)
        .unwrap()
        .hits;
    let last = found.last().unwrap().feed_id;
    let href = format!(
        r#"id="more-hits" href="/sessions?agent=claude-code&amp;q=needle&amp;hits_before={last}#transcript-hits""#
    );
    assert!(html.contains(&href), "{html}");
    let (_, _, html) = page(
        &many,
        &[("q", "needle"), ("hits_before", &last.to_string())],
        PAGE,
    );
    let hits = &html[html.find(r#"id="transcript-hits""#).unwrap()..];
    assert!(hits[..200].contains(r#"data-count="5""#), "{hits}");
    assert!(!html.contains("more-hits"));
    for bad in ["x", "-3", "0"] {
        assert!(
            params(&[("hits_before", bad)]).hits_before().is_err(),
            "{bad}"
        );
    }
}

#[test]
fn text_in_more_lines_than_the_window_says_so() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let n = usize::try_from(query::HIT_WINDOW).unwrap() + 3;
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "2025-07-20T{:02}:{:02}:{:02}.000Z",
                i / 3600,
                i / 60 % 60,
                i % 60
            )
        })
        .collect();
    let lines: Vec<(&str, &str, &str)> = lines
        .iter()
        .map(|a| (a.as_str(), "text", "a common needle"))
        .collect();
    save(
        &mut store,
        &Imported {
            lines: &lines,
            ..imported("many", "2025-07-20T00:00:00.000Z", None)
        },
    );
    let found =
        query::search_hits(&store, "needle", &SessionFilter::default(), None, HITS).unwrap();
    assert!(found.windowed);
    assert_eq!(found.hits.len(), HITS);
    let (_, _, html) = page(&store, &[("q", "needle")], PAGE);
    assert!(html.contains("hits-windowed"), "{html}");
    // Fewer lines than the window: no such note.
    let (_, _, html) = page(&searchable(), &[("q", "needle")], PAGE);
    assert!(!html.contains("hits-windowed"), "{html}");
}
