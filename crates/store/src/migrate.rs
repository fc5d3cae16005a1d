//! Schema migrations, embedded, for both backends.
//!
//! Note \[Migrations\]: each backend has its own ordered list of SQL files
//! compiled in; the number of files applied is the schema version. A store
//! opened for writing applies what is missing, all in one transaction that
//! re-reads the version under a lock first (many processes may open a new
//! store at the same moment: the first applies, the others see the new
//! version and apply nothing). A store from a newer build (higher version)
//! is refused rather than guessed at. Migrations are never edited, only
//! added.
//!
//! Where the version lives: SQLite keeps it in `PRAGMA user_version` (as it
//! always did, so an existing file opens unchanged); Postgres keeps one row
//! per applied migration in `schema_migrations` (`version`, `name`, `applied_at`),
//! and serialises migrators with a transaction-scoped advisory lock
//! ([`PG_MIGRATION_LOCK`]).
//!
//! Note \[One logical schema\]: both backends hold the same eighteen tables
//! (`sessions`, `events`, `memories`, `services_checked`, `escalations`,
//! `feed`, since version 5 / 2 `escalation_claims` and `leases`, and since
//! version 6 / 3 `session_tools`, `native_files` and `store_meta`, since
//! version 8 / 5 `secrets_found`, since version 9 / 6 `hook_calls`, and since
//! version 10 / 7 `session_errors`, `session_outcome_days` and
//! `session_error_days`, and since version 11 / 8 `alert_firings` and
//! `alert_deliveries`, since version 12 / 9 `usage_calls`, and since
//! version 13 / 10 `usage_files`, and since version 14 / 11 the `feed`
//! column `seq` with its partial unique index `feed_session_seq`, with the
//! `sessions` columns `outcome`, `repaired`, `retries`, `last_hook_id`, all
//! kept by triggers on both: Note \[Kept outcomes\] in `query::stats`) with the
//! same columns and meanings (a flag such as `sessions.cost_estimated` is
//! 0/1 on SQLite and a BOOLEAN on Postgres); timestamps are RFC 3339 text
//! on both (Note \[Text timestamps\]) so a copied store compares and sorts
//! the same. What differs is physical: SQLite's dashboard indexes, its FTS5
//! text search and the trigger-kept counters (`list_counts`,
//! `session_days`, since version 7 `feed_fts`, `session_days_by` and
//! `tool_totals`) exist only there, and Postgres's transcript search is
//! an expression index (`feed_search`, version 4), and it has its own
//! `sessions_profile_started` (SQLite's `sessions_profile_order` serves
//! there); the covering index for
//! the stats' percentiles (`sessions_outcome`, version 10 / 7) lists its
//! columns with `INCLUDE` on Postgres; Postgres has a partial unique index on
//! active memories, which is what makes concurrent reinforcement race-free
//! there (Note \[Reinforcing on Postgres\] in `postgres`).

/// One embedded migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// 1-based; the schema version once it has been applied.
    pub version: i64,
    /// File name, for messages and the `schema_migrations` row.
    pub name: &'static str,
    /// The SQL, run as one batch.
    pub sql: &'static str,
}

/// SQLite's migrations, in order (the version is `PRAGMA user_version`).
pub const SQLITE: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init.sql",
        sql: include_str!("../migrations/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_live.sql",
        sql: include_str!("../migrations/0002_live.sql"),
    },
    Migration {
        version: 3,
        name: "0003_verdict.sql",
        sql: include_str!("../migrations/0003_verdict.sql"),
    },
    Migration {
        version: 4,
        name: "0004_lists.sql",
        sql: include_str!("../migrations/0004_lists.sql"),
    },
    Migration {
        version: 5,
        name: "0005_scale.sql",
        sql: include_str!("../migrations/0005_scale.sql"),
    },
    Migration {
        version: 6,
        name: "0006_native.sql",
        sql: include_str!("../migrations/0006_native.sql"),
    },
    Migration {
        version: 7,
        name: "0007_search.sql",
        sql: include_str!("../migrations/0007_search.sql"),
    },
    Migration {
        version: 8,
        name: "0008_secrets.sql",
        sql: include_str!("../migrations/0008_secrets.sql"),
    },
    Migration {
        version: 9,
        name: "0009_hooks.sql",
        sql: include_str!("../migrations/0009_hooks.sql"),
    },
    Migration {
        version: 10,
        name: "0010_outcomes.sql",
        sql: include_str!("../migrations/0010_outcomes.sql"),
    },
    Migration {
        version: 11,
        name: "0011_alerts.sql",
        sql: include_str!("../migrations/0011_alerts.sql"),
    },
    Migration {
        version: 12,
        name: "0012_usage.sql",
        sql: include_str!("../migrations/0012_usage.sql"),
    },
    Migration {
        version: 13,
        name: "0013_usage_files.sql",
        sql: include_str!("../migrations/0013_usage_files.sql"),
    },
    Migration {
        version: 14,
        name: "0014_feed_seq.sql",
        sql: include_str!("../migrations/0014_feed_seq.sql"),
    },
];

