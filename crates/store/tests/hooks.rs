//! `agentshape hook`'s calls in the store (Note [Hook chains]): the chain
//! count, the session row a call makes or fills in, the feed, the store
//! door, the page query, the migration, on both backends.

use std::time::{Duration, Instant};

use agentshape_store::query::{self, Source};
use agentshape_store::{
    ErrorKind, FeedEntry, HookCall, HookChain, HookSaved, NativeMark, PgStore, Session,
    SqliteStore, Store, StoreUrl,
};
use serde_json::{Value, json};

use crate::behaviour::Sql;

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
    /// The same store as the page queries read it.
    fn source(&self) -> Box<dyn Source> {
        match StoreUrl::parse(&self.url).unwrap() {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open_read_only(&p).unwrap()),
            StoreUrl::Postgres(u) => Box::new(PgStore::open_read_only(&u).unwrap()),
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
    the_chain_counts_blocks_until_a_call_is_let_through,
    save_hook_makes_the_session_once_and_a_main_stop_sets_its_verdict,
    every_call_is_in_the_feed_after_the_given_entries,
    planted_secrets_are_masked_in_every_hook_column_and_the_feed,
    save_native_keeps_what_a_hook_wrote,
    the_page_query_reads_a_session_and_a_sub_agent,
    copy_takes_the_hook_calls_of_the_sessions_it_copies,
    the_hooks_migration_applies_on_a_store_of_the_previous_version,
);

const AT: &str = "2026-11-26T10:00:00.000Z";

fn at(i: u32) -> String {
    format!("2026-11-26T10:00:{i:02}.000Z")
}

fn call(session: &str, event: &str, verdict: &str, i: u32) -> HookCall {
    let mut c = HookCall::new(session, event, verdict, &at(i));
    if verdict == "blocked" {
        c.blocks = 1;
    }
    c
}

fn sub(session: &str, agent: &str, verdict: &str, i: u32) -> HookCall {
    let mut c = call(session, "SubagentStop", verdict, i);
    c.agent_id = Some(agent.to_owned());
    c.agent_type = Some("reviewer".to_owned());
    c
}

fn violation(path: &str) -> Value {
    json!({"instance_path": path, "schema_path": "/required", "message": format!("{path} is required")})
}

fn chain(blocks: u32, active: u32) -> HookChain {
    HookChain { blocks, active }
}

fn the_chain_counts_blocks_until_a_call_is_let_through(p: &Place) {
    let mut s = p.open();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(0, 0));
    s.save_hook(&call("s1", "Stop", "blocked", 1), &[]).unwrap();
    let mut again = call("s1", "Stop", "blocked", 2);
    again.stop_hook_active = true;
    s.save_hook(&again, &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(2, 1));
    // Tool calls are not tries to stop.
    s.save_hook(&call("s1", "PostToolUse", "captured", 3), &[])
        .unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(2, 1));
    // A sub-agent's chain is its own, and the main agent's is not its.
    s.save_hook(&sub("s1", "a1", "blocked", 4), &[]).unwrap();
    s.save_hook(&sub("s1", "a2", "valid", 5), &[]).unwrap();
    assert_eq!(s.hook_chain("s1", Some("a1")).unwrap(), chain(1, 0));
    assert_eq!(s.hook_chain("s1", Some("a2")).unwrap(), chain(0, 0));
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(2, 1));
    // Another session's chain is its own.
    s.save_hook(&call("s2", "Stop", "blocked", 6), &[]).unwrap();
    assert_eq!(s.hook_chain("s2", None).unwrap(), chain(1, 0));
    // Let through: the chain starts again.
    s.save_hook(&call("s1", "Stop", "valid", 7), &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(0, 0));
    let mut next = call("s1", "Stop", "blocked", 8);
    next.stop_hook_active = true;
    s.save_hook(&next, &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(1, 1));
    // A call without `stop_hook_active` starts a new turn's chain, what
    // came before (blocked or not) aside.
    s.save_hook(&call("s1", "Stop", "blocked", 9), &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(1, 0));
    // Given up (issue 40) does not end the turn's chain: a later try of
    // the same turn still sees its blocks...
    let mut gave_up = call("s1", "Stop", "gave_up", 10);
    gave_up.stop_hook_active = true;
    s.save_hook(&gave_up, &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(1, 1));
    // ...and a new turn starts from nothing.
    s.save_hook(&call("s1", "Stop", "gave_up", 11), &[])
        .unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(0, 0));
    // Allowed without checking ends a chain, as valid does.
    s.save_hook(&call("s1", "Stop", "blocked", 12), &[])
        .unwrap();
    let mut allowed = call("s1", "Stop", "allowed", 13);
    allowed.stop_hook_active = true;
    s.save_hook(&allowed, &[]).unwrap();
    assert_eq!(s.hook_chain("s1", None).unwrap(), chain(0, 0));
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM hook_calls"),
        vec![vec!["13".to_owned()]]
    );
}

