//! The usage reports' contract, as tables.

use super::*;
use crate::pricing::PriceTable;

const H: i64 = 3_600_000;

fn call(session: &str, at_ms: i64, model: &str, input: u64, output: u64) -> UsageCall {
    UsageCall {
        session_id: session.to_owned(),
        agent: "claude-code".to_owned(),
        at_ms,
        model: model.to_owned(),
        tokens: UsageTokens {
            input,
            output,
            ..UsageTokens::default()
        },
        ..UsageCall::default()
    }
}

fn prices() -> PriceTable {
    PriceTable::from_toml(
        r#"
[[model]]
match = ["m-a"]
input = 1.0
output = 2.0
"#,
    )
    .expect("table")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn groups_sum_tokens_and_cost_and_mark_partial() {
    let calls = [
        call("s1", 0, "m-a", 1_000_000, 0),
        call("s1", H, "m-a", 0, 1_000_000),
        call("s2", 30 * H, "unknown-model", 500, 500),
        call("s2", 30 * H, "m-a", 1_000_000, 0),
    ];
    let (groups, total) = group_by(
        &calls,
        |c| Some((c.at_ms / (24 * H)).to_string()),
        &prices(),
    );
    let keys: Vec<&str> = groups.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["0", "1"]);
    let day0 = &groups[0].figures;
    assert_eq!(
        (day0.input, day0.output, day0.calls),
        (1_000_000, 1_000_000, 2)
    );
    assert!(close(day0.cost_usd, 3.0));
    assert!(!day0.partial);
    let day1 = &groups[1].figures;
    assert!(day1.partial, "an unknown model makes its day partial");
    assert_eq!(day1.unpriced_models, ["unknown-model"]);
    assert!(close(day1.cost_usd, 1.0), "the priced part only");
    assert_eq!(day1.total_tokens, 1_001_000);
    assert!(total.figures.partial);
    assert!(close(total.figures.cost_usd, 4.0));
    assert_eq!(total.figures.total_tokens, 3_001_000);
    // Models most tokens first; the breakdown says which part is unpriced.
    assert_eq!(groups[1].models, ["m-a", "unknown-model"]);
    let unknown = &groups[1].breakdown[1];
    assert!(unknown.figures.partial && close(unknown.figures.cost_usd, 0.0));
    assert!(!groups[1].breakdown[0].figures.partial);
}

#[test]
fn a_call_the_key_leaves_out_is_not_counted() {
    let calls = [call("s1", 0, "m-a", 10, 0), call("s2", 0, "m-a", 20, 0)];
    let (groups, total) = group_by(
        &calls,
        |c| (c.session_id == "s2").then(|| "x".to_owned()),
        &prices(),
    );
    assert_eq!(groups.len(), 1);
    assert_eq!(total.figures.input, 20);
}

#[test]
fn sessions_fold_sub_agents_and_keep_the_main_agent_apart() {
    let mut side = call("parent", 2 * H, "m-a", 0, 10);
    side.sidechain = true;
    let mut child = call("agent-x", 3 * H, "m-a", 0, 100);
    child.parent_id = Some("parent".to_owned());
    let calls = [
        call("parent", H, "m-a", 1, 1),
        side,
        child,
        call("other", 0, "m-a", 5, 5),
    ];
    let (rows, total) = sessions(&calls, &prices());
    let ids: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
    assert_eq!(
        ids,
        ["other", "parent"],
        "by first call; the child is folded in"
    );
    let p = &rows[1];
    assert_eq!(
        p.figures.output, 111,
        "own + inline sidechain + child's file"
    );
    assert_eq!(p.own.output, 1, "the main agent alone");
    assert_eq!(p.subagents, 2, "one file-based, one inline");
    assert_eq!((p.first_ms, p.last_ms), (H, 3 * H));
    assert_eq!(p.agent, "claude-code");
    assert_eq!(total.figures.output, 116, "every call once");
}

#[test]
fn blocks_open_on_the_hour_and_close_after_five_hours_or_a_gap() {
    let m = 60_000;
    let calls = [
        call("s", 10 * H + 17 * m, "m-a", 1, 0), // opens 10:00–15:00
        call("s", 14 * H + 59 * m, "m-a", 1, 0), // inside
        call("s", 15 * H + m, "m-a", 1, 0),      // past the end: 15:00–20:00
        call("s", 26 * H, "m-a", 1, 0),          // a gap of more than 5 h: 26:00
    ];
    let (blocks, total) = blocks(&calls, &prices(), 27 * H);
    let spans: Vec<(i64, i64, u64)> = blocks
        .iter()
        .map(|b| (b.start_ms / H, b.end_ms / H, b.figures.calls))
        .collect();
    assert_eq!(spans, [(10, 15, 2), (15, 20, 1), (26, 31, 1)]);
    let active: Vec<bool> = blocks.iter().map(|b| b.active).collect();
    assert_eq!(active, [false, false, true]);
    assert_eq!(total.figures.calls, 4);
    let (none, _) = super::blocks(&[], &prices(), 0);
    assert!(none.is_empty());
}

#[test]
fn an_unnamed_model_is_unpriced_never_free() {
    let calls = [call("s", 0, "", 10, 10)];
    let (_, total) = group_by(&calls, |_| Some(String::new()), &prices());
    assert!(total.figures.partial);
    assert_eq!(total.figures.unpriced_models, ["(unknown model)"]);
    // A call of no tokens makes nothing partial.
    let calls = [call("s", 0, "", 0, 0)];
    let (_, total) = group_by(&calls, |_| Some(String::new()), &prices());
    assert!(!total.figures.partial);
}

#[test]
fn the_vocabulary_takes_cached_tokens_out_of_codex_and_gemini_input() {
    use crate::summary::TokenCounts;
    let codex = TokenCounts {
        input: 1000,
        output: 50,
        cache_read: 800,
        reasoning: 20,
        ..TokenCounts::default()
    };
    let t = UsageTokens::from_counts(&codex, true);
    assert_eq!(
        (t.input, t.cache_read, t.output, t.reasoning),
        (200, 800, 50, 20)
    );
    assert_eq!(t.total(), 1050);
    let claude = TokenCounts {
        input: 3,
        output: 7,
        cache_read: 100,
        cache_write: 40,
        cache_write_1h: 30,
        ..TokenCounts::default()
    };
    let t = UsageTokens::from_counts(&claude, false);
    assert_eq!((t.input, t.cache_write_5m, t.cache_write_1h), (3, 10, 30));
    assert_eq!(t.prompt(), 143);
    // Damaged counts never underflow.
    let odd = TokenCounts {
        input: 5,
        cache_read: 9,
        cache_write: 1,
        cache_write_1h: 4,
        output: 1,
        reasoning: 3,
    };
    let t = UsageTokens::from_counts(&odd, true);
    assert_eq!(
        (t.input, t.cache_write_5m, t.cache_write_1h, t.reasoning),
        (0, 0, 1, 1)
    );
}
