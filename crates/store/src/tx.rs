//! The write trait: one transaction, whatever the backend.
//!
//! Note \[One write\]: every [`Store`](crate::Store) write is written once,
//! in `writes`, over a [`Tx`]: the SQL is SQLite's, with `?N`
//! placeholders that the Postgres transaction renumbers `$N` (as the
//! dashboard's queries do, Note \[Queries on both backends\] in `query`),
//! and the rows of a table go in as one [`Batch`]. What a [`Tx`] keeps to
//! its backend is only what the backends do differently:
//! - a batch: SQLite runs one cached statement per row; Postgres sends the
//!   rows as arrays, unnested in order, in one statement (Note \[One
//!   statement per table\] in `postgres`);
//! - locks: Postgres takes advisory locks (Note \[Feed order on Postgres\],
//!   Note \[Claims on Postgres\], Note \[Two importers\]); SQLite's write
//!   lock already serialises writers, so they are no-ops there;
//! - reinforcing a memory (Note \[Reinforcing on Postgres\]) and taking a
//!   lease (whose clock: the file's machine, or the server).

use std::borrow::Cow;

use crate::LeaseState;
use crate::error::Result;
use crate::rows::Cell;

/// One value bound to a statement. Borrowed where it can be, so building
/// a session's parameters copies no text.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Real(f64),
    /// A boolean (an integer 0/1 in SQLite, `BOOLEAN` or `BIGINT` on Postgres).
    Bool(bool),
    /// Text.
    Text(Cow<'a, str>),
}

impl<'a> Arg<'a> {
    /// Borrowed text.
    pub(crate) fn text(s: &'a str) -> Self {
        Arg::Text(Cow::Borrowed(s))
    }

    /// Borrowed text or NULL.
    pub(crate) fn opt_text(s: Option<&'a str>) -> Self {
        s.map_or(Arg::Null, Arg::text)
    }

    /// A count as a signed integer (saturating: a `u64` beyond `i64::MAX`
    /// is stored as `i64::MAX`, as the backends always did).
    pub(crate) fn count(n: u64) -> Self {
        Arg::Int(crate::count(n))
    }

    /// An integer or NULL.
    pub(crate) fn opt_int(n: Option<i64>) -> Self {
        n.map_or(Arg::Null, Arg::Int)
    }
}

/// One row's values, in its [`Batch`]'s column order.
pub type Row<'a> = Vec<Arg<'a>>;

/// What [`Tx::insert_rows`] did: the rows inserted, and their ids when asked.
pub type Inserted = (u64, Vec<i64>);

/// The type of a [`Batch`] column: what its Postgres array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `text[]`.
    Text,
    /// `bigint[]`.
    Int,
    /// `boolean[]`.
    Bool,
}

/// Rows of one table inserted in order by [`Tx::insert_rows`]:
/// `INSERT INTO {table} ({cols}) … {tail}`.
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    /// The table.
    pub table: &'static str,
    /// Its columns, in the order of each row's values.
    pub cols: &'static [(&'static str, Ty)],
    /// After the rows: an `ON CONFLICT` clause, or nothing.
    pub tail: &'static str,
}

impl Batch {
    /// The column names, comma separated.
    pub(crate) fn names(&self) -> String {
        let names: Vec<&str> = self.cols.iter().map(|c| c.0).collect();
        names.join(", ")
    }
}

/// Which SQL a [`Tx`] speaks, where the text has to differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite.
    Sqlite,
    /// Postgres.
    Postgres,
}

/// One memory to insert, or to reinforce when an active one has its
/// service and category.
#[derive(Debug, Clone, Copy)]
pub struct MemoryPut<'a> {
    /// The service, when the key named one.
    pub service: Option<&'a str>,
    /// The category.
    pub category: &'a str,
    /// The observation.
    pub value: &'a str,
    /// When (the session's end).
    pub at: &'a str,
    /// The session that reported it.
    pub session_id: &'a str,
    /// The session's tier.
    pub tier: i64,
}

/// One write transaction (Note \[One write\]). Errors carry what the
/// transaction was doing, so the store's retry and exit codes see them
/// as before.
pub trait Tx {
    /// Which SQL this transaction speaks.
    fn dialect(&self) -> Dialect;

    /// Run one statement (`?N` placeholders); the rows it changed.
    ///
    /// # Errors
    /// When the statement fails.
    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64>;

    /// The first row of a query, as cells.
    ///
    /// # Errors
    /// When the query fails.
    fn row(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Vec<Cell>>>;

    /// Insert one row (`sql` without `RETURNING`); its `id`.
    ///
    /// # Errors
    /// When the statement fails.
    fn insert_id(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<i64>;

    /// Insert `rows` (each in `batch`'s column order) in order; with
    /// `ids`, the new rows' ids in that order (else none). The rows
    /// inserted are `rows.len()` unless the tail skips some: it is the
    /// count returned in the second place.
    ///
    /// # Errors
    /// When the statement fails.
    fn insert_rows(&mut self, batch: &Batch, rows: &[Row<'_>], ids: bool) -> Result<Inserted>;

    /// A lock held to commit, named by a class and a key (Postgres's
    /// advisory locks); nothing on SQLite, whose write lock serialises.
    ///
    /// # Errors
    /// When the lock cannot be taken.
    fn lock(&mut self, class: i32, key: &str) -> Result<()>;

    /// Check foreign keys at commit, not at each statement (a copy's
    /// batch may hold a child before its parent).
    ///
    /// # Errors
    /// When the database refuses.
    fn defer_constraints(&mut self) -> Result<()>;

    /// The feed's lock (Note \[Feed order on Postgres\]); nothing on SQLite.
    ///
    /// # Errors
    /// When the lock cannot be taken.
    fn feed_lock(&mut self) -> Result<()>;

    /// Insert a memory, or reinforce the active one with its service and
    /// category; whether it was new.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn put_memory(&mut self, m: &MemoryPut<'_>) -> Result<bool>;

    /// Take or renew lease `name` for `holder` (Note \[Supervisor leases\]
    /// in the runtime's `ops`), by this backend's clock.
    ///
    /// # Errors
    /// When the database cannot be written.
    fn take_lease(&mut self, name: &str, holder: &str, ttl_ms: u64) -> Result<LeaseState>;
}

impl<'a> From<&'a Cell> for Arg<'a> {
    fn from(c: &'a Cell) -> Self {
        match c {
            Cell::Null => Arg::Null,
            Cell::Int(v) => Arg::Int(*v),
            Cell::Real(v) => Arg::Real(*v),
            Cell::Text(s) => Arg::text(s),
        }
    }
}

/// Placeholders as Postgres's: `?N` becomes `$N`, and a bare `?` the next
/// number (`store copy`'s statements). The store's SQL has no `?` in a
/// string literal.
pub(crate) fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        out.push('$');
        if !chars.peek().is_some_and(char::is_ascii_digit) {
            n += 1;
            out.push_str(&n.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_for_postgres() {
        assert_eq!(
            dollars("UPDATE t SET a = ?2 WHERE id = ?1"),
            "UPDATE t SET a = $2 WHERE id = $1"
        );
    }

    #[test]
    fn bare_placeholders_are_numbered_for_postgres() {
        assert_eq!(
            dollars("INSERT INTO t (a, b) VALUES (?, ?)"),
            "INSERT INTO t (a, b) VALUES ($1, $2)"
        );
    }

    #[test]
    fn counts_saturate() {
        assert_eq!(Arg::count(u64::MAX), Arg::Int(i64::MAX));
        assert_eq!(Arg::count(7), Arg::Int(7));
    }
}
