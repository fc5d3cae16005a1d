//! Benchmarks of the extract stage, one fixture per method.

use std::hint::black_box;

use agentshape_core::extract::{ExtractOptions, MarkerGrammar, extract_text, extract_text_compact};
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
        // Note [String boundaries] in `repair::boundary`: every quote of a
        // 1 MB string is doubtful; the scans stay linear.
        (
            "repaired/quotes-1mb",
            format!(r#"{{"a": "{}", "b": 1}}"#, r#"he said "hi" to me, "#.repeat(52_000)),
        ),
        (
            "repaired/stray-words",
            format!("[{}]", r#"{"k": "v" stray words, "n": "say "hi" now"}, "#.repeat(200)),
        ),
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

/// The first replies of the generated bench corpus (`bench/data`, made by
/// `bench/compare.sh`; git-ignored), or `None` when it is absent.
// A bench reads its fixture; the library itself never opens files.
#[allow(clippy::disallowed_methods)]
fn corpus_lines() -> Option<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data/replies/replies.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped extract/corpus: {} not found (run bench/compare.sh once)",
            path.display()
        );
        return None;
    };
    Some(text.lines().take(CORPUS_LINES).map(str::to_owned).collect())
}

const CORPUS_LINES: usize = 2000;

/// The reading `extract --jsonl` used before `reply_of_line`: serde's
/// derive, skipping the other members through `IgnoredAny`.
#[derive(serde::Deserialize)]
#[allow(dead_code)] // Read for its cost only.
struct ReplyLine {
    text: Option<String>,
    id: Option<serde_json::Value>,
}

/// What `extract --jsonl --json` does per line of the bench corpus, in
/// three parts: reading the reply out of the line, extracting (no schema),
/// and writing the value; one iteration is [`CORPUS_LINES`] lines.
fn bench_corpus(c: &mut Criterion) {
    let Some(lines) = corpus_lines() else { return };
    let bytes: usize = lines.iter().map(String::len).sum();
    let texts: Vec<String> = lines
        .iter()
        .filter_map(|l| agentshape_core::json::reply_of_line(l.as_bytes()).map(|r| r.0))
        .collect();
    assert_eq!(texts.len(), lines.len(), "every corpus line is a reply");
    let mut group = c.benchmark_group("extract/corpus");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("read", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(agentshape_core::json::reply_of_line(black_box(
                    l.as_bytes(),
                )));
            }
        });
    });
    group.bench_function("read/serde", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(serde_json::from_slice::<ReplyLine>(black_box(l.as_bytes())).ok());
            }
        });
    });
    let opts = ExtractOptions::default();
    group.bench_function("extract", |b| {
        b.iter(|| {
            for t in &texts {
                black_box(extract_text(black_box(t), &opts));
            }
        });
    });
    let values: Vec<serde_json::Value> = texts
        .iter()
        .filter_map(|t| extract_text(t, &opts).value)
        .collect();
    group.bench_function("write", |b| {
        let mut out = Vec::with_capacity(1 << 20);
        b.iter(|| {
            out.clear();
            for v in &values {
                agentshape_core::json::write_compact(&mut out, black_box(v));
            }
            black_box(out.len())
        });
    });
    // What the CLI now does instead of `extract` then `write`: the value
    // written as it is extracted (Note [Writing from the tape]).
    group.bench_function("extract+write/compact", |b| {
        let mut out = Vec::with_capacity(1 << 20);
        b.iter(|| {
            out.clear();
            for t in &texts {
                black_box(extract_text_compact(black_box(t), &opts, &mut out));
            }
            black_box(out.len())
        });
    });
    group.finish();
}

criterion_group!(benches, bench_extract, bench_corpus);
criterion_main!(benches);
