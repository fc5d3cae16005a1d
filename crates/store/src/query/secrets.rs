//! The secrets the door masked, as the secrets page lists them.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

/// One secret masked, for the overview's "Secrets" panel (never the secret).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecretRow {
    /// The session it was in.
    pub session_id: String,
    /// The rule that found it.
    pub rule: String,
    /// Its keyed fingerprint.
    pub fingerprint: String,
    /// Where (`summary`, `output`, `feed`, ...).
    pub place: String,
    /// When.
    pub created_at: String,
}

/// The newest secrets masked, at most `limit` (empty for a store from
/// before masking).
///
/// # Errors
/// When the store cannot be read.
pub fn secrets_found(store: &dyn Source, limit: usize) -> Result<Vec<SecretRow>> {
    if !has_secrets(store) {
        return Ok(Vec::new());
    }
    let rows = store.cells(
        "SELECT session_id, rule, fingerprint, place, created_at FROM secrets_found
         ORDER BY created_at DESC, id DESC LIMIT ?1",
        &[Cell::Int(i64::try_from(limit).unwrap_or(i64::MAX))],
        &|| "reading the secrets found".to_owned(),
    )?;
    rows.iter()
        .map(|r| {
            Ok(SecretRow {
                session_id: text(at(r, 0))?,
                rule: text(at(r, 1))?,
                fingerprint: text(at(r, 2))?,
                place: text(at(r, 3))?,
                created_at: text(at(r, 4))?,
            })
        })
        .collect()
}
