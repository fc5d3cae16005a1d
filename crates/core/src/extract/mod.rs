//! Extract: the structured value out of a run or a reply.
//!
//! Tries, in order, and records which step won ([`Method`]): native structured
//! output → fenced blocks → balanced JSON in prose → repaired JSON → the
//! profile's legacy markers → none. Given a schema, the first candidate that
//! validates wins, else the one with the fewest errors.
//!
//! The candidates of one text come from `candidates` (fenced blocks, then
//! bare values); each is parsed strictly with `serde_json` first (method
//! `fenced`/`bare`) and, failing that, with the tolerant parser of [`repair`]
//! (method `repaired`, with every repair listed).
//!
//! Note [Weak candidates]: a bare value in prose that only a lax reading makes
//! into JSON (`{service}` becomes `{}`, `[1]` and `[EVENT:info] x` become
//! arrays of scalars, unquoted words become strings) is more likely prose than
//! an answer. Such *weak* candidates are tried last: after every other JSON
//! candidate and after the markers. A whole reply that is strictly valid JSON
//! (`[1, 2, 3]`) is never weak.
//!
//! Note [Markers and schemas]: without a schema, markers are used only when no
//! (non-weak) JSON candidate yields a value. With a schema, markers are tried
//! after every JSON candidate failed to validate, and win when their value
//! validates; otherwise the candidate (JSON or markers) with the fewest errors
//! is returned, earlier candidates winning ties.

mod candidates;
pub mod markers;
pub mod repair;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::{self, InexactNumber};
use crate::outcome::{Extraction, Method};
use crate::summary::RunSummary;
use crate::validate::Validator;

use candidates::Source;
pub use markers::{MarkerGrammar, parse_markers};
pub use repair::{Repaired, repair_json};

/// One repair applied by the tolerant parser; listed, never hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Repair {
    /// `,}` or `,]`, or a doubled or leading comma.
    TrailingComma,
    /// `'…'` strings or keys.
    SingleQuotes,
    /// `{summary: …}`.
    UnquotedKey,
    /// An unquoted word in value position, read as a string.
    UnquotedString,
    /// `True`, `False`, `None` (and other-case spellings such as `TRUE`, `Null`).
    PythonLiteral,
    /// `undefined`, `NaN`, `Infinity` (all become `null`; JSON has no NaN).
    JsLiteral,
    /// `//`, `/* */` or `#` comments.
    Comment,
    /// A raw newline, tab or other control character inside a string.
    RawControlCharInString,
    /// A `"` inside a string that cannot be its end, kept as a character.
    UnescapedQuote,
    /// An unknown escape such as `\x` or a bad `\u`, kept literally.
    InvalidEscape,
    /// Two members or elements with no comma between them.
    MissingComma,
    /// A key followed directly by its value.
    MissingColon,
    /// A `]` closing an object or a `}` closing an array.
    MismatchedBracket,
    /// The text ended inside the value: strings and containers were closed.
    Truncated,
    /// A key with no value (cut, `{"a":}` or `{key}`) was dropped.
    DanglingKeyDropped,
    /// A character that cannot continue the value ended it there.
    UnexpectedChar,
    /// An `...` elision inside an array was dropped.
    EllipsisDropped,
    /// Nesting deeper than [`repair::MAX_DEPTH`] was cut off.
    DepthLimit,
    /// A string lost a quote: its closing quote was placed before the `,`
    /// or the closers that follow it, or a stray `"` after a value was dropped.
    MissingQuote,
    /// `“…”` or `‘…’` typographic quotes used as string delimiters.
    SmartQuotes,
    /// A no-break, zero-width or other Unicode space between tokens.
    UnicodeWhitespace,
    /// A Python tuple `(1, 2)`, read as an array.
    PythonTuple,
    /// A number cut mid-way (`2e`, `-`, `1.`) before a delimiter, kept as what parses.
    IncompleteNumber,
    /// The whole value was itself JSON-escaped (`{\"a\": 1}`) and was unescaped once.
    EscapedJson,
    /// A Python set `{'a', 'b'}` (quoted items, no values), read as an array.
    PythonSet,
    /// `1_234.5_6`: underscores between digits (Python, Rust, JS) dropped.
    DigitSeparator,
    /// `ObjectId("x")`, `new Date("x")`: a constructor call around one
    /// literal (the Mongo shell, JS), read as that literal.
    WrapperCall,
    /// A bare word before a quoted key (`COMMENT "k": 1`) was dropped.
    StrayWord,
    /// `` `…` `` (or `` `…´ ``) backtick-quoted strings or keys.
    BacktickQuotes,
    /// An array continued after its `]` (`"k": [1], [2]`) was merged back.
    ArrayContinued,
    /// An extra `}` closing the outermost object before more members
    /// (`{"a": 1}, "b": 2}`) was dropped.
    ExtraCloser,
    /// A number no JSON number type here holds exactly (a 23-digit integer,
    /// `1e400`) became its nearest `f64` or `null`; each one is also an error
    /// of kind `number`, so the value is not valid (Note [Big numbers] in
    /// [`crate::json`]).
    InexactNumber,
}

