//! Agent processes: spawn without a shell, read stdout line by line, capture
//! stderr, enforce a timeout on the whole process group, pass signals on.
//!
//! Note \[Process groups\]: the agent is started in a new process group
//! (`process_group(0)`, so its pgid is its pid). On timeout the whole group
//! gets SIGKILL (`killpg`), so tools the agent started (a `sleep`, an `npm`,
//! a shell pipeline) die with it instead of holding the stdout pipe open.
//! Arguments are passed as a vector, never through a shell, so a prompt can
//! never be shell-interpreted.
//!
//! Note \[The run ends when the agent exits\]: the agent's exit is awaited
//! beside its stdout, not after it. Once the agent has exited, what is still
//! in the pipe is read for [`ProcessOptions::exit_grace`] (500 ms), then the
//! rest of its group gets SIGKILL: a background child that inherited stdout
//! (`sleep 30 &`) can neither hold the run open nor outlive it. After any kill
//! the pipe is drained for at most [`DRAIN`], so a process that left the group
//! (`setsid`) and still holds the pipe cannot hang the run either. The group
//! is killed when the agent ends in every case, so nothing it started is left
//! running (an agent that wants a daemon to outlive it must detach it). That
//! last kill comes after the agent was reaped: its pid names the group only
//! while a member lives, and an empty group's id could in theory be taken by
//! a new group in the microseconds between; `killpg` then gets `ESRCH` in
//! every case but that one, which we accept.
//!
//! Note \[Interrupts\]: the agent runs in its own process group, so a Ctrl-C
//! in the terminal reaches agentshape only. The caller hands in
//! [`Interrupts`] (SIGINT, SIGTERM and SIGHUP caught by [`Interrupts::listen`]);
//! on the first one the same signal is sent to the agent's group, which gets
//! [`ProcessOptions::interrupt_grace`] (5 s) to exit while its output is
//! still read; then the group gets SIGKILL. A second signal kills the group at
//! once. The stream ends as [`Ending::Interrupted`] and the session is
//! recorded (status `interrupted`, runner's Note \[Session status\]). A
//! replayed transcript stops at the next line.
//!
//! Note \[Parent death\]: when agentshape itself is killed (SIGKILL, an OOM
//! kill) no code of ours runs, so the child asks the kernel, before `exec`,
//! for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`). Two limits: the
//! signal follows the *thread* that spawned the agent, so agents must be
//! spawned from a thread that lives as long as the run (the CLI's runtime is
//! current-thread: the main thread; a multi-thread runtime's workers also live
//! as long as the runtime, but never spawn from `spawn_blocking`); and the
//! setting is not inherited, so only the agent itself dies with us, not the
//! processes it started (those get SIGPIPE if they write to the closed pipe).
//!
//! Note \[Agents get no credentials of ours\]: an agent inherits the
//! environment agentshape was started with, because it needs what the user
//! gave it there (`ANTHROPIC_API_KEY`, `PATH`, `HOME`, proxies), but not
//! agentshape's own variables: every `AGENTSHAPE_*` (`AGENTSHAPE_STORE`,
//! which may hold a Postgres password, `AGENTSHAPE_TOKEN`, `serve`'s token,
//! `AGENTSHAPE_INDEX_URL`, which may hold an index's, and the settings
//! beside them) is removed from the agent's environment, since an agent
//! prints what it sees into transcripts and logs that outlive the run. A
//! profile (or an ops config) that wants the agent to have one names it in
//! `pass_env = ["AGENTSHAPE_STORE"]` ([`AgentCommand::pass_env`]); an ops
//! tier of `agent = "local"`, which is agentshape itself, also gets
//! `AGENTSHAPE_MODEL_DIR` (where its model is: no secret). Removing by
//! prefix rather than by a list of known secrets means a credential added
//! later is withheld without anyone remembering to list it.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// A command to run: program and arguments, passed without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCommand {
    /// The executable (looked up on `PATH` when it has no slash).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// agentshape's own variables (`AGENTSHAPE_*`) the agent may still see
    /// (Note \[Agents get no credentials of ours\]); every other one is
    /// removed from its environment.
    pub pass_env: Vec<String>,
    /// Text written to the agent's standard input, which is then closed
    /// (`None`: stdin is `/dev/null`). For input too long for one argument
    /// (Linux caps each at 128 KiB), such as `ask --provider claude-code`'s
    /// prompt (Note \[Prompt on stdin\] in `provider::claude_code`).
    pub stdin: Option<String>,
}

