//! `agentshape hook install|uninstall` (issue 30): Claude Code's settings
//! file edited in place, every other setting and hook kept, idempotent,
//! atomic, refused when not JSON, shown as a diff with `--dry-run`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, json_lines};

/// A temporary project folder (the working directory) and home folder.
struct Dirs {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let project = root.join("project");
    let home = root.join("home");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    Dirs {
        _tmp: tmp,
        project,
        home,
    }
}

impl Dirs {
    /// `agentshape hook ARGS…` run in the project with HOME pointing at the temp home.
    fn run(&self, args: &[&str]) -> std::process::Output {
        agentshape()
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("AGENTSHAPE_STORE")
            .arg("hook")
            .args(args)
            .output()
            .unwrap()
    }

    fn settings(&self) -> PathBuf {
        self.project.join(".claude/settings.json")
    }

    fn write_settings(&self, text: &str) -> PathBuf {
        let path = self.settings();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The absolute path the running binary gives itself.
fn exe() -> String {
    std::fs::canonicalize(assert_cmd::cargo::cargo_bin("agentshape"))
        .unwrap()
        .display()
        .to_string()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A settings file with other settings and hooks, formatted unusually.
const OTHERS: &str = "{\"permissions\":{\"allow\":[\"Bash(ls:*)\"]},\n\t\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}],\n\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify.sh\", \"timeout\": 5}]}]},\n  \"model\": \"opus\"}";

#[test]
fn project_scope_creates_the_file_with_absolute_paths() {
    let d = dirs();
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "installed Stop hook in .claude/settings.json\n"
    );
    let want_cmd = format!(
        "{} hook stop --profile claude-ops --store {}/agentshape.db",
        exe(),
        d.project.display()
    );
    assert_eq!(
        read_json(&d.settings()),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": want_cmd, "timeout": 10}]}]}})
    );
    let text = std::fs::read_to_string(d.settings()).unwrap();
    assert!(
        text.starts_with("{\n  \"hooks\": {\n    \"Stop\": ["),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    // No temporary file left beside it.
    let names: Vec<String> = std::fs::read_dir(d.project.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["settings.json"]);
}

#[test]
fn profile_files_and_flags_go_into_the_command_quoted() {
    let d = dirs();
    let sub = d.project.join("my profiles");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(
        crate::support::repo_root().join("schemas/agent-response.json"),
        sub.join("schema.json"),
    )
    .unwrap();
    std::fs::write(
        sub.join("rev.toml"),
        "name = \"rev\"\nschema = \"schema.json\"\n",
    )
    .unwrap();
    let out = d.run(&[
        "install",
        "--event",
        "subagent-stop",
        "--profile-for",
        "reviewer=my profiles/rev.toml",
        "--profile-for",
        "tester=code-review",
        "--max-blocks",
        "2",
        "--store",
        "sqlite:data/a.db",
        "--json",
    ]);
    assert_exit(&out, 0);
    let want_cmd = format!(
        "{} hook subagent-stop --max-blocks 2 --profile-for 'reviewer={}/my profiles/rev.toml' --profile-for tester=code-review --store {}/data/a.db",
        exe(),
        d.project.display(),
        d.project.display()
    );
    assert_eq!(
        json_lines(&out.stdout),
        [
            json!({"event": "SubagentStop", "settings": ".claude/settings.json", "change": "added", "command": want_cmd})
        ]
    );
    assert_eq!(
        read_json(&d.settings())["hooks"]["SubagentStop"][0]["hooks"][0]["command"],
        json!(want_cmd)
    );
    // A missing profile file is refused before anything is written (66).
    let out = d.run(&[
        "install",
        "--profile",
        "./nope.toml",
        "--settings",
        "other.json",
    ]);
    assert_exit(&out, 66);
    assert!(!d.project.join("other.json").exists());
}

#[test]
fn user_scope_writes_under_home() {
    let d = dirs();
    let out = d.run(&[
        "install",
        "--scope",
        "user",
        "--event",
        "post-tool-use",
        "--store",
        "postgres://ops@db.internal/agentshape",
        "--json",
    ]);
    assert_exit(&out, 0);
    let path = d.home.join(".claude/settings.json");
    let want_cmd = format!(
        "{} hook post-tool-use --store postgres://ops@db.internal/agentshape",
        exe()
    );
    assert_eq!(
        json_lines(&out.stdout),
        [
            json!({"event": "PostToolUse", "settings": path.display().to_string(), "change": "added", "command": want_cmd})
        ]
    );
    assert_eq!(
        read_json(&path),
        json!({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": want_cmd, "timeout": 10}]}]}})
    );
    assert!(!d.project.join(".claude").exists());
}

#[test]
fn dry_run_shows_a_diff_and_writes_nothing() {
    let d = dirs();
    // No file yet: a diff from /dev/null, and no `.claude/` made.
    let out = d.run(&["install", "--profile", "claude-ops", "--dry-run"]);
    assert_exit(&out, 0);
    let diff = stdout(&out);
    assert!(
        diff.starts_with("--- /dev/null\n+++ .claude/settings.json\n@@ -0,0 +1,15 @@\n+{\n"),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("+            \"command\": \"{} hook stop", exe())),
        "{diff}"
    );
    assert!(stderr(&out).contains("would install Stop hook in .claude/settings.json"));
    assert!(!d.project.join(".claude").exists());

    let path = d.write_settings(OTHERS);
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let out = d.run(&["install", "--profile", "claude-ops", "--dry-run"]);
    assert_exit(&out, 0);
    let diff = stdout(&out);
    // One line changes (issue 40: the file is edited as text, laid out as
    // it was; the whole file was rewritten before).
    assert!(
        diff.starts_with("--- .claude/settings.json\n+++ .claude/settings.json\n@@ -1,4 +1,4 @@\n {\"permissions\""),
        "{diff}"
    );
    assert_eq!(
        diff.lines().filter(|l| l.starts_with('-')).count(),
        2,
        "{diff}"
    );
    assert!(
        diff.contains("\n-\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify.sh\", \"timeout\": 5}]}]},\n"),
        "{diff}"
    );
    assert!(diff.contains("\n   \"model\": \"opus\"}\n"), "{diff}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), OTHERS);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
    // The diff is what a real install then does.
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 0);
    let new = std::fs::read_to_string(&path).unwrap();
    let changed = new.lines().find(|l| l.contains(" hook stop ")).unwrap();
    assert!(diff.contains(&format!("\n+{changed}\n")), "{diff}");
    assert_eq!(new.lines().count(), OTHERS.lines().count());
}

#[test]
fn not_json_is_refused_and_left_alone() {
    let d = dirs();
    let bad = "{\n  \"model\": \"opus\",,\n  \"hooks\": {}\n}\n";
    let path = d.write_settings(bad);
    for args in [
        &["install", "--profile", "claude-ops"][..],
        &["install", "--profile", "claude-ops", "--dry-run"],
        &["uninstall"],
    ] {
        let out = d.run(args);
        assert_exit(&out, 64);
        assert_eq!(
            stderr(&out),
            "agentshape: .claude/settings.json: not valid JSON at line 2, column 19: key must be a string\n",
            "{args:?}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
    }
    // JSON of the wrong shape is refused naming the key.
    std::fs::write(&path, "{\"hooks\": {\"Stop\": {}}}").unwrap();
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 64);
    assert_eq!(
        stderr(&out),
        "agentshape: .claude/settings.json: `hooks.Stop` is an object, expected an array of matcher groups\n"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"hooks\": {\"Stop\": {}}}"
    );
}

#[test]
fn installing_twice_changes_nothing() {
    let d = dirs();
    let path = d.write_settings(OTHERS);
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 0);
    let first = std::fs::read(&path).unwrap();
    // An old mtime: a rewrite would show as a new one.
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "Stop hook already installed in .claude/settings.json\n"
    );
    assert_eq!(std::fs::read(&path).unwrap(), first);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), old);
    // Another profile: the entry is replaced in place, not added.
    let out = d.run(&["install", "--profile", "code-review", "--json"]);
    assert_exit(&out, 0);
    assert_eq!(json_lines(&out.stdout)[0]["change"], "replaced");
    let stop = &read_json(&path)["hooks"]["Stop"];
    assert_eq!(stop.as_array().unwrap().len(), 2, "{stop}");
    assert!(
        stop[1]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains(" hook stop --profile code-review ")
    );
}

