//! Issue 11 item 3 through the binary: several `agentshape ops` processes
//! on one store behave like one (runtime's Notes [Escalation cooldown] and [Supervisor
//! leases], the store's [Escalation claims]). Each test runs on a throwaway
//! Postgres (`agentshape_testkit::pg`) and on a SQLite file; every count is
//! checked by SQL.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use agentshape_store::PgStore;
use agentshape_testkit::pg;

use crate::support::{
    agent_script, agentshape, agentshape_std, assert_exit, example, json_lines, wait_until,
};

/// A hang guard for every command here (never a speed assertion).
const GUARD: Duration = Duration::from_secs(180);

/// A store and the agents, prompts and configs of several supervisors.
struct Fleet {
    dir: tempfile::TempDir,
    /// The `--store` value.
    store: String,
}

impl Fleet {
    /// Tier 1 always asks to escalate (for jellyfin and postgres); tier 2
    /// does not. A tier-2 call sleeps instead when `SLOW_T2` is set.
    fn new(postgres: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let healthy = std::fs::read_to_string(example("healthy-structured.ndjson")).unwrap();
        std::fs::create_dir_all(d.join("agents")).unwrap();
        std::fs::write(d.join("agents/t1.ndjson"), &healthy).unwrap();
        std::fs::write(
            d.join("agents/t2.ndjson"),
            healthy.replace("\"needed\":true", "\"needed\":false"),
        )
        .unwrap();
        for t in 1..=2 {
            std::fs::write(d.join(format!("p{t}.md")), format!("tier {t} prompt")).unwrap();
        }
        // `exec`: the sleeping agent is the process `ops` started, so it
        // dies with a killed supervisor (parent-death signal).
        agent_script(
            d,
            "agent.sh",
            "for a in \"$@\"; do\n  if [ \"$a\" = t2 ] && [ -n \"${SLOW_T2:-}\" ]; then echo $$ > \"$SLOW_T2\"; exec sleep 600; fi\ndone\n",
        );
        let store = if postgres {
            pg::fresh_db()
        } else {
            format!("sqlite:{}", d.join("agentshape.db").display())
        };
        Fleet { dir, store }
    }

    /// A supervisor's config: its own log folder, the shared store.
    fn config(&self, name: &str, environment: &str, policy: &str) -> std::path::PathBuf {
        let d = self.dir.path();
        let tiers: String = (1..=2)
            .map(|t| {
                format!("[[tiers]]\nname = \"t{t}\"\nmodel = \"t{t}\"\nprompt = \"p{t}.md\"\n\n")
            })
            .collect();
        let config = format!(
            "command = [{:?}]\nlog_dir = {:?}\nenvironment = {environment:?}\n\n[policy]\n{policy}\n\n{tiers}",
            d.join("agent.sh").display().to_string(),
            d.join(format!("logs-{name}")).display().to_string(),
        );
        let path = d.join(format!("{name}.toml"));
        std::fs::write(&path, config).unwrap();
        path
    }

    fn ops(&self, config: &Path) -> assert_cmd::Command {
        let mut cmd = agentshape();
        cmd.args([
            "ops",
            "--once",
            "--json",
            "--store",
            &self.store,
            "--config",
        ])
        .arg(config)
        .env("FAKE_DIR", self.dir.path().join("agents"))
        .env_remove("SLOW_T2")
        .timeout(GUARD);
        cmd
    }

    /// Rows of a query on the shared store, every value as text.
    fn sql(&self, query: &str) -> Vec<Vec<String>> {
        match self.store.strip_prefix("sqlite:") {
            Some(path) => crate::support::sql(Path::new(path), query),
            None => PgStore::open(&self.store)
                .unwrap()
                .query_text(query)
                .unwrap(),
        }
    }
}

fn decisions(stdout: &[u8]) -> Vec<String> {
    json_lines(stdout)
        .iter()
        .filter(|v| v["type"] == "decision")
        .map(|v| v["decision"].as_str().unwrap().to_owned())
        .collect()
}