/// Where the stream comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A live agent process.
    Spawn(AgentCommand),
    /// A recorded transcript, optionally paced (a delay before each line).
    Replay {
        /// The transcript.
        path: PathBuf,
        /// Delay before each line.
        pace: Option<Duration>,
    },
}

/// How the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The process exited (code, or the signal that killed it).
    Exited {
        /// Exit code, when it exited normally.
        code: Option<i32>,
        /// Signal number, when a signal ended it.
        signal: Option<i32>,
    },
    /// The timeout expired; the process group was killed.
    TimedOut,
    /// The executable does not exist.
    NotFound,
    /// A replayed transcript reached its end.
    Replayed,
    /// agentshape was asked to stop (Note \[Interrupts\]); the agent's group
    /// was sent the signal, then killed if it outlived the grace period.
    Interrupted {
        /// The signal agentshape received (and passed on).
        signal: i32,
        /// The agent's exit code, when it exited normally in the grace period.
        code: Option<i32>,
        /// The signal that ended the agent, when one did.
        agent_signal: Option<i32>,
    },
}

/// What streaming produced besides the lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// How the stream ended.
    pub ending: Ending,
    /// Bytes of the agent's stderr not kept because of
    /// [`ProcessOptions::stderr_cap`].
    pub stderr_dropped: u64,
}

/// The most of an agent's stderr kept in `<id>.stderr.log` by default: 16 MiB.
///
/// Note \[Stderr cap\]: stderr is diagnostics, not the transcript; one agent
/// printed 200 MB of it. The first [`ProcessOptions::stderr_cap`] bytes are
/// kept; the rest is read and counted (so the agent never blocks on a full
/// pipe), and a last line says how many bytes were dropped. The count is also
/// in the session's `.meta.json` (`stderr_dropped_bytes`).
pub const STDERR_CAP: u64 = 16 << 20;

/// After a kill, the longest the pipes are still read (Note \[The run ends
/// when the agent exits\]).
pub const DRAIN: Duration = Duration::from_secs(2);

/// The prefix of agentshape's own environment variables, which agents do
/// not inherit (Note \[Agents get no credentials of ours\]).
pub use agentshape_core::profile::OWN_ENV_PREFIX;

/// The names among `vars` an agent must not inherit: those that start with
/// [`OWN_ENV_PREFIX`] and are not in `pass` (Note \[Agents get no
/// credentials of ours\]).
pub fn withheld_env(
    vars: impl IntoIterator<Item = std::ffi::OsString>,
    pass: &[String],
) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt as _;
    vars.into_iter()
        .filter(|k| {
            k.as_bytes().starts_with(OWN_ENV_PREFIX.as_bytes())
                && !pass.iter().any(|p| p.as_bytes() == k.as_bytes())
        })
        .collect()
}

/// How agent processes are run: grace periods, the stderr cap and the
/// interrupts to honour.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    /// After the first interrupt, how long the agent may take to exit before
    /// its group gets SIGKILL (default 5 s).
    pub interrupt_grace: Duration,
    /// After the agent exits, how long its stdout is still read before the
    /// rest of its group gets SIGKILL (default 500 ms).
    pub exit_grace: Duration,
    /// The most bytes of stderr kept (default [`STDERR_CAP`]).
    pub stderr_cap: u64,
    /// Signals to pass on to the agent; `None`: the stream is not interruptible.
    pub interrupts: Option<Interrupts>,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        ProcessOptions {
            interrupt_grace: Duration::from_secs(5),
            exit_grace: Duration::from_millis(500),
            stderr_cap: STDERR_CAP,
            interrupts: None,
        }
    }
}

/// What has been received so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Received {
    first: Option<i32>,
    last: Option<i32>,
    count: u64,
}

