//! Mapping a large stored session to spans: a session of 5,000 tool calls
//! (10,000 feed rows, a prompt and 5,000 assistant texts), a verdict and
//! 20 hook calls, read back from a SQLite store and turned into spans
//! (`spans/load+map`), and the mapping alone (`spans/map`), contents off
//! and on (masked).
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing

use std::hint::black_box;

use agentshape_core::secrets::{MaskKey, Masker};
use agentshape_otel::content::Content;
use agentshape_otel::spans::{SpanOptions, spans};
use agentshape_otel::stored;
use agentshape_store::{FeedEntry, HookCall, Session, SqliteStore, Store, time};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

const TOOLS: i64 = 5_000;

fn store() -> SqliteStore {
    let mut s = SqliteStore::open_in_memory().unwrap();
    let t0 = 1_700_000_000_000;
    let mut rec = Session::new("big", &time::format_ms(t0), "completed");
    rec.agent = Some("claude".into());
    rec.ended_at = Some(time::format_ms(t0 + TOOLS * 1_000));
    rec.verdict = Some(
        serde_json::from_value(
            json!({"valid": false, "errors": [{"instance_path": "/a", "schema_path": "/x", "message": "m"}], "repairs": [], "coercions": []}),
        )
        .unwrap(),
    );
    rec.extraction_method = Some("fenced".into());
    s.start_session(&rec).unwrap();
    let mut feed = Vec::new();
    for i in 0..TOOLS {
        let at = time::format_ms(t0 + i * 1_000);
        let id = format!("toolu_{i}");
        for body in [
            json!({"kind": "event", "event": {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("ls /srv/{i}")}}}),
            json!({"kind": "event", "event": {"type": "tool_result", "tool_use_id": id, "is_error": i % 10 == 0, "content": "total 0\n".repeat(20)}}),
            json!({"kind": "event", "event": {"type": "text", "text": format!("step {i} done")}}),
        ] {
            feed.push(FeedEntry {
                seq: None,
                session_id: "big".into(),
                kind: "event".into(),
                body: body.to_string(),
                created_at: at.clone(),
            });
        }
    }
    s.append_feed(&feed).unwrap();
    s.write_session(&rec).unwrap();
    for i in 0..20 {
        let mut h = HookCall::new("big", "Stop", "blocked", &time::format_ms(t0 + i * 7_000));
        h.errors =
            Some(json!([{"instance_path": "/severity", "schema_path": "/p", "message": "m"}]));
        h.profile = Some("claude-ops".into());
        s.save_hook(&h, &[]).unwrap();
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = store();
    let plain = SpanOptions::default();
    let masked = SpanOptions {
        content: Content {
            enabled: true,
            masker: Some(Masker::builtin(MaskKey::from_bytes([3; 32]))),
            max_chars: 0,
        },
        skip_open_tools: false,
        prices: None,
    };
    let trace = stored::load(&s, "big", false).unwrap().unwrap();
    assert_eq!(spans(&trace, &plain).len(), 1 + 5_000 + 1 + 20);
    let with_content = stored::load(&s, "big", true).unwrap().unwrap();
    let mut g = c.benchmark_group("spans");
    g.sample_size(10);
    g.bench_function("map", |b| b.iter(|| black_box(spans(&trace, &plain))));
    g.bench_function("map_content_masked", |b| {
        b.iter(|| black_box(spans(&with_content, &masked)));
    });
    g.bench_function("load+map", |b| {
        b.iter(|| {
            let t = stored::load(&s, "big", false).unwrap().unwrap();
            black_box(spans(&t, &plain))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
