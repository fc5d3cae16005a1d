//! Where output goes: JSON lines or readable text on stdout, progress on stderr.
//!
//! With `--json`, stdout carries only JSON lines; everything for people goes to
//! stderr. Colour only when stdout is a terminal and `NO_COLOR` is unset; a
//! progress bar only when stderr is a terminal and `--quiet` is not given.
//!
//! Note [Terminal safety]: every string an agent controls (a model name, a
//! session id, a summary, a memory key or observation, an event message, an
//! error text) may carry escape sequences that retitle, clear or rewrite the
//! reader's terminal. Human output is therefore cleaned in one place, the
//! [`Out::line`] and [`eprint()`] layer: C0 and C1 control characters (ESC, BEL,
//! CR, the 8-bit CSI...) and the bidi overrides become a space; newline and
//! tab stay. Our own colours survive because, with colour on, exactly the SGR
//! sequences [`Out::paint`] emits are let through; an agent can at worst
//! repeat one of those six colour codes, never move the cursor or set a
//! title. Commands also clean agent text where they build it
//! ([`clean`], `parse::truncate`), so the layer is the backstop, not the only
//! guard. `--json` output is never cleaned: JSON escapes control characters
//! and programs get the value exactly as the agent sent it.

use std::borrow::Cow;
use std::io::{self, BufWriter, IoSlice, IsTerminal, StdoutLock, Write};

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
        if crate::mask::masker().is_none() {
            serde_json::to_writer(&mut self.w, value)?;
            return self.w.write_all(b"\n");
        }
        let text = serde_json::to_string(value)?;
        self.w.write_all(crate::mask::json(&text).as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// Write raw bytes (an already-serialized line).
    ///
    /// # Errors
    /// When stdout fails.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(&masked_bytes(bytes))
    }

    /// Write result lines masked where they were made (Note [Masked where
    /// made]), one after another.
    ///
    /// Many bytes at once (a batch of `--jsonl` results) go to stdout in
    /// vectored writes, past the buffer (Note [Whole batches out]): each
    /// line was copied into the buffer before the kernel copied the
    /// buffer. A few go through the buffer as with [`Out::raw`].
    ///
    /// # Errors
    /// When stdout fails.
    pub fn masked_lines(&mut self, lines: &[&MaskedLine]) -> io::Result<()> {
        let total: usize = lines.iter().map(|l| l.0.len()).sum();
        if total < self.w.capacity() - self.w.buffer().len() {
            for l in lines {
                self.w.write_all(&l.0)?;
            }
            return Ok(());
        }
        self.w.flush()?;
        let mut slices: Vec<IoSlice<'_>> = lines
            .iter()
            .map(|l| IoSlice::new(&l.0))
            .filter(|s| !s.is_empty())
            .collect();
        write_all_vectored(self.w.get_mut(), &mut slices)
    }

    /// Write one line of text for people.
    ///
    /// # Errors
    /// When stdout fails.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        let text = crate::mask::text(text);
        let text = terminal_safe(&text, self.color);
        self.w.write_all(text.as_bytes())?;
        self.w.write_all(b"\n")
    }

    /// Paint `text` with an ANSI style when colour is on.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if !self.color {
            return text.to_owned();
        }
        format!("{}{text}{RESET}", style.sgr())
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

/// Printed bytes already through the output door: made by [`MaskedLine::new`]
/// only, so [`Out::masked_lines`] cannot be handed bytes that skipped it.
///
/// Note [Masked where made]: `--jsonl` commands make their result lines on
/// every core (`commands::par_lines`) and wrote them from one thread, which
/// masked them as it wrote: masking, about as costly as extracting on
/// ordinary replies, ran on one core while extraction ran on all (issue
/// 40: `extract --jsonl` ×2.25 wall against ×1.99 CPU). Each worker now
/// masks the lines it made, and the writer only writes. Commit `d7d6bcf`
/// went back (no faster on 2 cores, the masking tables and
/// extraction's working set sharing one cache); once masking that output
/// cost half as much (session 27: the keyword pass, base64 runs, `%`
/// triggers), the writer's thread was what the batches waited on, and
/// masking in the workers made the command 12% faster (median of 20
/// interleaved runs, 148.6 → 131.6 ms; masked against `--no-mask` ×1.65 →
/// ×1.48), at the same CPU time.
#[derive(Debug, Default)]
pub struct MaskedLine(Vec<u8>);

