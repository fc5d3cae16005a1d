//! Transcript search: feed rows that match, with a snippet around the match.

#[allow(clippy::wildcard_imports)] // the queries' shared readers and helpers
use super::*;

/// One feed row whose text holds what was searched (Note \[Transcript
/// search\]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TranscriptHit {
    /// The feed row: the session page's row `row-<feed_id>`.
    pub feed_id: i64,
    /// Its session.
    pub session_id: String,
    /// The event type: `text`, `user_text` or `tool_use`.
    pub kind: String,
    /// The line of the agent's own file it came from, for an imported
    /// session.
    pub line: Option<i64>,
    /// When it was written (the line's own time, for an import).
    pub created_at: String,
    /// Its session's project.
    pub project: Option<String>,
    /// Its session's parent (the session that started a sub-agent).
    pub parent_id: Option<String>,
    /// Up to [`SNIPPET_CHARS`] characters before the hit.
    pub before: String,
    /// The hit (the text as written; on Postgres the first word found, or
    /// empty when it cannot be placed).
    pub hit: String,
    /// Up to [`SNIPPET_CHARS`] characters after it.
    pub after: String,
}

/// Characters of context each side of a transcript hit.
pub const SNIPPET_CHARS: usize = 80;

/// The most transcript hits one search returns.
pub const MAX_HITS: usize = 100;

/// The words of `q` as a Postgres `tsquery`, each a prefix (`jelly:*`),
/// all required; only letters and digits, so nothing in it is syntax.
/// `None` when `q` has no word.
pub(super) fn ts_prefixes(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("{}:*", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" & "))
}

/// `text` around the first place `q` is found (ignoring case), else around
/// the first word of `q` found, else its start.
pub(super) fn snippet(text: &str, q: &str) -> (String, String, String) {
    let chars: Vec<char> = text.chars().collect();
    let fold = |c: &char| c.to_lowercase().next().unwrap_or(*c);
    let hay: Vec<char> = chars.iter().map(fold).collect();
    let find = |needle: &str| -> Option<(usize, usize)> {
        let n: Vec<char> = needle.chars().map(|c| fold(&c)).collect();
        if n.is_empty() || n.len() > hay.len() {
            return None;
        }
        (0..=hay.len() - n.len())
            .find(|&i| hay[i..i + n.len()] == n[..])
            .map(|i| (i, n.len()))
    };
    let found = find(q).or_else(|| {
        q.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .find_map(find)
    });
    let (start, len) = found.unwrap_or((0, 0));
    let from = start.saturating_sub(SNIPPET_CHARS);
    let to = (start + len + SNIPPET_CHARS).min(chars.len());
    let mut before: String = chars[from..start].iter().collect();
    if from > 0 {
        before.insert(0, '…');
    }
    let hit: String = chars[start..start + len].iter().collect();
    let mut after: String = chars[start + len..to].iter().collect();
    if to < chars.len() {
        after.push('…');
    }
    (before, hit, after)
}

/// Feed rows whose transcript text holds `q`, newest line first (Note
/// \[Hits in time order\]), at most `limit` (clamped to 1..=[`MAX_HITS`]);
/// [`search_hits`] with no filter.
///
/// Note \[Transcript search\]: what a person reads as the conversation
/// is searched, not only the sessions' summaries: the text of `text` and
/// `user_text` events and the names of the tools called (`tool_use`), in
/// the feed rows of every session, run or imported.
/// - SQLite (version 7): `feed_fts`, a trigram FTS5 table filled by a
///   trigger on every feed insert (and emptied by one on delete), so `q`
///   is a substring of 3 characters or more, any case; the matching
///   rows are read through it, then ordered by time (Note \[Hits in time
///   order\]). Shorter text finds nothing here (the sessions' own search
///   still runs).
/// - Postgres: its own full-text search over the same text
///   (`to_tsvector('simple', agentshape_feed_text(kind, body))`, a GIN
///   index), words lowercased: every word of `q` must begin a word of the
///   text (`jelly` finds `Jellyfin`, `fin` does not).
/// - an older read-only SQLite file has no index: nothing is found.
///
/// # Errors
/// When the database cannot be read.
pub fn search_transcripts(store: &dyn Source, q: &str, limit: usize) -> Result<Vec<TranscriptHit>> {
    Ok(search_hits(store, q, &SessionFilter::default(), None, limit)?.hits)
}
