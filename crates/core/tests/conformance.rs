//! Conformance of [`Validator`] against the official JSON-Schema-Test-Suite.
//!
//! Reads `../shared/corpus/json-schema-test-suite/tests/{draft7,draft2020-12}/*.json`
//! at run time (required tests only, not `optional/`) and runs one trial per
//! test case, named `draft7/ref.json/<case>/<test>`, through our public API with
//! the draft forced per directory. `http://localhost:1234/<path>` is served from
//! the suite's `remotes/<path>` by a [`Retriever`], as upstream prescribes.
//! Every exclusion is listed in [`EXCLUDED`] with its reason.
//!
//! The ignored trials `jsonschemabench/<split>` sweep the JSONSchemaBench
//! sample (`../shared/corpus/jsonschemabench/`): how many real-world schemas
//! compile, and whether the labelled valid/invalid instances are judged the
//! same way. Run them with `--ignored`.
//!
//! When `../shared` is absent the suite is skipped with a message and exit 0.

// A test harness reads its corpus from disk and prints its totals; the
// crate-wide bans on file I/O and the clock are for the library only.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::panic
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use agentshape_core::validate::{Draft, ValidateOptions, Validator};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

/// Test cases we do not run, by trial-name prefix, each with the reason.
const EXCLUDED: &[(&str, &str)] = &[];

/// A case's schema, compiled once and shared by its tests (or why it did not compile).
type Compiled = Result<Arc<Validator>, String>;

/// The suite's directories we run, with the draft forced for each.
const DRAFTS: &[(&str, Draft)] = &[
    ("draft7", Draft::Draft7),
    ("draft2020-12", Draft::Draft202012),
];

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// Per-draft pass/fail counts, printed after the run.
#[derive(Default)]
struct Tally {
    passed: AtomicUsize,
    failed: AtomicUsize,
    excluded: AtomicUsize,
}

fn main() {
    let args = Arguments::from_args();
    let corpus = corpus_root();
    let suite = corpus.join("json-schema-test-suite");
    if !suite.is_dir() {
        println!("skipped: ../shared/corpus/json-schema-test-suite not found");
        let conclusion = libtest_mimic::run(&args, Vec::new());
        println!("conformance: 0 test cases run (corpus absent)");
        conclusion.exit();
    }
    let remotes = suite.join("remotes");
    let mut trials = Vec::new();
    let mut tallies: BTreeMap<&'static str, Arc<Tally>> = BTreeMap::new();
    for &(dir, draft) in DRAFTS {
        let tally = Arc::new(Tally::default());
        tallies.insert(dir, Arc::clone(&tally));
        suite_trials(
            &suite.join("tests").join(dir),
            dir,
            draft,
            &remotes,
            &tally,
            &mut trials,
        );
    }
    let bench = corpus.join("jsonschemabench");
    if bench.is_dir() {
        bench_trials(&bench, &mut trials);
    }
    let conclusion = libtest_mimic::run(&args, trials);
    for (dir, t) in &tallies {
        println!(
            "conformance {dir}: {} passed, {} failed, {} excluded",
            t.passed.load(Ordering::Relaxed),
            t.failed.load(Ordering::Relaxed),
            t.excluded.load(Ordering::Relaxed),
        );
    }
    conclusion.exit();
}

/// The retriever for the suite: `http://localhost:1234/<path>` → `remotes/<path>`.
fn remotes_retriever(
    remotes: &Path,
) -> impl Fn(&str) -> Result<Value, String> + Send + Sync + use<> {
    let remotes = remotes.to_path_buf();
    move |uri: &str| {
        let rest = uri
            .strip_prefix("http://localhost:1234/")
            .ok_or_else(|| format!("no such remote `{uri}`"))?;
        let path = remotes.join(rest);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("`{}`: {e}", path.display()))
    }
}

fn suite_trials(
    dir: &Path,
    label: &'static str,
    draft: Draft,
    remotes: &Path,
    tally: &Arc<Tally>,
    trials: &mut Vec<Trial>,
) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let options = ValidateOptions::new()
        .draft(draft)
        .retriever(remotes_retriever(remotes));
    for file in files {
        let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups {
            let case = group["description"].as_str().unwrap_or("?").to_owned();
            let schema = Arc::new(group["schema"].clone());
            // Compiled once per case, on first use, shared by its tests.
            let compiled: Arc<OnceLock<Compiled>> = Arc::new(OnceLock::new());
            for test in group["tests"].as_array().into_iter().flatten() {
                let name = format!(
                    "{label}/{file_name}/{case}/{}",
                    test["description"].as_str().unwrap_or("?")
                );
                let excluded = EXCLUDED.iter().any(|(id, _)| name.starts_with(id));
                let data = test["data"].clone();
                let valid = test["valid"].as_bool().unwrap();
                let (schema, compiled, options, tally) = (
                    Arc::clone(&schema),
                    Arc::clone(&compiled),
                    options.clone(),
                    Arc::clone(tally),
                );
                if excluded {
                    tally.excluded.fetch_add(1, Ordering::Relaxed);
                }
                let trial = Trial::test(name, move || {
                    let validator = compiled
                        .get_or_init(|| {
                            options
                                .build(&schema)
                                .map(Arc::new)
                                .map_err(|e| e.to_string())
                        })
                        .clone();
                    let result = check(validator, &data, valid);
                    let counter = if result.is_ok() {
                        &tally.passed
                    } else {
                        &tally.failed
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    result
                })
                .with_ignored_flag(excluded);
                trials.push(trial);
            }
        }
    }
}

