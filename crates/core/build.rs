//! Parses the built-in secret rules (`src/secrets/rules.toml`) once, at
//! build time, into Rust that builds the same `RuleSet` (Note \[Rules
//! parsed at build time\] in `src/secrets/rules.rs`). Core stays free of
//! I/O at run time: this runs in the build only.
#![allow(clippy::expect_used, clippy::unwrap_used, missing_docs)]
// a build failure is the message
// The build reads the rules file and writes Rust: I/O at build time, which the
// crate's own code never does (clippy.toml disallows it there).
#![allow(clippy::disallowed_methods)]

use std::fmt::Write as _;

use serde::Deserialize;

include!("src/secrets/format.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/secrets/rules.toml");
    println!("cargo:rerun-if-changed=src/secrets/format.rs");
    let text = std::fs::read_to_string("src/secrets/rules.toml").expect("read rules.toml");
    let file: File = toml::from_str(&text).expect("rules.toml parses (a test says why if not)");
    let mut out = String::from("RuleSet {\n    rules: vec![\n");
    for r in &file.rules {
        write!(
            out,
            "        Rule {{ id: {}, description: {}, regex: {}, secret_group: {:?}, \
             entropy: {:?}, keywords: vec![{}], allowlists: vec![",
            s(&r.id),
            s(&r.description),
            s(&r.regex),
            r.secret_group,
            r.entropy,
            list(&r.keywords),
        )
        .unwrap();
        for a in &r.allowlists {
            allowlist(&mut out, a);
        }
        writeln!(out, "], tags: vec![{}] }},", list(&r.tags)).unwrap();
    }
    out.push_str("    ],\n    allowlists: vec![");
    for a in file.allowlist.iter().chain(&file.allowlists) {
        allowlist(&mut out, a);
    }
    writeln!(out, "],\n    disabled: vec![{}],\n}}", list(&file.disabled)).unwrap();
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{dir}/builtin_rules.rs"), out).expect("write builtin_rules.rs");
}

/// A Rust expression for the `String` `text` (`Debug` escapes as Rust does).
fn s(text: &str) -> String {
    if text.is_empty() {
        "String::new()".to_owned()
    } else {
        format!("String::from({text:?})")
    }
}

fn list(items: &[String]) -> String {
    items.iter().map(|i| s(i)).collect::<Vec<_>>().join(", ")
}

fn opt(text: Option<&String>) -> String {
    text.map_or_else(|| "None".to_owned(), |t| format!("Some({})", s(t)))
}

fn allowlist(out: &mut String, a: &Allowlist) {
    write!(
        out,
        "Allowlist {{ description: {}, condition: {}, regex_target: {}, regexes: vec![{}], \
         stopwords: vec![{}] }}, ",
        s(&a.description),
        opt(a.condition.as_ref()),
        opt(a.regex_target.as_ref()),
        list(&a.regexes),
        list(&a.stopwords),
    )
    .unwrap();
}
