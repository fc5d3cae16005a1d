//! One module per subcommand; this one parses the arguments and dispatches.

mod ask;
mod check;
mod extract;
mod ingest;
mod lint;
mod memories;
mod model;
mod ops;
mod parse;
mod profile;
mod run;
mod serve;
mod sessions;
mod store;
mod validate;

use std::ffi::OsString;
use std::io::{self, BufRead};

use agentshape_core::decode::Format;
use clap::Parser;
use clap::error::ErrorKind;

use crate::args::{Cli, Command, FormatArg};
use crate::exit::{CliError, Exit};
use crate::output::{Out, eprint};

/// Parse `args` and run the command.
///
/// clap exits with 2 on a usage error, which would collide with our "no
/// structured output" code, so usage errors are mapped to 64 here; `--help` and
/// `--version` print to stdout and exit 0.
///
/// # Errors
/// Any error of the command; `exit::report` maps it to an exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<Exit> {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Exit::Ok,
                _ => Exit::Usage,
            };
            // Help goes to stdout, errors to stderr; a failure to print is moot.
            let _ = e.print();
            return Ok(code);
        }
    };
    match cli.command {
        Command::Parse(a) => parse::run(&a),
        Command::Extract(a) => extract::run(&a),
        Command::Validate(a) => validate::run(&a),
        Command::Check(a) => check::run(&a),
        Command::Ask(a) => ask::run(&a),
        Command::Lint(a) => lint::run(&a),
        Command::Run(a) => run::run(&a),
        Command::Ops(a) => ops::run(&a),
        Command::Ingest(a) => ingest::run(&a),
        Command::Memories(a) => memories::run(&a),
        Command::Sessions(a) => sessions::run(&a),
        Command::Serve(a) => serve::run(a),
        Command::Profile(a) => profile::run(&a),
        Command::Model(a) => model::run(&a),
        Command::Store(a) => store::run(&a),
    }
}

/// The core format for a `--format` value.
pub fn format_of(arg: FormatArg) -> Format {
    match arg {
        FormatArg::Auto => Format::Auto,
        FormatArg::Claude => Format::Claude,
        FormatArg::Codex => Format::Codex,
        FormatArg::Anthropic => Format::Anthropic,
        FormatArg::OpenaiChat => Format::OpenaiChat,
        FormatArg::OpenaiResponses => Format::OpenaiResponses,
        FormatArg::Ollama => Format::Ollama,
        FormatArg::Gemini => Format::Gemini,
        FormatArg::Text => Format::Text,
    }
}

/// Report one input of a batch that could not be read, and go on (Note
/// [Batch exit codes]): its error on stderr (above the progress bar) and,
/// with `--json`, `{"file": ..., "input_error": "cannot read: ..."}` on stdout
/// in its place. Returns the exit code it adds to the batch: 66.
///
/// # Errors
/// When stdout fails.
pub fn report_bad_input(
    out: &mut Out,
    bar: &indicatif::ProgressBar,
    err: &CliError,
) -> io::Result<Exit> {
    bar.suspend(|| eprint(&format!("agentshape: {err}")));
    if out.json {
        let (file, reason) = match err {
            CliError::NoInput { path, source } => (path.as_str(), io_reason(source)),
            CliError::Usage(message) => ("-", message.clone()),
        };
        out.json_line(&serde_json::json!({
            "file": file,
            "input_error": format!("cannot read: {reason}"),
        }))?;
    }
    Ok(Exit::NoInput)
}

/// An I/O error's text without the ` (os error N)` suffix the OS adds.
fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    }
}

/// What reading one line gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// A line (without its terminator) is in the buffer.
    Line,
    /// The line was longer than the limit; the buffer holds only its first bytes.
    TooLong,
    /// End of input.
    Eof,
}

