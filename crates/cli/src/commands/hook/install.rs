//! `agentshape hook install|uninstall`: agentshape's entries in Claude
//! Code's settings file.
//!
//! The editing is the runtime's (`hook::settings`, pure, with its Note
//! \[Editing a user's settings\]); this reads the file, builds the command
//! the entry runs, and writes the result atomically, or shows it as a diff.
//!
//! Note \[What a hook entry runs\]: Claude Code runs the entry from the
//! session's working directory through a shell, perhaps with another
//! `PATH`, so everything in it is absolute: this binary's own path
//! (`current_exe`), a profile or schema file, and a SQLite store, so every
//! project's sessions land in the store the user chose at install time. A
//! built-in profile stays a name; a Postgres URL is kept as given, but one
//! holding a password is refused: a settings file is read by other programs
//! and often committed. Such a URL goes in `AGENTSHAPE_STORE` instead: when
//! the store came from that variable, the entry carries no `--store` and
//! the hook reads the same variable from Claude Code's environment. Words
//! are quoted for a POSIX shell.
//!
//! Note \[Hook export settings\]: Claude Code runs a hook with its own
//! environment and hands it no `OTEL_*` variable, so a hook could not find
//! the collector the user exports to. `--otlp-endpoint`, `--otlp-header`
//! and `--otlp-content` given to `hook install` are checked here (as every
//! command checks them) and written into the entry as the same flags of the
//! installed `agentshape hook …` command, each word quoted. A header's value
//! is usually a token: it is in the settings file (which the user chose to
//! put it in), but never in this command's own output: the JSON `command`,
//! the dry-run diff and the messages show `***` in its place.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use agentshape_runtime::hook::settings::{self, Change, Edited, HookEvent};
use agentshape_runtime::infile::{self, MAX_CONFIG_BYTES};
use agentshape_store::{STORE_ENV, StoreUrl};
use serde_json::json;

use crate::args::{HookEventArg, HookInstallArgs, HookScope, HookUninstallArgs, OutputArgs};
use crate::exit::{CliError, Exit};
use crate::output::Out;

/// `agentshape hook install`.
///
/// # Errors
/// A bad profile, schema or store (64/66), a settings file that is not
/// JSON or cannot be read (64/66).
pub fn install(args: &HookInstallArgs) -> anyhow::Result<Exit> {
    let events = events(&args.event);
    let commands = commands(args, &events)?;
    let path = settings_path(args.settings.as_deref(), args.scope)?;
    let _lock = match lock(&path, args.dry_run, true) {
        Ok(l) => l,
        Err(exit) => return Ok(exit),
    };
    let old = read(&path)?;
    let entries: Vec<(HookEvent, &str)> = commands.iter().map(|(e, c)| (*e, c.as_str())).collect();
    let edited =
        settings::install(old.as_deref(), &entries).map_err(|e| not_settings(&path, &e))?;
    let secrets = header_values(&args.otlp.header);
    finish(
        &path,
        old.as_deref(),
        &edited,
        (args.dry_run, args.output),
        &secrets,
    )
}

/// The values of `--otlp-header K=V` flags (Note \[Hook export settings\]).
fn header_values(headers: &[String]) -> Vec<String> {
    headers
        .iter()
        .filter_map(|h| h.split_once('=').map(|(_, v)| v.trim().to_owned()))
        .filter(|v| !v.is_empty())
        .collect()
}

/// `text` with every secret in it (as written, shell-quoted or
/// JSON-escaped) shown as `***`.
fn masked(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for v in secrets {
        let quoted = v.replace('\'', "'\\''");
        for form in [v.clone(), quoted] {
            let json = serde_json::to_string(&form).unwrap_or_default();
            let json = json.trim_matches('"').to_owned();
            for f in [json, form] {
                if !f.is_empty() {
                    out = out.replace(&f, "***");
                }
            }
        }
    }
    out
}

