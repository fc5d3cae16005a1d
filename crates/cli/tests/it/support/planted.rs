//! The planted secrets of core's corpus, and a transcript that leaks them
//! (issue 29's doors): shared by the store, export and browser tests.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::repo_root;

/// One planted secret and the text it sits in.
pub(crate) struct Case {
    pub(crate) secret: String,
    pub(crate) context: String,
}

/// Every planted case of core's secrets corpus
/// (`crates/core/tests/fixtures/secrets/planted.jsonl`).
pub(crate) fn planted() -> Vec<Case> {
    let path = repo_root().join("crates/core/tests/fixtures/secrets/planted.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Case {
                secret: v["secret"].as_str().unwrap().to_owned(),
                context: v["context"].as_str().unwrap().to_owned(),
            }
        })
        .collect()
}

/// A GitHub token the corpus does not hold, put in structured output.
pub(crate) const GH: &str = "ghp_Xq7Lm2Vb9Rt4Wz8Kp3Hn6Jd1Fs5Gc0Ya2Ue7";

/// `examples/healthy-structured.ndjson` with every planted context as a
/// tool output and as user text, and a GitHub token in the structured
/// output's summary, an event and a memory.
pub(crate) fn leaky_transcript(dir: &Path, cases: &[Case]) -> PathBuf {
    let text =
        std::fs::read_to_string(repo_root().join("examples/healthy-structured.ndjson")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (body, last) = lines.split_at(lines.len() - 1);
    let mut out: Vec<String> = body.iter().map(|l| (*l).to_owned()).collect();
    for (i, c) in cases.iter().enumerate() {
        out.push(
            json!({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": format!("toolu_secret{i}"), "type": "tool_result", "content": c.context}]},
                "session_id": "5f0c2a8e-3b1d-4c47-9e2a-7d1f6b9c0a41"})
            .to_string(),
        );
        out.push(
            json!({"type": "user", "message": {"role": "user", "content": format!("please use this: {}", c.context)},
                "session_id": "5f0c2a8e-3b1d-4c47-9e2a-7d1f6b9c0a41"})
            .to_string(),
        );
    }
    let mut result: Value = serde_json::from_str(last[0]).unwrap();
    let so = &mut result["structured_output"];
    so["summary"] = json!(format!(
        "{} The deploy used GITHUB_TOKEN={GH}",
        so["summary"].as_str().unwrap()
    ));
    so["events"][1]["message"] = json!(format!("token leaked in logs: {GH}"));
    so["memories"][0]["value"] = json!(format!("restart needs GITHUB_TOKEN={GH}"));
    out.push(result.to_string());
    let path = dir.join("leaky.ndjson");
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
    path
}
