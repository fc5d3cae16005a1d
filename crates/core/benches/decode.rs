//! Benchmarks of the decode stage: Claude stream-json into a run summary.
//!
//! The transcript is synthesized here (no files needed): tool-result lines with
//! long escaped strings dominate real transcripts, so they dominate this one.

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
    }
    group.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
