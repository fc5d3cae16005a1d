//! Decode tests: seed 004's contract row by row, the 2.1.x additions, Codex,
//! provider bodies, auto-detection and the bundled examples. Every input runs
//! three ways (whole, line by line, 1-byte chunks) and must summarize the same.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::event::Event;
use crate::summary::{ErrorCategory, NO_RESULT_WARNING, Usage};

fn run_chunks<'a>(
    chunks: impl Iterator<Item = &'a [u8]>,
    format: Format,
    opts: &DecodeOptions,
) -> RunSummary {
    let mut decoder = Decoder::new(format, opts.clone());
    let mut builder = SummaryBuilder::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut |e| builder.push(e));
    }
    decoder.finish(&mut |e| builder.push(e));
    builder.finish(decoder.format())
}

/// Summarize whole, line by line and byte by byte; all three must agree.
fn three_ways(input: &[u8], format: Format, opts: &DecodeOptions) -> RunSummary {
    let whole = run_chunks(std::iter::once(input), format, opts);
    let by_line = run_chunks(input.split_inclusive(|&b| b == b'\n'), format, opts);
    let by_byte = run_chunks(input.chunks(1), format, opts);
    assert_eq!(whole, by_line, "line-by-line differs");
    assert_eq!(whole, by_byte, "1-byte chunks differ");
    let via_reader =
        summarize_reader(std::io::BufReader::with_capacity(3, input), format, opts).unwrap();
    assert_eq!(whole, via_reader, "reader differs");
    whole
}

fn claude(lines: &[&str]) -> RunSummary {
    let mut input = lines.join("\n");
    input.push('\n');
    three_ways(input.as_bytes(), Format::Claude, &DecodeOptions::default())
}

fn events_of(input: &str, format: Format, opts: &DecodeOptions) -> Vec<Event> {
    let mut events = Vec::new();
    let mut decoder = Decoder::new(format, opts.clone());
    decoder.feed(input.as_bytes(), &mut |e| events.push(e));
    decoder.finish(&mut |e| events.push(e));
    events
}

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","apiKeySource":"ANTHROPIC_API_KEY","cwd":"/w"}"#;
const OK: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":3,"usage":{"input_tokens":7,"output_tokens":9}}"#;

// ---- seed 004: transport -------------------------------------------------

#[test]
fn blank_lines_are_skipped_and_counted() {
    let s = claude(&[INIT, "", "   ", "\t", OK]);
    assert_eq!(
        (s.lines, s.blank_lines, s.events, s.skipped_lines),
        (5, 3, 2, 0)
    );
}

#[test]
fn malformed_lines_are_skipped_counted_and_never_abort() {
    let s = claude(&[
        INIT,
        "npm WARN deprecated",
        r#"{"type":"assistant","#,
        "{'py': 'repr'}",
        OK,
    ]);
    assert_eq!((s.malformed_lines, s.skipped_lines, s.events), (3, 3, 2));
    assert!(s.saw_result);
}

#[test]
fn non_object_json_lines_are_skipped_and_counted() {
    let s = claude(&[INIT, "[]", "42", r#""keepalive""#, "null", "[1,{}]", OK]);
    assert_eq!(
        (s.non_object_lines, s.malformed_lines, s.skipped_lines),
        (5, 0, 5)
    );
}

// ---- seed 004: assistant ---------------------------------------------------

#[test]
fn assistant_without_content_list_contributes_no_text() {
    let cases = [
        r#"{"type":"assistant"}"#,
        r#"{"type":"assistant","message":{}}"#,
        r#"{"type":"assistant","message":{"content":"text as a string"}}"#,
        r#"{"type":"assistant","message":{"content":null}}"#,
        r#"{"type":"assistant","message":"not an object"}"#,
    ];
    for line in cases {
        let s = claude(&[line, OK]);
        assert_eq!((s.output.as_str(), s.text_chunks), ("", 0), "{line}");
    }
}

#[test]
fn text_block_without_text_contributes_an_empty_chunk() {
    let s = claude(&[
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"text"},{"type":"text","text":"b"}]}}"#,
    ]);
    assert_eq!((s.output.as_str(), s.text_chunks), ("a\n\nb", 3));
}

#[test]
fn text_chunks_from_every_assistant_message_join_with_newline() {
    let s = claude(&[
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"one"}]}}"#,
        r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","name":"Bash","input":{}},{"type":"text","text":"two"}]}}"#,
        r#"{"type":"assistant","message":{"id":"m3","content":[1,"x",{"type":"text","text":"three"}]},"parent_tool_use_id":"toolu_9"}"#,
    ]);
    assert_eq!(s.output, "one\ntwo\nthree");
}

#[test]
fn tool_uses_are_counted_by_name() {
    let s = claude(&[
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","name":"Read","input":{}}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{}}]}}"#,
    ]);
    assert_eq!(s.tool_uses, 3);
    assert_eq!(
        s.tool_use_counts.into_iter().collect::<Vec<_>>(),
        vec![("Bash".to_owned(), 2), ("Read".to_owned(), 1)]
    );
}

// ---- seed 004: result ------------------------------------------------------

#[test]
fn missing_or_broken_usage_reads_as_zero() {
    let cases = [
        r#"{"type":"result","is_error":false}"#,
        r#"{"type":"result","usage":null}"#,
        r#"{"type":"result","usage":"lots"}"#,
        r#"{"type":"result","usage":{"input_tokens":null,"output_tokens":"many"}}"#,
        r#"{"type":"result","usage":{}}"#,
    ];
    for line in cases {
        let s = claude(&[line]);
        assert_eq!(s.result.unwrap().usage, Usage::default(), "{line}");
    }
}

