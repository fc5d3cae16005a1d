//! Validation analytics (`agentshape_store::query::stats`, Note [Outcomes
//! of a run]): the same sessions and hook calls written to a SQLite file
//! and to a fresh Postgres database; each answer is checked against what it
//! must be, and the two backends' answers are compared whole, as JSON.

use agentshape_store::query::stats::{FailingPath, MethodCount, Quantiles, RuleCount};
use agentshape_store::query::{self, Source, StatsBy, StatsGroup};
use agentshape_store::{HookCall, PgStore, Session, SqliteStore, Store, Verdict};
use serde_json::{Value, json};

fn err(path: &str, schema_path: &str) -> Value {
    json!({"instance_path": path, "schema_path": schema_path, "message": format!("bad {path}")})
}

fn invariant(path: &str, rule: &str) -> Value {
    json!({"instance_path": path, "schema_path": "", "message": "broken", "kind": "invariant", "rule": rule})
}

/// A finished session with a verdict (`None`: none stored).
#[allow(clippy::too_many_arguments)]
fn session(
    id: &str,
    day: &str,
    profile: &str,
    agent: &str,
    method: Option<&str>,
    verdict: Option<Verdict>,
    tokens: u64,
    cost: Option<f64>,
) -> Session {
    let mut r = Session::new(id, &format!("{day}T10:00:00.000Z"), "completed");
    r.profile = Some(profile.to_owned());
    r.agent = Some(agent.to_owned());
    r.model = Some(format!("model-{agent}"));
    r.extraction_method = method.map(str::to_owned);
    r.verdict = verdict;
    r.input_tokens = agentshape_store::count(tokens);
    r.output_tokens = 0;
    r.cost_usd = cost;
    r.duration_ms = Some(agentshape_store::count(tokens) * 10);
    r
}

#[allow(clippy::unnecessary_wraps, clippy::needless_pass_by_value)] // reads as the field it fills
fn valid(repairs: Value) -> Option<Verdict> {
    Some(
        serde_json::from_value(
            json!({"valid": true, "errors": [], "repairs": repairs, "coercions": []}),
        )
        .unwrap(),
    )
}

#[allow(clippy::unnecessary_wraps, clippy::needless_pass_by_value)]
fn invalid(errors: Value) -> Option<Verdict> {
    Some(
        serde_json::from_value(
            json!({"valid": false, "errors": errors, "repairs": [], "coercions": []}),
        )
        .unwrap(),
    )
}

fn hook(id: &str, verdict: &str, errors: Value, at: &str) -> HookCall {
    let mut c = HookCall::new(id, "Stop", verdict, at);
    c.method = Some("fenced".to_owned());
    c.errors = Some(errors);
    c.profile = Some("schemas/a.json".to_owned());
    c
}

/// Seven sessions over two days, two profiles of one schema file, two
/// agents; one made valid by a hook after two blocked tries.
fn fill(store: &mut dyn Store) {
    let d1 = "2026-03-01";
    let d2 = "2026-03-02";
    let a = "schemas/a.json";
    let b = "other/a.json";
    let rows = [
        // Before the window of the `since` test.
        session(
            "s0",
            "2026-02-01",
            a,
            "claude",
            Some("structured"),
            valid(json!([])),
            1,
            None,
        ),
        session(
            "s1",
            d1,
            a,
            "claude",
            Some("structured"),
            valid(json!([])),
            100,
            Some(1.0),
        ),
        session(
            "s3",
            d1,
            a,
            "claude",
            Some("bare"),
            invalid(json!([
                err("/action", "/properties/action/enum"),
                invariant("/x", "self.x > 0")
            ])),
            300,
            Some(3.0),
        ),
        session(
            "s4",
            d1,
            a,
            "claude",
            Some("none"),
            invalid(json!([])),
            400,
            None,
        ),
        {
            let mut r = session("s5", d1, a, "claude", None, None, 500, None);
            r.status = "running".into();
            r
        },
        session(
            "s6",
            d2,
            b,
            "codex",
            Some("repaired"),
            valid(json!(["trailing_comma"])),
            600,
            Some(6.0),
        ),
    ];
    for r in &rows {
        store.write_session(r).unwrap();
    }
    // s2: blocked twice, then valid (the hook writes its session row).
    let at = |m: u32| format!("{d1}T10:0{m}:00.000Z");
    let mut first = hook(
        "s2",
        "blocked",
        json!([
            err("/action", "/properties/action/enum"),
            err("", "/required")
        ]),
        &at(1),
    );
    first.blocks = 1;
    store.save_hook(&first, &[]).unwrap();
    let mut second = hook(
        "s2",
        "blocked",
        json!([err("/action", "/properties/action/enum")]),
        &at(2),
    );
    second.blocks = 2;
    store.save_hook(&second, &[]).unwrap();
    let mut ok = hook("s2", "valid", json!([]), &at(3));
    ok.output = Some(json!({"action": "done"}));
    store.save_hook(&ok, &[]).unwrap();
    // s7: blocked once and nothing since: invalid, its errors counted once.
    let mut only = hook(
        "s7",
        "blocked",
        json!([err("/action", "/properties/action/enum")]),
        &format!("{d2}T11:00:00.000Z"),
    );
    only.blocks = 1;
    store.save_hook(&only, &[]).unwrap();
    // A sub-agent's blocked call is not a retry of the main agent.
    let mut sub = hook("s1", "blocked", json!([err("/z", "/type")]), &at(4));
    "SubagentStop".clone_into(&mut sub.event);
    sub.agent_id = Some("x1".to_owned());
    store.save_hook(&sub, &[]).unwrap();
}