/// Read one line, appending it to `buf`: the line is `buf[old_len..]`
/// afterwards (at most `limit` bytes of it, without its terminator; the rest
/// of an over-long line is read and dropped, so memory stays bounded). Lets
/// a batch of lines share one buffer (Note [One buffer per batch]).
fn append_line_limited<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<LineRead> {
    let start = buf.len();
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        seen_any = true;
        let (take, done) = match memchr_newline(chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            let room = limit.saturating_sub(buf.len() - start);
            if take > room {
                buf.extend_from_slice(&chunk[..room]);
                too_long = true;
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        let consumed = if done { take + 1 } else { take };
        reader.consume(consumed);
        if done {
            break;
        }
    }
    if !seen_any {
        return Ok(LineRead::Eof);
    }
    if buf.len() > start && buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(if too_long {
        LineRead::TooLong
    } else {
        LineRead::Line
    })
}

fn memchr_newline(haystack: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', haystack)
}

/// Lines per parallel batch: large enough to amortize the fork/join, small
/// enough that reading the next batch and writing the last one's results
/// overlap most of the work (Note [Pipelined batches]).
pub const BATCH_LINES: usize = 1024;

/// Process the non-blank lines of `reader` in parallel batches, handing each
/// line's result to `emit` in input order.
///
/// `work` gets the 1-based line number, the line (at most `limit` bytes) and
/// whether it was cut. Memory holds at most two batches of lines and one of
/// results.
///
/// Note [Pipelined batches]: reading a batch and writing results are serial,
/// and done between batches they left the worker threads idle (a fifth of
/// the wall time of `extract --jsonl` on 2 cores). Each batch is now worked
/// on by the pool while this thread writes the previous batch's results
/// and reads the next batch, so output order and the memory bound stay as
/// they were.
///
/// Note [Batches as pool jobs]: each batch used to be handed to the pool
/// from a scoped thread spawned for it. Every such thread's exit gave back
/// its stack and its allocator heap (`madvise` calls, about 190 over the
/// 20 batches of the bench corpus, each a TLB shootdown across the cores),
/// and the next one faulted them in again. The batch is now one job spawned
/// into the pool from a `rayon` scope on this thread: no thread is created
/// after the pool's own.
///
/// # Errors
/// When the reader or `emit` fails.
pub fn par_lines<R, T, W, E>(reader: &mut R, limit: usize, work: W, mut emit: E) -> io::Result<()>
where
    R: BufRead + ?Sized,
    T: Send,
    W: Fn(u64, &[u8], LineRead) -> T + Sync,
    E: FnMut(T) -> io::Result<()>,
{
    use rayon::prelude::*;
    let mut line_no = 0u64;
    let mut read_batch = |reader: &mut R, batch: &mut Batch| -> io::Result<bool> {
        batch.clear();
        while batch.lines.len() < BATCH_LINES {
            let start = batch.bytes.len();
            let got = append_line_limited(reader, &mut batch.bytes, limit)?;
            if got == LineRead::Eof {
                return Ok(true);
            }
            line_no += 1;
            let end = batch.bytes.len();
            if batch.bytes[start..].iter().all(u8::is_ascii_whitespace) {
                batch.bytes.truncate(start);
                continue;
            }
            batch.lines.push((line_no, start..end, got));
        }
        Ok(false)
    };
    let work = &work;
    let mut batch = Batch::default();
    let mut spare = Batch::default();
    let mut eof = read_batch(reader, &mut batch)?;
    let mut done: Vec<T> = Vec::new();
    loop {
        let mut results: Vec<T> = Vec::new();
        // Note [Batches as pool jobs]: the batch is one job on the pool,
        // this thread writes and reads meanwhile; the scope ends when both
        // are done (a panic in the job resumes here).
        let next_eof = rayon::in_place_scope(|scope| -> io::Result<Option<bool>> {
            let (lines, results) = (&batch, &mut results);
            scope.spawn(move |_| {
                *results = lines
                    .lines
                    .par_iter()
                    .map(|(n, at, got)| work(*n, &lines.bytes[at.clone()], *got))
                    .collect();
            });
            for r in done.drain(..) {
                emit(r)?;
            }
            if eof {
                Ok(None)
            } else {
                read_batch(reader, &mut spare).map(Some)
            }
        })?;
        done = results;
        // The next batch was read into `spare`; the one just worked on
        // becomes the spare (Note [One buffer per batch]).
        std::mem::swap(&mut batch, &mut spare);
        match next_eof {
            Some(e) => eof = e,
            None => break,
        }
    }
    for r in done {
        emit(r)?;
    }
    Ok(())
}

/// One batch of lines for [`par_lines`]: their bytes one after another in
/// one buffer, and each line's number, extent and how it was read.
///
/// Note [One buffer per batch]: a `Vec<u8>` per line was allocated on the
/// reading thread, grown by doubling as the line was copied in (seven or
/// eight reallocations for a 2 KB reply line), and freed on a worker
/// thread. One buffer per batch, reused for the batch after next, grows
/// only over the first batches; the lines are slices of it. Measured with
/// core's skipped inexact re-scan (`json::parse_if_json`) together
/// (`extract --jsonl --json`, 20,000 corpus replies, byte-identical
/// output): 1.9995 → 1.962 billion instructions (−1.9%).
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(u64, std::ops::Range<usize>, LineRead)>,
}

