//! Validation analytics (`query::stats`, issue 31 item 2) on a generated
//! store of 100,000 sessions, on SQLite and on the throwaway Postgres
//! (Note \[Throwaway Postgres\] in the testkit): every grouping over every
//! session, and the overview's two (by day over 30 days; every session's
//! failing paths over 30 days).
//!
//! The sessions are spread over 44 days, four profiles, three agents and
//! two models: 70% valid (a tenth of them repaired), 20% invalid with one
//! to three errors (an invariant in a seventh of them), 5% with nothing
//! found, 5% with no verdict; a tenth were blocked twice by a hook before
//! their valid output (20,000 `hook_calls` rows, plus the 10,000 valid ones).
//!
//! Each query is timed 5 times after one untimed call; the median and the
//! slowest are printed (`cargo bench -p agentshape-store --bench stats`).
//! Also the overview's two (its chart: outcomes per day over 30 days; its
//! table: failing paths over 30 days) and the session list filtered by a
//! rare failing path and by verdict.
//!
//! Then what keeping the outcomes costs (Note \[Kept outcomes\]): the
//! migration's backfill of a store of the previous version holding the
//! same sessions (timed once), and writing 2,000 more sessions one
//! transaction each to an unmigrated copy (no triggers) and to the
//! migrated store, alternating.
//!
//! `STATS_SESSIONS=N` changes the number of sessions; `STATS_ONLY=sqlite`
//! or `STATS_ONLY=postgres` runs one backend; `STATS_WRITES=0` skips the
//! backfill and write costs.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing
#![allow(clippy::semicolon_if_nothing_returned)] // the cases read as one-liners

use std::hint::black_box;
use std::time::Instant;

use agentshape_store::migrate::{Migration, POSTGRES, SQLITE};
use agentshape_store::query::{self, Parts, SessionFilter, Source, StatsBy};
use agentshape_store::{PgStore, SqliteStore};

/// The columns of a generated session `i`, as SQL over `i` and `started`
/// (the start time's text), the same on both backends.
fn session_select(started: &str) -> String {
    format!(
        "SELECT 's' || i, 1,
                CASE i % 4 WHEN 0 THEN 'claude-ops' WHEN 1 THEN 'schemas/loop-action.json'
                           WHEN 2 THEN 'code-review' ELSE '/etc/agentshape/loop-action.json' END,
                CASE i % 3 WHEN 0 THEN 'claude-code' WHEN 1 THEN 'codex' ELSE 'gemini-cli' END,
                CASE i % 2 WHEN 0 THEN 'claude-sonnet-4-5' ELSE 'gpt-5' END,
                'completed', {started}, {started}, 0.01 + (i % 37) * 0.001, 1000 + (i % 900) * 50,
                1000 + i % 5000, 100 + i % 700,
                CASE WHEN i % 20 < 14 THEN
                       CASE i % 4 WHEN 0 THEN 'structured' WHEN 1 THEN 'fenced'
                                  WHEN 2 THEN 'bare' ELSE 'repaired' END
                     WHEN i % 20 < 18 THEN 'fenced'
                     WHEN i % 20 = 18 THEN 'none' END,
                CASE WHEN i % 20 < 14 THEN
                       '{{\"valid\":true,\"errors\":[],\"repairs\":'
                       || CASE WHEN i % 10 = 3 THEN '[{{\"kind\":\"trailing_comma\"}}]' ELSE '[]' END
                       || ',\"coercions\":[]}}'
                     WHEN i % 20 < 18 THEN
                       '{{\"valid\":false,\"errors\":[{{\"instance_path\":\"/action\",'
                       || '\"schema_path\":\"/properties/action/enum\",\"message\":\"bad\"}}'
                       || CASE WHEN i % 3 = 0 THEN ',{{\"instance_path\":\"/files/' || (i % 5)
                            || '/path\",\"schema_path\":\"/properties/files/items/properties/path/type\",'
                            || '\"message\":\"bad\"}}' ELSE '' END
                       || CASE WHEN i % 7 = 0 THEN ',{{\"instance_path\":\"/confidence\",\"schema_path\":\"\",'
                            || '\"message\":\"low\",\"kind\":\"invariant\",\"rule\":\"self.confidence >= 50\"}}'
                            ELSE '' END
                       || '],\"repairs\":[],\"coercions\":[]}}'
                     WHEN i % 20 = 18 THEN '{{\"valid\":false,\"errors\":[],\"repairs\":[],\"coercions\":[]}}'
                END"
    )
}

