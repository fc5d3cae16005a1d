//! `agentshape check`: the seed 002 journal failures (count hallucination,
//! specialist contradiction), bad rules, `--out`, and invariants in `extract`.

use serde_json::{Value, json};

use crate::support::{agentshape, assert_exit, assert_exit_for, json_lines, temp_file};

const DIR: &str = "crates/cli/tests/fixtures/check";

fn fixture(name: &str) -> String {
    format!("{DIR}/{name}")
}

#[test]
fn writer_counts_disagreeing_with_findings_is_caught() {
    let out = agentshape()
        .args(["check", "--json", "--profile", "code-review"])
        .arg(fixture("writer-counts.json"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert_eq!(
        json_lines(&out.stdout),
        [json!({
            "file": fixture("writer-counts.json"),
            "method": "bare",
            "valid": false,
            "errors": [{
                "instance_path": "",
                "schema_path": "/x-invariants/0",
                "message": "counts.blocker must equal the number of findings with severity blocker",
                "kind": "invariant",
                "rule": "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()"
            }]
        })]
    );
}

#[test]
fn writer_reply_in_prose_is_extracted_then_checked() {
    // "3 blockers" while the findings list none; the value sits in a fenced block.
    let out = agentshape()
        .args(["check", "--json", "--schema", "schemas/code-review.json"])
        .arg(fixture("writer-reply.txt"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines[0]["method"], "fenced");
    assert_eq!(lines[0]["errors"][0]["kind"], "invariant");
    assert_eq!(lines[0]["errors"][0]["schema_path"], "/x-invariants/0");
}

#[test]
fn specialists_contradicting_on_the_same_line_are_caught() {
    let out = agentshape()
        .args([
            "check",
            "--json",
            "--profile",
            "code-review",
            "--contradictions",
            "--items",
            "/findings",
            "--key",
            "file,line",
            "--compare",
            "severity",
        ])
        .arg(fixture("security.json"))
        .arg(fixture("conventions.json"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[1]["valid"], true);
    let (sec, conv) = (fixture("security.json"), fixture("conventions.json"));
    assert_eq!(
        lines[2],
        json!({
            "instance_path": "/findings/0",
            "schema_path": "",
            "message": format!("`severity` differs for file=src/tools/fs.ts line=42: blocker ({sec}) vs nit ({conv}); description similarity 0.21"),
            "kind": "contradiction",
            "key": {"file": "src/tools/fs.ts", "line": 42},
            "values": [{"source": sec, "value": "blocker"}, {"source": conv, "value": "nit"}],
            "similarity": 0.211
        })
    );
}

#[test]
fn out_writes_the_report_with_the_items_attached() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("contradictions.json");
    let out = agentshape()
        .args(["check", "--profile", "code-review", "--out"])
        .arg(&report)
        .arg(fixture("security.json"))
        .arg(fixture("conventions.json"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("✗ contradiction: `severity` differs"),
        "{text}"
    );
    assert!(
        text.contains("2 files: 0 with findings; 1 contradiction"),
        "{text}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["items_seen"], 4);
    let c = &r["contradictions"][0];
    assert_eq!(c["items"].as_array().unwrap().len(), 2);
    assert_eq!(c["items"][0]["item"]["raisedBy"], "Security");
    assert_eq!(c["items"][1]["item"]["severity"], "nit");
    assert_eq!(c["items"][1]["instance_path"], "/findings/0");
}

#[test]
fn near_lines_groups_neighbours_with_a_similarity() {
    let a = temp_file(
        r#"{"findings": [{"file": "f.rs", "line": 10, "severity": "blocker", "description": "unbounded read of input"}]}"#,
    );
    let b = temp_file(
        r#"{"findings": [{"file": "f.rs", "line": 12, "severity": "minor", "description": "unbounded read of the input"}]}"#,
    );
    let exact = agentshape()
        .args(["check", "--json", "--contradictions"])
        .arg(a.path())
        .arg(b.path())
        .output()
        .unwrap();
    assert_exit(&exact, 0);
    let near = agentshape()
        .args(["check", "--json", "--near-lines", "2"])
        .arg(a.path())
        .arg(b.path())
        .output()
        .unwrap();
    assert_exit(&near, 1);
    let lines = json_lines(&near.stdout);
    assert_eq!(lines[2]["lines"], json!([10, 12]));
    assert_eq!(lines[2]["similarity"], 0.8);
}

#[test]
fn clean_outputs_exit_zero() {
    let out = agentshape()
        .args(["check", "--profile", "code-review", "--contradictions"])
        .arg(fixture("security.json"))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 files: 0 with findings; 0 contradictions"),
        "{text}"
    );
}

#[test]
fn a_rule_that_does_not_compile_exits_64_naming_rule_and_location() {
    for cmd in ["check", "extract", "validate"] {
        let out = agentshape()
            .args([cmd, "--schema"])
            .arg(fixture("bad-rule.schema.json"))
            .arg(fixture("security.json"))
            .output()
            .unwrap();
        assert_exit_for(&out, 64, format_args!("{cmd}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(
                "`x-invariants` rule `self.blocker >= 0 &&` at `/properties/counts/x-invariants/0` does not compile"
            ),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn missing_file_exits_66_and_nothing_to_check_is_usage() {
    let out = agentshape()
        .args(["check", "--profile", "code-review", "no/such.json"])
        .output()
        .unwrap();
    assert_exit(&out, 66);
    let out = agentshape()
        .args(["check"])
        .arg(fixture("security.json"))
        .output()
        .unwrap();
    assert_exit(&out, 64);
    let out = agentshape()
        .args(["check", "--items", "findings"])
        .arg(fixture("security.json"))
        .output()
        .unwrap();
    assert_exit(&out, 64);
}

#[test]
fn runtime_rule_errors_are_findings() {
    let schema = temp_file(
        r#"{"type": "object", "x-invariants": [{"rule": "self.total == self.parts.size()", "message": "total counts the parts"}]}"#,
    );
    let doc = temp_file(r#"{"total": 2}"#);
    let out = agentshape()
        .args(["check", "--json", "--schema"])
        .arg(schema.path())
        .arg(doc.path())
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let lines = json_lines(&out.stdout);
    assert_eq!(
        lines[0]["errors"][0]["message"],
        "total counts the parts: the rule could not be evaluated: No such key: parts"
    );
}

#[test]
fn extract_and_validate_report_invariants() {
    let out = agentshape()
        .args(["extract", "--json", "--profile", "code-review"])
        .arg(fixture("writer-reply.txt"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let v = &json_lines(&out.stdout)[0];
    assert_eq!(v["valid"], false);
    assert_eq!(v["errors"][0]["kind"], "invariant");
    let out = agentshape()
        .args(["validate", "--json", "--schema", "schemas/code-review.json"])
        .arg(fixture("writer-counts.json"))
        .output()
        .unwrap();
    assert_exit(&out, 1);
    assert_eq!(
        json_lines(&out.stdout)[0]["errors"][0]["rule"],
        "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()"
    );
}
