//! Issue 13, items 2, 3, 7 and 9: signals reach the agent and end the session
//! as `interrupted`; the agent dies with `run` (parent-death signal); a
//! background child of the agent never holds a run open; session ids cannot
//! leave the log folder; logs are private; the stderr log is capped.
//!
//! Timeouts here are hang guards only: a passing run takes a fraction of them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

use crate::support::{
    agentshape, assert_exit, assert_exit_for, example, fake_agent, json_lines, repo_root, sql,
    wait_until,
};

/// A temp dir with a store and a log folder (not created: `run` creates it).
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn db(&self) -> PathBuf {
        self.path("agentshape.db")
    }
    fn logs(&self) -> PathBuf {
        self.path("logs")
    }
    /// `agentshape run --store .. --log-dir ..` as a plain `std` command, so
    /// the test can signal it while it runs.
    fn run_cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("agentshape").unwrap();
        cmd.current_dir(repo_root())
            .arg("run")
            .arg("--store")
            .arg(self.db())
            .arg("--log-dir")
            .arg(self.logs())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

/// Wait for `child`, failing the test (and killing it) after `guard`.
fn wait_guarded(child: Child, guard: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    if let Ok(out) = rx.recv_timeout(guard) {
        out.unwrap()
    } else {
        signal(pid, "KILL");
        panic!("agentshape run (pid {pid}) still running after {guard:?}");
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args(["-s", sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Whether `pid` is a live process (a zombie waiting to be reaped is not).
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
    !matches!(state, None | Some('Z' | 'X'))
}

/// Kills the processes it holds when dropped, so a failing test leaves no agent behind.
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in &self.0 {
            if alive(*pid) {
                signal(*pid, "KILL");
            }
        }
    }
}

fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

fn meta(env: &Env, id: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(env.logs().join(format!("{id}.meta.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

const GUARD: Duration = Duration::from_secs(30);

/// Start a slow agent that printed 3 lines and waits on a child, then send `sig` to `run`.
fn interrupt_with(sig: &str, code: i32, trap: bool) {
    let env = Env::new();
    let agent_pid = env.path("agent.pid");
    let child_pid = env.path("child.pid");
    let mut cmd = env.run_cmd();
    cmd.args([
        "--profile",
        "claude-ops",
        "--json",
        "--session-id",
        "sig",
        "--",
        &fake_agent(),
    ])
    .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
    .env("FAKE_MODE", "hang")
    .env("FAKE_LINES", "3")
    .env("FAKE_PIDFILE", &child_pid)
    .env("FAKE_SELF_PIDFILE", &agent_pid);
    if trap {
        cmd.env("FAKE_TRAP", "1");
    }
    let run = cmd.spawn().unwrap();
    let run_pid = run.id();
    let log = env.logs().join("sig.ndjson");
    wait_until(
        "the agent to print 3 lines and start its child",
        GUARD,
        || read_pid(&child_pid).is_some() && line_count(&log) == 3,
    );
    let agent = read_pid(&agent_pid).unwrap();
    let grandchild = read_pid(&child_pid).unwrap();
    let _reap = Reap(vec![agent, grandchild]);
    assert!(alive(agent) && alive(grandchild));
    signal(run_pid, sig);
    let out = wait_guarded(run, GUARD);
    assert_exit(&out, code);
    // The agent's whole group is gone: the agent and the child it started.
    wait_until("the agent group to die", Duration::from_secs(5), || {
        !alive(agent) && !alive(grandchild)
    });
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "interrupted");
    assert_eq!(meta(&env, "sig")["status"], "interrupted");
    let rows = sql(
        &env.db(),
        "SELECT status, error, error_category FROM sessions",
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], "interrupted");
    assert!(rows[0][1].contains(&format!("SIG{sig}")), "{rows:?}");
    assert_eq!(rows[0][2], "NULL");
    // What the agent printed before the signal is kept.
    let want: Vec<String> = std::fs::read_to_string(example("healthy-structured.ndjson"))
        .unwrap()
        .lines()
        .take(3)
        .map(str::to_owned)
        .collect();
    let got: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn sigterm_reaches_the_agent_group_and_the_session_is_interrupted() {
    interrupt_with("TERM", 143, false);
}

#[test]
fn sigint_reaches_the_agent_group_and_the_session_is_interrupted() {
    // A background `sleep` of a non-interactive shell ignores SIGINT: it dies
    // when the group is killed after the agent exits.
    interrupt_with("INT", 130, false);
}

#[test]
fn sighup_to_an_agent_ignoring_it_kills_the_group_after_the_grace_period() {
    interrupt_with("HUP", 129, true);
}

#[test]
fn sigkill_of_run_takes_the_quiet_agent_with_it() {
    let env = Env::new();
    let agent_pid = env.path("agent.pid");
    let child_pid = env.path("child.pid");
    let run = env
        .run_cmd()
        .args(["--profile", "claude-ops", "--", &fake_agent()])
        .env("FAKE_MODE", "hang")
        .env("FAKE_PIDFILE", &child_pid)
        .env("FAKE_SELF_PIDFILE", &agent_pid)
        .spawn()
        .unwrap();
    wait_until("the agent to start", GUARD, || {
        read_pid(&child_pid).is_some()
    });
    let agent = read_pid(&agent_pid).unwrap();
    let grandchild = read_pid(&child_pid).unwrap();
    let _reap = Reap(vec![agent, grandchild]);
    signal(run.id(), "KILL");
    let _ = wait_guarded(run, GUARD);
    // Parent-death signal: the kernel ends the agent with `run`. (Its own
    // children are not covered by it: see Note [Parent death] in `process`.)
    let start = Instant::now();
    while alive(agent) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(agent), "agent {agent} outlived `run`");
}

#[test]
fn a_background_child_holding_stdout_does_not_hold_the_run() {
    let env = Env::new();
    let child_pid = env.path("child.pid");
    let run = env
        .run_cmd()
        .args(["--profile", "claude-ops", "--json", "--", &fake_agent()])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_MODE", "background")
        .env("FAKE_PIDFILE", &child_pid)
        .spawn()
        .unwrap();
    // The child sleeps 30 s: a run waiting for it would trip this guard.
    let out = wait_guarded(run, Duration::from_secs(15));
    let grandchild = read_pid(&child_pid).unwrap();
    let still = alive(grandchild);
    let _reap = Reap(vec![grandchild]);
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "completed");
    assert_eq!(v["method"], "structured");
    assert!(!still, "the background child {grandchild} outlived the run");
    assert_eq!(
        sql(&env.db(), "SELECT status FROM sessions"),
        vec![vec!["completed"]]
    );
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn hostile_session_ids_are_refused_and_write_nothing() {
    let env = Env::new();
    let abs = env.path("abs").display().to_string();
    let long = "x".repeat(129);
    for id in [
        "../x",
        abs.as_str(),
        "",
        ".hidden",
        "a/b",
        &long,
        "a\nb",
        "a b",
    ] {
        let out = agentshape()
            .args(["run", "--store"])
            .arg(env.db())
            .arg("--log-dir")
            .arg(env.logs())
            .args(["--replay", &example("healthy-structured.ndjson")])
            .args(["--profile", "claude-ops", "--session-id", id])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 64, format_args!("id {id:?}"));
        assert!(err.contains("session id"), "id {id:?}: {err}");
        assert!(err.contains("[A-Za-z0-9._-]"), "the rule is named: {err}");
    }
    // Nothing was written anywhere: no log, no store.
    assert_eq!(files_under(env.dir.path()), Vec::<String>::new());
}

#[test]
fn a_reused_session_id_is_refused_and_the_first_log_kept() {
    let env = Env::new();
    let healthy = example("healthy-structured.ndjson");
    let run = |id: &str| {
        agentshape()
            .args(["run", "--store"])
            .arg(env.db())
            .arg("--log-dir")
            .arg(env.logs())
            .args(["--replay", &healthy, "--profile", "claude-ops"])
            .args(["--session-id", id])
            .output()
            .unwrap()
    };
    assert_exit(&run("same"), 0);
    let second = run("same");
    let err = String::from_utf8_lossy(&second.stderr);
    assert_exit(&second, 64);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(
        std::fs::read(env.logs().join("same.ndjson")).unwrap(),
        std::fs::read(&healthy).unwrap(),
        "the first session's log is untouched"
    );
    assert_eq!(
        sql(&env.db(), "SELECT id, status FROM sessions"),
        vec![vec!["same", "completed"]]
    );
}

#[test]
fn a_symlink_at_a_log_path_is_never_followed() {
    let env = Env::new();
    std::fs::create_dir(env.logs()).unwrap();
    for (i, suffix) in ["ndjson", "meta.json", "stderr.log"].iter().enumerate() {
        let target = env.path(&format!("target-{i}"));
        std::fs::write(&target, "precious").unwrap();
        let id = format!("victim-{i}");
        std::os::unix::fs::symlink(&target, env.logs().join(format!("{id}.{suffix}"))).unwrap();
        let out = env
            .run_cmd()
            .args(["--profile", "claude-ops", "--session-id", &id, "--"])
            .arg(fake_agent())
            .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 64, format_args!("{suffix}"));
        assert!(err.contains("already exists"), "{suffix}: {err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        assert!(env.logs().join(format!("{id}.{suffix}")).is_symlink());
    }
}

#[test]
fn logs_are_private_under_umask_022() {
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("agentshape");
    let out = Command::new("sh")
        .current_dir(repo_root())
        .args(["-c", "umask 022; exec \"$0\" \"$@\""])
        .arg(&bin)
        .arg("run")
        .arg("--store")
        .arg(env.db())
        .arg("--log-dir")
        .arg(env.logs())
        .args(["--profile", "claude-ops", "--session-id", "modes", "--"])
        .arg(fake_agent())
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let mode = |p: PathBuf| std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(env.logs()), 0o700, "log folder");
    for suffix in ["ndjson", "stderr.log", "meta.json"] {
        let p = env.logs().join(format!("modes.{suffix}"));
        assert_eq!(mode(p), 0o600, "{suffix}");
    }
    assert_eq!(files_under(&env.logs()).len(), 3, "no temp file left");
}

#[test]
fn the_stderr_log_is_capped_and_says_what_it_dropped() {
    const CAP: u64 = 16 << 20;
    let env = Env::new();
    let out = env
        .run_cmd()
        .args([
            "--profile",
            "claude-ops",
            "--json",
            "--session-id",
            "chatty",
            "--",
            &fake_agent(),
        ])
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_STDERR_BYTES", "20000000")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(json_lines(&out.stdout)[0]["session"]["status"], "completed");
    let log = std::fs::read(env.logs().join("chatty.stderr.log")).unwrap();
    let len = log.len() as u64;
    assert!(len > CAP && len <= CAP + 256, "stderr log is {len} bytes");
    assert!(log.starts_with(b"fake-agent: model=none"));
    let tail = String::from_utf8_lossy(&log[usize::try_from(CAP).unwrap()..]).into_owned();
    let head_line = "fake-agent: model=none mode=replay transcript=".len()
        + example("healthy-structured.ndjson").len()
        + 1;
    let dropped = 20_000_000 + head_line as u64 - CAP;
    assert!(
        tail.contains(&format!("{dropped} more bytes of stderr were dropped")),
        "{tail}"
    );
    assert_eq!(meta(&env, "chatty")["stderr_dropped_bytes"], dropped);
}

#[test]
fn a_paced_replay_is_interruptible_too() {
    let env = Env::new();
    let healthy = example("healthy-structured.ndjson");
    let run = env
        .run_cmd()
        .args(["--replay", &healthy, "--pace", "200", "--session-id", "rp"])
        .args(["--profile", "claude-ops"])
        .spawn()
        .unwrap();
    let log = env.logs().join("rp.ndjson");
    wait_until("the first replayed line", GUARD, || line_count(&log) >= 1);
    signal(run.id(), "INT");
    let out = wait_guarded(run, GUARD);
    assert_exit(&out, 130);
    let total = std::fs::read_to_string(&healthy).unwrap().lines().count();
    assert!(line_count(&log) < total);
    assert_eq!(meta(&env, "rp")["status"], "interrupted");
    assert_eq!(
        sql(&env.db(), "SELECT status, error FROM sessions"),
        vec![vec!["interrupted", "interrupted by SIGINT"]]
    );
}

#[test]
fn ops_passes_a_signal_on_and_stops() {
    let env = Env::new();
    let d = env.dir.path();
    std::fs::write(d.join("p1.md"), "tier 1 prompt").unwrap();
    let config = format!(
        "command = [{:?}]\nstore = {:?}\nlog_dir = {:?}\n\n[[tiers]]\nname = \"t1\"\nmodel = \"t1\"\nprompt = \"p1.md\"\n",
        fake_agent(),
        env.db().display().to_string(),
        env.logs().display().to_string(),
    );
    std::fs::write(d.join("ops.toml"), config).unwrap();
    let agent_pid = env.path("agent.pid");
    let child_pid = env.path("child.pid");
    let ops = Command::cargo_bin("agentshape")
        .unwrap()
        .current_dir(repo_root())
        .args(["ops", "--json", "--config"])
        .arg(d.join("ops.toml"))
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .env("FAKE_MODE", "hang")
        .env("FAKE_LINES", "2")
        .env("FAKE_PIDFILE", &child_pid)
        .env("FAKE_SELF_PIDFILE", &agent_pid)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the agent to start its child", GUARD, || {
        read_pid(&child_pid).is_some()
    });
    let agent = read_pid(&agent_pid).unwrap();
    let grandchild = read_pid(&child_pid).unwrap();
    let _reap = Reap(vec![agent, grandchild]);
    signal(ops.id(), "TERM");
    let out = wait_guarded(ops, GUARD);
    assert_exit(&out, 143);
    wait_until("the agent group to die", Duration::from_secs(5), || {
        !alive(agent) && !alive(grandchild)
    });
    assert_eq!(
        sql(&env.db(), "SELECT tier, status, error FROM sessions"),
        vec![vec!["1", "interrupted", "interrupted by SIGTERM"]]
    );
}
