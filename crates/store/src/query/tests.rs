#![allow(clippy::unwrap_used)]
// Table tests read better with their helpers beside them.
#![allow(clippy::items_after_statements, clippy::unnecessary_wraps)]
use super::*;
use crate::{NewEvent, Session, Store};

mod sessions {
    use crate::Session;
    include!("../../tests/support/sessions.rs");
}

#[test]
fn sessions_page_newest_first_and_detail_has_rows() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    for i in 0..5 {
        let mut rec = Session::new(
            &format!("s{i}"),
            &format!("2025-07-14T03:12:0{i}.000Z"),
            "completed",
        );
        rec.events.push(NewEvent {
            level: "info".into(),
            service: None,
            message: format!("m{i}"),
        });
        store.write_session(&rec).unwrap();
    }
    let page = |before: Option<&str>| {
        sessions(
            &store,
            &SessionFilter {
                status: None,
                limit: 2,
                before: before.map(str::to_owned),
                ..SessionFilter::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect::<Vec<_>>()
    };
    assert_eq!(page(None), ["s4", "s3"]);
    assert_eq!(page(Some("s3")), ["s2", "s1"]);
    assert_eq!(page(Some("s1")), ["s0"]);
    assert!(page(Some("nope")).is_empty());
    let d = session(&store, "s2").unwrap().unwrap();
    assert_eq!(d.events.len(), 1);
    assert!(session(&store, "nope").unwrap().is_none());
    assert_eq!(events(&store, Some("info"), None, 3).unwrap().len(), 3);
    assert!(
        events(&store, Some("critical"), None, 3)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_running_session_with_a_stale_heartbeat_is_lost() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    // Its heartbeat is its start, long ago.
    let old = Session::new("old", "2025-07-14T03:12:00.000Z", "running");
    store.start_session(&old).unwrap();
    let fresh = Session::new("fresh", &time::now(), "running");
    store.start_session(&fresh).unwrap();
    let ids = |status: &str| {
        sessions(
            &store,
            &SessionFilter {
                status: Some(status.to_owned()),
                limit: 10,
                ..SessionFilter::default()
            },
        )
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.shown_status))
        .collect::<Vec<_>>()
    };
    assert_eq!(ids("lost"), [("old".to_owned(), "lost".to_owned())]);
    assert_eq!(ids("running"), [("fresh".to_owned(), "running".to_owned())]);
    assert!(session(&store, "old").unwrap().unwrap().session.lost);
    assert!(feed_max_id(&store).unwrap() >= 2);
}

/// A store of the shared known sessions for the filter tables, and two
/// running ones.
fn filter_store() -> SqliteStore {
    let mut store = SqliteStore::open_in_memory().unwrap();
    for spec in sessions::SPECS {
        store.write_session(&sessions::record(spec)).unwrap();
    }
    // A running session long stale (lost), and one fresh (running).
    let mut lost = Session::new("b-lost", "2025-07-14T03:08:00.000Z", "running");
    lost.profile = Some("claude-ops".to_owned());
    store.start_session(&lost).unwrap();
    let fresh = Session::new("b-run", &time::now(), "running");
    store.start_session(&fresh).unwrap();
    store
}

fn ids(store: &SqliteStore, filter: &SessionFilter) -> Vec<String> {
    sessions(store, filter)
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect()
}

fn f() -> SessionFilter {
    SessionFilter {
        limit: 100,
        ..SessionFilter::default()
    }
}

fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

