//! Issue 39 through the binary: `agentshape usage` agrees with the bill.
//!
//! The figures `usage` prints are checked against two things it did not
//! make: this file's own reader of the session files (each Claude message
//! id and request id once, last line's usage; Codex running totals summed
//! per segment; Gemini per message; each call on the UTC day of its own
//! time) priced with its own arithmetic from the pinned `LiteLLM` file; and
//! the figures ccusage 20.0.24 printed for `../shared/corpus/native` laid
//! out as the agents write it (`npx ccusage claude daily --json --offline
//! -z UTC`, recorded below).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::{agentshape, assert_exit, repo_root};

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
    let mut all = args.to_vec();
    all.extend(["--files", "-z", "UTC"]);
    report(home, db, &all)
}

// ---- the test's own reader -------------------------------------------

/// One model call: its key, UTC day, session file, model and tokens
/// (input uncached, output, cache read, cache write 5 m, cache write 1 h).
#[derive(Debug, Clone, Default)]
struct Call {
    day: String,
    file: String,
    /// The session the call is counted in: a sub-agent's file folds into
    /// its parent's (the session its lines name).
    session: String,
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
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let session = if stem.starts_with("agent-") {
                v["sessionId"].as_str().unwrap_or_default().to_owned()
            } else {
                stem
            };
            let call = Call {
                day: day(v["timestamp"].as_str()),
                file: name.clone(),
                session,
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
                p["model"]
                    .as_str()
                    .unwrap_or_default()
                    .clone_into(&mut model);
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
                session: name.clone(),
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
                session: f.to_string_lossy().into_owned(),
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

/// Per-token prices of a model from the pinned `LiteLLM` file: the entry of
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

    // Per session, sub-agents folded into their parents: the same
    // figures, session by session (compared as sorted lists, since the
    // reader names sessions by file and the store by id).
    let mut want: BTreeMap<String, ([u64; 4], f64)> = BTreeMap::new();
    for c in read_home(&home) {
        let e = want.entry(c.session.clone()).or_default();
        for (i, v) in [c.t[0], c.t[1], c.t[2], c.t[3] + c.t[4]].iter().enumerate() {
            e.0[i] += v;
        }
        e.1 += cost(&prices, &c).unwrap();
    }
    let mut want: Vec<([u64; 4], f64)> = want
        .into_values()
        .filter(|(t, _)| t.iter().any(|x| *x > 0))
        .collect();
    let sessions = usage(&home, &db, &["session"]);
    let mut got: Vec<([u64; 4], f64)> = sessions["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (tokens_of(r), r["cost_usd"].as_f64().unwrap()))
        .collect();
    want.sort_by_key(|w| w.0);
    got.sort_by_key(|g| g.0);
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        want.iter().map(|w| w.0).collect::<Vec<_>>()
    );
    for (g, w) in got.iter().zip(&want) {
        assert!(close(g.1, w.1), "{:?}: {} vs {}", g.0, g.1, w.1);
    }
}

// ---- the contract on sessions written here -------------------------------

/// A Claude Code assistant line of one message (`usage` as JSON text).
fn claude(session: &str, id: &str, at: &str, model: &str, usage: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"{session}","uuid":"u-{id}-{at}","parentUuid":null,"isSidechain":false,"timestamp":"{at}","requestId":"req-{id}","cwd":"/home/me/src/shop","version":"2.1.0","gitBranch":"main"{extra},"message":{{"id":"{id}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"ok"}}],"usage":{usage}}}}}"#
    )
}

fn tokens(input: u64, output: u64) -> String {
    format!(r#"{{"input_tokens":{input},"output_tokens":{output}}}"#)
}

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

const S1: &str = "11111111-1111-4111-8111-111111111111";
const S2: &str = "22222222-2222-4222-8222-222222222222";

/// A home holding: a session that runs past midnight UTC, its resumed copy
/// (repeating one message, adding one), a sub-agent's own file, a call of
/// a model no price names, and a Codex rollout whose total restarts.
fn home_of_fixtures(home: &Path) {
    let projects = home.join(".claude/projects/-home-me-src-shop");
    let priced = "claude-sonnet-4-5-20250929";
    write(
        &projects.join(format!("{S1}.jsonl")),
        &[
            claude(
                S1,
                "m1",
                "2026-03-01T23:30:00.000Z",
                priced,
                &tokens(1000, 100),
                "",
            ),
            claude(
                S1,
                "m2",
                "2026-03-02T00:30:00.000Z",
                priced,
                &tokens(2000, 200),
                "",
            ),
        ],
    );
    // Resumed: m2 again (counted once), then m3.
    write(
        &projects.join(format!("{S2}.jsonl")),
        &[
            claude(
                S2,
                "m2",
                "2026-03-02T00:30:00.000Z",
                priced,
                &tokens(2000, 200),
                "",
            ),
            claude(
                S2,
                "m3",
                "2026-03-02T01:00:00.000Z",
                "house-model-7",
                &tokens(50, 5),
                "",
            ),
        ],
    );
    let side = r#","isSidechain":true,"agentId":"a1b2c3""#;
    let line = claude(
        S1,
        "m4",
        "2026-03-02T02:00:00.000Z",
        priced,
        &tokens(400, 40),
        side,
    )
    .replace(r#""isSidechain":false,"#, "");
    write(
        &projects.join(S1).join("subagents/agent-a1b2c3.jsonl"),
        &[line],
    );
    let rollout = home.join(".codex/sessions/2026/03/05/rollout-2026-03-05T10-00-00-0199aa00-1111-7222-8333-444455556666.jsonl");
    let tc = |at: &str, input: u64, cached: u64, output: u64| {
        format!(
            r#"{{"timestamp":"{at}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":{output},"reasoning_output_tokens":0,"total_tokens":{}}}}}}}}}"#,
            input + output
        )
    };
    write(
        &rollout,
        &[
            r#"{"timestamp":"2026-03-05T10:00:00.000Z","type":"session_meta","payload":{"id":"0199aa00-1111-7222-8333-444455556666","cwd":"/home/me/src/api","cli_version":"0.104.0"}}"#.to_owned(),
            r#"{"timestamp":"2026-03-05T10:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5-codex","cwd":"/home/me/src/api"}}"#.to_owned(),
            tc("2026-03-05T10:00:01.000Z", 10_000, 8_000, 100),
            tc("2026-03-05T10:00:02.000Z", 10_000, 8_000, 100),
            tc("2026-03-05T11:00:00.000Z", 1_000, 0, 10),
        ],
    );
}

/// `agentshape` with `home` as the agents' home (their standard folders
/// under it; no user price file).
fn at_home(home: &Path) -> assert_cmd::Command {
    let mut cmd = agentshape();
    cmd.env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .timeout(GUARD);
    cmd
}

fn run_usage(home: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    at_home(home)
        .arg("usage")
        .args(args)
        .arg("--store")
        .arg(db)
        .output()
        .unwrap()
}

fn report(home: &Path, db: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run_usage(home, db, &all);
    assert_exit(&out, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

fn column(r: &Value, name: &str) -> Vec<Value> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[name].clone())
        .collect()
}

#[test]
fn a_fresh_machine_gets_a_daily_report_split_by_message_time_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    home_of_fixtures(&home);
    let db = dir.path().join("u.db");
    assert!(!db.exists());
    // No store yet: the standard folders are imported first.
    let r = report(&home, &db, &["daily"]);
    assert!(db.exists());
    assert_eq!(r["report"], "daily");
    assert_eq!(r["timezone"], "UTC");
    assert_eq!(
        column(&r, "date"),
        ["2026-03-01", "2026-03-02", "2026-03-05"]
    );
    // Past midnight: m1 on the 1st; m2 (once, though two files hold it), m3, m4 on the 2nd.
    assert_eq!(column(&r, "input"), [1000, 2000 + 50 + 400, 2000 + 1000]);
    assert_eq!(column(&r, "calls"), [1, 3, 2]);
    // Codex: 10,000 input of which 8,000 cached, then a restart of 1,000.
    assert_eq!(r["rows"][2]["cache_read"], 8000);
    assert_eq!(r["rows"][2]["output"], 110);
    // Partial where a model has no price, and only there.
    assert_eq!(column(&r, "partial"), [false, true, false]);
    assert_eq!(
        r["rows"][1]["unpriced_models"],
        serde_json::json!(["house-model-7"])
    );
    assert_eq!(r["totals"]["partial"], true);
    // The priced part is priced: sonnet 4.5 at $3 / $15 per million.
    let day1 = r["rows"][0]["cost_usd"].as_f64().unwrap();
    assert!(
        (day1 - (1000.0 * 3.0 + 100.0 * 15.0) / 1e6).abs() < 1e-9,
        "{day1}"
    );
    let cost2 = r["rows"][1]["cost_usd"].as_f64().unwrap();
    assert!(
        (cost2 - (2400.0 * 3.0 + 240.0 * 15.0) / 1e6).abs() < 1e-9,
        "{cost2}"
    );

    // The table for people: thousands separators, a totals row, the mark.
    let out = run_usage(&home, &db, &["daily"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "date",
        "cost_usd",
        "2026-03-02",
        "2,450",
        "total",
        "*",
        "partial: no price for house-model-7",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // Again: nothing new to import, the same figures.
    assert_eq!(report(&home, &db, &["daily", "--files"]), r);
}

#[test]
#[allow(clippy::many_single_char_names)]
fn periods_zones_filters_sessions_and_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    home_of_fixtures(&home);
    let db = dir.path().join("u.db");
    let m = report(&home, &db, &["monthly", "--breakdown"]);
    assert_eq!(column(&m, "month"), ["2026-03"]);
    let models: Vec<Value> = m["rows"][0]["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["model"].clone())
        .collect();
    assert_eq!(models.len(), 3, "{m}");
    // 2026-03-01 is a Sunday.
    let w = report(&home, &db, &["weekly"]);
    assert_eq!(column(&w, "week"), ["2026-02-23", "2026-03-02"]);
    let w = report(&home, &db, &["weekly", "--start-of-week-sunday"]);
    assert_eq!(column(&w, "week"), ["2026-03-01"]);
    // In Tokyo (UTC+9) m1 falls on the 2nd.
    let t = report(&home, &db, &["daily", "-z", "Asia/Tokyo"]);
    assert_eq!(column(&t, "date"), ["2026-03-02", "2026-03-05"]);
    assert_eq!(t["timezone"], "Asia/Tokyo");
    // Filters: an agent by either name, a project by its end, a model, dates.
    for agent in ["claude", "claude-code"] {
        let a = report(&home, &db, &["daily", "--agent", agent]);
        assert_eq!(column(&a, "date"), ["2026-03-01", "2026-03-02"], "{agent}");
    }
    let p = report(&home, &db, &["daily", "--project", "api"]);
    assert_eq!(column(&p, "date"), ["2026-03-05"]);
    let p = report(&home, &db, &["daily", "--model", "HOUSE"]);
    assert_eq!(column(&p, "input"), [50]);
    let d = report(
        &home,
        &db,
        &["daily", "--since", "2026-03-02", "--until", "2026-03-02"],
    );
    assert_eq!(column(&d, "date"), ["2026-03-02"]);
    // Sessions: the sub-agent's file folded into its parent, the main agent apart.
    let s = report(&home, &db, &["session"]);
    let ids = column(&s, "session_id");
    assert_eq!(ids.len(), 3, "{s}");
    let parent = s["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == S1)
        .unwrap();
    assert_eq!(parent["input"], 1000 + 2000 + 400);
    assert_eq!(parent["own"]["input"], 3000);
    assert_eq!(parent["subagents"], 1);
    assert_eq!(parent["project"], "/home/me/src/shop");
    let resumed = s["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == S2)
        .unwrap();
    assert_eq!(
        resumed["input"], 50,
        "m2 counted once, in the first session"
    );
    assert_eq!(s["totals"]["input"], 1000 + 2000 + 50 + 400 + 2000 + 1000);
    // Blocks: 23:00–04:00 (m1..m4), then Codex at 10:00 on the 5th.
    let b = report(&home, &db, &["blocks"]);
    assert_eq!(
        column(&b, "start"),
        ["2026-03-01T23:00:00+00:00", "2026-03-05T10:00:00+00:00"]
    );
    assert_eq!(column(&b, "active"), [false, false]);
    assert_eq!(column(&b, "calls"), [4, 2]);
}

#[test]
fn bad_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let db = dir.path().join("u.db");
    for (args, want) in [
        (
            &["daily", "-z", "Mars/Olympus"][..],
            "--timezone `Mars/Olympus`",
        ),
        (
            &["daily", "--since", "yesterday"][..],
            "--since `yesterday`",
        ),
        (&["daily", "--until", "7d"][..], "--until `7d`"),
        (
            &["daily", "--files", "--agent", "cursor"][..],
            "--agent `cursor`",
        ),
    ] {
        let out = run_usage(&home, &db, args);
        assert_exit(&out, 64);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn the_same_report_from_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    home_of_fixtures(&home);
    let sqlite = dir.path().join("u.db");
    let url = agentshape_testkit::pg::fresh_db();
    for kind in ["daily", "session", "blocks"] {
        let a = report(&home, &sqlite, &[kind, "--breakdown"]);
        let out = at_home(&home)
            .args(["usage", kind, "--breakdown", "--json", "--store", &url])
            .arg("--files")
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let b: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(a, b, "{kind}");
    }
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn import_into(home: &Path, db: &Path) {
    let out = at_home(home)
        .args(["import", "--quiet", "--store"])
        .arg(db)
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

/// Every session with its calls, as the store holds them: (session id,
/// parent, agent, project, call key, time, model, input, output).
fn stored_calls(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.id, COALESCE(s.parent_id, ''), s.agent, COALESCE(s.project, ''), u.key,
                u.at_ms, u.model, u.input_tokens, u.output_tokens, u.cache_read_tokens
             FROM usage_calls u JOIN sessions s ON s.id = u.session_id ORDER BY u.key",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {} {} {} {} {} {} {} {} {}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, String>(6)?,
            r.get::<_, i64>(7)?,
            r.get::<_, i64>(8)?,
            r.get::<_, i64>(9)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// Runtime's Note [Usage pass]: `usage` over files not imported stores
/// their sessions and calls, not their transcripts; a later `import` adds
/// the transcripts under the same session ids, and every figure is what an
/// import alone gives.
#[test]
fn the_usage_pass_stores_calls_and_a_later_import_adds_the_transcripts() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    home_of_fixtures(&home);
    let db = dir.path().join("u.db");
    let passed = report(&home, &db, &["session", "--breakdown"]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM feed"), 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM native_files"), 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM usage_files"), 4);
    let after_pass = stored_calls(&db);

    // The same files imported into a store of their own.
    let alone = dir.path().join("alone.db");
    import_into(&home, &alone);
    assert_eq!(stored_calls(&alone), after_pass);
    assert_eq!(report(&home, &alone, &["session", "--breakdown"]), passed);

    // Imported after the pass: transcripts in, the pass's marks gone, the
    // same sessions and calls.
    import_into(&home, &db);
    assert!(count(&db, "SELECT COUNT(*) FROM feed") > 0);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM feed"),
        count(&alone, "SELECT COUNT(*) FROM feed")
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM usage_files"), 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM native_files"), 4);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM sessions"),
        count(&alone, "SELECT COUNT(*) FROM sessions")
    );
    assert_eq!(stored_calls(&db), after_pass);
    assert_eq!(report(&home, &db, &["session", "--breakdown"]), passed);
}

/// A file the pass read is read again only when it changed, and then its
/// calls replace the ones stored for it (never counted twice).
#[test]
fn a_file_grown_after_the_usage_pass_is_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    home_of_fixtures(&home);
    let db = dir.path().join("u.db");
    let first = report(&home, &db, &["daily"]);
    let marks = || {
        count(
            &db,
            "SELECT COALESCE(SUM(size), 0) + COUNT(*) * 1000000 FROM usage_files",
        )
    };
    let before = marks();
    // Unchanged: nothing read again, the same figures.
    assert_eq!(report(&home, &db, &["daily", "--files"]), first);
    assert_eq!(marks(), before);

    let file = home
        .join(".claude/projects/-home-me-src-shop")
        .join(format!("{S1}.jsonl"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&claude(
        S1,
        "m5",
        "2026-03-05T09:00:00.000Z",
        "claude-sonnet-4-5-20250929",
        &tokens(700, 70),
        "",
    ));
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    let grown = report(&home, &db, &["daily", "--files"]);
    assert_ne!(marks(), before);
    let input = |r: &Value| r["totals"]["input"].as_u64().unwrap();
    assert_eq!(input(&grown), input(&first) + 700);
    assert_eq!(report(&home, &db, &["daily", "--files"]), grown);
    // And the same figures as an import of the grown files.
    let alone = dir.path().join("alone.db");
    import_into(&home, &alone);
    assert_eq!(report(&home, &alone, &["daily"]), grown);
}
