//! The dashboard's list queries on a generated store of 100,000 sessions
//! (300,000 events): the sessions list's first page and a deep page (via
//! `before`) for each filter, text searches that match little and much,
//! the overview, the filter form's values and the events page. Run twice:
//! with migration 0004's indexes (`lists/indexed/...`) and with only the
//! indexes of migrations 1-2 (`lists/v2/...`), to show what they buy.
//!
//! Native sessions (issue 28): every session also has an agent of three
//! and a project of 40, and three feed rows (a prompt, a reply, a tool
//! call: 300,000 rows), so the agent and project filters, the transcript
//! search (`transcripts/...`) and the overview's days by agent and project,
//! tool errors and most expensive sessions are measured at the same size.
//!
//! `LISTS_SESSIONS=N` changes the number of sessions; `LISTS_ONLY=indexed`
//! skips the second run.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing
// Generated data: the casts are of small counters.
#![allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]

use std::hint::black_box;
use std::time::Duration;

use agentshape_store::query::{self, SessionFilter};
use agentshape_store::{SqliteStore, time};
use criterion::{Criterion, criterion_group, criterion_main};
use rusqlite::params;

const STATUSES: &[&str] = &[
    "completed",
    "completed",
    "completed",
    "completed",
    "completed",
    "completed",
    "completed",
    "completed",
    "error",
    "failed",
];
const PROFILES: &[&str] = &["claude-ops", "claude-ops", "claude-loop", "code-review"];
const METHODS: &[&str] = &[
    "structured",
    "structured",
    "fenced",
    "markers",
    "repaired",
    "none",
];
const CATEGORIES: &[&str] = &["rate_limit", "auth", "api", "max_turns", "timeout"];
const SERVICES: &[&str] = &["jellyfin", "sonarr", "radarr", "plex", "nginx", "postgres"];
const AGENTS: &[&str] = &["claude-code", "codex", "gemini-cli"];
const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Edit",
    "shell",
    "apply_patch",
    "Grep",
    "Task",
];

