//! The secret rules a command masks with: the built-in ones, extended by
//! the user's rule file (core's `secrets` parses; this reads).
//!
//! Note \[Secret rule files\]: the user file is, in order,
//! `--secrets-rules FILE`, then `$AGENTSHAPE_SECRETS_RULES`, then
//! `$XDG_CONFIG_HOME/agentshape/secrets.toml` (or
//! `~/.config/agentshape/secrets.toml`) when that file exists: the same
//! shape as the price file (Note \[Price files\] in `pricing`). A file named
//! explicitly must exist; a bad file is a config error (exit 64), never a
//! silent fallback to the built-in rules.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agentshape_core::secrets::{Detector, RuleSet};

use crate::error::{Error, Result};
use crate::infile::{MAX_CONFIG_BYTES, read_to_string};

/// The user's rule file (Note \[Secret rule files\]).
pub fn user_file(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("AGENTSHAPE_SECRETS_RULES") {
        return Some(PathBuf::from(p));
    }
    let dir = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let file = dir.join("agentshape").join("secrets.toml");
    file.is_file().then_some(file)
}

/// The built-in rules extended by the user's file, compiled; `None` when
/// there is no user file (the built-in detector is shared then).
///
/// # Errors
/// [`Error::Input`] when a named file is missing or not a regular file;
/// [`Error::Config`] when it is not a rule file or a rule does not compile.
pub fn load(explicit: Option<&Path>) -> Result<Option<Arc<Detector>>> {
    let Some(path) = user_file(explicit) else {
        return Ok(None);
    };
    let text = read_to_string(&path, MAX_CONFIG_BYTES).map_err(Error::input("secret rule file"))?;
    let config = |e: agentshape_core::secrets::SecretsError| Error::Config {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let mut rules = RuleSet::builtin();
    rules.extend(RuleSet::from_toml(&text).map_err(config)?);
    Ok(Some(Arc::new(Detector::new(&rules).map_err(config)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_file_extends_and_a_bad_one_is_a_config_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = dir.path().join("secrets.toml");
        std::fs::write(
            &good,
            "[[rules]]\nid = \"acme-token\"\ndescription = \"ACME\"\nregex = '''acme_[a-z0-9]{24}'''\nkeywords = [\"acme_\"]\n",
        )
        .expect("write");
        let d = load(Some(&good)).expect("loads").expect("a detector");
        let found = d.find("export T=acme_abcdefghijklmnopqrstuvwx");
        assert!(found.iter().any(|f| &*f.rule == "acme-token"), "{found:?}");
        assert!(d.rule_ids().any(|r| r == "github-pat"), "built-ins stay");

        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[[rules]]\nid = \"x\"\nregex = '''(unclosed'''\n").expect("write");
        let err = load(Some(&bad)).expect_err("bad file");
        assert!(matches!(err, Error::Config { .. }), "{err}");

        let missing = dir.path().join("missing.toml");
        let err = load(Some(&missing)).expect_err("missing file");
        assert!(matches!(err, Error::Input { .. }), "{err}");
    }
}