#[test]
fn numeric_strings_and_floats_in_usage_read_like_python_int() {
    let s = claude(&[r#"{"type":"result","usage":{"input_tokens":"12","output_tokens":7.9}}"#]);
    assert_eq!(
        s.result.unwrap().usage,
        Usage {
            input_tokens: 12,
            output_tokens: 7
        }
    );
}

#[test]
fn is_error_absent_is_success() {
    let s = claude(&[r#"{"type":"result","result":"fine"}"#]);
    assert_eq!((s.error, s.error_category), (None, None));
    assert_eq!(s.result.unwrap().text.as_deref(), Some("fine"));
}

#[test]
fn non_bool_is_error_reads_as_absent() {
    for value in [r#""true""#, "1", "\"yes\"", "null", "{}"] {
        let line = format!(r#"{{"type":"result","is_error":{value},"result":"429 rate limit"}}"#);
        let s = claude(&[&line]);
        assert_eq!(
            (s.error.as_deref(), s.error_category),
            (None, None),
            "{value}"
        );
        assert!(!s.result.unwrap().is_error);
    }
}

#[test]
fn is_error_without_result_string_is_api_error_no_detail() {
    for line in [
        r#"{"type":"result","is_error":true}"#,
        r#"{"type":"result","is_error":true,"result":42}"#,
        r#"{"type":"result","is_error":true,"result":null}"#,
    ] {
        let s = claude(&[line]);
        assert_eq!(s.error.as_deref(), Some("API error (no detail)"), "{line}");
        assert_eq!(s.error_category, Some(ErrorCategory::Api), "{line}");
    }
}

#[test]
fn error_text_is_classified_by_keyword_rate_limit_before_auth() {
    let cases: &[(&str, ErrorCategory)] = &[
        (
            "API Error: Request rejected (429)",
            ErrorCategory::RateLimit,
        ),
        ("Rate Limit reached", ErrorCategory::RateLimit),
        ("rate-limit", ErrorCategory::RateLimit),
        ("401 unauthorized but also 429", ErrorCategory::RateLimit),
        ("API Error: 401 authentication_error", ErrorCategory::Auth),
        ("403 Forbidden", ErrorCategory::Auth),
        ("UNAUTHORIZED", ErrorCategory::Auth),
        ("Auth Error", ErrorCategory::Auth),
        (
            "Invalid API key · Fix external API key (ANTHROPIC_API_KEY)",
            ErrorCategory::Auth,
        ),
        ("API Error: 529 overloaded_error", ErrorCategory::Api),
    ];
    for (text, want) in cases {
        let line = json!({"type": "result", "is_error": true, "result": text}).to_string();
        let s = claude(&[&line]);
        assert_eq!(s.error_category, Some(*want), "{text}");
        assert_eq!(s.error.as_deref(), Some(*text));
    }
}

#[test]
fn non_string_api_key_source_is_ignored() {
    let s =
        claude(&[r#"{"type":"system","subtype":"init","session_id":"s","apiKeySource":{"k":1}}"#]);
    assert_eq!(
        (s.api_key_source, s.session_id.as_deref()),
        (None, Some("s"))
    );
}

#[test]
fn first_init_wins() {
    let s = claude(&[
        INIT,
        r#"{"type":"system","subtype":"init","session_id":"s2","model":"other","apiKeySource":"none","cwd":"/x"}"#,
    ]);
    assert_eq!(s.session_id.as_deref(), Some("s1"));
    assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(s.api_key_source.as_deref(), Some("ANTHROPIC_API_KEY"));
    assert_eq!(s.cwd.as_deref(), Some("/w"));
}

#[test]
fn long_error_text_is_truncated_and_classified_from_the_prefix() {
    let early = format!("429 {}", "x".repeat(5000));
    let late = format!("{} 429", "x".repeat(5000));
    let s = claude(&[&json!({"type": "result", "is_error": true, "result": early}).to_string()]);
    let error = s.error.unwrap();
    assert_eq!(error.chars().count(), 4096 + " ... (truncated)".len());
    assert!(error.ends_with("x ... (truncated)"));
    assert_eq!(s.error_category, Some(ErrorCategory::RateLimit));
    let s = claude(&[&json!({"type": "result", "is_error": true, "result": late}).to_string()]);
    assert_eq!(s.error_category, Some(ErrorCategory::Api));
    assert_eq!(
        s.result.unwrap().text.unwrap().len(),
        5004,
        "the full text stays in the result"
    );
}

#[test]
fn no_result_warns_and_zeroes_tokens() {
    let s = claude(&[
        INIT,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}"#,
    ]);
    assert_eq!(s.warnings, vec![NO_RESULT_WARNING.to_owned()]);
    assert!(!s.saw_result);
    assert_eq!((s.result, s.error), (None, None));
}

#[test]
fn stream_cut_mid_line_counts_the_half_line_as_malformed() {
    let input = format!("{INIT}\n{{\"type\":\"assistant\",\"message\":{{\"cont");
    let s = three_ways(input.as_bytes(), Format::Claude, &DecodeOptions::default());
    assert_eq!((s.lines, s.malformed_lines, s.saw_result), (2, 1, false));
}

#[test]
fn last_result_wins_for_tokens_but_does_not_clear_an_earlier_error() {
    let s = claude(&[
        r#"{"type":"result","is_error":true,"result":"429 rate limit","usage":{"input_tokens":1,"output_tokens":1}}"#,
        OK,
    ]);
    assert_eq!(s.error.as_deref(), Some("429 rate limit"));
    assert_eq!(s.error_category, Some(ErrorCategory::RateLimit));
    assert_eq!(
        s.result.unwrap().usage,
        Usage {
            input_tokens: 7,
            output_tokens: 9
        }
    );
}

#[test]
fn a_later_error_replaces_an_earlier_one() {
    let s = claude(&[
        r#"{"type":"result","is_error":true,"result":"429"}"#,
        r#"{"type":"result","is_error":true,"result":"401"}"#,
    ]);
    assert_eq!(s.error_category, Some(ErrorCategory::Auth));
}

#[test]
fn result_fields_are_read() {
    let s = claude(&[
        r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":45000,"num_turns":8,"total_cost_usd":0.03,"session_id":"from-result","result":"final","usage":{"input_tokens":1423,"output_tokens":512}}"#,
    ]);
    let r = s.result.unwrap();
    assert_eq!(
        (
            r.duration_ms,
            r.num_turns,
            r.total_cost_usd,
            r.text.as_deref()
        ),
        (Some(45000), Some(8), Some(0.03), Some("final"))
    );
    assert_eq!(s.session_id.as_deref(), Some("from-result"));
}

// ---- seed 004: heuristics --------------------------------------------------

fn ask(text: &str, stop: &str, extra_block: &str) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"m9","stop_reason":"{stop}","content":[{{"type":"text","text":"{text}"}}{extra_block}]}}}}"#
    )
}

