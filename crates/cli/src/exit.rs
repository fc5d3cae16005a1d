//! Exit codes: one place maps every outcome and error class to DESIGN.md's codes.
//!
//! 0 ok · 1 found but invalid, or the run failed · 2 no structured output
//! found · 3 the agent or provider reported an error · 64 usage, bad schema or
//! bad config (also a store from a newer build) · 66 input file missing (also
//! a store a read-only command names that does not exist, or an empty
//! database: a 0-byte SQLite file, a Postgres database without the schema) · 127 agent
//! executable not found · 128 + N interrupted by signal N (129 SIGHUP, 130
//! SIGINT, 143 SIGTERM).
//!
//! Store failures, one code per kind (sysexits-style, see
//! [`agentshape_store::ErrorKind`]): 65 the store file is not a database,
//! is another program's database (no `sessions` table), or is damaged · 73 the store cannot be written (read-only file or folder,
//! permission; also refused Postgres credentials) · 74 other I/O failure
//! writing the store, and a Postgres TLS failure (a server without TLS under
//! `sslmode=require`, a certificate not trusted or not for the host: trying
//! again will not help) · 75 temporary: the store stayed locked/busy after the
//! bounded retries, or its Postgres server cannot be reached (refused, no
//! answer within the connect deadline, shutting down) — try again. A bad
//! store location (`--store mysql://…`), an unknown `sslmode` or an
//! unreadable `sslrootcert` is 64. A panic is
//! 70, [`INTERNAL_ERROR`], an internal error.

use std::io::Write;
use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Everything was found and valid.
    Ok = 0,
    /// Found but invalid.
    Invalid = 1,
    /// No structured output found.
    NoOutput = 2,
    /// The agent or provider reported an error.
    AgentError = 3,
    /// Usage error, bad schema or bad config.
    Usage = 64,
    /// The store file is not a database or is damaged.
    DataErr = 65,
    /// An input file is missing or unreadable.
    NoInput = 66,
    /// The store cannot be written (read-only file or folder, permission).
    CantCreate = 73,
    /// Another I/O failure writing the store (disk full, ...).
    IoErr = 74,
    /// The store stayed locked after the bounded retries: try again.
    TempFail = 75,
    /// The agent executable was not found.
    NotFound = 127,
    /// Interrupted by SIGHUP (128 + 1).
    Hangup = 129,
    /// Interrupted by SIGINT (128 + 2).
    Interrupt = 130,
    /// Interrupted by SIGTERM (128 + 15).
    Terminated = 143,
}

impl Exit {
    /// Combine the outcomes of several items: the most severe wins.
    ///
    /// Note [Batch exit codes]: for many files or lines we report the highest
    /// code among the items (66 > 3 > 2 > 1 > 0), so `0` means every item was
    /// found and valid, and a script can still tell "some had no output" from
    /// "some were invalid". A file of a batch that is missing or unreadable
    /// (`parse`, `extract`, `check`) does not stop it: it is named on stderr
    /// (with `--json`, stdout also gets `{"file": ..., "input_error":
    /// "cannot read: ..."}` in its place, the field `extract --jsonl` uses for
    /// a bad line), the other files are processed, and the exit is 66, the most
    /// severe: the batch's answer is incomplete, which a script must not read
    /// as "an agent failed". Usage errors (flags, schema, profile) are still
    /// decided before any item runs.
    pub fn worst(self, other: Exit) -> Exit {
        self.max(other)
    }

    /// The code of a run interrupted by `signal`: `128 + N`, as a shell
    /// reports a command a signal ended. Only the three signals agentshape
    /// catches (runtime `process::Interrupts`) can occur; anything else is
    /// reported as SIGTERM's.
    pub fn interrupted(signal: i32) -> Exit {
        match signal {
            1 => Exit::Hangup,
            2 => Exit::Interrupt,
            _ => Exit::Terminated,
        }
    }
}

/// An error that carries its own exit code (anything else is a usage error).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file named on the command line does not exist or cannot be read.
    #[error("cannot read `{path}`: {source}")]
    NoInput {
        /// The path as given.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Bad arguments, schema or configuration.
    #[error("{0}")]
    Usage(String),
}

/// Turn the command's result into a process exit code, printing errors on stderr.
pub fn report(result: anyhow::Result<Exit>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(err) => {
            if is_broken_pipe(&err) {
                // The reader went away (`| head`): that is not our failure.
                return ExitCode::SUCCESS;
            }
            let code = classify(&err);
            let _ = writeln!(std::io::stderr(), "agentshape: {}", one_line(&err));
            ExitCode::from(code as u8)
        }
    }
}

