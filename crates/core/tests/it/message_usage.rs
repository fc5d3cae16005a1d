//! Every model call of a native session, at its own time, in one
//! vocabulary (Note [Message usage], Note [Usage vocabulary]): the
//! contract as tables over small sessions written here.

use agentshape_core::decode::{DecodeOptions, Format, summarize_reader};
use agentshape_core::usage::{MessageUsage, UsageTokens};

fn calls(text: &str) -> Vec<MessageUsage> {
    let s = summarize_reader(text.as_bytes(), Format::Auto, &DecodeOptions::default())
        .expect("summary");
    s.session.expect("a native session").usage
}

fn claude_line(id: &str, req: &str, at: &str, usage: &str, side: bool) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s1","uuid":"u-{id}-{at}","parentUuid":null,"isSidechain":{side},"timestamp":"{at}","requestId":"{req}","cwd":"/p","version":"2.1.0","message":{{"id":"{id}","role":"assistant","model":"claude-opus-5","content":[{{"type":"text","text":"x"}}],"usage":{usage}}}}}"#
    )
}

#[test]
fn a_claude_message_is_one_call_at_its_first_line_with_its_last_usage() {
    let text = [
        claude_line("m1", "r1", "2026-08-17T23:59:59Z", r#"{"input_tokens":3,"output_tokens":1,"cache_read_input_tokens":100,"cache_creation_input_tokens":40,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":30}}"#, false),
        claude_line("m1", "r1", "2026-08-18T00:00:02Z", r#"{"input_tokens":3,"output_tokens":9,"cache_read_input_tokens":100,"cache_creation_input_tokens":40,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":30}}"#, false),
        claude_line("m2", "r2", "2026-08-18T00:01:00Z", r#"{"input_tokens":1,"output_tokens":2}"#, true),
    ]
    .join("\n");
    let got = calls(&text);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].key.as_deref(), Some("m1:r1"));
    assert_eq!(got[0].at.as_deref(), Some("2026-08-17T23:59:59Z"));
    assert_eq!(
        got[0].tokens,
        UsageTokens {
            input: 3,
            output: 9,
            reasoning: 0,
            cache_read: 100,
            cache_write_5m: 10,
            cache_write_1h: 30,
        }
    );
    assert!(!got[0].sidechain);
    assert!(got[1].sidechain, "an inline sub-agent's call says so");
    assert_eq!(got[1].model.as_deref(), Some("claude-opus-5"));
}

fn codex(lines: &[(&str, u64, u64, u64, u64)]) -> String {
    let mut out = vec![
        r#"{"timestamp":"2026-02-23T10:00:00Z","type":"session_meta","payload":{"id":"019c8a4c-ed82-79a1-aa28-7738fc5ab61a","cwd":"/p","cli_version":"0.104.0"}}"#.to_owned(),
        r#"{"timestamp":"2026-02-23T10:00:00Z","type":"turn_context","payload":{"model":"gpt-5.3-codex","cwd":"/p"}}"#.to_owned(),
    ];
    for (at, input, cached, output, reasoning) in lines {
        out.push(format!(
            r#"{{"timestamp":"{at}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":{output},"reasoning_output_tokens":{reasoning},"total_tokens":{}}}}}}}}}"#,
            input + output
        ));
    }
    out.join("\n")
}

#[test]
fn codex_totals_are_read_per_segment_and_each_growth_is_a_call() {
    let text = codex(&[
        ("2026-02-23T10:00:01Z", 1000, 800, 50, 20),
        ("2026-02-23T10:00:02Z", 1000, 800, 50, 20), // a repeat: no call
        ("2026-02-23T23:59:00Z", 3000, 2000, 80, 30),
        ("2026-02-24T00:01:00Z", 500, 100, 5, 0), // the total fell: a new segment
        ("2026-02-24T00:02:00Z", 700, 100, 9, 1),
    ]);
    let s = summarize_reader(text.as_bytes(), Format::Auto, &DecodeOptions::default()).unwrap();
    let info = s.session.as_deref().unwrap();
    assert_eq!(
        info.tokens.input, 3700,
        "3000 + 700: the segments' last totals"
    );
    assert_eq!(info.tokens.output, 89);
    assert_eq!(info.tokens.cache_read, 2100);
    assert_eq!(info.tokens.reasoning, 31);
    let got = &info.usage;
    let rows: Vec<(&str, u64, u64, u64, u64)> = got
        .iter()
        .map(|c| {
            (
                c.at.as_deref().unwrap(),
                c.tokens.input,
                c.tokens.cache_read,
                c.tokens.output,
                c.tokens.reasoning,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("2026-02-23T10:00:01Z", 200, 800, 50, 20),
            ("2026-02-23T23:59:00Z", 800, 1200, 30, 10),
            ("2026-02-24T00:01:00Z", 400, 100, 5, 0),
            ("2026-02-24T00:02:00Z", 200, 0, 4, 1),
        ]
    );
    assert!(got.iter().all(|c| c.key.is_none()));
    assert!(
        got.iter()
            .all(|c| c.model.as_deref() == Some("gpt-5.3-codex"))
    );
    // The calls add up to the session's tokens, in the one vocabulary.
    let mut sum = UsageTokens::default();
    for c in got {
        sum.add(&c.tokens);
    }
    assert_eq!(sum.input + sum.cache_read, info.tokens.input);
    assert_eq!(sum.output, info.tokens.output);
}

#[test]
fn gemini_input_loses_its_cached_tokens_and_thoughts_are_output() {
    let text = r#"{"sessionId":"7c1d2e3f-aaaa-4bbb-8ccc-1234567890ab","projectHash":"h","startTime":"2026-01-10T02:08:00Z","lastUpdated":"2026-01-10T02:09:00Z","messages":[
      {"id":"a","timestamp":"2026-01-10T02:08:01Z","type":"user","content":"hi"},
      {"id":"b","timestamp":"2026-01-10T02:08:05Z","type":"gemini","content":"yo","model":"gemini-2.5-flash","tokens":{"input":1000,"output":10,"cached":600,"thoughts":5,"tool":0,"total":1015}}
    ]}"#;
    let got = calls(text);
    assert_eq!(got.len(), 1, "{got:?}");
    let t = got[0].tokens;
    assert_eq!(
        (t.input, t.cache_read, t.output, t.reasoning),
        (400, 600, 15, 5)
    );
    assert_eq!(got[0].at.as_deref(), Some("2026-01-10T02:08:05Z"));
}
