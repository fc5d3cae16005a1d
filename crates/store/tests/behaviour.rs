//! One behaviour suite for both backends: every test here is a plain
//! function over a [`Place`] (a fresh SQLite file, or a fresh database on the
//! throwaway Postgres of `agentshape_testkit::pg`), and `both!` runs it on
//! each. Rows are compared as text, which both backends print the same way.

use std::sync::Arc;

use agentshape_store::{
    Claim, ClaimRequest, CopyReport, ErrorKind, FeedEntry, LeaseState, NativeMark, NewMemory,
    PgStore, Session, SqliteStore, Store, StoreUrl, ToolCount, copy,
};

use super::record;

/// A store the backends can both be: the [`Store`] trait plus rows as text.
pub trait Sql: Store + agentshape_store::copy::Copyable {
    /// Every value of the query's rows as text (`NULL` for null).
    fn rows(&self, sql: &str) -> Vec<Vec<String>>;
}

impl Sql for SqliteStore {
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        agentshape_testkit::sqlite::rows(self.connection(), sql)
    }
}

impl Sql for PgStore {
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        self.query_text(sql).unwrap()
    }
}

/// Where a test's store lives; `open` may be called many times (threads,
/// reopening).
pub struct Place {
    _dir: Option<tempfile::TempDir>,
    /// The `--store` value.
    pub url: String,
}

impl Place {
    fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("agentshape.db").display());
        Place {
            _dir: Some(dir),
            url,
        }
    }

    fn postgres() -> Self {
        Place {
            _dir: None,
            url: agentshape_testkit::pg::fresh_db(),
        }
    }

    /// Open for writing (migrating).
    pub fn open(&self) -> Box<dyn Sql> {
        match StoreUrl::parse(&self.url).unwrap() {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open(&p).unwrap()),
            StoreUrl::Postgres(u) => Box::new(PgStore::open(&u).unwrap()),
        }
    }
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $( #[test] fn $name() { super::$name(&super::Place::sqlite()) } )*
        }
        mod on_postgres {
            $( #[test] fn $name() { super::$name(&super::Place::postgres()) } )*
        }
    };
}

both!(
    one_session_inserts_rows_and_rejects_bad_levels_and_keys,
    same_memories_again_reinforce_up_to_one_and_same_id_is_idempotent,
    prune_deactivates_stale_memories_and_a_new_one_starts_fresh,
    escalations_are_counted_per_service_within_a_window,
    start_heartbeat_finish_is_one_row,
    reopening_applies_no_migration_and_keeps_the_rows,
    feed_after_resumes_without_gap_or_duplicate,
    a_feed_page_stops_at_the_row_that_reaches_its_bytes,
    a_numbered_feed_entry_is_stored_once_however_often_it_is_sent,
    concurrent_reinforcements_lose_no_update,
    racing_writers_of_one_session_store_it_once,
    copy_to_the_other_backend_and_back_is_idempotent,
    opening_a_new_store_from_many_threads_migrates_once,
    a_store_from_a_newer_build_is_refused,
    racing_claims_grant_exactly_the_window_allowance,
    claims_expire_unused_count_once_started_and_once_written,
    a_lease_has_one_holder_until_released_or_expired,
    racing_lease_takers_get_one_holder,
    native_save_inserts_then_updates_appends_and_resets,
    native_child_before_its_parent_gets_a_placeholder_parent,
    write_session_stores_the_native_columns_and_tools,
);

fn is_sqlite(p: &Place) -> bool {
    p.url.starts_with("sqlite:")
}