fn result_turns(turns: u64) -> String {
    format!(r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":{turns}}}"#)
}

#[test]
fn interactive_hang_when_single_turn_ends_with_a_question() {
    let s = claude(&[
        &ask("Which service should I restart? ", "end_turn", ""),
        &result_turns(1),
    ]);
    assert_eq!(s.error_category, Some(ErrorCategory::Interactive));
    assert_eq!(s.error, None);
    assert!(s.warnings[0].starts_with("interactive-hang:"));
}

#[test]
fn interactive_hang_when_single_turn_calls_ask_user_question() {
    let block = r#",{"type":"tool_use","name":"AskUserQuestion","input":{"questions":[]}}"#;
    let s = claude(&[&ask("Let me ask.", "end_turn", block), &result_turns(1)]);
    assert_eq!(s.error_category, Some(ErrorCategory::Interactive));
}

#[test]
fn interactive_hang_needs_end_turn_single_turn_and_a_result() {
    let cases: Vec<Vec<String>> = vec![
        vec![ask("Restart it?", "tool_use", ""), result_turns(1)],
        vec![ask("Restart it?", "end_turn", ""), result_turns(2)],
        vec![ask("Restart it.", "end_turn", ""), result_turns(1)],
        vec![ask("Restart it?", "end_turn", "")],
    ];
    for lines in cases {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let s = claude(&refs);
        assert_ne!(
            s.error_category,
            Some(ErrorCategory::Interactive),
            "{lines:?}"
        );
    }
}

#[test]
fn interactive_hang_looks_at_the_final_message_only() {
    let s = claude(&[
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Shall I?"}]}}"#,
        r#"{"type":"assistant","message":{"id":"m2","stop_reason":"end_turn","content":[{"type":"text","text":"Done."}]}}"#,
        &result_turns(1),
    ]);
    assert_eq!(s.error_category, None);
}

const BG_TASK: &str = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Task","input":{"description":"scan","prompt":"p","run_in_background":true}}]}}"#;

#[test]
fn background_task_when_final_text_says_still_waiting() {
    let text = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"The scan is running in the background."}]}}"#;
    let s = claude(&[BG_TASK, text, &result_turns(9)]);
    assert_eq!(s.error_category, Some(ErrorCategory::BackgroundTask));
    assert!(s.warnings[0].starts_with("background-task:"));
    assert_eq!(s.error, None);
}

#[test]
fn background_task_when_num_turns_below_launches_plus_two() {
    let text = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Started."}]}}"#;
    let s = claude(&[BG_TASK, text, &result_turns(2)]);
    assert_eq!(s.error_category, Some(ErrorCategory::BackgroundTask));
    let s = claude(&[BG_TASK, text, &result_turns(3)]);
    assert_eq!(s.error_category, None);
}

#[test]
fn background_task_needs_run_in_background_strictly_true() {
    for value in [r#""true""#, "1", "false"] {
        let task = BG_TASK.replace(
            "\"run_in_background\":true",
            &format!("\"run_in_background\":{value}"),
        );
        let s = claude(&[&task, &result_turns(1)]);
        assert_eq!(s.error_category, None, "{value}");
    }
}

#[test]
fn interactive_hang_wins_over_background_task() {
    let final_ask = r#"{"type":"assistant","message":{"id":"m1","stop_reason":"end_turn","content":[{"type":"tool_use","name":"Task","input":{"run_in_background":true}},{"type":"text","text":"Still waiting on the scan. Continue?"}]}}"#;
    let s = claude(&[final_ask, &result_turns(1)]);
    assert_eq!(s.error_category, Some(ErrorCategory::Interactive));
    assert_eq!(s.warnings.len(), 1);
}

#[test]
fn is_error_wins_over_both_heuristics() {
    let s = claude(&[
        &ask("Which one?", "end_turn", ""),
        BG_TASK,
        r#"{"type":"result","is_error":true,"num_turns":1,"result":"boom"}"#,
    ]);
    assert_eq!(s.error_category, Some(ErrorCategory::Api));
    assert!(s.warnings.is_empty());
}

// ---- Claude Code 2.1.x -----------------------------------------------------

#[test]
fn structured_output_is_captured() {
    let s = claude(&[
        r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"ok","events":[]}}"#,
    ]);
    assert_eq!(
        s.structured_output,
        Some(json!({"summary": "ok", "events": []}))
    );
}

#[test]
fn error_subtypes_map_to_categories_and_keep_errors() {
    let cases: &[(&str, ErrorCategory)] = &[
        ("error_max_turns", ErrorCategory::MaxTurns),
        (
            "error_max_structured_output_retries",
            ErrorCategory::StructuredOutputRetries,
        ),
        ("error_max_budget_usd", ErrorCategory::Budget),
        ("error_during_execution", ErrorCategory::Api),
        ("error_something_new", ErrorCategory::Api),
    ];
    for (subtype, want) in cases {
        let line = json!({"type": "result", "subtype": subtype, "is_error": true, "errors": ["limit hit", 3]}).to_string();
        let s = claude(&[&line]);
        assert_eq!(s.error_category, Some(*want), "{subtype}");
        assert_eq!(s.result.unwrap().errors, vec!["limit hit".to_owned()]);
    }
}

