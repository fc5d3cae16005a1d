//! The store checked with SQL queries: the behaviour suite on both backends
//! (`behaviour`), then what only SQLite has (files, WAL, `user_version`,
//! the dashboard's read model).
#![allow(clippy::unwrap_used)] // tests unwrap: a failure is the test failing

mod alerts;
mod behaviour;
mod hooks;
mod queries;
mod secrets_door;
mod stats;
mod tls;
mod usage;

use agentshape_store::{NewEvent, NewMemory, ServiceCheck, Session, SqliteStore, Store};

pub(crate) fn record(id: &str, at: &str) -> Session {
    let mut r = Session::new(id, at, "completed");
    r.ended_at = Some(at.to_owned());
    r.events = vec![
        NewEvent {
            level: "critical".into(),
            service: Some("jellyfin".into()),
            message: "HTTP 502".into(),
        },
        NewEvent {
            level: "info".into(),
            service: None,
            message: "backup done".into(),
        },
        NewEvent {
            level: "Critical".into(),
            service: None,
            message: "bad level".into(),
        },
    ];
    r.memories = vec![
        NewMemory {
            key: "jellyfin:timing".into(),
            value: "takes 60s to restart".into(),
        },
        NewMemory {
            key: "remediation".into(),
            value: "restart before redeploy".into(),
        },
        NewMemory {
            key: "some random string".into(),
            value: "unmappable".into(),
        },
    ];
    r.services = vec![ServiceCheck {
        name: "jellyfin".into(),
        status: "down".into(),
        detail: Some("502".into()),
    }];
    r
}

fn rows(store: &SqliteStore, sql: &str) -> Vec<Vec<String>> {
    agentshape_testkit::sqlite::rows(store.connection(), sql)
}

#[test]
fn file_store_uses_wal_and_reopens_without_remigrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    {
        let mut store = SqliteStore::open(&path).unwrap();
        store
            .write_session(&record("s1", "2025-07-14T03:00:00.000Z"))
            .unwrap();
        assert_eq!(rows(&store, "PRAGMA journal_mode"), vec![vec!["wal"]]);
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        rows(&store, "PRAGMA user_version"),
        vec![vec![
            agentshape_store::migrate::latest(agentshape_store::migrate::SQLITE).to_string()
        ]]
    );
    assert!(store.has_session("s1").unwrap());
    let o = store.overview().unwrap();
    assert_eq!(o.sessions_by_status, vec![("completed".to_owned(), 1)]);
    assert_eq!(o.active_memories, 2);
}

mod many_writers {
    use super::*;
    use agentshape_store::{ErrorKind, FeedEntry};

