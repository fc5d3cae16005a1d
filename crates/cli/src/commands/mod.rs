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

/// Read one line into `buf` (cleared first), holding at most `limit` bytes of
/// it: the rest of an over-long line is read and dropped, so memory stays bounded.
///
/// # Errors
/// When the reader fails.
pub fn read_line_limited<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<LineRead> {
    buf.clear();
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
            let room = limit.saturating_sub(buf.len());
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
    if buf.last() == Some(&b'\r') {
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
/// enough that a batch of typical replies stays a few megabytes.
pub const BATCH_LINES: usize = 4096;

/// Process the non-blank lines of `reader` in parallel batches, handing each
/// line's result to `emit` in input order.
///
/// `work` gets the 1-based line number, the line (at most `limit` bytes) and
/// whether it was cut. Memory holds one batch of lines and their results.
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
    let mut batch: Vec<(u64, Vec<u8>, LineRead)> = Vec::with_capacity(BATCH_LINES);
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        batch.clear();
        let mut eof = false;
        while batch.len() < BATCH_LINES {
            let got = read_line_limited(reader, &mut buf, limit)?;
            if got == LineRead::Eof {
                eof = true;
                break;
            }
            line_no += 1;
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            batch.push((line_no, std::mem::take(&mut buf), got));
        }
        let results: Vec<T> = batch
            .par_iter()
            .map(|(n, line, got)| work(*n, line, *got))
            .collect();
        for r in results {
            emit(r)?;
        }
        if eof {
            return Ok(());
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

    fn lines(input: &[u8], limit: usize) -> Vec<(LineRead, Vec<u8>)> {
        let mut r = io::BufReader::with_capacity(3, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let got = read_line_limited(&mut r, &mut buf, limit).unwrap();
            if got == LineRead::Eof {
                return out;
            }
            out.push((got, buf.clone()));
        }
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