#[test]
fn error_text_keywords_win_over_the_subtype() {
    let s = three_ways(
        include_bytes!("../../tests/fixtures/decode/seed004-rate-limit.ndjson"),
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(s.format, Format::Claude);
    assert_eq!(s.error_category, Some(ErrorCategory::RateLimit));
    assert_eq!(
        s.result.unwrap().usage,
        Usage {
            input_tokens: 1423,
            output_tokens: 0
        }
    );
    assert_eq!(s.session_id.as_deref(), Some("abc123"));
}

#[test]
fn is_error_with_subtype_success_is_an_error() {
    let s = claude(&[
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 Internal server error","terminal_reason":"api_error"}"#,
    ]);
    assert_eq!(s.error_category, Some(ErrorCategory::Api));
    let r = s.result.unwrap();
    assert_eq!(r.api_error_status, Some(json!(500)));
    assert_eq!(r.terminal_reason.as_deref(), Some("api_error"));
}

#[test]
fn partial_messages_become_partial_events() {
    let input = [
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}}"#,
        r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
    ]
    .join("\n");
    let events = events_of(&input, Format::Claude, &DecodeOptions::default());
    assert_eq!(
        events,
        vec![
            Event::Partial {
                index: Some(0),
                text: Some("Hel".into()),
                partial_json: None
            },
            Event::Partial {
                index: Some(1),
                text: None,
                partial_json: Some("{\"a\":".into())
            },
            Event::Other {
                kind: "stream_event/message_start".into()
            },
            Event::End {
                lines: 3,
                objects: 3
            },
        ]
    );
}

#[test]
fn control_keepalive_rate_limit_user_and_unknown_lines_are_tolerated() {
    let input = [
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}"#,
        r#"{"type":"keep_alive"}"#,
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool"}}"#,
        r#"{"type":"control_response","response":{"subtype":"success"}}"#,
        r#"{"type":"control_cancel_request","request_id":"r1"}"#,
        r#"{"type":"system","subtype":"hook_response","hook_name":"SessionStart"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}"#,
        r#"{"type":"brand_new_type"}"#,
        r#"{"no_type":true}"#,
    ]
    .join("\n");
    let events = events_of(&input, Format::Claude, &DecodeOptions::default());
    let kinds: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Other { kind } => Some(kind.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "rate_limit_event",
            "keep_alive",
            "control_request",
            "control_response",
            "control_cancel_request",
            "system/hook_response",
            "user",
            "brand_new_type",
            ""
        ]
    );
    let s = claude(&input.lines().collect::<Vec<_>>());
    assert_eq!((s.events, s.skipped_lines, s.error_category), (9, 0, None));
}

#[test]
fn tool_results_are_decoded_when_asked() {
    let input = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"type":"tool_result","tool_use_id":"t2","content":"plain"}]}}"#;
    let opts = DecodeOptions {
        keep_tool_results: true,
        ..DecodeOptions::default()
    };
    let events = events_of(input, Format::Claude, &opts);
    assert_eq!(
        events[..2],
        [
            Event::ToolResult {
                tool_use_id: Some("t1".into()),
                is_error: true,
                content: Some("a\nb".into())
            },
            Event::ToolResult {
                tool_use_id: Some("t2".into()),
                is_error: false,
                content: Some("plain".into())
            },
        ]
    );
}

#[test]
fn structured_output_tool_input_is_kept_last_one_wins() {
    let s = claude(&[
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"StructuredOutput","input":{"summary":"draft"}}]}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"StructuredOutput","input":{"summary":"final"}}]}}"#,
    ]);
    assert_eq!(s.structured_tool_input, Some(json!({"summary": "final"})));
}

// ---- lines -----------------------------------------------------------------

#[test]
fn crlf_blank_non_object_and_escaped_newlines_fixture() {
    let s = three_ways(
        include_bytes!("../../tests/fixtures/decode/crlf-mixed.ndjson"),
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(s.format, Format::Claude);
    assert_eq!(
        (
            s.lines,
            s.events,
            s.blank_lines,
            s.non_object_lines,
            s.malformed_lines
        ),
        (10, 4, 2, 4, 0)
    );
    assert_eq!(s.output, "line one\nline two\r\n\u{2028}end");
    assert_eq!(s.api_key_source.as_deref(), Some("claude.ai"));
    assert_eq!(s.result.unwrap().total_cost_usd, Some(0.0021));
}

#[test]
fn over_long_line_is_skipped_without_being_held() {
    let opts = DecodeOptions {
        max_line_bytes: 64,
        ..DecodeOptions::default()
    };
    let long = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "y".repeat(500)
    );
    let input = format!("{INIT}\n{long}\n{{\"type\":\"result\"}}\n");
    let s = three_ways(input.as_bytes(), Format::Claude, &opts);
    assert_eq!(
        (s.too_long_lines, s.skipped_lines, s.lines, s.events),
        (2, 2, 3, 1)
    );
    assert!(s.saw_result);

    let mut decoder = Decoder::new(Format::Claude, opts);
    for chunk in long.as_bytes().chunks(10) {
        decoder.feed(chunk, &mut |_| {});
        assert!(decoder.buf.len() <= 64, "held {} bytes", decoder.buf.len());
    }
}

#[test]
fn line_exactly_at_the_limit_is_kept() {
    let line = r#"{"type":"result","result":"x"}"#;
    let opts = DecodeOptions {
        max_line_bytes: line.len(),
        ..DecodeOptions::default()
    };
    let s = three_ways(format!("{line}\n").as_bytes(), Format::Claude, &opts);
    assert_eq!((s.too_long_lines, s.saw_result), (0, true));
}

// ---- Codex -----------------------------------------------------------------

#[test]
fn codex_example_decodes() {
    let s = three_ways(
        include_bytes!("../../../../examples/codex-exec.jsonl"),
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(s.format, Format::Codex);
    assert_eq!(
        s.session_id.as_deref(),
        Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
    );
    assert!(
        s.output
            .starts_with("```json\n{\"summary\":\"jellyfin is down")
    );
    assert_eq!(
        (s.tool_uses, s.tool_use_counts["command_execution"]),
        (2, 2)
    );
    let r = s.result.unwrap();
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 24763,
            output_tokens: 412
        }
    );
    assert_eq!(
        (s.saw_result, s.error, s.lines, s.events),
        (true, None, 10, 10)
    );
}

#[test]
fn codex_usage_sums_over_turns() {
    let input = [
        r#"{"type":"thread.started","thread_id":"t"}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":80,"output_tokens":10}}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":5}}"#,
    ]
    .join("\n");
    let s = three_ways(input.as_bytes(), Format::Codex, &DecodeOptions::default());
    let r = s.result.unwrap();
    assert_eq!(
        (r.usage, r.num_turns),
        (
            Usage {
                input_tokens: 150,
                output_tokens: 15
            },
            Some(2)
        )
    );
}

