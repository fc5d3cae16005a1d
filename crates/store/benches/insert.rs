//! Store insertion throughput: sessions of N events each, one transaction per
//! session, into a file database (WAL), reported as events per second; and
//! live-feed appends in batches (one transaction per batch), reported as
//! feed rows per second. The same two on Postgres (`store/insert_postgres`,
//! `store/append_feed_postgres`), on the throwaway server of
//! `agentshape_testkit::pg` over its Unix socket — with `fsync=off`, so
//! they measure the client, the protocol and the server's work, not a disk.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing

use std::hint::black_box;

use agentshape_store::{
    FeedEntry, NewEvent, NewMemory, PgStore, ServiceCheck, Session, SqliteStore, Store,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn session(n: usize, events: usize) -> Session {
    let mut r = Session::new(&format!("s{n}"), "2025-07-14T03:00:00.000Z", "completed");
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

fn insert_postgres(c: &mut Criterion) {
    let mut group = c.benchmark_group("store/insert_postgres");
    for events in [10usize, 100, 1000] {
        group.throughput(Throughput::Elements(events as u64));
        group.bench_with_input(
            BenchmarkId::new("events_per_session", events),
            &events,
            |b, &events| {
                let mut store = PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap();
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

/// Feed rows as a run's queue writes them: numbered from 0 (Note [Feed
/// writes land once]), each iteration's batch the next numbers; and the
/// same rows unnumbered (`batch`), as an import or a hook writes them.
fn feed_group(c: &mut Criterion, name: &str, open: &dyn Fn() -> Box<dyn Store>) {
    let mut group = c.benchmark_group(name);
    for batch in [1usize, 16, 256] {
        group.throughput(Throughput::Elements(batch as u64));
        for numbered in [false, true] {
            let id = if numbered { "numbered" } else { "batch" };
            group.bench_with_input(BenchmarkId::new(id, batch), &batch, |b, &batch| {
                let mut store = open();
                let mut entries: Vec<FeedEntry> = (0..batch)
                    .map(|i| FeedEntry {
                        session_id: "s1".into(),
                        kind: "line".into(),
                        body: format!(
                            r#"{{"type":"assistant","n":{i},"text":"checking jellyfin: HTTP 502"}}"#
                        ),
                        created_at: "2025-07-14T03:00:00.000Z".into(),
                        seq: None,
                    })
                    .collect();
                let mut next = 0i64;
                b.iter(|| {
                    if numbered {
                        for e in &mut entries {
                            e.seq = Some(next);
                            next += 1;
                        }
                    }
                    store.append_feed(black_box(&entries)).unwrap();
                });
            });
        }
    }
    group.finish();
}

fn append_feed_postgres(c: &mut Criterion) {
    feed_group(c, "store/append_feed_postgres", &|| {
        Box::new(PgStore::open(&agentshape_testkit::pg::fresh_db()).unwrap())
    });
}

fn append_feed(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let n = std::cell::Cell::new(0u32);
    feed_group(c, "store/append_feed", &|| {
        n.set(n.get() + 1);
        let path = dir.path().join(format!("feed{}.db", n.get()));
        Box::new(SqliteStore::open(&path).unwrap())
    });
}

criterion_group!(
    benches,
    insert,
    append_feed,
    insert_postgres,
    append_feed_postgres
);
criterion_main!(benches);
