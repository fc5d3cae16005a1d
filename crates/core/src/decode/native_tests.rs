//! Native session files: Claude Code sessions, Codex rollouts, Gemini chats.
//! Fixtures (hand-written, shaped like the real files) are in
//! `crates/core/tests/fixtures/native/`; every input runs whole, line by
//! line and one byte at a time, and must summarize the same.

use std::collections::BTreeMap;

use super::*;
use crate::summary::{ErrorCategory, SessionInfo, TokenCounts};

const CLAUDE_10: &str = include_str!("../../tests/fixtures/native/claude-1.0-session.jsonl");
const CLAUDE_API_ERRORS: &str =
    include_str!("../../tests/fixtures/native/claude-2.1-api-errors.jsonl");
const CLAUDE_SUBAGENT: &str = include_str!("../../tests/fixtures/native/claude-2.1-subagent.jsonl");
const CODEX: &str = include_str!("../../tests/fixtures/native/codex-rollout.jsonl");
const CODEX_LEGACY: &str = include_str!("../../tests/fixtures/native/codex-rollout-legacy.jsonl");
const GEMINI: &str = include_str!("../../tests/fixtures/native/gemini-chat.json");

fn run(input: &[u8], chunk: Option<usize>, format: Format, opts: &DecodeOptions) -> RunSummary {
    let mut decoder = Decoder::new(format, opts.clone());
    let mut builder = SummaryBuilder::new();
    match chunk {
        None => decoder.feed(input, &mut |e| builder.push(e)),
        Some(n) => {
            for c in input.chunks(n) {
                decoder.feed(c, &mut |e| builder.push(e));
            }
        }
    }
    decoder.finish(&mut |e| builder.push(e));
    builder.finish(decoder.format())
}

/// Auto-detected, whole / by line / by byte, and with the format named:
/// all must agree.
fn summary(input: &str) -> RunSummary {
    let opts = DecodeOptions::default();
    let whole = run(input.as_bytes(), None, Format::Auto, &opts);
    let by_byte = run(input.as_bytes(), Some(1), Format::Auto, &opts);
    assert_eq!(whole, by_byte, "1-byte chunks differ");
    let mut by_line = Decoder::new(Format::Auto, opts.clone());
    let mut builder = SummaryBuilder::new();
    for line in input.as_bytes().split_inclusive(|&b| b == b'\n') {
        by_line.feed(line, &mut |e| builder.push(e));
    }
    by_line.finish(&mut |e| builder.push(e));
    assert_eq!(
        whole,
        builder.finish(by_line.format()),
        "line by line differs"
    );
    let named = run(input.as_bytes(), Some(3), whole.format, &opts);
    assert_eq!(whole, named, "explicit format differs from auto");
    whole
}

fn session(s: &RunSummary) -> &SessionInfo {
    s.session
        .as_deref()
        .expect("a native summary has a session")
}

fn counts(input: u64, output: u64, cache_read: u64, cache_write: u64) -> TokenCounts {
    TokenCounts {
        input,
        output,
        cache_read,
        cache_write,
        ..TokenCounts::default()
    }
}

/// The four sums, without the parts (reasoning, 1-hour writes) they hold.
fn sums(t: &TokenCounts) -> TokenCounts {
    counts(t.input, t.output, t.cache_read, t.cache_write)
}

fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

fn events(input: &str, format: Format, opts: &DecodeOptions) -> Vec<Event> {
    let mut out = Vec::new();
    let mut decoder = Decoder::new(format, opts.clone());
    decoder.feed(input.as_bytes(), &mut |e| out.push(e));
    decoder.finish(&mut |e| out.push(e));
    out
}

// ---- Claude Code sessions ----------------------------------------------------

