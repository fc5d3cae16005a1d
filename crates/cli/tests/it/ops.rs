//! `agentshape ops` with the fake agent as every tier: escalation, dry run,
//! cooldown, max tier, and the legacy handoff file.

use std::path::{Path, PathBuf};

use crate::support::{agentshape, assert_exit, example, fake_agent, sql};

struct Ops {
    dir: tempfile::TempDir,
}

impl Ops {
    /// A config in a temp dir whose tiers use models t1, t2, t3; transcripts
    /// `<model>.ndjson` are picked by the fake agent.
    fn new(max_tier: u32, t2_escalates: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let healthy = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
        let calm = healthy.replace("\"needed\":true", "\"needed\":false");
        std::fs::create_dir_all(d.join("agents")).unwrap();
        std::fs::write(d.join("agents/t1.ndjson"), &healthy).unwrap();
        std::fs::write(
            d.join("agents/t2.ndjson"),
            if t2_escalates { &healthy } else { &calm },
        )
        .unwrap();
        std::fs::write(d.join("agents/t3.ndjson"), &calm).unwrap();
        for t in 1..=3 {
            std::fs::write(d.join(format!("p{t}.md")), format!("tier {t} prompt")).unwrap();
        }
        let tiers: String = (1..=3)
            .map(|t| format!("[[tiers]]\nname = \"t{t}\"\nmodel = \"t{t}\"\nprompt = \"p{t}.md\"\nallowed_tools = [\"Read\", \"Grep\"]\ndisallowed_tools = [\"Write\"]\n\n"))
            .collect();
        let config = format!(
            "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\nstate_dir = {:?}\nenvironment = \"test lab\"\n\n[policy]\nmax_tier = {max_tier}\n\n{tiers}",
            fake_agent(),
            d.join("agentshape.db").display().to_string(),
            d.join("logs").display().to_string(),
            d.join("state").display().to_string(),
        );
        std::fs::write(d.join("ops.toml"), config).unwrap();
        Ops { dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("agentshape.db")
    }

    fn ops(&self, extra: &[&str]) -> std::process::Output {
        agentshape()
            .args(["ops", "--config"])
            .arg(self.dir.path().join("ops.toml"))
            .args(["--once", "--json"])
            .args(extra)
            .env("FAKE_DIR", self.dir.path().join("agents"))
            .env("FAKE_ARGV_DIR", self.argv_dir())
            .env("FAKE_STDIN_DIR", self.dir.path().join("stdin"))
            .output()
            .unwrap()
    }

    /// Standard input of every agent call, in call order.
    fn stdins(&self) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(self.dir.path().join("stdin")) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        files.sort();
        files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect()
    }

    fn argv_dir(&self) -> PathBuf {
        self.dir.path().join("argv")
    }