struct Both {
    dir: tempfile::TempDir,
    sqlite: SqliteStore,
    pg: PgStore,
}

fn both() -> Both {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    let mut w = SqliteStore::open(&path).unwrap();
    fill(&mut w);
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    fill(&mut pg);
    Both {
        sqlite: SqliteStore::open_read_only(&path).unwrap(),
        pg,
        dir,
    }
}

impl Both {
    fn stats(&self, by: StatsBy, since: Option<&str>) -> Vec<StatsGroup> {
        let ask = |s: &dyn Source| query::stats(s, by, since).unwrap();
        let (a, b) = (ask(&self.sqlite), ask(&self.pg));
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{by:?}: SQLite (left) and Postgres (right) differ"
        );
        a
    }
}

fn q(p50: f64, p95: f64) -> Quantiles {
    Quantiles {
        p50: Some(p50),
        p95: Some(p95),
    }
}

#[test]
fn stats_count_outcomes_methods_paths_and_percentiles_alike_on_both_backends() {
    let b = both();
    let all = b.stats(StatsBy::All, Some("2026-03-01"));
    assert_eq!(all.len(), 1);
    let g = &all[0];
    assert_eq!(g.key, "");
    // s1..s7: s0 is before the window.
    assert_eq!(g.runs, 7);
    assert_eq!(g.valid_first_try, 2, "s1, s6");
    assert_eq!(g.valid_after_retries, 1, "s2");
    assert_eq!(
        g.retries, 2,
        "s2's two blocked calls; the sub-agent's is not one"
    );
    assert_eq!(g.invalid, 2, "s3, s7");
    assert_eq!(g.no_output, 1, "s4");
    assert_eq!(g.unchecked, 1, "s5");
    assert_eq!(g.repaired, 1, "s6");
    assert_eq!(g.checked(), 6);
    assert_eq!(g.rejected(), 3);
    assert_eq!(g.contradictions, 0);
    let m = |method: &str, count| MethodCount {
        method: method.to_owned(),
        count,
    };
    assert_eq!(
        g.methods,
        [
            m("fenced", 2),
            m("bare", 1),
            m("none", 1),
            m("repaired", 1),
            m("structured", 1)
        ]
    );
    let p = |path: &str, kind: &str, count, example: &str| FailingPath {
        path: path.to_owned(),
        kind: kind.to_owned(),
        count,
        example_session: example.to_owned(),
    };
    assert_eq!(
        g.failing_paths,
        [
            // s2's two blocked tries, s3's and s7's final verdicts.
            p("/action", "enum", 4, "s7"),
            p("", "required", 1, "s2"),
            p("/x", "invariant", 1, "s3"),
        ]
    );
    assert_eq!(
        g.invariants,
        [RuleCount {
            rule: "self.x > 0".to_owned(),
            count: 1
        }]
    );
    // Valid: s1 (100 tokens, $1), s2 (0 tokens: the hook's row, no cost),
    // s6 (600, $6). Nearest rank: p50 of 3 is the 2nd, p95 the 3rd.
    assert_eq!(g.per_valid.tokens, q(100.0, 600.0));
    assert_eq!(g.per_valid.cost_usd, q(1.0, 6.0));
    assert_eq!(g.per_valid.duration_ms, q(1000.0, 6000.0));
}

