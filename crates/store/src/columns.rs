//! The `sessions` columns a write sets, and their values from a
//! [`SessionRecord`]: the one list every session write (and `store copy`)
//! is built from, so a new column is added here once.

use std::sync::LazyLock;

use crate::SessionRecord;
use crate::tx::Arg;

/// How a column is written when the row is filled in by a native import
/// ([`SessionSql::fill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// From the record.
    Set,
    /// From the record, or kept when the record has none: a native import
    /// knows no verdict, output, extraction method or profile, and must not
    /// erase what `agentshape hook` wrote (Note \[Hook chains\]).
    Keep,
}

/// The session columns, in parameter order (`id` first: `?1`).
const COLUMNS: &[(&str, Fill)] = &[
    ("id", Fill::Set),
    ("parent_id", Fill::Set),
    ("tier", Fill::Set),
    ("profile", Fill::Keep),
    ("agent", Fill::Set),
    ("model", Fill::Set),
    ("status", Fill::Set),
    ("exit_code", Fill::Set),
    ("started_at", Fill::Set),
    ("ended_at", Fill::Set),
    ("cost_usd", Fill::Set),
    ("duration_ms", Fill::Set),
    ("num_turns", Fill::Set),
    ("input_tokens", Fill::Set),
    ("output_tokens", Fill::Set),
    ("extraction_method", Fill::Keep),
    ("error", Fill::Set),
    ("error_category", Fill::Set),
    ("summary", Fill::Set),
    ("escalation", Fill::Set),
    ("raw_log_path", Fill::Set),
    ("heartbeat_at", Fill::Set),
    ("output", Fill::Keep),
    ("verdict", Fill::Keep),
    ("project", Fill::Set),
    ("git_branch", Fill::Set),
    ("agent_version", Fill::Set),
    ("cache_read_tokens", Fill::Set),
    ("cache_write_tokens", Fill::Set),
    ("cost_estimated", Fill::Set),
    ("source_path", Fill::Set),
];

/// The session columns, comma separated (`store copy` reads and writes
/// them all).
pub(crate) static SESSION_COLS: LazyLock<String> = LazyLock::new(|| {
    let names: Vec<&str> = COLUMNS.iter().map(|c| c.0).collect();
    names.join(", ")
});

/// The three statements that write a session row, all taking
/// [`session_args`].
pub(crate) struct SessionSql {
    /// A new row; nothing when the id is taken.
    pub insert: String,
    /// Every column from the record.
    pub replace: String,
    /// As `replace`, but the columns marked [`Fill::Keep`] keep their
    /// stored value when the record has none.
    pub fill: String,
}

/// Built once.
pub(crate) static SESSION_SQL: LazyLock<SessionSql> = LazyLock::new(|| {
    let marks: Vec<String> = (1..=COLUMNS.len()).map(|i| format!("?{i}")).collect();
    let set = |keep: bool| {
        let cols: Vec<String> = COLUMNS
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, (name, fill))| {
                let n = i + 1;
                if keep && *fill == Fill::Keep {
                    format!("{name} = COALESCE(?{n}, {name})")
                } else {
                    format!("{name} = ?{n}")
                }
            })
            .collect();
        format!("UPDATE sessions SET {} WHERE id = ?1", cols.join(", "))
    };
    SessionSql {
        insert: format!(
            "INSERT INTO sessions ({}) VALUES ({}) ON CONFLICT (id) DO NOTHING",
            *SESSION_COLS,
            marks.join(", ")
        ),
        replace: set(false),
        fill: set(true),
    }
});

/// The JSON columns of a record as compact text (`serde_json`'s `Display`),
/// so `run` and `ingest` write byte-identical columns for one value.
pub(crate) struct JsonTexts {
    escalation: Option<String>,
    output: Option<String>,
    verdict: Option<String>,
}

impl JsonTexts {
    /// The texts of `r`'s JSON values.
    pub(crate) fn of(r: &SessionRecord) -> Self {
        JsonTexts {
            escalation: r.escalation.as_ref().map(ToString::to_string),
            output: r.output.as_ref().map(ToString::to_string),
            verdict: r.verdict.as_ref().map(ToString::to_string),
        }
    }
}

/// The values of [`COLUMNS`] for `r`, in order. A finished row has no
/// heartbeat (it only means something while running), so a row written
/// by `run` and one rebuilt by `ingest` are identical.
pub(crate) fn session_args<'a>(
    r: &'a SessionRecord,
    json: &'a JsonTexts,
    heartbeat_at: Option<&'a str>,
) -> Vec<Arg<'a>> {
    let opt_count = |n: Option<u64>| n.map_or(Arg::Null, Arg::count);
    vec![
        Arg::text(&r.id),
        Arg::opt_text(r.parent_id.as_deref()),
        Arg::Int(i64::from(r.tier)),
        Arg::opt_text(r.profile.as_deref()),
        Arg::opt_text(r.agent.as_deref()),
        Arg::opt_text(r.model.as_deref()),
        Arg::text(&r.status),
        Arg::opt_int(r.exit_code.map(i64::from)),
        Arg::text(&r.started_at),
        Arg::opt_text(r.ended_at.as_deref()),
        r.cost_usd.map_or(Arg::Null, Arg::Real),
        opt_count(r.duration_ms),
        opt_count(r.num_turns),
        Arg::count(r.input_tokens),
        Arg::count(r.output_tokens),
        Arg::opt_text(r.extraction_method.as_deref()),
        Arg::opt_text(r.error.as_deref()),
        Arg::opt_text(r.error_category.as_deref()),
        Arg::opt_text(r.summary.as_deref()),
        Arg::opt_text(json.escalation.as_deref()),
        Arg::opt_text(r.raw_log_path.as_deref()),
        Arg::opt_text(heartbeat_at),
        Arg::opt_text(json.output.as_deref()),
        Arg::opt_text(json.verdict.as_deref()),
        Arg::opt_text(r.project.as_deref()),
        Arg::opt_text(r.git_branch.as_deref()),
        Arg::opt_text(r.agent_version.as_deref()),
        Arg::count(r.cache_read_tokens),
        Arg::count(r.cache_write_tokens),
        Arg::Bool(r.cost_estimated),
        Arg::opt_text(r.source_path.as_deref()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_its_value() {
        let r = SessionRecord::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        let json = JsonTexts::of(&r);
        assert_eq!(session_args(&r, &json, None).len(), COLUMNS.len());
    }

    #[test]
    fn fill_keeps_what_a_native_import_does_not_know() {
        let fill = &SESSION_SQL.fill;
        assert!(fill.contains("verdict = COALESCE(?24, verdict)"), "{fill}");
        assert!(fill.contains("profile = COALESCE(?4, profile)"), "{fill}");
        assert!(fill.contains("status = ?7"), "{fill}");
        assert!(!SESSION_SQL.replace.contains("COALESCE"));
    }
}
