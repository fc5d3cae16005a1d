//! The tolerant parser proper: a recursive-descent state machine over bytes.
//!
//! It never fails on a structural problem it can explain (see [`Repair`]); it
//! returns `None` only when there is no value at all. Every loop consumes at
//! least one byte or returns, so it runs in time linear in the input, and the
//! nesting depth is capped at [`MAX_DEPTH`], so it cannot overflow the stack.

use std::borrow::Cow;

use serde_json::Number;

use super::boundary::{self, Follow, Scan};
use super::lex::{
    self, Ctx, Quote, is_ident_byte, is_ident_start, is_key_byte, literal, parse_number,
    smart_quote, spaces_end, starts_ws, unicode_space_len,
};
use super::node::{FIRST_ROOM, Members, Node, Text};

use crate::Repair;
use crate::candidates::member_follows;

/// Deepest nesting the parser follows; deeper input is cut there and reported
/// as [`Repair::DepthLimit`].
pub const MAX_DEPTH: usize = 256;

/// Parser state: the input, the cursor, the repairs applied so far.
pub struct Parser<'a> {
    /// The input as text, for strings taken from it whole (Note [Plain strings]).
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    depth: usize,
    /// Set once the depth cap is hit: everything unwinds, closing containers.
    stopped: bool,
    repairs: Vec<Repair>,
    /// The closers of the open containers, outermost first (`}` `]` `)`).
    closers: Vec<u8>,
    /// Number literals no JSON number type here holds exactly, in the
    /// order met; each stands in the value as [`INEXACT_MARK`] + its index
    /// until [`super::repair_json`] puts the nearest value back.
    inexact: Vec<String>,
    /// Set when the string just read ended at a quote followed by stray
    /// text: where the structure goes on (Note [String boundaries] in
    /// `boundary`).
    stray: Option<usize>,
    /// What the string being read learnt from its scans (Note [String
    /// boundaries] in `boundary`): quotes before `inner_until` are text;
    /// from the cursor to `undecided_until` nothing is decisive.
    inner_until: usize,
    undecided_until: usize,
}

/// The prefix of the placeholder string of an inexact number (see
/// `Parser::inexact`). A string the agent wrote matches it only by spelling
/// a NUL (`\u0000`) and this exact text; it would then be reported as an
/// inexact number: flagged, never passed as valid.
pub const INEXACT_MARK: &str = "\u{0}agentshape:inexact-number:";

/// Bytes of look-ahead spent on one ambiguous quote (Note [Missing quotes]).
const LOOKAHEAD: usize = 64;
/// Bytes looked ahead for the `)` of a wrapper call (Note [Wrapper calls]).
const WRAPPER_SPAN: usize = 256;
/// Bytes looked back from the end of the input for closers (Note [Missing quotes]).
const TAIL_LOOKBACK: usize = 1024;

