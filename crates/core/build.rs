//! Parses the built-in secret rules (`src/secrets/rules.toml`) once, at
//! build time, into Rust that builds the same `RuleSet` (Note \[Rules
//! parsed at build time\] in `src/secrets/rules.rs`), and the pinned
//! `LiteLLM` prices (`src/pricing/litellm.json`) into a static table and its
//! name index (Note \[Price lookup\] in `src/pricing.rs`). Core stays free
//! of I/O at run time: this runs in the build only.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]
// a build failure is the message
// The build reads the rules file and writes Rust: I/O at build time, which the
// crate's own code never does (clippy.toml disallows it there).
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

include!("src/secrets/format.rs");

// Note [Literals a match needs] in `src/secrets/needs/mod.rs`: the
// built-in patterns' literals, read here with the run-time translation.
#[path = "src/secrets/needs/derive.rs"]
mod derive;
#[path = "src/secrets/syntax.rs"]
mod syntax;
// Note [Keyword buckets] in `src/secrets/keywords.rs`: the built-in
// keywords' buckets, chosen once here.
#[allow(dead_code)] // the tables are made at run time
#[path = "src/secrets/keywords/buckets.rs"]
mod buckets;
// Note [Keywords as a match holds them] in `src/secrets/keywords.rs`: what
// the built-in patterns hold at their keywords, read once here.
#[allow(dead_code)]
#[path = "src/secrets/keywords/byteset.rs"]
mod byteset;
#[allow(dead_code)]
#[path = "src/secrets/keywords/shape.rs"]
mod shape;
include!("src/pricing/names.rs");

fn main() {
    secret_rules();
    prices();
}

fn secret_rules() {
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
    builtin_needs(&file.rules, &dir);
    let shapes = builtin_shapes(&file.rules, &dir);
    builtin_buckets(&file.rules, &shapes, &dir);
}

/// `builtin_shapes.rs`: per built-in rule and keyword, the shape its
/// pattern has there when it has one (Note [Keywords as a match holds
/// them]); answers each keyword's shape as a detector of the built-in
/// rules joins them (none when one of its rules has none).
fn builtin_shapes(rules: &[Rule], dir: &str) -> BTreeMap<String, Option<Vec<byteset::ByteSet>>> {
    println!("cargo:rerun-if-changed=src/secrets/keywords/shape.rs");
    let mut out = String::from("&[\n");
    let mut per_keyword: BTreeMap<String, Vec<Option<Vec<byteset::ByteSet>>>> = BTreeMap::new();
    // Written sorted by rule id and keyword, which the library's lookup
    // searches by halves.
    let mut entries = Vec::new();
    for r in rules {
        let pattern = syntax::go_to_rust(&r.regex);
        for k in &r.keywords {
            let k = k.to_ascii_lowercase();
            let found = shape::shape_of(&pattern, k.as_bytes());
            if let Some(s) = &found {
                entries.push((r.id.as_str(), k.clone(), r.regex.as_str(), s.clone()));
            }
            per_keyword.entry(k).or_default().push(found);
        }
    }
    entries.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
    for (id, k, regex, s) in entries {
        write!(
            out,
            "    ({id:?}, {regex:?}, b\"{}\", &[",
            k.as_bytes().escape_ascii()
        )
        .unwrap();
        for set in s {
            let words: Vec<String> = set.iter().map(|&w| hex_word(w)).collect();
            write!(out, "[{}], ", words.join(", ")).unwrap();
        }
        out.push_str("]),\n");
    }
    out.push(']');
    std::fs::write(format!("{dir}/builtin_shapes.rs"), out).expect("write builtin_shapes.rs");
    per_keyword
        .into_iter()
        .map(|(k, shapes)| (k, byteset::join_all(shapes)))
        .collect()
}

/// Moves the bucket search tries for the built-in keywords (Note [Buckets
/// chosen by a model of text]): past about this many it finds little more.
const BUCKET_MOVES: usize = 30_000;

