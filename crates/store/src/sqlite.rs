//! The SQLite backend: one file (`agentshape.db` by default), WAL, migrations
//! embedded and applied on open.
//!
//! Note \[Migrations\]: each file in `migrations/` is compiled in and applied
//! in order inside one transaction; `PRAGMA user_version` records how many
//! have run. A database from a newer build (higher version) is refused
//! rather than guessed at.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::error::{Context, Error, Result};
use crate::{
    LEVELS, MemoryLine, NEW_MEMORY_CONFIDENCE, Overview, REINFORCE_STEP, SessionLine,
    SessionRecord, Store, WriteReport, parse_memory_key,
};

/// The embedded migrations, in order.
const MIGRATIONS: &[&str] = &[include_str!("../migrations/0001_init.sql")];

/// A SQLite store.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Open (creating if needed) the database at `path`, switch it to WAL and
    /// apply pending migrations.
    ///
    /// # Errors
    /// When the file cannot be opened or migrated, or is from a newer build.
    pub fn open(path: &Path) -> Result<Self> {
        let name = path.display().to_string();
        let conn = Connection::open(path).context(|| format!("opening `{name}`"))?;
        // WAL lets a dashboard read while a run writes; NORMAL sync is safe under WAL.
        conn.pragma_update(None, "journal_mode", "WAL")
            .context(|| format!("enabling WAL on `{name}`"))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .context(|| format!("configuring `{name}`"))?;
        Self::init(conn, &name)
    }

    /// An in-memory database (tests, examples).
    ///
    /// # Errors
    /// When migrations fail.
    pub fn open_in_memory() -> Result<Self> {
        let conn = Connection::open_in_memory().context(|| "opening in-memory store".to_owned())?;
        Self::init(conn, ":memory:")
    }

    fn init(mut conn: Connection, name: &str) -> Result<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .context(|| format!("configuring `{name}`"))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .context(|| format!("configuring `{name}`"))?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .context(|| format!("reading the schema version of `{name}`"))?;
        let known = i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX);
        if version > known {
            return Err(Error::TooNew {
                path: name.to_owned(),
                found: version,
                known,
            });
        }
        let tx = conn
            .transaction()
            .context(|| format!("migrating `{name}`"))?;
        for (i, sql) in MIGRATIONS
            .iter()
            .enumerate()
            .skip(usize::try_from(version).unwrap_or(0))
        {
            tx.execute_batch(sql)
                .context(|| format!("applying migration {} to `{name}`", i + 1))?;
        }
        tx.pragma_update(None, "user_version", known)
            .context(|| format!("migrating `{name}`"))?;
        tx.commit().context(|| format!("migrating `{name}`"))?;
        Ok(SqliteStore { conn })
    }

    /// The underlying connection, for ad-hoc queries (tests, reports).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn insert_session(tx: &Transaction<'_>, r: &SessionRecord) -> rusqlite::Result<()> {
    let escalation = r.escalation.as_ref().map(ToString::to_string);
    tx.execute(
        "INSERT INTO sessions (id, parent_id, tier, profile, agent, model, status, exit_code,
            started_at, ended_at, cost_usd, duration_ms, num_turns, input_tokens, output_tokens,
            extraction_method, error, error_category, summary, escalation, raw_log_path)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
        params![
            r.id,
            r.parent_id,
            r.tier,
            r.profile,
            r.agent,
            r.model,
            r.status,
            r.exit_code,
            r.started_at,
            r.ended_at,
            r.cost_usd,
            r.duration_ms.map(to_i64),
            r.num_turns.map(to_i64),
            to_i64(r.input_tokens),
            to_i64(r.output_tokens),
            r.extraction_method,
            r.error,
            r.error_category,
            r.summary,
            escalation,
            r.raw_log_path,
        ],
    )?;
    Ok(())
}