#[test]
fn codex_failures_are_errors_classified_by_text() {
    let cases: &[(&str, ErrorCategory)] = &[
        (
            r#"{"type":"turn.failed","error":{"message":"stream error: 429 Too Many Requests"}}"#,
            ErrorCategory::RateLimit,
        ),
        (
            r#"{"type":"error","message":"unexpected status 401 Unauthorized"}"#,
            ErrorCategory::Auth,
        ),
        (
            r#"{"type":"turn.failed","error":{"message":"model not supported"}}"#,
            ErrorCategory::Api,
        ),
    ];
    for (line, want) in cases {
        let input = format!("{{\"type\":\"thread.started\",\"thread_id\":\"t\"}}\n{line}\n");
        let s = three_ways(input.as_bytes(), Format::Auto, &DecodeOptions::default());
        assert_eq!(
            (s.format, s.error_category),
            (Format::Codex, Some(*want)),
            "{line}"
        );
        assert!(s.error.is_some());
    }
}

#[test]
fn codex_without_completed_turn_warns() {
    let s = three_ways(
        b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
        Format::Codex,
        &DecodeOptions::default(),
    );
    assert_eq!(s.warnings, vec![crate::summary::NO_TURN_WARNING.to_owned()]);
}

#[test]
fn codex_items_map_to_events() {
    let input = [
        r#"{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"think"}}"#,
        r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"false","aggregated_output":"oops","exit_code":1,"status":"failed"}}"#,
        r#"{"type":"item.completed","item":{"id":"i2","item_type":"assistant_message","text":"hi"}}"#,
        r#"{"type":"item.started","item":{"id":"i3","type":"web_search","query":"q"}}"#,
    ]
    .join("\n");
    let opts = DecodeOptions {
        keep_tool_results: true,
        ..DecodeOptions::default()
    };
    let events = events_of(&input, Format::Codex, &opts);
    assert_eq!(
        events[0],
        Event::Thinking {
            text: "think".into()
        }
    );
    assert!(matches!(&events[1], Event::ToolUse { name, .. } if name == "command_execution"));
    assert_eq!(
        events[2],
        Event::ToolResult {
            tool_use_id: Some("i1".into()),
            is_error: true,
            content: Some("oops".into())
        }
    );
    assert_eq!(events[3], Event::Text { text: "hi".into() });
    assert_eq!(
        events[4],
        Event::Other {
            kind: "item.started/web_search".into()
        }
    );
}

// ---- provider bodies -------------------------------------------------------

struct BodyCase {
    name: &'static str,
    body: serde_json::Value,
    format: Format,
    output: &'static str,
    category: Option<ErrorCategory>,
    usage: (u64, u64),
}