/// `agentshape hook uninstall`.
///
/// # Errors
/// A settings file that is not JSON or cannot be read (64/66).
pub fn uninstall(args: &HookUninstallArgs) -> anyhow::Result<Exit> {
    let events = if args.event.is_empty() {
        HookEvent::ALL.to_vec()
    } else {
        events(&args.event)
    };
    let path = settings_path(args.settings.as_deref(), args.scope)?;
    let _lock = match lock(&path, args.dry_run, false) {
        Ok(l) => l,
        Err(exit) => return Ok(exit),
    };
    let old = read(&path)?;
    let edited =
        settings::uninstall(old.as_deref(), &events).map_err(|e| not_settings(&path, &e))?;
    finish(
        &path,
        old.as_deref(),
        &edited,
        (args.dry_run, args.output),
        &[],
    )
}

/// The events asked for, each once, in the order given.
fn events(args: &[HookEventArg]) -> Vec<HookEvent> {
    let mut out = Vec::new();
    for a in args {
        let e = match a {
            HookEventArg::Stop => HookEvent::Stop,
            HookEventArg::SubagentStop => HookEvent::SubagentStop,
            HookEventArg::PostToolUse => HookEvent::PostToolUse,
        };
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

fn not_settings(path: &Path, e: &settings::SettingsError) -> anyhow::Error {
    CliError::Usage(format!("{}: {e}", path.display())).into()
}

/// `--settings`, else the scope's file.
fn settings_path(flag: Option<&Path>, scope: HookScope) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_owned());
    }
    Ok(match scope {
        HookScope::Project => PathBuf::from(".claude/settings.json"),
        HookScope::User => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| {
                    CliError::Usage(
                        "--scope user needs $HOME (or name the file with --settings)".to_owned(),
                    )
                })?;
            PathBuf::from(home).join(".claude/settings.json")
        }
    })
}

/// The settings file's text, `None` when it does not exist.
fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match infile::read(path, MAX_CONFIG_BYTES) {
        Ok(bytes) => {
            let text = settings::decode(&bytes).map_err(|e| not_settings(path, &e))?;
            Ok(Some(text.to_owned()))
        }
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(crate::input::refused("settings file", e).into()),
    }
}

/// The command each event's entry runs (Note \[What a hook entry runs\]),
/// after checking that the profile, schema and store are usable.
fn commands(
    args: &HookInstallArgs,
    events: &[HookEvent],
) -> anyhow::Result<Vec<(HookEvent, String)>> {
    let usage = |m: String| anyhow::Error::from(CliError::Usage(m));
    let exe = std::env::current_exe().map_err(|e| {
        usage(format!(
            "cannot find this program's own path for the hook: {e}"
        ))
    })?;
    let exe = exe
        .to_str()
        .ok_or_else(|| {
            usage(format!(
                "this program's path `{}` is not UTF-8",
                exe.display()
            ))
        })?
        .to_owned();
    if args
        .schema
        .schema
        .as_deref()
        .is_some_and(crate::input::is_stdin)
    {
        return Err(usage(
            "--schema - cannot be installed: the hook's stdin is Claude Code's; give a file"
                .to_owned(),
        ));
    }
    let checks = events.iter().any(|e| *e != HookEvent::PostToolUse);
    // Refuse now what the hook would refuse at every turn (64/66, as the
    // other commands): there it could only warn, and never validate.
    let mut selection: Vec<String> = Vec::new();
    if checks {
        crate::input::select(&args.schema)?;
        if let Some(schema) = &args.schema.schema {
            selection.extend(["--schema".to_owned(), absolute(schema)]);
        } else if let Some(p) = &args.schema.profile {
            selection.extend(["--profile".to_owned(), profile_word(p)]);
        }
        if let Some(n) = args.max_blocks {
            selection.extend(["--max-blocks".to_owned(), n.to_string()]);
        }
    }
    let mut per_agent: Vec<String> = Vec::new();
    for pf in &args.profile_for {
        let Some((agent, profile)) = pf
            .split_once('=')
            .filter(|(a, p)| !a.is_empty() && !p.is_empty())
        else {
            return Err(usage(format!(
                "--profile-for wants AGENT_TYPE=PROFILE, got `{pf}`"
            )));
        };
        crate::input::load_profile(profile)?;
        per_agent.extend([
            "--profile-for".to_owned(),
            format!("{agent}={}", profile_word(profile)),
        ]);
    }
    let store = store_words(&args.store.location)?;
    let otlp = otlp_words(&args.otlp)?;
    Ok(events
        .iter()
        .map(|&event| {
            let mut words = vec![
                exe.clone(),
                "hook".to_owned(),
                event.subcommand().to_owned(),
            ];
            if event != HookEvent::PostToolUse {
                words.extend(selection.iter().cloned());
            }
            if event == HookEvent::SubagentStop {
                words.extend(per_agent.iter().cloned());
            }
            words.extend(store.iter().cloned());
            words.extend(otlp.iter().cloned());
            (event, settings::command_line(&words))
        })
        .collect())
}

