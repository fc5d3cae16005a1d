//! Issue 13, the CLI surface: agent text never reaches the terminal raw,
//! out-of-range numbers are usage errors (never panics), `ops` refuses
//! impossible policies before any agent starts, one bad file does not stop a
//! batch, validation messages stay short, and a panic exits 70.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::support::{
    agentshape, assert_exit, assert_exit_for, example, fake_agent, json_lines, repo_root,
};

/// Hang guard only: every command here finishes in well under a second.
const GUARD: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------
// Terminal safety (item 8)
// ---------------------------------------------------------------------------

/// The first C0/C1 control character (other than newline and tab) or bidi
/// override in `bytes`, if any, with some context.
fn first_unsafe(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    text.char_indices()
        .find(|&(_, c)| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
        .map(|(i, c)| {
            let start = text[..i].char_indices().rev().nth(30).map_or(0, |(j, _)| j);
            format!("{c:?} after {:?}", &text[start..i])
        })
}

fn assert_terminal_safe(out: &std::process::Output, what: &str) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if let Some(bad) = first_unsafe(bytes) {
            panic!(
                "{what}: {name} carries a control character: {bad}\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}

/// A Claude transcript whose agent-controlled strings carry escape
/// sequences: the model (retitle the terminal), the summary (clear the
/// screen), a memory key (rejected, echoed in a store warning), a memory
/// observation (listed by `memories list`), an event message (a C1 CSI) and
/// an event level (rejected, echoed), plus a bidi override.
fn hostile_transcript(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
    let text = text
        .replace(
            "\"model\":\"claude-sonnet-4-5-20250929\"",
            r#""model":"claude\u001b]0;pwned\u0007\u001b[2J""#,
        )
        .replace(
            "Tier 1 health check: ",
            r"Tier 1 \u001b[2J\u001b[H health check: ",
        )
        .replace(
            "\"key\":\"jellyfin:timing\"",
            r#""key":"jelly\u001b[31mfin:timing:\u001b[8m""#,
        )
        .replace(
            "Lag spikes during",
            r"Lag \u001b]0;x\u0007spikes\u202e during",
        )
        .replace("HTTP 502 from", r"HTTP \u009b2J502\r from")
        .replace("\"level\":\"warning\"", r#""level":"warn\u001b[5ming""#);
    assert!(text.contains(r"\u001b]0;pwned"), "fixture edit applied");
    let path = dir.join("hostile.ndjson");
    std::fs::write(&path, text).unwrap();
    path
}

/// A transcript that ends in an error result whose text and session id carry
/// escape sequences.
fn hostile_error_transcript(dir: &Path) -> std::path::PathBuf {
    let text = concat!(
        r#"{"type":"system","subtype":"init","session_id":"s\u001b[2Jid","model":"m\u001b[1;31m\u0007"}"#,
        "\n",
        r#"{"type":"assistant","message":{"model":"m\u001b]2;t\u0007","content":[{"type":"text","text":"hi \u001b[2J"}]},"session_id":"s"}"#,
        "\n",
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: \u001b[2J\u001b]0;owned\u0007 overloaded","session_id":"s\u001b[2J"}"#,
        "\n"
    );
    let path = dir.join("hostile-error.ndjson");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn escape_sequences_in_a_transcript_never_reach_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hostile = hostile_transcript(d);
    let hostile_error = hostile_error_transcript(d);
    let db = d.join("agentshape.db");
    let logs = d.join("logs");

    for transcript in [&hostile, &hostile_error] {
        let out = agentshape()
            .args(["run", "--profile", "claude-ops", "--replay"])
            .arg(transcript)
            .arg("--store")
            .arg(&db)
            .arg("--log-dir")
            .arg(&logs)
            .timeout(GUARD)
            .output()
            .unwrap();
        assert!(!out.stdout.is_empty(), "run printed a summary");
        assert_terminal_safe(&out, "run --replay");
    }

    let out = agentshape()
        .arg("parse")
        .arg(&hostile)
        .arg(&hostile_error)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("claude"));
    assert_terminal_safe(&out, "parse");

    let out = agentshape()
        .args(["extract", "--profile", "claude-ops"])
        .arg(&hostile)
        .arg(&hostile_error)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_terminal_safe(&out, "extract");

    let out = agentshape()
        .args(["check", "--profile", "claude-ops"])
        .arg(&hostile)
        .arg(&hostile_error)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_terminal_safe(&out, "check");

    let out = agentshape()
        .arg("sessions")
        .arg("--store")
        .arg(&db)
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_terminal_safe(&out, "sessions");

    let out = agentshape()
        .args(["memories", "list", "--store"])
        .arg(&db)
        .timeout(GUARD)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("spikes"),
        "the hostile memory is listed: {listed}"
    );
    assert_terminal_safe(&out, "memories list");
}

#[test]
fn escape_sequences_in_ops_output_are_cleaned() {
    let ops = OpsDir::new("");
    let hostile = hostile_transcript(ops.dir.path());
    std::fs::copy(&hostile, ops.dir.path().join("agents/t1.ndjson")).unwrap();
    let out = ops.run(&["--once", "--dry-run"]);
    assert!(!out.stdout.is_empty());
    assert_terminal_safe(&out, "ops");
}

#[test]
fn json_output_keeps_agent_text_exactly() {
    // Cleaning is for people: `--json` carries the value as the agent sent it.
    let dir = tempfile::tempdir().unwrap();
    let hostile = hostile_transcript(dir.path());
    let out = agentshape()
        .args(["parse", "--json"])
        .arg(&hostile)
        .timeout(GUARD)
        .output()
        .unwrap();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines[0]["model"], "claude\u{1b}]0;pwned\u{7}\u{1b}[2J");
}

// ---------------------------------------------------------------------------
// Numbers in options (item 11)
// ---------------------------------------------------------------------------

fn assert_usage(out: &std::process::Output, names: &str, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_exit_for(out, 64, format_args!("{what}"));
    assert!(
        stderr.contains(names),
        "{what}: the message names `{names}`: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn out_of_range_durations_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let log_dir = dir.path().join("logs").display().to_string();
    for t in [
        "1e20",
        "18446744073709551616",
        "1e300",
        "0",
        "-1",
        "nan",
        "inf",
    ] {
        let out = agentshape()
            .args(["run", "--no-store", "--agent", "raw", "--log-dir", &log_dir])
            .arg(format!("--timeout={t}"))
            .args(["--", "true"])
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_usage(&out, "--timeout", &format!("run --timeout {t}"));
    }
    let out = agentshape()
        .args(["run", "--no-store", "--log-dir", &log_dir, "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .args(["--pace", "18446744073709551615"])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_usage(&out, "--pace", "run --pace");
    let schema = repo_root().join("schemas/loop-action.json");
    for (flag, value) in [
        ("--timeout", "18446744073709551615"),
        ("--backoff-ms", "18446744073709551615"),
        ("--max-backoff-ms", "18446744073709551615"),
    ] {
        let out = agentshape()
            .args(["ask", "--provider", "ollama", "--model", "m", "--schema"])
            .arg(&schema)
            .args(["--base-url", "http://127.0.0.1:9", flag, value, "hi"])
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_usage(&out, flag, &format!("ask {flag} {value}"));
    }
    for age in ["99999999999999d", "9223372036854775807ms", "200000w"] {
        let out = agentshape()
            .args(["memories", "prune", "--store"])
            .arg(dir.path().join("m.db"))
            .args(["--older-than", age])
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_usage(&out, "--older-than", &format!("--older-than {age}"));
    }
}

// ---------------------------------------------------------------------------
// Impossible ops policies (items 11 and 14)
// ---------------------------------------------------------------------------

/// An ops config in a temp dir whose three tiers run the fake agent, which
/// writes a marker file per start into `argv/`.
struct OpsDir {
    dir: tempfile::TempDir,
}

impl OpsDir {
    /// `top` goes before the tables, `policy` into `[policy]`.
    fn with(top: &str, policy: &str, tiers: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let healthy = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
        std::fs::create_dir_all(d.join("agents")).unwrap();
        let mut tables = String::new();
        for t in 1..=tiers {
            std::fs::write(d.join(format!("agents/t{t}.ndjson")), &healthy).unwrap();
            std::fs::write(d.join(format!("p{t}.md")), format!("tier {t}")).unwrap();
            let _ = write!(
                tables,
                "[[tiers]]\nname = \"t{t}\"\nmodel = \"t{t}\"\nprompt = \"p{t}.md\"\n\n"
            );
        }
        let config = format!(
            "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\n{top}\n\n[policy]\n{policy}\n\n{tables}",
            fake_agent(),
            d.join("agentshape.db").display().to_string(),
            d.join("logs").display().to_string(),
        );
        std::fs::write(d.join("ops.toml"), config).unwrap();
        OpsDir { dir }
    }

    fn new(policy: &str) -> Self {
        OpsDir::with("", policy, 3)
    }

    fn run(&self, extra: &[&str]) -> std::process::Output {
        agentshape()
            .args(["ops", "--config"])
            .arg(self.dir.path().join("ops.toml"))
            .args(extra)
            .env("FAKE_DIR", self.dir.path().join("agents"))
            .env("FAKE_ARGV_DIR", self.dir.path().join("argv"))
            .timeout(GUARD)
            .output()
            .unwrap()
    }

    fn agent_starts(&self) -> usize {
        std::fs::read_dir(self.dir.path().join("argv")).map_or(0, Iterator::count)
    }
}

#[test]
fn impossible_policies_are_refused_before_any_agent_starts() {
    let cases: &[(&str, &str, u32, &str)] = &[
        ("", "cooldown_hours = -4", 3, "cooldown_hours"),
        ("", "cooldown_hours = nan", 3, "cooldown_hours"),
        ("", "cooldown_hours = inf", 3, "cooldown_hours"),
        ("", "timeout_secs = -1", 3, "timeout_secs"),
        ("", "timeout_secs = nan", 3, "timeout_secs"),
        ("", "timeout_secs = 0.0", 3, "timeout_secs"),
        ("", "timeout_secs = 1e300", 3, "timeout_secs"),
        (
            "",
            "timeout_secs = 18446744073709551616.0",
            3,
            "timeout_secs",
        ),
        ("", "max_tier = 0", 3, "max_tier"),
        ("", "max_tier = 4", 3, "max_tier"),
        (
            "",
            "max_escalations_per_service = 0",
            3,
            "max_escalations_per_service",
        ),
        ("interval_secs = 0", "", 3, "interval_secs"),
        (
            "interval_secs = 9223372036854775807",
            "",
            3,
            "interval_secs",
        ),
    ];
    for &(top, policy, tiers, key) in cases {
        let ops = OpsDir::with(top, policy, tiers);
        // `--once`: on a build that accepts the policy, the test still ends.
        let out = ops.run(&["--once"]);
        let what = format!("{top}{policy}");
        assert_usage(&out, key, &what);
        assert_eq!(ops.agent_starts(), 0, "{what}: no agent may start");
        assert!(
            !ops.dir.path().join("agentshape.db").exists(),
            "{what}: no store is created"
        );
    }
}

#[test]
fn sane_policies_still_run_and_max_tier_defaults_to_the_tiers() {
    // One tier and no `max_tier`: the default is the number of tiers.
    let ops = OpsDir::with("interval_secs = 60", "cooldown_hours = 0", 1);
    let out = ops.run(&["--once", "--json"]);
    assert_exit(&out, 0);
    assert_eq!(ops.agent_starts(), 1);
}

// ---------------------------------------------------------------------------
// Batches (item 16)
// ---------------------------------------------------------------------------

const GOOD: &str = "examples/healthy-structured.ndjson";
const GOOD2: &str = "examples/fenced-only.ndjson";
const MISSING: &str = "no/such/missing.ndjson";

fn assert_error_line(line: &serde_json::Value) {
    assert_eq!(line["file"], MISSING, "{line}");
    let msg = line["input_error"].as_str().unwrap_or_default();
    assert!(msg.starts_with("cannot read: "), "{line}");
    assert!(msg.contains("No such file or directory"), "{line}");
}

#[test]
fn parse_batch_with_a_missing_file_reports_it_and_goes_on() {
    let out = agentshape()
        .args(["parse", "--json", GOOD, MISSING, GOOD2])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["file"], GOOD);
    assert_eq!(lines[0]["saw_result"], true);
    assert_error_line(&lines[1]);
    assert_eq!(lines[2]["file"], GOOD2);
    assert!(String::from_utf8_lossy(&out.stderr).contains(MISSING));

    // For people: both good files are summarised, the bad one named on stderr.
    let out = agentshape()
        .args(["parse", GOOD, MISSING, GOOD2])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(GOOD) && stdout.contains(GOOD2), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(MISSING));
}

#[test]
fn extract_batch_with_a_missing_file_reports_it_and_goes_on() {
    let out = agentshape()
        .args([
            "extract",
            "--profile",
            "claude-ops",
            "--json",
            GOOD,
            MISSING,
            GOOD2,
        ])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[0]["run"]["file"], GOOD);
    assert_error_line(&lines[1]);
    assert_eq!(lines[2]["run"]["file"], GOOD2);

    // `--jsonl`: the lines of the good files, an error line for the bad one.
    let replies = crate::support::temp_file("\"{\\\"a\\\": 1}\"\n\"no json\"\n");
    let out = agentshape()
        .args(["extract", "--jsonl", "--json"])
        .arg(replies.path())
        .arg(MISSING)
        .arg(replies.path())
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0]["method"], "bare");
    assert_error_line(&lines[2]);
    assert_eq!(lines[4]["method"], "none");
}