    /// Argument vectors of every agent call, in call order.
    fn calls(&self) -> Vec<Vec<String>> {
        let Ok(rd) = std::fs::read_dir(self.argv_dir()) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        files.sort();
        files
            .iter()
            .map(|f| {
                std::fs::read_to_string(f)
                    .unwrap()
                    .split('\0')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    }
}

fn arg_after<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .map(|i| args[i + 1].as_str())
}

fn decisions(stdout: &[u8]) -> Vec<String> {
    crate::support::json_lines(stdout)
        .iter()
        .filter(|v| v["type"] == "decision")
        .map(|v| v["decision"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tier_one_asking_to_escalate_spawns_tier_two_with_parent_and_context() {
    let ops = Ops::new(3, false);
    let out = ops.ops(&[]);
    assert_exit(&out, 0);
    assert_eq!(decisions(&out.stdout), ["escalate"]);
    let rows = sql(
        &ops.db(),
        "SELECT id, parent_id, tier, model FROM sessions ORDER BY tier",
    );
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0][1], "NULL");
    assert_eq!(rows[1][1], rows[0][0], "tier 2's parent is tier 1");
    assert_eq!((rows[0][2].as_str(), rows[1][2].as_str()), ("1", "2"));
    let calls = ops.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(arg_after(&calls[0], "--model"), Some("t1"));
    // The prompt goes on stdin (no 128 KiB argument cap), after a bare `-p`.
    assert_eq!(arg_after(&calls[0], "-p"), Some("--allowedTools"));
    assert!(!calls[0].iter().any(|a| a == "tier 1 prompt"));
    assert_eq!(ops.stdins(), ["tier 1 prompt", "tier 2 prompt"]);
    assert_eq!(arg_after(&calls[0], "--allowedTools"), Some("Read,Grep"));
    assert_eq!(arg_after(&calls[0], "--disallowedTools"), Some("Write"));
    assert_eq!(
        arg_after(&calls[0], "--append-system-prompt"),
        Some("Environment: test lab")
    );
    assert_eq!(arg_after(&calls[1], "--model"), Some("t2"));
    let system = arg_after(&calls[1], "--append-system-prompt").unwrap();
    let lines: Vec<&str> = system.lines().collect();
    assert_eq!(lines[0], "Environment: test lab");
    assert_eq!(
        lines[2],
        "Escalation reason: jellyfin is down (HTTP 502) and tier 1 may not restart containers"
    );
    assert_eq!(
        lines[3],
        "Investigation findings: nginx upstream jellyfin:8096 refuses connections; container status Restarting (exit 137, OOMKilled)."
    );
    assert_eq!(lines[4], "Failed checks: jellyfin-http, jellyfin-container");
    assert!(lines[5].starts_with("Service status: "), "{}", lines[5]);
    assert!(lines[5].contains("jellyfin: down ("), "{}", lines[5]);
    assert_eq!(
        sql(
            &ops.db(),
            "SELECT service, tier FROM escalations ORDER BY service"
        ),
        vec![vec!["jellyfin", "2"], vec!["postgres", "2"]]
    );
}

#[test]
fn dry_run_logs_the_decision_and_spawns_no_next_tier() {
    let ops = Ops::new(3, false);
    let out = ops.ops(&["--dry-run"]);
    assert_exit(&out, 0);
    assert_eq!(decisions(&out.stdout), ["dry_run"]);
    assert_eq!(ops.calls().len(), 1, "only tier 1 ran");
    assert_eq!(sql(&ops.db(), "SELECT tier FROM sessions"), vec![vec!["1"]]);
}

#[test]
fn cooldown_blocks_a_third_escalation_for_the_same_service() {
    let ops = Ops::new(3, false);
    for _ in 0..2 {
        assert_eq!(decisions(&ops.ops(&[]).stdout), ["escalate"]);
    }
    let out = ops.ops(&[]);
    assert_eq!(decisions(&out.stdout), ["cooldown"]);
    assert_eq!(
        sql(&ops.db(), "SELECT COUNT(*) FROM sessions WHERE tier = 2"),
        vec![vec!["2"]]
    );
    assert_eq!(
        sql(&ops.db(), "SELECT COUNT(*) FROM sessions WHERE tier = 1"),
        vec![vec!["3"]]
    );
}

#[test]
fn max_tier_is_honoured() {
    let ops = Ops::new(2, true);
    let out = ops.ops(&[]);
    assert_eq!(decisions(&out.stdout), ["escalate", "max_tier"]);
    assert_eq!(
        sql(&ops.db(), "SELECT MAX(tier) FROM sessions"),
        vec![vec!["2"]]
    );
}

#[test]
fn handoff_file_is_the_legacy_fallback_read_once_and_stale_ones_ignored() {
    let ops = Ops::new(3, false);
    let agents = ops.dir.path().join("agents");
    // Tier 1 speaks legacy markers only; the escalation comes from handoff.json.
    std::fs::copy(example("legacy-markers.ndjson"), agents.join("t1.ndjson")).unwrap();
    let state = ops.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let handoff = state.join("handoff.json");
    // A stale handoff (older than the session) is ignored, and removed.
    std::fs::write(
        &handoff,
        r#"{"recommended_tier": 2, "reason": "stale", "services_affected": ["jellyfin"]}"#,
    )
    .unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&handoff)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let out = ops.ops(&[]);
    assert_eq!(decisions(&out.stdout), Vec::<String>::new());
    assert!(!handoff.exists());
    assert_eq!(
        sql(&ops.db(), "SELECT extraction_method FROM sessions"),
        vec![vec!["markers"]]
    );
    // A fresh one, written while tier 1 runs (here: before, with a future mtime), is honoured.
    write_fresh(&handoff);
    let out = ops.ops(&[]);
    assert_eq!(
        decisions(&out.stdout),
        ["escalate"],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!handoff.exists(), "read once and removed");
    let rows = sql(
        &ops.db(),
        "SELECT tier, extraction_method FROM sessions ORDER BY started_at",
    );
    assert_eq!(rows[1], vec!["1", "markers+handoff"]);
    assert_eq!(rows[2][0], "2");
}

fn write_fresh(path: &Path) {
    std::fs::write(path, r#"{"recommended_tier": 2, "reason": "jellyfin down", "investigation_findings": "502", "services_affected": ["jellyfin"]}"#).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(later)
        .unwrap();
}
