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

mod embedded;
pub mod markers;
mod methods;
mod replaced;
mod several;
mod trace;

use serde_json::Value;

use crate::decode::Format;
use crate::json::tape::{self, Declined, Doc, Scratch};
use crate::json::{self, InexactNumber, Parsed};
use crate::outcome::{Extraction, Method, Violation};
use crate::summary::RunSummary;
use crate::validate::Validator;

/// The repairs live with the other result types (Note [Result types] in
/// `outcome`); re-exported where they are made.
pub use crate::outcome::Repair;
// The scan, the one-pass writer and the tolerant parser are
// agentshape-json's (Note [A crate for the JSON layer] there).
use agentshape_json::Top;
pub use agentshape_json::repair;
use agentshape_json::{candidates, minify};
use candidates::Source;
pub use markers::{MarkerGrammar, MarkerSpec, parse_markers};
pub use methods::{METHOD_NAMES, Methods};
use minify::MinifyScratch;
use repair::{Node, RepairedNode};
pub use repair::{Repaired, repair_json};
pub use trace::{CandidateTrace, Piece, Reason, TraceSource, Traced};
use trace::{Recorder, offset_in};

/// Extraction settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions<'a> {
    /// Validate candidates against this schema; the first valid one wins.
    pub validator: Option<&'a Validator>,
    /// Legacy marker grammar to fall back on.
    pub markers: Option<MarkerGrammar<'a>>,
    /// Apply schema-aligned coercions before judging validity.
    pub coerce: bool,
    /// The methods allowed and the place of the markers (a profile's
    /// `[extract] methods`, Note [Methods allowed] in `methods`).
    pub methods: Methods,
}

/// Extract from one reply text.
///
/// Fenced blocks, then bare values, each strict then repaired; then the
/// markers of `opts.markers`; see the module docs for the order and the rule
/// used with a schema.
pub fn extract_text(text: &str, opts: &ExtractOptions<'_>) -> Extraction {
    text_with(text, opts, None).0
}

/// [`extract_text`] with the trace of every candidate it met (Note [One
/// chain, traced] in `trace`).
pub fn trace_text(text: &str, opts: &ExtractOptions<'_>) -> Traced {
    let (extraction, candidates) = text_with(text, opts, Some(Recorder::default()));
    Traced {
        extraction,
        candidates,
    }
}

fn text_with(
    text: &str,
    opts: &ExtractOptions<'_>,
    trace: Option<Recorder>,
) -> (Extraction, Vec<CandidateTrace>) {
    replaced_text_with(text, false, opts, trace)
}

/// [`text_with`]; `replaced` when the decoder put U+FFFD in `text` for
/// what no string holds (Note [Replaced text] in `replaced`).
fn replaced_text_with(
    text: &str,
    replaced: bool,
    opts: &ExtractOptions<'_>,
    trace: Option<Recorder>,
) -> (Extraction, Vec<CandidateTrace>) {
    let mut chooser = Chooser::new(opts, trace);
    chooser.replaced = replaced;
    run_chain(&mut chooser, None, &[(Piece::Text, text)], text);
    let (extraction, candidates) = chooser.finish();
    (with_invariants(extraction, opts), candidates)
}

/// [`extract_text`], with the value appended to `out` as compact JSON (the
/// bytes [`json::write_compact`] writes for it, `null` when there is none)
/// instead of returned: the extraction comes back with `value` `None` and
/// every other field as [`extract_text`] gives it.
///
/// For callers that only write the value out (`extract --jsonl --json`):
/// a strict candidate that wins as it stands (no schema, or valid against
/// it: coercion leaves a valid value alone) is written straight from its
/// reading, never built (Note [Writing from the tape] in
/// `json::tape`; without a schema, written as it is checked, Note
/// [One-pass compact] in `minify`); the tests hold it to [`extract_text`]
/// (`compact_agrees`).
pub fn extract_text_compact(
    text: &str,
    opts: &ExtractOptions<'_>,
    out: &mut Vec<u8>,
) -> Extraction {
    let mut chooser = Chooser::new(opts, None);
    // Without a schema, strict candidates are written in one pass (Note
    // [One-pass compact] in `minify`); with one, read onto the tape.
    let schema = opts.validator.is_some();
    chooser.compact = Some(Compact {
        out: std::mem::take(out),
        scratch: if schema {
            tape::take_scratch()
        } else {
            Scratch::default()
        },
        minify: if schema {
            MinifyScratch::default()
        } else {
            minify::take_scratch()
        },
        wrote: false,
    });
    run_chain(&mut chooser, None, &[(Piece::Text, text)], text);
    let compact = chooser.compact.take();
    let (extraction, _) = chooser.finish();
    let mut extraction = with_invariants(extraction, opts);
    let mut wrote = false;
    if let Some(c) = compact {
        *out = c.out;
        if schema {
            tape::put_scratch(c.scratch);
        } else {
            minify::put_scratch(c.minify);
        }
        wrote = c.wrote;
    }
    if !wrote {
        match extraction.value.take() {
            Some(v) => json::write_compact(out, &v),
            None => out.extend_from_slice(b"null"),
        }
    }
    extraction
}