const SESSION_COLUMNS: &str = "id, tier, profile, agent, model, status, started_at, ended_at, \
    cost_usd, duration_ms, input_tokens, output_tokens, extraction_method, verdict";

/// Two blocked calls and a valid one for every tenth session.
fn hook_select(k: &str) -> String {
    format!(
        "SELECT 's' || i, 'Stop', CASE WHEN {k} < 2 THEN 'blocked' ELSE 'valid' END, 'fenced',
                CASE WHEN {k} < 2 THEN '[{{\"instance_path\":\"/action\",\"schema_path\":\"/properties/action/enum\",\"message\":\"bad\"}}]'
                     ELSE '[]' END,
                CASE WHEN {k} < 2 THEN {k} + 1 ELSE 0 END, '2026-01-01T00:00:00.000Z'"
    )
}

const HOOK_COLUMNS: &str = "session_id, event, verdict, method, errors, blocks, created_at";

const SQLITE_STARTED: &str =
    "strftime('%Y-%m-%dT%H:%M:%S.000Z', '2026-01-01', '+' || (i * 38) || ' seconds')";
const PG_STARTED: &str = "to_char(timestamp '2026-01-01' + i * 38 * interval '1 second', \
                          'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// The migrations before the outcomes were kept.
fn before_outcomes(list: &'static [Migration]) -> &'static [Migration] {
    &list[..list
        .iter()
        .position(|m| m.name.ends_with("_outcomes.sql"))
        .unwrap()]
}

fn sqlite(path: &std::path::Path, n: usize) -> SqliteStore {
    drop(SqliteStore::open(path).unwrap());
    let c = rusqlite::Connection::open(path).unwrap();
    sqlite_fill(&c, n);
    SqliteStore::open_read_only(path).unwrap()
}

fn sqlite_fill(c: &rusqlite::Connection, n: usize) {
    let started = SQLITE_STARTED;
    c.execute_batch(&format!(
        "BEGIN;
         WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {n})
         INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM g;
         WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 10 FROM g WHERE i + 10 <= {n}),
              k(k) AS (VALUES (0), (1), (2))
         INSERT INTO hook_calls ({HOOK_COLUMNS}) {} FROM g, k ORDER BY i, k;
         COMMIT; ANALYZE;",
        session_select(started),
        hook_select("k.k"),
    ))
    .unwrap();
}

fn postgres(n: usize) -> PgStore {
    let pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let started = PG_STARTED;
    pg.query_text(&format!(
        "INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM generate_series(1, {n}) AS i;
         INSERT INTO hook_calls ({HOOK_COLUMNS}) {}
           FROM generate_series(1, {n}, 10) AS i, generate_series(0, 2) AS k ORDER BY i, k;
         ANALYZE;",
        session_select(started),
        hook_select("k"),
    ))
    .unwrap();
    // What autovacuum does after so many inserts: the visibility map lets
    // the percentiles read their covering index alone.
    pg.query_text("VACUUM").unwrap();
    pg
}

