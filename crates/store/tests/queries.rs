//! The dashboard's queries (`agentshape_store::query`) on both backends
//! (Note [Queries on both backends]): the same sessions written to a SQLite
//! file and to a fresh database on the throwaway Postgres, then every query
//! asked of both. Each answer is checked against what it must be, and the
//! two backends' answers are compared whole, as JSON.

use agentshape_store::query::{self, SessionFilter, Source};
use agentshape_store::{
    FeedEntry, NewEvent, NewMemory, PgStore, ServiceCheck, Session, SqliteStore, Store, time,
};
use serde_json::Value;

mod sessions {
    use agentshape_store::Session;
    include!("support/sessions.rs");
}

use sessions::Spec;

mod native {
    use agentshape_store::{FeedEntry, NativeMark, Session, Store, ToolCount};
    include!("support/native.rs");
}

/// Three sessions started in the same minute, after the shared ones.
const TIES: &[Spec] = &[
    // Same start: the id breaks the tie, byte-wise (`-` < `B` < `_`).
    (
        "t-a",
        9,
        "completed",
        1,
        None,
        None,
        None,
        Some("tie"),
        "claude",
    ),
    (
        "t_B",
        9,
        "completed",
        1,
        None,
        None,
        None,
        Some("tie"),
        "claude",
    ),
    (
        "tB",
        9,
        "completed",
        1,
        None,
        None,
        None,
        Some("tie"),
        "claude",
    ),
];

/// Write the same sessions, in the same order, to `store`.
fn fill(store: &mut dyn Store, now: &str) {
    for spec in sessions::SPECS.iter().chain(TIES) {
        let (id, min) = (spec.0, spec.1);
        let mut r = sessions::record(spec);
        r.ended_at = Some(r.started_at.clone());
        r.cost_usd = Some(f64::from(min) / 4.0);
        r.input_tokens = i64::from(min) * 100;
        r.output_tokens = i64::from(min);
        if id == "a3" {
            r.events = ["critical", "info", "warning"]
                .iter()
                .enumerate()
                .map(|(i, l)| NewEvent {
                    level: (*l).into(),
                    service: Some("jellyfin".into()),
                    message: format!("e{i}"),
                })
                .collect();
            r.services = vec![ServiceCheck {
                name: "jellyfin".into(),
                status: "down".into(),
                detail: Some("502".into()),
            }];
            r.memories = vec![NewMemory {
                key: "jellyfin:restart".into(),
                value: "restart fixes 502".into(),
            }];
            r.output = Some(serde_json::json!({"summary": "Jellyfin 502 found"}));
            r.verdict = Some(
                serde_json::from_value(serde_json::json!({"valid": true, "errors": []})).unwrap(),
            );
        }
        if id == "a4" {
            r.parent_id = Some("a3".into());
            r.escalated_for = vec!["jellyfin".into()];
            r.memories = vec![NewMemory {
                key: "jellyfin:restart".into(),
                value: "restart again".into(),
            }];
        }
        store.write_session(&r).unwrap();
    }
    let mut lost = Session::new("b-lost", "2025-07-14T03:08:00.000Z", "running");
    lost.profile = Some("claude-ops".to_owned());
    store.start_session(&lost).unwrap();
    let fresh = Session::new("b-run", now, "running");
    store.start_session(&fresh).unwrap();
    store
        .append_feed(&[FeedEntry {
            seq: None,
            session_id: "b-run".into(),
            kind: "event".into(),
            body: r#"{"kind":"text","text":"hi"}"#.into(),
            created_at: now.to_owned(),
        }])
        .unwrap();
}

struct Both {
    _dir: tempfile::TempDir,
    sqlite: SqliteStore,
    pg: PgStore,
}

fn both() -> Both {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    let now = time::now();
    let mut w = SqliteStore::open(&path).unwrap();
    fill(&mut w, &now);
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    fill(&mut pg, &now);
    Both {
        sqlite: SqliteStore::open_read_only(&path).unwrap(),
        pg,
        _dir: dir,
    }
}