/// Extraction settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions<'a> {
    /// Validate candidates against this schema; the first valid one wins.
    pub validator: Option<&'a Validator>,
    /// Legacy marker grammar to fall back on.
    pub markers: Option<MarkerGrammar>,
    /// Apply schema-aligned coercions before judging validity.
    pub coerce: bool,
}

/// Extract from one reply text.
///
/// Fenced blocks, then bare values, each strict then repaired; then the
/// markers of `opts.markers`; see the module docs for the order and the rule
/// used with a schema.
pub fn extract_text(text: &str, opts: &ExtractOptions<'_>) -> Extraction {
    let mut chooser = Chooser::new(opts);
    run_chain(&mut chooser, None, &[text], text);
    with_invariants(chooser.finish(), opts)
}

/// The check stage on the chosen value: the validator's `x-invariants`
/// (Note [Invariants after the choice]).
///
/// Note [Invariants after the choice]: invariants do not take part in choosing
/// among candidates (that is the schema's job); they are evaluated once on the
/// winner and reported in `errors` with `kind: "invariant"`, making it invalid.
fn with_invariants(mut extraction: Extraction, opts: &ExtractOptions<'_>) -> Extraction {
    if let Some(v) = opts.validator {
        crate::check::check_extraction(&mut extraction, v.invariants());
    }
    extraction
}

/// Extract from a decoded run: native structured output first, then the
/// `StructuredOutput` tool input, then the result text and the assistant text.
///
/// Markers are scanned over the assistant output plus the result text (when
/// the output does not already hold it).
pub fn extract_run(run: &RunSummary, opts: &ExtractOptions<'_>) -> Extraction {
    let mut chooser = Chooser::new(opts);
    let structured = match &run.structured_output {
        Some(v) => Some((v, run.structured_inexact.as_slice())),
        None => run
            .structured_tool_input
            .as_ref()
            .map(|v| (v, run.structured_tool_inexact.as_slice())),
    };
    let result_text = run.result.as_ref().and_then(|r| r.text.as_deref());
    let mut texts: Vec<&str> = Vec::with_capacity(2);
    if let Some(r) = result_text {
        texts.push(r);
    }
    if result_text != Some(run.output.as_str()) {
        texts.push(&run.output);
    }
    let marker_text;
    let marker_src: &str = match result_text {
        Some(r) if !run.output.contains(r) => {
            marker_text = format!("{}\n{r}", run.output);
            &marker_text
        }
        _ => &run.output,
    };
    run_chain(&mut chooser, structured, &texts, marker_src);
    with_invariants(chooser.finish(), opts)
}

/// Run the whole chain on arbitrary bytes (lossy UTF-8), with and without
/// markers and a schema; for fuzzers and property tests. Never panics.
#[doc(hidden)]
pub fn fuzz_extract(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let schema = serde_json::json!({"type": "object", "required": ["summary"]});
    let validator = Validator::new(&schema).ok();
    for markers in [
        None,
        Some(MarkerGrammar::ClaudeOps),
        Some(MarkerGrammar::ClaudeLoop),
    ] {
        let opts = ExtractOptions {
            validator: None,
            markers,
            coerce: false,
        };
        let _ = extract_text(&text, &opts);
        let opts = ExtractOptions {
            validator: validator.as_ref(),
            markers,
            coerce: true,
        };
        let _ = extract_text(&text, &opts);
    }
    let _ = repair_json(&text);
}

/// A weak candidate kept for later (see Note [Weak candidates]).
struct Deferred {
    value: Value,
    method: Method,
    repairs: Vec<Repair>,
    inexact: Vec<InexactNumber>,
}

/// The chain over one run's pieces.
fn run_chain(
    chooser: &mut Chooser<'_, '_>,
    structured: Option<(&Value, &[InexactNumber])>,
    texts: &[&str],
    marker_src: &str,
) {
    if let Some((v, inexact)) = structured {
        if chooser.offer(v.clone(), Method::Structured, Vec::new(), inexact) {
            return;
        }
    }
    let mut weak: Vec<Deferred> = Vec::new();
    for text in texts {
        if text_chain(chooser, text, &mut weak) {
            return;
        }
    }
    if let Some(grammar) = chooser.opts.markers {
        if let Some(v) = parse_markers(marker_src, grammar) {
            if chooser.offer(v, Method::Markers, Vec::new(), &[]) {
                return;
            }
        }
    }
    for d in weak {
        if chooser.offer(d.value, d.method, d.repairs, &d.inexact) {
            return;
        }
    }
}

