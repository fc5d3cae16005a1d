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
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(query).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        Ok((0..n)
            .map(|i| match r.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Null => "NULL".to_owned(),
                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                rusqlite::types::ValueRef::Real(v) => v.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                rusqlite::types::ValueRef::Blob(_) => "BLOB".to_owned(),
            })
            .collect())
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
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
