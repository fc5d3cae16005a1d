//! A SQLite file's rows as text, for tests that check what a store wrote.

/// Rows of `query` on `conn`, each column rendered as text (`NULL` for
/// null, `BLOB` for a blob).
///
/// # Panics
/// When the query fails: a test's own SQL is wrong.
#[allow(clippy::unwrap_used)]
pub fn rows(conn: &rusqlite::Connection, query: &str) -> Vec<Vec<String>> {
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
