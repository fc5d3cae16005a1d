//! Rows as cells: the currency of `store copy`, the alerts and the
//! dashboard's queries on both backends. Its own module so that those
//! three depend on it and not on each other (issue 42: no module circles).

use crate::Store;
use crate::error::{Error, Result};

/// One value of a row, whatever the backend (the copy's own currency;
/// hidden: not an API to build on).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Real(f64),
    /// Text.
    Text(String),
}

impl Cell {
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Cell::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// A SQLite value as a cell (a blob as text, lossily: the store writes none).
impl From<rusqlite::types::ValueRef<'_>> for Cell {
    fn from(v: rusqlite::types::ValueRef<'_>) -> Self {
        use rusqlite::types::ValueRef;
        match v {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Int(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                Cell::Text(String::from_utf8_lossy(t).into_owned())
            }
        }
    }
}

/// What `copy` needs from a backend: read rows, and write many statements
/// in one transaction with deferred foreign keys. Statements use `?`
/// placeholders; Postgres renumbers them.
#[doc(hidden)]
pub trait Rows {
    /// Rows of a query.
    fn read(&self, sql: &str, params: &[Cell]) -> Result<Vec<Vec<Cell>>>;
    /// Run the statements in one transaction; the rows each changed.
    fn write_all(&mut self, stmts: &[(String, Vec<Cell>)]) -> Result<Vec<u64>>;
}

/// A store that can be copied from and to (both backends).
pub trait Copyable: Store {
    /// Its rows, for reading.
    #[doc(hidden)]
    fn copy_rows(&self) -> &dyn Rows;
    /// Its rows, for writing.
    #[doc(hidden)]
    fn copy_rows_mut(&mut self) -> &mut dyn Rows;
}

// Cells read as the column types they hold: a cell of another type is a
// damaged row, an error, never a panic.

/// A cell that does not hold what its column should: a damaged row.
pub(crate) fn bad(what: &str, c: &Cell) -> Error {
    Error::Unexpected {
        what: format!("{what}: unexpected value {c:?}"),
    }
}

pub(crate) fn text(c: &Cell) -> Result<String> {
    match c {
        Cell::Text(s) => Ok(s.clone()),
        other => Err(bad("a text column", other)),
    }
}

pub(crate) fn opt_text(c: &Cell) -> Result<Option<String>> {
    match c {
        Cell::Null => Ok(None),
        other => text(other).map(Some),
    }
}

pub(crate) fn int(c: &Cell) -> Result<i64> {
    match c {
        Cell::Int(v) => Ok(*v),
        other => Err(bad("an integer column", other)),
    }
}

pub(crate) fn opt_int(c: &Cell) -> Result<Option<i64>> {
    match c {
        Cell::Null => Ok(None),
        other => int(other).map(Some),
    }
}

pub(crate) fn real(c: &Cell) -> Result<f64> {
    match c {
        Cell::Real(v) => Ok(*v),
        // SQLite keeps a whole REAL as an integer.
        #[allow(clippy::cast_precision_loss)] // what SQLite itself does
        Cell::Int(v) => Ok(*v as f64),
        other => Err(bad("a real column", other)),
    }
}

pub(crate) fn opt_real(c: &Cell) -> Result<Option<f64>> {
    match c {
        Cell::Null => Ok(None),
        other => real(other).map(Some),
    }
}

pub(crate) fn flag(c: &Cell) -> Result<bool> {
    Ok(int(c)? != 0)
}

/// Cell `i` of a row (a short row is a damaged query, not a panic).
pub(crate) fn at(r: &[Cell], i: usize) -> &Cell {
    r.get(i).unwrap_or(&Cell::Null)
}
