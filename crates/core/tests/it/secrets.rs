//! Secret masking on corpora: the planted secrets (every one masked, in plain
//! text and inside JSON), ordinary transcript text (masks per MB, near zero),
//! the real transcripts of `../shared/corpus/native` when present (reported,
//! not asserted), and 10 MB inputs.
//!
//! Fixtures (`tests/fixtures/secrets/`, formats at the top of each file):
//! `planted.jsonl` (one JSON case a line: kind, acceptable rule ids, secret,
//! context) and `ordinary.txt` (plain text with no secrets).

// Tests read their fixtures and report counts; a bad fixture should panic.
#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentshape_core::secrets::{Detector, MaskKey, Masker, RuleSet};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secrets")
}

struct Case {
    kind: String,
    rules: Vec<String>,
    secret: String,
    context: String,
}

fn planted() -> Vec<Case> {
    let text = std::fs::read_to_string(fixtures().join("planted.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Case {
                kind: v["kind"].as_str().unwrap().to_owned(),
                rules: v["rule"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_str().unwrap().to_owned())
                    .collect(),
                secret: v["secret"].as_str().unwrap().to_owned(),
                context: v["context"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

fn masker() -> Masker {
    Masker::builtin(MaskKey::from_bytes(*b"agentshape secrets test key 0029"))
}

/// Every string (and object key) in a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                strings(x, out);
            }
        }
        _ => {}
    }
}

/// A Claude Code line holding `content` as a tool result, as it is stored.
fn tool_result(content: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv", "content": content, "is_error": false}]},
        "uuid": "3f1d1c52-6a43-4a8e-9d59-0d3b1c1f6c11", "timestamp": "2026-11-26T10:00:00.000Z"})
}

#[test]
fn planted_corpus_is_big_and_varied() {
    let cases = planted();
    let kinds: std::collections::BTreeSet<&str> = cases
        .iter()
        .map(|c| c.kind.split('/').next().unwrap())
        .collect();
    assert!(
        cases.len() >= 40 && kinds.len() >= 20,
        "{} cases of {} kinds",
        cases.len(),
        kinds.len()
    );
    let ids: Vec<&str> = Detector::builtin().rule_ids().collect();
    for c in &cases {
        assert!(
            c.context.contains(&c.secret),
            "{}: secret not in context",
            c.kind
        );
        for r in &c.rules {
            assert!(ids.contains(&r.as_str()), "{}: no rule `{r}`", c.kind);
        }
    }
}