/// Note [Migrations]: racing openers of a new store apply each migration once.
fn opening_a_new_store_from_many_threads_migrates_once(p: &Place) {
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let url = p.url.clone();
            std::thread::spawn(move || {
                let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                s.write_session(&record(&format!("r{i}"), "2025-07-14T03:00:00.000Z"))
                    .unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = p.open();
    assert_eq!(s.rows("SELECT COUNT(*) FROM sessions"), vec![vec!["8"]]);
    if is_sqlite(p) {
        let latest = agentshape_store::migrate::latest(agentshape_store::migrate::SQLITE);
        assert_eq!(
            s.rows("PRAGMA user_version"),
            vec![vec![latest.to_string()]]
        );
    } else {
        assert_eq!(
            s.rows("SELECT version, name FROM schema_migrations ORDER BY version"),
            agentshape_store::migrate::POSTGRES
                .iter()
                .map(|m| vec![m.version.to_string(), m.name.to_owned()])
                .collect::<Vec<_>>()
        );
    }
}

fn a_store_from_a_newer_build_is_refused(p: &Place) {
    let s = p.open();
    if is_sqlite(p) {
        s.rows("PRAGMA user_version = 99");
    } else {
        s.rows(
            "INSERT INTO schema_migrations VALUES (99, 'future.sql', '2030-01-01T00:00:00.000Z')",
        );
    }
    drop(s);
    let url = StoreUrl::parse(&p.url).unwrap();
    for e in [url.open().err(), url.open_read_only().err()] {
        let e = e.expect("a newer schema is refused");
        assert_eq!(e.kind(), ErrorKind::TooNew, "{e}");
        assert!(e.to_string().contains("schema version 99"), "{e}");
    }
}

fn one_session_inserts_rows_and_rejects_bad_levels_and_keys(p: &Place) {
    let mut store = p.open();
    let rep = store
        .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    assert!(rep.inserted);
    assert_eq!((rep.events, rep.events_rejected), (2, 1));
    assert_eq!(
        (
            rep.memories_new,
            rep.memories_reinforced,
            rep.memories_rejected
        ),
        (2, 0, 1)
    );
    assert_eq!(
        store
            .rows("SELECT session_id, level, service, message, created_at FROM events ORDER BY id"),
        vec![
            vec![
                "s1",
                "critical",
                "jellyfin",
                "HTTP 502",
                "2025-07-14T03:00:00.000Z"
            ],
            vec![
                "s1",
                "info",
                "NULL",
                "backup done",
                "2025-07-14T03:00:00.000Z"
            ],
        ]
    );
    assert_eq!(
        store.rows(
            "SELECT service, category, observation, confidence, active, session_id, tier FROM memories ORDER BY id"
        ),
        vec![
            vec!["jellyfin", "timing", "takes 60s to restart", "0.7", "1", "s1", "1"],
            vec!["NULL", "remediation", "restart before redeploy", "0.7", "1", "s1", "1"],
        ]
    );
    assert_eq!(
        store.rows("SELECT session_id, name, status, detail FROM services_checked"),
        vec![vec!["s1", "jellyfin", "down", "502"]]
    );
}

fn same_memories_again_reinforce_up_to_one_and_same_id_is_idempotent(p: &Place) {
    let mut store = p.open();
    store
        .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    // Writing the same session id again adds nothing (idempotent ingest).
    let again = store
        .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    assert!(!again.inserted);
    assert_eq!(store.rows("SELECT COUNT(*) FROM events"), vec![vec!["2"]]);
    for (i, conf) in [0.8, 0.9, 1.0, 1.0].into_iter().enumerate() {
        let id = format!("s{}", i + 2);
        let rep = store
            .write_session(&record(&id, "2025-07-14T04:00:00.000Z"))
            .unwrap();
        assert_eq!((rep.memories_new, rep.memories_reinforced), (0, 2));
        assert_eq!(
            store.rows("SELECT confidence, session_id FROM memories WHERE category = 'timing'"),
            vec![vec![conf.to_string(), id.clone()]]
        );
    }
    assert_eq!(store.rows("SELECT COUNT(*) FROM memories"), vec![vec!["2"]]);
    assert_eq!(
        store.rows("SELECT COUNT(*) FROM feed WHERE kind = 'ended'"),
        vec![vec!["5"]]
    );
}

fn prune_deactivates_stale_memories_and_a_new_one_starts_fresh(p: &Place) {
    let mut store = p.open();
    store
        .write_session(&record("old", "2025-01-01T00:00:00.000Z"))
        .unwrap();
    let mut fresh = Session::new("new", "2025-07-01T00:00:00.000Z", "completed");
    fresh.memories = vec![NewMemory {
        key: "postgres:dependency".into(),
        value: "replica".into(),
    }];
    store.write_session(&fresh).unwrap();
    assert_eq!(store.prune_memories("2025-06-01T00:00:00.000Z").unwrap(), 2);
    assert_eq!(
        store.rows("SELECT category, active FROM memories ORDER BY id"),
        vec![
            vec!["timing", "0"],
            vec!["remediation", "0"],
            vec!["dependency", "1"]
        ]
    );
    let rep = store
        .write_session(&record("later", "2025-07-02T00:00:00.000Z"))
        .unwrap();
    assert_eq!((rep.memories_new, rep.memories_reinforced), (2, 0));
    let o = store.overview().unwrap();
    assert_eq!((o.active_memories, o.inactive_memories), (3, 2));
}

fn escalations_are_counted_per_service_within_a_window(p: &Place) {
    let mut store = p.open();
    store
        .write_session(&record("p", "2025-07-14T01:00:00.000Z"))
        .unwrap();
    for (id, at) in [
        ("c1", "2025-07-14T01:00:00.000Z"),
        ("c2", "2025-07-14T03:00:00.000Z"),
    ] {
        let mut child = Session::new(id, at, "completed");
        child.parent_id = Some("p".into());
        child.tier = 2;
        child.escalated_for = vec!["jellyfin".into()];
        store.write_session(&child).unwrap();
    }
    let since = |s: &str, t: &str| store.escalations_since(s, t).unwrap();
    assert_eq!(since("jellyfin", "2025-07-14T00:00:00.000Z"), 2);
    assert_eq!(since("jellyfin", "2025-07-14T02:00:00.000Z"), 1);
    assert_eq!(since("nginx", "2025-07-14T00:00:00.000Z"), 0);
    assert_eq!(store.overview().unwrap().escalations, 2);
}

fn start_heartbeat_finish_is_one_row(p: &Place) {
    let mut s = p.open();
    let mut start = Session::new("s1", "2025-07-14T03:00:00.000Z", "running");
    start.raw_log_path = Some("logs/s1.ndjson".into());
    s.start_session(&start).unwrap();
    s.start_session(&start).unwrap(); // still running: a no-op
    let o = s.overview().unwrap();
    assert_eq!(o.sessions.len(), 1);
    assert_eq!(o.sessions[0].status, "running");
    assert!(o.sessions[0].lost, "a heartbeat from 2025 is stale");
    assert_eq!(o.lost, 1);
    s.heartbeat("s1", &agentshape_store::time::now()).unwrap();
    let o = s.overview().unwrap();
    assert!(!o.sessions[0].lost);
    let report = s
        .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    assert!(report.inserted);
    assert_eq!(report.events, 2);
    assert_eq!(
        s.rows("SELECT COUNT(*), MAX(status), MAX(heartbeat_at) FROM sessions"),
        vec![vec!["1", "completed", "NULL"]]
    );
    // Finished: writing again adds nothing, starting again is refused.
    assert!(
        !s.write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
            .unwrap()
            .inserted
    );
    let err = s.start_session(&start).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    let kinds: Vec<String> = s
        .feed_after(0, 100)
        .unwrap()
        .into_iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(kinds, ["started", "ended"]);
    assert!(s.has_session("s1").unwrap());
    assert!(!s.has_session("s2").unwrap());
}

fn reopening_applies_no_migration_and_keeps_the_rows(p: &Place) {
    p.open()
        .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    let s = p.open();
    let o = s.overview().unwrap();
    assert_eq!(o.sessions_by_status, vec![("completed".to_owned(), 1)]);
    assert_eq!(
        o.events_by_level,
        vec![("critical".to_owned(), 1), ("info".to_owned(), 1)]
    );
    assert_eq!(o.active_memories, 2);
    assert!((o.memories[0].confidence - 0.7).abs() < 1e-12);
    // Read-only opens see the same.
    let ro = StoreUrl::parse(&p.url).unwrap().open_read_only().unwrap();
    assert_eq!(ro.overview().unwrap(), o);
}

/// Issue 40 §4: a page ends at the row that brings its bodies to the
/// budget, whatever the count allows; the first row always comes.
fn a_feed_page_stops_at_the_row_that_reaches_its_bytes(p: &Place) {
    let mut s = p.open();
    let entry = |len: usize| FeedEntry {
        seq: None,
        session_id: "s".into(),
        kind: "event".into(),
        body: format!("\"{}\"", "x".repeat(len - 2)),
        created_at: "2025-07-14T03:00:00.000Z".into(),
    };
    s.append_feed(&[entry(10), entry(10), entry(1000), entry(1000), entry(10)])
        .unwrap();
    let lens = |rows: Vec<agentshape_store::FeedRow>| -> Vec<usize> {
        rows.iter().map(|r| r.body.len()).collect()
    };
    assert_eq!(lens(s.feed_page(0, 100, 1020).unwrap()), [10, 10, 1000]);
    assert_eq!(
        lens(s.feed_page(0, 100, 1021).unwrap()),
        [10, 10, 1000, 1000]
    );
    assert_eq!(lens(s.feed_page(0, 2, 1 << 20).unwrap()), [10, 10]);
    assert_eq!(lens(s.feed_page(2, 100, 1).unwrap()), [1000]);
    assert!(s.feed_page(5, 100, 1).unwrap().is_empty());
}

/// Note [Feed writes land once]: a batch sent again after its write
/// landed (its answer lost) is stored once, and so are its secrets' rows;
/// an overlapping batch adds only what is new, in order; the numbers are
/// per session; unnumbered entries are written each time, as before.
fn a_numbered_feed_entry_is_stored_once_however_often_it_is_sent(p: &Place) {
    let mut s = p.open();
    let secret = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
    let entry = |session: &str, seq: Option<i64>, n: i64| FeedEntry {
        session_id: session.into(),
        kind: "event".into(),
        body: if n == 1 {
            serde_json::json!({ "n": n, "text": format!("token {secret}") })
        } else {
            serde_json::json!({ "n": n })
        }
        .to_string(),
        created_at: "2025-07-14T03:00:00.000Z".into(),
        seq,
    };
    let numbered = |session: &str, from: i64, to: i64| -> Vec<FeedEntry> {
        (from..to).map(|i| entry(session, Some(i), i)).collect()
    };
    s.append_feed(&numbered("a", 0, 5)).unwrap();
    s.append_feed(&numbered("a", 0, 5)).unwrap();
    s.append_feed_now(&numbered("a", 3, 8)).unwrap();
    s.append_feed(&numbered("a", 7, 8)).unwrap();
    s.append_feed(&[entry("b", Some(0), 100)]).unwrap();
    s.append_feed(&[entry("u", None, 200), entry("u", None, 200)])
        .unwrap();
    s.append_feed(&[entry("u", None, 200)]).unwrap();
    let ns = |session: &str| -> Vec<String> {
        s.rows(&format!(
            "SELECT body FROM feed WHERE session_id = '{session}' ORDER BY id"
        ))
        .into_iter()
        .map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r[0]).unwrap();
            v["n"].to_string()
        })
        .collect()
    };
    assert_eq!(ns("a"), ["0", "1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(ns("b"), ["100"]);
    assert_eq!(ns("u"), ["200", "200", "200"]);
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM secrets_found WHERE session_id = 'a'"),
        vec![vec!["1"]]
    );
    assert_eq!(
        s.rows("SELECT seq FROM feed WHERE session_id = 'a' ORDER BY id"),
        (0..8).map(|i| vec![i.to_string()]).collect::<Vec<_>>()
    );
}

