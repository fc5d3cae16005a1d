//! Where a store is: `sqlite:PATH`, a plain path, or `postgres://…`.
//!
//! Note \[Store locations\]: every command that takes `--store` reads the
//! same forms, and `AGENTSHAPE_STORE` gives the default so a fleet is
//! configured once (a flag beats the environment). A plain path stays a
//! SQLite file, as it always was; `sqlite:PATH` says so explicitly;
//! `postgres://` and `postgresql://` are libpq-style URLs (a Unix socket
//! folder goes percent-encoded in the host: `postgresql://me@%2Frun%2Fpg/db`),
//! and so is a libpq `key=value` string whose first key is one the client
//! knows (`host=db.internal dbname=ops`; a file named so needs `sqlite:`).
//! Anything else that looks like `scheme://` is refused rather than taken
//! for a file name. Passwords never reach a message: [`StoreUrl`]'s
//! `Display` redacts them with [`redact`], the one function every message
//! uses (it cuts the string where the client does).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::{DEFAULT_DB, Store};

/// The environment variable that gives the default store.
pub const STORE_ENV: &str = "AGENTSHAPE_STORE";

/// A parsed store location.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A Postgres URL, exactly as given (with its password, if any).
    Postgres(String),
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({self})")
    }
}

impl fmt::Display for StoreUrl {
    /// The location for messages: a Postgres password is replaced by `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(p) => write!(f, "{}", p.display()),
            StoreUrl::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// The one redaction of connection strings (Note \[One reading of a
/// connection string\] in `conninfo`).
pub use crate::conninfo::redact;

impl StoreUrl {
    /// Parse a location (Note \[Store locations\]).
    ///
    /// # Errors
    /// [`Error::BadUrl`] for an empty location, an unknown scheme or a
    /// Postgres URL the client cannot read.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = |reason: &str| Error::BadUrl {
            url: redact(s),
            reason: reason.to_owned(),
        };
        if s.trim().is_empty() {
            return Err(bad(
                "empty; expected sqlite:PATH, postgres://… or a file path",
            ));
        }
        if let Some(rest) = s.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(bad("`sqlite:` needs a path, like sqlite:agentshape.db"));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        let scheme = crate::conninfo::scheme_end(s).map(|end| &s[..end - 3]);
        match scheme {
            // Lower case only: the client reads no other spelling.
            Some("postgres" | "postgresql") => {
                crate::postgres::read_config(s)?;
                Ok(StoreUrl::Postgres(s.to_owned()))
            }
            Some(sch) => Err(bad(&format!(
                "unknown scheme `{sch}`; expected sqlite:PATH, postgres://… or a file path"
            ))),
            // `host=db.internal dbname=ops`: libpq's other form.
            None if crate::conninfo::looks_like_key_values(s) => {
                crate::postgres::read_config(s)?;
                Ok(StoreUrl::Postgres(s.to_owned()))
            }
            None => Ok(StoreUrl::Sqlite(PathBuf::from(s))),
        }
    }

    /// The location from a flag, else `AGENTSHAPE_STORE`, else
    /// [`DEFAULT_DB`]: the one rule every command follows.
    ///
    /// # Errors
    /// As [`StoreUrl::parse`], naming where the bad value came from.
    pub fn resolve(flag: Option<&str>) -> Result<Self> {
        if let Some(f) = flag {
            return Self::parse(f);
        }
        match std::env::var(STORE_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v).map_err(|e| match e {
                Error::BadUrl { url, reason } => Error::BadUrl {
                    url,
                    reason: format!("{reason} (from {STORE_ENV})"),
                },
                other => other,
            }),
            _ => Ok(StoreUrl::Sqlite(PathBuf::from(DEFAULT_DB))),
        }
    }

    /// The SQLite path, when it is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            StoreUrl::Sqlite(p) => Some(p),
            StoreUrl::Postgres(_) => None,
        }
    }

    /// Whether it names a Postgres server.
    pub fn is_postgres(&self) -> bool {
        matches!(self, StoreUrl::Postgres(_))
    }

    /// Open for writing: a SQLite file is created (0600) when missing; both
    /// backends apply their pending migrations (Note \[Migrations\]).
    ///
    /// # Errors
    /// The backend's open errors.
    pub fn open(&self) -> Result<Box<dyn Store>> {
        Ok(match self {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open(p)?),
            StoreUrl::Postgres(url) => Box::new(PgStore::open(url)?),
        })
    }

    /// [`StoreUrl::open`] for a caller that must answer quickly whatever
    /// the store does (`agentshape hook`): a SQLite store waits at most
    /// `patience` for each lock and retries nothing
    /// ([`SqliteStore::open_with_patience`]); a Postgres connect is given
    /// up after `patience` ([`PgStore::open_with_patience`]). A locked store
    /// is then [`ErrorKind::Busy`](crate::ErrorKind::Busy), soon.
    ///
    /// # Errors
    /// The backend's open errors.
    pub fn open_with_patience(&self, patience: Duration) -> Result<Box<dyn Store>> {
        Ok(match self {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open_with_patience(p, patience, 0)?),
            StoreUrl::Postgres(url) => Box::new(PgStore::open_with_patience(url, patience)?),
        })
    }

    /// Open for reading only: nothing is created or migrated, and a store
    /// that does not exist (no file; no agentshape schema) is
    /// [`ErrorKind::Missing`](crate::ErrorKind::Missing).
    ///
    /// # Errors
    /// The backend's open errors.
    pub fn open_read_only(&self) -> Result<Box<dyn Store>> {
        Ok(match self {
            StoreUrl::Sqlite(p) => Box::new(SqliteStore::open_read_only(p)?),
            StoreUrl::Postgres(url) => Box::new(PgStore::open_read_only(url)?),
        })
    }
}