#[test]
fn uninstall_after_install_restores_the_original() {
    let d = dirs();
    let path = d.write_settings(OTHERS);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = d.run(&[
        "install",
        "--profile",
        "claude-ops",
        "--event",
        "stop",
        "--event",
        "subagent-stop",
        "--event",
        "post-tool-use",
    ]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "installed Stop hook in .claude/settings.json\n\
         installed SubagentStop hook in .claude/settings.json\n\
         installed PostToolUse hook in .claude/settings.json\n"
    );
    let installed = read_json(&path);
    // Key order kept: the file's own keys first, ours after.
    let keys: Vec<&String> = installed["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["PreToolUse", "Stop", "SubagentStop", "PostToolUse"]);
    let top: Vec<&String> = installed.as_object().unwrap().keys().collect();
    assert_eq!(top, ["permissions", "hooks", "model"]);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let out = d.run(&["uninstall", "--dry-run"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with('-') && l.contains("\"matcher\":\"*\"")),
        "{}",
        stdout(&out)
    );
    assert_eq!(read_json(&path), installed);

    let out = d.run(&["uninstall"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "removed Stop hook from .claude/settings.json\n\
         removed SubagentStop hook from .claude/settings.json\n\
         removed PostToolUse hook from .claude/settings.json\n"
    );
    let original: Value = serde_json::from_str(OTHERS).unwrap();
    assert_eq!(read_json(&path), original);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Again: nothing to remove, the file untouched.
    let bytes = std::fs::read(&path).unwrap();
    let out = d.run(&["uninstall", "--event", "stop", "--json"]);
    assert_exit(&out, 0);
    assert_eq!(
        json_lines(&out.stdout),
        [
            json!({"event": "Stop", "settings": ".claude/settings.json", "change": "absent", "command": null})
        ]
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // No file at all: nothing created.
    let out = d.run(&["uninstall", "--scope", "user"]);
    assert_exit(&out, 0);
    assert!(!d.home.join(".claude").exists());
}

#[test]
fn a_store_url_with_a_password_is_refused() {
    let d = dirs();
    let out = d.run(&[
        "install",
        "--profile",
        "claude-ops",
        "--store",
        "postgres://ops:s3cret@db.internal/agentshape",
    ]);
    assert_exit(&out, 64);
    let err = stderr(&out);
    assert!(!err.contains("s3cret"), "{err}");
    assert!(
        err.contains("holds a password") && err.contains("AGENTSHAPE_STORE"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!d.project.join(".claude").exists());

    // From AGENTSHAPE_STORE: the entry carries no --store, the hook reads the variable.
    let out = agentshape()
        .current_dir(&d.project)
        .env("HOME", &d.home)
        .env(
            "AGENTSHAPE_STORE",
            "postgres://ops:s3cret@db.internal/agentshape",
        )
        .args(["hook", "install", "--profile", "claude-ops"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = std::fs::read_to_string(d.settings()).unwrap();
    assert!(
        !text.contains("s3cret") && !text.contains("--store"),
        "{text}"
    );
    assert!(stderr(&out).contains("AGENTSHAPE_STORE"));
}

#[test]
fn a_symlinked_settings_file_stays_a_link() {
    let d = dirs();
    let real = d.home.join("dotfiles-settings.json");
    std::fs::write(&real, "{\"model\": \"opus\"}").unwrap();
    std::fs::create_dir_all(d.project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&real, d.settings()).unwrap();
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 0);
    assert!(
        std::fs::symlink_metadata(d.settings())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read_json(&real)["model"], "opus");
    assert!(read_json(&real)["hooks"]["Stop"].is_array());
}

#[test]
fn a_file_that_cannot_be_written_is_74_and_nothing_is_left_behind() {
    let d = dirs();
    // A settings link into a folder that does not exist: nothing to read,
    // nowhere to write.
    std::fs::create_dir_all(d.project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(d.home.join("gone/settings.json"), d.settings()).unwrap();
    let out = d.run(&["install", "--profile", "claude-ops"]);
    assert_exit(&out, 74);
    let err = stderr(&out);
    assert!(
        err.starts_with("agentshape: cannot write .claude/settings.json: "),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let names: Vec<String> = std::fs::read_dir(d.project.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["settings.json"]);
    assert!(!d.home.join("gone").exists());
}

/// Issue 40: install rewrote the user's file (`123456789012345678901234567890`
/// became `1.2345678901234568e+29`, the final newline went). Every byte
/// not ours stays, and uninstall gives the file back byte for byte.
#[test]
fn install_keeps_every_other_byte_and_uninstall_gives_the_file_back() {
    let originals = [
        // Big integers, odd indentation, unicode escapes, a final newline.
        "{\n   \"big\": 123456789012345678901234567890,\n   \"float\": 1.50,\n   \"name\": \"caf\\u00e9 \\ud83d\\ude00\",\n   \"permissions\" : { \"allow\": [ \"Bash(ls:*)\" ] }\n}\n",
        // Tabs, other hooks already there, no final newline.
        "{\n\t\"hooks\": {\n\t\t\"PreToolUse\": [ {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]} ],\n\t\t\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./notify.sh\"}]}]\n\t},\n\t\"n\": -0.0e+5\n}",
        // One line.
        "{\"model\":\"opus\",\"n\":1e2}",
        OTHERS,
    ];
    for original in originals {
        let d = dirs();
        let path = d.write_settings(original);
        let out = d.run(&[
            "install",
            "--event",
            "stop",
            "--event",
            "post-tool-use",
            "--profile",
            "claude-ops",
        ]);
        assert_exit(&out, 0);
        let installed = std::fs::read_to_string(&path).unwrap();
        // What was there is there, value for value and number for number.
        let before: serde_json::Map<String, Value> = serde_json::from_str(original).unwrap();
        let after: serde_json::Map<String, Value> = serde_json::from_str(&installed).unwrap();
        for (k, v) in &before {
            if k != "hooks" {
                assert_eq!(after.get(k), Some(v), "{k} in {installed}");
            }
        }
        assert!(after["hooks"]["Stop"].is_array(), "{installed}");
        assert!(after["hooks"]["PostToolUse"].is_array(), "{installed}");
        assert_eq!(
            original.ends_with('\n'),
            installed.ends_with('\n'),
            "{installed:?}"
        );
        for verbatim in [
            "123456789012345678901234567890",
            "1.50",
            "\\u00e9",
            "-0.0e+5",
            "1e2",
        ] {
            assert_eq!(
                original.contains(verbatim),
                installed.contains(verbatim),
                "{verbatim} in {installed}"
            );
        }
        let out = d.run(&["uninstall"]);
        assert_exit(&out, 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    }
}

/// Issue 40: two installs at once on one file both said "installed" and
/// one event was lost. Edits take turns: both events are there, each
/// time.
#[test]
fn two_installs_at_once_both_land() {
    for _ in 0..5 {
        let d = dirs();
        let path = d.write_settings("{\n  \"model\": \"opus\"\n}\n");
        let run = |event: &'static str| {
            let project = d.project.clone();
            let home = d.home.clone();
            std::thread::spawn(move || {
                agentshape()
                    .current_dir(project)
                    .env("HOME", home)
                    .env_remove("AGENTSHAPE_STORE")
                    .args([
                        "hook",
                        "install",
                        "--event",
                        event,
                        "--profile",
                        "claude-ops",
                    ])
                    .output()
                    .unwrap()
            })
        };
        let (a, b) = (run("stop"), run("subagent-stop"));
        for out in [a.join().unwrap(), b.join().unwrap()] {
            assert_exit(&out, 0);
            assert!(stdout(&out).starts_with("installed "), "{}", stdout(&out));
        }
        let v = read_json(&path);
        assert_eq!(v["model"], "opus");
        assert!(v["hooks"]["Stop"].is_array(), "{v}");
        assert!(v["hooks"]["SubagentStop"].is_array(), "{v}");
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["settings.json"], "nothing left beside it");
    }
}