#[test]
fn each_filter_alone_and_combined() {
    let store = filter_store();
    let cases: Vec<(&str, SessionFilter, Vec<&str>)> = vec![
        (
            "none",
            f(),
            vec!["b-run", "b-lost", "a7", "a6", "a5", "a4", "a3", "a2", "a1"],
        ),
        (
            "status",
            SessionFilter {
                status: some("completed"),
                ..f()
            },
            vec!["a7", "a5", "a3", "a1"],
        ),
        (
            "lost",
            SessionFilter {
                status: some("lost"),
                ..f()
            },
            vec!["b-lost"],
        ),
        (
            "running",
            SessionFilter {
                status: some("running"),
                ..f()
            },
            vec!["b-run"],
        ),
        (
            "unknown status",
            SessionFilter {
                status: some("nope"),
                ..f()
            },
            vec![],
        ),
        (
            "tier",
            SessionFilter {
                tier: Some(2),
                ..f()
            },
            vec!["a4", "a3"],
        ),
        (
            "profile",
            SessionFilter {
                profile: some("claude-loop"),
                ..f()
            },
            vec!["a3"],
        ),
        (
            "category",
            SessionFilter {
                error_category: some("rate_limit"),
                ..f()
            },
            vec!["a6", "a2"],
        ),
        (
            "method",
            SessionFilter {
                method: some("markers+handoff"),
                ..f()
            },
            vec!["a4"],
        ),
        (
            "q summary any case",
            SessionFilter {
                q: some("jellyfin"),
                ..f()
            },
            vec!["a7", "a3"],
        ),
        (
            "q id",
            SessionFilter {
                q: some("A5"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q error",
            SessionFilter {
                q: some("too many"),
                ..f()
            },
            vec!["a6", "a2"],
        ),
        (
            "q agent",
            SessionFilter {
                q: some("codex"),
                ..f()
            },
            vec!["a3"],
        ),
        (
            "q model",
            SessionFilter {
                q: some("model-replay"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q percent is literal",
            SessionFilter {
                q: some("50%"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q underscore is literal",
            SessionFilter {
                q: some("e_o"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q one char",
            SessionFilter {
                q: some("%"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q none",
            SessionFilter {
                q: some("zzz"),
                ..f()
            },
            vec![],
        ),
        (
            "q with FTS5 syntax is text",
            SessionFilter {
                q: some("\"x\" OR NEAR(a*"),
                ..f()
            },
            vec![],
        ),
        (
            "status+tier",
            SessionFilter {
                status: some("completed"),
                tier: Some(1),
                ..f()
            },
            vec!["a7", "a1"],
        ),
        (
            "status+profile+method",
            SessionFilter {
                status: some("completed"),
                profile: some("claude-ops"),
                method: some("structured"),
                ..f()
            },
            vec!["a7", "a1"],
        ),
        (
            "category+tier",
            SessionFilter {
                error_category: some("rate_limit"),
                tier: Some(3),
                ..f()
            },
            vec!["a6"],
        ),
        (
            "lost+profile",
            SessionFilter {
                status: some("lost"),
                profile: some("claude-ops"),
                ..f()
            },
            vec!["b-lost"],
        ),
        (
            "q+status",
            SessionFilter {
                q: some("claude"),
                status: some("error"),
                ..f()
            },
            vec!["a6", "a2"],
        ),
        (
            "all six",
            SessionFilter {
                status: some("completed"),
                tier: Some(1),
                profile: some("claude-ops"),
                error_category: None,
                method: some("structured"),
                q: some("healthy"),
                ..f()
            },
            vec!["a1"],
        ),
    ];
    // The same answers through the trigram index and through the scan
    // (a store without the index, as an old read-only file is).
    let scan = filter_store();
    scan.connection()
        .execute_batch("DROP TABLE sessions_fts")
        .unwrap();
    for (name, filter, want) in cases {
        assert_eq!(ids(&store, &filter), want, "{name}");
        assert_eq!(ids(&scan, &filter), want, "{name}, scanned");
    }
}

/// The triggers keep the text index and the overview's counters equal
/// to what the tables hold, through start, finish and delete.
#[test]
fn the_text_index_and_the_counters_follow_every_write() {
    let mut store = filter_store();
    let mut rec = Session::new("zz", &time::now(), "running");
    store.start_session(&rec).unwrap();
    let q = |q: &str| ids(&store, &SessionFilter { q: some(q), ..f() });
    assert!(q("zebra").is_empty());
    rec.status = "completed".into();
    rec.summary = Some("A Zebra crossing".into());
    rec.cost_usd = Some(0.25);
    rec.input_tokens = 10;
    rec.events.push(NewEvent {
        level: "warning".into(),
        service: None,
        message: "x".into(),
    });
    store.write_session(&rec).unwrap();
    let q = |q: &str| ids(&store, &SessionFilter { q: some(q), ..f() });
    assert_eq!(q("zebra"), ["zz"]);
    store
        .connection()
        .execute_batch(
            "DELETE FROM events WHERE session_id = 'a1'; DELETE FROM sessions WHERE id = 'a1'",
        )
        .unwrap();
    assert!(q("all healthy").is_empty());
    let c = store.connection();
    let check = |counted: &str, truth: &str| {
        let read = |sql: &str| -> Vec<(String, String)> {
            c.prepare(sql)
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        assert_eq!(read(counted), read(truth), "{counted}");
    };
    check(
        "SELECT key, CAST(n AS TEXT) FROM list_counts WHERE what = 'status' AND n > 0 ORDER BY key",
        "SELECT status, CAST(COUNT(*) AS TEXT) FROM sessions GROUP BY status ORDER BY status",
    );
    check(
        "SELECT key, CAST(n AS TEXT) FROM list_counts WHERE what = 'level' AND n > 0 ORDER BY key",
        "SELECT level, CAST(COUNT(*) AS TEXT) FROM events GROUP BY level ORDER BY level",
    );
    check(
        "SELECT day, sessions || ' ' || cost_usd || ' ' || input_tokens || ' ' || output_tokens
         FROM session_days WHERE sessions > 0 ORDER BY day",
        "SELECT substr(started_at, 1, 10) AS d, COUNT(*) || ' ' || COALESCE(SUM(cost_usd), 0.0)
                || ' ' || SUM(input_tokens) || ' ' || SUM(output_tokens)
         FROM sessions GROUP BY d ORDER BY d",
    );
}

#[test]
fn pages_with_filters_walk_the_filtered_list_once() {
    let store = filter_store();
    let filters = [
        f(),
        SessionFilter {
            status: some("completed"),
            ..f()
        },
        SessionFilter {
            profile: some("claude-ops"),
            ..f()
        },
        SessionFilter {
            q: some("claude"),
            ..f()
        },
        SessionFilter {
            tier: Some(1),
            status: some("completed"),
            ..f()
        },
    ];
    for filter in filters {
        let all = ids(&store, &filter);
        for size in 1..=3 {
            let mut walked = Vec::new();
            let mut before = None;
            loop {
                let page = ids(
                    &store,
                    &SessionFilter {
                        limit: size,
                        before: before.clone(),
                        ..filter.clone()
                    },
                );
                walked.extend(page.iter().cloned());
                if page.len() < size {
                    break;
                }
                before = page.last().cloned();
            }
            assert_eq!(walked, all, "{filter:?} by {size}");
        }
    }
    assert!(
        ids(
            &store,
            &SessionFilter {
                before: some("nope"),
                ..f()
            }
        )
        .is_empty()
    );
}

#[test]
fn filter_values_are_the_stored_ones() {
    let store = filter_store();
    let v = filter_values(&store).unwrap();
    assert_eq!(
        v.statuses,
        ["completed", "error", "failed", "lost", "running"]
    );
    assert_eq!(v.tiers, [1, 2, 3]);
    assert_eq!(v.profiles, ["claude-loop", "claude-ops", "code-review"]);
    assert_eq!(v.error_categories, ["max_turns", "rate_limit"]);
    assert_eq!(v.methods, ["fenced", "markers+handoff", "structured"]);
}

#[test]
fn events_after_an_id_are_only_the_newer_ones() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let mut rec = Session::new("s", "2025-07-14T03:12:00.000Z", "completed");
    for (i, level) in ["info", "warning", "critical", "info"].iter().enumerate() {
        rec.events.push(NewEvent {
            level: (*level).into(),
            service: None,
            message: format!("m{i}"),
        });
    }
    store.write_session(&rec).unwrap();
    let msgs = |level: Option<&str>, after: Option<i64>| {
        events(&store, level, after, 10)
            .unwrap()
            .into_iter()
            .map(|e| e.message)
            .collect::<Vec<_>>()
    };
    let all = events(&store, None, None, 10).unwrap();
    assert_eq!(msgs(None, None), ["m3", "m2", "m1", "m0"]);
    let second = all[2].id;
    assert_eq!(msgs(None, Some(second)), ["m3", "m2"]);
    assert_eq!(msgs(Some("info"), Some(second)), ["m3"]);
    assert_eq!(msgs(Some("info"), None), ["m3", "m0"]);
    assert!(msgs(None, Some(all[0].id)).is_empty());
}

/// Issue 40 §4: two sessions of 5e18 input tokens on one day made the
/// day's counter a REAL (SQLite's `+` past `i64::MAX`) and the overview
/// an error until the store was edited by hand. Every sum saturates.
#[test]
fn token_sums_past_i64_max_saturate_instead_of_failing() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    let now = 1_753_963_200_000;
    for id in ["h1", "h2"] {
        let mut r = Session::new(id, "2025-07-31T11:00:00.000Z", "completed");
        r.input_tokens = 5_000_000_000_000_000_000;
        r.output_tokens = 5_000_000_000_000_000_000;
        store.write_session(&r).unwrap();
    }
    let check = |store: &SqliteStore| {
        let o = overview(store, now).unwrap();
        let day = o.days.last().unwrap();
        assert_eq!((day.input_tokens, day.output_tokens), (i64::MAX, i64::MAX));
        for d in o.days_by_agent.iter().chain(&o.days_by_project) {
            assert_eq!(d.input_tokens, i64::MAX);
        }
        let t = session_totals(store, &SessionFilter::default()).unwrap();
        assert_eq!((t.sessions, t.other_tokens), (2, i64::MAX));
    };
    check(&store);
    // The same through the `GROUP BY` of a store without the counters.
    store
        .connection()
        .execute_batch(
            "DROP TABLE list_counts; DROP TABLE session_days; DROP TABLE session_days_by",
        )
        .unwrap();
    check(&store);
}

#[test]
fn overview_on_a_small_known_store() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    // "now" is 2025-07-31 12:00 UTC; the window starts 2025-07-02.
    let now = 1_753_963_200_000;
    assert_eq!(time::format_ms(now), "2025-07-31T12:00:00.000Z");
    assert_eq!(overview_first_day(now), "2025-07-02");
    let specs = [
        (
            "old",
            "2025-07-01T23:59:59.000Z",
            "completed",
            Some(9.0),
            900,
            900,
        ),
        (
            "d1",
            "2025-07-02T00:00:00.000Z",
            "completed",
            Some(0.5),
            100,
            10,
        ),
        ("d2", "2025-07-02T10:00:00.000Z", "error", None, 50, 5),
        (
            "d3",
            "2025-07-31T11:00:00.000Z",
            "completed",
            Some(0.25),
            7,
            3,
        ),
    ];
    for (id, at, status, cost, input, output) in specs {
        let mut r = Session::new(id, at, status);
        r.cost_usd = cost;
        r.input_tokens = input;
        r.output_tokens = output;
        if id == "d1" {
            r.events = ["critical", "info", "info"]
                .iter()
                .map(|l| NewEvent {
                    level: (*l).into(),
                    service: None,
                    message: "x".into(),
                })
                .collect();
        }
        store.write_session(&r).unwrap();
    }
    let mut child = Session::new("d4", "2025-07-31T11:30:00.000Z", "completed");
    child.parent_id = Some("d3".into());
    child.tier = 2;
    child.escalated_for = vec!["jellyfin".into(), "sonarr".into()];
    store.write_session(&child).unwrap();
    // Running: one with a fresh heartbeat (relative to now), one stale.
    let mut fresh = Session::new("r1", "2025-07-31T11:59:59.000Z", "running");
    fresh.input_tokens = 1;
    store.start_session(&fresh).unwrap();
    store
        .start_session(&Session::new("r2", "2025-07-31T10:00:00.000Z", "running"))
        .unwrap();
    let o = overview(&store, now).unwrap();
    fn pairs(v: &[(String, i64)]) -> Vec<(&str, i64)> {
        v.iter().map(|(k, n)| (k.as_str(), *n)).collect()
    }
    assert_eq!(
        pairs(&o.sessions_by_status),
        [("completed", 4), ("error", 1), ("lost", 1), ("running", 1)]
    );
    assert_eq!(pairs(&o.events_by_level), [("critical", 1), ("info", 2)]);
    assert_eq!(o.running, 1);
    let days: Vec<_> = o
        .days
        .iter()
        .map(|d| {
            (
                d.day.as_str(),
                d.sessions,
                d.cost_usd,
                d.input_tokens,
                d.output_tokens,
            )
        })
        .collect();
    assert_eq!(
        days,
        [
            ("2025-07-02", 2, 0.5, 150, 15),
            ("2025-07-31", 4, 0.25, 8, 3)
        ]
    );
    let esc: Vec<_> = o
        .escalations
        .iter()
        .map(|e| {
            (
                e.parent_id.as_str(),
                e.child_id.as_str(),
                e.service.as_str(),
                e.tier,
                e.child_status.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        esc,
        [
            ("d3", "d4", "sonarr", 2, Some("completed")),
            ("d3", "d4", "jellyfin", 2, Some("completed")),
        ]
    );
    let empty = overview(&SqliteStore::open_in_memory().unwrap(), now).unwrap();
    assert_eq!(empty, Dashboard::default());
}

#[test]
fn the_lists_migration_applies_on_an_existing_v2_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(include_str!("../../migrations/0001_init.sql"))
            .unwrap();
        c.execute_batch(include_str!("../../migrations/0002_live.sql"))
            .unwrap();
        c.pragma_update(None, "user_version", 2).unwrap();
        c.execute(
            "INSERT INTO sessions (id, tier, status, started_at, extraction_method)
             VALUES ('old', 2, 'completed', '2025-07-14T03:12:00.000Z', 'fenced')",
            [],
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let indexes: Vec<String> = store
        .connection()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%_order'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for want in [
        "sessions_order",
        "sessions_status_order",
        "sessions_tier_order",
        "sessions_method_order",
    ] {
        assert!(indexes.iter().any(|i| i == want), "{want} in {indexes:?}");
    }
    let filter = SessionFilter {
        tier: Some(2),
        method: some("fenced"),
        ..f()
    };
    assert_eq!(ids(&store, &filter), ["old"]);
}

mod native {
    use crate::{FeedEntry, NativeMark, Session, Store, ToolCount};
    include!("../../tests/support/native.rs");
}

fn native_store() -> SqliteStore {
    let mut store = SqliteStore::open_in_memory().unwrap();
    native::fill_native(&mut store);
    store
}

#[test]
fn agent_and_project_filter_and_native_columns_are_read() {
    let store = native_store();
    let agent = |a: &str| SessionFilter {
        agent: some(a),
        ..f()
    };
    assert_eq!(ids(&store, &agent("codex")), ["n-codex"]);
    assert_eq!(
        ids(&store, &agent("claude-code")),
        ["n-sub2", "n-sub", "n-main"]
    );
    let project = |p: &str| SessionFilter {
        project: some(p),
        ..f()
    };
    assert_eq!(ids(&store, &project("/srv/api")), ["n-codex"]);
    assert_eq!(
        ids(&store, &project(native::HOSTILE_PROJECT)),
        ["n-sub2", "n-sub", "n-main"]
    );
    assert!(ids(&store, &project("/nowhere")).is_empty());
    let both = SessionFilter {
        agent: some("codex"),
        project: some(native::HOSTILE_PROJECT),
        ..f()
    };
    assert!(ids(&store, &both).is_empty());
    let v = filter_values(&store).unwrap();
    assert_eq!(v.agents, ["claude-code", "codex"]);
    assert_eq!(v.projects, [native::HOSTILE_PROJECT, "/srv/api"]);
    let main = session(&store, "n-main").unwrap().unwrap().session;
    assert_eq!(main.project.as_deref(), Some(native::HOSTILE_PROJECT));
    assert_eq!(main.git_branch.as_deref(), Some("main"));
    assert_eq!(main.agent_version.as_deref(), Some("2.1.23"));
    assert_eq!(
        (main.cache_read_tokens, main.cache_write_tokens),
        (5000, 300)
    );
    assert!(main.cost_estimated);
    assert_eq!(main.source_path, None);
    let codex = session(&store, "n-codex").unwrap().unwrap().session;
    assert!(!codex.cost_estimated);
}

#[test]
fn the_tree_holds_sub_agents_and_theirs() {
    let store = native_store();
    let d = session(&store, "n-main").unwrap().unwrap();
    let tree: Vec<(usize, &str)> = d
        .tree
        .iter()
        .map(|n| (n.depth, n.session.id.as_str()))
        .collect();
    assert_eq!(tree, [(1, "n-sub"), (2, "n-sub2")]);
    assert_eq!(d.children.len(), 1);
    assert!(session(&store, "n-sub2").unwrap().unwrap().tree.is_empty());
}

fn hits(store: &SqliteStore, q: &str) -> Vec<(String, String, String)> {
    search_transcripts(store, q, 50)
        .unwrap()
        .into_iter()
        .map(|h| {
            (
                h.session_id,
                h.kind,
                format!("{}[{}]{}", h.before, h.hit, h.after),
            )
        })
        .collect()
}

#[test]
fn transcript_search_finds_text_prompts_and_tool_names_newest_first() {
    let mut store = native_store();
    let found = hits(&store, "JELLYFIN");
    assert_eq!(
        found,
        [
            (
                "n-sub".to_owned(),
                "text".to_owned(),
                "The [jellyfin] service restarts".to_owned()
            ),
            (
                "n-main".to_owned(),
                "text".to_owned(),
                "Looking at the [jellyfin] logs now.".to_owned()
            ),
            (
                "n-main".to_owned(),
                "user_text".to_owned(),
                "Fix the [Jellyfin] 502, please".to_owned()
            ),
        ]
    );
    // Tool names; not their input, not thinking, not summaries.
    assert_eq!(
        hits(&store, "bash")
            .iter()
            .map(|h| h.1.as_str())
            .collect::<Vec<_>>(),
        ["tool_use"]
    );
    assert!(hits(&store, "journalctl").is_empty());
    assert!(hits(&store, "zebra").is_empty());
    assert!(hits(&store, "lacks permission").is_empty());
    // Too short for trigrams; FTS5 syntax is text.
    assert!(hits(&store, "ja").is_empty());
    assert!(hits(&store, "\"jelly\" OR x*").is_empty());
    // The hit names its feed row and line.
    let h = &search_transcripts(&store, "Deploy the", 5).unwrap()[0];
    assert_eq!((h.session_id.as_str(), h.line), ("n-codex", Some(2)));
    let row = feed_for_session(&store, "n-codex", 0, 10).unwrap();
    assert_eq!(h.feed_id, row[0].id);
    // A long text: the snippet is cut around the hit.
    let long = format!("{} needle {}", "a".repeat(500), "b".repeat(500));
    store
        .append_feed(&[crate::FeedEntry {
            seq: None,
            session_id: "n-codex".into(),
            kind: "event".into(),
            body: native::body(9, &serde_json::json!({"type": "text", "text": long})),
            created_at: "2025-07-14T04:00:03.000Z".into(),
        }])
        .unwrap();
    let h = &search_transcripts(&store, "needle", 5).unwrap()[0];
    assert_eq!(h.hit, "needle");
    assert_eq!(h.before.chars().count(), SNIPPET_CHARS + 1);
    assert!(h.before.starts_with('…') && h.after.ends_with('…'));
    // Deleted rows leave the index (a re-import drops a session's feed).
    store
        .connection()
        .execute("DELETE FROM feed WHERE session_id = 'n-sub'", [])
        .unwrap();
    assert_eq!(hits(&store, "jellyfin").len(), 2);
}

#[test]
fn overview_has_days_by_agent_and_project_tool_errors_and_the_costliest() {
    let mut store = native_store();
    let now = time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
    let o = overview(&store, now).unwrap();
    let by = |v: &[KeyDay]| -> Vec<(String, i64, f64, i64)> {
        v.iter()
            .map(|d| {
                (
                    d.key.clone(),
                    d.sessions,
                    d.cost_usd,
                    d.input_tokens + d.output_tokens,
                )
            })
            .collect()
    };
    assert_eq!(
        by(&o.days_by_agent),
        [
            ("claude-code".to_owned(), 3, 1.75, 1200),
            ("codex".to_owned(), 1, 3.0, 4400)
        ]
    );
    assert_eq!(
        by(&o.days_by_project),
        [
            (native::HOSTILE_PROJECT.to_owned(), 3, 1.75, 1200),
            ("/srv/api".to_owned(), 1, 3.0, 4400)
        ]
    );
    assert!(o.days_by_agent.iter().all(|d| d.day == "2025-07-14"));
    let tools: Vec<(&str, i64, i64)> = o
        .tool_errors
        .iter()
        .map(|t| (t.tool.as_str(), t.calls, t.errors))
        .collect();
    assert_eq!(tools, [("Bash", 4, 2), ("shell", 4, 2)]);
    let costly: Vec<(&str, bool)> = o
        .costliest
        .iter()
        .map(|s| (s.id.as_str(), s.cost_estimated))
        .collect();
    assert_eq!(
        costly,
        [("n-codex", false), ("n-main", true), ("n-sub", true)]
    );
    // The counters follow updates and deletes: the same as counting.
    let mut again = Session::new("n-codex", "2025-07-14T04:00:00.000Z", "completed");
    again.agent = Some("codex".into());
    again.project = Some("/srv/other".into());
    again.cost_usd = Some(2.0);
    again.tools = vec![crate::ToolCount {
        tool: "shell".into(),
        calls: 5,
        errors: 0,
    }];
    let mark = crate::NativeMark {
        path: "/p/rollout-codex.jsonl".into(),
        session_id: "n-codex".into(),
        agent: "codex".into(),
        dev: 1,
        inode: 1,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: time::now(),
        reset: false,
        // It continues the first save's mark (Note [Two importers]).
        expect_offset: Some(0),
    };
    store.save_native(&again, &[], &mark).unwrap();
    store
        .connection()
        .execute_batch(
            "DELETE FROM session_tools WHERE session_id = 'n-sub2';
             DELETE FROM sessions WHERE id = 'n-sub2'",
        )
        .unwrap();
    let counted = overview(&store, now).unwrap();
    store
        .connection()
        .execute_batch("DROP TABLE session_days_by; DROP TABLE tool_totals")
        .unwrap();
    let truth = overview(&store, now).unwrap();
    assert_eq!(counted, truth);
    assert_eq!(
        by(&truth.days_by_project),
        [
            (native::HOSTILE_PROJECT.to_owned(), 2, 1.75, 1200),
            ("/srv/other".to_owned(), 1, 2.0, 0)
        ]
    );
    assert_eq!(
        truth.tool_errors,
        [ToolTotal {
            tool: "Bash".into(),
            calls: 4,
            errors: 2
        }]
    );
}

/// The plans of the new queries read an index, never a whole table
/// (Note \[List indexes\]).
#[test]
fn the_native_queries_are_planned_over_indexes() {
    let store = native_store();
    let plan = |sql: &str| -> String {
        let rows: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map([], |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        rows.join("; ")
    };
    for (sql, want) in [
        (
            "SELECT s.id FROM sessions s WHERE s.agent = 'x' ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
            "sessions_agent_order",
        ),
        (
            "SELECT s.id FROM sessions s WHERE s.project = 'x' AND (s.started_at, s.id) < ('2025', 'x') ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
            "sessions_project_order",
        ),
        (
            "SELECT s.id FROM sessions s WHERE s.cost_usd IS NOT NULL ORDER BY s.cost_usd DESC, s.id DESC LIMIT 10",
            "sessions_cost",
        ),
        (
            "SELECT f.id FROM feed f WHERE f.id IN (SELECT rowid FROM feed_fts WHERE feed_fts MATCH 'abc' ORDER BY rowid DESC LIMIT 5) ORDER BY f.id DESC",
            "VIRTUAL TABLE INDEX",
        ),
        (
            "SELECT day FROM session_days_by WHERE day >= '2025-07-01' AND what = 'agent' AND sessions > 0",
            "PRIMARY KEY",
        ),
    ] {
        let p = plan(sql);
        assert!(p.contains(want), "{want}: {p}");
        assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
        assert!(
            !p.contains("SCAN s") && !p.contains("SCAN sessions"),
            "{sql}: {p}"
        );
    }
}

/// The hook queries (a page's calls, a sub-agent page's, the chain
/// count of every hook call) read `hook_calls` through its indexes, in
/// id order: no full scan, no sort.
#[test]
fn the_hook_queries_are_planned_over_indexes() {
    let mut store = SqliteStore::open_in_memory().unwrap();
    for i in 0..50 {
        let mut c = crate::HookCall::new(&format!("s{}", i % 5), "Stop", "blocked", "t");
        if i % 3 == 0 {
            c.agent_id = Some(format!("a{i}"));
        }
        store.save_hook(&c, &[]).unwrap();
    }
    store.connection().execute_batch("ANALYZE").unwrap();
    let plan = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> String {
        let rows: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(args, |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        rows.join("; ")
    };
    let cases: [(String, Vec<&dyn rusqlite::ToSql>, &[&str]); 3] = [
        (
            hook_calls_sql(false),
            vec![&"s1", &10],
            &["hook_calls_session"],
        ),
        (
            hook_calls_sql(true),
            vec![&"agent-a3", &"a3", &10],
            &["hook_calls_session", "hook_calls_agent"],
        ),
        (
            crate::backend::hook_chain_sql(false),
            vec![&"s1", &Option::<&str>::None],
            &["hook_calls_session"],
        ),
    ];
    for (sql, args, want) in cases {
        let p = plan(&sql, &args);
        for w in want {
            assert!(p.contains(w), "{w}: {p}");
        }
        assert!(!p.contains("TEMP B-TREE"), "{sql}: {p}");
        assert!(!p.contains("SCAN hook_calls"), "{sql}: {p}");
    }
}

/// The plan of every filter's query walks an index in list order: no
/// temporary b-tree for `ORDER BY`, no full scan of the table.
#[test]
fn every_filter_is_planned_over_an_index_in_list_order() {
    let store = filter_store();
    let plans = [
        ("none", ""),
        ("status", "s.status = 'completed' AND"),
        ("tier", "s.tier = 2 AND"),
        ("profile", "s.profile = 'x' AND"),
        ("category", "s.error_category = 'x' AND"),
        ("method", "s.extraction_method = 'x' AND"),
    ];
    for (name, cond) in plans {
        for keyset in ["", "(s.started_at, s.id) < ('2025', 'x') AND"] {
            let sql = format!(
                "EXPLAIN QUERY PLAN SELECT s.id FROM sessions s WHERE {cond} {keyset} 1
                 ORDER BY s.started_at DESC, s.id DESC LIMIT 50"
            );
            let plan: Vec<String> = store
                .connection()
                .prepare(&sql)
                .unwrap()
                .query_map([], |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let plan = plan.join("; ");
            assert!(
                plan.contains("USING INDEX") || plan.contains("USING COVERING INDEX"),
                "{name}: {plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "{name}: {plan}");
        }
    }
}
