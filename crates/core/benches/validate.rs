//! Benchmarks of the validate stage: compile once, then many instances.

use std::hint::black_box;

use agentshape_core::validate::Validator;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

fn bench_validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("validate");
    let schema: Value =
        serde_json::from_str(include_str!("../../../schemas/agent-response.json")).expect("schema");
    group.bench_function("compile/agent-response", |b| {
        b.iter(|| black_box(Validator::new(black_box(&schema))));
    });
    let v = Validator::new(&schema).expect("compiles");
    let valid = json!({
        "summary": "All services healthy",
        "events": (0..8).map(|i| json!({"level": "info", "service": format!("svc-{i}"), "message": "ok \"quoted\" \\ café"})).collect::<Vec<_>>(),
        "memories": [{"key": "jellyfin:timing", "value": "Takes 60s to restart"}],
        "escalation": {"needed": false},
        "services_checked": (0..8).map(|i| json!({"name": format!("svc-{i}"), "status": "healthy"})).collect::<Vec<_>>(),
    });
    let mut invalid = valid.clone();
    invalid["events"][3]["level"] = json!("error");
    let text = valid.to_string();
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("is_valid/agent-response", |b| {
        b.iter(|| black_box(v.is_valid(black_box(&valid))));
    });
    group.bench_function("errors/agent-response-invalid", |b| {
        b.iter(|| black_box(v.errors(black_box(&invalid))));
    });
    group.bench_function("parse+is_valid/agent-response", |b| {
        b.iter(|| {
            let inst: Value = serde_json::from_str(black_box(&text)).expect("json");
            black_box(v.is_valid(&inst))
        });
    });
    // Note [Validating from text]: the same verdict without a `Value`.
    group.bench_function("check_text/agent-response", |b| {
        b.iter(|| black_box(v.check_text(black_box(&text))));
    });
    // Note [Errors from text]: an invalid instance's errors without a `Value`.
    let invalid_text = invalid.to_string();
    group.bench_function("verdict_json/agent-response-invalid", |b| {
        b.iter(|| black_box(v.verdict_json(black_box(invalid_text.as_bytes()))));
    });
    group.bench_function("parse+errors/agent-response-invalid", |b| {
        b.iter(|| {
            let inst: Value = serde_json::from_str(black_box(&invalid_text)).expect("json");
            black_box(v.errors(&inst))
        });
    });
    let line =
        json!({"id": 7, "kind": "fenced", "text": format!("Here it is:\n```json\n{text}\n```\n"),
                      "expected": valid})
        .to_string();
    group.throughput(Throughput::Bytes(line.len() as u64));
    group.bench_function("reply_line/corpus-shape", |b| {
        b.iter(|| black_box(agentshape_core::json::reply_line(black_box(&line))));
    });
    group.bench_function("write_compact/agent-response", |b| {
        let mut out = Vec::with_capacity(4096);
        b.iter(|| {
            out.clear();
            agentshape_core::json::write_compact(&mut out, black_box(&valid));
            black_box(out.len())
        });
    });
    group.finish();
}

criterion_group!(benches, bench_validate);
criterion_main!(benches);