/// The export flags for the entry (Note \[Hook export settings\]), after
/// checking them as the hook will (a bad endpoint or header is 64 here,
/// not a warning at every turn).
fn otlp_words(otlp: &crate::args::OtlpArgs) -> anyhow::Result<Vec<String>> {
    if otlp.endpoint.is_none() && otlp.header.is_empty() && !otlp.content {
        return Ok(Vec::new());
    }
    // The flags alone, not this shell's OTEL_* variables: those are not
    // the hook's to read either.
    let flags = agentshape_otel::OtlpFlags {
        endpoint: otlp.endpoint.clone(),
        headers: otlp.header.clone(),
        content: otlp.content,
    };
    agentshape_otel::OtlpConfig::resolve(&flags, &|_| None)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let mut words = Vec::new();
    if let Some(e) = &otlp.endpoint {
        words.extend(["--otlp-endpoint".to_owned(), e.clone()]);
    }
    for h in &otlp.header {
        words.extend(["--otlp-header".to_owned(), h.clone()]);
    }
    if otlp.content {
        words.push("--otlp-content".to_owned());
    }
    Ok(words)
}

fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_owned())
        .display()
        .to_string()
}

/// A built-in profile name as it is, a profile file made absolute
/// (runtime's Note \[Profile names and paths\]).
fn profile_word(value: &str) -> String {
    match agentshape_runtime::profile::profile_path(value, Path::new(".")) {
        None => value.to_owned(),
        Some(_) => absolute(Path::new(value)),
    }
}

/// `--store LOCATION` for the entry, or nothing when the store is a
/// password-holding URL from `AGENTSHAPE_STORE` (Note \[What a hook entry runs\]).
fn store_words(location: &str) -> anyhow::Result<Vec<String>> {
    let from_env = std::env::var(STORE_ENV).is_ok_and(|v| v == location);
    let word = match StoreUrl::parse(location)? {
        StoreUrl::Sqlite(p) => {
            let abs = absolute(&p);
            // A path that would read back as something else keeps its prefix.
            match StoreUrl::parse(&abs) {
                Ok(StoreUrl::Sqlite(q)) if q.as_os_str() == abs.as_str() => abs,
                _ => format!("sqlite:{abs}"),
            }
        }
        StoreUrl::Postgres(url) if agentshape_store::url::redact(&url) == url => url,
        StoreUrl::Postgres(url) if from_env => {
            crate::output::eprint(&format!(
                "agentshape: the store ({}) comes from {STORE_ENV} and holds a password: the hook \
                 entry gets no --store, so Claude Code must run with {STORE_ENV} set",
                agentshape_store::url::redact(&url)
            ));
            return Ok(Vec::new());
        }
        StoreUrl::Postgres(url) => {
            return Err(CliError::Usage(format!(
                "--store {} holds a password, which is not written into a settings file: \
                 set {STORE_ENV} to the URL in the environment Claude Code runs in (and here) \
                 and install without --store",
                agentshape_store::url::redact(&url)
            ))
            .into());
        }
    };
    Ok(vec!["--store".to_owned(), word])
}