impl Both {
    /// `f` on each backend: the answers must be equal; returns one.
    fn ask<T: serde::Serialize>(&self, what: &str, f: impl Fn(&dyn Source) -> T) -> T {
        let a = f(&self.sqlite);
        let b = f(&self.pg);
        let (ja, jb) = (
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
        );
        assert_eq!(ja, jb, "{what}: SQLite (left) and Postgres (right) differ");
        a
    }

    fn ids(&self, what: &str, filter: &SessionFilter) -> Vec<String> {
        self.ask(what, |s| {
            query::sessions(s, filter)
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        })
    }
}

fn f() -> SessionFilter {
    SessionFilter {
        limit: 100,
        ..SessionFilter::default()
    }
}

// Reads as the filter's field does: `status: some("x")`.
#[allow(clippy::unnecessary_wraps)]
fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

#[test]
fn every_filter_and_text_search_answers_alike() {
    let b = both();
    let all = [
        "b-run", "t_B", "tB", "t-a", "b-lost", "a7", "a6", "a5", "a4", "a3", "a2", "a1",
    ];
    let cases: Vec<(&str, SessionFilter, Vec<&str>)> = vec![
        ("none", f(), all.to_vec()),
        (
            "status",
            SessionFilter {
                status: some("failed"),
                ..f()
            },
            vec!["a4"],
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
            "q any case",
            SessionFilter {
                q: some("jellyfin"),
                ..f()
            },
            vec!["a7", "a3"],
        ),
        (
            "q in error",
            SessionFilter {
                q: some("too many"),
                ..f()
            },
            vec!["a6", "a2"],
        ),
        (
            "q in model",
            SessionFilter {
                q: some("MODEL-CODEX"),
                ..f()
            },
            vec!["a3"],
        ),
        (
            "q percent literal",
            SessionFilter {
                q: some("0%"),
                ..f()
            },
            vec!["a5"],
        ),
        (
            "q underscore literal",
            SessionFilter {
                q: some("_"),
                ..f()
            },
            vec!["t_B", "a5"],
        ),
        (
            "q short",
            SessionFilter {
                q: some("tB"),
                ..f()
            },
            vec!["tB"],
        ),
        (
            "q nothing",
            SessionFilter {
                q: some("zebra"),
                ..f()
            },
            vec![],
        ),
        (
            "combined",
            SessionFilter {
                status: some("completed"),
                profile: some("claude-ops"),
                method: some("structured"),
                q: some("healthy"),
                ..f()
            },
            vec!["a1"],
        ),
        (
            "before unknown",
            SessionFilter {
                before: some("nope"),
                ..f()
            },
            vec![],
        ),
    ];
    for (name, filter, want) in cases {
        assert_eq!(b.ids(name, &filter), want, "{name}");
    }
}

