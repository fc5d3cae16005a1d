//! `lint` and `fix` over the JSONSchemaBench sample: how many schemas each
//! provider accepts before and after the fix, and that every fix is sound.
//!
//! Reads `../shared/corpus/jsonschemabench/<Split>/<name>.json` (each file:
//! `{"schema": ..., "tests": [{"data": ..., "valid": bool}]}`) at run time and
//! skips with a message when the corpus is absent. For every schema our
//! Validator compiles and every dialect: the fixed schema must compile, a lint
//! of it must have no fixable error left, and every valid test instance, put
//! into the fixed shape (optional → null) and mapped back, must validate
//! against the ORIGINAL schema.

// Reads files and prints a report; a failed unwrap is a failed test.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::panic
)]

use std::path::PathBuf;

use agentshape_core::lint::{Dialect, Severity, fix, lint};
use agentshape_core::validate::Validator;
use serde_json::Value;

/// `../shared` next to the repository; from a git worktree elsewhere, the
/// main checkout's `/work/shared`.
fn corpus() -> Option<PathBuf> {
    let near =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/jsonschemabench");
    let far = PathBuf::from("/work/shared/corpus/jsonschemabench");
    [near, far].into_iter().find(|d| d.is_dir())
}

#[test]
fn jsonschemabench_acceptance_before_and_after_fix() {
    let Some(dir) = corpus() else {
        println!("skipped: {} not found", "../shared/corpus/jsonschemabench");
        return;
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for split in std::fs::read_dir(&dir).unwrap() {
        let split = split.unwrap().path();
        if split.is_dir() {
            for f in std::fs::read_dir(&split).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    files.sort();
    let mut compiled = 0usize;
    let mut before = [0usize; Dialect::ALL.len()];
    let mut after = [0usize; Dialect::ALL.len()];
    let mut unfixable = [0usize; Dialect::ALL.len()];
    let mut round_trips = 0usize;
    let mut failures: Vec<String> = Vec::new();
    for path in &files {
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let schema = &doc["schema"];
        let Ok(original) = Validator::new(schema) else {
            continue;
        };
        compiled += 1;
        let valid: Vec<&Value> = doc["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["valid"] == Value::Bool(true))
            .map(|t| &t["data"])
            .filter(|d| original.is_valid(d))
            .collect();
        for (i, d) in Dialect::ALL.into_iter().enumerate() {
            let errors = |s: &Value| {
                lint(s, d)
                    .into_iter()
                    .filter(|f| f.severity == Severity::Error)
                    .collect::<Vec<_>>()
            };
            if errors(schema).is_empty() {
                before[i] += 1;
            }
            let fixed = fix(schema, d);
            if let Err(e) = Validator::new(&fixed.schema) {
                failures.push(format!(
                    "{} {d:?}: fixed schema does not compile: {e}",
                    path.display()
                ));
                continue;
            }
            let left = errors(&fixed.schema);
            if let Some(f) = left.iter().find(|f| f.fixable) {
                failures.push(format!(
                    "{} {d:?}: fixable error left at {}: {}",
                    path.display(),
                    f.pointer,
                    f.message
                ));
            }
            if left.is_empty() {
                after[i] += 1;
            } else {
                unfixable[i] += 1;
            }
            for instance in &valid {
                let back = fixed.map_back(fixed.to_fixed_shape((*instance).clone()));
                if original.is_valid(&back) {
                    round_trips += 1;
                } else {
                    failures.push(format!(
                        "{} {d:?}: round trip invalid: {:?}",
                        path.display(),
                        original.errors(&back).first()
                    ));
                }
            }
        }
    }
    println!(
        "jsonschemabench: {} files, {compiled} compile with our Validator",
        files.len()
    );
    for (i, d) in Dialect::ALL.into_iter().enumerate() {
        println!(
            "  {:<9} accepted before fix {:>4} / {compiled}, after fix {:>4} / {compiled} ({} left with documented limits no rewrite meets)",
            d.as_str(),
            before[i],
            after[i],
            unfixable[i]
        );
    }
    println!("  valid instances round-tripped through the fixed shape: {round_trips}");
    for f in failures.iter().take(20) {
        println!("  FAIL {f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
    assert!(compiled > 1000, "too few schemas compiled: {compiled}");
}