#[test]
fn stats_group_by_each_key() {
    let b = both();
    let keys = |by| {
        b.stats(by, None)
            .into_iter()
            .map(|g| (g.key, g.runs))
            .collect::<Vec<_>>()
    };
    let kv = |v: &[(&str, i64)]| {
        v.iter()
            .map(|(k, n)| ((*k).to_owned(), *n))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(StatsBy::Profile),
        kv(&[("other/a.json", 1), ("schemas/a.json", 7)])
    );
    assert_eq!(keys(StatsBy::Schema), kv(&[("a.json", 8)]));
    // The hook made s2's row: agent `claude-code`.
    assert_eq!(
        keys(StatsBy::Agent),
        kv(&[("claude", 5), ("claude-code", 2), ("codex", 1)])
    );
    assert_eq!(
        keys(StatsBy::Model),
        kv(&[("", 2), ("model-claude", 5), ("model-codex", 1)])
    );
    assert_eq!(
        keys(StatsBy::Day),
        kv(&[("2026-02-01", 1), ("2026-03-01", 5), ("2026-03-02", 2)])
    );
    let by_day = b.stats(StatsBy::Day, None);
    assert_eq!(by_day[1].rejected(), 2);
    assert_eq!(by_day[1].rejection_rate(), Some(0.5));
    assert_eq!(by_day[2].rejection_rate(), Some(0.5));
}

#[test]
fn stats_of_an_empty_store_are_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    drop(SqliteStore::open(&path).unwrap());
    let s = SqliteStore::open_read_only(&path).unwrap();
    assert!(query::stats(&s, StatsBy::All, None).unwrap().is_empty());
    let pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    assert!(query::stats(&pg, StatsBy::Day, None).unwrap().is_empty());
}

#[test]
fn the_session_list_filters_by_verdict_and_failing_path() {
    use agentshape_store::query::SessionFilter;
    let b = both();
    let ids = |verdict: Option<&str>, path: Option<&str>| {
        let f = SessionFilter {
            verdict: verdict.map(str::to_owned),
            failing_path: path.map(str::to_owned),
            limit: 50,
            ..SessionFilter::default()
        };
        let ask = |s: &dyn Source| {
            let mut v: Vec<String> = query::sessions(s, &f)
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect();
            v.sort();
            v
        };
        let (a, p) = (ask(&b.sqlite), ask(&b.pg));
        assert_eq!(
            a, p,
            "{verdict:?} {path:?}: SQLite (left) and Postgres (right) differ"
        );
        a
    };
    assert_eq!(ids(Some("valid"), None), ["s0", "s1", "s2", "s6"]);
    assert_eq!(ids(Some("invalid"), None), ["s3", "s7"]);
    assert_eq!(ids(Some("none"), None), ["s4"]);
    assert_eq!(ids(Some("unchecked"), None), ["s5"]);
    assert!(ids(Some("maybe"), None).is_empty());
    // s2 failed at /action only in its blocked tries; s1's sub-agent at /z
    // is not the session's.
    assert_eq!(ids(None, Some("/action")), ["s2", "s3", "s7"]);
    assert_eq!(ids(None, Some("")), ["s2"]);
    assert_eq!(ids(None, Some("/x")), ["s3"]);
    assert!(ids(None, Some("/z")).is_empty());
    assert_eq!(ids(Some("valid"), Some("/action")), ["s2"]);
}

/// The columns of `fill`'s rows the stats read, copied into a store of
/// the version before the kept outcomes (Note [Kept outcomes]).
const OLD_SESSION_COLUMNS: &str = "id, tier, profile, agent, model, status, started_at, \
    ended_at, cost_usd, duration_ms, input_tokens, output_tokens, extraction_method, verdict";
const OLD_HOOK_COLUMNS: &str =
    "id, session_id, agent_id, event, verdict, method, errors, blocks, created_at";