/// Interrupts (signals) a stream honours: see Note \[Interrupts\]. Cheap to
/// clone; every clone sees every interrupt.
#[derive(Debug, Clone)]
pub struct Interrupts {
    rx: watch::Receiver<Received>,
    /// How many this handle has already reported.
    seen: u64,
}

/// Sends interrupts by hand, as a signal would (a supervisor stopping its
/// sessions, tests).
#[derive(Debug, Clone)]
pub struct Interrupter {
    tx: Arc<watch::Sender<Received>>,
}

impl Interrupter {
    /// Interrupt with `signal` (a signal number such as 15).
    pub fn interrupt(&self, signal: i32) {
        self.tx.send_modify(|r| {
            r.first.get_or_insert(signal);
            r.last = Some(signal);
            r.count += 1;
        });
    }
}

impl Interrupts {
    /// Interrupts sent by hand through the returned [`Interrupter`].
    pub fn channel() -> (Interrupter, Interrupts) {
        let (tx, rx) = watch::channel(Received::default());
        (Interrupter { tx: Arc::new(tx) }, Interrupts { rx, seen: 0 })
    }

    /// Catch SIGINT, SIGTERM and SIGHUP from now on (call inside a tokio
    /// runtime; a task of it receives them).
    ///
    /// Once caught, a signal no longer ends the process for the rest of its
    /// life: the caller must check [`Self::first`] when its work is done and
    /// exit as the signal asked (`128 + N`).
    ///
    /// # Errors
    /// When a handler cannot be installed.
    pub fn listen() -> Result<Interrupts> {
        use tokio::signal::unix::{SignalKind, signal};
        let install = |kind: SignalKind| {
            signal(kind).map_err(|source| Error::Io {
                context: "installing a signal handler".to_owned(),
                source,
            })
        };
        let mut int = install(SignalKind::interrupt())?;
        let mut term = install(SignalKind::terminate())?;
        let mut hup = install(SignalKind::hangup())?;
        let (sender, interrupts) = Interrupts::channel();
        tokio::spawn(async move {
            loop {
                let sig = tokio::select! {
                    Some(()) = int.recv() => Signal::SIGINT,
                    Some(()) = term.recv() => Signal::SIGTERM,
                    Some(()) = hup.recv() => Signal::SIGHUP,
                    else => break,
                };
                sender.interrupt(sig as i32);
            }
        });
        Ok(interrupts)
    }

    /// The first signal received, if any.
    pub fn first(&self) -> Option<i32> {
        self.rx.borrow().first
    }

    /// Wait for the next interrupt and return its signal; `None` when no more
    /// can come (the sender is gone).
    pub async fn recv(&mut self) -> Option<i32> {
        self.recv_many().await.map(|(signal, _)| signal)
    }

    /// Wait for interrupts this handle has not reported yet: the newest
    /// signal and how many came (signals close together arrive as one wake-up).
    async fn recv_many(&mut self) -> Option<(i32, u64)> {
        loop {
            let r = *self.rx.borrow_and_update();
            if r.count > self.seen {
                let n = r.count - self.seen;
                self.seen = r.count;
                return r.last.map(|s| (s, n));
            }
            self.rx.changed().await.ok()?;
        }
    }

    /// Count every interrupt so far as reported.
    fn mark_seen(&mut self) {
        self.seen = self.rx.borrow_and_update().count;
    }
}

/// The name of a signal number (`SIGTERM`), or `signal N`.
pub fn signal_name(signal: i32) -> String {
    Signal::try_from(signal).map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_owned())
}

/// Receives each raw stdout line (without terminator) in order. `Send`, so
/// streaming an agent is a `Send` future (see `provider::claude_code`).
pub trait LineSink: Send {
    /// One line; a final line cut by the end of the stream arrives unterminated.
    ///
    /// # Errors
    /// Stops the stream (the process is killed) when the sink cannot go on,
    /// for example when the forensic log cannot be written.
    fn line(&mut self, line: &[u8]) -> Result<()>;

    /// A piece of a line longer than [`PIECE`] bytes, handed on as it arrives
    /// so no line is ever held whole; the rest follows in more pieces and a
    /// final [`Self::line`].
    ///
    /// # Errors
    /// As [`Self::line`].
    fn part(&mut self, bytes: &[u8]) -> Result<()>;
}

