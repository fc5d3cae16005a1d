//! The alert evaluator's store queries (`agentshape_store::alerts::facts`
//! and the cooldown's mark, issue 31 item 3) on a generated store of
//! 100,000 sessions, on SQLite and on the throwaway Postgres (Note
//! \[Throwaway Postgres\] in the testkit): one evaluator tick of eleven
//! rules covering every condition.
//!
//! The sessions are spread over 44 days (one every 38 s), four profiles,
//! 70% valid, 25% rejected; every 50th failed (`timeout` or `api_error`);
//! every session checked `jellyfin`, until two days before the end (so it is
//! quiet), every one `sonarr` (busy), and every 1,000th of the first half
//! `radarr` (quiet for three weeks); `lidarr` was never checked. Ten runs
//! are lost, 2,000 secrets were found. Now is just after the last session.
//!
//! Each tick is timed 5 times after one untimed call; the median and the
//! slowest are printed, for the whole tick and per rule
//! (`cargo bench -p agentshape-store --bench alerts`). `ALERTS_SESSIONS=N`
//! changes the number of sessions; `ALERTS_ONLY=sqlite` skips Postgres.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing

use std::hint::black_box;
use std::time::Instant;

use agentshape_core::alerts::{LastFiring, RuleSet, evaluate, parse_rules};
use agentshape_store::alerts;
use agentshape_store::copy::Rows;
use agentshape_store::{PgStore, SqliteStore, time};

const RULES: &str = r#"
[[rule]]
name = "rate"
when = "rejection_rate"
profile = "code-review"
window = "1h"
above = 0.2
min_runs = 5
log = true

[[rule]]
name = "failed"
when = "session_failed"
log = true

[[rule]]
name = "failed-sonarr"
when = "session_failed"
service = "sonarr"
log = true

[[rule]]
name = "cost"
when = "cost_per_day"
above = 5
log = true

[[rule]]
name = "cost-profile"
when = "cost_per_day"
above = 5
profile = "claude-ops"
log = true

[[rule]]
name = "lost"
when = "session_lost"
log = true

[[rule]]
name = "secrets"
when = "secrets_found"
log = true

[[rule]]
name = "sonarr-quiet"
when = "no_session"
service = "sonarr"
hours = 6
log = true

[[rule]]
name = "jellyfin-quiet"
when = "no_session"
service = "jellyfin"
hours = 6
log = true

[[rule]]
name = "radarr-quiet"
when = "no_session"
service = "radarr"
hours = 6
log = true

[[rule]]
name = "lidarr-quiet"
when = "no_session"
service = "lidarr"
hours = 6
log = true
"#;

/// One session every 38 s from 2026-01-01.
const STEP_S: i64 = 38;
const START_MS: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn session_select(started: &str) -> String {
    format!(
        "SELECT 's' || i, 1,
                CASE i % 4 WHEN 0 THEN 'claude-ops' WHEN 1 THEN 'schemas/loop-action.json'
                           WHEN 2 THEN 'code-review' ELSE 'other' END,
                'claude-code', 'm',
                CASE WHEN i % 50 = 0 THEN 'error' ELSE 'completed' END,
                {started}, {started}, 0.01 + (i % 37) * 0.001,
                CASE WHEN i % 20 < 14 THEN 'fenced' WHEN i % 20 < 19 THEN 'fenced' END,
                CASE WHEN i % 20 < 14 THEN '{{\"valid\":true,\"errors\":[],\"repairs\":[],\"coercions\":[]}}'
                     WHEN i % 20 < 19 THEN '{{\"valid\":false,\"errors\":[],\"repairs\":[],\"coercions\":[]}}'
                END,
                CASE WHEN i % 100 = 0 THEN 'timeout' WHEN i % 50 = 0 THEN 'api_error' END"
    )
}

const SESSION_COLUMNS: &str = "id, tier, profile, agent, model, status, started_at, ended_at, \
    cost_usd, extraction_method, verdict, error_category";

/// The services of session `i` (as `(session_id, name, status)` rows), for
/// `n` sessions: jellyfin until two days before the end, sonarr always,
/// radarr every 1,000th of the first half.
fn service_rows(n: &str) -> String {
    format!(
        "SELECT 's' || i, 'jellyfin', 'healthy' FROM g WHERE i <= {n} - 2 * 86400 / {STEP_S}
         UNION ALL SELECT 's' || i, 'sonarr', 'healthy' FROM g
         UNION ALL SELECT 's' || i, 'radarr', 'healthy' FROM g WHERE i % 1000 = 1 AND i < {n} / 2"
    )
}

fn sqlite(path: &std::path::Path, n: usize) -> SqliteStore {
    drop(SqliteStore::open(path).unwrap());
    let c = rusqlite::Connection::open(path).unwrap();
    let started = format!(
        "strftime('%Y-%m-%dT%H:%M:%S.000Z', '2026-01-01', '+' || (i * {STEP_S}) || ' seconds')"
    );
    let g =
        format!("WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {n})");
    c.execute_batch(&format!(
        "BEGIN;
         {g} INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM g;
         {g} INSERT INTO services_checked (session_id, name, status) {};
         {g} INSERT INTO secrets_found (session_id, rule, fingerprint, place, created_at)
             SELECT 's' || i, 'github-pat', 'f', 'summary', {started} FROM g WHERE i % 50 = 7;
         COMMIT; ANALYZE;",
        session_select(&started),
        service_rows(&n.to_string()),
    ))
    .unwrap();
    lost(&c, n);
    SqliteStore::open(path).unwrap()
}