fn save_hook_makes_the_session_once_and_a_main_stop_sets_its_verdict(p: &Place) {
    let mut s = p.open();
    let mut first = call("cc-1", "Stop", "blocked", 1);
    first.project = Some("/home/u/proj".into());
    first.transcript_path = Some("/home/u/.claude/projects/p/cc-1.jsonl".into());
    first.profile = Some("review".into());
    first.method = Some("fenced".into());
    first.errors = Some(json!([violation("/summary"), violation("/events")]));
    first.reason = Some("Your answer is missing /summary and /events.".into());
    first.message = Some("```json\n{}\n```".into());
    let saved = s.save_hook(&first, &[]).unwrap();
    assert!(saved.session_inserted);
    assert!(saved.id > 0);
    let row = s.rows(
        "SELECT status, agent, tier, started_at, ended_at, project, source_path, profile, \
         extraction_method, output FROM sessions WHERE id = 'cc-1'",
    );
    assert_eq!(
        row,
        vec![vec![
            "completed",
            "claude-code",
            "1",
            &at(1),
            &at(1),
            "/home/u/proj",
            "/home/u/.claude/projects/p/cc-1.jsonl",
            "review",
            "fenced",
            "NULL",
        ]]
    );
    let verdict = |s: &dyn Sql| -> Value {
        serde_json::from_str(&s.rows("SELECT verdict FROM sessions WHERE id = 'cc-1'")[0][0])
            .unwrap()
    };
    assert_eq!(
        verdict(&*s),
        json!({"valid": false, "errors": [violation("/summary"), violation("/events")],
               "repairs": [], "coercions": []})
    );
    // The row as written.
    let hook = s.rows(&format!(
        "SELECT session_id, agent_id, event, verdict, method, blocks, \
         CASE WHEN stop_hook_active THEN 1 ELSE 0 END, profile, reason, message, warning, \
         created_at FROM hook_calls WHERE id = {}",
        saved.id
    ));
    assert_eq!(
        hook,
        vec![vec![
            "cc-1",
            "NULL",
            "Stop",
            "blocked",
            "fenced",
            "1",
            "0",
            "review",
            "Your answer is missing /summary and /events.",
            "```json\n{}\n```",
            "NULL",
            &at(1),
        ]]
    );
    let errors: Value = serde_json::from_str(
        &s.rows(&format!(
            "SELECT errors FROM hook_calls WHERE id = {}",
            saved.id
        ))[0][0],
    )
    .unwrap();
    assert_eq!(errors, json!([violation("/summary"), violation("/events")]));

    // A sub-agent's answer is not the session's: no verdict change, no
    // second session row.
    let mut s1 = sub("cc-1", "a1", "valid", 2);
    s1.output = Some(json!({"summary": "sub"}));
    let saved = s.save_hook(&s1, &[]).unwrap();
    assert!(!saved.session_inserted);
    assert_eq!(verdict(&*s)["valid"], false);

    // The next try is valid: the verdict, method and output follow it; a
    // call without a profile keeps the stored one.
    let mut ok = call("cc-1", "Stop", "valid", 3);
    ok.method = Some("structured".into());
    ok.output = Some(json!({"summary": "done", "events": []}));
    assert_eq!(
        s.save_hook(&ok, &[]).unwrap(),
        HookSaved {
            id: saved.id + 1,
            session_inserted: false
        }
    );
    assert_eq!(
        verdict(&*s),
        json!({"valid": true, "errors": [], "repairs": [], "coercions": []})
    );
    let row = s.rows("SELECT extraction_method, output, profile FROM sessions WHERE id = 'cc-1'");
    assert_eq!(row[0][0], "structured");
    assert_eq!(
        serde_json::from_str::<Value>(&row[0][1]).unwrap(),
        json!({"summary": "done", "events": []})
    );
    assert_eq!(row[0][2], "review");
    // Allowed without checking and captured tool calls leave the verdict.
    let mut warned = call("cc-1", "Stop", "allowed", 4);
    warned.warning = Some("no profile named `nope`".into());
    s.save_hook(&warned, &[]).unwrap();
    s.save_hook(&call("cc-1", "PostToolUse", "captured", 5), &[])
        .unwrap();
    assert_eq!(verdict(&*s)["valid"], true);
    // Given up: recorded invalid.
    let mut gave = call("cc-1", "Stop", "gave_up", 6);
    gave.errors = Some(json!([violation("/summary")]));
    s.save_hook(&gave, &[]).unwrap();
    assert_eq!(verdict(&*s)["valid"], false);
    assert_eq!(verdict(&*s)["errors"], json!([violation("/summary")]));
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM sessions"),
        vec![vec!["1".to_owned()]]
    );
    // A call of a session with no row yet that is not a Stop still makes it.
    let saved = s
        .save_hook(&call("cc-2", "PostToolUse", "captured", 7), &[])
        .unwrap();
    assert!(saved.session_inserted);
    assert_eq!(
        s.rows("SELECT agent, verdict FROM sessions WHERE id = 'cc-2'"),
        vec![vec!["claude-code", "NULL"]]
    );
}