/// Two supervisors of two environments (so their cycles overlap: distinct
/// leases), 10 cycles each, tier 1 always asking to escalate, at most 2
/// escalations per service per 4 h: exactly 2 happen between them.
fn two_supervisors_escalate_exactly_the_allowance(postgres: bool) {
    let fleet = Fleet::new(postgres);
    let policy = "max_escalations_per_service = 2\ncooldown_hours = 4";
    let configs = [
        fleet.config("a", "lab a", policy),
        fleet.config("b", "lab b", policy),
    ];
    // Migrate once first: the race under test is the escalation, not the schema.
    drop(fleet.sql("SELECT 1"));
    let per_supervisor: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = configs
            .iter()
            .map(|config| {
                let fleet = &fleet;
                s.spawn(move || {
                    let mut all = Vec::new();
                    for _ in 0..10 {
                        let out = fleet.ops(config).output().unwrap();
                        assert_exit(&out, 0);
                        all.extend(decisions(&out.stdout));
                    }
                    all
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: Vec<&String> = per_supervisor.iter().flatten().collect();
    assert_eq!(all.len(), 20, "{per_supervisor:?}");
    let escalated = all.iter().filter(|d| **d == "escalate").count();
    let cooled = all.iter().filter(|d| **d == "cooldown").count();
    assert_eq!((escalated, cooled), (2, 18), "{per_supervisor:?}");
    assert_eq!(
        fleet.sql(
            "SELECT (SELECT COUNT(*) FROM sessions WHERE tier = 1),
                    (SELECT COUNT(*) FROM sessions WHERE tier = 2 AND status = 'completed'),
                    (SELECT COUNT(*) FROM leases)"
        ),
        vec![vec!["20", "2", "0"]]
    );
    for table in ["escalations", "escalation_claims"] {
        assert_eq!(
            fleet.sql(&format!(
                "SELECT service, COUNT(*), COUNT(DISTINCT child_id) FROM {table} GROUP BY service ORDER BY service"
            )),
            vec![vec!["jellyfin", "2", "2"], vec!["postgres", "2", "2"]],
            "{table}"
        );
    }
}

#[test]
fn two_supervisors_on_postgres_escalate_exactly_the_allowance() {
    two_supervisors_escalate_exactly_the_allowance(true);
}

#[test]
fn two_supervisors_on_sqlite_escalate_exactly_the_allowance() {
    two_supervisors_escalate_exactly_the_allowance(false);
}

/// Supervisor A (one escalation per service per window, 2 s lease) is
/// killed with SIGKILL while its tier-2 agent runs. B, of the same
/// environment, waits for A's lapsed lease, takes it, runs its cycle, and
/// does not escalate again: A's claim counts, its child having started.
fn a_killed_supervisor_is_taken_over_and_nothing_escalates_twice(postgres: bool) {
    let fleet = Fleet::new(postgres);
    let policy = "max_escalations_per_service = 1\nlease_seconds = 2";
    let a_config = fleet.config("a", "lab", policy);
    let b_config = fleet.config("b", "lab", policy);
    let d = fleet.dir.path();
    let sleeper = d.join("t2.pid");
    let mut a = agentshape_std()
        .args([
            "ops",
            "--once",
            "--json",
            "--store",
            &fleet.store,
            "--config",
        ])
        .arg(&a_config)
        .env("FAKE_DIR", d.join("agents"))
        .env("SLOW_T2", &sleeper)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("A's tier-2 agent running", GUARD, || sleeper.exists());
    wait_until("A's tier-2 session row", GUARD, || {
        fleet.sql("SELECT COUNT(*) FROM sessions WHERE tier = 2 AND status = 'running'")
            == vec![vec!["1"]]
    });
    let a_lease = fleet.sql("SELECT name, holder FROM leases");
    assert_eq!(a_lease.len(), 1, "{a_lease:?}");
    assert_eq!(a_lease[0][0], "ops-cycle:lab");
    assert!(
        a_lease[0][1].contains(&format!(":{}:", a.id())),
        "{a_lease:?}"
    );
    // A renews its lease while its agent runs (the row's expiry moves on).
    let first = fleet.sql("SELECT expires_at FROM leases");
    wait_until("A renewing its lease", GUARD, || {
        let now = fleet.sql("SELECT holder, expires_at FROM leases");
        assert_eq!(now[0][0], a_lease[0][1], "nobody took A's live lease");
        now[0][1] != first[0][0]
    });
    a.kill().unwrap();
    a.wait().unwrap();

    let out = fleet.ops(&b_config).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 0);
    assert!(
        stderr.contains(&format!(
            "waiting for the lease `ops-cycle:lab` held by {}",
            a_lease[0][1]
        )),
        "{stderr}"
    );
    assert_eq!(decisions(&out.stdout), ["cooldown"], "{stderr}");
    // One escalation per service: A's (its child stays `running`, for
    // `ingest`); B's tier 1 ran and was refused; B released the lease.
    assert_eq!(
        fleet.sql(
            "SELECT tier, status, COUNT(*) FROM sessions GROUP BY tier, status ORDER BY tier, status"
        ),
        vec![vec!["1", "completed", "2"], vec!["2", "running", "1"]]
    );
    assert_eq!(
        fleet.sql(
            "SELECT c.service, COUNT(*) FROM escalation_claims c JOIN sessions s ON s.id = c.child_id
             WHERE s.tier = 2 GROUP BY c.service ORDER BY c.service"
        ),
        vec![vec!["jellyfin", "1"], vec!["postgres", "1"]]
    );
    assert_eq!(
        fleet.sql("SELECT (SELECT COUNT(*) FROM escalation_claims), (SELECT COUNT(*) FROM leases)"),
        vec![vec!["2", "0"]]
    );
    // The sleeping agent died with A (parent-death signal); make sure.
    if let Ok(pid) = std::fs::read_to_string(&sleeper) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .stderr(Stdio::null())
            .status();
    }
}

#[test]
fn a_killed_supervisor_on_postgres_is_taken_over_and_nothing_escalates_twice() {
    a_killed_supervisor_is_taken_over_and_nothing_escalates_twice(true);
}

#[test]
fn a_killed_supervisor_on_sqlite_is_taken_over_and_nothing_escalates_twice() {
    a_killed_supervisor_is_taken_over_and_nothing_escalates_twice(false);
}