/// `fill`'s sessions and hook calls, read from a SQLite store, as `INSERT`
/// statements both backends run.
fn inserts(from: &std::path::Path) -> String {
    use std::fmt::Write;

    use rusqlite::types::Value as V;
    let c = rusqlite::Connection::open(from).unwrap();
    let mut sql = String::new();
    for (table, cols) in [
        ("sessions", OLD_SESSION_COLUMNS),
        ("hook_calls", OLD_HOOK_COLUMNS),
    ] {
        let n = cols.split(',').count();
        let mut st = c
            .prepare(&format!("SELECT {cols} FROM {table} ORDER BY 1"))
            .unwrap();
        let rows = st
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        Ok(match r.get::<_, V>(i)? {
                            V::Null => "NULL".to_owned(),
                            V::Integer(x) => x.to_string(),
                            V::Real(x) => format!("{x:?}"),
                            V::Text(t) => format!("'{}'", t.replace('\'', "''")),
                            V::Blob(_) => unreachable!("no blob columns"),
                        })
                    })
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap();
        for r in rows {
            writeln!(
                sql,
                "INSERT INTO {table} ({cols}) VALUES ({});",
                r.unwrap().join(", ")
            )
            .unwrap();
        }
    }
    sql
}

/// Every grouping's stats, all and since the second day.
fn every_stats(s: &dyn Source) -> Value {
    let mut out = Vec::new();
    for by in [
        StatsBy::All,
        StatsBy::Profile,
        StatsBy::Schema,
        StatsBy::Agent,
        StatsBy::Model,
        StatsBy::Day,
    ] {
        for since in [None, Some("2026-03-01")] {
            out.push(serde_json::to_value(query::stats(s, by, since).unwrap()).unwrap());
        }
    }
    Value::Array(out)
}

/// A store written before the outcomes were kept (SQLite 9, Postgres 6)
/// gives the same stats read as it is (parsing the verdicts) and after
/// the migration (its backfill), as one written by today's code.
#[test]
fn stats_of_a_store_of_the_previous_version_are_the_same_after_migrating() {
    use agentshape_store::migrate::{Migration, POSTGRES, SQLITE};
    let before = |l: &'static [Migration]| {
        &l[..l
            .iter()
            .position(|m| m.name.ends_with("_outcomes.sql"))
            .unwrap()]
    };
    let b = both();
    let expected = every_stats(&b.sqlite);
    assert_eq!(expected, every_stats(&b.pg));
    let rows = inserts(&b.dir.path().join("agentshape.db"));

    // SQLite.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let previous = before(SQLITE);
        for m in previous {
            c.execute_batch(m.sql).unwrap();
        }
        c.pragma_update(None, "user_version", previous.len())
            .unwrap();
        c.execute_batch(&rows).unwrap();
    }
    let old = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(every_stats(&old), expected, "SQLite before migrating");
    drop(old);
    drop(SqliteStore::open(&path).unwrap());
    let new = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(every_stats(&new), expected, "SQLite after migrating");

    // Postgres.
    let url = agentshape_testkit::pg::fresh_db();
    {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(
            "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, \
             applied_at TEXT NOT NULL)",
        )
        .unwrap();
        for m in before(POSTGRES) {
            c.batch_execute(m.sql).unwrap();
            c.execute(
                "INSERT INTO schema_migrations VALUES ($1, $2, 'x')",
                &[&m.version, &m.name],
            )
            .unwrap();
        }
        c.batch_execute(&rows).unwrap();
    }
    let old = PgStore::open_read_only(&url).unwrap();
    assert_eq!(every_stats(&old), expected, "Postgres before migrating");
    drop(old);
    drop(PgStore::open(&url).unwrap());
    let new = PgStore::open_read_only(&url).unwrap();
    assert_eq!(every_stats(&new), expected, "Postgres after migrating");
}

/// `r`'s start, keys, method, verdict and cost written over its row, as
/// SQL both backends run (no store call rewrites a finished session's
/// verdict, but the triggers must follow any write).
fn rewrite_sql(r: &Session) -> String {
    let q = |v: Option<&str>| {
        v.map_or("NULL".to_owned(), |t| {
            format!("'{}'", t.replace('\'', "''"))
        })
    };
    let verdict = r.verdict.as_ref().map(ToString::to_string);
    format!(
        "UPDATE sessions SET started_at = {}, profile = {}, agent = {}, model = {},
            extraction_method = {}, verdict = {}, cost_usd = {} WHERE id = {};",
        q(Some(&r.started_at)),
        q(r.profile.as_deref()),
        q(r.agent.as_deref()),
        q(r.model.as_deref()),
        q(r.extraction_method.as_deref()),
        q(verdict.as_deref()),
        r.cost_usd.map_or("NULL".to_owned(), |c| format!("{c:?}")),
        q(Some(&r.id)),
    )
}

