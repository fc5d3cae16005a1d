//! The ignored test `jsonschemabench` sweeps the JSONSchemaBench sample
//! (`../shared/corpus/jsonschemabench/<split>/`): how many real-world schemas
//! compile, and whether the labelled valid/invalid instances are judged the
//! same way. Run it with `--ignored --nocapture` to see one line per split.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use agentshape_core::validate::{ValidateOptions, Validator};
use serde_json::Value;

use super::{corpus_root, panic_text};

/// Every split, each swept on its own; fails once, naming each failing split.
#[test]
#[ignore = "sweeps the whole JSONSchemaBench sample; run with --ignored"]
fn jsonschemabench() {
    let bench = corpus_root().join("jsonschemabench");
    if !bench.is_dir() {
        println!(
            "skipped: ../shared/corpus/jsonschemabench not found (looked at {})",
            bench.display()
        );
        return;
    }
    let mut splits: Vec<PathBuf> = std::fs::read_dir(&bench)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    splits.sort();
    let mut failures = Vec::new();
    for split in &splits {
        let name = split.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = catch_unwind(AssertUnwindSafe(|| sweep(split, &name)))
            .unwrap_or_else(|p| Err(format!("{name}: panicked: {}", panic_text(&*p))));
        if let Err(why) = outcome {
            failures.push(why);
        }
    }
    assert!(
        failures.is_empty(),
        "jsonschemabench: {} of {} splits failed:\n  {}",
        failures.len(),
        splits.len(),
        failures.join("\n  ")
    );
}

/// Compile every schema of one split and judge its labelled instances twice:
/// with our defaults (`format` per draft: an annotation for undeclared and
/// 2020-12 schemas) and with `format` asserted, which is how the labels were
/// produced. Prints one summary line per split. Fails only when the
/// format-asserting verdicts disagree with the labels on more than 2% of
/// instances (the labels are not perfectly reproducible; see the corpus README).
fn sweep(split: &Path, name: &str) -> Result<(), String> {
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
        ));
    }
    Ok(())
}