/// What stopped a container: its own closer, or something else.
enum End {
    Closed,
    Open,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        Parser {
            text: src,
            src: src.as_bytes(),
            pos: 0,
            depth: 0,
            stopped: false,
            repairs: Vec::new(),
            closers: Vec::new(),
            inexact: Vec::new(),
            stray: None,
            inner_until: 0,
            undecided_until: 0,
        }
    }

    /// Parse one value starting at the first `{` or `[` (after whitespace and
    /// comments; text before it is skipped), or at a `(` opening the text.
    pub fn parse_top(mut self) -> Option<(Node<'a>, Vec<Repair>, Vec<String>)> {
        self.skip_ws();
        // A text that opens with `(` is a Python tuple (a fenced `(1, 2)`).
        if !matches!(self.peek(), Some(b'{' | b'[' | b'(')) {
            let rest = self.src.get(self.pos..)?;
            let off = memchr::memchr2(b'{', b'[', rest)?;
            self.pos += off;
        }
        let v = self.value(Ctx::Object)?;
        Some((v, self.repairs, self.inexact))
    }

    /// Note [Whole-reply scalars]: the whole text as one scalar: a quoted
    /// string (any quote style; cut, or with `+` joining more strings), a
    /// literal (JSON, Python, JS; or a literal cut short, `nul`, `fals`), or
    /// a number (cut, or with one trailing comma). `None` unless that one
    /// value spans the whole text: words are never read as a string here.
    pub fn parse_scalar(mut self) -> Option<(Node<'a>, Vec<Repair>, Vec<String>)> {
        self.skip_ws();
        let b = self.peek()?;
        let quoted = matches!(b, b'"' | b'\'' | b'`')
            || smart_quote(self.src.get(self.pos..).unwrap_or_default()).is_some();
        let v = if quoted {
            let Node::String(s) = self.value(Ctx::Object)? else {
                return None;
            };
            if self.quoted_speech(b, &s) {
                return None;
            }
            Node::String(s)
        } else if matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9') {
            let start = self.pos;
            let v = self.number_or_word();
            let lexeme = self.src.get(start..self.pos).unwrap_or_default();
            if !lexeme.iter().any(u8::is_ascii_digit) {
                return None;
            }
            // A token of number characters that is no number (`000789`,
            // `2e3.4`, `-05`) is an identifier: kept as text, as inside
            // containers (Note [Leading zeros]).
            if let Node::String(t) = &v {
                let token = t
                    .bytes()
                    .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'));
                if !token && !t.starts_with(INEXACT_MARK) {
                    return None;
                }
            }

            self.skip_ws();
            if self.peek() == Some(b',') {
                self.pos += 1;
                self.note(Repair::TrailingComma);
            }
            v
        } else {
            let start = self.pos;
            while self.peek().is_some_and(is_ident_byte) {
                self.pos += 1;
            }
            let w = self.src.get(start..self.pos).unwrap_or_default();
            match literal(w) {
                Some((v, r)) => {
                    if let Some(r) = r {
                        self.note(r);
                    }
                    v
                }
                None => return self.jsonp(start),
            }
        };
        self.skip_ws();
        if self.pos < self.src.len() {
            return None;
        }
        Some((v, self.repairs, self.inexact))
    }

    /// Note [Quoted speech]: prose that opens with a quotation is not a
    /// string value: a string that closed, went on as text and was then
    /// cut at the end (`"Premature optimization…" — Knuth.`), an even
    /// number of four or more `"` not joined by `+` (`"Done," she said,
    /// "is better."`: two quotations), or a `'` that never closes around
    /// words with spaces (`'Tis the season`: an apostrophe). A quote inside
    /// a value (`"The TV is 72""`, three quotes) stays a character. `open`
    /// is the opening byte, `s` the string read.
    fn quoted_speech(&self, open: u8, s: &str) -> bool {
        let cut = self.repairs.contains(&Repair::Truncated);
        if cut && self.repairs.contains(&Repair::UnescapedQuote) {
            return true;
        }
        if open == b'\'' && cut && s.contains(' ') {
            return true;
        }
        if open != b'"' || self.repairs.contains(&Repair::StringConcatenation) {
            return false;
        }
        let quotes = self
            .src
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c == b'"' && (i == 0 || self.src.get(i - 1) != Some(&b'\\')))
            .count();
        quotes >= 4 && quotes % 2 == 0
    }

    /// Note [JSONP]: `callback_123(null);` is a value wrapped in a JS call:
    /// the value is what the parentheses hold. The cursor is after the
    /// callee's name at `start`; the call must run to the end of the text.
    fn jsonp(mut self, start: usize) -> Option<(Node<'a>, Vec<Repair>, Vec<String>)> {
        if self.pos == start {
            return None;
        }
        self.skip_ws();
        if self.peek() != Some(b'(') {
            return None;
        }
        let rest = std::str::from_utf8(self.src.get(self.pos + 1..)?).ok()?;
        let inner = rest.trim_end().trim_end_matches(';').trim_end();
        let inner = inner.strip_suffix(')').unwrap_or(inner);
        let (v, mut repairs, inexact) = Parser::new(inner).parse_scalar()?;
        repairs.insert(0, Repair::WrapperCall);
        Some((v, repairs, inexact))
    }

    /// Note [String concatenation]: `"a" + "b"` is one string written in
    /// pieces (JS); the pieces are joined. The cursor is after the string
    /// `s`; without a `+` and another quoted string it is left there.
    ///
    /// Note [No plus]: after nearly every string comes a `,`, a closer or
    /// a line break and an indentation, and the look for a `+` walked
    /// that whitespace byte by byte (it is skipped again right after) in
    /// a call of its own. Only a string followed by whitespace or a `+`
    /// can be joined, so any other next byte returns here, inlined; the
    /// rest is [`Parser::joined`]. Measured with Note [Inlined helpers].
    #[inline]
    fn concatenated(&mut self, s: Text<'a>, ctx: Ctx) -> Text<'a> {
        match self.peek() {
            Some(b) if b == b'+' || b.is_ascii_whitespace() => self.joined(s, ctx),
            _ => s,
        }
    }

    /// [`Parser::concatenated`] past its first test.
    #[inline(never)]
    fn joined(&mut self, s: Text<'a>, ctx: Ctx) -> Text<'a> {
        let mut s = s;
        loop {
            let save = self.pos;
            let mut i = self.skip_plain_ws(self.pos, 64);
            if self.src.get(i) != Some(&b'+') {
                return s;
            }
            i = self.skip_plain_ws(i + 1, 64);
            let Some(&q @ (b'"' | b'\'')) = self.src.get(i) else {
                self.pos = save;
                return s;
            };
            self.pos = i;
            self.note(Repair::StringConcatenation);
            let next = self.string(Quote::Ascii(q), ctx);
            let mut joined = s.into_string();
            joined.push_str(&next);
            s = Text::from(joined);
        }
    }

    fn note(&mut self, r: Repair) {
        if !self.repairs.contains(&r) {
            self.repairs.push(r);
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    /// Skip whitespace and comments (`//`, `/* */`, `#`), noting comments.
    ///
    /// Note [Whitespace runs]: the parser asks for whitespace before and
    /// after every token, and most of the time there is none, or a line
    /// break and an indentation. The first byte is tested here, inlined at
    /// every caller; only a byte that can start whitespace or a comment
    /// calls the loop, which skips spaces and line breaks a word at a time
    /// ([`spaces_end`]). Measured as in Note [Plain strings]: the
    /// whitespace skipping with its callers' share 15.7 → 13.0 million
    /// instructions (−0.7% of the program; the inlined first test adds
    /// 3 million to the callers).
    ///
    /// Note [One space]: the commonest whitespace of all is the one space
    /// after a member's `:` (`"id": 1`), and it went through the loop's
    /// call, its word test and a second look at the byte after. A space
    /// followed by a byte that can start neither whitespace nor a comment
    /// is stepped over here. Other runs of spaces and line breaks (a line
    /// break and an indentation) go to [`Parser::skip_spaces`], a small
    /// function: the loop, which inlines the comment search, saved six
    /// registers and set up a 352-byte frame on every call. Only what
    /// follows a run, or a run that starts otherwise, reaches the loop
    /// (`skip_ws_agrees_with_the_loop`). Measured (callgrind, release,
    /// `extract --jsonl --json`, output byte-identical) together with
    /// Notes [Scalars read in place], [Small inserts] (in `node`) and
    /// [Scalars written in place] (in `node`): the 10,994 repaired replies
    /// of the bench corpus 731.4 → 699.4 million instructions
    /// (`repair_node` with what it calls 306.8 → 278.2 million), the
    /// whole 20,000-reply corpus 1,146.7 → 1,114.5 million (−2.8%). The
    /// space-and-comment loop itself went from 47.7 million (630,000
    /// calls) to 12.9 million in `skip_spaces`.
    #[inline]
    fn skip_ws(&mut self) {
        match self.peek() {
            Some(b' ') if !self.peek_at(1).is_some_and(starts_ws) => self.pos += 1,
            Some(b' ' | b'\n') => self.skip_spaces(),
            Some(b) if starts_ws(b) => self.skip_ws_and_comments(),
            _ => {}
        }
    }

    /// [`Parser::skip_ws`] on a space or a line break: the run, then the
    /// loop if a comment or other whitespace follows.
    #[inline(never)]
    fn skip_spaces(&mut self) {
        self.pos = spaces_end(self.src, self.pos);
        if self.peek().is_some_and(starts_ws) {
            self.skip_ws_and_comments();
        }
    }

    /// [`Parser::skip_ws`] past its first test.
    #[inline(never)]
    fn skip_ws_and_comments(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\n' => self.pos = spaces_end(self.src, self.pos),
                b'\t' | b'\r' => self.pos += 1,
                b'/' if self.peek_at(1) == Some(b'/') => {
                    self.note(Repair::Comment);
                    self.skip_line();
                }
                b'#' => {
                    self.note(Repair::Comment);
                    self.skip_line();
                }
                b'/' if self.peek_at(1) == Some(b'*') => {
                    self.note(Repair::Comment);
                    let rest = self.src.get(self.pos + 2..).unwrap_or_default();
                    self.pos = match memchr::memmem::find(rest, b"*/") {
                        Some(i) => self.pos + 2 + i + 2,
                        None => self.src.len(),
                    };
                }
                0xC2..=0xEF => {
                    match unicode_space_len(self.src.get(self.pos..).unwrap_or_default()) {
                        Some(n) => {
                            self.note(Repair::UnicodeWhitespace);
                            self.pos += n;
                        }
                        None => break,
                    }
                }
                _ => break,
            }
        }
    }

    /// Skip spaces, tabs and line breaks, at most `max` bytes; the index reached.
    fn skip_plain_ws(&self, mut i: usize, max: usize) -> usize {
        let stop = i.saturating_add(max);
        while i < stop && self.src.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    }

    /// Push a container's closer, parse it, pop.
    fn container(&mut self, closer: u8) -> Node<'a> {
        self.pos += 1;
        self.depth += 1;
        self.closers.push(closer);
        let v = match closer {
            b'}' => self.object(),
            _ => self.array(closer),
        };
        self.closers.pop();
        self.depth -= 1;
        v
    }

    fn skip_line(&mut self) {
        let rest = self.src.get(self.pos..).unwrap_or_default();
        self.pos = match memchr::memchr(b'\n', rest) {
            Some(i) => self.pos + i + 1,
            None => self.src.len(),
        };
    }

    /// One value at the cursor; `None` at end of input or on a byte that
    /// cannot start a value (the cursor is then unchanged). `ctx` is where it sits.
    fn value(&mut self, ctx: Ctx) -> Option<Node<'a>> {
        self.skip_ws();
        let b = self.peek()?;
        match b {
            b'{' | b'[' | b'(' if self.depth >= MAX_DEPTH || self.stopped => {
                self.stopped = true;
                self.note(Repair::DepthLimit);
                None
            }
            b'{' => Some(self.container(b'}')),
            b'[' => Some(self.container(b']')),
            // Note [Tuples]: `(1, 2)` is a Python tuple: an array; `()` is
            // empty; `(x)` without a comma is just `x` parenthesized.
            b'(' => {
                self.note(Repair::PythonTuple);
                Some(self.container(b')'))
            }
            b'"' | b'\'' => {
                let s = self.string(Quote::Ascii(b), ctx);
                Some(Node::String(self.concatenated(s, ctx)))
            }
            b'`' if !self.at_fence() => Some(Node::String(self.string(Quote::Backtick, ctx))),
            // Note [Regex values]: `/re/` is a JS regex literal, kept as text.
            b'/' if !matches!(self.peek_at(1), Some(b'/' | b'*')) => Some(self.unquoted_string()),
            b'-' | b'+' | b'.' | b'0'..=b'9' => Some(self.number_or_word()),
            _ if is_ident_start(b) => Some(self.word()),
            _ => {
                let q = smart_quote(self.src.get(self.pos..).unwrap_or_default())?;
                Some(Node::String(self.string(q, ctx)))
            }
        }
    }

    /// [`Parser::value`] for a member value or an element, the cursor on
    /// its first byte (whitespace skipped).
    ///
    /// Note [Scalars read in place]: a member value or an element is
    /// mostly a string, a number or a literal, and each went through
    /// [`Parser::value`]: a call with a 504-byte frame and six registers
    /// saved, a second whitespace test and its dispatch, and the value
    /// returned through memory. Those three are read here, inlined in the
    /// object and array loops, by the same calls `value` makes for them;
    /// anything else (containers, depth checks, backticks, regexes, smart
    /// quotes) still goes to `value`. Whitespace was just skipped, and
    /// skipping it again changes nothing, so the answer is `value`'s
    /// (`items_agree_with_value`). Measured with Note [One space].
    // Inlined on purpose: Note [Inlined helpers].
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn item(&mut self, ctx: Ctx) -> Option<Node<'a>> {
        match self.peek() {
            Some(b'"') => {
                let s = self.double_quoted(ctx);
                Some(Node::String(self.concatenated(s, ctx)))
            }
            Some(b'\'') => {
                let s = self.string(Quote::Ascii(b'\''), ctx);
                Some(Node::String(self.concatenated(s, ctx)))
            }
            Some(b'-' | b'0'..=b'9') => Some(self.number_or_word()),
            Some(b) if is_ident_start(b) => Some(self.word()),
            _ => self.value(ctx),
        }
    }

    /// An object, or a Python set (Note [Python sets]).
    ///
    /// Note [Python sets]: `{'a', 'b'}` is a Python set literal: quoted
    /// items with no values. An object that closes with `}` having read no
    /// member, only two or more quoted keys each followed by `,` or `}`, is
    /// that set, read as an array of its items ([`Repair::PythonSet`]); else
    /// those keys are dangling and dropped.
    fn object(&mut self) -> Node<'a> {
        let mut map = Members::default();
        let mut after_comma = false;
        let mut set_items: Vec<Node<'a>> = Vec::new();
        // Where the member read last sits (Note [Continued arrays]).
        let mut last: Option<usize> = None;
        let end = loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                break End::Open;
            };
            if self.stopped {
                break End::Open;
            }
            match b {
                b'}' if self.closers.len() == 1 && member_follows(self.src, self.pos + 1) => {
                    // See Note [Extra closers].
                    self.note(Repair::ExtraCloser);
                    self.pos += 1;
                    continue;
                }
                b'}' => {
                    self.pos += 1;
                    if after_comma {
                        self.note(Repair::TrailingComma);
                    }
                    break End::Closed;
                }
                // An elision where a member should be (`{ ... }`).
                b'.' if self.src.get(self.pos..self.pos + 3) == Some(b"...") => {
                    self.pos += 3;
                    self.note(Repair::EllipsisDropped);
                    continue;
                }
                // Note [Doubled braces]: `{{"a": 1}}` (a template's escaped
                // braces): an object opening right where the first key
                // should start is this object's content.
                b'{' if map.is_empty() && set_items.is_empty() && last.is_none() => {
                    if let Some(Node::Object(inner)) = self.value(Ctx::Object) {
                        self.note(Repair::DoubledBrace);
                        map.extend(inner);
                        continue;
                    }
                    break End::Open;
                }
                b',' => {
                    self.pos += 1;
                    if after_comma || (map.is_empty() && set_items.is_empty()) {
                        self.note(Repair::TrailingComma);
                    }
                    after_comma = true;
                    continue;
                }
                b']' | b')' => {
                    // A mismatched closer: a typo for `}` when a member
                    // follows, else it ends this object and the parent sees it.
                    self.note(Repair::MismatchedBracket);
                    if self.typo_closer() {
                        self.pos += 1;
                    }
                    break End::Closed;
                }
                _ => {}
            }
            if !map.is_empty() && !after_comma {
                self.note(Repair::MissingComma);
            }
            after_comma = false;
            // Key.
            // Every typographic quote starts with 0xE2.
            let smart = if b == 0xE2 {
                smart_quote(self.src.get(self.pos..).unwrap_or_default())
            } else {
                None
            };
            let quoted = matches!(b, b'"' | b'\'' | b'`') || smart.is_some();
            let key = match b {
                b'"' => self.double_quoted(Ctx::Key),
                b'\'' => self.string(Quote::Ascii(b), Ctx::Key),
                b'`' if !self.at_fence() => self.string(Quote::Backtick, Ctx::Key),
                _ if smart.is_some() => self.string(smart.unwrap_or(Quote::SmartDouble), Ctx::Key),
                _ if is_key_byte(b) => {
                    let k = self.unquoted_key();
                    if let Some(q) = self.quoted_key_follows() {
                        // See Note [Stray words].
                        self.note(Repair::StrayWord);
                        self.pos = q;
                        let quote = self.src.get(q).copied().unwrap_or(b'"');
                        self.string(Quote::Ascii(quote), Ctx::Key)
                    } else {
                        self.note(Repair::UnquotedKey);
                        // `b":` — a key missing only its opening quote.
                        if self.peek() == Some(b'"') && self.peek_at(1) == Some(b':') {
                            self.note(Repair::MissingQuote);
                            self.pos += 1;
                        }
                        k
                    }
                }
                b'[' if last
                    .and_then(|at| map.value_mut(at))
                    .is_some_and(|v| v.is_array()) =>
                {
                    let Some(Node::Array(next)) = self.value(Ctx::Object) else {
                        break End::Open;
                    };
                    self.note(Repair::ArrayContinued);
                    if let Some(Node::Array(prev)) = last.and_then(|at| map.value_mut(at)) {
                        continue_array(prev, next);
                    }
                    continue;
                }
                _ => {
                    // Nothing that can start a key: the object ends here.
                    self.note(Repair::UnexpectedChar);
                    break End::Open;
                }
            };
            // Note [Colon inside the key]: `{"key:"value"}` put the key's
            // closing quote after its colon; a quoted key ending in `:` and
            // followed directly by a bare value start is that key and colon.
            let mut key = key;
            let colon_inside = quoted
                && key.len() > 1
                && key.ends_with(':')
                && self.peek().is_some_and(|c| {
                    !c.is_ascii_whitespace()
                        && !matches!(c, b',' | b'}' | b']' | b':' | b'=' | b'"' | b'\'')
                });
            if colon_inside {
                key = Text::from(without_last_byte(key.into_cow()));
                self.note(Repair::MissingQuote);
            }
            self.skip_ws();
            match self.peek() {
                _ if colon_inside => {}
                None => {
                    self.note(Repair::DanglingKeyDropped);
                    break End::Open;
                }
                Some(b':' | b'=') => {
                    self.pos += 1;
                }
                Some(b',' | b'}') if quoted && map.is_empty() => {
                    set_items.push(Node::String(key));
                    continue;
                }
                Some(b',' | b'}' | b']') => {
                    self.note(Repair::DanglingKeyDropped);
                    continue;
                }
                Some(_) => self.note(Repair::MissingColon),
            }
            self.skip_ws();
            match self.peek() {
                None => {
                    self.note(Repair::DanglingKeyDropped);
                    break End::Open;
                }
                Some(b',' | b'}' | b']') => {
                    self.note(Repair::DanglingKeyDropped);
                    continue;
                }
                Some(_) => {}
            }
            self.stray = None;
            if let Some(v) = self.item(Ctx::Object) {
                self.skip_stray_quote();
                // Note [String boundaries] in `boundary`: words after a
                // string's closing quote, before the structure goes on,
                // belong to no member.
                if let Some(at) = self.stray.take() {
                    if at > self.pos {
                        self.note(Repair::StrayWord);
                        self.pos = at;
                    }
                }
                // A repeated key keeps its first place (Note [Repaired nodes]).
                last = Some(map.insert(key, v));
            } else {
                if !self.stopped {
                    self.note(Repair::DanglingKeyDropped);
                    self.note(Repair::UnexpectedChar);
                }
                break End::Open;
            }
        };
        let closed = matches!(end, End::Closed);
        if !closed {
            if after_comma {
                self.note(Repair::TrailingComma);
            }
            self.note(Repair::Truncated);
        }
        if closed && map.is_empty() && set_items.len() >= 2 {
            self.note(Repair::PythonSet);
            return Node::Array(set_items);
        }
        if !set_items.is_empty() {
            self.note(Repair::DanglingKeyDropped);
        }
        Node::Object(map)
    }

    /// An array, or a tuple when `closer` is `)` (Note [Tuples]).
    fn array(&mut self, closer: u8) -> Node<'a> {
        let mut items = Vec::new();
        let mut after_comma = false;
        let mut commas = 0usize;
        let ctx = if closer == b')' {
            Ctx::Tuple
        } else {
            Ctx::Array
        };
        let end = loop {
            self.skip_ws();
            let Some(b) = self.peek() else {
                break End::Open;
            };
            if self.stopped {
                break End::Open;
            }
            match b {
                _ if b == closer => {
                    self.pos += 1;
                    if after_comma && closer == b']' {
                        self.note(Repair::TrailingComma);
                    }
                    break End::Closed;
                }
                b',' => {
                    self.pos += 1;
                    commas += 1;
                    if after_comma || items.is_empty() {
                        self.note(Repair::TrailingComma);
                    }
                    after_comma = true;
                    continue;
                }
                b'}' | b']' | b')' => {
                    // A mismatched closer: a typo for ours when an element
                    // follows, else it ends this array and the parent sees it.
                    self.note(Repair::MismatchedBracket);
                    if self.typo_closer() {
                        self.pos += 1;
                    }
                    break End::Closed;
                }
                // `[1, 2, ...]`: an elision, not an element.
                b'.' if self.src.get(self.pos..self.pos + 3) == Some(b"...") => {
                    self.pos += 3;
                    self.note(Repair::EllipsisDropped);
                    continue;
                }
                _ => {}
            }
            let had_comma = after_comma;
            let was_empty = items.is_empty();
            if let Some(v) = self.item(ctx) {
                self.skip_stray_quote();
                if !was_empty && !had_comma {
                    self.note(Repair::MissingComma);
                }
                if items.capacity() == 0 {
                    // See Note [First push]: room for a typical list at once.
                    items.reserve_exact(FIRST_ROOM);
                }
                items.push(v);
                after_comma = false;
            } else {
                if !self.stopped {
                    self.note(Repair::UnexpectedChar);
                }
                break End::Open;
            }
        };
        if matches!(end, End::Open) {
            if after_comma {
                self.note(Repair::TrailingComma);
            }
            self.note(Repair::Truncated);
        }
        if closer == b')' && commas == 0 && items.len() == 1 {
            return items.pop().unwrap_or(Node::Null);
        }
        Node::Array(items)
    }

    /// On a mismatched closer: is it a typo for ours? When a `,` follows, the
    /// next token says which container it belongs in (a `key:` wants an
    /// object, anything else an array): a typo when our parent is of that
    /// kind (`{"a": [1, 2}, "b": 3}`), else ours ends and the parent sees the
    /// closer (`[{"a": 1], "b": 2}` closes the array too).
    fn typo_closer(&self) -> bool {
        let Some(&parent) = self
            .closers
            .len()
            .checked_sub(2)
            .and_then(|i| self.closers.get(i))
        else {
            return false;
        };
        let i = self.skip_plain_ws(self.pos + 1, LOOKAHEAD);
        if self.src.get(i) != Some(&b',') {
            return false;
        }
        let wants_object = self.key_ahead(self.skip_plain_ws(i + 1, LOOKAHEAD));
        wants_object == (parent == b'}')
    }

    /// Does a `key:` (quoted or bare, within [`LOOKAHEAD`] bytes) start at `i`?
    fn key_ahead(&self, i: usize) -> bool {
        let end = (i + LOOKAHEAD).min(self.src.len());
        let ahead = self.src.get(i..end).unwrap_or_default();
        let after = match ahead.first() {
            Some(&q @ (b'"' | b'\'')) => ahead
                .iter()
                .skip(1)
                .position(|&b| b == q || b == b'\n')
                .filter(|&j| ahead.get(j + 1) == Some(&q))
                .map(|j| i + j + 2),
            Some(&b) if is_ident_start(b) => {
                ahead.iter().position(|&b| !is_key_byte(b)).map(|j| i + j)
            }
            _ => None,
        };
        after.is_some_and(|k| self.src.get(self.skip_plain_ws(k, 16)) == Some(&b':'))
    }

    /// Note [Stray words]: a bare word where a key starts, then spaces and a
    /// quoted key with its `:` (`{"a": 1, COMMENT "b": 2}`), is a note or
    /// label left in the text: the word is dropped ([`Repair::StrayWord`])
    /// and the quoted key read. The quoted key must close within
    /// [`LOOKAHEAD`] bytes on the same line. The cursor is after the word;
    /// returns where the quoted key starts.
    fn quoted_key_follows(&self) -> Option<usize> {
        let mut i = self.pos;
        while matches!(self.src.get(i), Some(b' ' | b'\t')) && i - self.pos < 16 {
            i += 1;
        }
        let q = *self.src.get(i)?;
        if i == self.pos || !matches!(q, b'"' | b'\'') {
            return None;
        }
        let body = self
            .src
            .get(i + 1..(i + 1 + LOOKAHEAD).min(self.src.len()))?;
        let j = body
            .iter()
            .position(|&b| b == q || b == b'\\' || b == b'\n')?;
        if body.get(j) != Some(&q) || j == 0 {
            return None;
        }
        let k = self.skip_plain_ws(i + 1 + j + 1, 16);
        (self.src.get(k) == Some(&b':')).then_some(i)
    }

    /// Note [Lost opening quote]: unquoted text that runs, within
    /// [`LOOKAHEAD`] bytes on its line, over a comma to a lone `"` that then
    /// ends the value (`{"a": ipsum, sic, datum.",}`) is a string that lost
    /// its opening quote: the commas are its text ([`Repair::MissingQuote`]).
    /// No other quote, colon or bracket may come before that `"`, so a
    /// following member (`"b": 1`) never matches.
    fn lost_opening_quote(&mut self) -> Option<Node<'a>> {
        let end = (self.pos + LOOKAHEAD).min(self.src.len());
        let ahead = self.src.get(self.pos..end)?;
        let q = ahead.iter().position(|&b| {
            matches!(
                b,
                b'"' | b'\'' | b':' | b'{' | b'}' | b'[' | b']' | b'\n' | b'\r' | b'\\'
            )
        })?;
        let text = ahead.get(..q)?;
        if ahead.get(q) != Some(&b'"') || !text.contains(&b',') {
            return None;
        }
        let mut i = self.pos + q + 1;
        while matches!(self.src.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if !matches!(
            self.src.get(i),
            None | Some(b',' | b'}' | b']' | b'\n' | b'\r')
        ) {
            return None;
        }
        let s = trimmed(self.slice(self.pos, self.pos + q));
        self.pos += q + 1;
        self.note(Repair::MissingQuote);
        Some(Node::String(Text::from(s)))
    }

    /// Note [Backtick quotes]: a single `` ` `` where a key or value starts
    /// quotes a string (JS template literals, Markdown code spans), closed by
    /// `` ` `` or by the acute accent `´` some keyboards produce
    /// ([`Repair::BacktickQuotes`]); a fence (`` ``` ``) is not a quote.
    fn at_fence(&self) -> bool {
        self.src.get(self.pos..self.pos + 3) == Some(b"```")
    }

    /// After a value: a stray `"` that closes nothing (`abc"`, `12345"`)
    /// before `,` `}` `]` or the line end is dropped.
    #[inline]
    fn skip_stray_quote(&mut self) {
        if self.peek() == Some(b'"') {
            self.stray_quote();
        }
    }

    /// [`Parser::skip_stray_quote`] on a `"`.
    #[inline(never)]
    fn stray_quote(&mut self) {
        let mut i = self.pos + 1;
        while matches!(self.src.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if matches!(
            self.src.get(i),
            None | Some(b',' | b'}' | b']' | b'\n' | b'\r')
        ) {
            self.note(Repair::MissingQuote);
            self.pos += 1;
        }
    }

    /// A quoted string; the cursor is on the opening quote `q`.
    ///
    /// Note [Inner quotes]: a closing quote followed (after spaces and tabs)
    /// by something that can follow a string (`,` `}` `]` `:`, a line end,
    /// another quote, a comment, a fence, the end of input; in an array also
    /// a digit, in a tuple `)`) ends the string; any other quote of the same
    /// kind is taken as a literal character ([`Repair::UnescapedQuote`]),
    /// unless Note [Missing quotes] applies. Keys end at the first matching quote.
    ///
    /// Note [Missing quotes]: two shapes say a value string lost its closing
    /// quote, and both are checked with bounded look-ahead, so the whole parse
    /// stays linear:
    /// - a literal-looking quote right after `,` (spaces and line breaks
    ///   between) that opens what looks like the next member (`"key":`, within
    ///   [`LOOKAHEAD`] bytes) or the next element (`"x",` `"x"]`): the string
    ///   ended before that comma (`"New York, "gender": "male"`);
    /// - a string running to the end of the input whose last bytes (at most
    ///   [`TAIL_LOOKBACK`]) are only whitespace and closers that close the
    ///   open containers innermost first (`{"a": "b}`, `["abc  ]`): the string
    ///   ended before them, unless the kept text opens a bracket they would
    ///   close (`"Restarted {svc}` stays whole). A cut string without such a
    ///   tail keeps everything (Note [Truncation]).
    ///
    /// Each is reported as [`Repair::MissingQuote`].
    fn string(&mut self, q: Quote, ctx: Ctx) -> Text<'a> {
        let (open_len, first) = match q {
            Quote::Ascii(b'\'') => {
                self.note(Repair::SingleQuotes);
                (1, b'\'')
            }
            Quote::Ascii(b) => (1, b),
            Quote::SmartDouble | Quote::SmartSingle => {
                self.note(Repair::SmartQuotes);
                (3, 0xE2)
            }
            Quote::Backtick => {
                self.note(Repair::BacktickQuotes);
                (1, b'`')
            }
        };
        // The lead byte of the other closer `´` (U+00B4).
        let alt = if q == Quote::Backtick { 0xC2 } else { first };
        self.pos += open_len;
        let start = self.pos;
        self.inner_until = 0;
        self.undecided_until = 0;
        if let Quote::Ascii(quote) = q {
            if let Some(s) = self.plain_string(quote, ctx) {
                return s;
            }
        }
        Text::from(self.general_string(q, ctx, first, alt, start))
    }

    /// Note [Plain strings]: most strings in a reply are one plain run
    /// closed by their quote: keys and short values with no escape, no
    /// raw control character and no inner quote. Such a string is the
    /// input's text between the quotes, taken as a `&str` slice (cut at
    /// ASCII quotes, so only its two ends are checked) and copied once,
    /// where the general loop ([`Parser::general_string`]) copied it word
    /// by word into bytes and checked them as UTF-8 again at the end (the
    /// check alone was ~85 instructions a string). `None`, with the cursor
    /// unchanged, when the string is anything else; the general loop then
    /// reads it (`plain_strings_agree_with_the_general_loop`). Measured
    /// (callgrind, release, the first 4,000 bench replies, output
    /// byte-identical): `Parser::string` with what it calls 35.4 → 23.1
    /// million instructions, the program 377.1 → 364.6 million (−3.3%).
    // Inlined on purpose: Note [Plain strings in place].
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn plain_string(&mut self, quote: u8, ctx: Ctx) -> Option<Text<'a>> {
        let start = self.pos;
        let end = crate::plain_run_end(self.src, start, quote, quote);
        if self.src.get(end) != Some(&quote) {
            return None;
        }
        self.pos = end + 1;
        // The general loop's tests at a closing quote, for a run without
        // raw line breaks (so there is none to trim).
        let ends = if ctx == Ctx::Key {
            !(quote == b'"' && self.key_continues())
        } else {
            self.ends_here(ctx, quote)
        };
        match self.text.get(start..end) {
            // The run holds no quote of its kind, backslash or control
            // character (Note [Plain text] in `node`).
            // A byte loop: `str::contains` is a call, and these runs are short.
            Some(s) if ends && (quote == b'"' || !s.bytes().any(|c| c == b'"')) => {
                Some(Text::plain(s))
            }
            Some(s) if ends => Some(Text::from(Cow::Borrowed(s))),
            _ => {
                self.pos = start;
                None
            }
        }
    }

    /// [`Parser::string`] for a `"` string, the cursor on the quote.
    ///
    /// Note [Plain strings in place]: keys and string values in `"` are
    /// the commonest tokens of a reply and nearly all plain (Note [Plain
    /// strings]), yet each was a call to [`Parser::string`], whose general
    /// loop gave it a 216-byte frame and six saved registers. The plain
    /// case is read here, inlined where keys and items are read; any other
    /// string goes back to the quote and through `string`, which reads it
    /// from the start as before (`double_quoted_agrees_with_string`).
    /// Measured with Note [Inlined helpers] in `node`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn double_quoted(&mut self, ctx: Ctx) -> Text<'a> {
        self.pos += 1;
        self.inner_until = 0;
        self.undecided_until = 0;
        if let Some(s) = self.plain_string(b'"', ctx) {
            return s;
        }
        // `plain_string` left the cursor after the quote.
        self.pos -= 1;
        self.string(Quote::Ascii(b'"'), ctx)
    }

    /// [`Parser::string`] past its opening quote at `start`, for any string.
    fn general_string(&mut self, q: Quote, ctx: Ctx, first: u8, alt: u8, start: usize) -> String {
        // Sized for a typical key or short value: growing from empty took
        // three or four reallocations per string.
        let mut out: Vec<u8> = Vec::with_capacity(32);
        let mut first_raw: Option<usize> = None;
        loop {
            // Note [Word copies] in `json`.
            self.pos = crate::copy_plain(&mut out, self.src, self.pos, first, alt);
            if self.pos >= self.src.len() {
                self.pos = self.src.len();
                if ctx == Ctx::Key || !self.cut_before_tail(start, ctx, &mut out) {
                    self.note(Repair::Truncated);
                }
                break;
            }
            let Some(b) = self.peek() else { break };
            if b == b'\\' {
                self.escape(&mut out);
            } else if b == first || b == alt {
                let close = self.closing_len(q);
                if close == 0 {
                    // `0xE2` starting some other character.
                    out.push(b);
                    self.pos += 1;
                    continue;
                }
                let quote_at = self.pos;
                self.pos += close;
                if ctx == Ctx::Key && q == Quote::Ascii(b'"') && self.key_continues() {
                    self.note(Repair::UnescapedQuote);
                    out.push(b'"');
                    continue;
                }
                if ctx == Ctx::Key {
                    trim_raw_line_break(
                        self.src.get(start..quote_at).unwrap_or_default(),
                        &mut out,
                    );
                    break;
                }
                let scanned = match q {
                    Quote::Ascii(b) => b,
                    _ => 0,
                };
                if self.ends_string(ctx, scanned) {
                    // Note [Line breaks ending a key] holds for values too.
                    trim_raw_line_break(
                        self.src.get(start..quote_at).unwrap_or_default(),
                        &mut out,
                    );
                    break;
                }
                if self.cut_before_comma(start, quote_at, q, ctx, &mut out)
                    || (matches!(q, Quote::Ascii(_))
                        && self.cut_before_key(quote_at, ctx, &mut out))
                {
                    break;
                }
                self.note(Repair::UnescapedQuote);
                out.extend_from_slice(self.src.get(quote_at..self.pos).unwrap_or_default());
            } else {
                // A raw control character (newline, tab, ...); noted below
                // unless a missing-quote cut drops it.
                first_raw.get_or_insert(self.pos);
                out.push(b);
                self.pos += 1;
            }
        }
        if first_raw.is_some_and(|r| r < self.pos) {
            self.note(Repair::RawControlCharInString);
        }
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Note [Quotes inside keys]: a key's `"` glued to a letter on its right
    /// (`{"k"e"y": 1}`) is a literal quote when the line goes on, within
    /// [`LOOKAHEAD`] bytes and without `,` `{` `}` or a space, to a `"` right
    /// before the `:`; the key runs to that quote. The cursor is just past
    /// the candidate closing quote.
    fn key_continues(&self) -> bool {
        if !self.peek().is_some_and(is_ident_byte) {
            return false;
        }
        let end = (self.pos + LOOKAHEAD).min(self.src.len());
        let ahead = self.src.get(self.pos..end).unwrap_or_default();
        let Some(c) = ahead
            .iter()
            .position(|&b| matches!(b, b':' | b',' | b'{' | b'}' | b'\n' | b' ' | b'\\'))
        else {
            return false;
        };
        ahead.get(c) == Some(&b':') && c > 1 && ahead.get(c - 1) == Some(&b'"')
    }

    /// The length of a closing quote of kind `q` at the cursor, 0 if none.
    fn closing_len(&self, q: Quote) -> usize {
        match q {
            Quote::Ascii(b) => usize::from(self.peek() == Some(b)),
            Quote::Backtick => match self.src.get(self.pos..self.pos + 2) {
                Some([b'`', _] | [b'`']) => 1,
                Some([0xC2, 0xB4]) => 2,
                _ => 0,
            },
            Quote::SmartDouble | Quote::SmartSingle => {
                match smart_quote(self.src.get(self.pos..).unwrap_or_default()) {
                    Some(k) if k == q => 3,
                    _ => 0,
                }
            }
        }
    }

    /// [`Parser::ends_string`] with its commonest answer inlined: a `,`,
    /// a closer, a line break (or the end) right after the quote ends the
    /// string, as the loop's first step says (Note [Plain strings in place]).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn ends_here(&mut self, ctx: Ctx, quote: u8) -> bool {
        match self.peek() {
            None | Some(b':' | b'\n' | b'\r') => true,
            // The same quote again is doubtful (Note [String boundaries]).
            Some(b @ (b'"' | b'\'')) if b != quote => true,
            // A comma then a quoted key: the commonest ending of all.
            Some(b',')
                if ctx != Ctx::Object
                    || matches!(self.peek_at(1), Some(b'"'))
                    || (self.peek_at(1) == Some(b' ') && self.peek_at(2) == Some(b'"')) =>
            {
                true
            }
            Some(b @ (b'}' | b']')) if self.closers.last().is_none_or(|&c| c == b) => true,
            Some(b @ (b'}' | b']')) if self.closers.contains(&b) => true,
            _ => self.ends_string(ctx, quote),
        }
    }

    /// After a candidate closing quote of kind `quote` (an ASCII byte; 0
    /// for the other kinds, which are not scanned): does what follows end
    /// the string? Note [String boundaries] in `boundary`; a string ended
    /// before stray text sets [`Parser::stray`].
    #[inline(never)]
    fn ends_string(&mut self, ctx: Ctx, quote: u8) -> bool {
        match boundary::follow(self.src, self.pos, ctx, &self.closers) {
            Follow::End => true,
            Follow::Doubtful(default) if quote == 0 => default,
            Follow::Doubtful(_) if self.pos <= self.inner_until => false,
            Follow::Doubtful(default) => {
                let from = self.pos.max(self.undecided_until);
                match boundary::scan(self.src, from, quote, ctx, &self.closers) {
                    Scan::Stray(at) => {
                        self.stray = Some(at);
                        true
                    }
                    Scan::Inner(at) => {
                        self.inner_until = at;
                        false
                    }
                    Scan::Undecided(at) => {
                        self.undecided_until = at;
                        default
                    }
                }
            }
        }
    }

    /// Note [Lost closing quote before a key] in `boundary`: the doubtful
    /// `"` at `quote_at` opens the next member's key; on `true` the string
    /// ended before it (trailing whitespace dropped) and the cursor is on it.
    fn cut_before_key(&mut self, quote_at: usize, ctx: Ctx, out: &mut Vec<u8>) -> bool {
        if ctx != Ctx::Object
            || self.closers.last() != Some(&b'}')
            || !boundary::key_opens_at(self.src, quote_at)
        {
            return false;
        }
        trim_end_ws(out);
        self.pos = quote_at;
        self.note(Repair::MissingQuote);
        true
    }

    /// Note [Missing quotes], first shape: the quote at `quote_at` follows a
    /// comma and opens the next member or element, so the string ended before
    /// the comma. On `true`, `out` is cut there and the cursor is on the comma.
    fn cut_before_comma(
        &mut self,
        start: usize,
        quote_at: usize,
        q: Quote,
        ctx: Ctx,
        out: &mut Vec<u8>,
    ) -> bool {
        let Quote::Ascii(qb) = q else { return false };
        // Note [Lost closing quote before a bare key] in `boundary`.
        if ctx == Ctx::Object && self.closers.last() == Some(&b'}') {
            if let Some(comma) = boundary::bare_key_before(self.src, start, quote_at) {
                if comma > start && self.src.get(comma - 1) != Some(&b'\\') {
                    // `, key: ` is copied verbatim into `out`.
                    let keep = out.len().saturating_sub(quote_at - comma);
                    out.truncate(keep);
                    trim_end_ws(out);
                    self.pos = comma;
                    self.note(Repair::MissingQuote);
                    return true;
                }
            }
        }
        // Back over whitespace (copied verbatim into `out`) to a comma.
        let mut c = quote_at;
        while c > start
            && quote_at - c <= LOOKAHEAD
            && self.src.get(c - 1).is_some_and(u8::is_ascii_whitespace)
        {
            c -= 1;
        }
        // A `/* … */` comment between the comma and the quote (within the
        // look-ahead window, without escapes) is skipped too.
        let mut comment = false;
        if c >= start + 2 && self.src.get(c - 2..c) == Some(b"*/") {
            let floor = quote_at.saturating_sub(LOOKAHEAD).max(start);
            let window = self.src.get(floor..c - 2).unwrap_or_default();
            if let Some(o) = memchr::memmem::rfind(window, b"/*") {
                if !window.get(o..).unwrap_or_default().contains(&b'\\') {
                    c = floor + o;
                    comment = true;
                    while c > start
                        && quote_at - c <= 2 * LOOKAHEAD
                        && self.src.get(c - 1).is_some_and(u8::is_ascii_whitespace)
                    {
                        c -= 1;
                    }
                }
            }
        }
        if c <= start || self.src.get(c - 1) != Some(&b',') || quote_at - c > LOOKAHEAD {
            return false;
        }
        let comma = c - 1;
        if comma > start && self.src.get(comma - 1) == Some(&b'\\') {
            return false;
        }
        // Ahead: `"word"` then `:` (object) or `,` `]` `}` (array).
        let ahead_end = (self.pos + LOOKAHEAD).min(self.src.len());
        let ahead = self.src.get(self.pos..ahead_end).unwrap_or_default();
        let Some(j) = ahead
            .iter()
            .position(|&b| b == qb || b == b'\\' || b == b'\n')
        else {
            return false;
        };
        if ahead.get(j) != Some(&qb) || j == 0 {
            return false;
        }
        let k = self.skip_plain_ws(self.pos + j + 1, 16);
        let follows = match ctx {
            Ctx::Object => self.src.get(k) == Some(&b':'),
            Ctx::Array => matches!(self.src.get(k), Some(b',' | b']')),
            Ctx::Tuple => matches!(self.src.get(k), Some(b',' | b')')),
            Ctx::Key => false,
        };
        if !follows {
            return false;
        }
        let keep = out.len().saturating_sub(quote_at - comma);
        out.truncate(keep);
        trim_end_ws(out);
        self.pos = comma;
        self.note(Repair::MissingQuote);
        if comment {
            self.note(Repair::Comment);
        }
        true
    }

    /// Note [Missing quotes], second shape: the string ran to the end of the
    /// input; when the input ends in closers for the open containers, the
    /// string ended before them. On `true`, `out` is cut and the cursor is on
    /// the first byte of that tail.
    fn cut_before_tail(&mut self, start: usize, ctx: Ctx, out: &mut Vec<u8>) -> bool {
        let mut end = self.src.len();
        let floor = end.saturating_sub(TAIL_LOOKBACK).max(start);
        // A closing fence after the closers (`{"a": "b}```): the reply's
        // Markdown, not the string's text.
        let mut fence = end;
        while fence > floor && self.src.get(fence - 1).is_some_and(u8::is_ascii_whitespace) {
            fence -= 1;
        }
        if fence >= floor + 3 && self.src.get(fence - 3..fence) == Some(b"```") {
            end = fence - 3;
        }
        let mut p = end;
        while p > floor
            && self
                .src
                .get(p - 1)
                .is_some_and(|&b| b.is_ascii_whitespace() || matches!(b, b'}' | b']' | b')'))
        {
            p -= 1;
        }
        let tail = self.src.get(p..end).unwrap_or_default();
        // The closers, innermost first, must match the open containers.
        let mut expected = self.closers.iter().rev();
        let mut any = false;
        for &b in tail {
            if b.is_ascii_whitespace() {
                continue;
            }
            if expected.next() != Some(&b) {
                return false;
            }
            any = true;
        }
        if !any {
            return false;
        }
        let keep = out.len().saturating_sub(self.src.len() - p);
        let kept = out.get(..keep).unwrap_or_default();
        // An opener left open in the kept text claims the first closer.
        let mut depth = 0i64;
        for &b in kept {
            match b {
                b'{' | b'[' | b'(' => depth += 1,
                b'}' | b']' | b')' => depth -= 1,
                _ => {}
            }
        }
        if depth > 0 {
            return false;
        }
        self.note(Repair::MissingQuote);
        if let Some(c) = self.member_comma(start, p, ctx) {
            out.truncate(c - start);
            trim_end_ws(out);
            self.pos = c;
            return true;
        }
        out.truncate(keep);
        trim_end_ws(out);
        self.pos = p;
        true
    }

    /// Note [Missing quotes], third shape: in a string that lost its closing
    /// quote but whose containers all close at the end (the tail of the
    /// second shape), the first comma followed by what starts a member
    /// (`b: 1`, `"b": 1` in an object) or an element (a number, a literal or
    /// a quote in an array) ends the string: `{"a": "first, b: 1}` is
    /// `{"a": "first", "b": 1}`. Only raw text without escapes is searched,
    /// between `start` and the tail at `end`.
    fn member_comma(&self, start: usize, end: usize, ctx: Ctx) -> Option<usize> {
        let raw = self.src.get(start..end)?;
        if raw.contains(&b'\\') {
            return None;
        }
        for (i, _) in raw.iter().enumerate().filter(|&(_, &b)| b == b',') {
            let at = start + i;
            let k = self.skip_plain_ws(at + 1, 16);
            let first = *self.src.get(k)?;
            let starts = match ctx {
                Ctx::Object => {
                    let mut j = k;
                    if first == b'"' {
                        j += 1;
                    }
                    let name = j;
                    while self.src.get(j).is_some_and(|&b| is_ident_byte(b)) {
                        j += 1;
                    }
                    if first == b'"' && self.src.get(j) == Some(&b'"') {
                        j += 1;
                    }
                    j > name && j < end && self.src.get(self.skip_plain_ws(j, 16)) == Some(&b':')
                }
                Ctx::Array | Ctx::Tuple => first.is_ascii_digit() || first == b'-' || first == b'"',
                Ctx::Key => false,
            };
            if starts {
                return Some(at);
            }
        }
        None
    }

    /// An escape sequence; the cursor is on the backslash (Note [Lenient
    /// escapes] in `lex`).
    fn escape(&mut self, out: &mut Vec<u8>) {
        let (end, repair) = lex::escape(self.src, self.pos, out);
        self.pos = end;
        if let Some(r) = repair {
            self.note(r);
        }
    }

    fn unquoted_key(&mut self) -> Text<'a> {
        let start = self.pos;
        while self.peek().is_some_and(is_key_byte) {
            self.pos += 1;
        }
        // Key bytes are never escaped (Note [Plain text] in `node`).
        match self.slice(start, self.pos) {
            Cow::Borrowed(s) => Text::plain(s),
            owned @ Cow::Owned(_) => Text::from(owned),
        }
    }

    /// The input from `start` to `end` as text: borrowed when both ends
    /// are character boundaries (they are ASCII stops wherever the parser
    /// cuts), else decoded with replacement characters.
    fn slice(&self, start: usize, end: usize) -> Cow<'a, str> {
        match self.text.get(start..end) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(
                String::from_utf8_lossy(self.src.get(start..end).unwrap_or_default()).into_owned(),
            ),
        }
    }

    /// A number, or a word that merely starts like one (`2024-01-01`, `-Infinity`).
    fn number_or_word(&mut self) -> Node<'a> {
        let start = self.pos;
        if self.peek() == Some(b'-') && self.peek_at(1).is_some_and(is_ident_start) {
            self.pos += 1;
            let w = self.word();
            return match w {
                Node::Null => Node::Null,
                Node::String(s) => Node::String(Text::from(format!("-{}", &*s))),
                other => other,
            };
        }
        // Note [Digit separators] in `lex`.
        let (end, separated) = lex::number_end(self.src, start);
        self.pos = end;
        // A number glued to letters is a word (`3rd`, `1h`); one glued to a
        // `/` or a `:` and a digit is text too (`12345/67890`, `12:30`).
        let glued = lex::glues_number(self.src, self.pos);
        let raw = std::str::from_utf8(self.src.get(start..self.pos).unwrap_or_default())
            .unwrap_or_default();
        let joined;
        let lexeme = if separated {
            joined = raw.replace('_', "");
            joined.as_str()
        } else {
            raw
        };
        // Note [Leading zeros]: `0789` is an identifier (a zip code, an id),
        // not the number 789: kept as text.
        let digits = lexeme.trim_start_matches(['-', '+']).as_bytes();
        let leading_zero =
            digits.first() == Some(&b'0') && digits.get(1).is_some_and(u8::is_ascii_digit);
        if glued || leading_zero {
            self.pos = start;
            return self.unquoted_string();
        }
        if let Some(n) = parse_number(lexeme) {
            if separated {
                self.note(Repair::DigitSeparator);
            }
            if !crate::is_exact(lexeme.strip_prefix('+').unwrap_or(lexeme)) {
                // Note [Big numbers] (in `crate::json`): not changed silently.
                let mark = format!("{INEXACT_MARK}{}", self.inexact.len());
                self.inexact.push(lexeme.to_owned());
                return Node::String(Text::from(mark));
            }
            return n;
        }
        // Note [Cut numbers]: a number cut mid-way (`1.`, `2e`, `-`) before
        // the end of the input, a delimiter or a space keeps what parses
        // (`2e` → `2.0`, `-` → `0`).
        let trimmed = lexeme.trim_end_matches(['.', 'e', 'E', '+', '-']);
        let delimited = matches!(
            self.peek(),
            None | Some(b',' | b'}' | b']' | b')' | b' ' | b'\t' | b'\n' | b'\r')
        );
        if trimmed.len() < lexeme.len() && delimited {
            if separated {
                self.note(Repair::DigitSeparator);
            }
            let at_end = self.skip_plain_ws(self.pos, usize::MAX) >= self.src.len();
            self.note(if at_end {
                Repair::Truncated
            } else {
                Repair::IncompleteNumber
            });
            let cut_exp = lexeme
                .get(trimmed.len()..)
                .is_some_and(|t| t.contains(['e', 'E']));
            return match trimmed {
                "" | "-" | "+" => Node::Number(0.into()),
                _ if cut_exp => trimmed
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map_or(Node::Null, Node::Number),
                _ => parse_number(trimmed).unwrap_or(Node::Null),
            };
        }
        self.pos = start;
        self.unquoted_string()
    }

    /// An identifier-like word: a JSON, Python or JS literal, else an unquoted string.
    fn word(&mut self) -> Node<'a> {
        let start = self.pos;
        while self.peek().is_some_and(is_ident_byte) {
            self.pos += 1;
        }
        let w = self.src.get(start..self.pos).unwrap_or_default();
        // Note [Non-finite numbers]: JSON has no NaN or Infinity, and a
        // value we print must stay JSON, so these become `null`
        // (`lex::word_literal`).
        if let Some((v, repair)) = lex::word_literal(w) {
            if let Some(r) = repair {
                self.note(r);
            }
            return v;
        }
        match w {
            // Note [Cut literals]: a word the input ends in that begins a
            // JSON literal (`t`, `fals`, `nu`) is that literal cut by the
            // end of the text, completed as fixJson does.
            _ if self.pos == self.src.len()
                && [&b"true"[..], b"false", b"null"]
                    .iter()
                    .any(|l| l.starts_with(w)) =>
            {
                self.note(Repair::Truncated);
                match w.first() {
                    Some(b't') => Node::Bool(true),
                    Some(b'f') => Node::Bool(false),
                    _ => Node::Null,
                }
            }
            _ => {
                if let Some(v) = self.wrapper_call(start) {
                    return v;
                }
                self.pos = start;
                self.unquoted_string()
            }
        }
    }

    /// Note [Wrapper calls]: `ObjectId("5f1")`, `ISODate("2024-01-01")`,
    /// `NumberLong(2)`, `new Date("x")` are MongoDB-shell and JS constructor
    /// calls around one literal; the value is that literal
    /// ([`Repair::WrapperCall`]). Only a capitalized name (a constructor, by
    /// convention), optionally after `new`, directly followed by `(`, one
    /// quoted string or number, and `)` on the same line within
    /// [`WRAPPER_SPAN`] bytes; anything else stays unquoted text, so the
    /// look-ahead is bounded. The cursor is after the word at `start`.
    fn wrapper_call(&mut self, start: usize) -> Option<Node<'a>> {
        let save = (self.pos, self.repairs.len());
        let v = self.wrapper_call_inner(start);
        if v.is_none() {
            self.pos = save.0;
            self.repairs.truncate(save.1);
        }
        v
    }

    fn wrapper_call_inner(&mut self, start: usize) -> Option<Node<'a>> {
        let word = self.src.get(start..self.pos)?;
        if word == b"new" {
            while self.peek() == Some(b' ') && self.pos - start < 16 {
                self.pos += 1;
            }
            let name = self.pos;
            while self.peek().is_some_and(is_ident_byte) {
                self.pos += 1;
            }
            if self.pos == name || !self.src.get(name)?.is_ascii_uppercase() {
                return None;
            }
        } else if !word.first()?.is_ascii_uppercase() {
            return None;
        }
        if self.peek() != Some(b'(') {
            return None;
        }
        let open = self.pos + 1;
        let span = self
            .src
            .get(open..(open + WRAPPER_SPAN).min(self.src.len()))?;
        let close = open + span.iter().position(|&b| b == b')' || b == b'\n')?;
        if self.src.get(close) != Some(&b')') {
            return None;
        }
        let inner = std::str::from_utf8(self.src.get(open..close)?).ok()?;
        let trimmed = inner.trim();
        let v = match trimmed.as_bytes() {
            [q @ (b'"' | b'\''), .., last, end] if end == q && *last != b'\\' => {
                self.pos = open + (inner.len() - inner.trim_start().len());
                let v = Node::String(self.string(Quote::Ascii(*q), Ctx::Tuple));
                while self.peek() == Some(b' ') {
                    self.pos += 1;
                }
                if self.pos != close {
                    return None;
                }
                v
            }
            [b'0'..=b'9' | b'-', ..] => parse_number(trimmed)?,
            _ => return None,
        };
        self.pos = close + 1;
        self.note(Repair::WrapperCall);
        Some(v)
    }

    /// Unquoted text in value position, up to `,` `}` `]` or the line end.
    ///
    /// Note [Slashes in unquoted text]: `//` or `/*` starts a comment only at
    /// the start or after a space, so `https://x.example/a` and `/re/` stay whole.
    ///
    /// Note [Braces in unquoted text]: a `{` inside unquoted text opens a
    /// placeholder that its `}` closes (`{text: words{in braces}}`), so that
    /// `}` is part of the text, not the end of the object.
    fn unquoted_string(&mut self) -> Node<'a> {
        if let Some(v) = self.lost_opening_quote() {
            return v;
        }
        self.note(Repair::UnquotedString);
        let start = self.pos;
        let mut braces = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'{' => braces += 1,
                b'}' if braces > 0 => braces -= 1,
                b',' | b'}' | b']' | b'\n' | b'\r' => break,
                // Note [Lost closing quote before a key] in `boundary`,
                // for a value that had no quotes at all.
                b'"' if boundary::key_opens_at(self.src, self.pos) => break,
                _ => {}
            }
            if b == b'/'
                && matches!(self.peek_at(1), Some(b'/' | b'*'))
                && (self.pos == start
                    || self
                        .src
                        .get(self.pos - 1)
                        .is_some_and(|&p| p == b' ' || p == b'\t'))
            {
                break;
            }
            self.pos += 1;
        }
        let s = trimmed(self.slice(start, self.pos));
        // `abcdef"`: a value that lost its opening quote.
        if s.len() > 1 && s.ends_with('"') && s.matches('"').count() == 1 {
            self.note(Repair::MissingQuote);
            return Node::String(Text::from(without_last_byte(s)));
        }
        Node::String(Text::from(s))
    }
}