impl StoreUrl {
    /// Open for `store copy`: the source read-only, the target for writing.
    ///
    /// # Errors
    /// As [`StoreUrl::open`] and [`StoreUrl::open_read_only`].
    pub fn open_copyable(&self, write: bool) -> Result<Box<dyn crate::rows::Copyable>> {
        Ok(match (self, write) {
            (StoreUrl::Sqlite(p), true) => Box::new(SqliteStore::open(p)?),
            (StoreUrl::Sqlite(p), false) => Box::new(SqliteStore::open_read_only(p)?),
            (StoreUrl::Postgres(url), true) => Box::new(PgStore::open(url)?),
            (StoreUrl::Postgres(url), false) => Box::new(PgStore::open_read_only(url)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_as_the_note_says() {
        let pg = |s: &str| Some(StoreUrl::Postgres(s.to_owned()));
        let file = |s: &str| Some(StoreUrl::Sqlite(PathBuf::from(s)));
        let cases: &[(&str, Option<StoreUrl>)] = &[
            ("agentshape.db", file("agentshape.db")),
            ("/var/lib/a.db", file("/var/lib/a.db")),
            ("sqlite:ops.db", file("ops.db")),
            ("sqlite:///abs/ops.db", file("/abs/ops.db")),
            ("weird:name.db", file("weird:name.db")),
            ("postgres://u@localhost/db", pg("postgres://u@localhost/db")),
            (
                "postgresql://u:pw@h:5433/db",
                pg("postgresql://u:pw@h:5433/db"),
            ),
            ("POSTGRES://h/db", None),
            (
                "postgresql://me@%2Frun%2Fpg/db",
                pg("postgresql://me@%2Frun%2Fpg/db"),
            ),
            ("mysql://h/db", None),
            ("http://h/db", None),
            ("", None),
            ("  ", None),
            ("sqlite:", None),
            ("postgres://h:notaport/db", None),
        ];
        for (input, want) in cases {
            let got = StoreUrl::parse(input);
            if let Some(w) = want {
                assert_eq!(got.as_ref().ok(), Some(w), "{input:?}: {got:?}");
            } else {
                let e = got.expect_err(input);
                assert_eq!(e.kind(), crate::ErrorKind::Usage, "{input:?}");
            }
        }
    }

    #[test]
    fn passwords_never_reach_a_message() {
        let cases = [
            ("postgres://u:s3cret@h/db", "postgres://u:***@h/db"),
            ("postgres://u@h/db", "postgres://u@h/db"),
            (
                "postgres://h/db?password=s3cret&x=1",
                "postgres://h/db?password=***&x=1",
            ),
            ("postgres://u:p@ss:w@h:1/db", "postgres://u:***@h:1/db"),
            ("postgres://u:s3cret@h", "postgres://u:***@h"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want);
        }
        let e = StoreUrl::parse("postgres://u:s3cret@h:bad/db").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let u = StoreUrl::parse("postgres://u:s3cret@h/db").unwrap();
        assert!(!format!("{u} {u:?}").contains("s3cret"));
    }
}
