//! Benchmarks of secret masking: the detector's MB/s on ordinary transcript
//! text and on text full of secrets, `mask_json_text` on feed bodies
//! (Claude Code lines with tool results) and on `extract --jsonl` replies
//! (many short strings a line), and a short command's cost (a new
//! detector, nothing compiled, masking 12 KB as a process would), with the
//! fixtures of `tests/fixtures/secrets/`.

use std::hint::black_box;

use agentshape_core::secrets::{Detector, MaskKey, Masker};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const ORDINARY: &str = include_str!("../tests/fixtures/secrets/ordinary.txt");
const PLANTED: &str = include_str!("../tests/fixtures/secrets/planted.jsonl");

/// The planted contexts, one after another (about 25 KB).
fn planted() -> Vec<String> {
    PLANTED
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("case")["context"]
                .as_str()
                .expect("context")
                .to_owned()
        })
        .collect()
}

fn tool_result(content: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "content": content}]},
        "uuid": "3f1d1c52-6a43-4a8e-9d59-0d3b1c1f6c11", "timestamp": "2026-11-26T10:00:00.000Z"})
    .to_string()
}

/// The file `AGENTSHAPE_BENCH_EXTRACT_OUTPUT` names, when it does: a bench
/// reads its input as a test does (core itself reads no file).
#[allow(clippy::disallowed_methods)]
fn extract_output() -> Option<String> {
    let path = std::env::var("AGENTSHAPE_BENCH_EXTRACT_OUTPUT").ok()?;
    std::fs::read_to_string(path).ok()
}

fn bench_secrets(c: &mut Criterion) {
    let detector = Detector::builtin();
    let masker = Masker::builtin(MaskKey::from_bytes([9; 32]));
    let ordinary = ORDINARY.repeat(3);
    let mut secrets = String::new();
    for s in planted() {
        secrets.push_str(&s);
        secrets.push('\n');
    }
    let secrets = secrets.repeat(40);

    let mut group = c.benchmark_group("secrets");
    group.sample_size(10);
    group.bench_function("compile/builtin", |b| {
        b.iter(|| {
            black_box(
                Detector::new(&agentshape_core::secrets::RuleSet::builtin()).expect("compiles"),
            )
        });
    });
    // What every masking process pays once, before its first line: the
    // built-in detector built, regexes uncompiled until a hit (no
    // throughput: it reads no text).
    group.bench_function("build/uncached", |b| {
        b.iter(|| black_box(Detector::builtin_uncached()));
    });
    for (name, text) in [("ordinary", &ordinary), ("planted", &secrets)] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("find/{name}"), |b| {
            b.iter(|| black_box(detector.find(black_box(text))));
        });
        group.bench_function(format!("mask_str/{name}"), |b| {
            b.iter(|| black_box(masker.mask_str(black_box(text))));
        });
    }

    // A short command: a process's first 12 KB (a `parse` of one small
    // transcript), from a detector with nothing compiled.
    let short: String = ordinary.chars().take(12 << 10).collect();
    group.throughput(Throughput::Bytes(short.len() as u64));
    group.bench_function("first_use/12KB", |b| {
        b.iter(|| {
            let m = Masker::new(
                std::sync::Arc::new(Detector::builtin_uncached()),
                MaskKey::from_bytes([9; 32]),
            );
            black_box(m.mask_str(black_box(&short)).found.len())
        });
    });
    let planted_short: String = secrets.chars().take(12 << 10).collect();
    group.bench_function("first_use/12KB-planted", |b| {
        b.iter(|| {
            let m = Masker::new(
                std::sync::Arc::new(Detector::builtin_uncached()),
                MaskKey::from_bytes([9; 32]),
            );
            black_box(m.mask_str(black_box(&planted_short)).found.len())
        });
    });

    // Feed bodies: each ordinary line (events, code, lockfile lines) as a tool
    // result line, and each planted context as one.
    let ordinary_lines: Vec<String> = ordinary.lines().take(3000).map(tool_result).collect();
    let planted_lines: Vec<String> = planted().iter().map(|s| tool_result(s)).collect();
    for (name, lines) in [("ordinary", &ordinary_lines), ("planted", &planted_lines)] {
        group.throughput(Throughput::Bytes(
            lines.iter().map(|l| l.len() as u64).sum(),
        ));
        group.bench_function(format!("mask_json_text/{name}"), |b| {
            b.iter(|| {
                for l in lines {
                    black_box(masker.mask_json_text(black_box(l)));
                }
            });
        });
    }

    // `extract --jsonl` output: many short strings per line, with escapes,
    // made of ordinary text (Note [Clean JSON without a Value]).
    let words: Vec<&str> = ORDINARY.split_whitespace().take(60_000).collect();
    let reply_lines: Vec<String> = words
        .chunks(120)
        .map(|w| {
            let steps: Vec<Value> = w
                .chunks(6)
                .enumerate()
                .map(|(i, t)| {
                    json!({"id": i, "title": format!("{}\n{}", t[..3].join(" "), t[3..].join(" ")),
                        "done": i % 2 == 0, "deps": [i, i + 1]})
                })
                .collect();
            json!({"value": {"steps": steps, "token_count": w.len()}, "valid": true}).to_string()
        })
        .collect();
    group.throughput(Throughput::Bytes(
        reply_lines.iter().map(|l| l.len() as u64).sum(),
    ));
    group.bench_function("mask_json_text/replies", |b| {
        b.iter(|| {
            for l in &reply_lines {
                black_box(masker.mask_json_text(black_box(l)));
            }
        });
    });
    // Real `extract --jsonl --json` output, when a file of it is named
    // (`AGENTSHAPE_BENCH_EXTRACT_OUTPUT`, e.g. the output over the shared
    // bench replies, `agentshape extract --jsonl --json --no-mask`): its
    // first 4 MB of lines.
    if let Some(text) = extract_output() {
        let mut lines = Vec::new();
        let mut size = 0;
        for l in text.lines().take_while(|l| {
            size += l.len();
            size < 4 << 20
        }) {
            lines.push(l.to_owned());
        }
        group.throughput(Throughput::Bytes(
            lines.iter().map(|l| l.len() as u64).sum(),
        ));
        group.bench_function("mask_json_text/extract-output", |b| {
            b.iter(|| {
                for l in &lines {
                    black_box(masker.mask_json_text(black_box(l)));
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_secrets);
criterion_main!(benches);