#[test]
fn check_batch_with_a_missing_file_reports_it_and_goes_on() {
    let out = agentshape()
        .args([
            "check",
            "--profile",
            "claude-ops",
            "--json",
            GOOD,
            MISSING,
            GOOD2,
        ])
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["file"], GOOD);
    assert_error_line(&lines[1]);
    assert_eq!(lines[2]["file"], GOOD2);
}

#[test]
fn a_validation_error_on_a_huge_instance_has_a_short_message() {
    let schema = crate::support::temp_file(
        r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": [1, 2]}}}"#,
    );
    let big = "x".repeat(1 << 20);
    let instance = crate::support::temp_file(&format!(
        r#"{{"a": "{big}", "b": ["{big}"], "c": "{big}"}}"#
    ));
    let out = agentshape()
        .args(["validate", "--json", "--schema"])
        .arg(schema.path())
        .arg(instance.path())
        .timeout(GUARD)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert!(out.stdout.len() < 2000, "{} bytes", out.stdout.len());
    let verdict = &json_lines(&out.stdout)[0];
    let errors = verdict["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{verdict}");
    for e in errors {
        let m = e["message"].as_str().unwrap();
        assert!(m.chars().count() <= 400, "{m}");
        assert!(m.contains('…'), "the cut is marked: {m}");
    }
    // The type error still says what is wrong.
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("is not of type \"integer\"")
    );
}

// ---------------------------------------------------------------------------
// Panics (item 15)
// ---------------------------------------------------------------------------

/// The debug-only trigger (`AGENTSHAPE_DEBUG_PANIC`, compiled only with
/// `debug_assertions`): a panic becomes exit 70 and one line naming it a bug.
#[test]
fn a_panic_exits_70_and_names_it_a_bug() {
    let out = agentshape()
        .args(["parse", GOOD])
        .env("AGENTSHAPE_DEBUG_PANIC", "1")
        .env_remove("RUST_BACKTRACE")
        .timeout(GUARD)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 70);
    assert!(
        stderr.starts_with("agentshape: internal error (a bug): "),
        "{stderr}"
    );
    assert!(stderr.contains("AGENTSHAPE_DEBUG_PANIC"), "{stderr}");
    assert!(stderr.trim_end().ends_with("please report it"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
