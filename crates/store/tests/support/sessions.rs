// Sessions of known shape for the query tables, shared by the unit tests in
// `src/query.rs` (SQLite only) and `tests/queries.rs` (both backends): each
// `include!`s this file into a module that has `Session` in scope. One
// table, so the two cannot drift apart.

/// (id, minute started, status, tier, profile, error category, method, summary, agent)
pub type Spec = (
    &'static str,
    u32,
    &'static str,
    u32,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
);

/// Seven finished sessions over three tiers, four profiles (one missing), two
/// error categories and four methods; the filter tables count on exactly these.
pub const SPECS: &[Spec] = &[
    (
        "a1",
        1,
        "completed",
        1,
        Some("claude-ops"),
        None,
        Some("structured"),
        Some("All healthy"),
        "claude",
    ),
    (
        "a2",
        2,
        "error",
        1,
        Some("claude-ops"),
        Some("rate_limit"),
        None,
        None,
        "claude",
    ),
    (
        "a3",
        3,
        "completed",
        2,
        Some("claude-loop"),
        None,
        Some("fenced"),
        Some("Jellyfin 502 found"),
        "codex",
    ),
    (
        "a4",
        4,
        "failed",
        2,
        Some("claude-ops"),
        Some("max_turns"),
        Some("markers+handoff"),
        Some("gave up"),
        "claude",
    ),
    (
        "a5",
        5,
        "completed",
        3,
        Some("code-review"),
        None,
        Some("structured"),
        Some("50% done_ok"),
        "replay",
    ),
    (
        "a6",
        6,
        "error",
        3,
        None,
        Some("rate_limit"),
        None,
        None,
        "claude",
    ),
    (
        "a7",
        7,
        "completed",
        1,
        Some("claude-ops"),
        None,
        Some("structured"),
        Some("JELLYFIN restarted"),
        "claude",
    ),
];

/// The record of one spec: started at minute `min` past 03:00 on 2025-07-14,
/// model `model-<agent>`, and the provider's message for a rate limit.
pub fn record(spec: &Spec) -> Session {
    let &(id, min, status, tier, profile, cat, method, summary, agent) = spec;
    let mut r = Session::new(id, &format!("2025-07-14T03:{min:02}:00.000Z"), status);
    r.tier = i64::from(tier);
    r.profile = profile.map(str::to_owned);
    r.error_category = cat.map(str::to_owned);
    r.extraction_method = method.map(str::to_owned);
    r.summary = summary.map(str::to_owned);
    r.agent = Some(agent.to_owned());
    r.model = Some(format!("model-{agent}"));
    if cat == Some("rate_limit") {
        r.error = Some("API Error: 429 Too Many Requests".to_owned());
    }
    r
}
