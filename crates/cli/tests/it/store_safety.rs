//! Issue 13, the store: many writers, sessions visible from their start,
//! read-only commands that never create files, one exit code per kind of
//! store failure. The store is checked with SQL on the file.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::support::{agentshape, assert_exit, assert_exit_for, example, json_lines, sql};

fn bin() -> std::process::Command {
    crate::support::agentshape_std()
}

fn spawn_run(db: &Path, logs: &Path, id: &str) -> Child {
    bin()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .arg("--store")
        .arg(db)
        .arg("--log-dir")
        .arg(logs)
        .args(["--session-id", id])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn parallel_runs(db: &Path, logs: &Path, n: usize) {
    let children: Vec<(String, Child)> = (0..n)
        .map(|i| {
            let id = format!("par-{i:02}");
            let child = spawn_run(db, logs, &id);
            (id, child)
        })
        .collect();
    for (id, child) in children {
        let out = child.wait_with_output().unwrap();
        assert_exit_for(&out, 0, format_args!("{id}"));
    }
    let rows = sql(
        db,
        "SELECT id, COUNT(*), MAX(status) FROM sessions WHERE id LIKE 'par-%' GROUP BY id ORDER BY id",
    );
    let want: Vec<Vec<String>> = (0..n)
        .map(|i| vec![format!("par-{i:02}"), "1".into(), "completed".into()])
        .collect();
    assert_eq!(rows, want, "every session exactly once");
}

#[test]
fn twenty_parallel_runs_on_a_new_store_store_every_session() {
    let dir = tempfile::tempdir().unwrap();
    parallel_runs(&dir.path().join("new.db"), &dir.path().join("logs"), 20);
}

#[test]
fn twenty_parallel_runs_on_an_existing_store_store_every_session() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    let logs = dir.path().join("logs");
    let out = spawn_run(&db, &logs, "first").wait_with_output().unwrap();
    assert_exit(&out, 0);
    parallel_runs(&db, &logs, 20);
    assert_eq!(sql(&db, "SELECT COUNT(*) FROM sessions"), vec![vec!["21"]]);
}

fn wait_for(what: &str, ok: impl FnMut() -> bool) {
    // A hang guard only: the condition normally holds within a second.
    crate::support::wait_until(what, Duration::from_secs(60), ok);
}

#[test]
fn a_killed_run_is_visible_and_ingest_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let logs = dir.path().join("logs");
    let mut child = bin()
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--pace",
            "300",
            "--replay",
        ])
        .arg(example("healthy-structured.ndjson"))
        .arg("--store")
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .args(["--session-id", "killed"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = logs.join("killed.ndjson");
    wait_for("two logged lines", || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() >= 2)
    });
    child.kill().unwrap(); // SIGKILL: no final write
    child.wait().unwrap();

    let out = agentshape()
        .args(["sessions", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("killed"), "{text}");
    assert!(text.contains("running") || text.contains("lost"), "{text}");
    assert!(
        text.contains(&format!("agentshape ingest {}", log.display())),
        "{text}"
    );

    let out = agentshape()
        .args(["ingest", "--store"])
        .arg(&db)
        .arg(&log)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(
        sql(
            &db,
            "SELECT id, status, error LIKE '%stopped before the session ended%' FROM sessions"
        ),
        vec![vec!["killed", "interrupted", "1"]]
    );
}

#[test]
fn sessions_names_logs_the_store_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let logs = dir.path().join("logs");
    // A session stored in another store: its log is in `logs`, not in `a.db`.
    let other = dir.path().join("other.db");
    assert_eq!(
        spawn_run(&other, &logs, "elsewhere").wait().unwrap().code(),
        Some(0)
    );
    assert_eq!(
        spawn_run(&db, &logs, "here").wait().unwrap().code(),
        Some(0)
    );
    let out = agentshape()
        .args(["sessions", "--json", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .output()
        .unwrap();
    let o = &json_lines(&out.stdout)[0];
    let unstored = o["unstored_logs"].as_array().unwrap();
    assert_eq!(unstored.len(), 1, "{o}");
    assert!(unstored[0].as_str().unwrap().ends_with("elsewhere.ndjson"));
    assert!(
        o["ingest"]
            .as_str()
            .unwrap()
            .starts_with("agentshape ingest"),
        "{o}"
    );
}

#[test]
fn read_only_commands_never_create_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo.db");
    for args in [&["sessions"][..], &["memories", "list"][..]] {
        let out = agentshape()
            .args(args)
            .arg("--store")
            .arg(&db)
            .output()
            .unwrap();
        assert_exit_for(&out, 66, format_args!("{args:?}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not exist"), "{err}");
        assert!(!db.exists(), "{args:?} created the store");
    }
}

