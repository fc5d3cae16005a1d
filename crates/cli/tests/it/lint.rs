//! `agentshape lint`: findings with JSON pointers, and `--fix`.

use serde_json::json;

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

#[test]
fn lint_lists_findings_and_fix_prints_an_accepted_schema() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": []});
    let f = temp_file(&schema.to_string());
    let out = agentshape()
        .args(["lint", "--json", "--provider", "openai", "--schema"])
        .arg(f.path())
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["accepted"], false);
    let pointers: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, vec!["", "/properties/n"]);
    let out = agentshape()
        .args(["lint", "--fix", "--provider", "openai", "--schema"])
        .arg(f.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let fixed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(fixed["additionalProperties"], false);
    assert_eq!(
        fixed["properties"]["n"],
        json!({"type": ["integer", "null"], "minimum": 1})
    );
    assert_eq!(fixed["required"], json!(["n"]));
}
