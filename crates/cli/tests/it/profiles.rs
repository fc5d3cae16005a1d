//! Profiles as files (issue 14): `--profile NAME|PATH`, `profile list|show`,
//! a custom agent's own markers end to end, and bad files (exit 64 naming
//! the file and the key).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::{
    agentshape, assert_exit, assert_exit_for, example, json_lines, repo_root, sql,
};

/// A folder holding `name.toml` with `text`, and the agent-response schema as `schema.json`.
fn profile_dir(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo_root().join("schemas/agent-response.json"),
        dir.path().join("schema.json"),
    )
    .unwrap();
    let path = dir.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// A homelab bot of the user's own: `ALERT <level> <service> <message>`
/// lines, no JSON expected from prose (a fenced echo is not its answer).
const HOMELAB: &str = r#"
name = "homelab-bot"
schema = "schema.json"
[extract]
methods = ["structured", "markers"]
[markers]
mode = "collect"
summary = "summary"
summary_default = "{events} alert(s)"
fixed = { memories = [], escalation = { needed = false }, services_checked = [] }
[[markers.rule]]
prefix = "ALERT"
at = "line-start"
fields = ["level", "service", "message"]
separator = " "
kinds = { message = "text" }
values = { level = ["info", "warning", "critical"] }
into = "events"
"#;

const REPLY: &str = "Nightly sweep done.\n\
    ALERT Critical nginx cert expires in 3 days\n\
    ALERT bogus x not a level\n\
    ```json\n{\"summary\": \"echo\", \"events\": []}\n```\n\
    ALERT info jellyfin back to 200\n";

fn want_value() -> Value {
    json!({
        "summary": "Nightly sweep done.",
        "events": [
            {"level": "critical", "service": "nginx", "message": "cert expires in 3 days"},
            {"level": "info", "service": "jellyfin", "message": "back to 200"}
        ],
        "memories": [],
        "escalation": {"needed": false},
        "services_checked": []
    })
}

#[test]
fn a_custom_profile_file_drives_extract() {
    let (dir, path) = profile_dir("homelab", HOMELAB);
    let reply = dir.path().join("reply.txt");
    std::fs::write(&reply, REPLY).unwrap();
    let out = agentshape()
        .args(["extract", "--json", "--profile"])
        .arg(&path)
        .arg(&reply)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["method"], "markers", "{v}");
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["value"], want_value());
    // Relative to the working directory, by file name.
    let out = agentshape()
        .current_dir(dir.path())
        .args([
            "extract",
            "--json",
            "--profile",
            "homelab.toml",
            "reply.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(json_lines(&out.stdout)[0]["value"], want_value());
}

#[test]
fn a_custom_profile_file_drives_run_replay_into_the_store() {
    let (dir, path) = profile_dir("homelab", HOMELAB);
    let line = |text: &str| {
        json!({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": text}]}})
            .to_string()
    };
    let transcript = dir.path().join("t.ndjson");
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n{}\n",
            json!({"type": "system", "subtype": "init", "session_id": "h-1", "model": "m"}),
            line(REPLY),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "done", "session_id": "h-1"}),
        ),
    )
    .unwrap();
    let db = dir.path().join("a.db");
    let out = agentshape()
        .args(["run", "--json", "--store"])
        .arg(&db)
        .arg("--log-dir")
        .arg(dir.path().join("logs"))
        .arg("--profile")
        .arg(&path)
        .arg("--replay")
        .arg(&transcript)
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["method"], "markers", "{v}");
    let abs = std::path::absolute(&path).unwrap().display().to_string();
    assert_eq!(
        sql(
            &db,
            "SELECT profile, extraction_method, summary FROM sessions"
        ),
        vec![vec![abs.as_str(), "markers", "Nightly sweep done."]]
    );
    assert_eq!(
        sql(
            &db,
            "SELECT level, service, message FROM events ORDER BY id"
        ),
        vec![
            vec!["critical", "nginx", "cert expires in 3 days"],
            vec!["info", "jellyfin", "back to 200"]
        ]
    );
}