#[test]
fn keyset_pages_walk_the_same_list_on_both() {
    let b = both();
    for filter in [
        f(),
        SessionFilter {
            status: some("completed"),
            ..f()
        },
        SessionFilter {
            q: some("t"),
            ..f()
        },
    ] {
        let all = b.ids("all", &filter);
        for size in 1..=3 {
            let mut walked = Vec::new();
            let mut before = None;
            loop {
                let page = b.ids(
                    "page",
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
}

#[test]
fn one_session_with_its_rows_children_and_feed() {
    let b = both();
    let d = b.ask("session a3", |s| query::session(s, "a3").unwrap().unwrap());
    let levels: Vec<&str> = d.events.iter().map(|e| e.level.as_str()).collect();
    assert_eq!(levels, ["critical", "info", "warning"]);
    assert_eq!(d.services.len(), 1);
    assert_eq!(
        d.children.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["a4"]
    );
    assert_eq!(
        d.output,
        Some(serde_json::json!({"summary": "Jellyfin 502 found"}))
    );
    assert_eq!(
        d.verdict.as_ref().and_then(|v| v.get("valid")),
        Some(&Value::Bool(true))
    );
    // Reinforced by a4: the memory row now names a4.
    let d4 = b.ask("session a4", |s| query::session(s, "a4").unwrap().unwrap());
    assert_eq!(d4.memories.len(), 1);
    assert!(
        (d4.memories[0].confidence - 0.8).abs() < 1e-9,
        "{:?}",
        d4.memories
    );
    assert_eq!(d4.session.parent_id.as_deref(), Some("a3"));
    let lost = b.ask("lost", |s| query::session(s, "b-lost").unwrap().unwrap());
    assert!(lost.session.lost);
    assert_eq!(lost.session.shown_status, "lost");
    assert!(
        b.ask("unknown", |s| query::session(s, "nope").unwrap())
            .is_none()
    );
    let feed = b.ask("feed", |s| {
        query::feed_for_session(s, "b-run", 0, 10).unwrap()
    });
    let kinds: Vec<&str> = feed.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["started", "event"]);
    let after = b.ask("feed after", |s| {
        query::feed_for_session(s, "b-run", feed[0].id, 10).unwrap()
    });
    assert_eq!(after.len(), 1);
    let max = b.ask("max", |s| query::feed_max_id(s).unwrap());
    assert_eq!(max, feed[1].id);
}

#[test]
fn events_memories_filter_values_and_overview_answer_alike() {
    let b = both();
    let all = b.ask("events", |s| query::events(s, None, None, 10).unwrap());
    assert_eq!(
        all.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(),
        ["e2", "e1", "e0"]
    );
    let info = b.ask("info", |s| {
        query::events(s, Some("info"), None, 10).unwrap()
    });
    assert_eq!(info.len(), 1);
    let newer = b.ask("after", |s| {
        query::events(s, None, Some(all[2].id), 10).unwrap()
    });
    assert_eq!(newer.len(), 2);
    let mems = b.ask("memories", |s| query::memories(s).unwrap());
    assert_eq!(mems.len(), 1);
    let v = b.ask("filter values", |s| query::filter_values(s).unwrap());
    assert_eq!(
        v.statuses,
        ["completed", "error", "failed", "lost", "running"]
    );
    assert_eq!(v.tiers, [1, 2, 3]);
    assert_eq!(v.profiles, ["claude-loop", "claude-ops", "code-review"]);
    assert_eq!(v.methods, ["fenced", "markers+handoff", "structured"]);
    // "now" on the sessions' day.
    let now = time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
    let o = b.ask("overview", |s| query::overview(s, now).unwrap());
    // The day of the sessions, then today's (b-run).
    assert_eq!(o.days.len(), 2, "{o:?}");
    assert_eq!(o.days[0].day, "2025-07-14", "{o:?}");
    assert_eq!(o.days[0].sessions, 11, "{o:?}");
    assert_eq!(
        o.days[0].input_tokens,
        (1 + 2 + 3 + 4 + 5 + 6 + 7 + 9 * 3) * 100
    );
    assert_eq!(o.escalations.len(), 1);
    assert_eq!(o.escalations[0].child_status.as_deref(), Some("failed"));
    assert_eq!(
        o.events_by_level,
        [
            ("critical".to_owned(), 1),
            ("info".to_owned(), 1),
            ("warning".to_owned(), 1)
        ]
    );
}

/// The native sessions' queries (issue 28, item 4) answer alike on both
/// backends: agent and project filters, the tree, the overview's days by
/// agent and project, tool errors, the costliest, and the transcript
/// search (whole words, which both backends' searches find).
#[test]
fn native_sessions_filters_tree_overview_and_search_answer_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("native.db");
    native::fill_native(&mut SqliteStore::open(&path).unwrap());
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    native::fill_native(&mut pg);
    let b = Both {
        sqlite: SqliteStore::open_read_only(&path).unwrap(),
        pg,
        _dir: dir,
    };
    let agent = SessionFilter {
        agent: some("claude-code"),
        ..f()
    };
    assert_eq!(b.ids("agent", &agent), ["n-sub2", "n-sub", "n-main"]);
    let project = SessionFilter {
        project: some("/srv/api"),
        ..f()
    };
    assert_eq!(b.ids("project", &project), ["n-codex"]);
    let rows = b.ask("rows", |s| query::sessions(s, &f()).unwrap());
    assert!(rows.iter().any(|r| r.cost_estimated));
    let v = b.ask("values", |s| query::filter_values(s).unwrap());
    assert_eq!(v.projects, [native::HOSTILE_PROJECT, "/srv/api"]);
    let d = b.ask("tree", |s| query::session(s, "n-main").unwrap().unwrap());
    assert_eq!(d.tree.len(), 2);
    let now = time::parse_ms("2025-07-14T12:00:00.000Z").unwrap();
    let o = b.ask("overview", |s| query::overview(s, now).unwrap());
    assert_eq!(o.days_by_agent.len(), 2);
    assert_eq!(o.days_by_project.len(), 2);
    assert_eq!(o.tool_errors.len(), 2);
    assert_eq!(o.costliest[0].id, "n-codex");
    for (q, n) in [
        ("jellyfin", 3),
        ("Bash", 1),
        ("deploy", 1),
        ("zebra", 0),
        ("journalctl", 0),
    ] {
        let hits = b.ask(q, |s| query::search_transcripts(s, q, 20).unwrap());
        assert_eq!(hits.len(), n, "{q}: {hits:?}");
    }
    let hits = b.ask("two words", |s| {
        query::search_transcripts(s, "jellyfin logs", 20).unwrap()
    });
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].hit, "jellyfin logs");
}