#[cfg(test)]
impl MaskedLine {
    /// The bytes to print.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl MaskedLine {
    /// `bytes` (JSON lines or text, as a `--jsonl` command prints them) masked
    /// for printing; kept as they are when masking is off or finds nothing.
    pub fn new(bytes: Vec<u8>) -> MaskedLine {
        match masked_bytes(&bytes) {
            Cow::Borrowed(_) => MaskedLine(bytes),
            Cow::Owned(m) => MaskedLine(m),
        }
    }

    /// One JSON object line made of three parts: `head`, the object's text
    /// from its `{` to the end of the members that hold what the input gave
    /// (without the closing brace); `own`, members that hold only this
    /// program's words (a method's and repairs' names, `true`, empty
    /// lists), each starting with `,`; and `numbers`, members whose values
    /// are JSON numbers. No key of `own` or `numbers` is one of `head`'s
    /// (a repeated key is read as its last value). The line is the three,
    /// `}` and a newline.
    ///
    /// Note [Own words after the value]: an `extract --jsonl --json` line
    /// is the extracted value, then about a seventh of its bytes in fields
    /// agentshape wrote itself (`"method":"repaired","repairs":
    /// ["unquoted_key"],...`), which masking read like the rest (14% of the
    /// bytes it read, and `unquoted_key` a keyword hit on one line in
    /// ten). Masking a JSON text reads each string with its own key alone
    /// (core's `Masker::mask_value`: no member sees its siblings) and never
    /// a number, so the line holds nothing to mask exactly when the object
    /// `head` closed holds nothing and the object of the `own` members
    /// holds nothing. The first is checked per line (or with other lines'
    /// heads, Note [Heads read together]); the second once per
    /// distinct `own` text in each thread (a handful: methods times the
    /// repairs lists seen), remembered. When either may hold something the
    /// whole line is masked as [`MaskedLine::new`] masks it, so what is
    /// printed is byte for byte what masking the whole line prints
    /// (`own_words_mask_as_the_whole_line`).
    ///
    /// `head_clean`: [`heads_clean`] said `head`, read with other lines'
    /// heads, holds nothing (Note [Heads read together]); when false it is
    /// read here.
    pub fn object(mut head: Vec<u8>, own: &[u8], numbers: &[u8], head_clean: bool) -> MaskedLine {
        let clean = crate::mask::masker().is_none() || {
            let head_clean = head_clean || {
                head.push(b'}');
                let clean = matches!(masked_bytes(&head), Cow::Borrowed(_));
                head.pop();
                clean
            };
            head_clean && own_words_clean(own)
        };
        head.reserve(own.len() + numbers.len() + 2);
        head.extend_from_slice(own);
        head.extend_from_slice(numbers);
        head.extend_from_slice(b"}\n");
        if clean {
            MaskedLine(head)
        } else {
            MaskedLine::new(head)
        }
    }
}

/// Whether every one of `heads` (each the `head` of a
/// [`MaskedLine::object`] line) holds nothing to mask, read in one pass;
/// false when one may (each is then read on its own).
///
/// Note [Heads read together]: masking `extract --jsonl`'s lines read each
/// line's head on its own, and each read paid its fixed costs (the line
/// facts' and the keyword kernel's set-up, the tail the kernel leaves to
/// the byte loop, the hits' bookkeeping) for about 700 bytes: reading the
/// 4 MB of the bench's output 16 lines at a time instead of one took
/// 4.47 ms against 5.45 (best of 15, one thread). The heads of a group of
/// lines, each closed and ended as its line is (`}` and a newline), are
/// read at once with the check that lets a batch of printed lines through
/// whole (core's Note \[Clean bytes unchecked\]: what the pass finds in
/// a line it finds in the lines read with it), so a group it passes holds
/// no head [`MaskedLine::object`] would have masked; a group it does not
/// pass is read line by line, as before. What is printed is byte for byte
/// the same (`heads_read_together_print_what_each_line_alone_prints`).
pub fn heads_clean<'a>(heads: impl Iterator<Item = &'a [u8]>) -> bool {
    let Some(masker) = crate::mask::masker() else {
        return true;
    };
    HEADS.with(|buf| {
        let mut buf = buf.take();
        buf.clear();
        for head in heads {
            buf.extend_from_slice(head);
            buf.extend_from_slice(b"}\n");
        }
        let clean = masker.bytes_hold_nothing(&buf);
        // Kept for the next group unless an over-long line grew it.
        if buf.capacity() <= KEEP_HEADS {
            HEADS.set(buf);
        }
        clean
    })
}