/// Ten `running` sessions of the last minutes, whose heartbeats stopped.
fn lost(c: &rusqlite::Connection, n: usize) {
    let end = end_ms(n);
    for k in 0..10 {
        let at = time::format_ms(end - 600_000 + k * 1_000);
        c.execute(
            "INSERT INTO sessions (id, tier, status, started_at, heartbeat_at) VALUES (?1, 1, 'running', ?2, ?2)",
            rusqlite::params![format!("lost{k}"), at],
        )
        .unwrap();
    }
}

fn postgres(n: usize) -> PgStore {
    let pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let started = format!(
        "to_char(timestamp '2026-01-01' + i * {STEP_S} * interval '1 second', \
         'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    );
    let g = format!("WITH g(i) AS (SELECT generate_series(1, {n}))");
    let end = end_ms(n);
    let lost: Vec<String> = (0..10)
        .map(|k| {
            format!(
                "('lost{k}', 1, 'running', '{0}', '{0}')",
                time::format_ms(end - 600_000 + k * 1_000)
            )
        })
        .collect();
    pg.query_text(&format!(
        "{g} INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM g;
         {g} INSERT INTO services_checked (session_id, name, status) {};
         {g} INSERT INTO secrets_found (session_id, rule, fingerprint, place, created_at)
             SELECT 's' || i, 'github-pat', 'f', 'summary', {started} FROM g WHERE i % 50 = 7;
         INSERT INTO sessions (id, tier, status, started_at, heartbeat_at) VALUES {};
         ANALYZE;",
        session_select(&started),
        service_rows(&n.to_string()),
        lost.join(", ")
    ))
    .unwrap();
    pg.query_text("VACUUM").unwrap();
    pg
}

/// The last session's start.
fn end_ms(n: usize) -> i64 {
    START_MS + i64::try_from(n).unwrap() * STEP_S * 1000
}

/// One evaluator tick over `rows` at `now`: every rule's facts, its mark,
/// the decision. The firings per rule.
fn tick(rules: &RuleSet, rows: &dyn Rows, now: i64, memo: &mut alerts::Memo) -> Vec<usize> {
    rules
        .rules
        .iter()
        .map(|r| rule_tick(r, rows, now, memo))
        .collect()
}

fn rule_tick(
    r: &agentshape_core::alerts::Rule,
    rows: &dyn Rows,
    now: i64,
    memo: &mut alerts::Memo,
) -> usize {
    let facts = alerts::facts_with(rows, &r.condition, now, now - r.lookback_ms, memo).unwrap();
    let last = alerts::last_event_ms(rows, &r.name)
        .unwrap()
        .map(|event_at_ms| LastFiring { event_at_ms });
    evaluate(r, &facts, last, now).len()
}

const RUNS: usize = 5;

fn time_it(f: &dyn Fn()) -> (f64, f64) {
    f();
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[RUNS / 2], ms[RUNS - 1])
}

fn run(label: &str, rows: &dyn Rows, n: usize) {
    let rules = parse_rules(RULES).unwrap();
    let now = end_ms(n) + 60_000;
    // A bench of wrong answers is none: what each rule must find.
    let t = Instant::now();
    let mut memo = alerts::Memo::default();
    let fired = tick(&rules, rows, now, &mut memo);
    let first = t.elapsed().as_secs_f64() * 1000.0;
    eprintln!("{label}: firings per rule {fired:?}");
    let want = |name: &str| {
        rules
            .rules
            .iter()
            .position(|r| r.name == name)
            .map(|i| fired[i])
            .unwrap()
    };
    assert!(
        want("rate") == 1 && want("failed") > 0 && want("failed-sonarr") > 0,
        "{label}"
    );
    assert_eq!(
        (want("lost"), want("secrets") > 0, want("sonarr-quiet")),
        (10, true, 0)
    );
    assert_eq!(
        (
            want("jellyfin-quiet"),
            want("radarr-quiet"),
            want("lidarr-quiet")
        ),
        (1, 1, 1)
    );
    eprintln!(
        "alerts/{label}/first tick ({} rules, nothing remembered): {first:.1} ms",
        rules.rules.len()
    );
    let memo = std::cell::RefCell::new(memo);
    let (median, max) =
        time_it(&|| drop(black_box(tick(&rules, rows, now, &mut memo.borrow_mut()))));
    eprintln!(
        "alerts/{label}/tick ({} rules): median {median:.1} ms, max {max:.1} ms ({RUNS} runs)",
        rules.rules.len()
    );
    for r in &rules.rules {
        let (median, max) = time_it(&|| {
            black_box(rule_tick(r, rows, now, &mut memo.borrow_mut()));
        });
        eprintln!(
            "alerts/{label}/{}: median {median:.2} ms, max {max:.2} ms",
            r.name
        );
    }
}

fn main() {
    let n = std::env::var("ALERTS_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let lite = sqlite(&dir.path().join("bench.db"), n);
    run(
        "sqlite",
        agentshape_store::copy::Copyable::copy_rows(&lite),
        n,
    );
    if std::env::var("ALERTS_ONLY").as_deref() == Ok("sqlite") {
        return;
    }
    let pg = postgres(n);
    run(
        "postgres",
        agentshape_store::copy::Copyable::copy_rows(&pg),
        n,
    );
}
