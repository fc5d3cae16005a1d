//! The repair corpus: how often `extract_text` (no schema) agrees with four
//! public JSON-repair libraries on their own unit-test pairs.
//!
//! Reads `../shared/corpus/repair/cases.jsonl` (relative to the repository,
//! i.e. `CARGO_MANIFEST_DIR/../../../shared`) at run time and skips with a
//! message when it is absent. Scores per library group, since each library
//! encodes its own policy (SOURCES.md); prints a table (`--nocapture` to see
//! it); asserts a floor per group so regressions fail; and lists every
//! accepted class of disagreement with its reason in
//! [`classes::DISAGREEMENTS`].
//!
//! Scoring:
//! - agreement = our value equals `expected` (`serde_json` equality: `1` and
//!   `1.0` differ, key order is free);
//! - `repairable: false` rows (upstream throws or returns nothing): agreement
//!   = we return no value. Returning a value is a policy difference (we are
//!   more lenient: see the `lenient` class), counted as a disagreement;
//! - BAML rows count only with class/map targets ("extract JSON from prose");
//!   rows whose target is a primitive, an enum, a literal or a union of those
//!   test schema coercion, not extraction, and are reported separately as
//!   `baml-coercion` without a floor.
//!
//! The corpus is scored once per run ([`report`]); each test checks one
//! thing of that score. `REPAIR_CORPUS_VERBOSE=1` prints every disagreement.

// Tests read the corpus and an env var and print their totals; the core's
// no-I/O rule is for the library.
#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::panic)]

mod classes;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use agentshape_core::extract::{ExtractOptions, extract_text, extract_text_compact};
use agentshape_core::json;
use serde_json::Value;

use classes::{DISAGREEMENTS, classify};

/// Agreement floors per group (percent): what the rules of
/// `docs/repair-policy.md` reach, less about one case, so a regression fails.
const FLOORS: &[(&str, f64)] = &[
    ("jsonrepair", 85.5),
    ("json_repair", 87.5),
    ("baml", 48.9),
    ("ai-fixjson", 91.0),
];

/// Agreement before issue 14's repair rules (cases, agreed), printed beside
/// today's so the change stays visible.
const BEFORE: &[(&str, usize, usize)] = &[
    ("ai-fixjson", 34, 23),
    ("baml", 49, 26),
    ("baml-coercion", 50, 12),
    ("json_repair", 123, 91),
    ("jsonrepair", 225, 160),
];

struct Case {
    id: String,
    group: String,
    input: String,
    expected: Value,
    repairable: bool,
}

/// `../shared` next to the repository; from a git worktree elsewhere, the
/// main checkout's `/work/shared`.
fn corpus_path() -> PathBuf {
    let rel = "corpus/repair/cases.jsonl";
    let near = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(rel);
    if near.exists() {
        return near;
    }
    let far = PathBuf::from("/work/shared").join(rel);
    if far.exists() { far } else { near }
}

fn load() -> Option<Vec<Case>> {
    let text = std::fs::read_to_string(corpus_path()).ok()?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(row) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let id = row["id"].as_str().unwrap_or_default().to_owned();
        let mut group = id.rsplit_once('-').map_or("", |(g, _)| g).to_owned();
        if group == "baml" {
            let target = row["baml_target"].as_str().unwrap_or_default();
            if !(target.contains("lass(") || target.contains("map(")) {
                "baml-coercion".clone_into(&mut group);
            }
        }
        out.push(Case {
            id,
            group,
            input: row["input"].as_str().unwrap_or_default().to_owned(),
            expected: row["expected"].clone(),
            repairable: row["repairable"].as_bool().unwrap_or(true),
        });
    }
    Some(out)
}

fn agrees(case: &Case, got: Option<&Value>) -> bool {
    if case.repairable {
        got == Some(&case.expected)
    } else {
        got.is_none()
    }
}

/// The corpus's score, computed once and shared by the tests below.
struct Report {
    /// Group → (cases, agreed).
    per_group: BTreeMap<String, (usize, usize)>,
    /// Disagreement class → rows.
    classes: BTreeMap<&'static str, usize>,
    /// Rows where `extract_text_compact` differs from `extract_text`.
    compact_differs: Vec<String>,
    /// Rows whose class is not in [`DISAGREEMENTS`], by id.
    unaccepted_rows: Vec<String>,
}

/// The score, or `None` (with the skip message printed) when the corpus is
/// absent. The first test to ask scores the corpus and prints the table.
fn report() -> Option<&'static Report> {
    static REPORT: OnceLock<Option<Report>> = OnceLock::new();
    let report = REPORT
        .get_or_init(|| {
            let report = score(&load()?);
            print_table(&report);
            Some(report)
        })
        .as_ref();
    if report.is_none() {
        println!(
            "skipped: ../shared/corpus/repair/cases.jsonl not found (looked at {})",
            corpus_path().display()
        );
    }
    report
}

