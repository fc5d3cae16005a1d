//! The queries behind the dashboard's usage figures (issue 39) on both
//! backends: the span of the stored calls, a list's calls and totals
//! (Note [Totals of a list]), date filters, the agent's two names (Note
//! [One agent, two names]) and a row's verdict columns.

use agentshape_core::usage::UsageTokens;
use agentshape_store::query::{self, SessionFilter, SessionTotals, Source};
use agentshape_store::{NativeMark, PgStore, Session, SqliteStore, Store, UsageRecord, time};
use serde_json::json;

fn ms(at: &str) -> i64 {
    time::parse_ms(at).unwrap()
}

fn call(key: &str, at: &str, model: &str, input: u64) -> UsageRecord {
    UsageRecord {
        key: key.to_owned(),
        at_ms: ms(at),
        model: model.to_owned(),
        sidechain: false,
        tokens: UsageTokens {
            input,
            output: 10,
            ..UsageTokens::default()
        },
    }
}

fn mark(id: &str, agent: &str) -> NativeMark {
    NativeMark {
        path: format!("/p/{id}.jsonl"),
        session_id: id.to_owned(),
        agent: agent.to_owned(),
        dev: 1,
        inode: 1,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: "2025-03-12T00:00:00.000Z".to_owned(),
        reset: false,
        expect_offset: None,
    }
}

/// Two imports with calls (Claude Code over two March days, Codex with
/// a model no table prices), a run of `claude` with a verdict that failed
/// at `/action`, and a run with tokens but no cost.
fn fill(store: &mut dyn Store) {
    let mut cc = Session::new("cc", "2025-03-10T23:00:00.000Z", "completed");
    cc.agent = Some("claude-code".into());
    cc.project = Some("/home/ana/wt/api-fix".into());
    cc.usage = vec![
        call(
            "msg:a",
            "2025-03-10T23:30:00.000Z",
            "claude-sonnet-4-5",
            1000,
        ),
        call(
            "msg:b",
            "2025-03-11T00:30:00.000Z",
            "claude-sonnet-4-5",
            2000,
        ),
    ];
    store
        .save_native(&cc, &[], &mark("cc", "claude-code"))
        .unwrap();
    let mut cx = Session::new("cx", "2025-03-11T08:00:00.000Z", "completed");
    cx.agent = Some("codex".into());
    cx.project = Some("/srv/api".into());
    cx.usage = vec![call(
        "cx#0",
        "2025-03-11T08:05:00.000Z",
        "mystery-model",
        500,
    )];
    store.save_native(&cx, &[], &mark("cx", "codex")).unwrap();
    let mut run = Session::new("run", "2025-03-09T10:00:00.000Z", "completed");
    run.agent = Some("claude".into());
    run.cost_usd = Some(0.25);
    run.input_tokens = 40;
    run.output_tokens = 2;
    run.extraction_method = Some("structured".into());
    run.verdict = Some(
        serde_json::from_value(json!({"valid": false, "errors": [
            {"instance_path": "/action", "schema_path": "", "message": "x"}],
            "repairs": [], "coercions": []}))
        .unwrap(),
    );
    store.write_session(&run).unwrap();
    let mut free = Session::new("free", "2025-03-09T11:00:00.000Z", "failed");
    free.agent = Some("codex".into());
    free.input_tokens = 7;
    store.write_session(&free).unwrap();
}

struct Both {
    _dir: tempfile::TempDir,
    sqlite: SqliteStore,
    pg: PgStore,
}

impl Both {
    fn new() -> Both {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.db");
        fill(&mut SqliteStore::open(&path).unwrap());
        let mut pg = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
        fill(&mut pg);
        Both {
            sqlite: SqliteStore::open_read_only(&path).unwrap(),
            pg,
            _dir: dir,
        }
    }

    /// `f` on each backend: the answers must be equal (as JSON).
    fn ask<T: std::fmt::Debug>(&self, what: &str, f: impl Fn(&dyn Source) -> T) -> T {
        let (a, b) = (f(&self.sqlite), f(&self.pg));
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{what}: SQLite (left), Postgres (right)"
        );
        a
    }
}