    #[test]
    fn migrations_racing_on_a_new_file_apply_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("race.db");
        let handles: Vec<_> = (0..12)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut s = SqliteStore::open(&path).unwrap();
                    let rec = record(&format!("r{i}"), "2025-07-14T03:00:00.000Z");
                    s.write_session(&rec).unwrap();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let s = SqliteStore::open(&path).unwrap();
        let n: i64 = s
            .connection()
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 12);
        let v: i64 = s
            .connection()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(
            v,
            agentshape_store::migrate::latest(agentshape_store::migrate::SQLITE)
        );
    }

    #[test]
    fn append_feed_now_fails_fast_on_a_busy_store_and_writes_later() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("now.db");
        let mut s = SqliteStore::open(&path).unwrap();
        let entry = FeedEntry {
            seq: None,
            session_id: "s".into(),
            kind: "event".into(),
            body: "{}".into(),
            created_at: "2025-07-14T03:00:00.000Z".into(),
        };
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let t = std::time::Instant::now();
        let err = s.append_feed_now(std::slice::from_ref(&entry)).unwrap_err();
        assert!(err.is_busy(), "{err}");
        // The heartbeat's patience (250 ms), not the write's (5 s, retried).
        assert!(t.elapsed() < std::time::Duration::from_secs(4));
        other.execute_batch("ROLLBACK").unwrap();
        s.append_feed_now(&[entry]).unwrap();
        assert_eq!(s.feed_after(0, 10).unwrap().len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn new_store_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.db");
        let mut s = SqliteStore::open(&path).unwrap();
        s.write_session(&record("p", "2025-07-14T03:00:00.000Z"))
            .unwrap();
        for f in ["private.db", "private.db-wal"] {
            let mode = std::fs::metadata(dir.path().join(f))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f}");
        }
    }

    #[test]
    fn read_only_open_never_creates_and_classifies() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("typo.db");
        let err = SqliteStore::open_read_only(&missing).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Missing);
        assert!(!missing.exists());
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, [0x5a_u8; 4096]).unwrap();
        let err = SqliteStore::open_read_only(&junk).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt);
        let err = SqliteStore::open(&junk).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt);
    }

    /// Note [Not a store]: an empty database is missing, another
    /// program's is a data error; neither fails later on "no such table".
    #[test]
    fn read_only_open_tells_an_empty_or_foreign_database() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let err = SqliteStore::open_read_only(&empty).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Missing, "{err}");
        assert!(err.to_string().contains("empty database"), "{err}");
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
        let foreign = dir.path().join("foreign.db");
        rusqlite::Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE notes (body TEXT)")
            .unwrap();
        let err = SqliteStore::open_read_only(&foreign).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corrupt, "{err}");
        assert!(err.to_string().contains("not an agentshape store"), "{err}");
        // Writers initialise an empty file, as they create a missing one.
        let mut s = SqliteStore::open(&empty).unwrap();
        s.write_session(&record("e", "2025-07-14T03:00:00.000Z"))
            .unwrap();
        drop(s);
        SqliteStore::open_read_only(&empty).unwrap();
    }
}

/// Issue 9, session page: the structured output and the verdict are stored
/// with the session, the feed is read per session, and an older store gains
/// the columns on open.
mod verdict {
    use super::*;
    use agentshape_store::FeedEntry;
    use agentshape_store::query::{self, feed_for_session};
    use serde_json::{Value, json};

    fn verdict() -> Value {
        json!({
            "valid": false,
            "errors": [
                {"instance_path": "/events/0/level", "schema_path": "/properties/events/items/properties/level/enum", "message": "\"loud\" is not one of"},
                {"instance_path": "/counts", "schema_path": "/x-invariants/0", "message": "count mismatch", "kind": "invariant", "rule": "self.a == 1"}
            ],
            "repairs": ["trailing_comma"],
            "coercions": []
        })
    }