/// Postgres answers the transcript search from its GIN index, and the
/// costliest from `sessions_cost` (with sequential scans off, as a large
/// table would have the planner choose).
#[test]
fn postgres_plans_the_search_and_the_costliest_over_indexes() {
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    native::fill_native(&mut pg);
    let pg = pg;
    let plan = |sql: &str| -> String {
        // One call, one connection: the SET holds for the EXPLAIN.
        pg.query_text(&format!("SET enable_seqscan = off; EXPLAIN {sql}"))
            .unwrap()
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n")
    };
    let search = plan(
        "SELECT f.id FROM feed f WHERE to_tsvector('simple', agentshape_feed_text(f.kind, f.body)) \
         @@ to_tsquery('simple', 'jelly:*') ORDER BY f.id DESC LIMIT 20",
    );
    assert!(search.contains("feed_search"), "{search}");
    let costly = plan(
        "SELECT s.id FROM sessions s WHERE s.cost_usd IS NOT NULL \
         ORDER BY s.cost_usd DESC, s.id DESC LIMIT 10",
    );
    assert!(costly.contains("sessions_cost"), "{costly}");
}

/// The plans Postgres itself picks (sequential scans allowed) at 100,000
/// sessions and 300,000 feed rows, printed for the record (a measurement,
/// so ignored: `cargo test -p agentshape-store --test store --
/// --ignored postgres_plans_at_100k --nocapture`). Each must read an index.
#[test]
#[ignore = "a measurement at 100k sessions; prints the plans"]
fn postgres_plans_at_100k_sessions() {
    let pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    pg.query_text(
        "INSERT INTO sessions (id, agent, project, status, started_at, cost_usd, cost_estimated,
                               input_tokens, output_tokens, summary)
         SELECT 's' || i, (ARRAY['claude-code','codex','gemini-cli'])[1 + i % 3],
                '/home/u/src/project-' || (i % 40), 'completed',
                to_char(timestamp '2025-06-01' + (i || ' seconds')::interval * 30,
                        'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
                0.01 + (i % 7) * 0.003, true, 1000 + i % 500, 200 + i % 100,
                'health check ' || i
         FROM generate_series(1, 100000) AS i;
         INSERT INTO session_tools (session_id, tool, calls, errors)
         SELECT 's' || i, (ARRAY['Bash','Read','shell','Grep'])[1 + i % 4], 3, (i % 5 = 0)::int
         FROM generate_series(1, 100000) AS i;
         INSERT INTO feed (session_id, kind, body, created_at)
         SELECT 's' || (i / 3 + 1), 'event',
                CASE i % 3
                  WHEN 0 THEN '{\"kind\":\"event\",\"event\":{\"type\":\"user_text\",\"text\":\"Check jellyfin and report\"},\"line\":1}'
                  WHEN 1 THEN '{\"kind\":\"event\",\"event\":{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":{}},\"line\":2}'
                  ELSE '{\"kind\":\"event\",\"event\":{\"type\":\"text\",\"text\":\"All checks pass; healthy after ' || i
                       || CASE WHEN i % 20000 = 2 THEN ' needle' ELSE '' END || ' runs\"},\"line\":3}' END,
                '2025-06-01T00:00:00.000Z'
         FROM generate_series(0, 299999) AS i;
         ANALYZE;",
    )
    .unwrap();
    for (sql, index) in [
        (
            "SELECT s.id FROM sessions s WHERE s.agent = 'codex' \
             ORDER BY s.started_at DESC, s.id COLLATE \"C\" DESC LIMIT 50",
            "sessions_agent_order",
        ),
        (
            "SELECT s.id FROM sessions s WHERE s.project = '/home/u/src/project-7' \
             ORDER BY s.started_at DESC, s.id COLLATE \"C\" DESC LIMIT 50",
            "sessions_project_order",
        ),
        (
            "SELECT s.id FROM sessions s WHERE s.cost_usd IS NOT NULL \
             ORDER BY s.cost_usd DESC, s.id DESC LIMIT 10",
            "sessions_cost",
        ),
        (
            "SELECT f.id FROM feed f WHERE to_tsvector('simple', agentshape_feed_text(f.kind, f.body)) \
             @@ to_tsquery('simple', 'needle:*') ORDER BY f.id + 0 DESC LIMIT 50",
            "feed_search",
        ),
        (
            "SELECT f.id FROM feed f WHERE to_tsvector('simple', agentshape_feed_text(f.kind, f.body)) \
             @@ to_tsquery('simple', 'healthy:*') ORDER BY f.id + 0 DESC LIMIT 50",
            "feed_search",
        ),
    ] {
        let plan: Vec<String> = pg
            .query_text(&format!("EXPLAIN ANALYZE {sql}"))
            .unwrap()
            .into_iter()
            .flatten()
            .collect();
        let plan = plan.join("\n");
        println!("{sql}\n{plan}\n");
        // An index walk, whichever the planner finds cheaper (for a
        // common agent, the list order's, filtering as it walks).
        assert!(
            plan.contains(index) || plan.contains("Index Scan"),
            "{index}: {plan}"
        );
        assert!(!plan.contains("Seq Scan"), "{plan}");
    }
    for q in ["needle", "healthy", "no such words"] {
        let start = std::time::Instant::now();
        let hits = query::search_transcripts(&pg, q, 50).unwrap();
        println!(
            "search_transcripts({q:?}): {} hits in {:?}",
            hits.len(),
            start.elapsed()
        );
    }
    // Everything inside the overview's window (June 2025).
    let now = time::parse_ms("2025-07-01T00:00:00.000Z").unwrap();
    let start = std::time::Instant::now();
    let o = query::overview(&pg, now).unwrap();
    println!(
        "overview: {} days by agent, {} tools, {} costliest in {:?}",
        o.days_by_agent.len(),
        o.tool_errors.len(),
        o.costliest.len(),
        start.elapsed()
    );
}