#[test]
fn random_bytes_are_not_a_database_65() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("junk.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0])
        .collect();
    std::fs::write(&db, &bytes).unwrap();
    for args in [&["sessions"][..], &["memories", "list"][..]] {
        let out = agentshape()
            .args(args)
            .arg("--store")
            .arg(&db)
            .output()
            .unwrap();
        assert_exit_for(&out, 65, format_args!("{args:?}"));
    }
    let out = spawn_run(&db, &dir.path().join("logs"), "x")
        .wait_with_output()
        .unwrap();
    assert_exit(&out, 65);
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "the file is left alone");
}

/// Make `path` unwritable even for root (`chattr +i`); false when the
/// machine cannot (then the test has nothing to check).
fn make_unwritable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().append(true).open(path).is_err() {
        return true;
    }
    std::process::Command::new("chattr")
        .arg("+i")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
        && std::fs::OpenOptions::new().append(true).open(path).is_err()
}

struct Immutable(PathBuf);
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status();
    }
}

#[test]
fn a_store_that_cannot_be_written_is_73_and_the_log_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ro.db");
    let logs = dir.path().join("logs");
    assert_eq!(
        spawn_run(&db, &logs, "first").wait().unwrap().code(),
        Some(0)
    );
    let _guard = Immutable(db.clone());
    if !make_unwritable(&db) {
        eprintln!("skipped: cannot make a file unwritable here");
        return;
    }
    let out = spawn_run(&db, &logs, "second").wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 73);
    let log = logs.join("second.ndjson");
    // The exact command: the store is named (Note [Store outage]).
    assert!(
        err.contains(&format!(
            "agentshape ingest --store {} {}",
            db.display(),
            log.display()
        )),
        "{err}"
    );
    assert!(log.exists(), "the forensic log is kept");
}

#[test]
fn a_store_locked_past_the_retries_is_75() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locked.db");
    let logs = dir.path().join("logs");
    assert_eq!(
        spawn_run(&db, &logs, "first").wait().unwrap().code(),
        Some(0)
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = bin()
        .args(["run", "--profile", "claude-ops", "--replay"])
        .arg(example("healthy-structured.ndjson"))
        .arg("--store")
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .args(["--session-id", "blocked"])
        .env("AGENTSHAPE_STORE_BUSY_MS", "50")
        .env("AGENTSHAPE_STORE_RETRIES", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 75);
    assert!(err.contains("agentshape ingest"), "{err}");
    conn.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn new_store_files_are_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("private.db");
    let logs = dir.path().join("logs");
    assert_eq!(spawn_run(&db, &logs, "one").wait().unwrap().code(), Some(0));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&db), 0o600);
    // Keep a connection open so the -wal file outlives the next run.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let _: i64 = conn
        .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(spawn_run(&db, &logs, "two").wait().unwrap().code(), Some(0));
    let wal = dir.path().join("private.db-wal");
    assert!(wal.exists());
    assert_eq!(mode(&wal), 0o600);
}

#[test]
fn a_final_write_that_fails_still_shows_the_outcome_and_names_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("late.db");
    let logs = dir.path().join("logs");
    let child = bin()
        .args([
            "run",
            "--profile",
            "claude-ops",
            "--json",
            "--pace",
            "300",
            "--replay",
        ])
        .arg(example("healthy-structured.ndjson"))
        .arg("--store")
        .arg(&db)
        .arg("--log-dir")
        .arg(&logs)
        .args(["--session-id", "late"])
        .env("AGENTSHAPE_STORE_BUSY_MS", "50")
        .env("AGENTSHAPE_STORE_RETRIES", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = logs.join("late.ndjson");
    // The running row is written before the first line is logged.
    wait_for("the first logged line", || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.lines().count() >= 1)
    });
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.busy_timeout(Duration::from_secs(30)).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = child.wait_with_output().unwrap();
    conn.execute_batch("ROLLBACK").unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 75);
    // The exact command: the store is named (Note [Store outage]).
    assert!(
        err.contains(&format!(
            "agentshape ingest --store {} {}",
            db.display(),
            log.display()
        )),
        "{err}"
    );
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["session"]["status"], "completed", "{v}");
    assert!(v["session"]["store_error"].is_string(), "{v}");
    assert_eq!(
        sql(&db, "SELECT status FROM sessions"),
        vec![vec!["running"]]
    );
    let ingest = agentshape()
        .args(["ingest", "--store"])
        .arg(&db)
        .arg(&log)
        .output()
        .unwrap();
    assert_exit(&ingest, 0);
    assert_eq!(
        sql(&db, "SELECT id, status FROM sessions"),
        vec![vec!["late", "completed"]]
    );
}