fn feed_after_resumes_without_gap_or_duplicate(p: &Place) {
    drop(p.open());
    let place = Arc::new(p.url.clone());
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = Arc::clone(&place);
            std::thread::spawn(move || {
                let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                for b in 0..10 {
                    let batch: Vec<FeedEntry> = (0..5)
                        .map(|i| FeedEntry {
                            seq: None,
                            session_id: format!("w{w}"),
                            kind: "line".into(),
                            body: format!("{{\"n\":{}}}", b * 5 + i),
                            created_at: "2025-07-14T03:00:00.000Z".into(),
                        })
                        .collect();
                    s.append_feed(&batch).unwrap();
                }
            })
        })
        .collect();
    // A reader tails while the writers append.
    let reader = p.open();
    let mut seen = Vec::new();
    let mut last = 0;
    let mut done = false;
    while !done {
        done = writers.iter().all(std::thread::JoinHandle::is_finished);
        for row in reader.feed_after(last, 7).unwrap() {
            assert!(row.id > last);
            last = row.id;
            seen.push(row);
        }
        if !done {
            std::thread::yield_now();
        }
    }
    loop {
        let rows = reader.feed_after(last, 7).unwrap();
        if rows.is_empty() {
            break;
        }
        for row in rows {
            last = row.id;
            seen.push(row);
        }
    }
    for w in writers {
        w.join().unwrap();
    }
    // Every stored row was seen once, in id order: nothing was skipped by
    // tailing (Note [Feed order on Postgres]).
    let stored: Vec<String> = reader
        .rows("SELECT id FROM feed ORDER BY id")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let ids: Vec<String> = seen.iter().map(|r| r.id.to_string()).collect();
    assert_eq!(ids.len(), 200);
    assert_eq!(ids, stored, "no gap, no duplicate");
    for w in 0..4 {
        let ns: Vec<String> = seen
            .iter()
            .filter(|r| r.session_id == format!("w{w}"))
            .map(|r| r.body.clone())
            .collect();
        let want: Vec<String> = (0..50).map(|n| format!("{{\"n\":{n}}}")).collect();
        assert_eq!(ns, want, "each writer's entries in order");
    }
}