/// Issue 40 §4: two sessions of 5e18 tokens on one day (written before
/// import clamped usage) sum past `i64::MAX`; the overview and the list's
/// totals saturate on both backends instead of failing.
#[test]
fn token_sums_past_i64_max_saturate_on_both() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    let mut sqlite = SqliteStore::open(&path).unwrap();
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let now = time::now();
    for store in [&mut sqlite as &mut dyn Store, &mut pg] {
        for id in ["h1", "h2"] {
            let mut r = Session::new(id, &now, "completed");
            r.input_tokens = 5_000_000_000_000_000_000;
            r.output_tokens = 5_000_000_000_000_000_000;
            store.write_session(&r).unwrap();
        }
    }
    let b = Both {
        sqlite: SqliteStore::open_read_only(&path).unwrap(),
        pg,
        _dir: dir,
    };
    let now_ms = time::now_ms();
    let o = b.ask("overview", |s| query::overview(s, now_ms).unwrap());
    let day = o.days.last().unwrap();
    assert_eq!((day.input_tokens, day.output_tokens), (i64::MAX, i64::MAX));
    let t = b.ask("totals", |s| {
        query::session_totals(s, &SessionFilter::default()).unwrap()
    });
    assert_eq!(t.other_tokens, i64::MAX);
}

