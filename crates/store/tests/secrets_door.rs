//! Note [Store door]: the planted secrets of core's corpus, written through
//! every write path (`start_session`, `append_feed`, `write_session`,
//! `save_native`), are absent from every table of both backends, their
//! masks present, and counted (`secrets_found`, `sessions.secrets_masked`).

use agentshape_store::{
    FeedEntry, NativeMark, NewEvent, NewMemory, PgStore, ServiceCheck, Session, SqliteStore,
    StoreUrl,
};
use serde_json::{Value, json};

use crate::behaviour::Sql;

struct Case {
    secret: String,
    context: String,
}

fn planted() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/fixtures/secrets/planted.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Case {
                secret: v["secret"].as_str().unwrap().to_owned(),
                context: v["context"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

struct Place {
    _dir: Option<tempfile::TempDir>,
    url: String,
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
    fn open(&self) -> Box<dyn Sql> {
        match StoreUrl::parse(&self.url).unwrap() {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open(&p).unwrap()),
            StoreUrl::Postgres(u) => Box::new(PgStore::open(&u).unwrap()),
        }
    }
    fn is_sqlite(&self) -> bool {
        self.url.starts_with("sqlite:")
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
    every_planted_secret_is_masked_in_every_table,
    racing_openers_of_a_new_store_agree_on_one_key,
    masking_off_writes_raw_text_and_leaves_the_count_null,
    a_masked_output_keeps_its_json_shape,
    a_store_written_raw_is_masked_once_by_mask_stored,
);

/// Every value of every table, as text.
fn everything(p: &Place, s: &dyn Sql) -> String {
    let tables = if p.is_sqlite() {
        s.rows("SELECT name FROM sqlite_master WHERE type = 'table'")
    } else {
        s.rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    };
    let mut all = String::new();
    for t in tables {
        for row in s.rows(&format!("SELECT * FROM \"{}\"", t[0])) {
            for v in row {
                all.push_str(&v);
                all.push('\n');
            }
        }
    }
    all
}

fn line(id: &str, text: &str) -> FeedEntry {
    FeedEntry {
        seq: None,
        session_id: id.to_owned(),
        kind: "line".to_owned(),
        body: json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}]}})
        .to_string(),
        created_at: "2026-11-26T10:00:01.000Z".to_owned(),
    }
}

fn every_planted_secret_is_masked_in_every_table(p: &Place) {
    let cases = planted();
    assert!(cases.len() >= 40, "{} planted cases", cases.len());
    let mut s = p.open();
    for (i, c) in cases.iter().enumerate() {
        // A run: started, live lines, written.
        let id = format!("run{i}");
        let mut r = Session::new(&id, "2026-11-26T10:00:00.000Z", "completed");
        r.ended_at = Some("2026-11-26T10:00:09.000Z".into());
        r.summary = Some(c.context.clone());
        r.error = Some(c.context.clone());
        r.output = Some(json!({"summary": c.context, "events": [{"message": c.context}]}));
        r.escalation = Some(json!({"reason": c.context}).to_string());
        r.events.push(NewEvent {
            level: "warning".into(),
            service: None,
            message: c.context.clone(),
        });
        r.memories.push(NewMemory {
            key: format!("svc{i}:config"),
            value: c.context.clone(),
        });
        r.services.push(ServiceCheck {
            name: format!("svc{i}"),
            status: "healthy".into(),
            detail: Some(c.context.clone()),
        });
        s.start_session(&r).unwrap();
        s.append_feed(&[line(&id, &c.context)]).unwrap();
        s.append_feed_now(&[line(&id, &c.context)]).unwrap();
        s.write_session(&r).unwrap();
        // An imported session.
        let nid = format!("native{i}");
        let mut n = Session::new(&nid, "2026-11-26T11:00:00.000Z", "completed");
        n.summary = Some(c.context.clone());
        let mark = NativeMark {
            path: format!("/home/u/.claude/projects/p/{nid}.jsonl"),
            session_id: nid.clone(),
            agent: "claude-code".into(),
            dev: 1,
            inode: i as u64,
            size: 10,
            offset: 10,
            mtime_ms: 0,
            lines: 1,
            updated_at: "2026-11-26T11:00:00.000Z".into(),
            reset: false,
            expect_offset: None,
        };
        s.save_native(&n, &[line(&nid, &c.context)], &mark).unwrap();
    }
    let all = everything(p, &*s);
    for c in &cases {
        assert!(!all.contains(&c.secret), "secret stored raw: {}", c.secret);
    }
    assert!(all.contains("[REDACTED:"));
    // Counted: every session has a count, each secret once per place it was in.
    let unmasked =
        s.rows("SELECT COUNT(*) FROM sessions WHERE secrets_masked IS NULL OR secrets_masked = 0");
    assert_eq!(unmasked, vec![vec!["0".to_owned()]]);
    let feed_found =
        s.rows("SELECT COUNT(*) FROM secrets_found WHERE place = 'feed' AND feed_id IS NOT NULL");
    let n: usize = feed_found[0][0].parse().unwrap();
    assert!(n >= 3 * cases.len(), "{n} feed secrets found");
    let counted = s.rows(
        "SELECT COUNT(*) FROM sessions s WHERE secrets_masked <> \
         (SELECT COUNT(*) FROM secrets_found f WHERE f.session_id = s.id)",
    );
    assert_eq!(counted, vec![vec!["0".to_owned()]]);
    for place in [
        "summary",
        "output",
        "events",
        "memories",
        "services",
        "escalation",
        "error",
    ] {
        let rows = s.rows(&format!(
            "SELECT COUNT(*) FROM secrets_found WHERE place = '{place}'"
        ));
        assert_ne!(rows[0][0], "0", "{place}");
    }
}

