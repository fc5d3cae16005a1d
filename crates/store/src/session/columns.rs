//! The `sessions` columns: the one list every session write, `store
//! copy` and every session read is built from: each column's value from a
//! [`Session`] for a write, and a [`Session`] back from the cells a read
//! selects (Note \[One session row\]).

use std::sync::LazyLock;

use super::{Session, Status};
use crate::error::{Error, Result};
use crate::rows::{Cell, at, flag, int, opt_int, opt_real, opt_text, text};
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

/// How a read selects a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// As stored.
    Plain,
    /// A boolean, as 0 or 1 (Postgres stores `BOOLEAN`).
    Bool,
    /// Not read back into a [`Session`]: a large JSON text the session
    /// page reads on its own (`output`, `verdict`).
    No,
}

/// One column of `sessions`.
#[derive(Debug, Clone, Copy)]
struct Column {
    name: &'static str,
    fill: Fill,
    read: Read,
    /// The SQLite schema version that added it (Postgres has them all): a
    /// read-only store older than that reads `missing` instead.
    since: i64,
    /// What an older store reads in its place.
    missing: &'static str,
}

impl Column {
    /// A column of the first schema, written from the record and read as stored.
    const fn new(name: &'static str) -> Self {
        Column {
            name,
            fill: Fill::Set,
            read: Read::Plain,
            since: 1,
            missing: "NULL",
        }
    }
    const fn keep(self) -> Self {
        Column {
            fill: Fill::Keep,
            ..self
        }
    }
    const fn unread(self) -> Self {
        Column {
            read: Read::No,
            ..self
        }
    }
    const fn boolean(self) -> Self {
        Column {
            read: Read::Bool,
            missing: "0",
            ..self
        }
    }
    /// Added at schema `version`; an older store reads `missing`.
    const fn since(self, version: i64, missing: &'static str) -> Self {
        Column {
            since: version,
            missing,
            ..self
        }
    }
}

/// The session columns, in parameter order (`id` first: `?1`).
const COLUMNS: &[Column] = &[
    Column::new("id"),
    Column::new("parent_id"),
    Column::new("tier"),
    Column::new("profile").keep(),
    Column::new("agent"),
    Column::new("model"),
    Column::new("status"),
    Column::new("exit_code"),
    Column::new("started_at"),
    Column::new("ended_at"),
    Column::new("cost_usd"),
    Column::new("duration_ms"),
    Column::new("num_turns"),
    Column::new("input_tokens"),
    Column::new("output_tokens"),
    Column::new("extraction_method").keep(),
    Column::new("error"),
    Column::new("error_category"),
    Column::new("summary"),
    Column::new("escalation"),
    Column::new("raw_log_path"),
    Column::new("heartbeat_at").since(2, "NULL"),
    Column::new("output").keep().unread(),
    Column::new("verdict").keep().unread(),
    Column::new("project").since(6, "NULL"),
    Column::new("git_branch").since(6, "NULL"),
    Column::new("agent_version").since(6, "NULL"),
    Column::new("cache_read_tokens").since(6, "0"),
    Column::new("cache_write_tokens").since(6, "0"),
    Column::new("cost_estimated").boolean().since(6, "0"),
    Column::new("source_path").since(6, "NULL"),
];