/// Issue 11: memories reinforced concurrently by two sessions end with the
/// right confidence. Two threads write N sessions each; session `i` of
/// either thread teaches `svc{i}:timing`, so each key is learned once
/// (0.7) and reinforced once (0.8) in the first round, then reinforced
/// twice more (1.0) in the second: a lost update or a duplicate row shows.
fn concurrent_reinforcements_lose_no_update(p: &Place) {
    const N: usize = 30;
    drop(p.open());
    for (round, want) in [(0, "0.8"), (1, "1")] {
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let url = p.url.clone();
                std::thread::spawn(move || {
                    let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                    let (mut new, mut reinforced) = (0, 0);
                    for i in 0..N {
                        let mut r = Session::new(
                            &format!("r{round}t{t}s{i}"),
                            "2025-07-14T03:00:00.000Z",
                            "completed",
                        );
                        r.memories = vec![NewMemory {
                            key: format!("svc{i}:timing"),
                            value: format!("from {t}"),
                        }];
                        let rep = s.write_session(&r).unwrap();
                        new += rep.memories_new;
                        reinforced += rep.memories_reinforced;
                    }
                    (new, reinforced)
                })
            })
            .collect();
        let (new, reinforced) = threads
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        if round == 0 {
            assert_eq!((new, reinforced), (N, N));
        } else {
            assert_eq!((new, reinforced), (0, 2 * N));
        }
        let s = p.open();
        assert_eq!(
            s.rows("SELECT COUNT(*), COUNT(DISTINCT service), MIN(confidence), MAX(confidence) FROM memories WHERE active = 1"),
            vec![vec![N.to_string(), N.to_string(), want.to_owned(), want.to_owned()]],
            "round {round}"
        );
    }
}

/// Two processes finishing the same session id (a `run` and an `ingest`
/// of its log) store it once.
fn racing_writers_of_one_session_store_it_once(p: &Place) {
    drop(p.open());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let url = p.url.clone();
            std::thread::spawn(move || {
                let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                (0..10)
                    .filter(|i| {
                        s.write_session(&record(&format!("same{i}"), "2025-07-14T03:00:00.000Z"))
                            .unwrap()
                            .inserted
                    })
                    .count()
            })
        })
        .collect();
    let inserted: usize = threads.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(inserted, 10);
    let s = p.open();
    assert_eq!(
        s.rows("SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM events), (SELECT COUNT(*) FROM feed)"),
        vec![vec!["10", "20", "10"]]
    );
}

/// A store with every kind of row: sessions (one running, a parent and an
/// escalated child, written out of order), events, memories (one pruned),
/// services, escalations, feed rows (one of no session).
fn fill(s: &mut dyn Sql) {
    let mut child = Session::new("child", "2025-07-14T01:00:00.000Z", "completed");
    child.parent_id = Some("parent".into());
    child.tier = 2;
    child.escalated_for = vec!["jellyfin".into()];
    child.output = Some(serde_json::json!({"summary": "ok", "n": 1.5}));
    child.cost_usd = Some(0.25);
    s.write_session(&record("parent", "2025-07-14T01:00:00.000Z"))
        .unwrap();
    s.write_session(&child).unwrap();
    s.write_session(&record("old", "2025-01-01T00:00:00.000Z"))
        .unwrap();
    s.prune_memories("2025-01-02T00:00:00.000Z").unwrap();
    s.write_session(&record("fresh", "2025-07-15T00:00:00.000Z"))
        .unwrap();
    let mut running = Session::new("run", "2025-07-16T00:00:00.000Z", "running");
    running.raw_log_path = Some("logs/run.ndjson".into());
    s.start_session(&running).unwrap();
    let (native, lines, mark) = native_session("nat", 2, 0);
    s.save_native(&native, &lines, &mark).unwrap();
    s.append_feed(&[
        FeedEntry {
            seq: Some(0),
            session_id: "run".into(),
            kind: "line".into(),
            body: "{\"n\":1}".into(),
            created_at: "2025-07-16T00:00:01.000Z".into(),
        },
        FeedEntry {
            seq: None,
            session_id: "ghost".into(),
            kind: "line".into(),
            body: "{}".into(),
            created_at: "2025-07-16T00:00:01.000Z".into(),
        },
    ])
    .unwrap();
}

