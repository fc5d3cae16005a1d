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

criterion_group!(benches, bench_check);
criterion_main!(benches);