#[test]
fn claude_session_is_detected_and_summarized() {
    let s = summary(CLAUDE_10);
    assert_eq!(s.format, Format::ClaudeSession);
    let n = session(&s);
    assert_eq!(n.agent, "claude-code");
    assert_eq!(n.agent_version.as_deref(), Some("1.0.51"));
    assert_eq!(n.project.as_deref(), Some("/home/u/proj"));
    assert_eq!(n.git_branch.as_deref(), Some("main"));
    assert_eq!(n.session_id.as_deref(), Some("sess-1"));
    assert_eq!(
        n.models,
        [
            "claude-opus-4-20250514",
            "claude-3-5-haiku-20241022",
            "claude-sonnet-4-5-20250929"
        ]
    );
    assert_eq!(n.started_at.as_deref(), Some("2025-07-01T10:00:01.000Z"));
    assert_eq!(n.ended_at.as_deref(), Some("2025-07-01T10:00:17.000Z"));
    assert_eq!(
        n.turns, 2,
        "two typed prompts; tool results, compact summary and sidechain prompt are not turns"
    );
    assert_eq!(n.tool_calls, map(&[("Bash", 1), ("Read", 1), ("Task", 1)]));
    assert_eq!(n.tool_errors, map(&[("Bash", 1), ("Read", 1)]));
    assert_eq!(n.sidechain_lines, 3);
    assert_eq!(n.subagents.len(), 1);
    assert_eq!(n.subagents[0].id, "s1");
    assert_eq!(n.subagents[0].lines, 3);
    // The inline sub-agent's own model and tokens (one call, msg_C); the
    // session's tokens hold them too.
    assert_eq!(
        n.subagents[0].model.as_deref(),
        Some("claude-3-5-haiku-20241022")
    );
    assert_eq!(
        n.subagents[0].tokens,
        TokenCounts {
            input: 4,
            output: 8,
            cache_write: 10,
            ..TokenCounts::default()
        }
    );
    assert!(n.tokens.input >= 4 && n.tokens.output >= 8);
    assert_eq!(n.compactions, 1);
    assert_eq!(n.messages, 4);
    assert_eq!(
        n.line_types,
        map(&[
            ("assistant", 8),
            ("brand-new-thing", 1),
            ("summary", 1),
            ("system:compact_boundary", 1),
            ("user", 7)
        ])
    );
    assert_eq!(
        n.unknown_types,
        map(&[("brand-new-thing", 1), ("summary", 1)])
    );
    assert_eq!(n.glued_lines, 0);
    assert!(n.api_errors.is_empty());
    assert_eq!((n.cost_usd, n.cost_estimated), (None, false));
    // The run summary's own fields.
    assert_eq!(s.session_id.as_deref(), Some("sess-1"));
    assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(s.cwd.as_deref(), Some("/home/u/proj"));
    assert_eq!(s.output, "The final answer.");
    assert_eq!(s.tool_uses, 3);
    assert!(s.saw_result);
    assert_eq!((s.error.as_ref(), s.error_category), (None, None));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!((s.lines, s.events, s.skipped_lines), (18, 18, 0));
    let result = s.result.as_ref().unwrap();
    assert_eq!(
        (result.usage.input_tokens, result.usage.output_tokens),
        (19, 66)
    );
    assert_eq!(result.num_turns, Some(2));
}

/// Note \[Native tokens\]: `msg_A` streams over three lines with output 5,
/// 20, 42; `msg_B` repeats the same usage twice; `msg_D` grows 1 → 9.
#[test]
fn claude_tokens_count_each_message_once_with_its_last_usage() {
    let n = session(&summary(CLAUDE_10)).clone();
    assert_eq!(n.tokens, counts(19, 66, 600, 60));
    // Not the first line of each message (output 5 + 7 + 8 + 1), not the sum of all lines.
    assert_ne!(n.tokens.output, 21);
    assert_ne!(n.tokens.output, 99);
    assert_ne!(n.tokens.input, 44);
    let mut by_model = BTreeMap::new();
    by_model.insert("claude-3-5-haiku-20241022".to_owned(), counts(4, 8, 0, 10));
    by_model.insert("claude-opus-4-20250514".to_owned(), counts(13, 49, 300, 50));
    by_model.insert(
        "claude-sonnet-4-5-20250929".to_owned(),
        counts(2, 9, 300, 0),
    );
    assert_eq!(n.tokens_by_model, by_model);
}

#[test]
fn stream_json_stays_claude_and_anthropic_bodies_stay_anthropic() {
    let stream = "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},\"session_id\":\"s\",\"uuid\":\"u\",\"parent_tool_use_id\":null}\n";
    assert_eq!(summary(stream).format, Format::Claude);
    assert!(summary(stream).session.is_none());
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}"#;
    assert_eq!(summary(body).format, Format::Anthropic);
    let json = serde_json::to_value(summary(body)).unwrap();
    assert!(
        json.get("session").is_none(),
        "no session key for other formats"
    );
}

