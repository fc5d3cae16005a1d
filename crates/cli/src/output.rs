//! Where output goes: JSON lines or readable text on stdout, progress on stderr.
//!
//! With `--json`, stdout carries only JSON lines; everything for people goes to
//! stderr. Colour only when stdout is a terminal and `NO_COLOR` is unset; a
//! progress bar only when stderr is a terminal and `--quiet` is not given.

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::args::OutputArgs;

/// Buffered stdout plus the output settings.
pub struct Out {
    w: BufWriter<StdoutLock<'static>>,
    /// Whether `--json` was given.
    pub json: bool,
    color: bool,
    quiet: bool,
}

impl Out {
    /// Stdout configured from the flags and the environment.
    pub fn new(args: OutputArgs) -> Out {
        let stdout = io::stdout();
        let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Out {
            w: BufWriter::with_capacity(256 << 10, stdout.lock()),
            json: args.json,
            color,
            quiet: args.quiet,
        }
    }

    /// Write one value as a JSON line.
    ///
    /// # Errors
    /// When stdout fails (a broken pipe included).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        serde_json::to_writer(&mut self.w, value)?;
        self.w.write_all(b"\n")
    }

    /// Write raw bytes (an already-serialized line).
    ///
    /// # Errors
    /// When stdout fails.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)
    }

    /// Write one line of text for people.
    ///
    /// # Errors
    /// When stdout fails.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.w.write_all(text.as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// Paint `text` with an ANSI style when colour is on.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        let code = match style {
            Style::Ok => "32",
            Style::Warn => "33",
            Style::Bad => "31",
            Style::Dim => "2",
            Style::Bold => "1",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// A progress bar over `len` items, hidden unless stderr is a terminal.
    pub fn progress(&self, len: u64, what: &str) -> ProgressBar {
        if self.quiet || !io::stderr().is_terminal() || len < 2 {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(&format!(
            "{{spinner}} {{pos}}/{{len}} {what} [{{bar:30}}] {{per_sec}} eta {{eta}}"
        )) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }

    /// Flush stdout.
    ///
    /// # Errors
    /// When stdout fails.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Text styles for people.
#[derive(Debug, Clone, Copy)]
pub enum Style {
    /// Success.
    Ok,
    /// Attention.
    Warn,
    /// Failure.
    Bad,
    /// Secondary detail.
    Dim,
    /// Emphasis.
    Bold,
}
