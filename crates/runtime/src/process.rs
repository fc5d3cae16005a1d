//! Agent processes: spawn without a shell, read stdout line by line, capture
//! stderr, enforce a timeout on the whole process group.
//!
//! Note \[Process groups\]: the agent is started in a new process group
//! (`process_group(0)`, so its pgid is its pid). On timeout the whole group
//! gets SIGKILL (`killpg`), so tools the agent started (a `sleep`, an `npm`,
//! a shell pipeline) die with it instead of holding the stdout pipe open.
//! Arguments are passed as a vector, never through a shell, so a prompt can
//! never be shell-interpreted.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
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
async fn read_piece<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    use tokio::io::AsyncReadExt;
    reader.take(PIECE).read_until(b'\n', buf).await
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

/// Stream `source` into `sink`, writing the agent's stderr to `stderr_path`.
///
/// # Errors
/// A sink error, or an I/O error other than a missing executable (which is
/// [`Ending::NotFound`]).
pub async fn stream(
    source: &Source,
    timeout: Option<Duration>,
    stderr_path: &Path,
    sink: &mut dyn LineSink,
) -> Result<Ending> {
    match source {
        Source::Spawn(cmd) => spawn(cmd, timeout, stderr_path, sink).await,
        Source::Replay { path, pace } => replay(path, *pace, timeout, sink).await,
    }
}

async fn replay(
    path: &Path,
    pace: Option<Duration>,
    timeout: Option<Duration>,
    sink: &mut dyn LineSink,
) -> Result<Ending> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|source| Error::Io {
            context: format!("opening transcript `{}`", path.display()),
            source,
        })?;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut reader = BufReader::with_capacity(256 << 10, file);
    let mut buf = Vec::with_capacity(64 << 10);
    loop {
        if let Some(p) = pace {
            tokio::time::sleep(p).await;
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

/// Kill a whole process group with SIGKILL (see Note \[Process groups\]).
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // ESRCH (already gone) is fine: the group is dead either way.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

async fn spawn(
    cmd: &AgentCommand,
    timeout: Option<Duration>,
    stderr_path: &Path,
    sink: &mut dyn LineSink,
) -> Result<Ending> {
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ending::NotFound),
        Err(source) => {
            return Err(Error::Io {
                context: format!("spawning `{}`", cmd.program),
                source,
            });
        }
    };
    let pid = child.id().unwrap_or(0);
    let deadline = timeout.map(|t| Instant::now() + t);
    // Stderr is copied to its file by a task of its own, so a chatty stderr never blocks stdout.
    let stderr_task = child.stderr.take().map(|mut err| {
        let path = stderr_path.to_owned();
        tokio::spawn(async move {
            if let Ok(mut file) = tokio::fs::File::create(&path).await {
                let _ = tokio::io::copy(&mut err, &mut file).await;
                let _ = file.flush().await;
            }
        })
    });
    let Some(stdout) = child.stdout.take() else {
        return Err(Error::Io {
            context: format!("reading the stdout of `{}`", cmd.program),
            source: std::io::Error::other("stdout was not captured"),
        });
    };
    let mut reader = BufReader::with_capacity(256 << 10, stdout);
    let mut buf = Vec::with_capacity(64 << 10);
    let mut timed_out = false;
    loop {
        let read = read_piece(&mut reader, &mut buf);
        let got = match deadline {
            Some(d) => {
                let Ok(r) = tokio::time::timeout_at(d, read).await else {
                    timed_out = true;
                    break;
                };
                r
            }
            None => read.await,
        };
        match got {
            Ok(0) => break,
            Ok(_) => {
                if let Err(e) = hand_on(&mut buf, sink) {
                    kill_group(pid);
                    let _ = child.wait().await;
                    return Err(e);
                }
            }
            Err(source) => {
                kill_group(pid);
                let _ = child.wait().await;
                return Err(Error::Io {
                    context: format!("reading the stdout of `{}`", cmd.program),
                    source,
                });
            }
        }
    }
    if timed_out {
        kill_group(pid);
        // Whatever the agent had written before the kill is kept: drain the
        // pipe (bounded, in case something outside the group still holds it).
        let drain = async {
            loop {
                match read_piece(&mut reader, &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if hand_on(&mut buf, sink).is_err() {
                            break;
                        }
                    }
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    }
    // A line cut by the end of the stream (the agent died mid-line) is still output.
    if !buf.is_empty() {
        sink.line(trim_eol(&buf))?;
    }
    let status = child.wait().await.map_err(|source| Error::Io {
        context: format!("waiting for `{}`", cmd.program),
        source,
    })?;
    if let Some(task) = stderr_task {
        let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
    }
    if timed_out {
        return Ok(Ending::TimedOut);
    }
    Ok(Ending::Exited {
        code: status.code(),
        signal: status.signal(),
    })
}
