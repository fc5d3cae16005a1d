//! The one builder of a session record: what `run` and `ingest` (the
//! runner's `build_record`) and a native import (`Importer::record`) both
//! take from a transcript's summary and from what was extracted from it.
//! Each caller adds only what is its own (a run's process, handoff and
//! reported rows; an import's file, usage and prices).

use agentshape_core::RunSummary;
use agentshape_core::facts::TokenCounts;
use agentshape_store::{Session, Status, Verdict, count};
use serde_json::Value;

/// A record of `id` started at `started_at`, with what the transcript
/// says of itself: the model the agent reported, and an error result's
/// text and category.
pub(crate) fn from_summary(
    id: &str,
    started_at: &str,
    status: Status,
    summary: &RunSummary,
) -> Session {
    let mut r = Session::new(id, started_at, status);
    r.model.clone_from(&summary.model);
    r.error.clone_from(&summary.error);
    r.error_category = summary.error_category.map(|c| c.as_str().to_owned());
    r
}

/// Set the record's four token columns from a native session's counts
/// (saturating into the stored `i64`).
pub(crate) fn set_tokens(r: &mut Session, t: &TokenCounts) {
    r.input_tokens = count(t.input);
    r.output_tokens = count(t.output);
    r.cache_read_tokens = count(t.cache_read);
    r.cache_write_tokens = count(t.cache_write);
}

/// What was extracted, as the record keeps it: the winning method (as the
/// caller names it), the value, and the verdict when one was checked.
pub(crate) struct Extracted {
    /// `structured`, `fenced`, ..., or a run's `…+handoff`.
    pub method: String,
    /// The extracted value.
    pub value: Option<Value>,
    /// The validation verdict; `None`: nothing was checked.
    pub verdict: Option<Verdict>,
}

impl Extracted {
    /// Set the record's columns that come from the extraction: the method,
    /// the verdict, the output, and the summary the value states (its
    /// `summary`, or a loop's `reasoning`), so the session page shows them
    /// without re-reading the log, and `ingest` writes what `run` wrote.
    pub(crate) fn apply(self, r: &mut Session) {
        r.extraction_method = Some(self.method);
        r.verdict = self.verdict;
        r.summary = self
            .value
            .as_ref()
            .and_then(|v| said(v, "summary").or_else(|| said(v, "reasoning")));
        r.output = self.value;
    }
}

/// The string `v` holds at `key`.
pub(crate) fn said(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use agentshape_core::{ErrorCategory, Extraction};
    use serde_json::json;

    use super::*;

    #[test]
    fn the_summary_gives_the_model_and_the_error() {
        let s = RunSummary {
            model: Some("m".to_owned()),
            error: Some("rate limited".to_owned()),
            error_category: Some(ErrorCategory::RateLimit),
            ..RunSummary::default()
        };
        let r = from_summary("s", "2025-07-14T03:00:00.000Z", Status::Error, &s);
        assert_eq!(r.status, Status::Error);
        assert_eq!(r.model.as_deref(), Some("m"));
        assert_eq!(r.error.as_deref(), Some("rate limited"));
        assert_eq!(r.error_category.as_deref(), Some("rate_limit"));
        assert_eq!(r.tier, 1);
    }

    #[test]
    fn the_summary_column_is_the_values_summary_or_reasoning() {
        let mut r = Session::new("s", "t", "completed");
        let mut x = Extraction::none();
        x.value = Some(json!({"reasoning": "looped", "summary": 3}));
        Extracted {
            method: x.method.as_str().to_owned(),
            value: x.value.clone(),
            verdict: Some(Verdict::of(&x)),
        }
        .apply(&mut r);
        assert_eq!(r.summary.as_deref(), Some("looped"));
        assert_eq!(r.extraction_method.as_deref(), Some("none"));
        assert_eq!(r.verdict.as_ref().map(|v| v.valid), Some(false));
        assert_eq!(r.output, x.value);
        let unchecked = Extracted {
            method: "fenced".to_owned(),
            value: None,
            verdict: None,
        };
        unchecked.apply(&mut r);
        assert_eq!((r.summary, r.output, r.verdict), (None, None, None));
    }
}