#[test]
fn any_line_type_with_session_fields_decides_claude_session() {
    for first in [
        r#"{"type":"invented-by-2.9","sessionId":"s","whatever":1}"#,
        r#"{"type":"summary","summary":"x","leafUuid":"u"}"#,
        r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{},"isSnapshotUpdate":false}"#,
        r#"{"type":"user","parentUuid":null,"message":{"role":"user","content":"hi"}}"#,
    ] {
        let s = summary(&format!("{first}\n"));
        assert_eq!(s.format, Format::ClaudeSession, "{first}");
        assert_eq!(s.skipped_lines, 0);
    }
}

#[test]
fn claude_api_errors_subagent_progress_and_bookkeeping() {
    let s = summary(CLAUDE_API_ERRORS);
    assert_eq!(s.format, Format::ClaudeSession);
    let n = session(&s);
    assert_eq!(n.api_error_count, 2);
    assert_eq!(n.api_errors[0].category, ErrorCategory::RateLimit);
    assert_eq!(n.api_errors[0].status, Some(429));
    assert_eq!(n.api_errors[0].message, "Rate limited: too many requests");
    assert_eq!(
        n.api_errors[0].at.as_deref(),
        Some("2026-01-01T00:00:02.000Z")
    );
    assert_eq!(n.api_errors[1].status, Some(529));
    assert_eq!(n.api_errors[1].category, ErrorCategory::Api);
    assert_eq!(n.subagents.len(), 1);
    assert_eq!(n.subagents[0].id, "a0b1c2");
    assert_eq!(n.subagents[0].tool_use_id.as_deref(), Some("toolu_1"));
    assert_eq!(n.subagents[0].lines, 2);
    assert_eq!(n.models, ["claude-opus-4-6"], "<synthetic> is not a model");
    assert_eq!(n.tokens, counts(8, 33, 1000, 1000));
    assert_eq!(n.turns, 2);
    assert_eq!(
        n.unknown_types,
        map(&[
            ("file-history-snapshot", 1),
            ("last-prompt", 1),
            ("permission-mode", 1),
            ("progress:hook_progress", 1)
        ])
    );
    assert_eq!(n.git_branch.as_deref(), Some("feature"));
    // The last main-chain message is an API error: the run is an error,
    // and its answer is empty (the error text is not an answer).
    assert_eq!(s.error_category, Some(ErrorCategory::Api));
    assert!(s.error.as_deref().unwrap().starts_with("API Error: 529"));
    assert!(s.result.as_ref().unwrap().is_error);
    assert_eq!(s.output, "");
    assert_eq!(s.model.as_deref(), Some("claude-opus-4-6"));
}

#[test]
fn retried_api_error_followed_by_an_answer_is_not_a_run_error() {
    // Drop the final synthetic error line: the 429 retry is listed, the run is fine.
    let cut: Vec<&str> = CLAUDE_API_ERRORS.lines().collect();
    let input = cut[..cut.len() - 2].join("\n") + "\n";
    let s = summary(&input);
    assert_eq!(session(&s).api_error_count, 1);
    assert_eq!((s.error.as_ref(), s.error_category), (None, None));
    assert_eq!(s.output, "Deployed.");
}

#[test]
fn subagent_file_names_its_agent_and_parent() {
    let s = summary(CLAUDE_SUBAGENT);
    assert_eq!(s.format, Format::ClaudeSession);
    let n = session(&s);
    assert_eq!(n.agent_id.as_deref(), Some("a0b1c2"));
    assert_eq!(n.parent_session_id.as_deref(), Some("parent-sess"));
    assert_eq!(n.session_id.as_deref(), Some("agent-a0b1c2"));
    assert!(n.subagents.is_empty(), "the file is the sub-agent");
    assert_eq!(n.sidechain_lines, 4);
    assert_eq!(n.turns, 1);
    assert_eq!(n.tokens, counts(8, 13, 5, 0));
    assert_eq!(s.output, "deployed");
    assert_eq!(s.model.as_deref(), Some("claude-haiku-4-5"));
    assert!(s.saw_result);
}

