//! No structure from prose: plain agent replies (no JSON) and random bytes
//! must extract as `none` (the CLI's exit 2), Note [No structure from
//! prose] in `extract::repair`.
//!
//! The replies are in `tests/data/prose/` (`lines.txt`, one reply per line
//! with `\n` for a line break; `replies/*.md`, one reply per file), written
//! for this test. Each false extraction is printed; the goal, asserted, is
//! zero.

// Tests read their data files and print what they found.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::path::PathBuf;

use agentshape_core::extract::{ExtractOptions, MarkerGrammar, extract_text};
use agentshape_core::outcome::Method;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/prose")
}

/// Every reply of the prose corpus, with where it came from.
fn replies() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let lines = std::fs::read_to_string(data().join("lines.txt")).expect("lines.txt");
    for (i, line) in lines.lines().enumerate() {
        if !line.trim().is_empty() {
            out.push((format!("lines.txt:{}", i + 1), line.replace("\\n", "\n")));
        }
    }
    let mut files: Vec<_> = std::fs::read_dir(data().join("replies"))
        .expect("replies/")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("reply");
        out.push((f.display().to_string(), text));
    }
    out
}

/// The false extractions among `texts`: (where, text, value).
fn false_extractions<'a>(
    texts: impl Iterator<Item = (&'a str, &'a str)>,
    opts: &ExtractOptions<'_>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (at, text) in texts {
        let got = extract_text(text, opts);
        if let Some(v) = got.value {
            out.push(format!("{at}: {text:?} -> {v} ({:?})", got.method));
        }
    }
    out
}

#[test]
fn the_issue_examples_are_no_structured_output() {
    for text in [
        "The answer uses the {placeholder} syntax [citation needed].",
        "[citation needed]",
        "{placeholder}",
    ] {
        let got = extract_text(text, &ExtractOptions::default());
        assert_eq!(got.method, Method::None, "{text:?} gave {:?}", got.value);
        assert!(got.value.is_none());
    }
}

#[test]
fn plain_prose_extracts_nothing() {
    let all = replies();
    assert!(
        all.len() >= 200,
        "the prose corpus has {} replies",
        all.len()
    );
    let mut bad = Vec::new();
    for markers in [None, Some(MarkerGrammar::ClaudeLoop)] {
        let opts = ExtractOptions {
            validator: None,
            markers,
            coerce: false,
            ..ExtractOptions::default()
        };
        bad.extend(false_extractions(
            all.iter().map(|(a, t)| (a.as_str(), t.as_str())),
            &opts,
        ));
    }
    println!(
        "prose corpus: {} replies, {} false extractions",
        all.len(),
        bad.len()
    );
    for b in &bad {
        println!("  {b}");
    }
    assert!(
        bad.is_empty(),
        "{} false extractions:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// A fixed xorshift generator: the same bytes on every run.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bytes_extract_nothing() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut inputs = Vec::new();
    for _ in 0..3000 {
        let len = usize::try_from(rng.next() % 160).unwrap_or(0) + 1;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next().to_le_bytes()[0]).collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // Bytes that happen to be valid JSON (`7`) are JSON, not noise.
        if serde_json::from_str::<serde_json::Value>(&text).is_err() {
            inputs.push(text);
        }
    }
    let bad = false_extractions(
        inputs.iter().map(|t| ("random", t.as_str())),
        &ExtractOptions::default(),
    );
    println!(
        "random bytes: {} inputs, {} false extractions",
        inputs.len(),
        bad.len()
    );
    for b in bad.iter().take(20) {
        println!("  {b}");
    }
    assert!(bad.is_empty(), "{} false extractions", bad.len());
}
