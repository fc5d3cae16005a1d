//! Benchmarks of the check stage: `x-invariants` evaluation per instance
//! against plain JSON Schema validation, on the code-review schema.

use std::hint::black_box;

use agentshape_core::check::{ContradictionOptions, find_contradictions};
use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

/// A writer output with `n` findings whose counts agree with them.
fn review(n: usize) -> Value {
    let sev = ["blocker", "major", "minor", "nit"];
    let findings: Vec<Value> = (0..n)
        .map(|i| {
            json!({"severity": sev[i % 4], "file": format!("src/mod{}.rs", i % 5),
                   "line": i + 1, "description": format!("finding number {i} about the code"),
                   "raisedBy": "security"})
        })
        .collect();
    let count = |s: &str| findings.iter().filter(|f| f["severity"] == s).count();
    json!({"findings": findings, "counts": {"blocker": count("blocker"), "major": count("major"),
           "minor": count("minor"), "nit": count("nit")}})
}

fn bench_check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    let schema = Profile::builtin("code-review").expect("profile").schema;
    group.bench_function("compile/code-review", |b| {
        b.iter(|| black_box(Validator::new(black_box(&schema))));
    });
    let v = Validator::new(&schema).expect("compiles");
    let inv = v.invariants();
    for n in [8usize, 64] {
        let inst = review(n);
        assert!(v.is_valid(&inst) && inv.evaluate(&inst, &[]).is_empty());
        group.bench_function(format!("is_valid/code-review-{n}"), |b| {
            b.iter(|| black_box(v.is_valid(black_box(&inst))));
        });
        group.bench_function(format!("invariants/code-review-{n}"), |b| {
            b.iter(|| black_box(inv.evaluate(black_box(&inst), &[])));
        });
        group.bench_function(format!("errors_and_invariants/code-review-{n}"), |b| {
            b.iter(|| black_box(v.errors_and_invariants(black_box(&inst))));
        });
        // The whole verdict from the text (Note [Validating from text]),
        // against parsing and validating a `Value`.
        let text = inst.to_string();
        assert_eq!(v.check_text(&text), Some(Vec::new()));
        group.bench_function(format!("check_text/code-review-{n}"), |b| {
            b.iter(|| black_box(v.check_text(black_box(&text))));
        });
        group.bench_function(
            format!("parse+errors_and_invariants/code-review-{n}"),
            |b| {
                b.iter(|| {
                    let inst: Value = serde_json::from_str(black_box(&text)).expect("json");
                    black_box(v.errors_and_invariants(&inst))
                });
            },
        );
    }
    let outputs: Vec<Value> = (0..4).map(|_| review(64)).collect();
    let sources: Vec<(&str, &Value)> = ["a", "b", "c", "d"].into_iter().zip(&outputs).collect();
    let opts = ContradictionOptions {
        near_lines: Some(3),
        ..ContradictionOptions::default()
    };
    group.bench_function("contradictions/4x64-near3", |b| {
        b.iter(|| black_box(find_contradictions(black_box(&sources), &opts)));
    });
    group.finish();
}

/// Issue 13's case: three sources of `n` findings each, all in one source
/// file, one on every line, disagreeing everywhere, grouped with
/// `near_lines: 50` (3.7 s at 2,000 and over 300 s at 20,000 before
/// grouping by anchor).
fn one_file_sources(n: usize) -> Vec<Value> {
    let sev = ["blocker", "major", "minor"];
    (0..3)
        .map(|s| {
            let findings: Vec<Value> = (0..n)
                .map(|i| {
                    json!({"severity": sev[(i + s) % 3], "file": "src/big.rs", "line": i + 1,
                           "description": format!("finding {i} about unchecked input in the parser"),
                           "raisedBy": format!("agent{s}")})
                })
                .collect();
            json!({ "findings": findings })
        })
        .collect()
}

fn bench_contradictions_at_scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    let opts = ContradictionOptions {
        near_lines: Some(50),
        ..ContradictionOptions::default()
    };
    for n in [2_000usize, 20_000] {
        let outputs = one_file_sources(n);
        let sources: Vec<(&str, &Value)> = ["a", "b", "c"].into_iter().zip(&outputs).collect();
        group.bench_function(format!("contradictions/3x{n}-one-file-near50"), |b| {
            b.iter(|| black_box(find_contradictions(black_box(&sources), &opts)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_check, bench_contradictions_at_scale);
criterion_main!(benches);