/// Both paths must agree with the suite: the fast `is_valid` and `errors`.
fn check(
    validator: Result<Arc<Validator>, String>,
    data: &Value,
    valid: bool,
) -> Result<(), Failed> {
    let validator = validator.map_err(|e| format!("schema did not compile: {e}"))?;
    let fast = validator.is_valid(data);
    let errors = validator.errors(data);
    if fast != valid {
        return Err(
            format!("expected valid={valid}, is_valid said {fast}; errors: {errors:?}").into(),
        );
    }
    if errors.is_empty() != valid {
        return Err(format!("expected valid={valid}, errors() said {errors:?}").into());
    }
    Ok(())
}

/// One ignored trial per JSONSchemaBench split.
fn bench_trials(bench: &Path, trials: &mut Vec<Trial>) {
    let mut splits: Vec<PathBuf> = std::fs::read_dir(bench)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    splits.sort();
    for split in splits {
        let name = split.file_name().unwrap().to_string_lossy().into_owned();
        trials.push(
            Trial::test(format!("jsonschemabench/{name}"), move || {
                sweep(&split, &name)
            })
            .with_ignored_flag(true),
        );
    }
}

/// Compile every schema of one split and judge its labelled instances twice:
/// with our defaults (`format` per draft: an annotation for undeclared and
/// 2020-12 schemas) and with `format` asserted, which is how the labels were
/// produced. Prints one summary line per split. Fails only when the
/// format-asserting verdicts disagree with the labels on more than 2% of
/// instances (the labels are not perfectly reproducible; see the corpus README).
fn sweep(split: &Path, name: &str) -> Result<(), Failed> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(split)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let asserting = ValidateOptions::new().assert_formats(true);
    let (mut schemas, mut compiled, mut instances) = (0usize, 0usize, 0usize);
    let (mut agree_default, mut agree_formats) = (0usize, 0usize);
    let (mut coerced_valid, mut invalid_default) = (0usize, 0usize);
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut compile_errors: BTreeMap<String, usize> = BTreeMap::new();
    let mut disagreements = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        schemas += 1;
        let both =
            Validator::new(&doc["schema"]).and_then(|d| Ok((d, asserting.build(&doc["schema"])?)));
        let (default, formats) = match both {
            Ok(v) => v,
            Err(e) => {
                let key: String = e.to_string().chars().take(80).collect();
                *compile_errors.entry(key).or_default() += 1;
                continue;
            }
        };
        compiled += 1;
        for test in doc["tests"].as_array().into_iter().flatten() {
            let Some(valid) = test["valid"].as_bool() else {
                continue;
            };
            instances += 1;
            let judged = default.is_valid(&test["data"]);
            agree_default += usize::from(judged == valid);
            // Coercion must terminate, never touch a valid instance, and
            // report something for every change it makes.
            let (fixed, coercions) = default.coerce(test["data"].clone());
            if judged {
                assert!(coercions.is_empty() && fixed == test["data"]);
            } else {
                invalid_default += 1;
                assert_eq!(coercions.is_empty(), fixed == test["data"]);
                if default.is_valid(&fixed) {
                    coerced_valid += 1;
                    for c in &coercions {
                        *kinds.entry(format!("{:?}", c.kind)).or_default() += 1;
                    }
                }
            }
            if formats.is_valid(&test["data"]) == valid {
                agree_formats += 1;
            } else if disagreements.len() < 5 {
                disagreements.push(format!(
                    "{} `{}` labelled valid={valid}",
                    file.file_name().unwrap().to_string_lossy(),
                    test["description"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    println!(
        "jsonschemabench {name}: {compiled}/{schemas} schemas compile; instances judged as \
         labelled: {agree_default}/{instances} with default format rules, \
         {agree_formats}/{instances} with format asserted; \
         coercion made {coerced_valid}/{invalid_default} invalid instances valid"
    );
    if !kinds.is_empty() {
        println!("  coercions that made instances valid: {kinds:?}");
    }
    for (msg, n) in &compile_errors {
        println!("  compile error x{n}: {msg}");
    }
    for d in &disagreements {
        println!("  disagrees (format asserted): {d}");
    }
    if instances > 0 && (instances - agree_formats) * 50 > instances {
        return Err(format!(
            "{name}: only {agree_formats}/{instances} instances agree with the labels"
        )
        .into());
    }
    Ok(())
}