#[test]
fn glued_lines_decode_both_objects() {
    let lines: Vec<&str> = CLAUDE_10.lines().collect();
    // Lines 16 and 17 (msg_D's two lines) glued on one physical line.
    let mut glued = lines[..15].join("\n");
    glued.push('\n');
    glued.push_str(lines[15]);
    glued.push_str(lines[16]);
    glued.push('\n');
    glued.push_str(lines[17]);
    glued.push('\n');
    let s = summary(&glued);
    let whole = summary(CLAUDE_10);
    let n = session(&s);
    assert_eq!(n.glued_lines, 1);
    assert_eq!(n.tokens, session(&whole).tokens);
    assert_eq!(n.line_types, session(&whole).line_types);
    assert_eq!(s.output, "The final answer.");
    assert_eq!((s.lines, s.events, s.skipped_lines), (17, 17, 0));
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("glued") && w.contains("line 16")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn glued_object_followed_by_a_cut_one_keeps_the_first() {
    let lines: Vec<&str> = CLAUDE_10.lines().collect();
    let input = format!("{}\n{}{{\"type\":\"assis\n", lines[1], lines[2]);
    let s = summary(&input);
    let n = session(&s);
    assert_eq!(n.glued_lines, 1);
    assert_eq!(n.tokens, counts(10, 5, 100, 50));
    assert!(
        s.warnings.iter().any(|w| w.contains("cut object")),
        "{:?}",
        s.warnings
    );
}

#[test]
fn missing_final_newline_and_truncated_last_line() {
    let whole = summary(CLAUDE_10);
    let no_newline = summary(CLAUDE_10.trim_end_matches('\n'));
    assert_eq!(whole, no_newline);
    let truncated = format!(
        "{CLAUDE_10}{{\"parentUuid\":\"a7\",\"type\":\"assistant\",\"message\":{{\"id\":\"msg_E\",\"usage\":{{\"output_tokens\":99"
    );
    let s = summary(&truncated);
    assert_eq!((s.lines, s.malformed_lines, s.skipped_lines), (19, 1, 1));
    assert_eq!(session(&s).tokens, session(&whole).tokens);
    assert_eq!(s.output, whole.output);
}

#[test]
fn non_json_and_non_object_lines_are_counted_not_fatal() {
    let input = format!("{CLAUDE_10}not json at all\n[1,2]\n\n");
    let s = summary(&input);
    assert_eq!((s.lines, s.events), (21, 18));
    assert_eq!(
        (s.malformed_lines, s.non_object_lines, s.blank_lines),
        (1, 1, 1)
    );
    assert_eq!(session(&s).tokens.output, 66);
}

#[test]
fn line_events_come_first_and_tool_results_keep_content_only_when_asked() {
    let keep = DecodeOptions {
        keep_tool_results: true,
        ..DecodeOptions::default()
    };
    let evs = events(CLAUDE_10, Format::ClaudeSession, &keep);
    let i = evs
        .iter()
        .position(
            |e| matches!(e, Event::ToolResult { tool_use_id: Some(id), .. } if id == "toolu_bash"),
        )
        .unwrap();
    let Event::ToolResult {
        is_error, content, ..
    } = &evs[i]
    else {
        unreachable!()
    };
    assert!(*is_error);
    assert_eq!(content.as_deref(), Some("make: *** [test] Error 1"));
    assert!(matches!(&evs[i + 1], Event::ToolError { name, .. } if name == "Bash"));
    assert!(
        matches!(&evs[i - 1], Event::Line(l) if l.uuid.as_deref() == Some("u2") && l.kind == "user")
    );
    let plain = events(CLAUDE_10, Format::ClaudeSession, &DecodeOptions::default());
    assert!(plain.iter().all(|e| !matches!(
        e,
        Event::ToolResult {
            content: Some(_),
            ..
        }
    )));
    assert!(
        plain.iter().any(
            |e| matches!(e, Event::CompactSummary { text } if text.starts_with("This session"))
        )
    );
    assert!(plain.iter().any(|e| matches!(e, Event::Compaction { kind, trigger: Some(t), pre_tokens: Some(155_000) } if kind == "compact_boundary" && t == "auto")));
    let json = serde_json::to_value(&plain[2]).unwrap();
    assert_eq!(json["type"], "line");
    assert_eq!(json["kind"], "user");
    assert_eq!(json["session_id"], "sess-1");
}

// ---- Codex rollouts ----------------------------------------------------------

#[test]
fn codex_rollout_is_detected_and_summarized() {
    let s = summary(CODEX);
    assert_eq!(s.format, Format::CodexRollout);
    let n = session(&s);
    assert_eq!(n.agent, "codex");
    assert_eq!(n.agent_version.as_deref(), Some("0.104.0"));
    assert_eq!(n.session_id.as_deref(), Some("cx-1"));
    assert_eq!(n.project.as_deref(), Some("/w/repo"));
    assert_eq!(n.git_branch.as_deref(), Some("dev"));
    assert_eq!(n.models, ["gpt-5-codex"]);
    assert_eq!(n.turns, 1);
    assert_eq!(
        n.tool_calls,
        map(&[("apply_patch", 1), ("exec_command", 1), ("shell", 1)])
    );
    assert_eq!(
        n.tool_errors,
        map(&[("shell", 1)]),
        "exit code 101 fails; exit 0 with 'Exit code: 1' in the output does not"
    );
    assert_eq!(n.compactions, 1);
    assert_eq!(n.api_error_count, 1);
    assert_eq!(n.api_errors[0].category, ErrorCategory::RateLimit);
    assert_eq!(
        n.unknown_types,
        map(&[("event_msg:task_started", 1), ("world_state", 1)])
    );
    assert_eq!(n.line_types["event_msg:token_count"], 6);
    assert_eq!(s.output, "Done: tests pass.");
    assert_eq!(s.model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(
        (s.error.as_ref(), s.error_category),
        (None, None),
        "an answer followed the error"
    );
    assert_eq!((s.lines, s.events, s.skipped_lines), (24, 24, 0));
}

/// Codex totals are cumulative and half of them repeat: the session's tokens
/// are the last total, never a sum.
#[test]
fn codex_tokens_are_the_last_cumulative_total() {
    let n = session(&summary(CODEX)).clone();
    assert_eq!(sums(&n.tokens), counts(3000, 160, 1500, 0));
    assert_ne!(n.tokens.input, 1000 + 1000 + 2500 + 3000 + 3000);
    let by_model: Vec<(&String, TokenCounts)> = n
        .tokens_by_model
        .iter()
        .map(|(m, t)| (m, sums(t)))
        .collect();
    assert_eq!(
        by_model,
        [(&"gpt-5-codex".to_owned(), counts(3000, 160, 1500, 0))]
    );
    assert_eq!(
        n.tokens_by_model["gpt-5-codex"].reasoning,
        n.tokens.reasoning
    );
}

#[test]
fn codex_older_layout() {
    let s = summary(CODEX_LEGACY);
    assert_eq!(s.format, Format::CodexRollout);
    let n = session(&s);
    assert_eq!(n.session_id.as_deref(), Some("old-1"));
    assert_eq!(n.git_branch.as_deref(), Some("main"));
    assert_eq!(n.turns, 1, "the environment context is not a prompt");
    assert_eq!(n.tool_errors, map(&[("shell", 1)]), "metadata.exit_code 2");
    assert_eq!(n.unknown_types, map(&[("record_type:state", 2)]));
    assert_eq!(s.output, "There is no x.");
    assert_eq!((s.lines, s.events, s.skipped_lines), (9, 9, 0));
    // A bare response item first (header lost) is still a rollout.
    let bare = CODEX_LEGACY.lines().skip(3).collect::<Vec<_>>().join("\n") + "\n";
    assert_eq!(summary(&bare).format, Format::CodexRollout);
}

// ---- Gemini chats ------------------------------------------------------------

#[test]
fn gemini_chat_is_detected_and_summarized() {
    let s = summary(GEMINI);
    assert_eq!(s.format, Format::GeminiChat);
    let n = session(&s);
    assert_eq!(n.agent, "gemini-cli");
    assert_eq!(n.session_id.as_deref(), Some("gm-1"));
    assert_eq!(n.models, ["gemini-2.5-flash", "gemini-2.5-pro"]);
    assert_eq!(n.turns, 2);
    assert_eq!(n.messages, 2);
    // input + tool, output + thoughts, cached as cache_read; per message, summed.
    assert_eq!(sums(&n.tokens), counts(302, 35, 190, 0));
    assert_eq!(n.tool_calls, map(&[("write_file", 1)]));
    assert_eq!(n.tool_errors, map(&[("write_file", 1)]));
    assert_eq!(n.unknown_types, map(&[("info", 1)]));
    assert_eq!(n.started_at.as_deref(), Some("2026-01-10T20:00:00.000Z"));
    assert_eq!(n.ended_at.as_deref(), Some("2026-01-10T20:00:50.000Z"));
    assert_eq!(s.output, "I could not write a.txt: permission denied.");
    assert_eq!(s.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(s.skipped_lines, 0);
    // On one line too.
    let compact =
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(GEMINI).unwrap()).unwrap();
    assert_eq!(session(&summary(&compact)).tokens, n.tokens);
}

// ---- formats -----------------------------------------------------------------

#[test]
fn native_formats_serialize_as_their_cli_names() {
    for (format, name) in [
        (Format::ClaudeSession, "claude-session"),
        (Format::CodexRollout, "codex-rollout"),
        (Format::GeminiChat, "gemini-chat"),
    ] {
        assert_eq!(serde_json::to_value(format).unwrap(), name);
        assert_eq!(
            serde_json::from_value::<Format>(name.into()).unwrap(),
            format
        );
        assert_eq!(
            serde_json::from_value::<Format>(name.replace('-', "_").into()).unwrap(),
            format
        );
        assert!(Format::ALL.contains(&format));
    }
}

#[test]
fn fuzz_body_holds_on_native_fixtures() {
    for input in [CLAUDE_10, CLAUDE_API_ERRORS, CODEX, CODEX_LEGACY, GEMINI] {
        fuzz_decode(input.as_bytes());
        fuzz_decode(&input.as_bytes()[..input.len() / 2]);
    }
}

#[test]
fn an_inline_sub_agent_counts_each_of_its_messages_once_with_its_own_model() {
    let line = |uuid: &str, parent: &str, side: bool, body: &str| {
        format!(
            r#"{{"parentUuid":{parent},"isSidechain":{side},"sessionId":"s","version":"1.0.51","cwd":"/w","uuid":"{uuid}","timestamp":"2025-07-01T10:00:00.000Z",{body}}}"#
        )
    };
    let answer = |id: &str, model: &str, input: u64, output: u64| {
        format!(
            r#""type":"assistant","message":{{"id":"{id}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":{input},"output_tokens":{output}}}}}"#
        )
    };
    let file = [
        line(
            "m1",
            "null",
            false,
            r#""type":"user","message":{"role":"user","content":"go"}"#,
        ),
        line(
            "m2",
            r#""m1""#,
            false,
            &answer("main-1", "claude-opus-4", 100, 10),
        ),
        line(
            "a1",
            "null",
            true,
            r#""type":"user","message":{"role":"user","content":"look"}"#,
        ),
        // One message in two lines, its usage growing: counted once, the last.
        line(
            "a2",
            r#""a1""#,
            true,
            &answer("side-1", "claude-3-5-haiku", 5, 1),
        ),
        line(
            "a3",
            r#""a2""#,
            true,
            &answer("side-1", "claude-3-5-haiku", 5, 7),
        ),
        line(
            "b1",
            "null",
            true,
            r#""type":"user","message":{"role":"user","content":"other"}"#,
        ),
        line(
            "b2",
            r#""b1""#,
            true,
            &answer("side-2", "claude-sonnet-4", 20, 2),
        ),
        line(
            "m3",
            r#""m2""#,
            false,
            &answer("main-2", "claude-opus-4", 50, 5),
        ),
    ]
    .join("\n");
    let s = summary(&file);
    let n = s.session.as_deref().unwrap();
    let subs: Vec<(&str, Option<&str>, u64, u64)> = n
        .subagents
        .iter()
        .map(|a| {
            (
                a.id.as_str(),
                a.model.as_deref(),
                a.tokens.input,
                a.tokens.output,
            )
        })
        .collect();
    assert_eq!(
        subs,
        [
            ("a1", Some("claude-3-5-haiku"), 5, 7),
            ("b1", Some("claude-sonnet-4"), 20, 2)
        ]
    );
    assert_eq!((n.tokens.input, n.tokens.output), (175, 24));
}