fn write(
    tx: &Transaction<'_>,
    r: &SessionRecord,
    report: &mut WriteReport,
) -> rusqlite::Result<()> {
    insert_session(tx, r)?;
    let at = r.ended_at.as_deref().unwrap_or(&r.started_at);
    {
        let mut ev = tx.prepare_cached(
            "INSERT INTO events (session_id, level, service, message, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for e in &r.events {
            if !LEVELS.contains(&e.level.as_str()) {
                report.events_rejected += 1;
                report.warnings.push(format!(
                    "event rejected: level `{}` is not one of info, warning, critical",
                    e.level
                ));
                continue;
            }
            ev.execute(params![r.id, e.level, e.service, e.message, at])?;
            report.events += 1;
        }
    }
    {
        let mut find = tx.prepare_cached(
            "SELECT id, confidence FROM memories
             WHERE active = 1 AND category = ?1 AND service IS ?2 ORDER BY id LIMIT 1",
        )?;
        let mut reinforce = tx.prepare_cached(
            "UPDATE memories SET confidence = ?2, observation = ?3, updated_at = ?4, session_id = ?5, tier = ?6
             WHERE id = ?1",
        )?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO memories (service, category, observation, confidence, active, created_at, updated_at, session_id, tier)
             VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5, ?6, ?7)",
        )?;
        for m in &r.memories {
            let Some(key) = parse_memory_key(&m.key) else {
                report.memories_rejected += 1;
                report.warnings.push(format!(
                    "memory rejected: key `{}` is not `service:category` or `category`",
                    m.key
                ));
                continue;
            };
            let found: Option<(i64, f64)> = find
                .query_row(params![key.category, key.service], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()?;
            if let Some((id, confidence)) = found {
                // Rounded to hundredths so 0.7 + 0.1 + 0.1 reads 0.9, not 0.8999999.
                let raised = (((confidence + REINFORCE_STEP) * 100.0).round() / 100.0).min(1.0);
                reinforce.execute(params![id, raised, m.value, at, r.id, r.tier])?;
                report.memories_reinforced += 1;
            } else {
                insert.execute(params![
                    key.service,
                    key.category,
                    m.value,
                    NEW_MEMORY_CONFIDENCE,
                    at,
                    r.id,
                    r.tier
                ])?;
                report.memories_new += 1;
            }
        }
    }
    {
        let mut svc = tx.prepare_cached(
            "INSERT INTO services_checked (session_id, name, status, detail) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for s in &r.services {
            svc.execute(params![r.id, s.name, s.status, s.detail])?;
            report.services += 1;
        }
    }
    if let Some(parent) = &r.parent_id {
        let mut esc = tx.prepare_cached(
            "INSERT INTO escalations (parent_id, child_id, service, tier, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for service in &r.escalated_for {
            esc.execute(params![parent, r.id, service, r.tier, r.started_at])?;
        }
    }
    Ok(())
}

impl Store for SqliteStore {
    fn write_session(&mut self, record: &SessionRecord) -> Result<WriteReport> {
        let what = || format!("writing session `{}`", record.id);
        let tx = self.conn.transaction().context(what)?;
        let exists: bool = tx
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)",
                [&record.id],
                |r| r.get(0),
            )
            .context(what)?;
        let mut report = WriteReport::default();
        if exists {
            return Ok(report);
        }
        write(&tx, record, &mut report).context(what)?;
        tx.commit().context(what)?;
        report.inserted = true;
        Ok(report)
    }

    fn has_session(&self, id: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)",
                [id],
                |r| r.get(0),
            )
            .context(|| format!("looking up session `{id}`"))
    }

    fn escalations_since(&self, service: &str, since: &str) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM escalations WHERE service = ?1 AND created_at >= ?2",
                params![service, since],
                |r| r.get(0),
            )
            .context(|| format!("counting escalations for `{service}`"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn prune_memories(&mut self, before: &str) -> Result<u64> {
        let n = self
            .conn
            .execute(
                "UPDATE memories SET active = 0 WHERE active = 1 AND updated_at < ?1",
                [before],
            )
            .context(|| "pruning memories".to_owned())?;
        Ok(n as u64)
    }

    fn overview(&self) -> Result<Overview> {
        let ctx = || "reading the store overview".to_owned();
        let c = &self.conn;
        let count = |sql: &str| -> Result<u64> {
            let n: i64 = c.query_row(sql, [], |r| r.get(0)).context(ctx)?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(sql).context(ctx)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                .context(ctx)?;
            let mut out = Vec::new();
            for row in rows {
                let (k, n) = row.context(ctx)?;
                out.push((k, u64::try_from(n).unwrap_or(0)));
            }
            Ok(out)
        };
        let mut o = Overview {
            sessions_by_status: grouped(
                "SELECT status, COUNT(*) FROM sessions GROUP BY status ORDER BY status",
            )?,
            events_by_level: grouped(
                "SELECT level, COUNT(*) FROM events GROUP BY level ORDER BY level",
            )?,
            active_memories: count("SELECT COUNT(*) FROM memories WHERE active = 1")?,
            inactive_memories: count("SELECT COUNT(*) FROM memories WHERE active = 0")?,
            services_checked: count("SELECT COUNT(*) FROM services_checked")?,
            escalations: count("SELECT COUNT(*) FROM escalations")?,
            ..Overview::default()
        };
        let mut stmt = c
            .prepare(
                "SELECT s.id, s.parent_id, s.tier, s.status, s.extraction_method, s.error_category,
                        (SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), s.summary
                 FROM sessions s ORDER BY s.started_at, s.id",
            )
            .context(ctx)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SessionLine {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    tier: r.get(2)?,
                    status: r.get(3)?,
                    extraction_method: r.get(4)?,
                    error_category: r.get(5)?,
                    events: u64::try_from(r.get::<_, i64>(6)?).unwrap_or(0),
                    summary: r.get(7)?,
                })
            })
            .context(ctx)?;
        for row in rows {
            o.sessions.push(row.context(ctx)?);
        }
        let mut stmt = c
            .prepare(
                "SELECT service, category, observation, confidence FROM memories
                 WHERE active = 1 ORDER BY confidence DESC, id",
            )
            .context(ctx)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(MemoryLine {
                    service: r.get(0)?,
                    category: r.get(1)?,
                    observation: r.get(2)?,
                    confidence: r.get(3)?,
                })
            })
            .context(ctx)?;
        for row in rows {
            o.memories.push(row.context(ctx)?);
        }
        Ok(o)
    }
}