/// Postgres's migrations, in order (recorded in `schema_migrations`).
pub const POSTGRES: &[Migration] = &[
    Migration {
        version: 1,
        name: "postgres/0001_init.sql",
        sql: include_str!("../migrations/postgres/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "postgres/0002_scale.sql",
        sql: include_str!("../migrations/postgres/0002_scale.sql"),
    },
    Migration {
        version: 3,
        name: "postgres/0003_native.sql",
        sql: include_str!("../migrations/postgres/0003_native.sql"),
    },
    Migration {
        version: 4,
        name: "postgres/0004_search.sql",
        sql: include_str!("../migrations/postgres/0004_search.sql"),
    },
    Migration {
        version: 5,
        name: "postgres/0005_secrets.sql",
        sql: include_str!("../migrations/postgres/0005_secrets.sql"),
    },
    Migration {
        version: 6,
        name: "postgres/0006_hooks.sql",
        sql: include_str!("../migrations/postgres/0006_hooks.sql"),
    },
    Migration {
        version: 7,
        name: "postgres/0007_outcomes.sql",
        sql: include_str!("../migrations/postgres/0007_outcomes.sql"),
    },
    Migration {
        version: 8,
        name: "postgres/0008_alerts.sql",
        sql: include_str!("../migrations/postgres/0008_alerts.sql"),
    },
    Migration {
        version: 9,
        name: "postgres/0009_usage.sql",
        sql: include_str!("../migrations/postgres/0009_usage.sql"),
    },
    Migration {
        version: 10,
        name: "postgres/0010_usage_files.sql",
        sql: include_str!("../migrations/postgres/0010_usage_files.sql"),
    },
    Migration {
        version: 11,
        name: "postgres/0011_feed_seq.sql",
        sql: include_str!("../migrations/postgres/0011_feed_seq.sql"),
    },
];

/// The advisory lock key migrators take on Postgres (any fixed number that
/// no other code uses; ASCII "agshmigr").
pub const PG_MIGRATION_LOCK: i64 = 0x6167_7368_6d69_6772;

/// The schema version a list brings a store to.
pub fn latest(list: &[Migration]) -> i64 {
    list.last().map_or(0, |m| m.version)
}

/// What opening a store at `current` must do with `list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan<'a> {
    /// Up to date.
    Current,
    /// Apply these, in order.
    Apply(&'a [Migration]),
    /// Written by a newer build: refuse.
    TooNew {
        /// The store's version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
}

/// The migrations missing from a store at version `current`.
pub fn plan(list: &[Migration], current: i64) -> Plan<'_> {
    let known = latest(list);
    if current > known {
        return Plan::TooNew {
            found: current,
            known,
        };
    }
    let done = usize::try_from(current.max(0)).unwrap_or(usize::MAX);
    match list.get(done..) {
        Some([]) | None => Plan::Current,
        Some(rest) => Plan::Apply(rest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_one_based_and_dense() {
        for list in [SQLITE, POSTGRES] {
            for (i, m) in list.iter().enumerate() {
                assert_eq!(m.version, i64::try_from(i).unwrap() + 1, "{}", m.name);
            }
        }
    }

    #[test]
    fn plans_from_every_version() {
        let n = SQLITE.len();
        assert_eq!(plan(SQLITE, 0), Plan::Apply(SQLITE));
        assert_eq!(plan(SQLITE, 2), Plan::Apply(&SQLITE[2..]));
        assert_eq!(plan(SQLITE, latest(SQLITE)), Plan::Current);
        let newer = latest(SQLITE) + 1;
        assert_eq!(
            plan(SQLITE, newer),
            Plan::TooNew {
                found: newer,
                known: i64::try_from(n).unwrap()
            }
        );
        assert_eq!(plan(POSTGRES, 0), Plan::Apply(POSTGRES));
    }

    /// Note [One logical schema]: every data column of SQLite's schema is in
    /// Postgres's, and the other way round (physical extras aside).
    #[test]
    fn both_backends_declare_the_same_tables_and_columns() {
        fn columns(sql: &str) -> Vec<(String, String)> {
            let mut out = Vec::new();
            let mut table: Option<String> = None;
            for line in sql.lines() {
                let t = line.trim();
                if let Some(rest) = t.strip_prefix("CREATE TABLE ") {
                    let name = rest.split_whitespace().next().unwrap_or("");
                    table = Some(name.trim_end_matches('(').to_owned());
                    continue;
                }
                if t.starts_with(')') {
                    table = None;
                    continue;
                }
                if let Some(rest) = t.strip_prefix("ALTER TABLE sessions ADD COLUMN ") {
                    let col = rest.split_whitespace().next().unwrap_or("");
                    out.push(("sessions".to_owned(), col.to_owned()));
                    continue;
                }
                if let Some(table) = &table {
                    let col = t.split_whitespace().next().unwrap_or("");
                    if !col.is_empty()
                        && !col.starts_with("--")
                        && !["PRIMARY", "UNIQUE", "CONSTRAINT"].contains(&col)
                    {
                        out.push((table.clone(), col.to_owned()));
                    }
                }
            }
            out.sort();
            out
        }
        let physical = [
            "list_counts",
            "session_days",
            "session_days_by",
            "tool_totals",
            "schema_migrations",
        ];
        let keep = |v: Vec<(String, String)>| {
            v.into_iter()
                .filter(|(t, _)| !physical.contains(&t.as_str()))
                .collect::<Vec<_>>()
        };
        let sqlite = keep(columns(
            &SQLITE.iter().map(|m| m.sql).collect::<Vec<_>>().join("\n"),
        ));
        let postgres = keep(columns(
            &POSTGRES
                .iter()
                .map(|m| m.sql)
                .collect::<Vec<_>>()
                .join("\n"),
        ));
        assert!(sqlite.len() > 40, "{sqlite:?}");
        assert_eq!(sqlite, postgres);
    }
}
