//! Issue 39 through the binary: `agentshape usage` agrees with the bill.
//!
//! The figures `usage` prints are checked against two things it did not
//! make: this file's own reader of the session files (each Claude message
//! id and request id once, last line's usage; Codex running totals summed
//! per segment; Gemini per message; each call on the UTC day of its own
//! time) priced with its own arithmetic from the pinned LiteLLM file; and
//! the figures ccusage 20.0.24 printed for `../shared/corpus/native` laid
//! out as the agents write it (`npx ccusage claude daily --json --offline
//! -z UTC`, recorded below).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::{agentshape, assert_exit, repo_root};

const GUARD: Duration = Duration::from_secs(180);

/// The shared corpus laid out as the agents write it (its own
/// `arrange.py`), or `None` (the test says it skips) without `../shared`.
fn arranged() -> Option<(tempfile::TempDir, PathBuf)> {
    let corpus = [
        repo_root().join("../shared/corpus/native"),
        repo_root().join("../../shared/corpus/native"),
    ]
    .into_iter()
    .find(|p| p.is_dir())?;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let out = Command::new("python3")
        .arg(corpus.join("arrange.py"))
        .arg(&home)
        .output()
        .expect("python3 runs arrange.py (scripts/setup.sh installs python3)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((dir, home))
}

fn usage(home: &Path, db: &Path, args: &[&str]) -> Value {
    let out = agentshape()
        .arg("usage")
        .args(args)
        .args(["--json", "--files", "-z", "UTC", "--store"])
        .arg(db)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    serde_json::from_slice(&out.stdout).unwrap()
}

// ---- the test's own reader -------------------------------------------

/// One model call: its key, UTC day, session file, model and tokens
/// (input uncached, output, cache read, cache write 5 m, cache write 1 h).
#[derive(Debug, Clone, Default)]
struct Call {
    day: String,
    file: String,
    model: String,
    t: [u64; 5],
}

fn n(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

fn lines(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .collect()
}

fn day(ts: Option<&str>) -> String {
    ts.map(|t| t.get(..10).unwrap_or(t).to_owned())
        .unwrap_or_default()
}

/// Every call of the arranged home, each Claude message once (first file
/// in path order keeps it, its last line's usage).
fn read_home(home: &Path) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut claude = Vec::new();
    files(&home.join(".claude/projects"), "jsonl", &mut claude);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for f in &claude {
        let name = f.to_string_lossy().into_owned();
        for v in lines(f) {
            let m = &v["message"];
            if v["type"] != "assistant" || !m["usage"].is_object() || m["model"] == "<synthetic>" {
                continue;
            }
            let u = &m["usage"];
            let one_hour = n(&u["cache_creation"], "ephemeral_1h_input_tokens");
            let write = n(u, "cache_creation_input_tokens");
            let call = Call {
                day: day(v["timestamp"].as_str()),
                file: name.clone(),
                model: m["model"].as_str().unwrap_or_default().to_owned(),
                t: [
                    n(u, "input_tokens"),
                    n(u, "output_tokens"),
                    n(u, "cache_read_input_tokens"),
                    write - one_hour.min(write),
                    one_hour.min(write),
                ],
            };
            match m["id"].as_str() {
                Some(id) => {
                    let key = format!("{id}:{}", v["requestId"].as_str().unwrap_or(""));
                    match seen.get(&key) {
                        Some(&i) if calls.get(i).is_some_and(|c: &Call| c.file == name) => {
                            let d = calls[i].day.clone();
                            calls[i] = Call { day: d, ..call };
                        }
                        Some(_) => {}
                        None => {
                            seen.insert(key, calls.len());
                            calls.push(call);
                        }
                    }
                }
                None => calls.push(call),
            }
        }
    }
    let mut codex = Vec::new();
    files(&home.join(".codex/sessions"), "jsonl", &mut codex);
    for f in &codex {
        let name = f.to_string_lossy().into_owned();
        let (mut last, mut model) = ([0u64; 4], String::new());
        for v in lines(f) {
            let p = &v["payload"];
            if v["type"] == "turn_context" {
                model = p["model"].as_str().unwrap_or_default().to_owned();
            }
            let t = &p["info"]["total_token_usage"];
            if p["type"] != "token_count" || !t.is_object() {
                continue;
            }
            let now = [
                n(t, "input_tokens"),
                n(t, "cached_input_tokens"),
                n(t, "output_tokens"),
                n(t, "reasoning_output_tokens"),
            ];
            let fell = now.iter().zip(&last).take(3).any(|(a, b)| a < b);
            let base = if fell { [0; 4] } else { last };
            let g: Vec<u64> = now.iter().zip(&base).map(|(a, b)| a - b).collect();
            last = now;
            if g[..3].iter().all(|x| *x == 0) {
                continue;
            }
            calls.push(Call {
                day: day(v["timestamp"].as_str()),
                file: name.clone(),
                model: model.clone(),
                t: [g[0] - g[1].min(g[0]), g[2], g[1], 0, 0],
            });
        }
    }
    let mut gemini = Vec::new();
    files(&home.join(".gemini/tmp"), "json", &mut gemini);
    for f in &gemini {
        let doc: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        for m in doc["messages"].as_array().into_iter().flatten() {
            let t = &m["tokens"];
            if !t.is_object() {
                continue;
            }
            let input = n(t, "input") + n(t, "tool");
            calls.push(Call {
                day: day(m["timestamp"].as_str()),
                file: f.to_string_lossy().into_owned(),
                model: m["model"].as_str().unwrap_or_default().to_owned(),
                t: [
                    input - n(t, "cached").min(input),
                    n(t, "output") + n(t, "thoughts"),
                    n(t, "cached"),
                    0,
                    0,
                ],
            });
        }
    }
    calls
}

/// Per-token prices of a model from the pinned LiteLLM file: the entry of
/// that name, else the Bedrock entry `anthropic.<name>-v1:0`, else the
/// undated name ($ per token: input, output, cache read, 5 m write, 1 h write).
fn price(prices: &Value, model: &str) -> Option<[f64; 5]> {
    let undated = model
        .rsplit_once('-')
        .filter(|(_, d)| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
        .map(|(m, _)| m.to_owned());
    let e = prices
        .get(model)
        .or_else(|| prices.get(format!("anthropic.{model}-v1:0")))
        .or_else(|| undated.and_then(|u| prices.get(u)))?;
    let f = |k: &str| e.get(k).and_then(Value::as_f64);
    let input = f("input_cost_per_token")?;
    let write = f("cache_creation_input_token_cost").unwrap_or(input);
    Some([
        input,
        f("output_cost_per_token")?,
        f("cache_read_input_token_cost").unwrap_or(input),
        write,
        f("cache_creation_input_token_cost_above_1hr").unwrap_or(2.0 * input),
    ])
}

fn cost(prices: &Value, c: &Call) -> Option<f64> {
    let p = price(prices, &c.model)?;
    Some(c.t.iter().zip(p).map(|(n, p)| *n as f64 * p).sum())
}

fn pinned_prices() -> Value {
    let path = repo_root().join("crates/core/src/pricing/litellm.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn close(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= 0.01 * theirs.abs().max(1e-6) + 1e-9
}

fn tokens_of(row: &Value) -> [u64; 4] {
    [
        n(row, "input"),
        n(row, "output"),
        n(row, "cache_read"),
        n(row, "cache_write"),
    ]
}

#[test]
fn daily_figures_equal_the_own_reader_and_ccusage() {
    let Some((dir, home)) = arranged() else {
        println!("skipped: ../shared/corpus/native not found");
        return;
    };
    let db = dir.path().join("u.db");
    let report = usage(&home, &db, &["daily"]);
    let prices = pinned_prices();
    // The own reader, per UTC day.
    let mut want: BTreeMap<String, ([u64; 4], f64)> = BTreeMap::new();
    for c in read_home(&home) {
        let e = want.entry(c.day.clone()).or_default();
        for (i, v) in [c.t[0], c.t[1], c.t[2], c.t[3] + c.t[4]].iter().enumerate() {
            e.0[i] += v;
        }
        e.1 += cost(&prices, &c).unwrap_or_else(|| panic!("{} has no price", c.model));
    }
    want.retain(|_, (t, _)| t.iter().any(|x| *x > 0));
    let rows = report["rows"].as_array().unwrap();
    let got: BTreeMap<String, &Value> = rows
        .iter()
        .map(|r| (r["date"].as_str().unwrap().to_owned(), r))
        .collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    let mut bill = 0.0;
    for (d, (tokens, dollars)) in &want {
        let row = got[d];
        assert_eq!(tokens_of(row), *tokens, "{d}");
        let ours = row["cost_usd"].as_f64().unwrap();
        assert!(close(ours, *dollars), "{d}: {ours} vs {dollars}");
        assert_eq!(row["partial"], false, "{d}");
        bill += dollars;
    }
    let total = report["totals"]["cost_usd"].as_f64().unwrap();
    assert!(close(total, bill), "{total} vs {bill}");

    // ccusage 20.0.24 on the same layout (claude daily, -z UTC): tokens
    // equal, cost within 1% (both price every model here).
    let ccusage: &[(&str, [u64; 4], f64)] = &[
        ("2025-06-08", [205, 19035, 4_257_841, 190_624], 2.2783),
        ("2025-06-10", [88, 278, 44544, 16000], 0.0778),
        ("2025-07-13", [2972, 48584, 27_474_087, 1_257_229], 60.5283),
        ("2025-07-19", [41, 222, 88299, 78291], 1.6177),
        ("2025-07-20", [4, 5, 10491, 5678], 0.1226),
        ("2025-08-11", [39, 1540, 100_270, 74722], 1.2518),
        ("2025-09-03", [1011, 52896, 3_751_073, 150_674], 2.4868),
        ("2025-09-07", [129, 3629, 324_259, 47747], 0.3312),
        ("2025-12-16", [10, 5, 0, 0], 0.0002),
        ("2026-08-17", [234, 125_736, 17_180_667, 201_413], 13.749),
        ("2026-08-20", [42, 19241, 2_528_935, 131_511], 6.0987),
    ];
    let claude = usage(&home, &db, &["daily", "--agent", "claude"]);
    let rows = claude["rows"].as_array().unwrap();
    assert_eq!(rows.len(), ccusage.len(), "{claude}");
    for (row, (d, tokens, dollars)) in rows.iter().zip(ccusage) {
        assert_eq!(row["date"], *d);
        assert_eq!(tokens_of(row), *tokens, "{d}");
        let ours = row["cost_usd"].as_f64().unwrap();
        assert!(
            (ours - dollars).abs() <= 0.01 * dollars + 0.0001,
            "{d}: {ours} vs ccusage {dollars}"
        );
    }
    let t = &claude["totals"];
    assert_eq!(n(t, "total_tokens"), 58_190_301);
    let ours = t["cost_usd"].as_f64().unwrap();
    assert!((ours - 88.5424).abs() <= 0.885, "{ours} vs ccusage 88.54");
}