/// Fill `path` with `n` sessions spread over the last 45 days, in one
/// transaction (the point is reading, not writing).
fn generate(path: &std::path::Path, n: usize) {
    let store = SqliteStore::open(path).unwrap();
    drop(store);
    let mut c = rusqlite::Connection::open(path).unwrap();
    let tx = c.transaction().unwrap();
    let now = time::now_ms();
    let span = 45 * 86_400_000i64;
    {
        let mut s = tx
            .prepare(
                "INSERT INTO sessions (id, parent_id, tier, profile, agent, model, status, started_at,
                    ended_at, cost_usd, duration_ms, num_turns, input_tokens, output_tokens,
                    extraction_method, error, error_category, summary, heartbeat_at)
                 VALUES (?1, NULL, ?2, ?3, ?14, 'claude-sonnet-4-5', ?4, ?5, ?5, ?6, 45000, 8,
                    ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .unwrap();
        let mut projects = tx
            .prepare("UPDATE sessions SET project = ?2, cost_estimated = 1 WHERE id = ?1")
            .unwrap();
        let mut tools = tx
            .prepare(
                "INSERT INTO session_tools (session_id, tool, calls, errors) VALUES (?1, ?2, ?3, ?4)",
            )
            .unwrap();
        let mut feed = tx
            .prepare(
                "INSERT INTO feed (session_id, kind, body, created_at) VALUES (?1, 'event', ?2, ?3)",
            )
            .unwrap();
        let mut e = tx
            .prepare(
                "INSERT INTO events (session_id, level, service, message, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .unwrap();
        for i in 0..n {
            let id = format!(
                "{:08x}-{i:06}",
                (i as u64).wrapping_mul(2_654_435_761) as u32
            );
            let at = time::format_ms(now - span + (span / n as i64) * i as i64);
            // A few running ones at the end: the newest 3 fresh, 2 before them lost.
            let (status, hb) = if i + 5 >= n {
                (
                    "running",
                    Some(if i + 3 >= n { time::now() } else { at.clone() }),
                )
            } else {
                (STATUSES[i % STATUSES.len()], None)
            };
            let failed = status == "error" || status == "failed";
            let tier = match i % 20 {
                0 => 3,
                1..=3 => 2,
                _ => 1,
            };
            let summary = if i % 20_000 == 7 {
                format!("Tier {tier}: a needle in the haystack, session {i}")
            } else {
                format!(
                    "Tier {tier} health check: {} of 12 services healthy, {} degraded",
                    12 - i % 3,
                    i % 3
                )
            };
            s.execute(params![
                id,
                tier,
                PROFILES[i % PROFILES.len()],
                status,
                at,
                0.01 + (i % 7) as f64 * 0.003,
                1000 + i % 500,
                200 + i % 100,
                (!failed).then(|| METHODS[i % METHODS.len()]),
                failed.then_some("API Error: something went wrong"),
                failed.then(|| CATEGORIES[(i / 10) % CATEGORIES.len()]),
                summary,
                hb,
                AGENTS[i % AGENTS.len()],
            ])
            .unwrap();
            projects
                .execute(params![id, format!("/home/u/src/project-{}", i % 40)])
                .unwrap();
            tools
                .execute(params![
                    id,
                    TOOLS[i % TOOLS.len()],
                    3,
                    i64::from(i % 5 == 0)
                ])
                .unwrap();
            let service = SERVICES[i % SERVICES.len()];
            let reply = if i % 20_000 == 11 {
                format!("Found the needle: {service} restarts every hour (session {i})")
            } else {
                format!("All {service} checks pass; the service is healthy after {i} runs")
            };
            for event in [
                serde_json::json!({"type": "user_text", "text": format!("Check {service} and report")}),
                serde_json::json!({"type": "tool_use", "id": "t", "name": TOOLS[i % TOOLS.len()], "input": {}}),
                serde_json::json!({"type": "text", "text": reply}),
            ] {
                let body = serde_json::json!({"kind": "event", "event": event, "line": 1});
                feed.execute(params![id, body.to_string(), at]).unwrap();
            }
            for k in 0..3 {
                let level = ["info", "info", "warning", "critical"][(i + k) % 4];
                e.execute(params![
                    id,
                    level,
                    SERVICES[(i + k) % SERVICES.len()],
                    format!("{level}: check {k} of session {i}"),
                    at
                ])
                .unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// Back to schema version 2's indexes, without the text index and the
/// overview's counters (what 0004 added): the queries then take their
/// fallbacks, as on an old read-only store.
fn drop_list_indexes(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "DROP INDEX sessions_order; DROP INDEX sessions_status_order; DROP INDEX sessions_tier_order;
         DROP INDEX sessions_profile_order; DROP INDEX sessions_category_order;
         DROP INDEX sessions_method_order; DROP INDEX events_level;
         DROP TABLE sessions_fts; DROP TABLE list_counts; DROP TABLE session_days;
         CREATE INDEX sessions_started ON sessions(started_at);
         CREATE INDEX sessions_status ON sessions(status);",
    )
    .unwrap();
}

fn filters() -> Vec<(&'static str, SessionFilter)> {
    let f = |status: Option<&str>| SessionFilter {
        status: status.map(str::to_owned),
        limit: 50,
        ..SessionFilter::default()
    };
    let s = |v: &str| Some(v.to_owned());
    vec![
        ("none", f(None)),
        ("status_completed", f(Some("completed"))),
        ("status_failed", f(Some("failed"))),
        ("status_lost", f(Some("lost"))),
        ("status_running", f(Some("running"))),
        (
            "tier_3",
            SessionFilter {
                tier: Some(3),
                ..f(None)
            },
        ),
        (
            "profile",
            SessionFilter {
                profile: s("code-review"),
                ..f(None)
            },
        ),
        (
            "category",
            SessionFilter {
                error_category: s("max_turns"),
                ..f(None)
            },
        ),
        (
            "method",
            SessionFilter {
                method: s("repaired"),
                ..f(None)
            },
        ),
        (
            "q_rare",
            SessionFilter {
                q: s("needle"),
                ..f(None)
            },
        ),
        (
            "q_none",
            SessionFilter {
                q: s("no such text"),
                ..f(None)
            },
        ),
        (
            "q_common",
            SessionFilter {
                q: s("health"),
                ..f(None)
            },
        ),
        (
            "q_two_chars",
            SessionFilter {
                q: s("zq"),
                ..f(None)
            },
        ),
        (
            "agent",
            SessionFilter {
                agent: s("codex"),
                ..f(None)
            },
        ),
        (
            "project",
            SessionFilter {
                project: s("/home/u/src/project-7"),
                ..f(None)
            },
        ),
        (
            "agent_project",
            SessionFilter {
                agent: s("gemini-cli"),
                project: s("/home/u/src/project-8"),
                ..f(None)
            },
        ),
        (
            "status_tier_profile",
            SessionFilter {
                status: s("completed"),
                tier: Some(2),
                profile: s("claude-loop"),
                ..f(None)
            },
        ),
        (
            "category_tier",
            SessionFilter {
                error_category: s("auth"),
                tier: Some(3),
                ..f(None)
            },
        ),
        (
            "all_but_q",
            SessionFilter {
                status: s("failed"),
                tier: Some(1),
                profile: s("claude-ops"),
                error_category: s("api"),
                ..f(None)
            },
        ),
    ]
}

fn run(c: &mut Criterion, label: &str, store: &SqliteStore, deep: &str) {
    let mut group = c.benchmark_group(format!("lists/{label}"));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(1));
    for (name, filter) in filters() {
        group.bench_function(format!("sessions/first/{name}"), |b| {
            b.iter(|| black_box(query::sessions(store, &filter).unwrap()));
        });
        let deep_filter = SessionFilter {
            before: Some(deep.to_owned()),
            ..filter.clone()
        };
        group.bench_function(format!("sessions/deep/{name}"), |b| {
            b.iter(|| black_box(query::sessions(store, &deep_filter).unwrap()));
        });
    }
    group.bench_function("overview", |b| {
        b.iter(|| black_box(query::overview(store, time::now_ms()).unwrap()));
    });
    for (name, q) in [
        ("rare", "needle"),
        ("none", "no such text"),
        ("common", "healthy"),
    ] {
        group.bench_function(format!("transcripts/{name}"), |b| {
            b.iter(|| black_box(query::search_transcripts(store, q, 50).unwrap()));
        });
    }
    group.bench_function("filter_values", |b| {
        b.iter(|| black_box(query::filter_values(store).unwrap()));
    });
    group.bench_function("events/all", |b| {
        b.iter(|| black_box(query::events(store, None, None, 100).unwrap()));
    });
    group.bench_function("events/critical", |b| {
        b.iter(|| black_box(query::events(store, Some("critical"), None, 100).unwrap()));
    });
    group.finish();
}

/// The plans of the native sessions' queries at this size, on stderr.
fn explain(store: &SqliteStore) {
    for sql in [
        "SELECT s.id FROM sessions s WHERE s.agent = 'codex' ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
        "SELECT s.id FROM sessions s WHERE s.project = '/home/u/src/project-7' AND (s.started_at, s.id) < ('2100', 'x') ORDER BY s.started_at DESC, s.id DESC LIMIT 50",
        "SELECT s.id FROM sessions s WHERE s.cost_usd IS NOT NULL ORDER BY s.cost_usd DESC, s.id DESC LIMIT 10",
        "SELECT f.id FROM feed f WHERE f.id IN (SELECT rowid FROM feed_fts WHERE feed_fts MATCH '\"healthy\"' ORDER BY rowid DESC LIMIT 50) ORDER BY f.id DESC",
        "SELECT day, key FROM session_days_by WHERE day >= '2025-01-01' AND what = 'agent' AND sessions > 0",
        "SELECT tool, calls, errors FROM tool_totals WHERE errors > 0",
    ] {
        let mut stmt = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let plan: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        eprintln!("{sql}\n  -> {}", plan.join("; "));
    }
}

fn lists(c: &mut Criterion) {
    let n = std::env::var("LISTS_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000usize);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lists.db");
    generate(&path, n);
    let store = SqliteStore::open_read_only(&path).unwrap();
    // A deep page: 90% of the way down the list.
    let deep: String = store
        .connection()
        .query_row(
            "SELECT id FROM sessions ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET ?1",
            [i64::try_from(n * 9 / 10).unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    explain(&store);
    run(c, "indexed", &store, &deep);
    drop(store);
    if std::env::var("LISTS_ONLY").is_ok_and(|v| v == "indexed") {
        return;
    }
    drop_list_indexes(&path);
    let store = SqliteStore::open_read_only(&path).unwrap();
    run(c, "v2", &store, &deep);
}

criterion_group!(benches, lists);
criterion_main!(benches);