fn feed(session: &str, kind: &str, body: &Value) -> FeedEntry {
    FeedEntry {
        seq: None,
        session_id: session.to_owned(),
        kind: kind.to_owned(),
        body: body.to_string(),
        created_at: AT.to_owned(),
    }
}

fn every_call_is_in_the_feed_after_the_given_entries(p: &Place) {
    let mut s = p.open();
    let tool = feed(
        "cc-1",
        "line",
        &json!({"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}),
    );
    let mut c = call("cc-1", "PostToolUse", "captured", 1);
    c.reason = None;
    let first = s.save_hook(&c, std::slice::from_ref(&tool)).unwrap();
    let mut blocked = sub("cc-1", "a1", "blocked", 2);
    blocked.method = Some("none".into());
    blocked.errors = Some(Value::Array(
        (0..8).map(|i| violation(&format!("/f{i}"))).collect(),
    ));
    blocked.reason = Some("x".repeat(2_000));
    blocked.blocks = 3;
    let second = s.save_hook(&blocked, &[]).unwrap();
    let rows = s.feed_after(0, 100).unwrap();
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.session_id.as_str(), r.kind.as_str()))
        .collect();
    // A capture brings its own rows and no `hook` row; a verdict has one.
    assert_eq!(got, [("cc-1", "line"), ("cc-1", "hook")], "{rows:?}");
    assert_eq!(rows[0].body, tool.body);
    assert!(first.id > 0);
    let two: Value = serde_json::from_str(&rows[1].body).unwrap();
    assert_eq!(two["hook_id"], second.id);
    assert_eq!(two["agent_id"], "a1");
    assert_eq!(two["agent_type"], "reviewer");
    assert_eq!(two["blocks"], 3);
    assert_eq!(two["method"], "none");
    assert_eq!(two["errors"].as_array().unwrap().len(), 5);
    assert_eq!(two["errors"][4], violation("/f4"));
    assert_eq!(two["reason"].as_str().unwrap().len(), 500);
    assert_eq!(rows[1].created_at, at(2));
    // Compact JSON, as every feed body.
    assert!(!rows[1].body.contains(": "), "{}", rows[1].body);
}