fn score(cases: &[Case]) -> Report {
    let verbose = std::env::var_os("REPAIR_CORPUS_VERBOSE").is_some();
    let mut per_group: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut classes: BTreeMap<&'static str, usize> = BTreeMap::new();
    // `extract --jsonl`'s writer (core's Note [Writing from the tape]) must
    // give these inputs' extractions byte for byte.
    let mut compact_differs: Vec<String> = Vec::new();
    let mut unaccepted_rows: Vec<String> = Vec::new();
    for case in cases {
        let mut want = extract_text(&case.input, &ExtractOptions::default());
        let mut want_bytes = Vec::new();
        match &want.value {
            Some(v) => json::write_compact(&mut want_bytes, v),
            None => want_bytes.extend_from_slice(b"null"),
        }
        let mut got_bytes = Vec::new();
        let compact = extract_text_compact(&case.input, &ExtractOptions::default(), &mut got_bytes);
        let got = want.value.take();
        if got_bytes != want_bytes || compact != want {
            compact_differs.push(case.id.clone());
        }
        let ok = agrees(case, got.as_ref());
        let e = per_group.entry(case.group.clone()).or_default();
        e.0 += 1;
        if ok {
            e.1 += 1;
        } else if case.group != "baml-coercion" {
            let class = classify(case, got.as_ref());
            *classes.entry(class).or_default() += 1;
            if !DISAGREEMENTS.iter().any(|(k, _)| *k == class) {
                unaccepted_rows.push(case.id.clone());
            }
            if verbose {
                println!(
                    "DISAGREE {} [{class}]\n  input:    {:?}\n  expected: {}\n  got:      {}",
                    case.id,
                    case.input,
                    if case.repairable {
                        case.expected.to_string()
                    } else {
                        "<no value>".into()
                    },
                    got.map_or("<no value>".into(), |v| v.to_string())
                );
            }
        }
    }
    Report {
        per_group,
        classes,
        compact_differs,
        unaccepted_rows,
    }
}

fn print_table(report: &Report) {
    println!(
        "{:<14} {:>5} {:>6} {:>7}",
        "group", "cases", "agree", "percent"
    );
    for (g, (n, a)) in &report.per_group {
        let before = BEFORE
            .iter()
            .find(|(k, _, _)| k == g)
            .map_or(String::new(), |(_, bn, ba)| {
                format!("   (before: {ba}/{bn} = {:.1}%)", pct(*ba, *bn))
            });
        println!("{g:<14} {n:>5} {a:>6} {:>6.1}%{before}", pct(*a, *n));
    }
    println!("disagreement classes:");
    for (c, n) in &report.classes {
        let reason = DISAGREEMENTS
            .iter()
            .find(|(k, _)| k == c)
            .map_or("NOT ACCEPTED", |(_, r)| r);
        println!("  {c:<24} {n:>4}  {reason}");
    }
}

/// The group's agreement must reach its entry in [`FLOORS`].
fn assert_floor(group: &str) {
    let Some(report) = report() else {
        return;
    };
    let Some(&(_, floor)) = FLOORS.iter().find(|(g, _)| *g == group) else {
        panic!("no floor for group {group} in FLOORS");
    };
    let (n, a) = report.per_group.get(group).copied().unwrap_or((0, 0));
    let p = pct(a, n);
    assert!(
        p + 1e-9 >= floor,
        "{group}: {a}/{n} = {p:.1}% below the floor {floor}%"
    );
}

#[test]
fn agreement_floor_jsonrepair() {
    assert_floor("jsonrepair");
}

#[test]
fn agreement_floor_json_repair() {
    assert_floor("json_repair");
}

#[test]
fn agreement_floor_baml() {
    assert_floor("baml");
}

#[test]
fn agreement_floor_ai_fixjson() {
    assert_floor("ai-fixjson");
}

#[test]
fn compact_output_agrees() {
    let Some(report) = report() else {
        return;
    };
    assert!(
        report.compact_differs.is_empty(),
        "extract_text_compact differs from extract_text on {:?}",
        report.compact_differs
    );
}

#[test]
fn every_disagreement_class_is_accepted() {
    let Some(report) = report() else {
        return;
    };
    let unaccepted: Vec<(&str, usize)> = report
        .classes
        .iter()
        .filter(|(c, _)| !DISAGREEMENTS.iter().any(|(k, _)| k == *c))
        .map(|(c, n)| (*c, *n))
        .collect();
    assert!(
        unaccepted.is_empty(),
        "classes not in DISAGREEMENTS: {unaccepted:?}, rows {:?} \
         (REPAIR_CORPUS_VERBOSE=1 prints each)",
        report.unaccepted_rows
    );
}

fn pct(a: usize, n: usize) -> f64 {
    if n == 0 {
        100.0
    } else {
        100.0 * a as f64 / n as f64
    }
}