/// A source from before numbered feed entries (read-only, so not
/// migrated) has no `feed.seq`: its feed rows are copied without one.
#[test]
fn a_store_from_before_numbered_feed_entries_copies_its_feed() {
    use agentshape_store::migrate::SQLITE;
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    let c = rusqlite::Connection::open(&old).unwrap();
    let at = SQLITE
        .iter()
        .position(|m| m.name == "0014_feed_seq.sql")
        .unwrap();
    for m in &SQLITE[..at] {
        c.execute_batch(m.sql).unwrap();
    }
    c.pragma_update(None, "user_version", at).unwrap();
    c.execute_batch(
        "INSERT INTO sessions (id, tier, status, started_at) \
         VALUES ('s1', 1, 'completed', '2025-07-16T00:00:00.000Z');
         INSERT INTO feed (session_id, kind, body, created_at) \
         VALUES ('s1', 'line', '{\"n\":1}', '2025-07-16T00:00:01.000Z');",
    )
    .unwrap();
    drop(c);
    let src = SqliteStore::open_read_only(&old).unwrap();
    let place = Place::sqlite();
    let mut dst = place.open();
    let report = copy(&src, &mut *dst).unwrap();
    assert_eq!((report.sessions, report.feed), (1, 1));
    assert_eq!(
        dst.rows("SELECT session_id, body, seq FROM feed"),
        vec![vec!["s1", "{\"n\":1}", "NULL"]]
    );
}

/// Every logical row of a store, ids left out (each store numbers its own).
fn dump(s: &dyn Sql) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for sql in [
        "SELECT id, parent_id, tier, profile, agent, model, status, exit_code, started_at, ended_at, cost_usd, duration_ms, num_turns, input_tokens, output_tokens, extraction_method, error, error_category, summary, escalation, raw_log_path, heartbeat_at, output, verdict, project, git_branch, agent_version, cache_read_tokens, cache_write_tokens, CASE WHEN cost_estimated THEN 1 ELSE 0 END, source_path FROM sessions ORDER BY id",
        "SELECT session_id, tool, calls, errors FROM session_tools ORDER BY session_id, tool",
        "SELECT path, session_id, agent, dev, inode, size, byte_offset, mtime_ms, lines, updated_at FROM native_files ORDER BY path",
        "SELECT session_id, level, service, message, created_at FROM events ORDER BY session_id, id",
        "SELECT service, category, observation, confidence, active, created_at, updated_at, session_id, tier FROM memories ORDER BY created_at, category",
        "SELECT session_id, name, status, detail FROM services_checked ORDER BY session_id, id",
        "SELECT parent_id, child_id, service, tier, created_at FROM escalations ORDER BY child_id, id",
        "SELECT session_id, kind, body, created_at, seq FROM feed WHERE session_id <> 'ghost' ORDER BY session_id, id",
    ] {
        out.push(vec![format!("-- {sql}")]);
        out.extend(s.rows(sql));
    }
    out
}

/// `store copy` (issue 11 item 4): to the other backend, then back into a
/// third store; every logical row arrives, a second copy adds nothing.
fn copy_to_the_other_backend_and_back_is_idempotent(p: &Place) {
    let mut src = p.open();
    fill(&mut *src);
    let other = if p.url.starts_with("sqlite:") {
        Place::postgres()
    } else {
        Place::sqlite()
    };
    let mut dst = other.open();
    let first = copy(&*src, &mut *dst).unwrap();
    assert_eq!(
        first,
        CopyReport {
            sessions: 6,
            sessions_skipped: 0,
            events: 6,
            services_checked: 3,
            escalations: 1,
            feed: 8,
            session_tools: 2,
            native_files: 1,
            hook_calls: 0,
            feed_orphans: 1,
            memories: 4,
            memories_skipped: 0,
            memory_conflicts: 0,
            alert_firings: 0,
            alert_firings_skipped: 0,
        }
    );
    assert_eq!(dump(&*dst), dump(&*src));
    let again = copy(&*src, &mut *dst).unwrap();
    assert_eq!(again.added(), 0, "{again:?}");
    assert_eq!((again.sessions_skipped, again.memories_skipped), (6, 4));
    assert_eq!(dump(&*dst), dump(&*src));
    // And back, into a fresh store of the first kind.
    let third = if p.url.starts_with("sqlite:") {
        Place::sqlite()
    } else {
        Place::postgres()
    };
    let mut back = third.open();
    copy(&*dst, &mut *back).unwrap();
    assert_eq!(dump(&*back), dump(&*src));
    // The copy is a working store: the running session finishes there.
    let rep = back
        .write_session(&record("run", "2025-07-16T00:00:00.000Z"))
        .unwrap();
    assert!(rep.inserted);
    assert_eq!(
        rep.memories_reinforced, 2,
        "the copied active memories are reinforced"
    );
}