/// What `agentshape extract` does with one decoded input: a plain-text input
/// goes through [`extract_text`] on its text (keeping the summary in `run`
/// only when over-long lines were skipped, core's Note [Over-long text]), a
/// transcript through [`extract_run`] with its summary in `run`. Shared by
/// the CLI and the playground so both always agree.
pub fn extract_decoded(summary: RunSummary, opts: &ExtractOptions<'_>) -> Extraction {
    decoded_with(summary, opts, None).0
}

/// [`extract_decoded`] with the candidate trace.
pub fn trace_decoded(summary: RunSummary, opts: &ExtractOptions<'_>) -> Traced {
    let (extraction, candidates) = decoded_with(summary, opts, Some(Recorder::default()));
    Traced {
        extraction,
        candidates,
    }
}

fn decoded_with(
    summary: RunSummary,
    opts: &ExtractOptions<'_>,
    trace: Option<Recorder>,
) -> (Extraction, Vec<CandidateTrace>) {
    if summary.format == Format::Text {
        let replaced = summary.replaced_text > 0;
        let (mut extraction, candidates) =
            replaced_text_with(&summary.output, replaced, opts, trace);
        if summary.too_long_lines > 0 {
            extraction.run = Some(Box::new(summary));
        }
        return (extraction, candidates);
    }
    let (mut extraction, candidates) = run_with(&summary, opts, trace);
    extraction.run = Some(Box::new(summary));
    (extraction, candidates)
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
    run_with(run, opts, None).0
}

/// [`extract_run`] with the candidate trace.
pub fn trace_run(run: &RunSummary, opts: &ExtractOptions<'_>) -> Traced {
    let (extraction, candidates) = run_with(run, opts, Some(Recorder::default()));
    Traced {
        extraction,
        candidates,
    }
}

fn run_with(
    run: &RunSummary,
    opts: &ExtractOptions<'_>,
    trace: Option<Recorder>,
) -> (Extraction, Vec<CandidateTrace>) {
    let mut chooser = Chooser::new(opts, trace);
    chooser.replaced = run.replaced_text > 0;
    let structured = match &run.structured_output {
        Some(v) => Some((v, run.structured_inexact.as_slice())),
        None => run
            .structured_tool_input
            .as_ref()
            .map(|v| (v, run.structured_tool_inexact.as_slice())),
    };
    let result_text = run.result.as_ref().and_then(|r| r.text.as_deref());
    let mut texts: Vec<(Piece, &str)> = Vec::with_capacity(2);
    if let Some(r) = result_text {
        texts.push((Piece::Result, r));
    }
    if result_text != Some(run.output.as_str()) {
        texts.push((Piece::Output, &run.output));
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
    let (extraction, candidates) = chooser.finish();
    (with_invariants(extraction, opts), candidates)
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
            methods: Methods::default(),
        };
        let _ = extract_text(&text, &opts);
        // The compact writer's chain, the lax walk's among it (Note [Lax
        // one pass] in `minify`: debug builds check it against the parser).
        let _ = extract_text_compact(&text, &opts, &mut Vec::new());
        let opts = ExtractOptions {
            validator: validator.as_ref(),
            markers,
            coerce: true,
            methods: Methods::default(),
        };
        let _ = extract_text(&text, &opts);
    }
    // Issue 32: the collection of several values (an array root) and the
    // embedded-document walk (a field typed object).
    for schema in [
        serde_json::json!({"type": "array"}),
        serde_json::json!({"type": "object", "properties": {"r": {"type": "object"}}}),
    ] {
        if let Ok(v) = Validator::new(&schema) {
            let opts = ExtractOptions {
                validator: Some(&v),
                markers: None,
                coerce: true,
                methods: Methods::default(),
            };
            let _ = extract_text(&text, &opts);
        }
    }
    let _ = repair_json(&text);
}