fn classify(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if let Some(cli) = cause.downcast_ref::<CliError>() {
            return match cli {
                CliError::NoInput { .. } => Exit::NoInput,
                CliError::Usage(_) => Exit::Usage,
            };
        }
        match cause.downcast_ref::<agentshape_runtime::Error>() {
            Some(agentshape_runtime::Error::Store(e)) => return store_exit(e),
            Some(agentshape_runtime::Error::StoreWrite { source, .. }) => {
                return store_exit(source);
            }
            // A file a session names (a forensic log, a replayed transcript)
            // that cannot be opened: input missing (input's Note [Inputs are files]).
            Some(agentshape_runtime::Error::Input {
                source: agentshape_runtime::infile::InputError::Open { .. },
                ..
            }) => return Exit::NoInput,
            _ => {}
        }
        if let Some(e) = cause.downcast_ref::<agentshape_store::Error>() {
            return store_exit(e);
        }
        // A pinned model's cached file that is not the pinned one (runtime's
        // Note [Pinned models are checked at load]): data, not usage.
        match cause.downcast_ref::<agentshape_runtime::model::ModelError>() {
            Some(agentshape_runtime::model::ModelError::Tampered { .. }) => return Exit::DataErr,
            Some(agentshape_runtime::model::ModelError::Unreadable { .. }) => {
                return Exit::NoInput;
            }
            _ => {}
        }
        if cause.downcast_ref::<agentshape_core::Error>().is_some() {
            return match cause.downcast_ref::<agentshape_core::Error>() {
                Some(agentshape_core::Error::Io(_)) => Exit::NoInput,
                _ => Exit::Usage,
            };
        }
    }
    Exit::Usage
}

/// One code per kind of store failure (the module's table).
fn store_exit(e: &agentshape_store::Error) -> Exit {
    use agentshape_store::ErrorKind as K;
    match e.kind() {
        // A newer build's store, or a location naming no backend.
        K::TooNew | K::Usage => Exit::Usage,
        K::Missing => Exit::NoInput,
        K::Corrupt => Exit::DataErr,
        K::ReadOnly => Exit::CantCreate,
        // Temporary: still locked, or the server cannot be reached now.
        K::Busy | K::Unavailable => Exit::TempFail,
        K::Conflict => Exit::Invalid,
        K::Io => Exit::IoErr,
    }
}

/// Whether any cause in the chain is a broken pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, deduplicated.
fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    // Error texts can quote agent output: clean them (Note [Terminal safety]).
    crate::output::clean(&parts.join(": ")).replace('\n', " ")
}

/// The exit code of a panic: sysexits' `EX_SOFTWARE`, an internal error.
pub const INTERNAL_ERROR: u8 = 70;

/// Install the panic hook: a panic prints one line naming it a bug
/// ([`panic_line`]), and a backtrace when `RUST_BACKTRACE` asks for one;
/// `main` catches the unwind and exits [`INTERNAL_ERROR`] (never Rust's 101).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", panic_line(&message, at.as_deref()));
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            let _ = writeln!(err, "{backtrace}");
        }
    }));
}

/// The text of a panic payload (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_owned()
    }
}

/// The one line a panic prints: `agentshape: internal error (a bug):
/// <message> (at <file:line>); please report it`, cleaned and on one line.
pub fn panic_line(message: &str, at: Option<&str>) -> String {
    let at = at.map(|a| format!(" (at {a})")).unwrap_or_default();
    let text = format!("{message}{at}");
    let text = crate::output::clean(&text).replace('\n', " ");
    format!("agentshape: internal error (a bug): {text}; please report it")
}

/// A debug build's way to exercise the panic path end to end: with
/// `AGENTSHAPE_DEBUG_PANIC` set, the command panics before it starts. Release
/// builds compile none of it (`cfg(debug_assertions)`), so no user can
/// trigger it.
#[cfg(debug_assertions)]
pub fn debug_panic() {
    // The whole point: a real panic, through the real hook.
    assert!(
        std::env::var_os("AGENTSHAPE_DEBUG_PANIC").is_none(),
        "AGENTSHAPE_DEBUG_PANIC is set"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_one_line_naming_a_bug() {
        let payload: Box<dyn std::any::Any + Send> = Box::new("index out of bounds");
        assert_eq!(panic_message(payload.as_ref()), "index out of bounds");
        let payload: Box<dyn std::any::Any + Send> = Box::new(String::from("boom\n\x1b[2J"));
        let message = panic_message(payload.as_ref());
        assert_eq!(
            panic_line(&message, Some("src/x.rs:3")),
            "agentshape: internal error (a bug): boom  [2J (at src/x.rs:3); please report it"
        );
        let payload: Box<dyn std::any::Any + Send> = Box::new(7u8);
        assert_eq!(
            panic_line(&panic_message(payload.as_ref()), None),
            "agentshape: internal error (a bug): panic with a non-text payload; please report it"
        );
        assert_eq!(INTERNAL_ERROR, 70);
    }
}