/// A claim at `now` for `services`, child `child`, window from the epoch,
/// at most `max` per service, expiring a minute after `now`.
fn claim(child: &str, services: &[&str], max: u64, now: &str) -> ClaimRequest {
    let ms = agentshape_store::time::parse_ms(now).unwrap();
    ClaimRequest {
        parent_id: "p".into(),
        child_id: child.into(),
        tier: 2,
        max_tier: 3,
        services: services.iter().map(|s| (*s).to_owned()).collect(),
        since: "2025-01-01T00:00:00.000Z".into(),
        max_per_window: max,
        holder: "test".into(),
        now: now.into(),
        expires_at: agentshape_store::time::format_ms(ms + 60_000),
    }
}

/// Note [Escalation claims]: eight supervisors racing to escalate the same
/// services get exactly the window's allowance between them, on both
/// backends (a read-then-write cooldown grants up to eight).
fn racing_claims_grant_exactly_the_window_allowance(p: &Place) {
    drop(p.open());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let url = p.url.clone();
            std::thread::spawn(move || {
                let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                (0..5)
                    .filter(|i| {
                        let c = claim(
                            &format!("c{t}-{i}"),
                            &["nginx", "jellyfin", "nginx"],
                            3,
                            "2025-07-14T03:00:00.000Z",
                        );
                        let got = s.claim_escalation(&c).unwrap();
                        if let Claim::Cooldown { count, .. } = &got {
                            assert_eq!(*count, 3);
                        }
                        assert_ne!(got, Claim::MaxTier);
                        got == Claim::Granted
                    })
                    .count()
            })
        })
        .collect();
    let granted: usize = threads.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(granted, 3);
    let s = p.open();
    assert_eq!(
        s.rows("SELECT service, COUNT(*), COUNT(DISTINCT child_id) FROM escalation_claims GROUP BY service ORDER BY service"),
        vec![vec!["jellyfin", "3", "3"], vec!["nginx", "3", "3"]]
    );
}

/// A claim counts while unexpired; expired, only if its child session
/// started (its supervisor died before the child ran otherwise); once the
/// child's own `escalations` row exists, once. The max tier and the window
/// start are honoured; a refusal writes nothing.
fn claims_expire_unused_count_once_started_and_once_written(p: &Place) {
    let mut s = p.open();
    s.write_session(&record("p", "2025-07-14T03:00:00.000Z"))
        .unwrap();
    let at = |min: u32| format!("2025-07-14T04:{min:02}:00.000Z");
    assert_eq!(
        s.claim_escalation(&claim("c1", &["jellyfin"], 1, &at(0)))
            .unwrap(),
        Claim::Granted
    );
    // Unexpired: it counts.
    assert_eq!(
        s.claim_escalation(&claim("c2", &["jellyfin"], 1, &at(0)))
            .unwrap(),
        Claim::Cooldown {
            service: "jellyfin".into(),
            count: 1
        }
    );
    // Expired, and c1 never started: it no longer blocks.
    assert_eq!(
        s.claim_escalation(&claim("c3", &["jellyfin"], 1, &at(2)))
            .unwrap(),
        Claim::Granted
    );
    // c3 starts (its `running` row), then its claim expires: still counts.
    let mut child = Session::new("c3", &at(2), "running");
    child.parent_id = Some("p".into());
    child.tier = 2;
    child.escalated_for = vec!["jellyfin".into()];
    s.start_session(&child).unwrap();
    let refused = Claim::Cooldown {
        service: "jellyfin".into(),
        count: 1,
    };
    assert_eq!(
        s.claim_escalation(&claim("c4", &["jellyfin"], 1, &at(9)))
            .unwrap(),
        refused
    );
    // c3 finishes: its `escalations` row replaces the claim, not adds to it.
    child.status = "completed".into();
    s.write_session(&child).unwrap();
    assert_eq!(
        s.escalations_since("jellyfin", "2025-01-01T00:00:00.000Z")
            .unwrap(),
        1
    );
    assert_eq!(
        s.claim_escalation(&claim("c5", &["jellyfin"], 1, &at(9)))
            .unwrap(),
        refused
    );
    assert_eq!(
        s.claim_escalation(&claim("c5", &["jellyfin"], 2, &at(9)))
            .unwrap(),
        Claim::Granted
    );
    // A later window start leaves everything out.
    let mut late = claim("c6", &["jellyfin"], 1, &at(11));
    late.since = at(10);
    assert_eq!(s.claim_escalation(&late).unwrap(), Claim::Granted);
    let mut high = claim("c7", &["nginx"], 1, &at(9));
    high.tier = 4;
    assert_eq!(s.claim_escalation(&high).unwrap(), Claim::MaxTier);
    assert_eq!(
        s.rows("SELECT child_id FROM escalation_claims ORDER BY id"),
        vec![vec!["c1"], vec!["c3"], vec!["c5"], vec!["c6"]]
    );
}

fn held(state: &LeaseState) -> bool {
    matches!(state, LeaseState::Held { .. })
}

/// When a held lease lapses; `None` when it is someone else's.
fn held_until(state: LeaseState) -> Option<String> {
    match state {
        LeaseState::Held { expires_at } => Some(expires_at),
        LeaseState::Busy { .. } => None,
    }
}