/// A weak candidate kept for later (see Note [Weak candidates]).
struct Deferred {
    value: Value,
    method: Method,
    repairs: Vec<Repair>,
    inexact: Vec<InexactNumber>,
    /// Its trace entry, when tracing.
    slot: Option<usize>,
}

/// The chain over one run's pieces.
fn run_chain(
    chooser: &mut Chooser<'_, '_>,
    structured: Option<(&Value, &[InexactNumber])>,
    texts: &[(Piece, &str)],
    marker_src: &str,
) {
    if let Some((v, inexact)) = structured {
        let slot = chooser.note(TraceSource::Structured, Method::Structured, true);
        if chooser.offer(v.clone(), Method::Structured, Vec::new(), inexact, slot) {
            return;
        }
    }
    let markers_first = chooser.opts.methods.markers_first();
    if markers_first && markers_stage(chooser, marker_src) {
        return;
    }
    let mut weak: Vec<Deferred> = Vec::new();
    for &(piece, text) in texts {
        if text_chain(chooser, piece, text, &mut weak) {
            return;
        }
    }
    if !markers_first && markers_stage(chooser, marker_src) {
        return;
    }
    for d in weak {
        if chooser.offer(d.value, d.method, d.repairs, &d.inexact, d.slot) {
            return;
        }
    }
}

/// The profile's markers over `marker_src`; `true` when they won.
fn markers_stage(chooser: &mut Chooser<'_, '_>, marker_src: &str) -> bool {
    let Some(grammar) = chooser.opts.markers else {
        return false;
    };
    if !chooser.opts.methods.allows(Method::Markers) {
        return false;
    }
    let found = parse_markers(marker_src, grammar);
    let slot = chooser.note(TraceSource::Markers, Method::Markers, found.is_some());
    found.is_some_and(|v| chooser.offer(v, Method::Markers, Vec::new(), &[], slot))
}

/// The JSON candidates of one text; `true` when one won.
fn text_chain(
    chooser: &mut Chooser<'_, '_>,
    piece: Piece,
    text: &str,
    weak: &mut Vec<Deferred>,
) -> bool {
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
    // The whole reply, when it was just found not to be strict JSON: it is
    // often the one bare candidate too, and is not parsed twice.
    let mut refused: Option<&str> = None;
    if whole || scalar {
        refused = Some(trimmed);
        if let Some(r) = chooser.read_strict(trimmed) {
            let at = Some((piece, offset_in(text, trimmed)));
            let slot = chooser.note_span(TraceSource::Bare, Method::Bare, at, true, &[], false);
            return chooser.offer_reading(r, Method::Bare, slot);
        }
    }
    // Note [A whole reply read lax]: a whole reply strict JSON refused
    // and that the lax walk reads is the one candidate the chain below
    // would find: no fence (there is no ```), one bare span from its
    // first bracket, which the bracket scan ends at its end (`balanced`),
    // so not several values and no second candidate. Read here, the
    // reply's bracket scan and candidate list are never made; where the
    // walk declines, the chain runs as before.
    if let Some(span) = refused.filter(|_| whole && !candidates::may_hold_fence(text)) {
        let at = Some((piece, offset_in(text, span)));
        if let Some(lax) = lax_stage(
            chooser,
            text,
            span,
            Source::Bare,
            TraceSource::Bare,
            at,
            true,
        ) {
            return match lax {
                Lax::Prose => false,
                Lax::Offered(won) => won,
            };
        }
    }
    let found = candidates::candidates(text);
    // A whole reply of several top-level values: Note [Several values] in
    // `several`; its values are this text's candidates (whose spans it
    // reuses).
    if let Some(won) = several::whole(chooser, piece, text, &found) {
        return won;
    }
    // A whole reply that is one lax scalar (a broken quoted string, a cut
    // literal or number): Note [Whole-reply scalars] in `repair`.
    if !whole {
        if let Some(r) = repair::repair_scalar(trimmed) {
            let at = Some((piece, offset_in(text, trimmed)));
            let slot = chooser.note_span(
                TraceSource::Bare,
                Method::Repaired,
                at,
                true,
                &r.repairs,
                false,
            );
            if chooser.offer(r.value, Method::Repaired, r.repairs, &r.inexact, slot) {
                return true;
            }
        }
    }
    for (i, &(source, span)) in found.iter().enumerate() {
        let span = span.trim();
        let at = Some((piece, offset_in(text, span)));
        let traced = match source {
            Source::Fenced => TraceSource::Fenced,
            Source::Bare => TraceSource::Bare,
        };
        // Note [Doomed strict parses] in `json`.
        let strict = if refused.is_some_and(|r| std::ptr::eq(r, span)) {
            None
        } else {
            chooser.read_strict(span)
        };
        let won = if let Some(reading) = strict {
            let method = match source {
                Source::Fenced => Method::Fenced,
                Source::Bare => Method::Bare,
            };
            let top = reading.top();
            if source == Source::Bare && is_prose_strict(text, span, top) {
                chooser.note_prose(traced, method, at, &[]);
                chooser.recycle(reading);
                continue;
            }
            let is_weak = source == Source::Bare && is_weak(top, span, &[]);
            let slot = chooser.note_span(traced, method, at, true, &[], is_weak);
            if is_weak {
                // Read as JSON just now: not `None` but for a reading the
                // one-pass writer and `serde_json` disagree on.
                let Some(p) = chooser.take_parsed(reading) else {
                    continue;
                };
                weak.push(Deferred {
                    value: p.value,
                    method,
                    repairs: Vec::new(),
                    inexact: p.inexact,
                    slot,
                });
                continue;
            }
            chooser.offer_reading(reading, method, slot)
        } else if source == Source::Fenced
            && let Some(won) = several::fenced(chooser, piece, text, span)
        {
            // A block of several values (Note [Several values] in `several`).
            won
        } else if let Some(lax) = lax_stage(chooser, text, span, source, traced, at, false) {
            match lax {
                Lax::Prose => continue,
                Lax::Offered(won) => won,
            }
        } else if let Some(r) = repair::repair_node(span) {
            if source == Source::Bare && is_prose(text, span, &r.node, &r.repairs) {
                chooser.note_prose(traced, Method::Repaired, at, &r.repairs);
                continue;
            }
            let is_weak =
                source == Source::Bare && is_weak(Top::of_node(&r.node), span, &r.repairs);
            let slot = chooser.note_span(traced, Method::Repaired, at, true, &r.repairs, is_weak);
            if is_weak {
                let r = r.finish();
                weak.push(Deferred {
                    value: r.value,
                    method: Method::Repaired,
                    repairs: r.repairs,
                    inexact: r.inexact,
                    slot,
                });
                continue;
            }
            chooser.offer_repaired(r, slot)
        } else {
            chooser.note_span(traced, Method::Repaired, at, false, &[], false);
            false
        };
        if won {
            chooser.note_unreached(piece, text, found.get(i + 1..).unwrap_or_default());
            return true;
        }
    }
    false
}

