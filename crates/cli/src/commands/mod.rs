//! One module per subcommand; this one parses the arguments and dispatches.

mod alerts;
mod ask;
mod check;
mod export;
mod extract;
mod hook;
mod import;
mod ingest;
mod lint;
mod memories;
mod model;
mod ops;
mod parse;
mod profile;
mod run;
mod secrets;
mod serve;
mod sessions;
mod stats;
mod store;
mod usage;
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
    // Note [Secret rule files] in the runtime: a bad file is a config error.
    let rules =
        agentshape_runtime::secrets::load(cli.secrets_rules.as_deref()).map_err(|e| match e {
            agentshape_runtime::Error::Input { what, source } => CliError::NoInput {
                path: what.to_owned(),
                source: source.into_io(),
            },
            e => CliError::Usage(e.to_string()),
        })?;
    if let Some(d) = rules {
        crate::mask::use_rules(d);
    }
    if cli.no_mask && crate::mask::turn_off() {
        crate::output::eprint(crate::mask::OFF_WARNING);
    }
    crate::mask::warm();
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
        Command::Secrets(a) => secrets::run(&a),
        Command::Import(a) => import::run(&a, false),
        Command::Watch(a) => import::run(&a, true),
        Command::Hook(a) => hook::run(&a),
        Command::Stats(a) => stats::run(&a),
        Command::Usage(a) => usage::run(&a),
        Command::Export(a) => export::run(&a),
        Command::Alerts(a) => alerts::run(&a),
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
        FormatArg::ClaudeSession => Format::ClaudeSession,
        FormatArg::CodexRollout => Format::CodexRollout,
        FormatArg::GeminiChat => Format::GeminiChat,
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
}

fn memchr_newline(haystack: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', haystack)
}

/// Lines per parallel batch: large enough to amortize the fork/join, small
/// enough that reading the next batch and writing the last one's results
/// overlap most of the work (Note [Pipelined batches]).
pub const BATCH_LINES: usize = 1024;

/// Process the non-blank lines of `reader` in parallel batches, handing each
/// batch's results to `emit` in input order.
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
/// Note [Whole batches out]: `emit` gets a batch's results at once, so a
/// caller can hand all their bytes to the kernel in one vectored write
/// ([`Out::masked_lines`](crate::output::Out::masked_lines)) instead of
/// copying each line into the output buffer first.
///
/// # Errors
/// When the reader or `emit` fails.
pub fn par_lines<R, T, W, E>(reader: &mut R, limit: usize, work: W, emit: E) -> io::Result<()>
where
    R: BufRead + ?Sized,
    T: Send,
    W: Fn(u64, &[u8], LineRead) -> T + Sync,
    E: FnMut(Vec<T>) -> io::Result<()>,
{
    use rayon::prelude::*;
    par_batches(
        reader,
        limit,
        |batch| {
            batch
                .lines
                .par_iter()
                .map(|(n, at, got)| work(*n, &batch.buf[at.clone()], *got))
                .collect()
        },
        emit,
    )
}

/// One line of a batch as [`par_line_groups`] hands it over: its 1-based
/// number, its bytes and how it was read.
pub type GroupLine<'a> = (u64, &'a [u8], LineRead);