/// The kept outcomes and error counters follow rewrites (Note [Kept
/// outcomes]): a store whose sessions were rewritten (verdict fixed,
/// profile, agent and day changed, errors changed, one deleted) gives the
/// stats of one written once with the final rows.
#[test]
fn kept_stats_follow_rewritten_sessions() {
    let first = [
        // Unchanged: the example of `/a` once r2 and r9 no longer fail.
        session(
            "r0",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("fenced"),
            invalid(json!([err("/a", "/properties/a/type")])),
            5,
            None,
        ),
        session(
            "r1",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("fenced"),
            invalid(json!([err("/a", "/properties/a/type")])),
            10,
            None,
        ),
        session(
            "r2",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("fenced"),
            invalid(json!([
                err("/a", "/properties/a/type"),
                err("/b", "/required")
            ])),
            20,
            None,
        ),
        session(
            "r3",
            "2026-04-02",
            "p/a.json",
            "codex",
            Some("bare"),
            valid(json!([])),
            30,
            Some(0.5),
        ),
        // Deleted below: the example of `/a` until then.
        session(
            "r9",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("fenced"),
            invalid(json!([err("/a", "/properties/a/type")])),
            90,
            None,
        ),
    ];
    let last = [
        session(
            "r0",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("fenced"),
            invalid(json!([err("/a", "/properties/a/type")])),
            5,
            None,
        ),
        // Fixed: its errors no longer count.
        session(
            "r2",
            "2026-04-01",
            "p/a.json",
            "claude",
            Some("structured"),
            valid(json!(["trailing_comma"])),
            20,
            Some(1.0),
        ),
        // Moved to another day, profile and agent, failing elsewhere.
        session(
            "r1",
            "2026-04-03",
            "q/b.json",
            "codex",
            Some("fenced"),
            invalid(json!([invariant("/c", "self.c > 1")])),
            10,
            None,
        ),
        // Now nothing found.
        session(
            "r3",
            "2026-04-02",
            "p/a.json",
            "codex",
            Some("none"),
            invalid(json!([])),
            30,
            Some(0.5),
        ),
    ];
    let mut rewrite: String = last.iter().map(rewrite_sql).collect();
    rewrite.push_str("DELETE FROM sessions WHERE id = 'r9';");
    let dir = tempfile::tempdir().unwrap();
    let rewritten_path = dir.path().join("rewritten.db");
    let once_path = dir.path().join("once.db");
    let rewritten_url = agentshape_testkit::pg::fresh_db();
    let mut once_pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    {
        let mut rewritten = SqliteStore::open(&rewritten_path).unwrap();
        let mut rewritten_pg = PgStore::open(&rewritten_url).unwrap();
        let mut once = SqliteStore::open(&once_path).unwrap();
        for s in [&mut rewritten as &mut dyn Store, &mut rewritten_pg] {
            for r in &first {
                s.write_session(r).unwrap();
            }
        }
        for s in [&mut once as &mut dyn Store, &mut once_pg] {
            for r in &last {
                s.write_session(r).unwrap();
            }
        }
    }
    rusqlite::Connection::open(&rewritten_path)
        .unwrap()
        .execute_batch(&rewrite)
        .unwrap();
    postgres::Client::connect(&rewritten_url, postgres::NoTls)
        .unwrap()
        .batch_execute(&rewrite)
        .unwrap();
    let rewritten = SqliteStore::open_read_only(&rewritten_path).unwrap();
    let rewritten_pg = PgStore::open_read_only(&rewritten_url).unwrap();
    let once = SqliteStore::open_read_only(&once_path).unwrap();
    let expected = every_stats(&once);
    assert_eq!(every_stats(&once_pg), expected);
    assert_eq!(every_stats(&rewritten), expected, "SQLite");
    assert_eq!(every_stats(&rewritten_pg), expected, "Postgres");
    // And what it must be: r0 failing at /a (the example now), r1 at /c
    // only, r2 valid and repaired, r9 gone.
    let all = query::stats(&rewritten, StatsBy::All, None).unwrap();
    assert_eq!(
        (
            all[0].runs,
            all[0].valid_first_try,
            all[0].invalid,
            all[0].no_output
        ),
        (4, 1, 2, 1)
    );
    assert_eq!(all[0].repaired, 1);
    let p = |path: &str, kind: &str, example: &str| FailingPath {
        path: path.to_owned(),
        kind: kind.to_owned(),
        count: 1,
        example_session: example.to_owned(),
    };
    assert_eq!(
        all[0].failing_paths,
        [p("/a", "type", "r0"), p("/c", "invariant", "r1")]
    );
}