/// What the lax one-pass walk made of a candidate (Note [Lax one pass] in
/// `minify`).
enum Lax {
    /// A bare candidate that is prose: skipped, as the repair parser's
    /// reading of it would be.
    Prose,
    /// Written to the compact output and offered: whether it won.
    Offered(bool),
}

/// A candidate strict JSON refused, read by the lax one-pass walk (Note
/// [Lax one pass] in `minify`) where its answer is the repair parser's
/// and it would win as it stands: compact output without a schema, the
/// repaired method allowed. `None` (the output as it was) when the walk
/// declines, or when what follows needs the parser's nodes: a bare
/// candidate that is weak, or that only the value below its top level
/// tells from prose. The same checks, in the same order, as the repair
/// parser's branch of `text_chain`.
fn lax_stage(
    chooser: &mut Chooser<'_, '_>,
    text: &str,
    span: &str,
    source: Source,
    traced: TraceSource,
    at: Option<(Piece, (usize, usize))>,
    whole: bool,
) -> Option<Lax> {
    if chooser.opts.validator.is_some()
        || chooser.replaced
        || !chooser.opts.methods.allows(Method::Repaired)
    {
        return None;
    }
    let c = chooser.compact.as_mut()?;
    let from = c.out.len();
    let minify::LaxRead {
        top,
        repairs,
        balanced,
    } = minify::write_lax(span, &mut c.out, &mut c.minify)?;
    if whole && !balanced {
        c.out.truncate(from);
        return None;
    }
    if source == Source::Bare {
        let (start, end) = offset_in(text, span);
        let before = text.get(..start).unwrap_or_default();
        let after = text.get(end..).unwrap_or_default();
        let prose = repair::prose_by_text(top.empty(), span, before, after, &repairs);
        if prose != Some(false) || is_weak(top, span, &repairs) {
            c.out.truncate(from);
            if prose == Some(true) {
                chooser.note_prose(traced, Method::Repaired, at, &repairs);
                return Some(Lax::Prose);
            }
            return None;
        }
    }
    c.wrote = true;
    let slot = chooser.note_span(traced, Method::Repaired, at, true, &repairs, false);
    let mut e = Extraction::none();
    e.method = Method::Repaired;
    e.repairs = repairs;
    e.valid = true;
    Some(Lax::Offered(chooser.won_written(slot, e)))
}