/// Note [Supervisor leases]: one holder at a time; the holder renews; a
/// release by someone else does nothing; an expired lease is taken over.
fn a_lease_has_one_holder_until_released_or_expired(p: &Place) {
    let mut s = p.open();
    let first = held_until(s.acquire_lease("cycle", "a", 60_000).unwrap()).unwrap();
    assert_eq!(
        s.acquire_lease("cycle", "b", 60_000).unwrap(),
        LeaseState::Busy {
            holder: "a".into(),
            expires_at: first.clone()
        }
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    let renewed = held_until(s.acquire_lease("cycle", "a", 60_000).unwrap()).unwrap();
    assert!(renewed > first, "{renewed} after {first}");
    assert!(held(&s.acquire_lease("other", "b", 60_000).unwrap()));
    assert!(!s.release_lease("cycle", "b").unwrap());
    assert!(s.release_lease("cycle", "a").unwrap());
    assert!(held(&s.acquire_lease("cycle", "b", 1).unwrap()));
    // b's lease lapses (a hang guard, not a speed check: any wait past 1 ms).
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(held(&s.acquire_lease("cycle", "a", 60_000).unwrap()));
    assert!(!held(&s.acquire_lease("cycle", "b", 60_000).unwrap()));
    assert_eq!(
        s.rows("SELECT name, holder FROM leases ORDER BY name"),
        vec![vec!["cycle", "a"], vec!["other", "b"]]
    );
}

/// Eight supervisors starting at once: one holds the lease.
fn racing_lease_takers_get_one_holder(p: &Place) {
    drop(p.open());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let url = p.url.clone();
            std::thread::spawn(move || {
                let mut s = StoreUrl::parse(&url).unwrap().open().unwrap();
                held(&s.acquire_lease("cycle", &format!("h{t}"), 60_000).unwrap())
            })
        })
        .collect();
    let holders = threads
        .into_iter()
        .filter_map(|h| h.join().unwrap().then_some(()))
        .count();
    assert_eq!(holders, 1);
}

/// A native session `id` as an importer would save it after reading
/// `lines` lines from `from` (feed rows numbered from there).
fn native_session(id: &str, lines: u64, from: u64) -> (Session, Vec<FeedEntry>, NativeMark) {
    let mut r = Session::new(id, "2026-01-02T03:04:05.000Z", "completed");
    r.agent = Some("claude-code".into());
    r.model = Some("claude-sonnet-4-5".into());
    r.project = Some("/home/u/proj".into());
    r.git_branch = Some("main".into());
    r.agent_version = Some("2.1.23".into());
    let n = agentshape_store::count(from + lines);
    r.input_tokens = 10 * n;
    r.output_tokens = 5 * n;
    r.cache_read_tokens = 1000 * n;
    r.cache_write_tokens = 100;
    r.cost_usd = Some(0.5);
    r.cost_estimated = true;
    r.num_turns = Some(n);
    r.source_path = Some(format!("/home/u/.claude/projects/p/{id}.jsonl"));
    r.ended_at = Some("2026-01-02T03:10:00.000Z".into());
    r.tools = vec![
        ToolCount {
            tool: "Bash".into(),
            calls: from + lines,
            errors: 1,
        },
        ToolCount {
            tool: "Read".into(),
            calls: 2,
            errors: 0,
        },
    ];
    let feed = (from..from + lines)
        .map(|n| FeedEntry {
            seq: None,
            session_id: id.into(),
            kind: "event".into(),
            body: format!("{{\"n\":{n}}}"),
            created_at: "2026-01-02T03:05:00.000Z".into(),
        })
        .collect();
    let mark = NativeMark {
        path: format!("/home/u/.claude/projects/p/{id}.jsonl"),
        session_id: id.into(),
        agent: "claude-code".into(),
        dev: u64::MAX - 3,
        inode: 1 << 40,
        size: 100 * (from + lines),
        offset: 100 * (from + lines),
        mtime_ms: 1_767_323_045_000,
        lines: from + lines,
        updated_at: "2026-01-02T03:10:01.000Z".into(),
        reset: false,
        expect_offset: (from > 0).then_some(100 * from),
    };
    (r, feed, mark)
}