    #[test]
    fn output_and_verdict_round_trip_and_ended_carries_the_verdict() {
        let mut s = SqliteStore::open_in_memory().unwrap();
        let mut start = Session::new("p", "2025-07-14T03:00:00.000Z", "running");
        s.start_session(&start).unwrap();
        start.status = "completed".into();
        start.output = Some(json!({"summary": "<b>x</b>", "n": [1, 2.5, null, true]}));
        start.verdict = Some(serde_json::from_value(verdict()).unwrap());
        s.write_session(&start).unwrap();
        let d = query::session(&s, "p").unwrap().unwrap();
        assert_eq!(d.output, start.output);
        assert_eq!(d.verdict, Some(verdict()));
        // Compact JSON text in the column (identical for run and ingest).
        assert_eq!(
            rows(&s, "SELECT output FROM sessions WHERE id = 'p'"),
            vec![vec![r#"{"summary":"<b>x</b>","n":[1,2.5,null,true]}"#]]
        );
        let ended = s.feed_after(0, 10).unwrap().pop().unwrap();
        assert_eq!(ended.kind, "ended");
        let body: Value = serde_json::from_str(&ended.body).unwrap();
        assert_eq!(body["valid"], false);
        assert_eq!(body["errors"], 2);
        assert_eq!(body["status"], "completed");
        // Without a verdict both are null, and the columns are NULL.
        let bare = Session::new("q", "2025-07-14T03:00:01.000Z", "failed");
        s.write_session(&bare).unwrap();
        let d = query::session(&s, "q").unwrap().unwrap();
        assert_eq!((d.output, d.verdict), (None, None));
        let body: Value =
            serde_json::from_str(&s.feed_after(0, 10).unwrap().pop().unwrap().body).unwrap();
        assert_eq!(
            (body["valid"].clone(), body["errors"].clone()),
            (Value::Null, Value::Null)
        );
    }

    #[test]
    fn children_are_the_chain_down_oldest_first() {
        let mut s = SqliteStore::open_in_memory().unwrap();
        s.write_session(&Session::new(
            "root",
            "2025-07-14T03:00:00.000Z",
            "completed",
        ))
        .unwrap();
        for (id, at) in [
            ("c2", "2025-07-14T03:00:02.000Z"),
            ("c1", "2025-07-14T03:00:01.000Z"),
        ] {
            let mut c = Session::new(id, at, "completed");
            c.parent_id = Some("root".into());
            c.tier = 2;
            s.write_session(&c).unwrap();
        }
        let d = query::session(&s, "root").unwrap().unwrap();
        let ids: Vec<&str> = d.children.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2"]);
        let d = query::session(&s, "c1").unwrap().unwrap();
        assert!(d.children.is_empty());
        assert_eq!(d.session.parent_id.as_deref(), Some("root"));
    }

    #[test]
    fn feed_for_session_is_that_session_in_id_order_after_and_bounded() {
        let mut s = SqliteStore::open_in_memory().unwrap();
        let entries: Vec<FeedEntry> = (0..10)
            .map(|i| FeedEntry {
                seq: None,
                session_id: if i % 2 == 0 { "a" } else { "b" }.into(),
                kind: "event".into(),
                body: format!("{{\"n\":{i}}}"),
                created_at: "2025-07-14T03:00:00.000Z".into(),
            })
            .collect();
        s.append_feed(&entries).unwrap();
        let bodies = |after, limit| {
            feed_for_session(&s, "a", after, limit)
                .unwrap()
                .into_iter()
                .map(|r| (r.id, r.body))
                .collect::<Vec<_>>()
        };
        let all = bodies(0, 100);
        assert_eq!(
            all.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
            [
                r#"{"n":0}"#,
                r#"{"n":2}"#,
                r#"{"n":4}"#,
                r#"{"n":6}"#,
                r#"{"n":8}"#
            ]
        );
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(bodies(all[1].0, 2), all[2..4].to_vec());
        assert_eq!(bodies(0, 0).len(), 1, "a limit is at least 1");
        assert!(feed_for_session(&s, "nope", 0, 10).unwrap().is_empty());
    }

    #[test]
    fn migration_3_applies_on_an_existing_version_2_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(include_str!("../migrations/0001_init.sql"))
                .unwrap();
            c.execute_batch(include_str!("../migrations/0002_live.sql"))
                .unwrap();
            c.execute_batch(
                "INSERT INTO sessions (id, status, started_at) VALUES ('old', 'completed', '2025-07-14T03:00:00.000Z');
                 PRAGMA user_version = 2;",
            )
            .unwrap();
        }
        // Read-only, an old store is read as it is: no output, no verdict.
        let ro = SqliteStore::open_read_only(&path).unwrap();
        let d = query::session(&ro, "old").unwrap().unwrap();
        assert_eq!((d.output, d.verdict), (None, None));
        drop(ro);
        let mut s = SqliteStore::open(&path).unwrap();
        assert!(
            rows(&s, "PRAGMA user_version")[0][0]
                .parse::<i64>()
                .unwrap()
                >= 3
        );
        assert_eq!(
            rows(&s, "SELECT output, verdict FROM sessions WHERE id = 'old'"),
            vec![vec!["NULL", "NULL"]]
        );
        let mut r = Session::new("new", "2025-07-14T03:00:01.000Z", "completed");
        r.output = Some(json!({"a": 1}));
        r.verdict = Some(
            serde_json::from_value(
                json!({"valid": true, "errors": [], "repairs": [], "coercions": []}),
            )
            .unwrap(),
        );
        s.write_session(&r).unwrap();
        let d = query::session(&s, "new").unwrap().unwrap();
        assert_eq!(d.output, Some(json!({"a": 1})));
        assert_eq!(d.verdict.unwrap()["valid"], true);
    }
}
