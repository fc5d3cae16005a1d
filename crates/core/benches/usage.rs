//! Benchmarks of the usage reports: a year of heavy use (200,000 model
//! calls over 2,000 sessions and six models, one unpriced) summed by day,
//! by session (sub-agents folded) and into 5-hour blocks, every call
//! priced on its own with the built-in prices.

use std::hint::black_box;

use agentshape_core::pricing::PriceTable;
use agentshape_core::usage::{UsageCall, UsageTokens, blocks, group_by, sessions};
use criterion::{Criterion, criterion_group, criterion_main};

const MODELS: [&str; 6] = [
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-1-20250805",
    "claude-haiku-4-5-20251001",
    "gpt-5-codex",
    "gemini-2.5-pro",
    "house-model-9",
];

fn calls(n: u64) -> Vec<UsageCall> {
    let start = 1_767_225_600_000_i64; // 2026-01-01
    (0..n)
        .map(|i| {
            let session = i / 100;
            UsageCall {
                session_id: format!("s-{session}"),
                parent_id: (session % 10 == 9).then(|| format!("s-{}", session - 1)),
                agent: "claude-code".to_owned(),
                project: Some(format!("/src/p{}", session % 7)),
                at_ms: start + i64::try_from(i).unwrap_or(0) * 157_000,
                model: MODELS[usize::try_from(i % 6).unwrap_or(0)].to_owned(),
                sidechain: i % 13 == 0,
                tokens: UsageTokens {
                    input: 40 + i % 50,
                    output: 300 + i % 900,
                    reasoning: 0,
                    cache_read: 20_000 + (i * 37) % 250_000,
                    cache_write_5m: 1_000 + i % 3_000,
                    cache_write_1h: i % 500,
                },
            }
        })
        .collect()
}

fn bench_usage(c: &mut Criterion) {
    let prices = PriceTable::builtin();
    let all = calls(200_000);
    let mut group = c.benchmark_group("usage");
    group.sample_size(20);
    group.bench_function("daily/200k-calls", |b| {
        b.iter(|| {
            group_by(
                black_box(&all),
                |c| Some((c.at_ms / 86_400_000).to_string()),
                &prices,
            )
        });
    });
    group.bench_function("session/200k-calls", |b| {
        b.iter(|| sessions(black_box(&all), &prices));
    });
    group.bench_function("blocks/200k-calls", |b| {
        b.iter(|| blocks(black_box(&all), &prices, 0));
    });
    group.bench_function("price/one-call", |b| {
        let t = &all[7].tokens;
        b.iter(|| prices.cost_of(black_box("claude-sonnet-4-5-20250929"), t));
    });
    group.finish();
}

criterion_group!(benches, bench_usage);
criterion_main!(benches);