fn f() -> SessionFilter {
    SessionFilter {
        limit: 100,
        ..SessionFilter::default()
    }
}

#[allow(clippy::unnecessary_wraps)] // the filters' fields are options
fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

#[test]
fn span_calls_totals_dates_agents_and_verdicts_answer_alike() {
    let b = Both::new();
    let span = b.ask("span", |s| query::usage_span(s).unwrap());
    assert_eq!(
        span,
        Some((
            ms("2025-03-10T23:30:00.000Z"),
            ms("2025-03-11T08:05:00.000Z")
        ))
    );

    // The whole list: two sessions counted from their calls, two from their rows.
    let t = b.ask("totals", |s| query::session_totals(s, &f()).unwrap());
    assert_eq!(
        t,
        SessionTotals {
            sessions: 4,
            with_calls: 2,
            other_tokens: 49,
            other_cost_usd: 0.25,
            other_unpriced: 1,
        }
    );
    let calls = b.ask("calls", |s| query::session_usage_calls(s, &f()).unwrap());
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].session_id, "cc");
    assert_eq!(calls[2].model, "mystery-model");

    // Either name of the agent finds the run and the import.
    for name in ["claude", "claude-code"] {
        let ids = b.ask(name, |s| {
            query::sessions(
                s,
                &SessionFilter {
                    agent: some(name),
                    ..f()
                },
            )
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
        });
        assert_eq!(ids, ["cc", "run"], "{name}");
    }
    let claude = SessionFilter {
        agent: some("claude"),
        ..f()
    };
    let calls = b.ask("claude calls", |s| {
        query::session_usage_calls(s, &claude).unwrap()
    });
    assert_eq!(calls.len(), 2);
    let t = b.ask("claude totals", |s| {
        query::session_totals(s, &claude).unwrap()
    });
    assert_eq!((t.sessions, t.with_calls, t.other_unpriced), (2, 1, 0));

    // Started on 2025-03-10 or later (a session is in the day it started).
    let march10 = SessionFilter {
        from: some("2025-03-10T00:00:00.000Z"),
        to: some("2025-03-11T00:00:00.000Z"),
        ..f()
    };
    let t = b.ask("dated totals", |s| {
        query::session_totals(s, &march10).unwrap()
    });
    assert_eq!((t.sessions, t.with_calls), (1, 1));
    let calls = b.ask("dated calls", |s| {
        query::session_usage_calls(s, &march10).unwrap()
    });
    assert_eq!(
        calls.len(),
        2,
        "both of cc's calls, the one after midnight too"
    );
    let none = SessionFilter {
        from: some("2026-01-01T00:00:00.000Z"),
        ..f()
    };
    let t = b.ask("nothing", |s| query::session_totals(s, &none).unwrap());
    assert_eq!(t, SessionTotals::default());

    // The verdict columns: only the run has them.
    let rows = b.ask("rows", |s| query::sessions(s, &f()).unwrap());
    let by = |id: &str| rows.iter().find(|r| r.id == id).unwrap();
    assert_eq!(by("run").verdict_valid, Some(false));
    assert_eq!(by("run").failing_path.as_deref(), Some("/action"));
    for id in ["cc", "cx", "free"] {
        assert_eq!(by(id).verdict_valid, None, "{id}");
        assert_eq!(by(id).failing_path, None, "{id}");
    }
}

#[test]
fn a_store_without_calls_has_no_span_and_counts_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let mut w = SqliteStore::open(&path).unwrap();
    let mut run = Session::new("r", "2025-03-09T10:00:00.000Z", "completed");
    run.cost_usd = Some(1.0);
    run.input_tokens = 5;
    w.write_session(&run).unwrap();
    let r = SqliteStore::open_read_only(&path).unwrap();
    assert_eq!(query::usage_span(&r).unwrap(), None);
    assert!(query::session_usage_calls(&r, &f()).unwrap().is_empty());
    let t = query::session_totals(&r, &f()).unwrap();
    assert_eq!((t.sessions, t.other_tokens, t.other_cost_usd), (1, 5, 1.0));
}