/// Note [Import marks]: the first pass inserts, a grown file appends only
/// its new lines and updates the aggregates, a re-read whole replaces the
/// feed; the marks read back exactly (a device number above `i64::MAX`
/// too) and another session's feed is untouched.
fn native_save_inserts_then_updates_appends_and_resets(p: &Place) {
    let mut s = p.open();
    assert_eq!(s.native_marks().unwrap(), vec![]);
    s.append_feed(&[FeedEntry {
        seq: None,
        session_id: "other".into(),
        kind: "line".into(),
        body: "{}".into(),
        created_at: "2026-01-02T03:04:05.000Z".into(),
    }])
    .unwrap();
    let (r, feed, mark) = native_session("n1", 3, 0);
    let rep = s.save_native(&r, &feed, &mark).unwrap();
    assert!(rep.inserted);
    assert_eq!((rep.feed, rep.feed_dropped), (3, 0));
    let cols = "SELECT status, agent, model, project, git_branch, agent_version, input_tokens, \
        cache_read_tokens, cache_write_tokens, CASE WHEN cost_estimated THEN 1 ELSE 0 END, \
        source_path, num_turns FROM sessions WHERE id = 'n1'";
    assert_eq!(
        s.rows(cols),
        vec![vec![
            "completed",
            "claude-code",
            "claude-sonnet-4-5",
            "/home/u/proj",
            "main",
            "2.1.23",
            "30",
            "3000",
            "100",
            "1",
            "/home/u/.claude/projects/p/n1.jsonl",
            "3"
        ]]
    );
    assert_eq!(s.native_marks().unwrap(), vec![mark.clone()]);
    assert_eq!(s.native_mark(&mark.path).unwrap(), Some(mark.clone()));
    assert_eq!(s.native_mark("/nowhere").unwrap(), None);

    // Grown by two lines. A save that continues another mark (a second
    // importer with a stale mark) writes nothing.
    let (mut r2, feed2, mut mark2) = native_session("n1", 2, 3);
    r2.status = "error".into();
    mark2.expect_offset = Some(200);
    assert!(s.save_native(&r2, &feed2, &mark2).unwrap().conflict);
    mark2.expect_offset = None;
    assert!(s.save_native(&r2, &feed2, &mark2).unwrap().conflict);
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM feed WHERE session_id = 'n1'"),
        vec![vec!["3"]]
    );
    mark2.expect_offset = Some(300);
    let rep = s.save_native(&r2, &feed2, &mark2).unwrap();
    assert!(!rep.inserted && !rep.conflict);
    assert_eq!(s.rows("SELECT COUNT(*) FROM sessions"), vec![vec!["1"]]);
    assert_eq!(
        s.rows("SELECT body FROM feed WHERE session_id = 'n1' ORDER BY id"),
        (0..5)
            .map(|n| vec![format!("{{\"n\":{n}}}")])
            .collect::<Vec<_>>()
    );
    assert_eq!(
        s.rows("SELECT status, input_tokens, num_turns FROM sessions WHERE id = 'n1'"),
        vec![vec!["error", "50", "5"]]
    );
    assert_eq!(
        s.rows(
            "SELECT tool, calls, errors FROM session_tools WHERE session_id = 'n1' ORDER BY tool"
        ),
        vec![vec!["Bash", "5", "1"], vec!["Read", "2", "0"]]
    );
    mark2.expect_offset = None;
    assert_eq!(s.native_mark(&mark.path).unwrap(), Some(mark2));

    // Replaced: re-read whole (two lines now), once.
    let (r3, feed3, mut mark3) = native_session("n1", 2, 0);
    mark3.reset = true;
    mark3.inode += 1;
    let rep = s.save_native(&r3, &feed3, &mark3).unwrap();
    assert_eq!((rep.inserted, rep.feed, rep.feed_dropped), (false, 2, 5));
    assert_eq!(
        s.rows("SELECT body FROM feed WHERE session_id = 'n1' ORDER BY id"),
        vec![vec!["{\"n\":0}"], vec!["{\"n\":1}"]]
    );
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM feed WHERE session_id = 'other'"),
        vec![vec!["1"]]
    );
    mark3.reset = false;
    assert_eq!(s.native_marks().unwrap(), vec![mark3]);
    if !is_sqlite(p) {
        // postgres/0003_native.sql: the feed's bodies are compressed with lz4.
        assert_eq!(
            s.rows(
                "SELECT attcompression FROM pg_attribute \
                 WHERE attrelid = 'feed'::regclass AND attname = 'body'"
            ),
            vec![vec!["l"]]
        );
    }
}

/// A sub-agent's file read before its parent's: the parent gets a
/// placeholder row (the foreign key holds), filled in by its own import.
fn native_child_before_its_parent_gets_a_placeholder_parent(p: &Place) {
    let mut s = p.open();
    let (mut child, feed, mark) = native_session("kid", 1, 0);
    child.parent_id = Some("mum".into());
    let rep = s.save_native(&child, &feed, &mark).unwrap();
    assert!(rep.inserted && rep.placeholder_parent);
    assert_eq!(
        s.rows("SELECT id, status, agent FROM sessions WHERE id = 'mum'"),
        vec![vec!["mum", "running", "claude-code"]]
    );
    // Again: the parent is there now.
    let mut again = mark.clone();
    again.expect_offset = Some(mark.offset);
    let rep = s.save_native(&child, &[], &again).unwrap();
    assert!(!rep.inserted && !rep.placeholder_parent);
    let (parent, feed, mark) = native_session("mum", 2, 0);
    let rep = s.save_native(&parent, &feed, &mark).unwrap();
    assert!(!rep.inserted);
    assert_eq!(
        s.rows("SELECT id, parent_id, status, model FROM sessions ORDER BY id"),
        vec![
            vec!["kid", "mum", "completed", "claude-sonnet-4-5"],
            vec!["mum", "NULL", "completed", "claude-sonnet-4-5"]
        ]
    );
    assert_eq!(s.native_marks().unwrap().len(), 2);
}

/// `write_session` (run, ingest) stores the same new columns and tools.
fn write_session_stores_the_native_columns_and_tools(p: &Place) {
    let mut s = p.open();
    let (mut r, _, _) = native_session("w1", 1, 0);
    r.tools.push(ToolCount {
        tool: "Bash".into(),
        calls: 2,
        errors: 2,
    });
    assert!(s.write_session(&r).unwrap().inserted);
    assert_eq!(
        s.rows(
            "SELECT project, git_branch, agent_version, cache_read_tokens, cache_write_tokens, \
            CASE WHEN cost_estimated THEN 1 ELSE 0 END, source_path FROM sessions"
        ),
        vec![vec![
            "/home/u/proj",
            "main",
            "2.1.23",
            "1000",
            "100",
            "1",
            "/home/u/.claude/projects/p/w1.jsonl"
        ]]
    );
    assert_eq!(
        s.rows("SELECT tool, calls, errors FROM session_tools ORDER BY tool"),
        vec![vec!["Bash", "3", "3"], vec!["Read", "2", "0"]]
    );
}
