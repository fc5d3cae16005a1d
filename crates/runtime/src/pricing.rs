//! The price table a command prices sessions with: the built-in one,
//! extended by the user's file (core's `pricing` parses; this reads).
//!
//! Note \[Price files\]: the user file is, in order, `--prices FILE`, then
//! `$AGENTSHAPE_PRICES`, then `$XDG_CONFIG_HOME/agentshape/prices.toml`
//! (or `~/.config/agentshape/prices.toml`) when that file exists. A file
//! named explicitly (flag or variable) must exist; the one in the config
//! folder is optional. A bad file is a config error (exit 64), never a
//! silent fallback to built-in prices.

use std::path::{Path, PathBuf};

use agentshape_core::pricing::PriceTable;

use crate::error::{Error, Result};
use crate::infile::{MAX_CONFIG_BYTES, read_to_string};

/// The user's price file (Note \[Price files\]): the explicit one, else the
/// one in the config folder when it exists.
pub fn user_file(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("AGENTSHAPE_PRICES") {
        return Some(PathBuf::from(p));
    }
    let dir = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let file = dir.join("agentshape").join("prices.toml");
    file.is_file().then_some(file)
}

/// The built-in table extended by the user's file (Note \[Price files\]).
///
/// # Errors
/// [`Error::Input`] when a named file is missing or not a regular file;
/// [`Error::Config`] when it is not a price table.
pub fn load(explicit: Option<&Path>) -> Result<PriceTable> {
    let mut table = PriceTable::builtin();
    if let Some(path) = user_file(explicit) {
        let text = read_to_string(&path, MAX_CONFIG_BYTES).map_err(Error::input("price file"))?;
        let user = PriceTable::from_toml(&text).map_err(|e| Error::Config {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        table.extend(user);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_file_extends_and_a_bad_one_is_a_config_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = dir.path().join("prices.toml");
        std::fs::write(
            &good,
            "[[model]]\nmatch = [\"mine\"]\ninput = 1.0\noutput = 2.0\n",
        )
        .expect("write");
        let table = load(Some(&good)).expect("loads");
        assert!(table.price("mine-chat").is_some());
        assert!(
            table.price("claude-sonnet-4-20250514").is_some(),
            "built-ins stay"
        );

        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[[model]]\nmatch = [\"x\"]\n").expect("write");
        let err = load(Some(&bad)).expect_err("bad file");
        assert!(matches!(err, Error::Config { .. }), "{err}");

        let missing = dir.path().join("missing.toml");
        let err = load(Some(&missing)).expect_err("missing file");
        assert!(matches!(err, Error::Input { .. }), "{err}");
    }
}