/// The existing profile behaviour through the file form: each built-in,
/// saved by `profile show NAME > mine.toml` in a folder of its own (no
/// schema beside it) and used as `--profile ./mine.toml` from there,
/// extracts exactly as the built-in name does (core's Note [Copied
/// profiles]: the copy names its schema as `builtin:…`, the only line that
/// differs from the repository's file).
#[test]
fn builtins_saved_by_profile_show_work_where_saved_and_behave_as_the_names() {
    let cases = [
        (
            "claude-ops",
            "agent-response",
            vec![
                example("legacy-markers.ndjson"),
                example("fenced-only.ndjson"),
                example("healthy-structured.ndjson"),
            ],
        ),
        ("claude-loop", "loop-action", vec![example("reply.txt")]),
        (
            "code-review",
            "code-review",
            vec![example("fenced-only.ndjson")],
        ),
    ];
    for (name, schema, inputs) in cases {
        let dir = tempfile::tempdir().unwrap();
        let shown = agentshape()
            .args(["profile", "show", name])
            .output()
            .unwrap();
        assert_exit(&shown, 0);
        let text = String::from_utf8(shown.stdout).unwrap();
        let repo =
            std::fs::read_to_string(repo_root().join(format!("profiles/{name}.toml"))).unwrap();
        assert_eq!(text.lines().count(), repo.lines().count(), "{name}");
        for (got, want) in text.lines().zip(repo.lines()) {
            if want.starts_with("schema = ") {
                assert_eq!(got, format!("schema = \"builtin:{schema}\""), "{name}");
            } else {
                assert_eq!(got, want, "{name}");
            }
        }
        std::fs::write(dir.path().join("mine.toml"), &text).unwrap();
        let schema_out = agentshape()
            .args(["profile", "show", name, "--schema"])
            .output()
            .unwrap();
        let shown_schema: Value = serde_json::from_slice(&schema_out.stdout).unwrap();
        let repo_schema: Value = serde_json::from_str(
            &std::fs::read_to_string(repo_root().join(format!("schemas/{schema}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(shown_schema, repo_schema, "{name}");
        for input in inputs {
            let by = |profile: &str| {
                let out = agentshape()
                    .current_dir(dir.path())
                    .args(["extract", "--json", "--profile", profile])
                    .arg(&input)
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                (
                    out.status.code(),
                    String::from_utf8(out.stdout).unwrap(),
                    stderr,
                )
            };
            let (code, out, err) = by("./mine.toml");
            assert!(!err.contains("schema"), "{name} {input:?}: {err}");
            assert_eq!(
                (code, out),
                {
                    let (c, o, _) = by(name);
                    (c, o)
                },
                "{name} {input:?}"
            );
        }
    }
}

/// A profile given as `./bad.toml` is named `./bad.toml` in its error (it
/// said `././bad.toml`), and a `builtin:` schema that does not exist is one
/// line naming the built-in schemas, exit 64.
#[test]
fn a_profile_path_and_a_builtin_schema_name_are_said_as_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "schema = \"builtin:nope\"\n").unwrap();
    let out = agentshape()
        .current_dir(dir.path())
        .args(["profile", "show", "./bad.toml"])
        .output()
        .unwrap();
    assert_exit(&out, 64);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("./bad.toml"), "{err}");
    assert!(!err.contains("././"), "{err}");
    assert!(
        err.contains(
            "no built-in schema `nope` (built in: agent-response, loop-action, code-review)"
        ),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn profile_list_names_the_builtins() {
    let out = agentshape()
        .args(["profile", "list", "--json"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let names: Vec<Value> = json_lines(&out.stdout)
        .iter()
        .map(|v| v["name"].clone())
        .collect();
    assert_eq!(
        names,
        vec![
            json!("claude-ops"),
            json!("claude-loop"),
            json!("code-review")
        ]
    );
}

/// A bad profile file: exit 64, one line naming the file and the key.
#[test]
fn bad_profile_files_exit_64_naming_the_file_and_the_key() {
    let rows: &[(&str, &str)] = &[
        ("coerce = true\n", "`schema`: missing"),
        (
            "schema = \"schema.json\"\nschemas = \"x\"\n",
            "`schemas`: unknown field",
        ),
        (
            "schema = \"schema.json\"\ncoerce = \"yes\"\n",
            "`coerce`: invalid type",
        ),
        ("schema = \"gone.json\"\n", "`schema`: `gone.json`"),
        (
            "schema = \"schema.json\"\n[extract]\nmethods = [\"fenced\", \"structured\"]\n",
            "`extract.methods`",
        ),
        (
            "schema = \"schema.json\"\n[markers]\n[[markers.rule]]\nprefix = \"X\"\n",
            "`markers.rule[0].into`",
        ),
        (
            "schema = \"schema.json\"\n[markers]\nmode = \"last\"\n[[markers.rule]]\nprefix = \"X\"\nfields = [\"a\"]\nkinds = { a = \"digits\" }\n",
            "`markers.rule[0].kinds`: unknown variant `digits`",
        ),
        (
            "schema = \"schema.json\"\n[[invariants]]\nrule = \"self.summary.size() >\"\n",
            "invariants",
        ),
        (
            "schema = \"schema.json\"\nhandoff = [\"/etc/passwd\"]\n",
            "`handoff[0]`",
        ),
    ];
    for (text, want) in rows {
        let (_dir, path) = profile_dir("bad", text);
        let out = agentshape()
            .args(["extract", "--profile"])
            .arg(&path)
            .arg(example("reply.txt"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 64, format_args!("{text:?}"));
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(&path.display().to_string()), "{stderr}");
        assert!(stderr.contains(want), "{text:?}: {stderr}");
    }
    // Every command that takes a profile refuses it the same way.
    let (dir, path) = profile_dir("bad", "coerce = 1\n");
    for args in [vec!["check"], vec!["run", "--no-store", "--replay"]] {
        let out = agentshape()
            .args(&args)
            .arg(example("reply.txt"))
            .arg("--profile")
            .arg(&path)
            .output()
            .unwrap();
        assert_exit_for(&out, 64, format_args!("{args:?}"));
    }
    let out = agentshape()
        .args(["ingest", "--store"])
        .arg(dir.path().join("i.db"))
        .arg("--profile")
        .arg(&path)
        .arg(example("legacy-markers.ndjson"))
        .output()
        .unwrap();
    assert_exit(&out, 64);
    // A missing file is a missing input (66); an unknown name names the built-ins (64).
    let out = agentshape()
        .args(["extract", "--profile", "/nonexistent/agent.toml"])
        .arg(example("reply.txt"))
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let out = agentshape()
        .args(["extract", "--profile", "claude-opz"])
        .arg(example("reply.txt"))
        .output()
        .unwrap();
    assert_exit(&out, 64);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("known: claude-ops, claude-loop, code-review")
    );
}

/// `check --contradictions` takes the identity keys from the profile.
#[test]
fn contradiction_keys_come_from_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("audit.toml");
    std::fs::write(
        &profile,
        "schema = '{\"type\": \"object\"}'\n[contradictions]\nitems = \"/checks\"\nkey = [\"host\"]\ncompare = [\"ok\"]\n",
    )
    .unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, r#"{"checks": [{"host": "db1", "ok": true}]}"#).unwrap();
    std::fs::write(&b, r#"{"checks": [{"host": "db1", "ok": false}]}"#).unwrap();
    let out = agentshape()
        .args(["check", "--json", "--contradictions", "--profile"])
        .arg(&profile)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let lines = json_lines(&out.stdout);
    let c = lines.iter().find(|l| l["kind"] == "contradiction").unwrap();
    assert_eq!(c["key"], json!({"host": "db1"}));
}
