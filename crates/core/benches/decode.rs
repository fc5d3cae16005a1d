//! Benchmarks of the decode stage: Claude stream-json, and the native session
//! files (Claude Code session, Codex rollout, Gemini chat), into a run summary.
//!
//! The transcripts are synthesized here (no files needed): tool-result lines with
//! long escaped strings dominate real transcripts, so they dominate these.

use std::fmt::Write as _;
use std::hint::black_box;

use agentshape_core::decode::{DecodeOptions, Format, summarize_reader};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn transcript(turns: usize, tool_output_bytes: usize) -> String {
    let mut s = String::new();
    s.push_str(r#"{"type":"system","subtype":"init","cwd":"/srv","session_id":"s-1","tools":["Bash","Read"],"model":"claude-sonnet-4-5","apiKeySource":"ANTHROPIC_API_KEY"}"#);
    s.push('\n');
    let chunk = "drwxr-xr-x  2 root root 4096 Nov 22 00:13 \\\"logs\\\"\\n\\tcafé → ✓ ";
    for i in 0..turns {
        let _ = writeln!(
            s,
            r#"{{"type":"assistant","message":{{"id":"msg_{i}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"Checking service number {i} and its logs."}},{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{"command":"docker logs svc-{i} --tail 200"}}}}],"stop_reason":null,"usage":{{"input_tokens":12,"output_tokens":40}}}},"parent_tool_use_id":null,"session_id":"s-1"}}"#
        );
        let mut out = String::new();
        while out.len() < tool_output_bytes {
            out.push_str(chunk);
        }
        let _ = writeln!(
            s,
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"{out}"}}]}},"session_id":"s-1"}}"#
        );
    }
    s.push_str(r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":45000,"num_turns":8,"result":"done","session_id":"s-1","total_cost_usd":0.03,"usage":{"input_tokens":1423,"output_tokens":512}}"#);
    s.push('\n');
    s
}

/// Tool output of about `bytes` bytes, JSON-escaped.
fn tool_output(bytes: usize) -> String {
    let chunk = "drwxr-xr-x  2 root root 4096 Nov 22 00:13 \\\"logs\\\"\\n\\tcafé → ✓ ";
    let mut out = String::new();
    while out.len() < bytes {
        out.push_str(chunk);
    }
    out
}

/// A Claude Code session file: per turn, one message over two lines (text,
/// then tool use, the usage growing) and its tool result.
fn claude_session(turns: usize, tool_output_bytes: usize) -> String {
    let out = tool_output(tool_output_bytes);
    let meta = r#""sessionId":"s-1","version":"2.1.231","gitBranch":"main","cwd":"/srv","userType":"external","isSidechain":false"#;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"{{"parentUuid":null,{meta},"type":"user","message":{{"role":"user","content":"check the services"}},"uuid":"u","timestamp":"2026-01-01T00:00:00.000Z"}}"#
    );
    for i in 0..turns {
        for (block, tokens) in [
            (
                format!(r#"{{"type":"text","text":"Checking service number {i} and its logs."}}"#),
                10,
            ),
            (
                format!(
                    r#"{{"type":"tool_use","id":"toolu_{i}","name":"Bash","input":{{"command":"docker logs svc-{i} --tail 200"}}}}"#
                ),
                40,
            ),
        ] {
            let _ = writeln!(
                s,
                r#"{{"parentUuid":"p{i}",{meta},"type":"assistant","message":{{"id":"msg_{i}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{block}],"stop_reason":null,"usage":{{"input_tokens":12,"cache_read_input_tokens":9000,"cache_creation_input_tokens":300,"output_tokens":{tokens}}}}},"requestId":"req_{i}","uuid":"a{i}","timestamp":"2026-01-01T00:00:01.000Z"}}"#
            );
        }
        let _ = writeln!(
            s,
            r#"{{"parentUuid":"a{i}",{meta},"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"{out}"}}]}},"toolUseResult":{{"stdout":"{out}","stderr":""}},"uuid":"r{i}","timestamp":"2026-01-01T00:00:02.000Z"}}"#
        );
    }
    s
}