struct Planted {
    secret: String,
    context: String,
}

fn planted() -> Vec<Planted> {
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
            Planted {
                secret: v["secret"].as_str().unwrap().to_owned(),
                context: v["context"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

fn planted_secrets_are_masked_in_every_hook_column_and_the_feed(p: &Place) {
    let cases = planted();
    assert!(cases.len() >= 40, "{} planted cases", cases.len());
    let mut s = p.open();
    for (i, c) in cases.iter().enumerate() {
        let id = format!("cc-{i}");
        let mut h = call(&id, "Stop", "blocked", 1);
        h.message = Some(format!("Here is my answer: {}", c.context));
        h.reason = Some(format!("/summary must not quote: {}", c.context));
        h.warning = Some(c.context.clone());
        h.errors = Some(
            json!([{"instance_path": "/summary", "schema_path": "/maxLength",
                                "message": c.context}]),
        );
        h.output = Some(json!({"summary": c.context}));
        let line = feed(
            &id,
            "line",
            &json!({"type": "tool_result", "content": c.context}),
        );
        s.save_hook(&h, &[line]).unwrap();
    }
    let mut all = String::new();
    for table in ["hook_calls", "feed", "sessions"] {
        for row in s.rows(&format!("SELECT * FROM {table}")) {
            all.push_str(&row.join("\n"));
            all.push('\n');
        }
    }
    for c in &cases {
        assert!(!all.contains(&c.secret), "secret stored raw: {}", c.secret);
    }
    assert!(all.contains("[REDACTED:"));
    // Recorded where they were: the hook row's columns, the session's
    // output and verdict, the given feed row (with its id).
    let places = s.rows("SELECT place, COUNT(*) FROM secrets_found GROUP BY place ORDER BY place");
    let count = |place: &str| -> usize {
        places
            .iter()
            .find(|r| r[0] == place)
            .map_or(0, |r| r[1].parse().unwrap())
    };
    assert!(count("hook") >= 4 * cases.len(), "{places:?}");
    assert!(count("output") >= cases.len(), "{places:?}");
    assert!(count("feed") >= cases.len(), "{places:?}");
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM secrets_found WHERE place = 'feed' AND feed_id IS NULL"),
        vec![vec!["0".to_owned()]]
    );
    // Every session made by a hook is counted, and counted right.
    assert_eq!(
        s.rows(
            "SELECT COUNT(*) FROM sessions s WHERE secrets_masked IS NULL OR secrets_masked <> \
             (SELECT COUNT(*) FROM secrets_found f WHERE f.session_id = s.id)"
        ),
        vec![vec!["0".to_owned()]]
    );
    // The masked errors are still the violations' shape.
    let errors: Value =
        serde_json::from_str(&s.rows("SELECT errors FROM hook_calls ORDER BY id LIMIT 1")[0][0])
            .unwrap();
    assert_eq!(errors[0]["instance_path"], "/summary");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:")
    );
    // With masking off the text is stored raw and the session is marked so.
    s.set_masker(None);
    let mut raw = call("raw", "Stop", "blocked", 1);
    raw.message = Some(cases[0].context.clone());
    s.save_hook(&raw, &[]).unwrap();
    assert!(
        s.rows("SELECT message FROM hook_calls WHERE session_id = 'raw'")[0][0]
            .contains(&cases[0].secret)
    );
    assert_eq!(
        s.rows("SELECT COUNT(*) FROM sessions WHERE id = 'raw' AND secrets_masked IS NULL"),
        vec![vec!["1".to_owned()]]
    );
    // `secrets mask` masks what was stored raw, hook rows included.
    let m = agentshape_core::secrets::Masker::builtin(s.mask_key().unwrap());
    let report = agentshape_store::secrets::mask_stored(&mut *s, &m).unwrap();
    assert!(
        report.by_place.get("hook").copied().unwrap_or(0) >= 1,
        "{report:?}"
    );
    assert!(
        !s.rows("SELECT message FROM hook_calls WHERE session_id = 'raw'")[0][0]
            .contains(&cases[0].secret)
    );
}

fn mark(id: &str) -> NativeMark {
    NativeMark {
        path: format!("/home/u/.claude/projects/p/{id}.jsonl"),
        session_id: id.to_owned(),
        agent: "claude-code".into(),
        dev: 1,
        inode: 7,
        size: 100,
        offset: 100,
        mtime_ms: 0,
        lines: 3,
        updated_at: AT.into(),
        reset: false,
        expect_offset: None,
    }
}

fn save_native_keeps_what_a_hook_wrote(p: &Place) {
    let mut s = p.open();
    let mut hook = call("cc-1", "Stop", "valid", 1);
    hook.method = Some("fenced".into());
    hook.profile = Some("review".into());
    hook.output = Some(json!({"summary": "ok"}));
    s.save_hook(&hook, &[]).unwrap();
    let stored = |s: &dyn Sql| {
        s.rows("SELECT verdict, output, extraction_method, profile, model FROM sessions WHERE id = 'cc-1'")
            .remove(0)
    };
    let before = stored(&*s);
    assert_ne!(before[0], "NULL");
    // The import of the same session knows none of the four.
    let mut native = Session::new("cc-1", AT, "completed");
    native.agent = Some("claude-code".into());
    native.model = Some("claude-opus-4".into());
    let rep = s.save_native(&native, &[], &mark("cc-1")).unwrap();
    assert!(!rep.inserted);
    let after = stored(&*s);
    assert_eq!(after[..4], before[..4]);
    assert_eq!(after[4], "claude-opus-4");
    // An import that has them replaces them.
    native.verdict = Some(
        serde_json::from_value(
            json!({"valid": false, "errors": [], "repairs": [], "coercions": []}),
        )
        .unwrap(),
    );
    native.output = Some(json!({"summary": "imported"}));
    native.extraction_method = Some("structured".into());
    native.profile = Some("other".into());
    let mut again = mark("cc-1");
    again.expect_offset = Some(100);
    s.save_native(&native, &[], &again).unwrap();
    let replaced = stored(&*s);
    assert_eq!(
        serde_json::from_str::<Value>(&replaced[0]).unwrap()["valid"],
        false
    );
    assert_eq!(
        serde_json::from_str::<Value>(&replaced[1]).unwrap(),
        json!({"summary": "imported"})
    );
    assert_eq!(replaced[2..4], ["structured", "other"]);
    // write_session keeps its own meaning: a run's final row replaces its
    // running row whole.
    let mut run = Session::new("run-1", AT, "completed");
    s.start_session(&run).unwrap();
    run.verdict = None;
    s.write_session(&run).unwrap();
    assert_eq!(
        s.rows("SELECT verdict FROM sessions WHERE id = 'run-1'"),
        vec![vec!["NULL"]]
    );
}

fn the_page_query_reads_a_session_and_a_sub_agent(p: &Place) {
    let mut s = p.open();
    let mut b = call("cc-1", "Stop", "blocked", 1);
    b.errors = Some(json!([violation("/summary")]));
    b.reason = Some("add /summary".into());
    b.message = Some("not shown on pages".into());
    s.save_hook(&b, &[]).unwrap();
    let mut b2 = call("cc-1", "Stop", "blocked", 2);
    b2.blocks = 2;
    b2.stop_hook_active = true;
    s.save_hook(&b2, &[]).unwrap();
    s.save_hook(&sub("cc-1", "a1", "valid", 3), &[]).unwrap();
    s.save_hook(&call("cc-1", "Stop", "valid", 4), &[]).unwrap();
    s.save_hook(&call("cc-2", "Stop", "valid", 5), &[]).unwrap();
    s.save_hook(&sub("cc-2", "a9", "blocked", 6), &[]).unwrap();
    s.save_hook(&sub("cc-1", "a1", "blocked", 7), &[]).unwrap();
    drop(s);
    let src = p.source();
    let main = query::hook_calls(&*src, "cc-1", 100).unwrap();
    let shown: Vec<(Option<&str>, &str, u32)> = main
        .iter()
        .map(|r| (r.agent_id.as_deref(), r.verdict.as_str(), r.blocks))
        .collect();
    assert_eq!(
        shown,
        [
            (None, "blocked", 1),
            (None, "blocked", 2),
            (Some("a1"), "valid", 0),
            (None, "valid", 0),
            (Some("a1"), "blocked", 1),
        ]
    );
    assert!(main.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(main[0].errors, Some(json!([violation("/summary")])));
    assert_eq!(main[0].reason.as_deref(), Some("add /summary"));
    assert!(!main[0].stop_hook_active && main[1].stop_hook_active);
    assert_eq!(main[2].agent_type.as_deref(), Some("reviewer"));
    assert_eq!(main[0].created_at, at(1));
    assert!(
        !serde_json::to_string(&main)
            .unwrap()
            .contains("not shown on pages")
    );
    // The sub-agent's own page: its calls, whichever session they came with.
    let agent = query::hook_calls(&*src, "agent-a1", 100).unwrap();
    let shown: Vec<(&str, &str)> = agent
        .iter()
        .map(|r| (r.session_id.as_str(), r.verdict.as_str()))
        .collect();
    assert_eq!(shown, [("cc-1", "valid"), ("cc-1", "blocked")]);
    // At most `limit`, oldest first.
    let two = query::hook_calls(&*src, "cc-1", 2).unwrap();
    assert_eq!(two, main[..2]);
    assert!(query::hook_calls(&*src, "nobody", 10).unwrap().is_empty());
    assert!(query::hook_calls(&*src, "agent-", 10).unwrap().is_empty());
}

fn copy_takes_the_hook_calls_of_the_sessions_it_copies(p: &Place) {
    let mut s = p.open();
    let mut b = call("cc-1", "Stop", "blocked", 1);
    b.stop_hook_active = true;
    b.errors = Some(json!([violation("/summary")]));
    s.save_hook(&b, &[]).unwrap();
    s.save_hook(&sub("cc-1", "a1", "valid", 2), &[]).unwrap();
    s.save_hook(&call("cc-2", "PostToolUse", "captured", 3), &[])
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut to = SqliteStore::open(&dir.path().join("copy.db")).unwrap();
    let report = agentshape_store::copy(&*s, &mut to).unwrap();
    assert_eq!((report.sessions, report.hook_calls), (2, 3), "{report:?}");
    let cols = "session_id, agent_id, event, verdict, errors, blocks, \
                CASE WHEN stop_hook_active THEN 1 ELSE 0 END, created_at";
    let q = format!("SELECT {cols} FROM hook_calls ORDER BY created_at");
    assert_eq!(to.rows(&q), s.rows(&q));
    assert_eq!(to.hook_chain("cc-1", None).unwrap(), chain(1, 1));
    // Again: nothing more.
    let again = agentshape_store::copy(&*s, &mut to).unwrap();
    assert_eq!(again.hook_calls, 0);
}

fn the_hooks_migration_applies_on_a_store_of_the_previous_version(p: &Place) {
    use agentshape_store::migrate::{POSTGRES, SQLITE};
    // The migrations before the hooks one (later ones may follow it).
    let before_hooks = |l: &'static [agentshape_store::migrate::Migration]| {
        &l[..l
            .iter()
            .position(|m| m.name.ends_with("_hooks.sql"))
            .unwrap()]
    };
    let previous = if p.is_sqlite() {
        before_hooks(SQLITE)
    } else {
        before_hooks(POSTGRES)
    };
    assert!(
        previous.iter().all(|m| !m.sql.contains("hook_calls")),
        "the migrations before the hooks one know no hook calls"
    );
    if let StoreUrl::Sqlite(path) = StoreUrl::parse(&p.url).unwrap() {
        let c = rusqlite::Connection::open(&path).unwrap();
        for m in previous {
            c.execute_batch(m.sql).unwrap();
        }
        c.pragma_update(None, "user_version", previous.len())
            .unwrap();
        c.execute(
            "INSERT INTO sessions (id, tier, status, started_at, verdict) \
             VALUES ('cc-1', 1, 'completed', '2026-11-25T00:00:00.000Z', '{\"valid\":true}')",
            [],
        )
        .unwrap();
    } else {
        let mut c = postgres::Client::connect(&p.url, postgres::NoTls).unwrap();
        c.batch_execute(
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, \
             applied_at TEXT NOT NULL)",
        )
        .unwrap();
        for m in previous {
            c.batch_execute(m.sql).unwrap();
            c.execute(
                "INSERT INTO schema_migrations VALUES ($1, $2, 'x')",
                &[&m.version, &m.name],
            )
            .unwrap();
        }
        c.batch_execute(
            "INSERT INTO sessions (id, tier, status, started_at, verdict) \
             VALUES ('cc-1', 1, 'completed', '2026-11-25T00:00:00.000Z', '{\"valid\":true}')",
        )
        .unwrap();
    }
    // A read-only opener of the old store reads no hook calls, and fails nothing.
    let old = p.source();
    assert!(query::hook_calls(&*old, "cc-1", 10).unwrap().is_empty());
    drop(old);
    let mut s = p.open();
    assert_eq!(s.hook_chain("cc-1", None).unwrap(), chain(0, 0));
    let saved = s
        .save_hook(&call("cc-1", "Stop", "blocked", 1), &[])
        .unwrap();
    assert!(!saved.session_inserted);
    assert_eq!(s.hook_chain("cc-1", None).unwrap(), chain(1, 0));
    assert_eq!(
        s.rows("SELECT started_at FROM sessions WHERE id = 'cc-1'"),
        vec![vec!["2026-11-25T00:00:00.000Z"]]
    );
    drop(s);
    assert_eq!(
        query::hook_calls(&*p.source(), "cc-1", 10).unwrap().len(),
        1
    );
}