/// Groups of every size from 1 to 41 (ranks land on whole numbers at 20
/// and 40), values written out of order, some with no cost: each backend's
/// percentiles are the nearest rank over the values present (Postgres
/// ranks them in SQL, Note [Nearest rank in SQL]), the same by profile and
/// by schema file (two folders' profiles of one file name are one group).
#[test]
fn percentiles_are_the_nearest_rank_for_every_group_size_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    let mut sqlite = SqliteStore::open(&path).unwrap();
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    // Exact nearest rank of the values present.
    let rank = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let at = |p: usize| (v.len() * p).div_ceil(100).checked_sub(1).map(|i| v[i]);
        Quantiles {
            p50: at(50),
            p95: at(95),
        }
    };
    let mut want = Vec::new();
    let mut by_schema: std::collections::BTreeMap<String, (Vec<f64>, Vec<f64>)> =
        std::collections::BTreeMap::new();
    for n in 1..=41u64 {
        let profile = format!("dir{}/s{n:02}.json", n % 2);
        let (mut tokens, mut costs) = (Vec::new(), Vec::new());
        for i in 0..n {
            // A permutation of 0..n (n and 7 or 11 share no factor here
            // often enough to mix the order; distinct either way).
            let t = (i * 7919 + n) % (n * 13) + 1;
            let cost = (i % 3 != 0).then(|| t as f64 / 100.0);
            let id = format!("p{n}-{i}");
            let r = session(
                &id,
                "2026-03-02",
                &profile,
                "claude",
                Some("fenced"),
                valid(json!([])),
                t,
                cost,
            );
            sqlite.write_session(&r).unwrap();
            pg.write_session(&r).unwrap();
            tokens.push(t as f64);
            costs.extend(cost);
        }
        let file = format!("s{n:02}.json");
        let e = by_schema.entry(file).or_default();
        e.0.extend(&tokens);
        e.1.extend(&costs);
        want.push((profile, rank(tokens), rank(costs)));
    }
    let sqlite = SqliteStore::open_read_only(&path).unwrap();
    let both = |by| {
        let a = query::stats(&sqlite, by, None).unwrap();
        let b = query::stats(&pg, by, None).unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "{by:?}: SQLite (left) and Postgres (right) differ"
        );
        a
    };
    let got = both(StatsBy::Profile);
    assert_eq!(got.len(), want.len());
    for (profile, tokens, costs) in &want {
        let g = got.iter().find(|g| &g.key == profile).unwrap();
        assert_eq!(&g.per_valid.tokens, tokens, "{profile} tokens");
        assert_eq!(&g.per_valid.cost_usd, costs, "{profile} cost");
    }
    let got = both(StatsBy::Schema);
    for (file, (tokens, costs)) in by_schema {
        let g = got.iter().find(|g| g.key == file).unwrap();
        assert_eq!(g.per_valid.tokens, rank(tokens), "{file} tokens");
        assert_eq!(g.per_valid.cost_usd, rank(costs), "{file} cost");
    }
}

/// A whole-store `stats` reads the per-day counters and, one by one, only
/// the sessions of the empty day (a start that is not a timestamp): such a
/// session still counts, on both backends.
#[test]
fn whole_store_stats_count_a_session_without_a_start_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentshape.db");
    let mut sqlite = SqliteStore::open(&path).unwrap();
    let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
    let mut odd = session(
        "odd",
        "",
        "p",
        "claude",
        Some("bare"),
        valid(json!([])),
        5,
        None,
    );
    odd.started_at = String::new();
    let rows = [
        odd,
        session(
            "ok",
            "2026-03-02",
            "p",
            "claude",
            Some("fenced"),
            invalid(json!([err("/a", "/properties/a/type")])),
            1,
            None,
        ),
    ];
    for r in &rows {
        sqlite.write_session(r).unwrap();
        pg.write_session(r).unwrap();
    }
    let sqlite = SqliteStore::open_read_only(&path).unwrap();
    for s in [&sqlite as &dyn Source, &pg] {
        let all = query::stats(s, StatsBy::All, None).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].runs, 2, "{:?}", s.backend());
        assert_eq!(all[0].valid_first_try, 1, "{:?} {:?}", s.backend(), all[0]);
        assert_eq!(all[0].invalid, 1);
        assert_eq!(all[0].per_valid.tokens, q(5.0, 5.0));
    }
}
