//! Benchmarks of the extract stage, one fixture per method.

use std::hint::black_box;

use agentshape_core::extract::{ExtractOptions, MarkerGrammar, extract_text};
use agentshape_core::validate::Validator;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const VALUE: &str = r#"{"summary": "All services healthy except jellyfin", "events": [{"level": "critical", "service": "jellyfin", "message": "HTTP 502 for 5 checks"}, {"level": "info", "service": "postgres", "message": "vacuum finished in 12s"}], "escalation": {"needed": true, "reason": "jellyfin down", "failed_checks": ["http-jellyfin"]}, "services_checked": [{"name": "jellyfin", "status": "down"}, {"name": "postgres", "status": "healthy"}]}"#;

/// A reply dense in numbers (scores, counts, costs, timestamps), for the
/// cost of number parsing (Note [Big numbers] in `agentshape_core::json`).
fn numbers() -> String {
    let rows: Vec<String> = (0..200)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "score": 0.{i:03}7, "cost_usd": {}.25, "tokens": {}, "ts": 17000000{i:02}, "ratio": -{i}.5e-3}}"#,
                i * 3,
                i * 1000 + 17
            )
        })
        .collect();
    format!(r#"{{"summary": "numbers", "rows": [{}]}}"#, rows.join(", "))
}

fn fixtures() -> Vec<(&'static str, String)> {
    let lax = VALUE.replace('"', "'").replace("]}", "],}");
    vec![
        ("bare/clean", VALUE.to_owned()),
        ("bare/numbers", numbers()),
        ("fenced/prose", format!("I checked everything.\n\n```json\n{VALUE}\n```\n\nLet me know.")),
        ("bare/prose", format!("Here is the result: {VALUE} -- that is all.")),
        ("repaired/lax", format!("Result:\n{lax}")),
        ("repaired/truncated", format!("```json\n{}", &VALUE[..VALUE.len() / 2])),
        (
            "markers/claude-ops",
            "Checking jellyfin... HTTP 502 detected.\n[EVENT:critical:jellyfin] HTTP 502 for 5 checks\n[MEMORY:timing:jellyfin] Takes 60s to restart\nDone.".to_owned(),
        ),
        ("none/prose", "Everything looks fine, nothing to report today. ".repeat(20)),
    ]
}

fn bench_extract(c: &mut Criterion) {
    let mut group = c.benchmark_group("extract");
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schemas/agent-response.json")).expect("schema");
    let validator = Validator::new(&schema).expect("compiles");
    for (name, text) in fixtures() {
        group.throughput(Throughput::Bytes(text.len() as u64));
        let plain = ExtractOptions {
            markers: Some(MarkerGrammar::ClaudeOps),
            ..ExtractOptions::default()
        };
        group.bench_function(name, |b| {
            b.iter(|| black_box(extract_text(black_box(&text), &plain)));
        });
        let with_schema = ExtractOptions {
            validator: Some(&validator),
            ..plain
        };
        group.bench_function(format!("{name}+schema"), |b| {
            b.iter(|| black_box(extract_text(black_box(&text), &with_schema)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_extract);
criterion_main!(benches);
