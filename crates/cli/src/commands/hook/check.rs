//! `agentshape hook stop|subagent-stop`: read Claude Code's hook input,
//! answer allow or block (the runtime's `hook::check`), print the answer.
//!
//! Always exit 0 (the runtime's Note \[A hook never breaks the session\]):
//! a block is the JSON on stdout, not exit 2, so the reason reaches the
//! model whole and stderr stays for the warnings.

use std::io::{Read, Write};
use std::time::Instant;

use agentshape_runtime::hook::HookError;
use agentshape_runtime::hook::check::{CheckOptions, Judge, OpenStore, check};
use agentshape_runtime::hook::spool::{self, Spool};
use agentshape_store::StoreUrl;

use crate::args::{HookCheckArgs, SchemaArgs, StoreArg};
use crate::exit::Exit;
use crate::input;
use crate::output::eprint;

/// How long one store operation of a hook waits for a lock.
const STORE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(800);

/// Hook input larger than this is not read (a 10 MB final message fits).
pub const MAX_HOOK_INPUT: u64 = 64 << 20;

/// Read stdin, at most [`MAX_HOOK_INPUT`]; `Err` says why not.
pub(super) fn read_input() -> Result<Vec<u8>, HookError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_HOOK_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(HookError::ReadInput)?;
    if bytes.len() as u64 > MAX_HOOK_INPUT {
        return Err(HookError::InputTooLarge {
            max: MAX_HOOK_INPUT,
        });
    }
    Ok(bytes)
}

/// The store opener and spool of `--store` (the spool keyed by the store's
/// absolute location).
pub(super) fn store_side(store: &StoreArg) -> (OpenStore, Option<Spool>) {
    let url = StoreUrl::parse(&store.location);
    let key = match &url {
        Ok(StoreUrl::Sqlite(p)) => std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string(),
        Ok(u) => u.to_string(),
        Err(_) => store.location.clone(),
    };
    let spool = spool::default_dir().map(|d| Spool::new(&d, &key));
    // A lock held longer than this is not waited for: the hook's budget
    // decides (the row is spooled), not the store's 5 s busy timeout.
    let open: OpenStore = Box::new(move || Ok(url?.open_with_patience(STORE_PATIENCE)?));
    (open, spool)
}

/// Load one judge; `Err` says in one line why it could not be.
fn judge(args: &SchemaArgs) -> Result<Judge, HookError> {
    let selection = input::select(args).map_err(|e| HookError::Judge(e.into()))?;
    let (label, against) = match (&args.profile, &args.schema) {
        (Some(p), _) => (p.clone(), format!("the schema of profile {p}")),
        (None, Some(s)) => {
            let name = s.file_name().map_or_else(
                || s.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            (s.display().to_string(), format!("the schema {name}"))
        }
        (None, None) => (
            String::new(),
            "the expected output (no schema given: any JSON object or array)".to_owned(),
        ),
    };
    Ok(Judge {
        label,
        against,
        validator: selection.validator,
        profile: selection.profile,
    })
}

/// Everything a hook call has to say, as one line on stderr (Claude Code
/// shows a hook's stderr to the user; one line per call stays readable).
pub(super) fn warn(warnings: &[String]) {
    if !warnings.is_empty() {
        eprint(&format!("agentshape hook: {}", warnings.join("; ")));
    }
}

/// Note \[The budget counts from exec\]: Claude Code times a hook from
/// when it starts the process, and 50 hooks at once on 2 cores spent a
/// good part of a second before `main` (issue 40: the slowest answered in
/// 2.54 s). So the budget counts from the process's own start time
/// (`/proc/self/stat`, in the kernel's 1/100 s), at most 1 s before now;
/// without `/proc`, from now.
pub(super) fn process_start() -> Instant {
    let now = Instant::now();
    let since = || -> Option<f64> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // After the command name (which may hold spaces), field 3 on.
        let rest = &stat[stat.rfind(')')? + 1..];
        let ticks: f64 = rest.split_whitespace().nth(19)?.parse().ok()?;
        let uptime = std::fs::read_to_string("/proc/uptime").ok()?;
        let up: f64 = uptime.split_whitespace().next()?.parse().ok()?;
        Some(up - ticks / 100.0)
    };
    let ago = since()
        .filter(|s| s.is_finite())
        .unwrap_or(0.0)
        .clamp(0.0, 1.0);
    now.checked_sub(std::time::Duration::from_secs_f64(ago))
        .unwrap_or(now)
}

/// Run the hook and print its answer; always exit 0.
pub fn run(args: &HookCheckArgs, subagent: bool) -> Exit {
    let started = process_start();
    let bytes = match read_input() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("agentshape hook: {e}; allowing the stop"));
            return Exit::Ok;
        }
    };
    let mut warnings = Vec::new();
    let mut by_type = Vec::new();
    for spec in &args.profile_for {
        match spec.split_once('=') {
            Some((t, p)) if !t.trim().is_empty() && !p.trim().is_empty() => {
                let one = SchemaArgs {
                    schema: None,
                    profile: Some(p.trim().to_owned()),
                };
                by_type.push((t.trim().to_owned(), judge(&one)));
            }
            _ => warnings.push(format!(
                "--profile-for {spec}: expected AGENT_TYPE=PROFILE; ignored"
            )),
        }
    }
    let opts = CheckOptions {
        subagent,
        default: judge(&args.schema),
        other_types: args.schema.schema.is_some()
            || args.schema.profile.is_some()
            || by_type.is_empty(),
        by_type,
        max_blocks: args.max_blocks,
        started,
    };
    let (open, spool) = store_side(&args.store);
    let answer = check(&bytes, &opts, open, spool.as_ref());
    warnings.extend(answer.warnings);
    warn(&warnings);
    if let Some(json) = answer.stdout {
        let mut out = std::io::stdout().lock();
        // Nothing else ever goes to stdout: it must be this one value.
        if out
            .write_all(json.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .is_err()
        {
            eprint("agentshape hook: cannot write the answer; allowing the stop");
        }
    }
    // Only after the answer is out: the export waits on nobody's stop.
    if let Some(call) = &answer.call {
        crate::otel::hook_export(&args.otlp, started, call, &bytes);
    }
    // The rest of a spool, within the budget (runtime's Note [Draining after the answer]).
    answer.settle.wait();
    Exit::Ok
}
