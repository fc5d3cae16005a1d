//! Store insertion throughput: sessions of N events each, one transaction per
//! session, into a file database (WAL), reported as events per second.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing

use std::hint::black_box;

use agentshape_store::{NewEvent, NewMemory, ServiceCheck, SessionRecord, SqliteStore, Store};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn session(n: usize, events: usize) -> SessionRecord {
    let mut r = SessionRecord::new(&format!("s{n}"), "2025-07-14T03:00:00.000Z", "completed");
    r.ended_at = Some("2025-07-14T03:00:45.000Z".into());
    r.summary = Some("Tier 1 health check".into());
    r.events = (0..events)
        .map(|i| NewEvent {
            level: ["info", "warning", "critical"][i % 3].into(),
            service: Some(format!("svc{}", i % 12)),
            message: format!("event {i}: HTTP 502 for 5 checks; container is restarting"),
        })
        .collect();
    r.memories = vec![NewMemory {
        key: "jellyfin:timing".into(),
        value: "60s to restart".into(),
    }];
    r.services = (0..12)
        .map(|i| ServiceCheck {
            name: format!("svc{i}"),
            status: "healthy".into(),
            detail: None,
        })
        .collect();
    r
}

fn insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("store/insert");
    for events in [10usize, 100, 1000] {
        group.throughput(Throughput::Elements(events as u64));
        group.bench_with_input(
            BenchmarkId::new("events_per_session", events),
            &events,
            |b, &events| {
                let dir = tempfile::tempdir().unwrap();
                let mut store = SqliteStore::open(&dir.path().join("bench.db")).unwrap();
                let mut n = 0usize;
                b.iter(|| {
                    n += 1;
                    let rec = session(n, events);
                    black_box(store.write_session(&rec).unwrap());
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, insert);
criterion_main!(benches);