/// Write (or show) the edit and report each event.
fn finish(
    path: &Path,
    old: Option<&str>,
    edited: &Edited,
    (dry_run, output): (bool, OutputArgs),
    secrets: &[String],
) -> anyhow::Result<Exit> {
    let shown = path.display().to_string();
    let mut out = Out::new(output);
    if dry_run {
        let diff = masked(
            &settings::unified_diff(
                old.unwrap_or_default(),
                &edited.text,
                if old.is_some() { &shown } else { "/dev/null" },
                &shown,
            ),
            secrets,
        );
        if out.json {
            // Stdout is for the JSON lines; people still see the diff.
            eprint!("{}", crate::output::clean(&diff));
        } else {
            out.raw(diff.as_bytes())?;
        }
    } else if edited.changed
        && let Err(e) = write_atomic(path, &edited.text)
    {
        crate::output::eprint(&format!(
            "agentshape: cannot write {shown}: {e} (the file is as it was)"
        ));
        return Ok(Exit::IoErr);
    }
    for e in &edited.events {
        if out.json {
            let mut line = json!({
                "event": e.event.key(),
                "settings": shown,
                "change": e.change.as_str(),
                "command": e.command.as_deref().map(|c| masked(c, secrets)),
            });
            if dry_run {
                line["dry_run"] = true.into();
            }
            out.json_line(&line)?;
            continue;
        }
        let event = e.event.key();
        let text = match (e.change, dry_run) {
            (Change::Added, false) => format!("installed {event} hook in {shown}"),
            (Change::Added, true) => format!("would install {event} hook in {shown}"),
            (Change::Replaced, false) => format!("replaced {event} hook in {shown}"),
            (Change::Replaced, true) => format!("would replace {event} hook in {shown}"),
            (Change::Unchanged, _) => format!("{event} hook already installed in {shown}"),
            (Change::Removed, false) => format!("removed {event} hook from {shown}"),
            (Change::Removed, true) => format!("would remove {event} hook from {shown}"),
            (Change::Absent, _) => format!("{event} hook: nothing to remove in {shown}"),
        };
        if dry_run {
            crate::output::eprint(&text);
        } else {
            out.line(&text)?;
        }
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// How long an edit waits for another one of the same file.
const LOCK_PATIENCE: Duration = Duration::from_secs(10);

/// The file a settings path stands for: a symlink's target (dotfiles).
fn real_file(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path),
        _ => Ok(path.to_owned()),
    }
}

/// The folder holding `file`.
fn folder(file: &Path) -> &Path {
    file.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Note \[One edit at a time\]: two `hook install` runs on one settings
/// file each read it, added their entry and wrote it back, so the later
/// write lost the earlier one's event while both said "installed" (issue
/// 40). An edit holds an exclusive `flock` on the folder of the real file
/// (no lock file left beside the user's settings) from before it reads to
/// after the rename, so edits of one file take turns and each sees the
/// last one's result. A dry run writes nothing and takes no lock; an
/// uninstall with no folder has nothing to edit. A lock held past
/// [`LOCK_PATIENCE`] is one line and exit 75 (try again), the file untouched.
fn lock(path: &Path, dry_run: bool, create: bool) -> Result<Option<Flock<File>>, Exit> {
    if dry_run {
        return Ok(None);
    }
    let shown = path.display();
    let fail = |e: &dyn std::fmt::Display| {
        crate::output::eprint(&format!(
            "agentshape: cannot lock {shown} for the edit: {e} (the file is as it was)"
        ));
        Exit::IoErr
    };
    // A link to nowhere: its own folder (the write then says why it fails).
    let target = real_file(path).unwrap_or_else(|_| path.to_owned());
    let dir = folder(&target);
    if create {
        fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    } else if !dir.is_dir() {
        return Ok(None);
    }
    let started = Instant::now();
    let mut handle = File::open(dir).map_err(|e| fail(&e))?;
    loop {
        match Flock::lock(handle, FlockArg::LockExclusiveNonblock) {
            Ok(l) => return Ok(Some(l)),
            Err((h, nix::errno::Errno::EWOULDBLOCK)) if started.elapsed() < LOCK_PATIENCE => {
                handle = h;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                crate::output::eprint(&format!(
                    "agentshape: {shown} is being edited by another agentshape (waited {} s): try again (the file is as it was)",
                    LOCK_PATIENCE.as_secs()
                ));
                return Err(Exit::TempFail);
            }
            Err((_, e)) => return Err(fail(&e)),
        }
    }
}

/// Replace `path` with `text` atomically: a temporary file in the same
/// folder, written, given the old file's permissions, synced, renamed over
/// it, and the folder synced. A reader (Claude Code starting a session)
/// sees the old file or the new one, never half of one; a failure leaves
/// the old file as it was. A symlinked settings file (dotfiles) stays a
/// link: the file it points to is replaced. `.claude/` is created if needed.
fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    let target = real_file(path)?;
    fs::create_dir_all(folder(&target))?;
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    crate::replace::replace_file(&target, text.as_bytes(), permissions)
}
