//! Conformance of [`Validator`] against the official JSON-Schema-Test-Suite.
//!
//! Reads `../shared/corpus/json-schema-test-suite/tests/{draft7,draft2020-12}/*.json`
//! at run time (required tests only, not `optional/`) and runs every test
//! case, named `draft7/ref.json/<case>/<test>`, through our public API with
//! the draft forced per directory. `http://localhost:1234/<path>` is served from
//! the suite's `remotes/<path>` by a [`Retriever`], as upstream prescribes.
//! Every exclusion is listed in [`EXCLUDED`] with its reason.
//!
//! One `#[test]` per draft and [`Family`] of suite files, so a failure says
//! which part of the validator broke; each collects all its failing cases
//! and fails once, naming every one, and prints its pass/fail/excluded
//! tally (`--nocapture` to see it).
//!
//! The ignored test `jsonschemabench` ([`bench`]) sweeps the JSONSchemaBench
//! sample. When `../shared` is absent every test here is skipped with a
//! message.
//!
//! [`Retriever`]: agentshape_core::validate::Retriever

// A test reads its corpus from disk and prints its totals; the crate-wide
// bans on file I/O and the clock are for the library only.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::panic
)]

mod bench;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use agentshape_core::validate::{Draft, ValidateOptions, Validator};
use serde_json::Value;

/// Test cases we do not run, by case-name prefix, each with the reason.
const EXCLUDED: &[(&str, &str)] = &[];

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// The suite's directory, or `None` (with the skip message printed) when
/// `../shared` is absent.
fn suite_dir() -> Option<PathBuf> {
    let suite = corpus_root().join("json-schema-test-suite");
    if suite.is_dir() {
        Some(suite)
    } else {
        println!(
            "skipped: ../shared/corpus/json-schema-test-suite not found (looked at {}); \
             conformance: 0 test cases run (corpus absent)",
            suite.display()
        );
        None
    }
}

/// Suite files by what part of the validator they exercise, one test each.
#[derive(Clone, Copy)]
enum Family {
    /// `$ref`, `$id`, anchors, definitions, remotes, vocabularies.
    References,
    /// Keywords that apply subschemas to the instance or its parts.
    Applicators,
    /// Every other file: type, enum, bounds, formats, required, ….
    Assertions,
}

const REFERENCES: &[&str] = &[
    "ref",
    "refRemote",
    "dynamicRef",
    "anchor",
    "id",
    "defs",
    "definitions",
    "vocabulary",
    "infinite-loop-detection",
];

const APPLICATORS: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if-then-else",
    "boolean_schema",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "dependencies",
    "dependentSchemas",
    "unevaluatedItems",
    "unevaluatedProperties",
];

impl Family {
    fn label(self) -> &'static str {
        match self {
            Self::References => "references",
            Self::Applicators => "applicators",
            Self::Assertions => "assertions",
        }
    }

    /// Whether a suite file (by stem) belongs here; every file is in exactly one.
    fn holds(self, stem: &str) -> bool {
        let (refs, apps) = (REFERENCES.contains(&stem), APPLICATORS.contains(&stem));
        match self {
            Self::References => refs,
            Self::Applicators => apps,
            Self::Assertions => !refs && !apps,
        }
    }
}

#[test]
fn draft7_references() {
    run("draft7", Draft::Draft7, Family::References);
}

#[test]
fn draft7_applicators() {
    run("draft7", Draft::Draft7, Family::Applicators);
}

#[test]
fn draft7_assertions() {
    run("draft7", Draft::Draft7, Family::Assertions);
}

#[test]
fn draft2020_12_references() {
    run("draft2020-12", Draft::Draft202012, Family::References);
}

#[test]
fn draft2020_12_applicators() {
    run("draft2020-12", Draft::Draft202012, Family::Applicators);
}

#[test]
fn draft2020_12_assertions() {
    run("draft2020-12", Draft::Draft202012, Family::Assertions);
}

/// Runs one family of one draft's files, prints its tally and fails once
/// with every failing case.
fn run(dir: &str, draft: Draft, family: Family) {
    let Some(suite) = suite_dir() else {
        return;
    };
    let options = ValidateOptions::new()
        .draft(draft)
        .retriever(remotes_retriever(&suite.join("remotes")));
    let files = suite_files(&suite.join("tests").join(dir), family);
    assert!(
        !files.is_empty(),
        "{dir}: no suite file in family {}",
        family.label()
    );
    let (mut passed, mut excluded) = (0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    for file in &files {
        let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for group in &groups {
            let case = group["description"].as_str().unwrap_or("?");
            // Compiled once per case, on first use, shared by its tests.
            let mut compiled: Option<Result<Validator, String>> = None;
            for test in group["tests"].as_array().into_iter().flatten() {
                let name = format!(
                    "{dir}/{file_name}/{case}/{}",
                    test["description"].as_str().unwrap_or("?")
                );
                if EXCLUDED.iter().any(|(id, _)| name.starts_with(id)) {
                    excluded += 1;
                    continue;
                }
                let valid = test["valid"].as_bool().unwrap();
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    let validator = compiled.get_or_insert_with(|| {
                        options.build(&group["schema"]).map_err(|e| e.to_string())
                    });
                    check(validator.as_ref(), &test["data"], valid)
                }))
                .unwrap_or_else(|p| Err(format!("panicked: {}", panic_text(&*p))));
                match outcome {
                    Ok(()) => passed += 1,
                    Err(why) => failures.push(format!("{name}: {why}")),
                }
            }
        }
    }
    println!(
        "conformance {dir} {}: {passed} passed, {} failed, {excluded} excluded",
        family.label(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{dir} {}: {} of {} test cases failed:\n  {}",
        family.label(),
        failures.len(),
        failures.len() + passed,
        failures.join("\n  ")
    );
}

/// The family's `*.json` files of one draft directory, sorted.
fn suite_files(dir: &Path, family: Family) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| family.holds(&p.file_stem().unwrap().to_string_lossy()))
        .collect();
    files.sort();
    files
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

/// Both paths must agree with the suite: the fast `is_valid` and `errors`.
fn check(validator: Result<&Validator, &String>, data: &Value, valid: bool) -> Result<(), String> {
    let validator = validator.map_err(|e| format!("schema did not compile: {e}"))?;
    let fast = validator.is_valid(data);
    let errors = validator.errors(data);
    if fast != valid {
        return Err(format!(
            "expected valid={valid}, is_valid said {fast}; errors: {errors:?}"
        ));
    }
    if errors.is_empty() != valid {
        return Err(format!("expected valid={valid}, errors() said {errors:?}"));
    }
    Ok(())
}

/// A panic's message, for the failure list.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}