/// The most of one line held in memory while streaming an agent's stdout.
///
/// Note \[Bounded lines\]: an agent can print a single line of any size (a
/// tool result of a gigabyte). Reading stops at this many bytes without a
/// line end and hands the piece to [`LineSink::part`]: the forensic log gets
/// every byte, and the decoder, fed the same pieces, skips a line over its
/// own `max_line_bytes` without loading it.
pub const PIECE: u64 = 1 << 20;

/// Read up to the next line end, or [`PIECE`] bytes, into `buf`.
///
/// Cancel-safe (the spawn loop races it against the agent's exit and the
/// interrupts): bytes read before a cancellation stay in `buf`, and the next
/// call goes on from there, never past [`PIECE`] in all.
async fn read_piece<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let room = PIECE.saturating_sub(buf.len() as u64).max(1);
    reader.take(room).read_until(b'\n', buf).await
}

/// What to do with what [`read_piece`] read.
fn hand_on(buf: &mut Vec<u8>, sink: &mut dyn LineSink) -> Result<()> {
    if buf.last() == Some(&b'\n') {
        sink.line(trim_eol(buf))?;
        buf.clear();
    } else if buf.len() as u64 >= PIECE {
        sink.part(buf)?;
        buf.clear();
    }
    // Otherwise the stream ended mid-line: the caller hands on the rest.
    Ok(())
}

/// Stream `source` into `sink`, writing the agent's stderr to `stderr` (read
/// and dropped when `None`).
///
/// # Errors
/// A sink error, or an I/O error other than a missing executable (which is
/// [`Ending::NotFound`]).
pub async fn stream(
    source: &Source,
    timeout: Option<Duration>,
    opts: &ProcessOptions,
    stderr: Option<std::fs::File>,
    sink: &mut dyn LineSink,
) -> Result<Streamed> {
    let (ending, stderr_dropped) = match source {
        Source::Spawn(cmd) => spawn(cmd, timeout, opts, stderr, sink).await?,
        Source::Replay { path, pace } => (
            replay(path, *pace, timeout, opts.interrupts.clone(), sink).await?,
            0,
        ),
    };
    Ok(Streamed {
        ending,
        stderr_dropped,
    })
}

fn interrupted(signal: i32) -> Ending {
    Ending::Interrupted {
        signal,
        code: None,
        agent_signal: None,
    }
}