/// The session columns, comma separated (`store copy` reads and writes
/// them all).
pub(crate) static SESSION_COLS: LazyLock<String> = LazyLock::new(|| {
    let names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
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
            .map(|(i, Column { name, fill, .. })| {
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

/// The JSON columns of a session as compact text (`serde_json`'s
/// `Display`), so `run` and `ingest` write byte-identical columns for one
/// value (the escalation is text already).
pub(crate) struct JsonTexts {
    output: Option<String>,
    verdict: Option<String>,
}

impl JsonTexts {
    /// The texts of `r`'s JSON values.
    pub(crate) fn of(r: &Session) -> Self {
        JsonTexts {
            output: r.output.as_ref().map(ToString::to_string),
            verdict: r.verdict.as_ref().map(super::Verdict::text),
        }
    }
}

/// The values of [`COLUMNS`] for `r`, in order. A finished row has no
/// heartbeat (it only means something while running), so a row written
/// by `run` and one rebuilt by `ingest` are identical.
pub(crate) fn session_args<'a>(
    r: &'a Session,
    json: &'a JsonTexts,
    heartbeat_at: Option<&'a str>,
) -> Vec<Arg<'a>> {
    vec![
        Arg::text(&r.id),
        Arg::opt_text(r.parent_id.as_deref()),
        Arg::Int(r.tier),
        Arg::opt_text(r.profile.as_deref()),
        Arg::opt_text(r.agent.as_deref()),
        Arg::opt_text(r.model.as_deref()),
        Arg::text(r.status.as_str()),
        Arg::opt_int(r.exit_code),
        Arg::text(&r.started_at),
        Arg::opt_text(r.ended_at.as_deref()),
        r.cost_usd.map_or(Arg::Null, Arg::Real),
        Arg::opt_int(r.duration_ms),
        Arg::opt_int(r.num_turns),
        Arg::Int(r.input_tokens),
        Arg::Int(r.output_tokens),
        Arg::opt_text(r.extraction_method.as_deref()),
        Arg::opt_text(r.error.as_deref()),
        Arg::opt_text(r.error_category.as_deref()),
        Arg::opt_text(r.summary.as_deref()),
        Arg::opt_text(r.escalation.as_deref()),
        Arg::opt_text(r.raw_log_path.as_deref()),
        Arg::opt_text(heartbeat_at),
        Arg::opt_text(json.output.as_deref()),
        Arg::opt_text(json.verdict.as_deref()),
        Arg::opt_text(r.project.as_deref()),
        Arg::opt_text(r.git_branch.as_deref()),
        Arg::opt_text(r.agent_version.as_deref()),
        Arg::Int(r.cache_read_tokens),
        Arg::Int(r.cache_write_tokens),
        Arg::Bool(r.cost_estimated),
        Arg::opt_text(r.source_path.as_deref()),
    ]
}

/// The columns a [`Session`] reads, in select order.
static READ: LazyLock<Vec<&'static Column>> =
    LazyLock::new(|| COLUMNS.iter().filter(|c| c.read != Read::No).collect());

/// The select list of a [`Session`]'s stored columns over `sessions
/// s`; `has(v)`: the store's schema has what version `v` added. A
/// reader appends, in this order, what is derived:
/// lost, secrets masked, verdict valid, failing path, not imported
/// ([`session_row`] reads them after the stored columns).
pub(crate) fn select(has: impl Fn(i64) -> bool) -> String {
    let cols: Vec<String> = READ
        .iter()
        .map(|c| match (has(c.since), c.read) {
            (false, _) => c.missing.to_owned(),
            (true, Read::Bool) => format!("CASE WHEN s.{} THEN 1 ELSE 0 END", c.name),
            (true, _) => format!("s.{}", c.name),
        })
        .collect();
    cols.join(", ")
}

/// The cells of one selected row, taken in [`READ`]'s order; a column
/// taken out of order is a bug, reported as an error rather than read as
/// another column.
struct Cells<'a> {
    row: &'a [Cell],
    next: usize,
}

impl<'a> Cells<'a> {
    fn take(&mut self, name: &str) -> Result<&'a Cell> {
        let i = self.next;
        self.next += 1;
        match READ.get(i) {
            Some(c) if c.name == name => Ok(at(self.row, i)),
            _ => Err(Error::Unexpected {
                what: format!("session column {name} read out of order"),
            }),
        }
    }
}

