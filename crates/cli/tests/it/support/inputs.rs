//! The inputs tests hand the binary and the ways they read what it wrote:
//! bundled examples, the fake agent, temp files, JSON lines, SQL rows.

use std::path::Path;

use super::repo_root;

/// The fake agent executable (`tests/fixtures/fake-agent`).
pub(crate) fn fake_agent() -> String {
    repo_root()
        .join("crates/cli/tests/fixtures/fake-agent")
        .display()
        .to_string()
}

/// An executable agent script `dir/name` that runs the shell lines `first`,
/// then `exec`s the fake agent with its arguments.
pub(crate) fn agent_script(dir: &Path, name: &str, first: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\n{first}exec {:?} \"$@\"\n", fake_agent()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// A bundled example transcript (`examples/NAME`).
pub(crate) fn example(name: &str) -> String {
    repo_root()
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

/// Rows of a query, each column rendered as text (`NULL` for null).
pub(crate) fn sql(db: &Path, query: &str) -> Vec<Vec<String>> {
    agentshape_testkit::sqlite::rows(&rusqlite::Connection::open(db).unwrap(), query)
}

/// Stdout parsed as JSON lines.
pub(crate) fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// A temporary file holding `content`.
pub(crate) fn temp_file(content: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(f.path(), content).expect("write temp file");
    f
}