/// The JSON candidates of one text; `true` when one won.
fn text_chain(chooser: &mut Chooser<'_, '_>, text: &str, weak: &mut Vec<Deferred>) -> bool {
    // Fast path: the whole reply is one strict JSON value. It then holds no
    // fence (a fence line cannot be inside valid JSON) and no other candidate.
    let trimmed = text.trim();
    let b = trimmed.as_bytes();
    // A whole reply that is a strict JSON scalar (`42`, `"done"`) counts too;
    // a lax scalar does not (it is more likely prose).
    let whole = matches!(b.first(), Some(b'{' | b'[')) && matches!(b.last(), Some(b'}' | b']'));
    let scalar = matches!(
        b.first(),
        Some(b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
    );
    if whole || scalar {
        if let Ok(p) = json::parse(trimmed) {
            return chooser.offer(p.value, Method::Bare, Vec::new(), &p.inexact);
        }
    }
    for (source, span) in candidates::candidates(text) {
        let span = span.trim();
        if let Ok(p) = json::parse(span) {
            let method = match source {
                Source::Fenced => Method::Fenced,
                Source::Bare => Method::Bare,
            };
            if source == Source::Bare && is_weak(&p.value, span, &[]) {
                weak.push(Deferred {
                    value: p.value,
                    method,
                    repairs: Vec::new(),
                    inexact: p.inexact,
                });
                continue;
            }
            if chooser.offer(p.value, method, Vec::new(), &p.inexact) {
                return true;
            }
            continue;
        }
        let Some(r) = repair_json(span) else { continue };
        if source == Source::Bare && is_weak(&r.value, span, &r.repairs) {
            weak.push(Deferred {
                value: r.value,
                method: Method::Repaired,
                repairs: r.repairs,
                inexact: r.inexact,
            });
            continue;
        }
        if chooser.offer(r.value, Method::Repaired, r.repairs, &r.inexact) {
            return true;
        }
    }
    false
}

/// Is this bare candidate more likely prose than an answer? See Note [Weak candidates].
fn is_weak(v: &Value, span: &str, repairs: &[Repair]) -> bool {
    if repairs.iter().any(|r| {
        matches!(
            r,
            Repair::UnquotedString
                | Repair::DanglingKeyDropped
                | Repair::MissingColon
                | Repair::UnexpectedChar
        )
    }) {
        return true;
    }
    let inner_blank = span.len() <= 2
        || span
            .get(1..span.len() - 1)
            .is_some_and(|s| s.trim().is_empty());
    match v {
        Value::Array(items) => {
            (items.is_empty() && !inner_blank)
                || (!items.is_empty() && items.iter().all(|x| !x.is_object() && !x.is_array()))
        }
        Value::Object(m) => m.is_empty() && !inner_blank,
        _ => true,
    }
}

/// Picks the winner among offered values (see the module docs).
struct Chooser<'o, 'v> {
    opts: &'o ExtractOptions<'v>,
    winner: Option<Extraction>,
    best: Option<(usize, Extraction)>,
}

impl<'o, 'v> Chooser<'o, 'v> {
    fn new(opts: &'o ExtractOptions<'v>) -> Self {
        Chooser {
            opts,
            winner: None,
            best: None,
        }
    }

    /// Offer a value; `true` when it wins (the chain stops).
    ///
    /// A value holding `inexact` numbers is never valid: each is an error of
    /// kind `number` and the repair `inexact_number` is listed (Note [Big
    /// numbers] in [`crate::json`]). Without a schema it still wins, as the
    /// first candidate does; with one it competes by error count.
    fn offer(
        &mut self,
        value: Value,
        method: Method,
        mut repairs: Vec<Repair>,
        inexact: &[InexactNumber],
    ) -> bool {
        let mut e = Extraction::none();
        e.method = method;
        if !inexact.is_empty() && !repairs.contains(&Repair::InexactNumber) {
            repairs.push(Repair::InexactNumber);
        }
        e.repairs = repairs;
        let number_errors: Vec<_> = inexact.iter().map(InexactNumber::violation).collect();
        let Some(validator) = self.opts.validator else {
            e.value = Some(value);
            e.valid = number_errors.is_empty();
            e.errors = number_errors;
            self.winner = Some(e);
            return true;
        };
        let value = if self.opts.coerce {
            let (v, coercions) = validator.coerce(value);
            e.coercions = coercions;
            v
        } else {
            value
        };
        if number_errors.is_empty() && validator.is_valid(&value) {
            e.value = Some(value);
            e.valid = true;
            self.winner = Some(e);
            return true;
        }
        let mut errors = number_errors;
        errors.extend(validator.errors(&value));
        let n = errors.len();
        if self.best.as_ref().is_none_or(|(m, _)| n < *m) {
            e.value = Some(value);
            e.errors = errors;
            self.best = Some((n, e));
        }
        false
    }

    fn finish(self) -> Extraction {
        self.winner
            .or_else(|| self.best.map(|(_, e)| e))
            .unwrap_or_else(Extraction::none)
    }
}

#[cfg(test)]
mod tests;