/// Is the bare candidate `span` (a slice of `text`) prose, not data? Note
/// [No structure from prose] in `repair`.
fn is_prose(text: &str, span: &str, value: &Node<'_>, repairs: &[Repair]) -> bool {
    let (start, end) = offset_in(text, span);
    let before = text.get(..start).unwrap_or_default();
    let after = text.get(end..).unwrap_or_default();
    repair::keeps_nothing(value, span, before, after, repairs)
}

/// [`is_prose`] for a strict candidate: its rules read only the text and
/// whether the value is empty when nothing was repaired.
fn is_prose_strict(text: &str, span: &str, top: Top) -> bool {
    let (start, end) = offset_in(text, span);
    let before = text.get(..start).unwrap_or_default();
    let after = text.get(end..).unwrap_or_default();
    repair::prose_by_text(top.empty(), span, before, after, &[]) == Some(true)
}

/// A strict candidate as read: a `Value`, or (when the chooser writes
/// compact output) a document on the tape (Note [Writing from the tape] in
/// `json::tape`) or, without a schema, its compact form already
/// written (Note [One-pass compact] in `minify`).
enum Reading<'t> {
    Value(Parsed),
    Tape(Doc<'t>),
    /// Written to the compact output from `from` on; `span` is its text.
    Written {
        top: Top,
        span: &'t str,
        from: usize,
    },
}

impl Reading<'_> {
    fn top(&self) -> Top {
        match self {
            Reading::Value(p) => Top::of(&p.value),
            Reading::Tape(doc) => Top::of_tape(doc.root()),
            Reading::Written { top, .. } => *top,
        }
    }
}

/// The compact output of [`extract_text_compact`], held by the chooser.
struct Compact {
    out: Vec<u8>,
    /// The tape's vectors, reused from candidate to candidate.
    scratch: Scratch,
    /// The one-pass writer's, likewise.
    minify: MinifyScratch,
    /// The winner's value was written to `out`.
    wrote: bool,
}

/// Is this bare candidate more likely prose than an answer? See Note [Weak candidates].
fn is_weak(top: Top, span: &str, repairs: &[Repair]) -> bool {
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
    match top {
        Top::Array { empty, scalars } => (empty && !inner_blank) || (!empty && scalars),
        Top::Object { empty } => empty && !inner_blank,
        Top::Scalar => true,
    }
}

/// Picks the winner among offered values (see the module docs).
struct Chooser<'o, 'v> {
    opts: &'o ExtractOptions<'v>,
    winner: Option<Extraction>,
    best: Option<(usize, Extraction)>,
    /// `Some` while tracing (Note [One chain, traced] in `trace`).
    trace: Option<Recorder>,
    /// `Some` for [`extract_text_compact`] without a schema.
    compact: Option<Compact>,
    /// The decoder put U+FFFD somewhere in the text (bytes that were not
    /// UTF-8, a lone surrogate in a transcript's text): a value holding
    /// U+FFFD is reported (Note [Replaced text] in `replaced`). Never set
    /// for [`extract_text_compact`], whose text comes from a JSON string,
    /// UTF-8 by then.
    replaced: bool,
}

impl<'o, 'v> Chooser<'o, 'v> {
    fn new(opts: &'o ExtractOptions<'v>, trace: Option<Recorder>) -> Self {
        Chooser {
            opts,
            winner: None,
            best: None,
            trace,
            compact: None,
            replaced: false,
        }
    }