/// Issue 41 §2 (Note [Sub-agents in a list], Note [Hits in time order]):
/// a list's top level and the sessions below it, and the transcript hits
/// newest line first, in pages, within the list's filters, alike on both
/// backends.
#[test]
fn nested_lists_and_hits_in_time_order_answer_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("native.db");
    native::fill_native(&mut SqliteStore::open(&path).unwrap());
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    native::fill_native(&mut pg);
    let b = Both {
        sqlite: SqliteStore::open_read_only(&path).unwrap(),
        pg,
        _dir: dir,
    };
    let top = SessionFilter {
        top_level: true,
        limit: 50,
        ..SessionFilter::default()
    };
    assert_eq!(b.ids("top", &top), ["n-main", "n-codex"]);
    let below = b.ask("below", |s| {
        query::sub_sessions(s, &top, &["n-main".to_owned(), "n-codex".to_owned()])
            .unwrap()
            .into_iter()
            .map(|r| (r.id, r.parent_id))
            .collect::<Vec<_>>()
    });
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        below,
        [
            ("n-sub".to_owned(), some("n-main")),
            ("n-sub2".to_owned(), some("n-sub"))
        ]
    );
    // A search that finds a sub-agent and not its parent lists it at the top.
    let explore = SessionFilter {
        q: some("Explore the logs"),
        ..top.clone()
    };
    assert_eq!(b.ids("explore", &explore), ["n-sub"]);
    let one = SessionFilter {
        limit: 1,
        ..top.clone()
    };
    assert_eq!(b.ids("one", &one), ["n-main"]);
    let page2 = SessionFilter {
        before: some("n-main"),
        ..one.clone()
    };
    assert_eq!(b.ids("page 2", &page2), ["n-codex"]);

    // Hits: the sub-agent's later line first, then the parent's two (same
    // time: the later feed id first), each with its project and parent.
    let none = SessionFilter::default();
    let hits = b.ask("hits", |s| {
        query::search_hits(s, "jellyfin", &none, None, 50)
            .unwrap()
            .hits
    });
    let got: Vec<(&str, Option<&str>)> = hits
        .iter()
        .map(|h| (h.session_id.as_str(), h.parent_id.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("n-sub", Some("n-main")),
            ("n-main", None),
            ("n-main", None)
        ]
    );
    assert!(hits[1].feed_id > hits[2].feed_id);
    assert_eq!(hits[0].project.as_deref(), Some(native::HOSTILE_PROJECT));
    let next = b.ask("next hits", |s| {
        query::search_hits(s, "jellyfin", &none, Some(hits[0].feed_id), 1)
            .unwrap()
            .hits
    });
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].feed_id, hits[1].feed_id);
    let last = b.ask("last hits", |s| {
        query::search_hits(s, "jellyfin", &none, Some(hits[2].feed_id), 50)
            .unwrap()
            .hits
    });
    assert!(last.is_empty());
    // The filters hold for hits.
    let codex = SessionFilter {
        agent: some("codex"),
        ..SessionFilter::default()
    };
    let n = |what: &str, q: &str, f: &SessionFilter| {
        b.ask(what, |s| {
            query::search_hits(s, q, f, None, 50).unwrap().hits.len()
        })
    };
    assert_eq!(n("codex jellyfin", "jellyfin", &codex), 0);
    assert_eq!(n("codex deploy", "deploy", &codex), 1);
    let later = SessionFilter {
        from: some("2025-07-14T05:00:30.000Z"),
        ..SessionFilter::default()
    };
    assert_eq!(n("later", "jellyfin", &later), 1);
    let project = SessionFilter {
        project: some("/srv/api"),
        ..SessionFilter::default()
    };
    assert_eq!(n("project", "jellyfin", &project), 0);
}