/// The median and the slowest of `RUNS` timed calls of `f` (after one
/// untimed call), in ms.
fn time(f: &dyn Fn()) -> (f64, f64) {
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

const RUNS: usize = 5;

/// A query's name and a call of it.
type Case<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn run(label: &str, store: &dyn Source, n: usize) {
    // The counts are what was generated: a bench of wrong answers is none.
    let all = query::stats(store, StatsBy::All, None).unwrap();
    assert_eq!(all[0].runs, i64::try_from(n).unwrap(), "{label}");
    assert!(
        all[0].valid_after_retries > 0 && all[0].invalid > 0,
        "{label}"
    );
    eprintln!(
        "{label}: {} runs, {} valid first, {} after retries, {} invalid, {} none, top path {:?}",
        all[0].runs,
        all[0].valid_first_try,
        all[0].valid_after_retries,
        all[0].invalid,
        all[0].no_output,
        all[0].failing_paths.first()
    );
    // The overview's window: the last 30 of the 44 days.
    let since = "2026-01-15T00:00:00.000Z";
    let outcomes = Parts {
        paths: false,
        quantiles: false,
    };
    let paths = Parts {
        paths: true,
        quantiles: false,
    };
    let cases: Vec<Case> = vec![
        (
            "all",
            Box::new(|| drop(black_box(query::stats(store, StatsBy::All, None).unwrap()))),
        ),
        (
            "profile",
            Box::new(|| {
                drop(black_box(
                    query::stats(store, StatsBy::Profile, None).unwrap(),
                ))
            }),
        ),
        (
            "schema",
            Box::new(|| {
                drop(black_box(
                    query::stats(store, StatsBy::Schema, None).unwrap(),
                ))
            }),
        ),
        (
            "agent",
            Box::new(|| {
                drop(black_box(
                    query::stats(store, StatsBy::Agent, None).unwrap(),
                ))
            }),
        ),
        (
            "model",
            Box::new(|| {
                drop(black_box(
                    query::stats(store, StatsBy::Model, None).unwrap(),
                ))
            }),
        ),
        (
            "day",
            Box::new(|| drop(black_box(query::stats(store, StatsBy::Day, None).unwrap()))),
        ),
        (
            "day_30d",
            Box::new(|| {
                drop(black_box(
                    query::stats(store, StatsBy::Day, Some(since)).unwrap(),
                ))
            }),
        ),
        (
            "overview_chart_30d",
            Box::new(|| {
                drop(black_box(
                    query::stats_of(store, StatsBy::Day, Some(since), outcomes).unwrap(),
                ))
            }),
        ),
        (
            "overview_paths_30d",
            Box::new(|| {
                drop(black_box(
                    query::stats_of(store, StatsBy::All, Some(since), paths).unwrap(),
                ))
            }),
        ),
        (
            "list_failing_path",
            Box::new(|| {
                let f = SessionFilter {
                    failing_path: Some("/confidence".to_owned()),
                    limit: 50,
                    ..SessionFilter::default()
                };
                drop(black_box(query::sessions(store, &f).unwrap()));
            }),
        ),
        (
            "list_invalid",
            Box::new(|| {
                let f = SessionFilter {
                    verdict: Some("invalid".to_owned()),
                    limit: 50,
                    ..SessionFilter::default()
                };
                drop(black_box(query::sessions(store, &f).unwrap()));
            }),
        ),
    ];
    for (name, f) in &cases {
        let (median, max) = time(f.as_ref());
        eprintln!("stats/{label}/{name}: median {median:.1} ms, max {max:.1} ms ({RUNS} runs)");
    }
}

/// Writes `WRITES` sessions (from number `from` on), one transaction each,
/// through `old` and `new` alike, alternating in rounds of 100 so that a
/// change in the machine's load falls on both; their total times in ms.
fn write_both(
    old: &mut dyn FnMut(&str),
    new: &mut dyn FnMut(&str),
    started: &str,
    from: usize,
) -> (f64, f64) {
    let mut total = [0.0; 2];
    for round in (0..WRITES).step_by(100) {
        for (k, spent) in total.iter_mut().enumerate() {
            let exec: &mut dyn FnMut(&str) = if k == 0 { &mut *old } else { &mut *new };
            let t = Instant::now();
            for i in from + round..from + round + 100 {
                exec(&format!(
                    "BEGIN; INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM (SELECT {i} AS i) g; \
                     COMMIT;",
                    session_select(started)
                ));
            }
            *spent += t.elapsed().as_secs_f64() * 1000.0;
        }
    }
    (total[0], total[1])
}

const WRITES: usize = 2_000;

/// The backfill of a previous-version SQLite store of `n` sessions, and
/// the cost of a write before and after it (a copy left unmigrated).
fn sqlite_writes(dir: &std::path::Path, n: usize) {
    let (old_path, path) = (dir.join("old.db"), dir.join("new.db"));
    // As the store opens its connections, so that the two stores' writes
    // differ by the triggers alone.
    let open = |path: &std::path::Path| {
        let c = rusqlite::Connection::open(path).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        c.pragma_update(None, "synchronous", "NORMAL").unwrap();
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        c
    };
    {
        let c = open(&old_path);
        let previous = before_outcomes(SQLITE);
        for m in previous {
            c.execute_batch(m.sql).unwrap();
        }
        c.pragma_update(None, "user_version", previous.len())
            .unwrap();
        sqlite_fill(&c, n);
        c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
    }
    std::fs::copy(&old_path, &path).unwrap();
    let t = Instant::now();
    drop(SqliteStore::open(&path).unwrap());
    let backfill = t.elapsed().as_secs_f64() * 1000.0;
    let (a, b) = (open(&old_path), open(&path));
    let (old, new) = write_both(
        &mut |sql| a.execute_batch(sql).unwrap(),
        &mut |sql| b.execute_batch(sql).unwrap(),
        SQLITE_STARTED,
        n + 1,
    );
    report("sqlite", n, backfill, old, new);
}

/// A Postgres database at the version before the outcomes with `n`
/// sessions; its URL.
fn postgres_old(n: usize) -> String {
    let url = agentshape_testkit::pg::fresh_db();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(
        "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, \
         applied_at TEXT NOT NULL)",
    )
    .unwrap();
    for m in before_outcomes(POSTGRES) {
        c.batch_execute(m.sql).unwrap();
        c.execute(
            "INSERT INTO schema_migrations VALUES ($1, $2, 'x')",
            &[&m.version, &m.name],
        )
        .unwrap();
    }
    c.batch_execute(&format!(
        "INSERT INTO sessions ({SESSION_COLUMNS}) {} FROM generate_series(1, {n}) AS i;
         INSERT INTO hook_calls ({HOOK_COLUMNS}) {}
           FROM generate_series(1, {n}, 10) AS i, generate_series(0, 2) AS k ORDER BY i, k;
         ANALYZE;",
        session_select(PG_STARTED),
        hook_select("k"),
    ))
    .unwrap();
    url
}

fn postgres_writes(n: usize) {
    let (old_url, url) = (postgres_old(n), postgres_old(n));
    let t = Instant::now();
    drop(PgStore::open(&url).unwrap());
    let backfill = t.elapsed().as_secs_f64() * 1000.0;
    let connect = |url: &str| postgres::Client::connect(url, postgres::NoTls).unwrap();
    let (mut a, mut b) = (connect(&old_url), connect(&url));
    let (old, new) = write_both(
        &mut |sql| a.batch_execute(sql).unwrap(),
        &mut |sql| b.batch_execute(sql).unwrap(),
        PG_STARTED,
        n + 1,
    );
    report("postgres", n, backfill, old, new);
}

fn report(label: &str, n: usize, backfill: f64, old: f64, new: f64) {
    let per = |ms: f64| ms * 1000.0 / WRITES as f64;
    eprintln!("stats/{label}/backfill: {backfill:.0} ms for {n} sessions (migration, once)");
    eprintln!(
        "stats/{label}/write: {:.0} us per session without the outcome triggers, {:.0} us with \
         them ({:.2}x; {WRITES} sessions, one transaction each, alternating)",
        per(old),
        per(new),
        new / old
    );
}

fn main() {
    let n = std::env::var("STATS_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000usize);
    let only = std::env::var("STATS_ONLY").unwrap_or_default();
    let writes = std::env::var("STATS_WRITES").map_or(true, |v| v != "0");
    if only != "postgres" {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(&dir.path().join("stats.db"), n);
        run("sqlite", &store, n);
        drop(store);
        if writes {
            sqlite_writes(dir.path(), n);
        }
    }
    if only != "sqlite" {
        let pg = postgres(n);
        run("postgres", &pg, n);
        drop(pg);
        if writes {
            postgres_writes(n);
        }
    }
}