/// The bytes of heads a thread's buffer keeps between groups: a group
/// with a line of many megabytes (up to `--max-line-bytes`) gives its
/// room back rather than holding it for the rest of the command.
const KEEP_HEADS: usize = 1 << 20;

thread_local! {
    /// Each thread's buffer for the heads [`heads_clean`] reads together.
    static HEADS: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// How many distinct `own` texts a thread remembers (Note [Own words after
/// the value]); past that each is checked every time, as without the memo.
const OWN_WORDS_KEPT: usize = 256;

/// The memo of `own` verdicts: std's `SipHash` read each line's `own`
/// text at a third of what the memo saved (callgrind).
type OwnWords = std::collections::HashMap<Box<[u8]>, bool, std::hash::BuildHasherDefault<WordHash>>;

thread_local! {
    /// Each thread's verdicts on the `own` texts it has checked.
    static OWN_WORDS: std::cell::RefCell<OwnWords> = std::cell::RefCell::new(OwnWords::default());
}

/// A multiply-rotate hash eight bytes a step, for the memo's keys: short
/// texts this program wrote (nothing an adversary picks can crowd it: past
/// [`OWN_WORDS_KEPT`] nothing more is kept).
#[derive(Default)]
struct WordHash(u64);

impl WordHash {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for WordHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.add(u64::from_le_bytes(word));
        }
        let rest = words.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(word) ^ (rest.len() as u64) << 59);
    }
}

/// Whether the members in `own` (each starting with `,`), as one JSON
/// object, hold nothing to mask: checked by masking, remembered per thread.
fn own_words_clean(own: &[u8]) -> bool {
    if own.is_empty() {
        return true;
    }
    if own.first() != Some(&b',') {
        return false;
    }
    let check = || {
        let mut object = Vec::with_capacity(own.len() + 1);
        object.push(b'{');
        object.extend_from_slice(&own[1..]);
        object.push(b'}');
        matches!(masked_bytes(&object), Cow::Borrowed(_))
    };
    OWN_WORDS.with(|kept| {
        if let Some(&clean) = kept.borrow().get(own) {
            return clean;
        }
        let clean = check();
        let mut kept = kept.borrow_mut();
        if kept.len() < OWN_WORDS_KEPT {
            kept.insert(own.into(), clean);
        }
        clean
    })
}

/// Printed bytes through the output door (crate `mask`): JSON lines keep
/// their shape; other text is masked as text; bytes that are not UTF-8 as
/// their valid parts would be lost, so they are masked lossily only when a
/// secret is found.
fn masked_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(masker) = crate::mask::masker() else {
        return Cow::Borrowed(bytes);
    };
    // Core's Note [Clean bytes unchecked]: a batch the keyword pass finds
    // nothing in (nearly all) is printed as it is, never checked as UTF-8,
    // split into lines nor read as text. Read whole: what the pass finds
    // in a line it finds in the batch (its hits, literals and triggers
    // never hold a line break, and its gate reads at most further on).
    if masker.bytes_hold_nothing(bytes) {
        return Cow::Borrowed(bytes);
    }
    masked_text_lines(bytes)
}