#[test]
fn every_planted_secret_is_masked_in_text() {
    let m = masker();
    let mut failures = Vec::new();
    for c in planted() {
        let masked = m.mask_str(&c.context);
        let at = c.context.find(&c.secret).unwrap();
        let covering: Vec<&str> = masked
            .found
            .iter()
            .filter(|f| f.start < at + c.secret.len() && at < f.end)
            .map(|f| f.rule.as_str())
            .collect();
        if masked.text.contains(&c.secret)
            || !covering.iter().any(|r| c.rules.iter().any(|a| a == r))
        {
            failures.push(format!(
                "{}: masked by {covering:?}, expected one of {:?}",
                c.kind, c.rules
            ));
        }
        for f in &masked.found {
            assert!(
                masked
                    .text
                    .contains(&format!("[REDACTED:{}:{}]", f.rule, f.fingerprint))
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} planted secrets not masked:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_planted_secret_is_masked_inside_json() {
    let m = masker();
    let mut failures = Vec::new();
    for c in planted() {
        let event = tool_result(&c.context);
        let raw = serde_json::to_string(&event).unwrap();
        let masked = m.mask_json_text(&raw);
        let back: Value = serde_json::from_str(&masked.text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", c.kind));
        let mut all = Vec::new();
        strings(&back, &mut all);
        let escaped = serde_json::to_string(&c.secret).unwrap();
        let leaked = all.iter().any(|s| s.contains(&c.secret))
            || masked.text.contains(escaped.trim_matches('"'));
        let named = masked.found.iter().any(|f| c.rules.contains(&f.rule));
        if leaked || !named {
            failures.push(format!(
                "mask_json_text {}: leaked={leaked}, rules {:?}",
                c.kind,
                masked
                    .found
                    .iter()
                    .map(|f| f.rule.as_str())
                    .collect::<Vec<_>>()
            ));
        }
        // Same shape: only the tool result's text changed.
        let mut expect = event.clone();
        expect["message"]["content"][0]["content"] =
            back["message"]["content"][0]["content"].clone();
        assert_eq!(back, expect, "{}", c.kind);

        let mut value = event.clone();
        let found = m.mask_value(&mut value);
        let mut all = Vec::new();
        strings(&value, &mut all);
        if all.iter().any(|s| s.contains(&c.secret))
            || !found.iter().any(|f| c.rules.contains(&f.rule))
        {
            failures.push(format!("mask_value {}", c.kind));
        }
        assert_eq!(
            value, back,
            "{}: mask_value and mask_json_text agree",
            c.kind
        );

        // A context that is itself JSON (or not) through mask_json_text.
        let direct = m.mask_json_text(&c.context);
        if direct.text.contains(&c.secret) {
            failures.push(format!("mask_json_text(context) {}", c.kind));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn masking_planted_text_twice_changes_nothing() {
    let m = masker();
    for c in planted() {
        let once = m.mask_str(&c.context);
        let twice = m.mask_str(&once.text);
        assert_eq!(twice.text, once.text, "{}", c.kind);
        assert!(twice.found.is_empty(), "{}: {:?}", c.kind, twice.found);
        let raw = serde_json::to_string(&tool_result(&c.context)).unwrap();
        let once = m.mask_json_text(&raw).text.into_owned();
        let twice = m.mask_json_text(&once);
        assert_eq!(twice.text, once, "{}", c.kind);
        assert!(twice.found.is_empty(), "{}", c.kind);
    }
}

#[test]
fn same_secret_same_fingerprint_everywhere_and_keyed() {
    let a = masker();
    let b = Masker::builtin(MaskKey::from_bytes([1; 32]));
    for c in planted() {
        let fa: Vec<_> = a
            .scan(&c.context)
            .into_iter()
            .filter(|f| c.context[f.start..f.end] == c.secret)
            .collect();
        for f in &fa {
            assert_eq!(f.fingerprint, a.fingerprint(&c.secret), "{}", c.kind);
            assert_ne!(
                f.fingerprint,
                b.fingerprint(&c.secret),
                "{}: another key, another fingerprint",
                c.kind
            );
        }
        // The same secret in another context: the same mask.
        let elsewhere = format!("$ echo done\ndone\n{}\n$ exit\n", c.context);
        let fb = a.scan(&elsewhere);
        for f in &fa {
            assert!(
                fb.iter()
                    .any(|g| g.fingerprint == f.fingerprint && g.rule == f.rule),
                "{}",
                c.kind
            );
        }
    }
}

/// Masks on ordinary text: (count, rule -> count).
fn report(masker: &Masker, text: &str) -> (usize, BTreeMap<String, usize>) {
    let mut rules = BTreeMap::new();
    let found = masker.scan(text);
    for f in &found {
        *rules.entry(f.rule.clone()).or_insert(0) += 1;
    }
    (found.len(), rules)
}

#[test]
fn ordinary_text_is_left_alone() {
    let text = std::fs::read_to_string(fixtures().join("ordinary.txt")).unwrap();
    let m = masker();
    let (n, rules) = report(&m, &text);
    let mb = text.len() as f64 / 1e6;
    println!(
        "ordinary.txt: {:.2} MB, {n} masks ({:.1}/MB), rules fired: {rules:?}",
        mb,
        n as f64 / mb
    );
    for f in m.scan(&text) {
        let line_start = text[..f.start].rfind('\n').map_or(0, |p| p + 1);
        let line_end = text[f.end..].find('\n').map_or(text.len(), |p| f.end + p);
        println!(
            "  {}: {}",
            f.rule,
            &text[line_start..line_end.min(line_start + 200)]
        );
    }
    assert_eq!(n, 0, "false positives on ordinary text: {rules:?}");
    // Nothing found: nothing allocated.
    assert!(matches!(
        m.mask_str(&text).text,
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn native_transcripts_report() {
    // ../shared beside the repository (a worktree is one level deeper).
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(root) = [
        "../../../shared/corpus/native",
        "../../../../shared/corpus/native",
    ]
    .iter()
    .map(|p| manifest.join(p))
    .find(|p| p.is_dir()) else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let m = masker();
    let mut bytes = 0usize;
    let mut total = 0usize;
    let mut rules: BTreeMap<String, usize> = BTreeMap::new();
    for agent in ["claude", "codex", "gemini"] {
        let Ok(dir) = std::fs::read_dir(root.join(agent)) else {
            continue;
        };
        let mut paths: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            bytes += text.len();
            let mut here = 0;
            for line in text.lines() {
                let masked = m.mask_json_text(line);
                here += masked.found.len();
                // Where each mask landed (the masked text: no secret is printed).
                let mut from = 0;
                while let Some(at) = masked.text[from..].find("[REDACTED:") {
                    let at = from + at;
                    let lo = masked.text.floor_char_boundary(at.saturating_sub(70));
                    let hi = masked
                        .text
                        .ceil_char_boundary((at + 110).min(masked.text.len()));
                    println!("  {}", masked.text[lo..hi].replace('\n', " "));
                    from = at + 10;
                }
                for f in masked.found {
                    *rules.entry(f.rule).or_insert(0) += 1;
                }
            }
            total += here;
            if here > 0 {
                println!(
                    "{}: {here} masks",
                    path.file_name().unwrap().to_string_lossy()
                );
            }
        }
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "native corpus: {mb:.2} MB, {total} masks ({:.1}/MB), rules fired: {rules:?}",
        total as f64 / mb.max(1e-9)
    );
}

#[test]
fn ten_megabytes_with_and_without_secrets() {
    let m = masker();
    let ordinary = std::fs::read_to_string(fixtures().join("ordinary.txt")).unwrap();
    let copies = 10_000_000 / ordinary.len() + 1;
    let big = ordinary.repeat(copies);
    assert!(big.len() >= 10_000_000);
    assert!(m.scan(&big).is_empty());

    let cases = planted();
    let mut one = String::new();
    for c in &cases {
        one.push_str(&c.context);
        one.push_str("\n---\n");
    }
    let per_copy = m.scan(&one).len();
    assert!(per_copy >= cases.len() - 10, "{per_copy}");
    let copies = 10_000_000 / one.len() + 1;
    let big = one.repeat(copies);
    let masked = m.mask_str(&big);
    assert_eq!(masked.found.len(), per_copy * copies);
    for c in &cases {
        assert!(!masked.text.contains(&c.secret), "{}", c.kind);
    }
}

#[test]
fn user_rules_extend_the_builtin_ones() {
    let mut rules = RuleSet::builtin();
    let user = RuleSet::from_toml(
        r#"
disabled = ["jwt"]
[[rules]]
id = "acme-internal-token"
description = "ACME's own service tokens"
regex = '''\b(acme_[a-z0-9]{24})\b'''
entropy = 3.0
keywords = ["acme_"]
"#,
    )
    .unwrap();
    rules.extend(user);
    assert!(rules.ids().any(|id| id == "acme-internal-token"));
    assert!(!rules.ids().any(|id| id == "jwt"));
    let m = Masker::new(
        Arc::new(Detector::new(&rules).unwrap()),
        MaskKey::from_bytes([3; 32]),
    );
    let masked = m.mask_str("token acme_q8w7e6r5t4y3u2i1o9p8a7s6 ok");
    assert_eq!(masked.found.len(), 1);
    assert_eq!(masked.found[0].rule, "acme-internal-token");
    let jwt = planted()
        .into_iter()
        .find(|c| c.kind == "jwt/json-response")
        .unwrap();
    assert!(
        m.mask_str(&jwt.context).text.contains(&jwt.secret),
        "jwt is disabled"
    );
}
