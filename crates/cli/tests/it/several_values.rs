//! `agentshape extract` on a reply of several top-level values (NDJSON-like;
//! core's Note [Several values]): collected for an array schema, the first
//! with a warning without a schema, in every output form.

use serde_json::json;

use crate::support::{agentshape, assert_exit, json_lines, temp_file};

const NDJSON: &str = "{\"id\": 1, \"ok\": true}\n{\"id\": 2, \"ok\": false}\n";

#[test]
fn an_array_schema_collects_an_ndjson_reply() {
    let schema = temp_file(
        &json!({"type": "array", "items": {"type": "object", "required": ["id"]}}).to_string(),
    );
    let reply = temp_file(NDJSON);
    let out = agentshape()
        .args(["extract", "--json", "--schema"])
        .arg(schema.path())
        .arg(reply.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(
        r["value"],
        json!([{"id": 1, "ok": true}, {"id": 2, "ok": false}])
    );
    assert_eq!(r["method"], "repaired");
    assert_eq!(r["repairs"], json!(["collected_values"]));
    assert!(r.get("warnings").is_none(), "{r}");
}

#[test]
fn without_a_schema_the_first_value_and_a_warning() {
    let reply = temp_file(NDJSON);
    let warning = "2 top-level values; took the first";
    // --json: the first value, the warning in the result.
    let out = agentshape()
        .args(["extract", "--json"])
        .arg(reply.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["value"], json!({"id": 1, "ok": true}));
    assert_eq!(r["warnings"], json!([warning]));
    // The human form prints it as a warning line.
    let out = agentshape()
        .arg("extract")
        .arg(reply.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("warning: {warning}")), "{text}");
    // --jsonl --json: in the result line too.
    let line = temp_file(&format!("{}\n", json!({"id": "r1", "text": NDJSON})));
    let out = agentshape()
        .args(["extract", "--jsonl", "--json"])
        .arg(line.path())
        .output()
        .unwrap();
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["value"], json!({"id": 1, "ok": true}));
    assert_eq!(r["warnings"], json!([warning]));
    assert_eq!(r["id"], "r1");
}

/// Issue 32 §1 and §2 from the CLI: a reply with an unescaped inner quote
/// and stray words, and a field holding JSON encoded twice, which the
/// schema decodes only where it asks for an object.
#[test]
fn string_boundaries_and_embedded_json_from_the_cli() {
    let reply = temp_file(r#"{"message": "he said "hi" to me", "b": "xxxxx" true, "ok": true}"#);
    let out = agentshape()
        .args(["extract", "--json"])
        .arg(reply.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(
        r["value"],
        json!({"message": "he said \"hi\" to me", "b": "xxxxx", "ok": true})
    );
    assert_eq!(r["repairs"], json!(["unescaped_quote", "stray_word"]));

    let schema = temp_file(
        &json!({"type": "object", "properties": {
            "result": {"type": "object"}, "note": {"type": "string"}}})
        .to_string(),
    );
    let reply = temp_file(r#"{"result": "{\"a\": 1}", "note": "{\"b\": 2}"}"#);
    let out = agentshape()
        .args(["extract", "--json", "--schema"])
        .arg(schema.path())
        .arg(reply.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(
        r["value"],
        json!({"result": {"a": 1}, "note": "{\"b\": 2}"})
    );
    assert_eq!(r["repairs"], json!(["decoded_embedded_json"]));
    assert_eq!(r["valid"], json!(true));
}