/// [`masked_bytes`] for a batch with a line that may hold a secret: each
/// line read as text and masked.
fn masked_text_lines(bytes: &[u8]) -> Cow<'_, [u8]> {
    // `simdutf8` (core's Note [Vector UTF-8 checks]): the std check was
    // a tenth of what masking `extract --jsonl`'s lines cost (perf).
    let Ok(text) = simdutf8::basic::from_utf8(bytes) else {
        let lossy = String::from_utf8_lossy(bytes);
        return match crate::mask::text(&lossy) {
            Cow::Owned(t) => Cow::Owned(t.into_bytes()),
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
        };
    };
    // Each line on its own: a batch is many JSON lines. Almost none holds
    // a secret, so nothing is copied until one does: the lines before it
    // are taken whole then.
    let mut out: Option<String> = None;
    let mut at = 0;
    // `memchr`'s vector search for the line ends: `split_inclusive('\n')`
    // searched with core's word-at-a-time loop (3% of masking
    // `extract --jsonl`'s lines, perf).
    // A last line without its newline ends at the text's end.
    let unended = !bytes.is_empty() && !bytes.ends_with(b"\n");
    let ends = memchr::memchr_iter(b'\n', bytes)
        .map(|i| i + 1)
        .chain(unended.then_some(bytes.len()));
    for end in ends {
        // Just past a `\n` or at the end: always a character boundary.
        let Some(piece) = text.get(at..end) else {
            break;
        };
        let (body, nl) = piece.strip_suffix('\n').map_or((piece, ""), |b| (b, "\n"));
        let m = crate::mask::json(body);
        if let Cow::Owned(m) = m {
            let out = out.get_or_insert_with(|| {
                let mut o = String::with_capacity(text.len() + m.len());
                o.push_str(&text[..at]);
                o
            });
            out.push_str(&m);
            out.push_str(nl);
        } else if let Some(out) = &mut out {
            out.push_str(piece);
        }
        at = end;
    }
    match out {
        Some(out) => Cow::Owned(out.into_bytes()),
        None => Cow::Borrowed(bytes),
    }
}

/// The SGR sequence that ends a painted span.
const RESET: &str = "\x1b[0m";

/// Every escape sequence [`Out::paint`] emits (Note [Terminal safety]).
const OWN_SGR: [&str; 6] = [
    RESET,
    Style::Ok.sgr(),
    Style::Warn.sgr(),
    Style::Bad.sgr(),
    Style::Dim.sgr(),
    Style::Bold.sgr(),
];

/// Whether `c` must not reach a terminal: C0 and C1 controls (but newline
/// and tab), DEL, and the bidi embedding, override and isolate characters
/// that reorder what is displayed.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that could drive a terminal replaced by a
/// space (Note [Terminal safety]); newline and tab are kept.
pub fn clean(text: &str) -> Cow<'_, str> {
    terminal_safe(text, false)
}

/// `text` as one cell of a table row: as [`clean`], and a line break or a
/// tab (U+2028 and U+2029 too) shown as `\n`, `\r`, `\t`, `\u{2028}`, so the
/// row stays one line: a model name holding a newline split `stats --by
/// model`'s table in two (issue 40).
pub fn cell(text: &str) -> Cow<'_, str> {
    let breaks = |c: char| matches!(c, '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}');
    if !text.chars().any(|c| breaks(c) || is_unsafe(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' | '\u{2029}' => out.push_str(&c.escape_unicode().to_string()),
            c if is_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The shortest prefix of each of `ids` that no other of them starts
/// with, at least `min` characters (the whole id when it is shorter, or
/// when another is the same or starts with all of it). Cut to a fixed 8,
/// two imported ids `native-4…` were both shown `native-4` (issue 40).
pub fn unique_prefixes(ids: &[&str], min: usize) -> Vec<String> {
    let chars: Vec<Vec<char>> = ids.iter().map(|id| id.chars().collect()).collect();
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|a, b| chars[*a].cmp(&chars[*b]));
    let common = |a: &[char], b: &[char]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let mut need = vec![min; ids.len()];
    // Sorted, an id shares its longest prefix with a neighbour.
    for pair in order.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let n = common(&chars[a], &chars[b]) + 1;
        need[a] = need[a].max(n);
        need[b] = need[b].max(n);
    }
    chars
        .iter()
        .zip(need)
        .map(|(c, n)| c.iter().take(n).collect())
        .collect()
}