/// `builtin_buckets.rs`: each built-in keyword of two bytes or more (lower
/// case, as the detector reads them) and its bucket, sorted by keyword.
fn builtin_buckets(
    rules: &[Rule],
    shapes: &BTreeMap<String, Option<Vec<byteset::ByteSet>>>,
    dir: &str,
) {
    println!("cargo:rerun-if-changed=src/secrets/keywords/buckets.rs");
    let mut seen = std::collections::BTreeSet::new();
    let words: Vec<String> = rules
        .iter()
        .flat_map(|r| &r.keywords)
        .map(|k| k.to_ascii_lowercase())
        .filter(|k| k.len() >= 2 && seen.insert(k.clone()))
        .collect();
    let refs: Vec<buckets::Word<'_>> = words
        .iter()
        .map(|w| (w.as_bytes(), shapes.get(w).and_then(Option::as_deref)))
        .collect();
    let placed = buckets::assign(&refs, &[], BUCKET_MOVES);
    let mut pairs: Vec<(&[u8], u8)> = refs.into_iter().map(|(w, _)| w).zip(placed).collect();
    pairs.sort_unstable();
    let mut out = String::from("&[\n");
    for (k, b) in pairs {
        writeln!(out, "    (b\"{}\", {b}),", k.escape_ascii()).unwrap();
    }
    out.push(']');
    std::fs::write(format!("{dir}/builtin_buckets.rs"), out).expect("write builtin_buckets.rs");
}

/// `builtin_needs.rs`: per built-in rule, the literals every match needs.
fn builtin_needs(rules: &[Rule], dir: &str) {
    println!("cargo:rerun-if-changed=src/secrets/needs/derive.rs");
    println!("cargo:rerun-if-changed=src/secrets/syntax.rs");
    let mut out = String::from("&[\n");
    for r in rules {
        let needs = derive::needs_of(&syntax::go_to_rust(&r.regex));
        write!(out, "    ({:?}, {:?}, &[", r.id, r.regex).unwrap();
        for choices in &needs {
            out.push_str("&[");
            for lit in choices {
                let (bytes, folded, boundary) = derive::as_table(lit);
                write!(
                    out,
                    "(b\"{}\", {folded}, {boundary}), ",
                    bytes.escape_ascii()
                )
                .unwrap();
            }
            out.push_str("], ");
        }
        out.push_str("]),\n");
    }
    out.push(']');
    std::fs::write(format!("{dir}/builtin_needs.rs"), out).expect("write builtin_needs.rs");
}