/// A Codex rollout: per turn, a function call, its output and two
/// (repeating) cumulative token counts.
fn codex_rollout(turns: usize, tool_output_bytes: usize) -> String {
    let out = tool_output(tool_output_bytes);
    let mut s = String::new();
    s.push_str(r#"{"timestamp":"2026-02-01T09:00:00.000Z","type":"session_meta","payload":{"id":"cx-1","cwd":"/w","cli_version":"0.104.0","git":{"branch":"main"}}}"#);
    s.push('\n');
    s.push_str(r#"{"timestamp":"2026-02-01T09:00:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}"#);
    s.push('\n');
    for i in 0..turns {
        let _ = writeln!(
            s,
            r#"{{"timestamp":"2026-02-01T09:00:01.000Z","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"docker\",\"logs\",\"svc-{i}\"]}}","call_id":"call_{i}"}}}}"#
        );
        let _ = writeln!(
            s,
            r#"{{"timestamp":"2026-02-01T09:00:02.000Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_{i}","output":"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n{out}"}}}}"#
        );
        for _ in 0..2 {
            let _ = writeln!(
                s,
                r#"{{"timestamp":"2026-02-01T09:00:03.000Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{},"cached_input_tokens":{},"output_tokens":{},"reasoning_output_tokens":0,"total_tokens":0}}}}}}}}"#,
                1000 * (i + 1),
                800 * i,
                50 * (i + 1)
            );
        }
    }
    s
}

/// A Gemini CLI chat document: per turn, a model message with a tool call.
fn gemini_chat(turns: usize, tool_output_bytes: usize) -> String {
    let out = tool_output(tool_output_bytes);
    let mut messages = Vec::new();
    for i in 0..turns {
        messages.push(format!(
            r#"    {{"id":"m{i}","timestamp":"2026-01-10T20:00:00.000Z","type":"gemini","content":"Checking service {i}.","model":"gemini-2.5-flash","toolCalls":[{{"id":"c{i}","name":"run_shell_command","args":{{"command":"docker logs svc-{i}"}},"result":[{{"functionResponse":{{"id":"c{i}","name":"run_shell_command","response":{{"output":"{out}"}}}}}}],"status":"success"}}],"tokens":{{"input":12000,"output":20,"cached":11000,"thoughts":40,"tool":0,"total":12060}}}}"#
        ));
    }
    format!(
        "{{\n  \"sessionId\": \"gm-1\",\n  \"projectHash\": \"abc\",\n  \"messages\": [\n{}\n  ]\n}}",
        messages.join(",\n")
    )
}

fn bench_decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for (name, turns, out) in [
        ("small-lines", 2000, 200),
        ("large-tool-results", 100, 50_000),
    ] {
        let t = transcript(turns, out);
        group.throughput(Throughput::Bytes(t.len() as u64));
        group.bench_function(format!("claude/{name}"), |b| {
            b.iter(|| {
                let s = summarize_reader(
                    black_box(t.as_bytes()),
                    Format::Claude,
                    &DecodeOptions::default(),
                );
                black_box(s)
            });
        });
        group.bench_function(format!("auto/{name}"), |b| {
            b.iter(|| {
                let s = summarize_reader(
                    black_box(t.as_bytes()),
                    Format::Auto,
                    &DecodeOptions::default(),
                );
                black_box(s)
            });
        });
        for (format, want, input) in [
            (
                "claude-session",
                Format::ClaudeSession,
                claude_session(turns, out),
            ),
            (
                "codex-rollout",
                Format::CodexRollout,
                codex_rollout(turns, out),
            ),
            ("gemini-chat", Format::GeminiChat, gemini_chat(turns, out)),
        ] {
            // A benchmark of the wrong decoder would measure nothing.
            let check = summarize_reader(input.as_bytes(), Format::Auto, &DecodeOptions::default())
                .expect("in memory");
            assert_eq!((check.format, check.skipped_lines), (want, 0), "{format}");
            assert!(
                check.session.is_some_and(|s| s.tokens.output > 0),
                "{format}"
            );
            group.throughput(Throughput::Bytes(input.len() as u64));
            group.bench_function(format!("{format}/{name}"), |b| {
                b.iter(|| {
                    let s = summarize_reader(
                        black_box(input.as_bytes()),
                        Format::Auto,
                        &DecodeOptions::default(),
                    );
                    black_box(s)
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