/// As [`clean`], but when `keep_own_colour` the exact SGR sequences of
/// [`Out::paint`] pass through.
fn terminal_safe(text: &str, keep_own_colour: bool) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_own_colour && c == '\x1b' {
            if let Some(seq) = OWN_SGR.iter().find(|s| rest.starts_with(**s)) {
                out.push_str(seq);
                rest = &rest[seq.len()..];
                continue;
            }
        }
        out.push(if is_unsafe(c) { ' ' } else { c });
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Print one line for people on stderr, cleaned (Note [Terminal safety]).
/// A failure to write to stderr is moot: there is nowhere left to say so.
pub fn eprint(text: &str) {
    let mut err = io::stderr().lock();
    let _ = err.write_all(clean(text).as_bytes());
    let _ = err.write_all(b"\n");
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

impl Style {
    /// The SGR sequence that starts this style.
    const fn sgr(self) -> &'static str {
        match self {
            Style::Ok => "\x1b[32m",
            Style::Warn => "\x1b[33m",
            Style::Bad => "\x1b[31m",
            Style::Dim => "\x1b[2m",
            Style::Bold => "\x1b[1m",
        }
    }
}

/// Write every byte of `slices` with vectored writes (what the unstable
/// `Write::write_all_vectored` does).
fn write_all_vectored(w: &mut impl Write, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    while !slices.is_empty() {
        match w.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Note [Own words after the value]: a line made in parts prints what
    /// masking the whole line prints, wherever a secret sits (the value,
    /// the `own` members, which are checked and not trusted, or nowhere),
    /// and `own` texts are checked again each time from the memo.
    #[test]
    fn own_words_mask_as_the_whole_line() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let heads = [
            r#"{"value":{"a":1}"#.to_owned(),
            r#"{"value":[1,"unquoted key"]"#.to_owned(),
            r#"{"value":{"a":1,"a":2}"#.to_owned(),
            r#"{"value":"my api key"#.to_owned() + "\"",
            format!(r#"{{"value":{{"api_key":"{token}"}}"#),
            format!(r#"{{"value":"{token}""#),
            r#"{"value":{"password":"hunter2hunter2hunter2"}"#.to_owned(),
        ];
        let owns = [
            String::new(),
            r#","method":"repaired","repairs":["unquoted_key","single_quotes"],"coercions":[],"valid":true,"errors":[]"#.to_owned(),
            r#","method":"fenced","repairs":[],"coercions":[],"valid":false,"errors":[]"#.to_owned(),
            format!(r#","method":"{token}","repairs":[]"#),
            r#","password":"hunter2hunter2hunter2""#.to_owned(),
        ];
        for _ in 0..2 {
            for head in &heads {
                for own in &owns {
                    for numbers in ["", r#","id":7,"line":3"#] {
                        let whole = format!("{head}{own}{numbers}}}\n");
                        let parts = MaskedLine::object(
                            head.clone().into_bytes(),
                            own.as_bytes(),
                            numbers.as_bytes(),
                            false,
                        );
                        let want = MaskedLine::new(whole.clone().into_bytes());
                        let got = String::from_utf8(parts.0).unwrap();
                        assert_eq!(got, String::from_utf8(want.0).unwrap(), "{whole}");
                        assert!(
                            !got.contains(&token) && !got.contains("hunter2hunter2"),
                            "{got}"
                        );
                    }
                }
            }
        }
        // Members that do not start with `,` are not taken as members.
        assert!(!own_words_clean(b"\"a\":1"));
        assert!(own_words_clean(b",\"method\":\"bare\""));
    }

    #[test]
    fn a_batch_is_copied_only_when_a_line_holds_a_secret_and_then_whole() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let clean = "{\"a\":\"plain\"}\n[1,2]\nnot json\n";
        assert!(matches!(masked_bytes(clean.as_bytes()), Cow::Borrowed(_)));
        for batch in [
            format!("{{\"a\":1}}\n{{\"t\":\"{token}\"}}\n[3]\n"),
            format!("{{\"t\":\"{token}\"}}\n[3]"),
            format!("[1]\n[2]\n{{\"t\":\"{token}\"}}"),
            format!("\n[1]\n\n{{\"t\":\"{token}\"}}\n\n"),
        ] {
            let got = String::from_utf8(masked_bytes(batch.as_bytes()).into_owned()).unwrap();
            let mut want = String::new();
            for l in batch.split_inclusive('\n') {
                let (body, nl) = l.strip_suffix('\n').map_or((l, ""), |b| (b, "\n"));
                want.push_str(&crate::mask::json(body));
                want.push_str(nl);
            }
            assert_eq!(got, want);
            assert!(!got.contains(&token) && got.contains("[REDACTED:"), "{got}");
            assert_eq!(got.lines().count(), batch.lines().count());
        }
        // Core's Note [Clean bytes unchecked]: bytes that are not UTF-8 are
        // passed whole when the keyword pass finds nothing in them, and
        // masked as their lossy text when it may.
        let mut bad = b"{\"a\":\"caf\xe9 \xff plain\"}\n".to_vec();
        assert!(matches!(masked_bytes(&bad), Cow::Borrowed(_)));
        bad.push(0xff);
        bad.extend_from_slice(format!(" token\" = Zx9kQ2mP7vL4nR8tW1yB {token}\n").as_bytes());
        let got = String::from_utf8(masked_bytes(&bad).into_owned()).unwrap();
        assert!(
            !got.contains(&token) && !got.contains("Zx9kQ2mP7vL4nR8tW1yB"),
            "{got}"
        );
        assert!(
            got.starts_with("{\"a\":\"caf\u{fffd} \u{fffd} plain\"}\n"),
            "{got}"
        );
    }

    #[test]
    fn clean_replaces_controls_and_bidi_overrides_but_keeps_newline_and_tab() {
        let got = clean("a\x1b]0;title\x07b\x1b[2J\r\u{9b}c\u{202e}d\te\nf\u{7f}");
        assert_eq!(got, "a ]0;title b [2J  c d\te\nf ");
        assert!(matches!(clean("plain · text ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_cell_stays_one_line() {
        assert_eq!(
            cell("claude\nopus\r\tx\u{2028}y\x1b"),
            "claude\\nopus\\r\\tx\\u{2028}y "
        );
        assert!(matches!(cell("claude-opus-4"), Cow::Borrowed(_)));
    }

    #[test]
    fn prefixes_are_the_shortest_unique_and_at_least_the_minimum() {
        let ids = [
            "native-4a1b2c",
            "native-4a1ffff",
            "abc",
            "sess-1234567890",
            "dup-dup-dup",
            "dup-dup-dup",
            "pre",
            "prefix-long-id",
        ];
        assert_eq!(
            unique_prefixes(&ids, 8),
            [
                "native-4a1b",
                "native-4a1f",
                "abc",
                "sess-123",
                "dup-dup-dup",
                "dup-dup-dup",
                "pre",
                "prefix-l"
            ]
        );
    }

    #[test]
    fn with_colour_only_our_own_sgr_sequences_pass() {
        let ours = format!(
            "{}ok{RESET} \x1b[2J \x1b[1;31m \x1b]0;t\x07",
            Style::Ok.sgr()
        );
        let got = terminal_safe(&ours, true);
        assert_eq!(got, "\x1b[32mok\x1b[0m  [2J  [1;31m  ]0;t ");
        assert_eq!(
            terminal_safe(&ours, false),
            " [32mok [0m  [2J  [1;31m  ]0;t "
        );
    }

    /// A writer that takes at most three bytes of at most two slices per
    /// call, and is interrupted every other call.
    struct Trickle {
        got: Vec<u8>,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 0 {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let mut n = 0;
            for b in bufs.iter().take(2) {
                let take = b.len().min(3 - n);
                self.got.extend_from_slice(&b[..take]);
                n += take;
                if n == 3 {
                    break;
                }
            }
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn vectored_writes_deliver_every_byte_in_order_across_short_writes() {
        let lines: Vec<Vec<u8>> = (0..50)
            .map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut slices: Vec<IoSlice<'_>> = lines.iter().map(|l| IoSlice::new(l)).collect();
        let mut w = Trickle {
            got: Vec::new(),
            calls: 0,
        };
        write_all_vectored(&mut w, &mut slices).unwrap();
        assert_eq!(w.got, lines.concat());
    }
}