/// `w` as a hexadecimal literal in groups of four digits (as clippy asks
/// of the code that includes it).
fn hex_word(w: u64) -> String {
    format!(
        "0x{:04x}_{:04x}_{:04x}_{:04x}",
        w >> 48,
        (w >> 32) & 0xffff,
        (w >> 16) & 0xffff,
        w & 0xffff
    )
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

/// The price fields of one `LiteLLM` entry that pricing reads, US dollars per token.
#[derive(Default)]
struct Prices {
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    cache_write_1h: Option<f64>,
}

impl Prices {
    fn slot(&mut self, field: &str) -> Option<&mut Option<f64>> {
        Some(match field {
            "input_cost_per_token" => &mut self.input,
            "output_cost_per_token" => &mut self.output,
            "cache_read_input_token_cost" => &mut self.cache_read,
            "cache_creation_input_token_cost" => &mut self.cache_write,
            "cache_creation_input_token_cost_above_1hr" => &mut self.cache_write_1h,
            _ => return None,
        })
    }
}

/// `litellm.json` (written by `scripts/update-prices.sh`) as
/// `$OUT_DIR/prices.rs`: `BUILTIN`, one entry per key in key order, prices
/// per million tokens; `NAMES`, every key and alias (lower case, sorted)
/// with the entry it prices; and the source's version and date from
/// `SOURCE.md`.
fn prices() {
    println!("cargo:rerun-if-changed=src/pricing/litellm.json");
    println!("cargo:rerun-if-changed=src/pricing/SOURCE.md");
    println!("cargo:rerun-if-changed=src/pricing/names.rs");
    // `undated` is for lookups at run time; the index needs only `model_alias`.
    let _ = undated;
    let text = std::fs::read_to_string("src/pricing/litellm.json").expect("read litellm.json");
    let file: BTreeMap<String, BTreeMap<String, serde_json::Value>> =
        serde_json::from_str(&text).expect("litellm.json is an object of model objects");
    let source = std::fs::read_to_string("src/pricing/SOURCE.md").expect("read SOURCE.md");
    let line = |label: &str| {
        source
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("SOURCE.md has no `{label}` line"))
            .trim()
            .to_owned()
    };
    let mut out = String::new();
    writeln!(
        out,
        "const SOURCE_VERSION: &str = {:?};",
        line("- Version:")
    )
    .unwrap();
    writeln!(out, "const SOURCE_TAKEN: &str = {:?};", line("- Taken:")).unwrap();
    // Prices are written as `{:?}` prints them, not with digit separators,
    // and one of them (0.318) is not meant as 1/π.
    out.push_str("#[allow(clippy::unreadable_literal, clippy::approx_constant)]\n");
    writeln!(out, "static BUILTIN: [Builtin; {}] = [", file.len()).unwrap();
    // name -> (exact key or alias, preference, key, index): the smallest wins.
    let mut names: BTreeMap<String, (u8, u8, &str, usize)> = BTreeMap::new();
    for (index, (key, entry)) in file.iter().enumerate() {
        let mut base = Prices::default();
        let mut tiers: BTreeMap<u64, Prices> = BTreeMap::new();
        let mut reasoning = None;
        let provider = entry
            .get("litellm_provider")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_else(|| panic!("{key}: no litellm_provider"));
        for (field, value) in entry {
            if field == "litellm_provider" {
                continue;
            }
            let price = value.as_f64().filter(|p| p.is_finite() && *p >= 0.0);
            let price = price.unwrap_or_else(|| panic!("{key}: {field} is not a price"));
            if field == "output_cost_per_reasoning_token" {
                reasoning = Some(price);
            } else if let Some(slot) = base.slot(field) {
                *slot = Some(price);
            } else if let Some((kind, n)) = field
                .strip_suffix("k_tokens")
                .and_then(|f| f.rsplit_once("_above_"))
                && let Ok(n) = n.parse::<u64>()
                && let Some(slot) = tiers.entry(n * 1000).or_default().slot(kind)
            {
                *slot = Some(price);
            } else {
                panic!(
                    "{key}: unknown field {field} (scripts/prices_filter.py keeps only known ones)"
                );
            }
        }
        write!(
            out,
            "Builtin {{ key: {key:?}, provider: {provider:?}, input: {}, output: {}, \
             cache_read: {}, cache_write: {}, cache_write_1h: {}, reasoning: {}, tiers: &[",
            per_million(
                base.input
                    .unwrap_or_else(|| panic!("{key}: no input price"))
            ),
            per_million(
                base.output
                    .unwrap_or_else(|| panic!("{key}: no output price"))
            ),
            opt_price(base.cache_read),
            opt_price(base.cache_write),
            opt_price(base.cache_write_1h),
            opt_price(reasoning),
        )
        .unwrap();
        for (above, t) in &tiers {
            write!(
                out,
                "Tier {{ above: {above}, input: {}, output: {}, cache_read: {}, \
                 cache_write: {}, cache_write_1h: {} }}, ",
                opt_price(t.input),
                opt_price(t.output),
                opt_price(t.cache_read),
                opt_price(t.cache_write),
                opt_price(t.cache_write_1h),
            )
            .unwrap();
        }
        out.push_str("] },\n");
        let lower = key.to_ascii_lowercase();
        let rank = preference(&lower, provider);
        let alias = model_alias(&lower);
        // A free entry (a local runner's, `ollama/llama3`) prices its own key
        // only: its alias would price every `llama3` at 0, and a model is
        // never free by accident (Note [Estimated cost]).
        let free = base.input == Some(0.0) && base.output == Some(0.0);
        let aliases = if free { None } else { Some((alias, 1)) };
        for (name, exact) in std::iter::once((lower.clone(), 0)).chain(aliases) {
            let candidate = (exact, rank, key.as_str(), index);
            names
                .entry(name)
                .and_modify(|best| *best = (*best).min(candidate))
                .or_insert(candidate);
        }
    }
    out.push_str("];\n");
    writeln!(out, "static NAMES: [(&str, u32); {}] = [", names.len()).unwrap();
    for (name, (_, _, _, index)) in &names {
        writeln!(out, "({name:?}, {index}),").unwrap();
    }
    out.push_str("];\n");
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{dir}/prices.rs"), out).expect("write prices.rs");
}

/// Which of several keys with one alias prices it, smallest first (Note
/// \[Price lookup\]): the provider's own entry, then the base name (the
/// vendor-prefixed Bedrock one), then Bedrock's `global.`, then regional
/// ones (which carry a premium), then resellers' `provider/` entries.
fn preference(key: &str, provider: &str) -> u8 {
    if matches!(provider, "anthropic" | "openai" | "gemini") {
        0
    } else if key.contains('/') {
        4
    } else if key.starts_with("global.") {
        2
    } else if REGION_PREFIXES.iter().any(|r| key.starts_with(r)) {
        3
    } else {
        1
    }
}

/// A per-token price as a Rust literal per million tokens, rounded to
/// 1e-9 so `1.5e-05` becomes `15.0`, not `15.000000000000002`.
fn per_million(per_token: f64) -> String {
    let p = (per_token * 1e15).round() / 1e9;
    format!("{p:?}")
}

fn opt_price(p: Option<f64>) -> String {
    p.map_or_else(
        || "None".to_owned(),
        |p| format!("Some({})", per_million(p)),
    )
}
