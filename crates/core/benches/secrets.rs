//! Benchmarks of secret masking (filled in below).

use criterion::{Criterion, criterion_group, criterion_main};

fn bench_secrets(_c: &mut Criterion) {}

criterion_group!(benches, bench_secrets);
criterion_main!(benches);
