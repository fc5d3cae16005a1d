//! The session page of the largest real agent file (issue 41: "the session
//! page of the largest corpus file renders in under 100 ms server time").
//!
//! The largest file of `../shared/corpus/native` is imported into a
//! temporary SQLite store with the importer `agentshape import` uses, so
//! the rows are what a real store holds; then each page of its session is
//! read and drawn as `GET /sessions/{id}?after=` does (no HTTP):
//! `session_page/first` is the first page, `session_page/slowest` the page
//! that took longest in a first timing pass. Skipped, with a message, when
//! the shared folder is absent.
#![allow(clippy::unwrap_used, missing_docs)] // a bench: a failure is the bench failing
#![allow(clippy::print_stdout)] // what it measured, and why it skipped, are its output

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agentshape_runtime::native::discover::{Candidate, FileStat};
use agentshape_runtime::native::import::{ImportOptions, Importer};
use agentshape_store::SqliteStore;
use criterion::{Criterion, criterion_group, criterion_main};

/// The largest file under the corpus's agent folders, if the corpus is here.
fn largest_corpus_file() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = [
        manifest.join("../../../shared/corpus/native"),
        manifest.join("../../../../shared/corpus/native"),
    ]
    .into_iter()
    .find(|p| p.is_dir())?;
    let mut files = Vec::new();
    for agent in ["claude", "codex", "gemini"] {
        for e in std::fs::read_dir(root.join(agent)).ok()?.flatten() {
            let len = e.metadata().map_or(0, |m| m.len());
            files.push((len, e.path()));
        }
    }
    files.into_iter().max().map(|(_, p)| p)
}

fn bench(c: &mut Criterion) {
    let Some(path) = largest_corpus_file() else {
        println!("skipped session_page: ../shared/corpus/native not found");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("bench.db")).unwrap();
    let mut importer = Importer::new(&store, ImportOptions::default()).unwrap();
    let stat = FileStat::of(&std::fs::metadata(&path).unwrap());
    let report = importer
        .import(
            &mut store,
            &Candidate {
                path: path.clone(),
                stat,
                agent: None,
            },
        )
        .unwrap();
    let id = report.session_id.clone().expect("the file is a session");
    // Every page once: its `after`, bytes and time.
    let mut pages = Vec::new();
    let mut after = 0;
    loop {
        let t = Instant::now();
        let (html, next) = agentshape_web::session_page_html(&store, &id, after)
            .unwrap()
            .unwrap();
        pages.push((after, html.len(), t.elapsed()));
        match next {
            Some(n) => after = n,
            None => break,
        }
    }
    let slowest = pages.iter().max_by_key(|p| p.2).unwrap().0;
    println!(
        "session_page: {} ({} bytes, {} rows) is {} page(s) of HTML: {}",
        path.file_name().unwrap().to_string_lossy(),
        stat.size,
        report.rows_added,
        pages.len(),
        pages
            .iter()
            .map(|(a, n, t)| format!("after {a}: {n} bytes in {t:.1?}"))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let mut group = c.benchmark_group("session_page");
    group.measurement_time(Duration::from_secs(10));
    group.sample_size(20);
    group.bench_function("first", |b| {
        b.iter(|| black_box(agentshape_web::session_page_html(&store, &id, 0).unwrap()));
    });
    group.bench_function("slowest", |b| {
        b.iter(|| black_box(agentshape_web::session_page_html(&store, &id, slowest).unwrap()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