impl Batch {
    fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_reasons_drop_the_os_error_number() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(io_reason(&e), "No such file or directory");
        assert_eq!(
            io_reason(&io::Error::other("is a directory")),
            "is a directory"
        );
    }

    fn lines(input: &[u8], limit: usize) -> Vec<(LineRead, Vec<u8>)> {
        let mut r = io::BufReader::with_capacity(3, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            buf.clear();
            let got = append_line_limited(&mut r, &mut buf, limit).unwrap();
            if got == LineRead::Eof {
                return out;
            }
            out.push((got, buf.clone()));
        }
    }

    #[test]
    fn par_lines_keeps_input_order_across_pipelined_batches() {
        // Several batches, blank lines between, uneven work per line.
        let n = BATCH_LINES * 3 + 17;
        let mut input = Vec::new();
        for i in 0..n {
            input.extend_from_slice(format!("{i}\n").as_bytes());
            if i % 7 == 0 {
                input.extend_from_slice(b"  \n");
            }
        }
        let mut got = Vec::new();
        par_lines(
            &mut io::BufReader::new(&input[..]),
            64,
            |no, line, _| {
                let v: usize = std::str::from_utf8(line).unwrap().parse().unwrap();
                if v % 5 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
                (no, v)
            },
            |r| {
                got.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got.len(), n);
        assert!(got.iter().enumerate().all(|(i, &(_, v))| v == i));
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(got[1].0, 3, "the blank line after line 1 still counts");
    }

    /// Note [One buffer per batch]: lines share a buffer, so the limit
    /// and the `\r` strip apply to each line, not to the buffer.
    #[test]
    fn par_lines_cuts_each_line_of_a_shared_buffer_on_its_own() {
        let mut input = Vec::new();
        for _ in 0..BATCH_LINES + 3 {
            input.extend_from_slice(b"0123456789\nok\r\n  \nabcd\n");
        }
        let mut got: Vec<(u64, Vec<u8>, LineRead)> = Vec::new();
        par_lines(
            &mut io::BufReader::with_capacity(5, &input[..]),
            4,
            |no, line, read| (no, line.to_vec(), read),
            |r| {
                got.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got.len(), (BATCH_LINES + 3) * 3);
        for (k, three) in got.chunks(3).enumerate() {
            let first = 4 * k as u64 + 1;
            assert_eq!(three[0], (first, b"0123".to_vec(), LineRead::TooLong));
            assert_eq!(three[1], (first + 1, b"ok".to_vec(), LineRead::Line));
            assert_eq!(three[2], (first + 3, b"abcd".to_vec(), LineRead::Line));
        }
    }

    #[test]
    fn par_lines_stops_at_the_first_emit_error() {
        let input = "a\n".repeat(BATCH_LINES * 2);
        let mut seen = 0;
        let err = par_lines(
            &mut io::BufReader::new(input.as_bytes()),
            64,
            |no, _, _| no,
            |_| {
                seen += 1;
                if seen == 10 {
                    Err(io::Error::other("stdout closed"))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "stdout closed");
        assert_eq!(seen, 10);
    }

    #[test]
    fn splits_lines_across_small_reads_and_strips_crlf() {
        let got = lines(b"ab\r\ncdefg\n\nh", 100);
        let want: Vec<(LineRead, Vec<u8>)> = vec![
            (LineRead::Line, b"ab".to_vec()),
            (LineRead::Line, b"cdefg".to_vec()),
            (LineRead::Line, b"".to_vec()),
            (LineRead::Line, b"h".to_vec()),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn over_long_line_is_cut_and_flagged_and_the_next_line_survives() {
        let got = lines(b"0123456789\nok\n", 4);
        assert_eq!(got[0], (LineRead::TooLong, b"0123".to_vec()));
        assert_eq!(got[1], (LineRead::Line, b"ok".to_vec()));
    }
}
