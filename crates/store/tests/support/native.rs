// Imported (native) sessions of known shape, shared by the unit tests in
// `src/query.rs` (SQLite only) and `tests/queries.rs` (both backends): each
// `include!`s this file into a module that has `Session`,
// `FeedEntry`, `NativeMark`, `ToolCount` and `Store` in scope.

/// A project name an agent controls: it must render as text.
pub const HOSTILE_PROJECT: &str = "/home/u/<script>alert(1)</script>";

/// A feed body as the importer writes it (runtime's Note [Native feed rows]).
pub fn body(line: u64, event: &serde_json::Value) -> String {
    serde_json::json!({"kind": "event", "event": event, "line": line}).to_string()
}

fn entry(session: &str, at: &str, body: String) -> FeedEntry {
    FeedEntry {
        seq: None,
        session_id: session.to_owned(),
        kind: "event".to_owned(),
        body,
        created_at: at.to_owned(),
    }
}

fn mark(path: &str, session: &str, agent: &str) -> NativeMark {
    NativeMark {
        path: path.to_owned(),
        session_id: session.to_owned(),
        agent: agent.to_owned(),
        dev: 1,
        inode: 1,
        size: 0,
        offset: 0,
        mtime_ms: 0,
        lines: 0,
        updated_at: "2025-07-14T06:00:00.000Z".to_owned(),
        reset: false,
        expect_offset: None,
    }
}

fn tool(name: &str, calls: u64, errors: u64) -> ToolCount {
    ToolCount {
        tool: name.to_owned(),
        calls,
        errors,
    }
}

/// Four imported sessions: `n-main` (Claude Code, a hostile project name,
/// estimated cost 1.5) with a sub-agent `n-sub` (0.25) that has its own
/// `n-sub2`, and `n-codex` (project `/srv/api`, a reported cost of 3).
/// Their feed: prompts, replies, tool calls (one failing), a compaction,
/// thinking (not searched) and usage; plus one body that is not JSON.
pub fn fill_native(store: &mut dyn Store) {
    use serde_json::json;
    let j = |v: serde_json::Value| v;
    let mut main = Session::new("n-main", "2025-07-14T05:00:00.000Z", "completed");
    main.agent = Some("claude-code".to_owned());
    main.model = Some("claude-sonnet-4-5".to_owned());
    main.project = Some(HOSTILE_PROJECT.to_owned());
    main.git_branch = Some("main".to_owned());
    main.agent_version = Some("2.1.23".to_owned());
    main.cost_usd = Some(1.5);
    main.cost_estimated = true;
    main.input_tokens = 1000;
    main.output_tokens = 200;
    main.cache_read_tokens = 5000;
    main.cache_write_tokens = 300;
    main.summary = Some("Fix the Jellyfin 502".to_owned());
    main.tools = vec![tool("Bash", 3, 1), tool("Read", 2, 0)];
    let at = "2025-07-14T05:00:01.000Z";
    let feed = vec![
        entry("n-main", at, body(1, &j(json!({"type": "user_text", "text": "Fix the Jellyfin 502, please"})))),
        entry("n-main", at, body(2, &j(json!({"type": "message", "id": "msg_1"})))),
        entry("n-main", at, body(2, &j(json!({"type": "thinking", "text": "zebra thoughts"})))),
        entry("n-main", at, body(3, &j(json!({"type": "text", "text": "Looking at the jellyfin logs now."})))),
        entry("n-main", at, body(4, &j(json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "journalctl -u jellyfin"}})))),
        entry("n-main", at, body(5, &j(json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "Error: permission denied"})))),
        entry("n-main", at, body(5, &j(json!({"type": "tool_error", "tool_use_id": "t1", "name": "Bash"})))),
        entry("n-main", at, body(6, &j(json!({"type": "compaction", "kind": "compact_boundary", "trigger": "auto", "pre_tokens": 155_000})))),
        entry("n-main", at, body(7, &j(json!({"type": "compact_summary", "text": "Summary: the jellyfin unit lacks permission"})))),
        FeedEntry {
            seq: None,
            session_id: "n-main".to_owned(),
            kind: "event".to_owned(),
            body: "not json".to_owned(),
            created_at: at.to_owned(),
        },
    ];
    store.save_native(&main, &feed, &mark("/p/n-main.jsonl", "n-main", "claude-code")).unwrap();

    let mut sub = Session::new("n-sub", "2025-07-14T05:01:00.000Z", "completed");
    sub.parent_id = Some("n-main".to_owned());
    sub.agent = Some("claude-code".to_owned());
    sub.project = Some(HOSTILE_PROJECT.to_owned());
    sub.cost_usd = Some(0.25);
    sub.cost_estimated = true;
    sub.summary = Some("sub-agent a1b2: Explore the logs".to_owned());
    sub.tools = vec![tool("Bash", 1, 1)];
    let feed = vec![entry("n-sub", "2025-07-14T05:01:01.000Z", body(1, &j(json!({"type": "text", "text": "The jellyfin service restarts"}))))];
    store.save_native(&sub, &feed, &mark("/p/n-main/subagents/agent-a1b2.jsonl", "n-sub", "claude-code")).unwrap();

    let mut sub2 = Session::new("n-sub2", "2025-07-14T05:02:00.000Z", "completed");
    sub2.parent_id = Some("n-sub".to_owned());
    sub2.agent = Some("claude-code".to_owned());
    sub2.project = Some(HOSTILE_PROJECT.to_owned());
    store.save_native(&sub2, &[], &mark("/p/n-sub2.jsonl", "n-sub2", "claude-code")).unwrap();

    let mut codex = Session::new("n-codex", "2025-07-14T04:00:00.000Z", "completed");
    codex.agent = Some("codex".to_owned());
    codex.model = Some("gpt-5-codex".to_owned());
    codex.project = Some("/srv/api".to_owned());
    codex.cost_usd = Some(3.0);
    codex.input_tokens = 4000;
    codex.output_tokens = 400;
    codex.tools = vec![tool("shell", 4, 2)];
    let feed = vec![
        entry("n-codex", "2025-07-14T04:00:01.000Z", body(2, &j(json!({"type": "user_text", "text": "Deploy the api"})))),
        entry("n-codex", "2025-07-14T04:00:02.000Z", body(3, &j(json!({"type": "tool_use", "id": "c1", "name": "shell", "input": {"command": ["bash", "-lc", "make deploy"]}})))),
    ];
    store.save_native(&codex, &feed, &mark("/p/rollout-codex.jsonl", "n-codex", "codex")).unwrap();
}