/// Note [Continued arrays]: where a key should start, an array right after a
/// member whose value is an array (`"k": ["a"], ["b"], "n": 1`) continues
/// that array: its `]` came too early. A list of scalars takes the new items;
/// a list of rows takes the new array as one more row, and scalars trailing
/// its rows, as many as each row holds, were a row that lost its `[`
/// (`[["a", "b"], "c", "d"], ["e", "f"]`): they are wrapped back.
fn continue_array<'a>(prev: &mut Vec<Node<'a>>, next: Vec<Node<'a>>) {
    if !prev.first().is_some_and(Node::is_array) {
        prev.extend(next);
        return;
    }
    // Only the first merge can see trailing scalars (each merge ends in an
    // array), so the row scan below runs once: linear overall.
    let tail = prev.iter().rev().take_while(|v| !v.is_array()).count();
    let rows = prev.len() - tail;
    if tail > 0
        && prev
            .iter()
            .take(rows)
            .all(|r| r.as_array().is_some_and(|r| r.len() == tail))
    {
        let row: Vec<Node<'a>> = prev.drain(rows..).collect();
        prev.push(Node::Array(row));
    }
    prev.push(Node::Array(next));
}

/// Note [Line breaks ending a key]: a key or string whose raw text ends in a
/// line break (`"key_1\n": 1`, a closing quote put on its own line) was
/// wrapped by its writer; the raw whitespace
/// (`raw` is the key's source between its quotes) is no part of the name
/// and is dropped from `out`. An escaped `\n` is kept.
pub(crate) fn trim_raw_line_break(raw: &[u8], out: &mut Vec<u8>) {
    let ws = raw
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let tail = raw.get(raw.len() - ws..).unwrap_or_default();
    if tail.iter().any(|&b| b == b'\n' || b == b'\r') && out.ends_with(tail) {
        out.truncate(out.len() - ws);
    }
}