fn racing_openers_of_a_new_store_agree_on_one_key(p: &Place) {
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let url = p.url.clone();
            std::thread::spawn(move || {
                let s = StoreUrl::parse(&url).unwrap().open().unwrap();
                s.mask_key().unwrap().to_hex()
            })
        })
        .collect();
    let keys: Vec<String> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(keys.iter().all(|k| k == &keys[0]), "{keys:?}");
    let s = p.open();
    assert_eq!(
        s.rows("SELECT value FROM store_meta WHERE key = 'mask_key'"),
        vec![vec![keys[0].clone()]]
    );
    // A read-only opener reads the same key.
    let ro = StoreUrl::parse(&p.url).unwrap().open_read_only().unwrap();
    assert_eq!(ro.mask_key().unwrap().to_hex(), keys[0]);
}

fn masking_off_writes_raw_text_and_leaves_the_count_null(p: &Place) {
    let secret = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
    let mut s = p.open();
    s.set_masker(None);
    let mut r = Session::new("raw", "2026-11-26T10:00:00.000Z", "completed");
    r.summary = Some(format!("GITHUB_TOKEN={secret}"));
    s.write_session(&r).unwrap();
    s.append_feed(&[line("raw", &format!("GITHUB_TOKEN={secret}"))])
        .unwrap();
    let all = everything(p, &*s);
    assert!(all.contains(secret));
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM sessions WHERE secrets_masked IS NULL"),
        vec![vec!["1".to_owned()]]
    );
}

fn a_masked_output_keeps_its_json_shape(p: &Place) {
    let secret = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";
    let mut s = p.open();
    let output = json!({"summary": format!("token {secret}"), "ok": true, "n": 2,
        "events": [{"level": "info", "message": format!("GITHUB_TOKEN={secret}")}]});
    let mut r = Session::new("shape", "2026-11-26T10:00:00.000Z", "completed");
    r.output = Some(output.clone());
    r.verdict = Some(serde_json::from_value(json!({"valid": true, "errors": []})).unwrap());
    s.write_session(&r).unwrap();
    let stored = s.rows("SELECT output, verdict FROM sessions WHERE id = 'shape'");
    assert!(!stored[0][0].contains(secret));
    let v: Value = serde_json::from_str(&stored[0][0]).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["n"], 2);
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:github-pat:")
    );
    assert_eq!(v["events"][0]["level"], "info");
    assert!(
        v["events"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("GITHUB_TOKEN=[REDACTED:")
    );
    let verdict: Value = serde_json::from_str(&stored[0][1]).unwrap();
    assert_eq!(verdict["valid"], true);
}

fn a_store_written_raw_is_masked_once_by_mask_stored(p: &Place) {
    let cases = planted();
    let mut s = p.open();
    s.set_masker(None);
    for (i, c) in cases.iter().enumerate() {
        let id = format!("old{i}");
        let mut r = Session::new(&id, "2026-11-26T10:00:00.000Z", "completed");
        r.summary = Some(c.context.clone());
        r.output = Some(json!({"summary": c.context}));
        r.events.push(NewEvent {
            level: "info".into(),
            service: None,
            message: c.context.clone(),
        });
        r.memories.push(NewMemory {
            key: format!("svc{i}:config"),
            value: c.context.clone(),
        });
        r.services.push(ServiceCheck {
            name: "db".into(),
            status: "healthy".into(),
            detail: Some(c.context.clone()),
        });
        s.write_session(&r).unwrap();
        s.append_feed(&[line(&id, &c.context)]).unwrap();
    }
    assert!(everything(p, &*s).contains(&cases[0].secret));
    let m = agentshape_core::secrets::Masker::builtin(s.mask_key().unwrap());
    let report = agentshape_store::secrets::mask_stored(&mut *s, &m).unwrap();
    assert!(report.secrets >= 4 * cases.len() as u64, "{report:?}");
    let all = everything(p, &*s);
    for c in &cases {
        // The search index's own copy is rebuilt from the feed rows.
        assert!(!all.contains(&c.secret), "still stored: {}", c.secret);
    }
    let again = agentshape_store::secrets::mask_stored(&mut *s, &m).unwrap();
    assert_eq!(again.secrets, 0);
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM sessions WHERE secrets_masked IS NULL"),
        vec![vec!["0".to_owned()]]
    );
}