/// A [`Session`] from a row selected with [`select`] and the derived
/// columns after it.
pub(crate) fn session_row(r: &[Cell]) -> Result<Session> {
    let n = READ.len();
    let derived = |k: usize| at(r, n + k);
    let not_imported = flag(derived(4))?;
    let lost = flag(derived(0))? && !not_imported;
    let mut c = Cells { row: r, next: 0 };
    let id = text(c.take("id")?)?;
    let parent_id = opt_text(c.take("parent_id")?)?;
    let tier = int(c.take("tier")?)?;
    let profile = opt_text(c.take("profile")?)?;
    let agent = opt_text(c.take("agent")?)?;
    let model = opt_text(c.take("model")?)?;
    let status = Status::parse(&text(c.take("status")?)?);
    let shown_status = if lost {
        "lost".to_owned()
    } else if not_imported {
        "not_imported".to_owned()
    } else {
        status.as_str().to_owned()
    };
    Ok(Session {
        id,
        parent_id,
        tier,
        profile,
        agent,
        model,
        status,
        exit_code: opt_int(c.take("exit_code")?)?,
        started_at: text(c.take("started_at")?)?,
        ended_at: opt_text(c.take("ended_at")?)?,
        cost_usd: opt_real(c.take("cost_usd")?)?,
        duration_ms: opt_int(c.take("duration_ms")?)?,
        num_turns: opt_int(c.take("num_turns")?)?,
        input_tokens: int(c.take("input_tokens")?)?,
        output_tokens: int(c.take("output_tokens")?)?,
        extraction_method: opt_text(c.take("extraction_method")?)?,
        error: opt_text(c.take("error")?)?,
        error_category: opt_text(c.take("error_category")?)?,
        summary: opt_text(c.take("summary")?)?,
        escalation: opt_text(c.take("escalation")?)?,
        raw_log_path: opt_text(c.take("raw_log_path")?)?,
        heartbeat_at: opt_text(c.take("heartbeat_at")?)?,
        project: opt_text(c.take("project")?)?,
        git_branch: opt_text(c.take("git_branch")?)?,
        agent_version: opt_text(c.take("agent_version")?)?,
        cache_read_tokens: int(c.take("cache_read_tokens")?)?,
        cache_write_tokens: int(c.take("cache_write_tokens")?)?,
        cost_estimated: flag(c.take("cost_estimated")?)?,
        source_path: opt_text(c.take("source_path")?)?,
        lost,
        not_imported,
        shown_status,
        secrets_masked: opt_int(derived(1))?,
        verdict_valid: opt_int(derived(2))?.map(|v| v != 0),
        failing_path: opt_text(derived(3))?,
        ..Session::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_has_its_value() {
        let r = Session::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        let json = JsonTexts::of(&r);
        assert_eq!(session_args(&r, &json, None).len(), COLUMNS.len());
    }

    #[test]
    fn a_row_reads_every_selected_column_in_order() {
        // A real row (so a new column needs no change here), its derived
        // cells given: not lost, 3 secrets, valid, no path, imported.
        let mut s = crate::SqliteStore::open_in_memory().unwrap();
        let mut r = Session::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        r.model = Some("m".to_owned());
        r.source_path = Some("/f.jsonl".to_owned());
        r.escalation = Some(serde_json::json!({"needed": true}).to_string());
        r.cost_estimated = true;
        r.num_turns = Some(7);
        crate::Store::write_session(&mut s, &r).unwrap();
        let sql = format!(
            "SELECT {}, 0, 3, 1, NULL, 0 FROM sessions s",
            select(|_| true)
        );
        let conn = s.connection();
        let mut stmt = conn.prepare(&sql).unwrap();
        let n = stmt.column_count();
        let cells: Vec<Cell> = stmt
            .query_row([], |row| {
                (0..n).map(|i| row.get_ref(i).map(Cell::from)).collect()
            })
            .unwrap();
        let row = session_row(&cells).unwrap();
        assert_eq!(row.status, Status::Completed);
        assert_eq!(row.model.as_deref(), Some("m"));
        assert_eq!(row.source_path.as_deref(), Some("/f.jsonl"));
        assert_eq!(row.escalation.as_deref(), Some(r#"{"needed":true}"#));
        assert_eq!(row.num_turns, Some(7));
        assert!(row.cost_estimated);
        assert_eq!(row.secrets_masked, Some(3));
        assert_eq!(row.verdict_valid, Some(true));
        assert_eq!((row.lost, row.not_imported), (false, false));
        let all = select(|_| true);
        assert_eq!(all.split(", ").count(), READ.len());
        assert!(!all.split(", ").any(|c| c == "s.output" || c == "s.verdict"));
        assert!(select(|v| v < 6).contains("s.heartbeat_at, NULL, NULL, NULL, 0, 0, 0, NULL"));
    }

    #[test]
    fn a_session_read_back_writes_the_same_row() {
        // One type both ways: what a read gives, written to another store,
        // reads back equal (the read-only fields are ignored by the write).
        let mut r = Session::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        r.tier = 2;
        r.exit_code = Some(-1);
        r.duration_ms = Some(1500);
        r.input_tokens = i64::MAX;
        r.cache_write_tokens = 9;
        r.escalation = Some(r#"{"needed":false}"#.to_owned());
        r.project = Some("/p".to_owned());
        let mut a = crate::SqliteStore::open_in_memory().unwrap();
        crate::Store::write_session(&mut a, &r).unwrap();
        let read = crate::query::session(&a, "s1").unwrap().unwrap().session;
        assert_eq!(read.shown_status, "completed");
        let mut b = crate::SqliteStore::open_in_memory().unwrap();
        crate::Store::write_session(&mut b, &read).unwrap();
        let again = crate::query::session(&b, "s1").unwrap().unwrap().session;
        assert_eq!(again, read);
        assert_eq!(again.input_tokens, i64::MAX);
    }

    #[test]
    fn a_session_prints_its_keys_in_the_api_order() {
        // The API's JSON as it was when reads and writes had two types;
        // the fields only a write carries are not printed.
        let mut s = Session::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        s.output = Some(serde_json::json!({"x": 1}));
        s.events = vec![crate::NewEvent {
            level: "info".to_owned(),
            message: "m".to_owned(),
            service: None,
        }];
        let json = serde_json::to_value(&s).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "id",
                "parent_id",
                "tier",
                "profile",
                "agent",
                "model",
                "status",
                "exit_code",
                "started_at",
                "ended_at",
                "cost_usd",
                "duration_ms",
                "num_turns",
                "input_tokens",
                "output_tokens",
                "extraction_method",
                "error",
                "error_category",
                "summary",
                "escalation",
                "raw_log_path",
                "heartbeat_at",
                "lost",
                "not_imported",
                "shown_status",
                "project",
                "git_branch",
                "agent_version",
                "cache_read_tokens",
                "cache_write_tokens",
                "cost_estimated",
                "source_path",
                "secrets_masked",
                "verdict_valid",
                "failing_path",
            ]
        );
    }

    #[test]
    fn a_status_this_build_does_not_know_still_reads() {
        let mut s = crate::SqliteStore::open_in_memory().unwrap();
        let r = Session::new("s1", "2025-07-14T03:00:00.000Z", "completed");
        crate::Store::write_session(&mut s, &r).unwrap();
        s.connection()
            .execute("UPDATE sessions SET status = 'paused' WHERE id = 's1'", [])
            .unwrap();
        let d = crate::query::session(&s, "s1").unwrap().unwrap();
        assert_eq!(d.session.status, Status::Other("paused".to_owned()));
        assert_eq!(d.session.shown_status, "paused");
        let json = serde_json::to_value(&d.session).unwrap();
        assert_eq!(json["status"], "paused");
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