/// Drop trailing ASCII whitespace.
fn trim_end_ws(out: &mut Vec<u8>) {
    while out.last().is_some_and(u8::is_ascii_whitespace) {
        out.pop();
    }
}

/// `s` without its surrounding whitespace, still borrowed when it was.
fn trimmed(s: Cow<'_, str>) -> Cow<'_, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
        Cow::Owned(o) if o.trim().len() == o.len() => Cow::Owned(o),
        Cow::Owned(o) => Cow::Owned(o.trim().to_owned()),
    }
}

/// `s` without its last byte (an ASCII `"` or `:` the caller saw there).
fn without_last_byte(s: Cow<'_, str>) -> Cow<'_, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(b.get(..b.len().saturating_sub(1)).unwrap_or(b)),
        Cow::Owned(mut o) => {
            o.pop();
            Cow::Owned(o)
        }
    }
}

/// The first byte of `rest` that may end or interrupt a string: a quote
/// byte `a` or `b`, a backslash or a control character (Note [String
/// scans] in `json`); the same answer as a byte-by-byte `position`
/// (`string_stop_agrees_with_position`). The parser copies runs with
/// `json::copy_plain`, which stops where this does; kept as the test of
/// the stops with the parser's quote pairs.
#[cfg(test)]
fn string_stop(rest: &[u8], a: u8, b: u8) -> Option<usize> {
    let i = crate::plain_run_end(rest, 0, a, b);
    (i < rest.len()).then_some(i)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Ctx, Parser, Quote, string_stop};

    /// A parser of `src` as if inside a container that `closer` closes.
    fn inside(src: &str, closer: u8) -> Parser<'_> {
        let mut p = Parser::new(src);
        p.closers.push(closer);
        p
    }

    /// Text after an opening quote: the pieces that end, continue or break
    /// a string.
    fn after_quote() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("\"".to_owned()),
                Just("'".to_owned()),
                Just("\\".to_owned()),
                Just("\\\"".to_owned()),
                Just("\n".to_owned()),
                Just(", ".to_owned()),
                Just(":".to_owned()),
                Just("}".to_owned()),
                Just("]".to_owned()),
                Just(" ".to_owned()),
                Just("é".to_owned()),
                Just("\"k\": ".to_owned()),
                Just("+ ".to_owned()),
                "[a-z0-9 ]{1,12}",
            ],
            0..12,
        )
        .prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn spaces_end_agrees_with_position(
            b in prop::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), Just(b'\t'), Just(b'!'), Just(0xA0u8), Just(0x8Au8), any::<u8>()], 0..40),
            from in 0usize..45,
        ) {
            let want = b.get(from..).and_then(|r| r.iter().position(|&c| c != b' ' && c != b'\n'))
                .map_or(b.len().max(from), |p| p + from);
            prop_assert_eq!(super::spaces_end(&b, from), want);
        }

        /// Note [Plain strings]: with the fast path or without it, a
        /// string reads the same, ends at the same place, notes the same.
        #[test]
        fn plain_strings_agree_with_the_general_loop(
            rest in after_quote(),
            quote in prop_oneof![Just(b'"'), Just(b'\'')],
            ctx in prop_oneof![Just(Ctx::Key), Just(Ctx::Object), Just(Ctx::Array), Just(Ctx::Tuple)],
            closer in prop_oneof![Just(b'}'), Just(b']')],
        ) {
            let src = format!("{}{rest}", char::from(quote));
            let mut fast = Parser::new(&src);
            fast.closers.push(closer);
            let got = fast.string(Quote::Ascii(quote), ctx);
            let mut general = Parser::new(&src);
            general.closers.push(closer);
            if quote == b'\'' {
                general.note(crate::Repair::SingleQuotes);
            }
            general.pos = 1;
            let want = general.general_string(Quote::Ascii(quote), ctx, quote, quote, 1);
            prop_assert_eq!((got.into_string(), fast.pos, fast.repairs), (want, general.pos, general.repairs), "{:?}", src);
        }
    }

    proptest! {
        /// Note [Plain strings in place]: the inlined `"` string is
        /// `string`'s, with the same end and repairs.
        #[test]
        fn double_quoted_agrees_with_string(
            rest in after_quote(),
            ctx in prop_oneof![Just(Ctx::Key), Just(Ctx::Object), Just(Ctx::Array), Just(Ctx::Tuple)],
            closer in prop_oneof![Just(b'}'), Just(b']')],
        ) {
            let src = format!("\"{rest}");
            let (mut fast, mut general) = (inside(&src, closer), inside(&src, closer));
            let got = fast.double_quoted(ctx);
            let want = general.string(Quote::Ascii(b'"'), ctx);
            prop_assert_eq!((got.into_string(), fast.pos, fast.repairs), (want.into_string(), general.pos, general.repairs), "{:?}", src);
        }

        /// Note [Scalars read in place]: an item read in place is what
        /// `value` reads there, ending at the same place with the same
        /// repairs.
        #[test]
        fn items_agree_with_value(
            first in prop_oneof![
                Just("\""), Just("'"), Just("-"), Just("0"), Just("12"), Just("-x"), Just("t"),
                Just("True"), Just("nul"), Just("ObjectId(\"a\")"), Just("{"), Just("["), Just("("),
                Just("`"), Just("/"), Just("“"), Just("."), Just("+"), Just("_"), Just("$"), Just("é"),
            ],
            rest in after_quote(),
            ctx in prop_oneof![Just(Ctx::Object), Just(Ctx::Array), Just(Ctx::Tuple)],
            closer in prop_oneof![Just(b'}'), Just(b']')],
        ) {
            let src = format!("{first}{rest}");
            let (mut fast, mut general) = (inside(&src, closer), inside(&src, closer));
            let got = fast.item(ctx);
            let want = general.value(ctx);
            prop_assert_eq!((got, fast.pos, fast.repairs), (want, general.pos, general.repairs), "{:?}", src);
        }

        /// Note [One space]: the inlined step over one space ends where
        /// the loop alone ends, noting the same repairs.
        #[test]
        fn skip_ws_agrees_with_the_loop(
            pieces in prop::collection::vec(prop_oneof![
                Just(" "), Just("  "), Just("\n"), Just("\t"), Just("\r"), Just("/"),
                Just("//c\n"), Just("/*c*/"), Just("#c\n"), Just("\u{a0}"), Just("\u{2003}"),
                Just("é"), Just("“"), Just("x"), Just("\""), Just(":"), Just("1"),
            ], 0..8),
            from in 0usize..4,
        ) {
            let src = pieces.concat();
            let mut fast = Parser::new(&src);
            fast.pos = from.min(src.len());
            fast.skip_ws();
            let mut general = Parser::new(&src);
            general.pos = from.min(src.len());
            if general.peek().is_some_and(super::starts_ws) {
                general.skip_ws_and_comments();
            }
            prop_assert_eq!((fast.pos, fast.repairs), (general.pos, general.repairs), "{:?}", src);
        }

        #[test]
        fn string_stop_agrees_with_position(
            rest in prop::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), Just(b'\n'), Just(0xE2u8), 0x20u8..0x7f, any::<u8>()], 0..80),
            a in prop_oneof![Just(b'"'), Just(b'\''), Just(0xE2u8)],
            b in prop_oneof![Just(b'"'), Just(0xC2u8)],
        ) {
            let want = rest.iter().position(|&c| c == a || c == b || c == b'\\' || c < 0x20);
            prop_assert_eq!(string_stop(&rest, a, b), want);
            // A long clean run before the stop, across chunk boundaries.
            let mut long = vec![b'x'; 37];
            long.extend_from_slice(&rest);
            prop_assert_eq!(string_stop(&long, a, b), want.map(|p| p + 37));
        }
    }
}
