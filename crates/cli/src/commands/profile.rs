//! `agentshape profile list|show`: the built-in profiles as the TOML files
//! they are (core's Note [Profile files]).
//!
//! `show NAME` prints a built-in's file, a starting point to save and
//! change: as embedded but for its `schema`, which names the built-in
//! schema (`builtin:agent-response`) instead of a path into this
//! repository, so the copy works wherever it is saved (core's Note
//! [Copied profiles]); `show NAME --schema` prints that schema. `show PATH` reads a
//! profile file and prints it back when it is good (a quick check: a bad
//! file exits 64 naming the key), or with `--schema` the schema it yields.

use std::io::Write as _;
use std::path::Path;

use agentshape_core::profile::{BUILTIN, Profile};
use agentshape_runtime::infile;
use agentshape_runtime::profile::profile_path;
use serde::Serialize;

use crate::args::{ProfileAction, ProfileArgs};
use crate::exit::Exit;
use crate::output::Out;

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    description: Option<&'a str>,
}

/// Run `profile`.
///
/// # Errors
/// An unknown or bad profile (64), a missing file (66), a failing stdout.
pub fn run(args: &ProfileArgs) -> anyhow::Result<Exit> {
    match &args.action {
        ProfileAction::List { output } => {
            let mut out = Out::new(*output);
            for name in BUILTIN {
                let p = Profile::builtin(name)?;
                if out.json {
                    out.json_line(&Listed {
                        name,
                        description: p.description.as_deref(),
                    })?;
                } else {
                    out.line(&format!(
                        "{name:<12} {}",
                        p.description.as_deref().unwrap_or("")
                    ))?;
                }
            }
            out.flush()?;
            Ok(Exit::Ok)
        }
        ProfileAction::Show { name, schema } => {
            let text = match profile_path(name, Path::new(".")) {
                None => {
                    let p = Profile::builtin(name)?;
                    if *schema {
                        serde_json::to_string_pretty(&p.schema)? + "\n"
                    } else {
                        Profile::builtin_text_portable(name).unwrap_or_default()
                    }
                }
                Some(path) => {
                    // Missing is 66, not a regular file 64 (Note [Inputs are files]).
                    let p = crate::input::load_profile(name)?;
                    if *schema {
                        serde_json::to_string_pretty(&p.schema)? + "\n"
                    } else {
                        infile::read_to_string(&path, infile::MAX_CONFIG_BYTES)
                            .map_err(|e| crate::input::refused("profile", e))?
                    }
                }
            };
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(Exit::Ok)
        }
    }
}