/// [`par_lines`] with `work` given `group` lines at a time (fewer at a
/// batch's end), in order, answering one result per line, in their order:
/// for work that is cheaper done for several lines at once (Note [Heads
/// read together] in `output.rs`).
///
/// # Errors
/// When the reader or `emit` fails.
pub fn par_line_groups<R, T, W, E>(
    reader: &mut R,
    limit: usize,
    group: usize,
    work: W,
    emit: E,
) -> io::Result<()>
where
    R: BufRead + ?Sized,
    T: Send,
    W: Fn(&[GroupLine<'_>]) -> Vec<T> + Sync,
    E: FnMut(Vec<T>) -> io::Result<()>,
{
    use rayon::prelude::*;
    par_batches(
        reader,
        limit,
        |batch| {
            batch
                .lines
                .par_chunks(group.max(1))
                .flat_map_iter(|chunk| {
                    let lines: Vec<GroupLine<'_>> = chunk
                        .iter()
                        .map(|(n, at, got)| (*n, &batch.buf[at.clone()], *got))
                        .collect();
                    let results = work(&lines);
                    assert_eq!(results.len(), lines.len(), "one result per line");
                    results
                })
                .collect()
        },
        emit,
    )
}

/// The batches of [`par_lines`] and [`par_line_groups`]: each batch's
/// results made by `process` on the pool while the last batch's are
/// emitted and the next batch is read.
fn par_batches<R, T, P, E>(reader: &mut R, limit: usize, process: P, mut emit: E) -> io::Result<()>
where
    R: BufRead + ?Sized,
    T: Send,
    P: Fn(&Batch) -> Vec<T> + Sync,
    E: FnMut(Vec<T>) -> io::Result<()>,
{
    let mut lines = Lines::new(limit);
    let process = &process;
    let mut batch = Batch::default();
    let mut spare = Batch::default();
    let mut eof = lines.fill(reader, &mut batch)?;
    if !eof {
        // More than one batch: bulk input (runtime's Note [Huge pages for
        // bulk only]).
        agentshape_runtime::pages::bulk();
    }
    let mut done: Option<Vec<T>> = None;
    loop {
        let mut results: Vec<T> = Vec::new();
        // See Note [Batches as pool jobs]: the batch is one job on the pool,
        // this thread writes and reads meanwhile; the scope ends when both
        // are done (a panic in the job resumes here).
        let next_eof = rayon::in_place_scope(|scope| -> io::Result<Option<bool>> {
            let (lines_of, results) = (&batch, &mut results);
            scope.spawn(move |_| {
                *results = process(lines_of);
            });
            if let Some(d) = done.take() {
                emit(d)?;
            }
            if eof {
                Ok(None)
            } else {
                lines.fill(reader, &mut spare).map(Some)
            }
        })?;
        done = Some(results);
        // The next batch was read into `spare`; the one just worked on
        // becomes the spare (Note [One buffer per batch]).
        std::mem::swap(&mut batch, &mut spare);
        match next_eof {
            Some(e) => eof = e,
            None => break,
        }
    }
    if let Some(d) = done {
        emit(d)?;
    }
    Ok(())
}

/// Bytes asked of the reader at once: the input's buffer size
/// (`input::READ_BUF`), the least at which `BufReader` reads straight into
/// the caller's buffer (Note [Reading into the batch]).
const READ_CHUNK: usize = 256 << 10;

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
    /// Zeroed once when it grows and never shrunk: the reader writes into
    /// `buf[filled..]` directly (Note [Reading into the batch]).
    buf: Vec<u8>,
    /// How much of `buf` holds input.
    filled: usize,
    lines: Vec<(u64, std::ops::Range<usize>, LineRead)>,
}

impl Batch {
    /// Room for `n` more bytes after `filled`, zeroed only where `buf` grows.
    fn room(&mut self, n: usize) -> &mut [u8] {
        let want = self.filled + n;
        if self.buf.len() < want {
            self.buf.resize(want.max(self.buf.len() * 2), 0);
        }
        &mut self.buf[self.filled..want]
    }
}

/// Splits the input into [`Batch`]es of lines.
///
/// Note [Reading into the batch]: lines were read through the input's
/// `BufReader` (`fill_buf`, then each line copied into the batch's
/// buffer): every byte was copied twice on the reading thread, once by the
/// kernel and once from the `BufReader`'s buffer. Reads of at least the
/// `BufReader`'s size go past its buffer, so the kernel now copies straight
/// into the batch's buffer, and lines are found there in place with
/// `memchr`. A batch takes every whole line it has read once it holds
/// [`BATCH_LINES`], so only the unfinished last line is copied to the
/// next batch. An over-long line keeps its first `limit` bytes; the rest is
/// read into the same room and dropped, so memory stays bounded.
struct Lines {
    limit: usize,
    line_no: u64,
    /// The unfinished line at the end of the last batch's bytes.
    carry: Vec<u8>,
    eof: bool,
}

impl Lines {
    fn new(limit: usize) -> Lines {
        Lines {
            limit,
            line_no: 0,
            carry: Vec::new(),
            eof: false,
        }
    }

    /// Read the next batch into `batch`; `true` when the input is done.
    fn fill<R: io::Read + ?Sized>(
        &mut self,
        reader: &mut R,
        batch: &mut Batch,
    ) -> io::Result<bool> {
        batch.lines.clear();
        batch.filled = 0;
        let carried = self.carry.len();
        batch.room(carried).copy_from_slice(&self.carry);
        batch.filled = carried;
        self.carry.clear();
        // The current line starts at `start`; `searched` of its bytes hold
        // no newline.
        let mut start = 0;
        let mut searched = 0;
        loop {
            let from = start + searched;
            if let Some(k) = memchr_newline(&batch.buf[from..batch.filled]) {
                let end = from + k;
                self.push(batch, start, end, end - start > self.limit);
                start = end + 1;
                searched = 0;
                continue;
            }
            searched = batch.filled - start;
            if batch.lines.len() >= BATCH_LINES {
                self.carry
                    .extend_from_slice(&batch.buf[start..batch.filled]);
                return Ok(false);
            }
            if searched > self.limit {
                // Over-long: keep its first `limit` bytes, drop the rest.
                let kept = start + self.limit;
                batch.filled = kept;
                let ended = self.drop_rest(reader, batch)?;
                self.push(batch, start, kept, true);
                start = kept;
                searched = 0;
                if !ended {
                    return Ok(self.finish(batch, start));
                }
                continue;
            }
            if self.eof {
                return Ok(self.finish(batch, start));
            }
            let n = read_some(reader, batch.room(READ_CHUNK))?;
            if n == 0 {
                self.eof = true;
            }
            batch.filled += n;
        }
    }

    /// The input ended: its last line (no newline after it) if any.
    fn finish(&mut self, batch: &mut Batch, start: usize) -> bool {
        if start < batch.filled {
            let end = batch.filled;
            self.push(batch, start, end, end - start > self.limit);
        }
        true
    }

    /// Read and drop input up to and including the next newline, keeping
    /// what follows it at `batch.filled`; `false` when the input ended first.
    fn drop_rest<R: io::Read + ?Sized>(
        &mut self,
        reader: &mut R,
        batch: &mut Batch,
    ) -> io::Result<bool> {
        loop {
            let at = batch.filled;
            let n = read_some(reader, batch.room(READ_CHUNK))?;
            if n == 0 {
                self.eof = true;
                return Ok(false);
            }
            if let Some(k) = memchr_newline(&batch.buf[at..at + n]) {
                batch.buf.copy_within(at + k + 1..at + n, at);
                batch.filled = at + n - k - 1;
                return Ok(true);
            }
        }
    }

    /// Record the line `start..end` of `batch` (without its newline): its
    /// first `limit` bytes when `too_long`, without a final `\r`, skipped
    /// (but counted) when blank.
    fn push(&mut self, batch: &mut Batch, start: usize, end: usize, too_long: bool) {
        self.line_no += 1;
        let mut end = if too_long { start + self.limit } else { end };
        if end > start && batch.buf[end - 1] == b'\r' {
            end -= 1;
        }
        if batch.buf[start..end].iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let got = if too_long {
            LineRead::TooLong
        } else {
            LineRead::Line
        };
        batch.lines.push((self.line_no, start..end, got));
    }
}

/// One `read` into `buf`, retried when interrupted.
fn read_some<R: io::Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
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

    /// Every line `Lines` reads from `input`, through a `BufReader` of
    /// capacity 3 (so reads come in small pieces), batch after batch.
    fn lines(input: &[u8], limit: usize) -> Vec<(u64, LineRead, Vec<u8>)> {
        let mut r = io::BufReader::with_capacity(3, input);
        let mut reader = Lines::new(limit);
        let mut batch = Batch::default();
        let mut out = Vec::new();
        loop {
            let eof = reader.fill(&mut r, &mut batch).unwrap();
            for (n, at, got) in &batch.lines {
                out.push((*n, *got, batch.buf[at.clone()].to_vec()));
            }
            if eof {
                return out;
            }
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
            |rs| {
                got.extend(rs);
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
            |rs| {
                got.extend(rs);
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
        // Lines long enough that a read of `READ_CHUNK` holds fewer than a
        // batch of them: several batches.
        let input = format!("{}\n", "a".repeat(300)).repeat(BATCH_LINES * 4);
        let mut batches = 0;
        let err = par_lines(
            &mut io::BufReader::new(input.as_bytes()),
            1024,
            |no, _, _| no,
            |_| {
                batches += 1;
                if batches == 2 {
                    Err(io::Error::other("stdout closed"))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "stdout closed");
        assert_eq!(batches, 2, "no batch is emitted after the error");
    }

    #[test]
    fn splits_lines_across_small_reads_and_strips_crlf() {
        let got = lines(b"ab\r\ncdefg\n\n \t\r\nh", 100);
        let want = vec![
            (1, LineRead::Line, b"ab".to_vec()),
            (2, LineRead::Line, b"cdefg".to_vec()),
            (5, LineRead::Line, b"h".to_vec()),
        ];
        assert_eq!(got, want, "blank lines are skipped but counted");
        assert_eq!(lines(b"", 100), vec![]);
        assert_eq!(lines(b"\n\n", 100), vec![]);
        assert_eq!(lines(b"x\r", 100), vec![(1, LineRead::Line, b"x".to_vec())]);
    }

    #[test]
    fn over_long_line_is_cut_and_flagged_and_the_next_line_survives() {
        let got = lines(b"0123456789\nok\n", 4);
        assert_eq!(got[0], (1, LineRead::TooLong, b"0123".to_vec()));
        assert_eq!(got[1], (2, LineRead::Line, b"ok".to_vec()));
        // The limit counts a final `\r`, and holds at the end of input.
        assert_eq!(
            lines(b"abcd\r\nabcd\n01234", 4),
            vec![
                (1, LineRead::TooLong, b"abcd".to_vec()),
                (2, LineRead::Line, b"abcd".to_vec()),
                (3, LineRead::TooLong, b"0123".to_vec()),
            ]
        );
    }

    /// Note [Reading into the batch]: an over-long line longer than a
    /// whole read is dropped read by read, and the lines after it (in the
    /// same read as its end) are kept; the buffer never holds more than
    /// the limit and a read of it.
    #[test]
    fn an_over_long_line_spanning_many_reads_is_dropped_as_it_is_read() {
        let long = vec![b'x'; READ_CHUNK * 3 + 5];
        let mut input = b"first\n".to_vec();
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nnext\n  \nlast");
        let mut r = &input[..];
        let mut reader = Lines::new(10);
        let mut batch = Batch::default();
        assert!(reader.fill(&mut r, &mut batch).unwrap());
        let got: Vec<_> = batch
            .lines
            .iter()
            .map(|(n, at, got)| (*n, *got, batch.buf[at.clone()].to_vec()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, LineRead::Line, b"first".to_vec()),
                (2, LineRead::TooLong, b"xxxxxxxxxx".to_vec()),
                (3, LineRead::Line, b"next".to_vec()),
                (5, LineRead::Line, b"last".to_vec()),
            ]
        );
        assert!(
            batch.buf.len() <= 2 * (READ_CHUNK + 16),
            "{}",
            batch.buf.len()
        );
    }

    /// Lines split at every byte of every read agree with `str::lines`
    /// (no `\r`, no over-long line) across batches.
    #[test]
    fn batches_hold_every_line_once_in_order() {
        let mut input = String::new();
        for i in 0..BATCH_LINES * 2 + 300 {
            input.push_str(&"y".repeat(i % 300));
            input.push_str(&i.to_string());
            input.push('\n');
        }
        let want: Vec<(u64, LineRead, Vec<u8>)> = input
            .lines()
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, LineRead::Line, l.as_bytes().to_vec()))
            .collect();
        assert_eq!(lines(input.as_bytes(), 1 << 20), want);
    }
}