/// A hook must answer within its deadline whatever the store does: a
/// store opened with a short patience gives up on a lock quickly, as
/// `Busy`, instead of waiting the default 5 s five times.
#[test]
fn a_locked_sqlite_store_opened_with_patience_gives_up_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.db");
    drop(SqliteStore::open(&path).unwrap());
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = Instant::now();
    let url = StoreUrl::Sqlite(path.clone());
    let mut s = url.open_with_patience(Duration::from_millis(100)).unwrap();
    let e = s
        .save_hook(&call("cc-1", "Stop", "blocked", 1), &[])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    // Generous bound (the default patience would take 25 s and more).
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Reading the chain needs no write lock.
    assert_eq!(s.hook_chain("cc-1", None).unwrap(), chain(0, 0));
    holder.execute_batch("ROLLBACK").unwrap();
    s.save_hook(&call("cc-1", "Stop", "blocked", 1), &[])
        .unwrap();
    assert_eq!(s.hook_chain("cc-1", None).unwrap(), chain(1, 0));
    let mut direct = SqliteStore::open_with_patience(&path, Duration::from_millis(50), 0).unwrap();
    direct
        .save_hook(&call("cc-1", "Stop", "valid", 2), &[])
        .unwrap();
    assert_eq!(direct.hook_chain("cc-1", None).unwrap(), chain(0, 0));
}