fn body_cases() -> Vec<BodyCase> {
    vec![
        BodyCase {
            name: "anthropic end_turn",
            body: json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"{\"a\":1}"},{"type":"tool_use","id":"tu","name":"get","input":{"q":1}}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}),
            format: Format::Anthropic,
            output: "{\"a\":1}",
            category: None,
            usage: (10, 3),
        },
        BodyCase {
            name: "anthropic max_tokens",
            body: json!({"type":"message","content":[{"type":"text","text":"{\"a\":"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":2}}),
            format: Format::Anthropic,
            output: "{\"a\":",
            category: Some(ErrorCategory::MaxTokens),
            usage: (1, 2),
        },
        BodyCase {
            name: "anthropic refusal",
            body: json!({"type":"message","content":[],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":0}}),
            format: Format::Anthropic,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (1, 0),
        },
        BodyCase {
            name: "anthropic rate limit error",
            body: json!({"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}),
            format: Format::Anthropic,
            output: "",
            category: Some(ErrorCategory::RateLimit),
            usage: (0, 0),
        },
        BodyCase {
            name: "anthropic auth error",
            body: json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}),
            format: Format::Anthropic,
            output: "",
            category: Some(ErrorCategory::Auth),
            usage: (0, 0),
        },
        BodyCase {
            name: "anthropic overloaded",
            body: json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
            format: Format::Anthropic,
            output: "",
            category: Some(ErrorCategory::Api),
            usage: (0, 0),
        },
        BodyCase {
            name: "openai chat stop",
            body: json!({"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hello","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}),
            format: Format::OpenaiChat,
            output: "hello",
            category: None,
            usage: (5, 1),
        },
        BodyCase {
            name: "openai chat length",
            body: json!({"object":"chat.completion","choices":[{"message":{"content":"{\"x\":"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":100}}),
            format: Format::OpenaiChat,
            output: "{\"x\":",
            category: Some(ErrorCategory::MaxTokens),
            usage: (5, 100),
        },
        BodyCase {
            name: "openai chat refusal",
            body: json!({"object":"chat.completion","choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}),
            format: Format::OpenaiChat,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (0, 0),
        },
        BodyCase {
            name: "openai chat content_filter",
            body: json!({"object":"chat.completion","choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}),
            format: Format::OpenaiChat,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (0, 0),
        },
        BodyCase {
            name: "openai error body",
            body: json!({"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}),
            format: Format::OpenaiChat,
            output: "",
            category: Some(ErrorCategory::Api),
            usage: (0, 0),
        },
        BodyCase {
            name: "openai responses completed",
            body: json!({"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1","output":[{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":8,"output_tokens":2},"error":null,"incomplete_details":null}),
            format: Format::OpenaiResponses,
            output: "ok",
            category: None,
            usage: (8, 2),
        },
        BodyCase {
            name: "openai responses max_output_tokens",
            body: json!({"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"{\"a\""}]}],"usage":{"input_tokens":8,"output_tokens":16}}),
            format: Format::OpenaiResponses,
            output: "{\"a\"",
            category: Some(ErrorCategory::MaxTokens),
            usage: (8, 16),
        },
        BodyCase {
            name: "openai responses refusal",
            body: json!({"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}),
            format: Format::OpenaiResponses,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (0, 0),
        },
        BodyCase {
            name: "ollama stop",
            body: json!({"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"{\"ok\":true}"},"done":true,"done_reason":"stop","prompt_eval_count":26,"eval_count":298}),
            format: Format::Ollama,
            output: "{\"ok\":true}",
            category: None,
            usage: (26, 298),
        },
        BodyCase {
            name: "ollama length",
            body: json!({"model":"llama3.2","message":{"role":"assistant","content":"{\"ok\":"},"done":true,"done_reason":"length","prompt_eval_count":2,"eval_count":3}),
            format: Format::Ollama,
            output: "{\"ok\":",
            category: Some(ErrorCategory::MaxTokens),
            usage: (2, 3),
        },
        BodyCase {
            name: "ollama error",
            body: json!({"error":"model 'llama9' not found"}),
            format: Format::Ollama,
            output: "",
            category: Some(ErrorCategory::Api),
            usage: (0, 0),
        },
        BodyCase {
            name: "gemini stop",
            body: json!({"candidates":[{"content":{"parts":[{"text":"{\"a\":"},{"text":"1}"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":5},"modelVersion":"gemini-2.5-flash"}),
            format: Format::Gemini,
            output: "{\"a\":\n1}",
            category: None,
            usage: (4, 5),
        },
        BodyCase {
            name: "gemini max tokens",
            body: json!({"candidates":[{"content":{"parts":[{"text":"{"}]},"finishReason":"MAX_TOKENS"}]}),
            format: Format::Gemini,
            output: "{",
            category: Some(ErrorCategory::MaxTokens),
            usage: (0, 0),
        },
        BodyCase {
            name: "gemini safety",
            body: json!({"candidates":[{"finishReason":"SAFETY"}]}),
            format: Format::Gemini,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (0, 0),
        },
        BodyCase {
            name: "gemini recitation",
            body: json!({"candidates":[{"content":{"parts":[]},"finishReason":"RECITATION"}]}),
            format: Format::Gemini,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (0, 0),
        },
        BodyCase {
            name: "gemini blocked prompt",
            body: json!({"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":9}}),
            format: Format::Gemini,
            output: "",
            category: Some(ErrorCategory::Refusal),
            usage: (9, 0),
        },
        BodyCase {
            name: "gemini quota error",
            body: json!({"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}),
            format: Format::Gemini,
            output: "",
            category: Some(ErrorCategory::RateLimit),
            usage: (0, 0),
        },
        BodyCase {
            name: "gemini permission error",
            body: json!({"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}),
            format: Format::Gemini,
            output: "",
            category: Some(ErrorCategory::Auth),
            usage: (0, 0),
        },
    ]
}

#[test]
fn provider_bodies_decode_with_explicit_format_compact_and_pretty() {
    for case in body_cases() {
        for text in [
            case.body.to_string(),
            serde_json::to_string_pretty(&case.body).unwrap(),
        ] {
            let s = three_ways(text.as_bytes(), case.format, &DecodeOptions::default());
            assert_eq!(s.format, case.format, "{}", case.name);
            assert_eq!(s.output, case.output, "{}", case.name);
            assert_eq!(s.error_category, case.category, "{}", case.name);
            assert_eq!(s.error.is_some(), case.category.is_some(), "{}", case.name);
            assert!(s.saw_result, "{}", case.name);
            let usage = s.result.clone().unwrap().usage;
            assert_eq!(
                (usage.input_tokens, usage.output_tokens),
                case.usage,
                "{}",
                case.name
            );
            assert_eq!(
                decode_body(text.as_bytes(), case.format),
                s,
                "{}",
                case.name
            );
        }
    }
}

#[test]
fn provider_bodies_are_auto_detected_compact_and_pretty() {
    for case in body_cases() {
        for text in [
            case.body.to_string(),
            serde_json::to_string_pretty(&case.body).unwrap(),
        ] {
            let s = three_ways(text.as_bytes(), Format::Auto, &DecodeOptions::default());
            assert_eq!(s.format, case.format, "{}", case.name);
        }
    }
}

#[test]
fn provider_stop_reason_and_model_are_kept() {
    let s = decode_body(
        include_bytes!("../../../../examples/anthropic-message.json"),
        Format::Anthropic,
    );
    assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(
        s.result.as_ref().unwrap().stop_reason.as_deref(),
        Some("end_turn")
    );
    assert_eq!(s.result.unwrap().text.as_deref(), Some(s.output.as_str()));
}

#[test]
fn malformed_body_with_explicit_provider_is_counted_not_fatal() {
    let s = three_ways(
        b"{\"type\":\"message\",",
        Format::Anthropic,
        &DecodeOptions::default(),
    );
    assert_eq!((s.malformed_lines, s.saw_result), (1, false));
    assert_eq!(s.warnings.len(), 1);
}

#[test]
fn over_long_body_is_skipped_with_a_warning() {
    let opts = DecodeOptions {
        max_line_bytes: 8,
        ..DecodeOptions::default()
    };
    let s = three_ways(
        br#"{"type":"message","content":[]}"#,
        Format::Anthropic,
        &opts,
    );
    assert_eq!((s.too_long_lines, s.saw_result), (1, false));
}

// ---- plain text and auto-detection -----------------------------------------

#[test]
fn plain_text_is_the_output() {
    let s = three_ways(
        include_bytes!("../../../../examples/reply.txt"),
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(s.format, Format::Text);
    assert_eq!(s.output, include_str!("../../../../examples/reply.txt"));
    assert_eq!((s.text_chunks, s.lines, s.saw_result), (1, 48, false));
    assert!(s.warnings.is_empty());
}

/// Issue 13: text past the limit is skipped and counted, never cut (a cut
/// JSON reply would be "repaired" into a valid-looking value).
#[test]
fn plain_text_past_the_limit_is_skipped_counted_and_warned() {
    let opts = DecodeOptions {
        max_line_bytes: 10,
        ..DecodeOptions::default()
    };
    for format in [Format::Text, Format::Auto] {
        for input in [
            &b"hello world, this is long\nsecond line"[..],
            br#"{"summary": "a long bare reply", "n": 1}"#,
            b"{\n  \"summary\": \"a pretty reply\"\n}\n",
        ] {
            let s = three_ways(input, format, &opts);
            assert_eq!(s.format, Format::Text);
            assert_eq!(s.output, "", "{input:?}");
            assert_eq!(s.too_long_lines, 1);
            assert_eq!(s.skipped_lines, 1);
            assert_eq!(
                s.warnings,
                vec!["text exceeds 10 bytes (--max-line-bytes); skipped, not extracted".to_owned()]
            );
        }
    }
}

#[test]
fn auto_detection_table() {
    let cases: &[(&str, Format)] = &[
        ("", Format::Text),
        ("\n\n  \n", Format::Text),
        ("Sure! Here it is.\n", Format::Text),
        ("{\"summary\": \"bare json reply\"}", Format::Text),
        ("{\n  \"summary\": \"pretty bare reply\"\n}\n", Format::Text),
        (
            "{\"type\":\"system\",\"subtype\":\"init\"}\n",
            Format::Claude,
        ),
        (
            "\n\n{\"type\":\"assistant\",\"message\":{}}\n",
            Format::Claude,
        ),
        (
            "npm WARN config\n[debug] x\n{\"type\":\"result\"}\n",
            Format::Claude,
        ),
        ("{\"type\":\"keep_alive\"}", Format::Claude),
        (
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
            Format::Codex,
        ),
        ("{\"type\":\"turn.started\"}\n", Format::Codex),
        ("{\"type\":\"item.completed\",\"item\":{}}\n", Format::Codex),
        ("{\"type\":\"error\",\"message\":\"boom\"}\n", Format::Codex),
        (
            "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}",
            Format::Anthropic,
        ),
        ("[1, 2, 3]\n", Format::Text),
        ("{\n\"choices\": [\n", Format::Text),
    ];
    for (input, want) in cases {
        let s = three_ways(input.as_bytes(), Format::Auto, &DecodeOptions::default());
        assert_eq!(s.format, *want, "{input:?}");
    }
}

#[test]
fn auto_detection_does_not_depend_on_chunking_at_the_limit() {
    for max_line_bytes in 14..24 {
        let opts = DecodeOptions {
            max_line_bytes,
            ..DecodeOptions::default()
        };
        three_ways(b"{\"type\":\"result\"}\nmore\n", Format::Auto, &opts);
    }
}

#[test]
fn auto_detection_replays_skipped_leading_lines() {
    let s = three_ways(
        b"npm WARN x\n\n{\"type\":\"result\"}\n",
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(
        (s.lines, s.malformed_lines, s.blank_lines, s.events),
        (3, 1, 1, 1)
    );
}

// ---- examples --------------------------------------------------------------

fn example(bytes: &[u8]) -> RunSummary {
    let s = three_ways(bytes, Format::Auto, &DecodeOptions::default());
    assert_eq!(s.format, Format::Claude);
    assert_eq!(s.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(s.api_key_source.as_deref(), Some("ANTHROPIC_API_KEY"));
    s
}

#[test]
fn example_healthy_structured() {
    let s = example(include_bytes!(
        "../../../../examples/healthy-structured.ndjson"
    ));
    let so = s.structured_output.clone().unwrap();
    assert_eq!(so["escalation"]["needed"], true);
    assert_eq!(s.structured_tool_input.as_ref(), Some(&so));
    assert_eq!((s.error.as_deref(), s.error_category), (None, None));
    assert_eq!(s.tool_use_counts["Bash"], 4);
    assert_eq!(s.tool_use_counts["StructuredOutput"], 1);
    let r = s.result.unwrap();
    assert_eq!(
        (r.num_turns, r.duration_ms, r.total_cost_usd),
        (Some(7), Some(48211), Some(0.0841))
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 31,
            output_tokens: 1524
        }
    );
    assert!(s.warnings.is_empty());
}

#[test]
fn example_fenced_only() {
    let s = example(include_bytes!("../../../../examples/fenced-only.ndjson"));
    assert_eq!(
        (s.structured_output, s.structured_tool_input, s.error),
        (None, None, None)
    );
    assert!(s.output.contains("```json\n{\n  \"summary\""));
    assert_eq!(s.result.unwrap().text.unwrap().matches("```").count(), 2);
}

#[test]
fn example_legacy_markers() {
    let s = example(include_bytes!("../../../../examples/legacy-markers.ndjson"));
    assert!(
        s.output
            .contains("[EVENT:critical:jellyfin] HTTP 502 for 5 checks")
    );
    assert!(
        s.output
            .contains("[MEMORY:timing:jellyfin] Takes 60s to restart")
    );
    assert_eq!((s.structured_output, s.error), (None, None));
}

#[test]
fn example_rate_limit_429() {
    let s = example(include_bytes!("../../../../examples/rate-limit-429.ndjson"));
    assert_eq!(s.error_category, Some(ErrorCategory::RateLimit));
    assert!(
        s.error
            .unwrap()
            .starts_with("API Error: Request rejected (429)")
    );
    assert_eq!(s.result.unwrap().api_error_status, Some(json!(429)));
}

#[test]
fn example_max_turns() {
    let s = example(include_bytes!("../../../../examples/max-turns.ndjson"));
    assert_eq!(s.error_category, Some(ErrorCategory::MaxTurns));
    assert_eq!(
        s.error.as_deref(),
        Some("Reached maximum number of turns (3)")
    );
    let r = s.result.unwrap();
    assert_eq!(
        r.errors,
        vec!["Reached maximum number of turns (3)".to_owned()]
    );
    assert_eq!(r.subtype.as_deref(), Some("error_max_turns"));
}

#[test]
fn example_malformed_lines() {
    let s = example(include_bytes!(
        "../../../../examples/malformed-lines.ndjson"
    ));
    assert_eq!(
        (
            s.lines,
            s.blank_lines,
            s.malformed_lines,
            s.non_object_lines,
            s.events
        ),
        (16, 3, 4, 1, 8)
    );
    assert_eq!(
        s.structured_output.unwrap()["services_checked"][0]["status"],
        "down"
    );
    assert_eq!((s.error, s.error_category), (None, None));
}

#[test]
fn example_anthropic_message_auto() {
    let s = three_ways(
        include_bytes!("../../../../examples/anthropic-message.json"),
        Format::Auto,
        &DecodeOptions::default(),
    );
    assert_eq!(s.format, Format::Anthropic);
    assert!(
        s.output
            .starts_with("{\"summary\": \"All 4 checked services are healthy.\"")
    );
    assert_eq!(
        s.result.unwrap().usage,
        Usage {
            input_tokens: 1873,
            output_tokens: 142
        }
    );
}

// ---- fuzz --------------------------------------------------------------------

fn json_ish_line() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"type\"",
        "\"assistant\"",
        "\"result\"",
        "\"system\"",
        "\"init\"",
        "\"message\"",
        "\"content\"",
        "\"text\"",
        "\"tool_use\"",
        "\"is_error\"",
        "true",
        "null",
        "1",
        "\"usage\"",
        "\"thread.started\"",
        "\"item.completed\"",
        "\"item\"",
        "\"choices\"",
        "\"candidates\"",
        "\\n",
        "\r",
        "\n",
        " ",
        "é",
        "\"\\u2028\"",
        "\"Task\"",
        "\"run_in_background\"",
        "\"structured_output\"",
        "\"StructuredOutput\"",
        "\"input\"",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fuzz_random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz_decode(&data);
    }

    #[test]
    fn fuzz_json_ish_lines_never_panic(lines in prop::collection::vec(json_ish_line(), 0..12)) {
        fuzz_decode(lines.join("\n").as_bytes());
    }
}

#[test]
fn error_without_result_string_uses_the_errors_list_before_no_detail() {
    let s = claude(&[
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["tool crashed","Rate limit reached"]}"#,
    ]);
    assert_eq!(s.error.as_deref(), Some("tool crashed; Rate limit reached"));
    // The text decides first, as for a `result` string.
    assert_eq!(s.error_category, Some(ErrorCategory::RateLimit));
}

// ---- issue 13, item 5: error results whose `result` is empty -------------

/// An `is_error` result never ends with an empty error: the best text there
/// is (`result`, the `error` field, the `errors` list, the permission
/// denials, the subtype) is used and classified.
#[test]
fn error_result_with_empty_result_uses_the_best_text_there_is() {
    let cases: &[(&str, &str, ErrorCategory)] = &[
        (
            r#"{"type":"result","subtype":"success","is_error":true,"result":"","error":"Rate limit exceeded: 50 requests per minute"}"#,
            "Rate limit exceeded: 50 requests per minute",
            ErrorCategory::RateLimit,
        ),
        (
            r#"{"type":"result","is_error":true,"result":"  ","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            "authentication_error: invalid x-api-key",
            ErrorCategory::Auth,
        ),
        (
            r#"{"type":"result","is_error":true,"error":"Overloaded"}"#,
            "Overloaded",
            ErrorCategory::Api,
        ),
        (
            r#"{"type":"result","subtype":"success","is_error":true,"result":"","permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"rm -rf /tmp/x"}},{"tool_name":"Write","tool_use_id":"t2","tool_input":{"file_path":"/etc/hosts","content":"x"}}]}"#,
            "permission denied: Bash (rm -rf /tmp/x), Write (/etc/hosts)",
            ErrorCategory::Api,
        ),
        (
            r#"{"type":"result","subtype":"error_max_turns","is_error":true,"result":""}"#,
            "error_max_turns: the maximum number of turns was reached (no detail)",
            ErrorCategory::MaxTurns,
        ),
        (
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":""}"#,
            "error_during_execution: an error occurred during execution (no detail)",
            ErrorCategory::Api,
        ),
        (
            r#"{"type":"result","subtype":"error_something_new","is_error":true}"#,
            "error_something_new (no detail)",
            ErrorCategory::Api,
        ),
        (
            r#"{"type":"result","subtype":"success","is_error":true,"result":"","api_error_status":429}"#,
            "API error (no detail)",
            ErrorCategory::RateLimit,
        ),
        // A non-empty `result` still comes first; a different `error` is added.
        (
            r#"{"type":"result","is_error":true,"result":"API Error","error":"429 Too Many Requests"}"#,
            "API Error · 429 Too Many Requests",
            ErrorCategory::RateLimit,
        ),
        (
            r#"{"type":"result","is_error":true,"result":"","errors":["tool crashed"],"error":""}"#,
            "tool crashed",
            ErrorCategory::Api,
        ),
    ];
    for (line, text, category) in cases {
        let s = claude(&[line]);
        assert_eq!(s.error.as_deref(), Some(*text), "{line}");
        assert_eq!(s.error_category, Some(*category), "{line}");
    }
}

/// Issue 13, item 12: a number `structured_output` cannot hold exactly is
/// listed (never silently dropped or rounded), and extraction reports it.
#[test]
fn structured_output_with_an_inexact_number_is_reported() {
    for n in ["1e400", "12345678901234567890123"] {
        let line = format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"result":"done","structured_output":{{"n":{n}}}}}"#
        );
        let s = claude(&[&line]);
        assert!(s.structured_output.is_some(), "{n}");
        assert_eq!(s.structured_inexact.len(), 1, "{n}");
        assert_eq!(s.structured_inexact[0].instance_path, "/n");
        let e = crate::extract::extract_run(&s, &crate::extract::ExtractOptions::default());
        assert_eq!(e.method, crate::Method::Structured);
        assert!(!e.valid, "{n}");
        assert_eq!(
            e.errors[0].kind,
            Some(crate::outcome::ViolationKind::Number)
        );
        // The same through the `StructuredOutput` tool call.
        let tool = format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t","name":"StructuredOutput","input":{{"n":{n}}}}}]}}}}"#
        );
        let s = claude(&[&tool]);
        assert_eq!(s.structured_tool_inexact.len(), 1, "{n}");
        let e = crate::extract::extract_run(&s, &crate::extract::ExtractOptions::default());
        assert_eq!(
            (e.method, e.valid),
            (crate::Method::Structured, false),
            "{n}"
        );
    }
}