    /// Read `span` as strict JSON: when writing compact output, written
    /// there at once without a schema (Note [One-pass compact] in
    /// `minify`), else from the tape when it reads it, else as a `Value`;
    /// `None` when it is not strict JSON.
    fn read_strict<'t>(&mut self, span: &'t str) -> Option<Reading<'t>> {
        let Some(c) = self.compact.as_mut() else {
            return json::parse_if_json(span).map(Reading::Value);
        };
        if self.opts.validator.is_none() {
            let from = c.out.len();
            return match minify::write_strict(span, &mut c.out, &mut c.minify) {
                Ok(top) => Some(Reading::Written { top, span, from }),
                Err(Declined::Invalid) => None,
                Err(Declined::Doubtful) => json::parse_if_json(span).map(Reading::Value),
            };
        }
        // Text the tape refuses is not JSON: no second scan (Note
        // [Declined, not refused] in `json::tape`).
        match Doc::read_in(span, &mut c.scratch) {
            Ok(doc) => Some(Reading::Tape(doc)),
            Err(Declined::Invalid) => None,
            Err(Declined::Doubtful) => json::parse_if_json(span).map(Reading::Value),
        }
    }

    /// Done with a reading: its tape goes back to the scratch, its
    /// written form is taken back out of the output.
    fn recycle(&mut self, reading: Reading<'_>) {
        match (reading, self.compact.as_mut()) {
            (Reading::Tape(doc), Some(c)) => doc.recycle(&mut c.scratch),
            (Reading::Written { from, .. }, Some(c)) => c.out.truncate(from),
            _ => {}
        }
    }

    /// The reading as a `Value` (the same value `serde_json` reads:
    /// `doc_agrees_with_serde_json` in `json::tape`); a written one
    /// is read again (a weak candidate: rare).
    fn take_parsed(&mut self, reading: Reading<'_>) -> Option<Parsed> {
        match reading {
            Reading::Value(p) => Some(p),
            Reading::Tape(doc) => {
                let value = doc.root().value();
                self.recycle(Reading::Tape(doc));
                Some(Parsed {
                    value,
                    inexact: Vec::new(),
                })
            }
            Reading::Written { span, from, top } => {
                self.recycle(Reading::Written { span, from, top });
                json::parse_if_json(span)
            }
        }
    }

    /// [`Chooser::offer`] for a strict reading.
    ///
    /// A tape reading that wins as it stands (allowed, and without a
    /// schema or valid against it) is written to the compact output and
    /// never built; its `x-invariants` run on the tape (Note [Invariants
    /// after the choice]). Anything else (schema-invalid: it competes by
    /// its errors and may be coerced; a schema or rule the tape cannot
    /// run) goes through [`Chooser::offer`] as a `Value`. The tape holds
    /// no inexact number (its reader declines them).
    fn offer_reading(&mut self, reading: Reading<'_>, method: Method, slot: Option<usize>) -> bool {
        let doc = match reading {
            Reading::Value(p) => return self.offer(p.value, method, Vec::new(), &p.inexact, slot),
            Reading::Tape(doc) => doc,
            // Note [Embedded JSON] in `embedded`: a whole string may hold
            // the document; read as a value (rare: a reply that is a string).
            written @ Reading::Written {
                top: Top::Scalar,
                span,
                ..
            } if span.starts_with('"') => {
                return match self.take_parsed(written) {
                    Some(p) => self.offer(p.value, method, Vec::new(), &p.inexact, slot),
                    None => false,
                };
            }
            written @ Reading::Written { .. } => return self.offer_written(written, method, slot),
        };
        if !self.opts.methods.allows(method) {
            self.refused(slot);
            self.recycle(Reading::Tape(doc));
            return false;
        }
        let errors = match self.opts.validator {
            None => Some(Vec::new()),
            Some(v) if v.is_valid_doc(&doc) == Some(true) => {
                if v.invariants().is_empty() {
                    Some(Vec::new())
                } else {
                    v.invariants().evaluate_tape(doc.root())
                }
            }
            Some(_) => None,
        };
        let Some(errors) = errors else {
            // The tape holds no inexact number (its reader declines them).
            let value = doc.root().value();
            self.recycle(Reading::Tape(doc));
            return self.offer(value, method, Vec::new(), &[], slot);
        };
        if let Some(c) = self.compact.as_mut() {
            doc.root().write_compact(&mut c.out);
            c.wrote = true;
        }
        self.recycle(Reading::Tape(doc));
        let mut e = Extraction::none();
        e.method = method;
        e.valid = errors.is_empty();
        e.errors = errors;
        self.won_written(slot, e)
    }

    /// [`Chooser::offer_reading`] for a reading already written (no
    /// schema: it wins as it stands when its method is allowed).
    fn offer_written(&mut self, reading: Reading<'_>, method: Method, slot: Option<usize>) -> bool {
        if !self.opts.methods.allows(method) {
            self.refused(slot);
            self.recycle(reading);
            return false;
        }
        if let Some(c) = self.compact.as_mut() {
            c.wrote = true;
        }
        let mut e = Extraction::none();
        e.method = method;
        e.valid = true;
        self.won_written(slot, e)
    }

    /// [`Chooser::offer`] for a repaired candidate.
    ///
    /// Written to the compact output straight from its nodes (Note
    /// [Repaired nodes] in `repair::node`) when it wins as it stands: no
    /// schema, allowed, every number exact. Anything else is made a
    /// `Value` and offered.
    fn offer_repaired(&mut self, r: RepairedNode<'_>, slot: Option<usize>) -> bool {
        let as_it_stands = self.opts.validator.is_none()
            && r.exact()
            && !r.repairs.contains(&Repair::ReplacedInvalidText)
            && !self.replaced
            && self.opts.methods.allows(Method::Repaired);
        let Some(c) = self.compact.as_mut().filter(|_| as_it_stands) else {
            let r = r.finish();
            return self.offer(r.value, Method::Repaired, r.repairs, &r.inexact, slot);
        };
        r.node.write_compact(&mut c.out);
        c.wrote = true;
        let mut e = Extraction::none();
        e.method = Method::Repaired;
        e.repairs = r.repairs;
        e.valid = true;
        self.won_written(slot, e)
    }

    /// A candidate written to the compact output wins as it stands: its
    /// trace verdict (valid when there is a schema), and `e` (no value)
    /// as the winner.
    fn won_written(&mut self, slot: Option<usize>, e: Extraction) -> bool {
        let judged_valid = self.opts.validator.map(|_| true);
        self.judged(slot, judged_valid, 0, &[]);
        if let Some(rec) = self.trace.as_mut() {
            rec.winner = slot;
        }
        self.winner = Some(e);
        true
    }

    /// Trace a candidate with no span (structured output, markers).
    fn note(&mut self, source: TraceSource, method: Method, parsed: bool) -> Option<usize> {
        self.note_span(source, method, None, parsed, &[], false)
    }

    /// Trace one candidate as found; its verdict is filled in by `offer`.
    /// Returns its slot, `None` when not tracing.
    fn note_span(
        &mut self,
        source: TraceSource,
        method: Method,
        at: Option<(Piece, (usize, usize))>,
        parsed: bool,
        repairs: &[Repair],
        weak: bool,
    ) -> Option<usize> {
        let rec = self.trace.as_mut()?;
        let reason = match (parsed, weak, source) {
            (false, _, TraceSource::Markers) => Reason::NoMarkers,
            (false, _, _) => Reason::NotJson,
            (true, true, _) => Reason::WeakUnused,
            (true, false, _) => Reason::Invalid,
        };
        Some(rec.note(CandidateTrace {
            source,
            method,
            piece: at.map(|a| a.0),
            span: at.map(|a| a.1),
            parsed,
            repairs: repairs.to_vec(),
            weak,
            valid: None,
            errors: 0,
            won: false,
            reason,
        }))
    }

    /// Trace a candidate dropped as prose (Note [No structure from prose]).
    fn note_prose(
        &mut self,
        source: TraceSource,
        method: Method,
        at: Option<(Piece, (usize, usize))>,
        repairs: &[Repair],
    ) {
        let slot = self.note_span(source, method, at, true, repairs, false);
        if let Some(entry) = slot.and_then(|i| self.trace.as_mut()?.entries.get_mut(i)) {
            entry.reason = Reason::Prose;
        }
    }

    /// Trace the candidates of `text` left untried after a winner.
    fn note_unreached(&mut self, piece: Piece, text: &str, rest: &[(Source, &str)]) {
        let Some(rec) = self.trace.as_mut() else {
            return;
        };
        for &(source, span) in rest {
            let (source, method) = match source {
                Source::Fenced => (TraceSource::Fenced, Method::Fenced),
                Source::Bare => (TraceSource::Bare, Method::Bare),
            };
            rec.note(CandidateTrace {
                source,
                method,
                piece: Some(piece),
                span: Some(offset_in(text, span.trim())),
                parsed: false,
                repairs: Vec::new(),
                weak: false,
                valid: None,
                errors: 0,
                won: false,
                reason: Reason::NotReached,
            });
        }
    }

    /// Record in its trace entry that the profile does not allow its method.
    fn refused(&mut self, slot: Option<usize>) {
        if let Some(entry) = slot.and_then(|i| self.trace.as_mut()?.entries.get_mut(i)) {
            entry.reason = Reason::NotAllowed;
        }
    }

    /// Record the verdict of an offered candidate in its trace entry.
    fn judged(
        &mut self,
        slot: Option<usize>,
        valid: Option<bool>,
        errors: usize,
        found: &[Repair],
    ) {
        let Some(entry) = slot.and_then(|i| self.trace.as_mut()?.entries.get_mut(i)) else {
            return;
        };
        entry.valid = valid;
        entry.errors = errors;
        entry.reason = Reason::Invalid;
        for r in found {
            if !entry.repairs.contains(r) {
                entry.repairs.push(*r);
            }
        }
    }

    /// Offer a value; `true` when it wins (the chain stops).
    ///
    /// A value holding `inexact` numbers is never valid: each is an error of
    /// kind `number` and the repair `inexact_number` is listed (Note [Big
    /// numbers] in [`crate::json`]); nor is one holding replaced text (Note
    /// [Replaced text] in `replaced`: errors of kind `text`, the repair
    /// `replaced_invalid_text`). Without a schema it still wins, as the
    /// first candidate does; with one it competes by error count.
    fn offer(
        &mut self,
        value: Value,
        method: Method,
        mut repairs: Vec<Repair>,
        inexact: &[InexactNumber],
        slot: Option<usize>,
    ) -> bool {
        if !self.opts.methods.allows(method) {
            // Note [Methods allowed] in `methods`: not offered; the chain goes on.
            self.refused(slot);
            return false;
        }
        let mut e = Extraction::none();
        e.method = method;
        // Repairs found only now, for the trace entry (the parser's are there).
        let mut found: Vec<Repair> = Vec::new();
        // Note [Embedded JSON] in `embedded`: without a schema, a whole
        // value that is a string holding a document is that document.
        let mut value = value;
        if self.opts.validator.is_none() {
            if let Some(doc) = embedded::whole(&value) {
                value = doc;
                repairs.push(Repair::DecodedEmbeddedJson);
                found.push(Repair::DecodedEmbeddedJson);
            }
        }
        if !inexact.is_empty() && !repairs.contains(&Repair::InexactNumber) {
            repairs.push(Repair::InexactNumber);
            found.push(Repair::InexactNumber);
        }
        let mut own_errors: Vec<_> = inexact.iter().map(Violation::of_inexact).collect();
        // Note [Replaced text] in `replaced`: text that became U+FFFD.
        let replaced = if repairs.contains(&Repair::ReplacedInvalidText) {
            true
        } else if self.replaced && replaced::holds_replacement(&value) {
            repairs.push(Repair::ReplacedInvalidText);
            found.push(Repair::ReplacedInvalidText);
            true
        } else {
            false
        };
        if replaced {
            own_errors.extend(replaced::violations(&value));
        }
        let Some(validator) = self.opts.validator else {
            e.repairs = repairs;
            self.judged(slot, None, own_errors.len(), &found);
            if let Some(rec) = self.trace.as_mut() {
                rec.winner = slot;
            }
            e.value = Some(value);
            e.valid = own_errors.is_empty();
            e.errors = own_errors;
            self.winner = Some(e);
            return true;
        };
        // Note [Embedded JSON] in `embedded`: strings holding the object or
        // array the schema asks for there are decoded before anything else.
        if embedded::may_hold(&value) {
            let (v, decoded) = validator.decode_embedded(value, &embedded::document);
            value = v;
            if !decoded.is_empty() {
                repairs.push(Repair::DecodedEmbeddedJson);
                found.push(Repair::DecodedEmbeddedJson);
            }
        }
        e.repairs = repairs;
        let value = if self.opts.coerce {
            let (v, coercions) = validator.coerce(value);
            e.coercions = coercions;
            v
        } else {
            value
        };
        if own_errors.is_empty() && validator.is_valid(&value) {
            self.judged(slot, Some(true), 0, &found);
            if let Some(rec) = self.trace.as_mut() {
                rec.winner = slot;
            }
            e.value = Some(value);
            e.valid = true;
            self.winner = Some(e);
            return true;
        }
        let mut errors = own_errors;
        errors.extend(validator.errors(&value));
        let n = errors.len();
        self.judged(slot, Some(false), n, &found);
        if self.best.as_ref().is_none_or(|(m, _)| n < *m) {
            if let Some(rec) = self.trace.as_mut() {
                rec.best = slot;
            }
            e.value = Some(value);
            e.errors = errors;
            self.best = Some((n, e));
        }
        false
    }

    /// The extraction, and the trace when tracing (else empty).
    fn finish(self) -> (Extraction, Vec<CandidateTrace>) {
        let schema = self.opts.validator.is_some();
        let trace = self.trace.map(|r| r.finish(schema)).unwrap_or_default();
        let extraction = self
            .winner
            .or_else(|| self.best.map(|(_, e)| e))
            .unwrap_or_else(Extraction::none);
        (extraction, trace)
    }
}

#[cfg(test)]
mod tests;