async fn replay(
    path: &Path,
    pace: Option<Duration>,
    timeout: Option<Duration>,
    mut interrupts: Option<Interrupts>,
    sink: &mut dyn LineSink,
) -> Result<Ending> {
    // Note [Regular files only] in `infile`: opened without blocking and
    // checked on the handle, so a FIFO or device is refused, not waited on.
    let file = crate::infile::open(path, crate::infile::Options::REGULAR)
        .map_err(Error::input("transcript"))?;
    let file = tokio::fs::File::from_std(file);
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut reader = BufReader::with_capacity(256 << 10, file);
    let mut buf = Vec::with_capacity(64 << 10);
    loop {
        if let Some(sig) = interrupts.as_ref().and_then(Interrupts::first) {
            return Ok(interrupted(sig));
        }
        if let Some(p) = pace {
            match &mut interrupts {
                Some(i) => {
                    tokio::select! {
                        () = tokio::time::sleep(p) => {}
                        Some(sig) = i.recv() => return Ok(interrupted(sig)),
                    }
                }
                None => tokio::time::sleep(p).await,
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(Ending::TimedOut);
        }
        let n = read_piece(&mut reader, &mut buf)
            .await
            .map_err(|source| Error::Io {
                context: format!("reading transcript `{}`", path.display()),
                source,
            })?;
        if n == 0 {
            if !buf.is_empty() {
                sink.line(&buf)?;
            }
            return Ok(Ending::Replayed);
        }
        hand_on(&mut buf, sink)?;
    }
}

fn trim_eol(buf: &[u8]) -> &[u8] {
    let b = buf.strip_suffix(b"\n").unwrap_or(buf);
    b.strip_suffix(b"\r").unwrap_or(b)
}

/// Send `signal` to a whole process group (see Note \[Process groups\]).
fn signal_group(pid: u32, signal: Signal) {
    if let Ok(pid) = i32::try_from(pid) {
        // ESRCH (already gone) is fine: the group is dead either way.
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

/// Kill a whole process group with SIGKILL (see Note \[Process groups\]).
fn kill_group(pid: u32) {
    signal_group(pid, Signal::SIGKILL);
}

/// See Note \[Parent death\]: the child gets SIGKILL when the thread that
/// spawned it exits.
// The one unsafe block of the workspace: `pre_exec` is unsafe because its
// closure runs in the forked child before `exec`.
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: between fork and exec only async-signal-safe calls are allowed.
    // The closure makes two system calls through nix, prctl(PR_SET_PDEATHSIG)
    // and getppid(2), both async-signal-safe; it allocates nothing and takes
    // no lock (an `Errno` becomes an `io::Error` without allocating).
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
            // The parent died between fork and prctl: the signal will never
            // come, so do not start the agent at all.
            if nix::unistd::getppid() != parent {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Copy the agent's stderr to `file`, keeping the first `cap` bytes and
/// counting the rest in `dropped` (Note \[Stderr cap\]).
async fn copy_stderr<R: tokio::io::AsyncRead + Unpin>(
    mut from: R,
    file: Option<std::fs::File>,
    cap: u64,
    dropped: Arc<AtomicU64>,
) {
    let mut file = file.map(tokio::fs::File::from_std);
    let mut kept = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let room = usize::try_from(cap.saturating_sub(kept)).unwrap_or(usize::MAX);
        let keep = n.min(room);
        if keep > 0 {
            if let Some(f) = &mut file {
                if f.write_all(&buf[..keep]).await.is_err() {
                    // A full disk must not block the agent: count the rest as dropped.
                    kept = cap;
                    dropped.fetch_add(n as u64, Ordering::Relaxed);
                    continue;
                }
            }
            kept += keep as u64;
        }
        dropped.fetch_add((n - keep) as u64, Ordering::Relaxed);
    }
    if let Some(f) = &mut file {
        let lost = dropped.load(Ordering::Relaxed);
        if lost > 0 {
            let note = format!(
                "\n[agentshape: stderr log capped at {cap} bytes; {lost} more bytes of stderr were dropped]\n"
            );
            let _ = f.write_all(note.as_bytes()).await;
        }
        let _ = f.flush().await;
    }
}

/// The states of the spawn loop that decide when it stops.
#[derive(Debug, Default)]
struct Watch {
    /// The agent's exit, once awaited.
    status: Option<std::process::ExitStatus>,
    /// Stdout reached its end.
    eof: bool,
    /// The timeout fired (and the group was killed).
    timed_out: bool,
    /// The first interrupt passed on.
    interrupted: Option<i32>,
    /// When the group gets SIGKILL (grace after an interrupt or the exit).
    kill_at: Option<Instant>,
    /// The group got SIGKILL; reading stops at this instant.
    stop_at: Option<Instant>,
}

impl Watch {
    fn kill(&mut self, pid: u32) {
        if self.stop_at.is_none() {
            kill_group(pid);
            self.stop_at = Some(Instant::now() + DRAIN);
        }
    }

    fn kill_by(&mut self, at: Instant) {
        self.kill_at = Some(self.kill_at.map_or(at, |k| k.min(at)));
    }

    /// The next instant something must happen.
    fn next(&self, timeout_at: Option<Instant>) -> Option<Instant> {
        let killed = self.stop_at.is_some();
        let timeout_at = timeout_at.filter(|_| self.status.is_none() && !killed);
        let kill_at = self.kill_at.filter(|_| !killed);
        [timeout_at, kill_at, self.stop_at]
            .into_iter()
            .flatten()
            .min()
    }
}

async fn spawn(
    cmd: &AgentCommand,
    timeout: Option<Duration>,
    opts: &ProcessOptions,
    stderr_file: Option<std::fs::File>,
    sink: &mut dyn LineSink,
) -> Result<(Ending, u64)> {
    // See Note [Interrupts]: a signal that came before the agent started stops it starting.
    if let Some(sig) = opts.interrupts.as_ref().and_then(Interrupts::first) {
        return Ok((interrupted(sig), 0));
    }
    // The page setting this process was started with (Note [Huge pages
    // for bulk only] in `pages.rs`): the agent inherits it.
    crate::pages::for_children();
    let mut command = Command::new(&cmd.program);
    // Note [Agents get no credentials of ours]; then the command's own extras.
    for name in withheld_env(std::env::vars_os().map(|(k, _)| k), &cmd.pass_env) {
        command.env_remove(name);
    }
    command
        .args(&cmd.args)
        .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    die_with_parent(&mut command);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Ending::NotFound, 0)),
        Err(source) => {
            return Err(Error::Io {
                context: format!("spawning `{}`", cmd.program),
                source,
            });
        }
    };
    let pid = child.id().unwrap_or(0);
    let timeout_at = timeout.map(|t| Instant::now() + t);
    // The input is written by a task of its own while stdout is read, so an
    // agent that prints before it has read everything never deadlocks. An
    // agent that exits without reading it all (a broken pipe) is not an
    // error here: its output and exit status tell what happened.
    if let (Some(text), Some(mut stdin)) = (cmd.stdin.clone(), child.stdin.take()) {
        tokio::spawn(async move {
            let _ = stdin.write_all(text.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    // Stderr is copied by a task of its own, so a chatty stderr never blocks stdout.
    let dropped = Arc::new(AtomicU64::new(0));
    let stderr_task = child.stderr.take().map(|err| {
        tokio::spawn(copy_stderr(
            err,
            stderr_file,
            opts.stderr_cap,
            Arc::clone(&dropped),
        ))
    });
    let Some(stdout) = child.stdout.take() else {
        kill_group(pid);
        return Err(Error::Io {
            context: format!("reading the stdout of `{}`", cmd.program),
            source: std::io::Error::other("stdout was not captured"),
        });
    };
    let mut interrupts = opts.interrupts.clone();
    if let Some(i) = &mut interrupts {
        // Only interrupts from now on count (none came before: checked above).
        i.mark_seen();
    }
    let mut reader = BufReader::with_capacity(256 << 10, stdout);
    let mut buf = Vec::with_capacity(64 << 10);
    let mut w = Watch::default();
    let failure: Option<Error> = loop {
        if w.eof && w.status.is_some() {
            break None;
        }
        let next = w.next(timeout_at);
        tokio::select! {
            got = read_piece(&mut reader, &mut buf), if !w.eof => match got {
                Ok(0) => w.eof = true,
                Ok(_) => {
                    if let Err(e) = hand_on(&mut buf, sink) {
                        break Some(e);
                    }
                }
                Err(source) => break Some(Error::Io {
                    context: format!("reading the stdout of `{}`", cmd.program),
                    source,
                }),
            },
            status = child.wait(), if w.status.is_none() => match status {
                Ok(s) => {
                    w.status = Some(s);
                    // Note [The run ends when the agent exits].
                    w.kill_by(Instant::now() + opts.exit_grace);
                }
                Err(source) => break Some(Error::Io {
                    context: format!("waiting for `{}`", cmd.program),
                    source,
                }),
            },
            sig = async {
                match &mut interrupts {
                    Some(i) => i.recv_many().await,
                    None => std::future::pending().await,
                }
            } => match sig {
                // See Note [Interrupts]: the first is passed on, a second kills.
                Some((sig, n)) if w.interrupted.is_none() && !w.timed_out && w.status.is_none() => {
                    w.interrupted = Some(sig);
                    if let Ok(s) = Signal::try_from(sig) {
                        signal_group(pid, s);
                    }
                    if n > 1 {
                        w.kill(pid);
                    } else {
                        w.kill_by(Instant::now() + opts.interrupt_grace);
                    }
                }
                // A second one, or one after the agent exited or timed out:
                // the group goes now (the session ends as it was ending).
                Some(_) => w.kill(pid),
                None => interrupts = None,
            },
            () = async {
                match next {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {
                let now = Instant::now();
                if w.stop_at.is_some_and(|s| now >= s) {
                    // Something outside the group holds the pipe: stop reading.
                    break None;
                }
                if w.status.is_none() && timeout_at.is_some_and(|t| now >= t) && w.stop_at.is_none() {
                    w.timed_out = true;
                }
                w.kill(pid);
            },
        }
    };
    if let Some(e) = failure {
        kill_group(pid);
        let _ = child.wait().await;
        if let Some(task) = stderr_task {
            task.abort();
        }
        return Err(e);
    }
    // A line cut by the end of the stream (the agent died mid-line) is still output.
    if !buf.is_empty() {
        sink.line(trim_eol(&buf))?;
    }
    // Whatever is left of the group goes with the agent.
    kill_group(pid);
    let status = match w.status {
        Some(s) => s,
        None => child.wait().await.map_err(|source| Error::Io {
            context: format!("waiting for `{}`", cmd.program),
            source,
        })?,
    };
    if let Some(mut task) = stderr_task {
        if tokio::time::timeout(DRAIN, &mut task).await.is_err() {
            task.abort();
        }
    }
    let ending = match (w.interrupted, w.timed_out) {
        (Some(signal), _) => Ending::Interrupted {
            signal,
            code: status.code(),
            agent_signal: status.signal(),
        },
        (None, true) => Ending::TimedOut,
        (None, false) => Ending::Exited {
            code: status.code(),
            signal: status.signal(),
        },
    };
    Ok((ending, dropped.load(Ordering::Relaxed)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    /// Collects lines; may interrupt when it sees a given line.
    #[derive(Default)]
    struct Lines {
        lines: Vec<String>,
        on: Vec<(String, Interrupter, i32)>,
    }

    impl LineSink for Lines {
        fn line(&mut self, line: &[u8]) -> Result<()> {
            let text = String::from_utf8_lossy(line).into_owned();
            for (when, tx, sig) in &self.on {
                if *when == text {
                    tx.interrupt(*sig);
                }
            }
            self.lines.push(text);
            Ok(())
        }
        fn part(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
    }

    fn sh(script: &str) -> Source {
        Source::Spawn(AgentCommand {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Vec::new(),
            pass_env: Vec::new(),
            stdin: None,
        })
    }

    #[test]
    fn only_our_own_variables_are_withheld_and_pass_env_lets_one_through() {
        let vars = [
            "AGENTSHAPE_STORE",
            "AGENTSHAPE_TOKEN",
            "AGENTSHAPE_MODEL_DIR",
            "ANTHROPIC_API_KEY",
            "PATH",
            "agentshape_store",
            "XAGENTSHAPE_STORE",
        ]
        .map(std::ffi::OsString::from);
        let got = withheld_env(vars.clone(), &[]);
        assert_eq!(
            got,
            [
                "AGENTSHAPE_STORE",
                "AGENTSHAPE_TOKEN",
                "AGENTSHAPE_MODEL_DIR"
            ]
            .map(std::ffi::OsString::from)
        );
        let got = withheld_env(vars, &["AGENTSHAPE_STORE".to_owned()]);
        assert_eq!(
            got,
            ["AGENTSHAPE_TOKEN", "AGENTSHAPE_MODEL_DIR"].map(std::ffi::OsString::from)
        );
    }

    /// A hang guard: every stream here ends in well under a second.
    async fn guarded(
        source: &Source,
        opts: &ProcessOptions,
        stderr: Option<std::fs::File>,
        sink: &mut Lines,
    ) -> Streamed {
        tokio::time::timeout(
            Duration::from_secs(30),
            stream(source, None, opts, stderr, sink),
        )
        .await
        .expect("the stream ended")
        .unwrap()
    }

    fn alive(pid: &str) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        !matches!(state, None | Some('Z' | 'X'))
    }

    #[tokio::test]
    async fn a_second_interrupt_kills_the_group_at_once() {
        // The agent survives SIGTERM; the grace period is an hour: only the
        // second interrupt can end this stream.
        let (tx, rx) = Interrupts::channel();
        let opts = ProcessOptions {
            interrupt_grace: Duration::from_secs(3600),
            interrupts: Some(rx),
            ..ProcessOptions::default()
        };
        let mut sink = Lines::default();
        sink.on.push(("ready".into(), tx.clone(), 15));
        sink.on.push(("got TERM".into(), tx, 15));
        let script = "trap 'echo got TERM' TERM; echo ready; while :; do sleep 0.05; done";
        let got = guarded(&sh(script), &opts, None, &mut sink).await;
        assert_eq!(
            got.ending,
            Ending::Interrupted {
                signal: 15,
                code: None,
                agent_signal: Some(9)
            }
        );
        assert_eq!(sink.lines[..2], ["ready", "got TERM"]);
    }

    #[tokio::test]
    async fn an_interrupt_before_the_start_starts_nothing() {
        let (tx, rx) = Interrupts::channel();
        tx.interrupt(2);
        let opts = ProcessOptions {
            interrupts: Some(rx),
            ..ProcessOptions::default()
        };
        let mut sink = Lines::default();
        let got = guarded(&sh("echo started"), &opts, None, &mut sink).await;
        assert_eq!(got.ending, interrupted(2));
        assert!(sink.lines.is_empty());
    }

    #[tokio::test]
    async fn a_paced_replay_stops_at_the_next_line() {
        let (tx, rx) = Interrupts::channel();
        let opts = ProcessOptions {
            interrupts: Some(rx),
            ..ProcessOptions::default()
        };
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "one\ntwo\nthree\n").unwrap();
        let source = Source::Replay {
            path: file.path().to_owned(),
            pace: Some(Duration::from_millis(1)),
        };
        let mut sink = Lines::default();
        sink.on.push(("one".into(), tx, 1));
        let got = guarded(&source, &opts, None, &mut sink).await;
        assert_eq!(got.ending, interrupted(1));
        assert_eq!(sink.lines, ["one"]);
    }

    #[tokio::test]
    async fn the_stream_ends_when_the_agent_exits_and_its_group_dies() {
        // `sleep` inherits stdout: without Note [The run ends when the agent
        // exits] the stream would last 1000 s.
        let mut sink = Lines::default();
        let opts = ProcessOptions::default();
        let got = guarded(&sh("sleep 1000 & echo $!; exit 0"), &opts, None, &mut sink).await;
        assert_eq!(
            got.ending,
            Ending::Exited {
                code: Some(0),
                signal: None
            }
        );
        let pid = sink.lines[0].clone();
        for _ in 0..250 {
            if !alive(&pid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the agent's background child {pid} outlived it");
    }

    #[tokio::test]
    async fn a_process_that_left_the_group_cannot_hold_the_stream() {
        // `setsid` puts `sleep` out of reach of `killpg`; it still holds stdout.
        let mut sink = Lines::default();
        let opts = ProcessOptions::default();
        let got = guarded(
            &sh("setsid sleep 1000 & echo $!; exit 0"),
            &opts,
            None,
            &mut sink,
        )
        .await;
        let pid = sink.lines[0].clone();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid.parse().unwrap()),
            Signal::SIGKILL,
        );
        assert_eq!(
            got.ending,
            Ending::Exited {
                code: Some(0),
                signal: None
            }
        );
    }

    #[tokio::test]
    async fn stderr_beyond_the_cap_is_counted_and_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("err.log");
        let file = std::fs::File::create(&path).unwrap();
        let opts = ProcessOptions {
            stderr_cap: 1000,
            ..ProcessOptions::default()
        };
        let mut sink = Lines::default();
        let got = guarded(
            &sh("head -c 100000 /dev/zero | tr '\\0' e >&2; echo done"),
            &opts,
            Some(file),
            &mut sink,
        )
        .await;
        assert_eq!(got.stderr_dropped, 99_000);
        assert_eq!(sink.lines, ["done"]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text[..1000], "e".repeat(1000));
        assert_eq!(
            &text[1000..],
            "\n[agentshape: stderr log capped at 1000 bytes; 99000 more bytes of stderr were dropped]\n"
        );
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(1), "SIGHUP");
        assert_eq!(signal_name(999), "signal 999");
    }
}
