//! Several top-level values in one reply (or one fenced block):
//! `{"a":1}\n{"a":2}` (NDJSON-like), `{…}, […]`, `1\n2`, `/* 1 */ {} /* 2 */ {}`.
//!
//! Note \[Several values\]: a text *is* several values when it holds two or
//! more JSON values (objects and arrays, strict or repairable; scalars only
//! strict: a number, `true`/`false`/`null`, a quoted string) and nothing
//! between, before or after them but whitespace, commas and comments (`//`,
//! `/* */`, `#`). Prose anywhere (`Option A: {…} Option B: {…}`) makes it
//! not this case: the usual candidate order holds there. The whole reply is
//! looked at, and the content of each fenced block. Then:
//!
//! - **the schema's root is an array** ([`accepts_array`]: `"type": "array"`,
//!   a type list holding `"array"`, through a local `$ref` or an
//!   `allOf`/`anyOf`/`oneOf` branch): the values are collected into one
//!   array, offered first (method `repaired`, repair
//!   [`Repair::CollectedValues`]). A value that is itself an array is *one
//!   item* (`[1, 2]\n[3]` gives `[[1, 2], [3]]`), never concatenated: the
//!   text said two arrays, and the schema's `items` decides whether arrays
//!   are what it wants. When the collected array does not validate, the
//!   values compete one by one as below;
//! - **with any other schema**, the values are offered in order and the first
//!   that validates wins, with a warning saying which and why
//!   (`3 top-level values; took value 2: the only one valid against the
//!   schema`, `… the first of 2 valid …`); when none does, the one with the
//!   fewest errors (the earliest on a tie, the collected array counting
//!   first), with `… none valid against the schema; took value 2 with the
//!   fewest errors`;
//! - **without a schema**, the first value, as DESIGN.md's order says
//!   (rule 12 of `docs/repair-policy.md`), now with a warning
//!   (`2 top-level values; took the first`) instead of silence.
//!
//! In both of the last two cases an empty object or array (`{}`, `[]`) is
//! tried after the values that say something, as the chain did before
//! (there the empty value beside other text was dropped as prose): so
//! `/* 1 */ {} /* 2 */ {"b": 1}` and `[]{"b": 1}` give `{"b": 1}`, with
//! `2 top-level values; took value 2: the first that is not empty`, and
//! `{}\n{}` gives `{}`. An empty value says nothing an agent meant as its
//! answer; `json_repair` agrees (`[]{"key": "value"}` gives the object,
//! json_repair-0016). The other values are no longer *weak* (Note \[Weak
//! candidates\] in `extract`): weakness is about brackets in prose, and this
//! text holds none, as a whole reply of strict JSON is never weak; so
//! `1\n2` gives `1` where it gave nothing.
//!
//! A repaired object or array outside a fence must still pass the prose
//! rules (Note \[No structure from prose\] in `repair`) and not need a repair
//! that makes a candidate weak (an unquoted word, a dropped key); if one
//! fails, the text is not several values and the usual chain reads it.
//!
//! Bounded: one pass finds the values (the bare-value scan, Note \[Bracket
//! scan\] in `candidates`, per container); each is read once; at most
//! [`MAX_VALUES`] are read, the rest only counted, and a warning says so.

use serde_json::Value;

use super::candidates::{Source, balanced_end};
use super::trace::{Piece, TraceSource, offset_in};
use super::{Chooser, Method, Repair, Top, is_weak, repair, replaced};
use crate::json::{self, InexactNumber};
use crate::validate::Validator;

/// At most this many values of one text are read (the rest are counted and
/// reported in a warning): 10,000 values is far past any real reply, and
/// bounds the work and the memory of a hostile one.
pub(crate) const MAX_VALUES: usize = 10_000;

/// The whole reply `text`: `Some(won)` when it is several values (and they
/// were offered), `None` when it is not (the usual chain goes on).
///
/// `bare` are the text's candidates (`candidates::candidates`): a value
/// that is one of its bare spans is not scanned again.
pub(super) fn whole(
    chooser: &mut Chooser<'_, '_>,
    piece: Piece,
    text: &str,
    bare: &[(Source, &str)],
) -> Option<bool> {
    let mut known = bare
        .iter()
        .filter(|(s, _)| *s == Source::Bare)
        .map(|&(_, span)| offset_in(text, span))
        .peekable();
    let found = read(text, false, &mut |i| {
        while known.next_if(|&(start, _)| start < i).is_some() {}
        known.next_if(|&(start, _)| start == i).map(|(_, end)| end)
    })?;
    Some(choose(chooser, piece, text, found, TraceSource::Bare))
}

/// The content `span` (a slice of `text`) of a fenced block, as [`whole`].
pub(super) fn fenced(
    chooser: &mut Chooser<'_, '_>,
    piece: Piece,
    text: &str,
    span: &str,
) -> Option<bool> {
    if !may_be_several(span) {
        return None;
    }
    let found = read(span, true, &mut |_| None)?;
    Some(choose(chooser, piece, text, found, TraceSource::Fenced))
}

/// Note \[Several values in a fence\]: looking for a second value costs a
/// scan of the first. Done on every reply and block that is not strict
/// JSON, it took `run_chain` from 922 to 983 million instructions (+6.5%,
/// callgrind, release, the 20,000-reply bench corpus through
/// `bench_replies`, every value unchanged). Now the whole reply's values
/// reuse the bare spans the chain finds anyway, and a fenced block (no
/// bare span) is scanned only when it may hold a second value: it is one
/// line; or its first line holds two values (`null, {a: 1,` then more
/// lines); or a later line, at the first line's indentation, starts as a
/// value, a comma or a comment can, or closes a value and goes on
/// (`{…}\n{…}`, `}, {…}`). A pretty-printed value does none of these (its
/// inner lines are indented further, its last line is a bare `}`). A block
/// whose later values sit further indented than its first is read as one
/// value, as before. Measured the same way: 952 million (+3.3% over no
/// detection; 947 million before the first-line rule); the extraction's
/// wall time (`bench_replies`, three runs each, a loaded 2-core machine)
/// 0.231–0.274 s before, 0.239–0.246 s after.
fn may_be_several(content: &str) -> bool {
    let b = content.as_bytes();
    let Some(start) = b.iter().position(|c| !c.is_ascii_whitespace()) else {
        return false;
    };
    let line_start = b
        .get(..start)
        .and_then(|h| memchr::memrchr(b'\n', h))
        .map_or(0, |k| k + 1);
    let indent = b.get(line_start..start).unwrap_or_default();
    let first_end = b
        .get(start..)
        .and_then(|r| memchr::memchr(b'\n', r))
        .map_or(b.len(), |k| start + k);
    let rest = b.get(first_end..).unwrap_or_default();
    if rest.trim_ascii().is_empty() {
        return true;
    }
    if content
        .get(start..first_end)
        .is_some_and(|line| split(line, &mut |_| None).is_some())
    {
        return true;
    }
    memchr::memchr_iter(b'\n', rest).any(|nl| {
        let at = first_end + nl + 1;
        let Some(line) = b.get(at..).filter(|l| l.starts_with(indent)) else {
            return false;
        };
        let line = line.get(indent.len()..).unwrap_or_default();
        match line.first() {
            Some(
                b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b',' | b'/' | b'#',
            ) => true,
            // A value closed here and another after it on the line.
            Some(b'}' | b']') => line
                .iter()
                .skip(1)
                .take_while(|&&c| c != b'\n')
                .any(|&c| !(c.is_ascii_whitespace() || c == b',')),
            _ => false,
        }
    })
}

/// One value of several, as read.
struct Item<'t> {
    span: &'t str,
    value: Value,
    method: Method,
    repairs: Vec<Repair>,
    inexact: Vec<InexactNumber>,
}

/// The values of a text that is several values.
struct Found<'t> {
    /// The first [`MAX_VALUES`], read.
    items: Vec<Item<'t>>,
    /// How many there are in all.
    total: usize,
}

/// Read `span` as several values; `None` when it is not (one value, prose,
/// a value that does not read).
fn read<'t>(
    span: &'t str,
    fenced: bool,
    known: &mut dyn FnMut(usize) -> Option<usize>,
) -> Option<Found<'t>> {
    let (spans, total) = split(span, known)?;
    let mut items = Vec::with_capacity(spans.len());
    for s in spans {
        items.push(read_one(s, fenced)?);
    }
    Some(Found { items, total })
}

/// One value's span: strict JSON, else (an object or array) repaired.
fn read_one(span: &str, fenced: bool) -> Option<Item<'_>> {
    if let Some(p) = json::parse_if_json(span) {
        return Some(Item {
            span,
            value: p.value,
            method: if fenced { Method::Fenced } else { Method::Bare },
            repairs: Vec::new(),
            inexact: p.inexact,
        });
    }
    if !span.starts_with(['{', '[']) {
        return None;
    }
    let r = repair::repair_node(span)?;
    // Outside a fence, the repairs that make a bare candidate weak still
    // hold (its shape does not here: a non-empty object stands for "judge
    // the repairs only"), and so do the prose rules that read the value
    // itself; those that read the text around it do not, as it is known to
    // be other values and separators (`null` beside `[]` is no word).
    if !fenced
        && (is_weak(Top::Object { empty: false }, span, &r.repairs)
            || repair::keeps_nothing(&r.node, span, "", "", &r.repairs))
    {
        return None;
    }
    let r = r.finish();
    Some(Item {
        span,
        value: r.value,
        method: Method::Repaired,
        repairs: r.repairs,
        inexact: r.inexact,
    })
}

/// The spans of the values of `s` (the first [`MAX_VALUES`]) and how many
/// there are, when `s` is only values and separators and holds two or
/// more; else `None`. One pass; a text of one value costs the scan of that
/// value, unless `known(i)` gives the end of the container at `i`.
fn split<'t>(
    s: &'t str,
    known: &mut dyn FnMut(usize) -> Option<usize>,
) -> Option<(Vec<&'t str>, usize)> {
    let b = s.as_bytes();
    let mut i = skip_separators(s, 0);
    let mut spans = Vec::new();
    let mut total = 0usize;
    while let Some(&c) = b.get(i) {
        let end = match c {
            b'{' | b'[' => known(i).unwrap_or_else(|| balanced_end(b, i)),
            b'"' => string_end(b, i)?,
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => scalar_end(b, i)?,
            _ => return None,
        };
        // A scalar must be followed by a separator: `1{` or `"a""b"` is
        // not two values.
        if !matches!(c, b'{' | b'[') && !at_separator(s, end) {
            return None;
        }
        total += 1;
        if spans.len() < MAX_VALUES {
            spans.push(s.get(i..end)?);
        }
        i = skip_separators(s, end);
        if total == 1 && i >= b.len() {
            return None;
        }
    }
    (total >= 2).then_some((spans, total))
}

/// Past the whitespace (any Unicode space), commas and comments from `i`.
fn skip_separators(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while let Some(&c) = b.get(i) {
        match c {
            b',' => i += 1,
            c if c.is_ascii_whitespace() => i += 1,
            b'#' => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = b
                    .get(i + 2..)
                    .and_then(|r| memchr::memmem::find(r, b"*/"))
                    .map_or(b.len(), |k| i + 2 + k + 2);
            }
            0x80.. => match s.get(i..).and_then(|r| r.chars().next()) {
                Some(ch) if ch.is_whitespace() => i += ch.len_utf8(),
                _ => return i,
            },
            _ => return i,
        }
    }
    i
}

/// Does a separator (or the end) start at `i`?
fn at_separator(s: &str, i: usize) -> bool {
    skip_separators(s, i) > i || i >= s.len()
}

/// The index of the `\n` ending the line at `i`, or the end.
fn line_end(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|r| memchr::memchr(b'\n', r))
        .map_or(b.len(), |k| i + k)
}

/// Just past the closing quote of the strict string opening at `i`; `None`
/// when it never closes or holds a raw control character (not strict).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match *b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
}

/// The end of the number or literal at `i`; `None` when the token is
/// neither (a word: prose). Read strictly later.
fn scalar_end(b: &[u8], i: usize) -> Option<usize> {
    let len = b
        .get(i..)
        .unwrap_or_default()
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_')))
        .unwrap_or(b.len() - i);
    let token = b.get(i..i + len)?;
    let literal = matches!(token, b"true" | b"false" | b"null");
    let number = token
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'+' | b'-' | b'e' | b'E'));
    (literal || number).then_some(i + len)
}

/// Does `schema` (the root, `root`) declare that the instance is an array?
/// `"type": "array"` or a type list holding it; else a local `$ref`
/// (`#/…`) to such a schema, or an `allOf`/`anyOf`/`oneOf` branch that is
/// one. A root with no type (it accepts objects too) does not count.
pub(crate) fn accepts_array(root: &Value) -> bool {
    declares_array(root, root, 0)
}

fn declares_array(schema: &Value, root: &Value, depth: u8) -> bool {
    // `$ref` cycles (`{"$ref": "#"}`) end here.
    if depth > 16 {
        return false;
    }
    let Value::Object(m) = schema else {
        return false;
    };
    if let Some(t) = m.get("type") {
        return match t {
            Value::String(t) => t == "array",
            Value::Array(ts) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
    }
    if let Some(target) = m
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        if declares_array(target, root, depth + 1) {
            return true;
        }
    }
    ["allOf", "anyOf", "oneOf"].iter().any(|k| {
        m.get(*k)
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().any(|b| declares_array(b, root, depth + 1)))
    })
}

/// Which of our candidates is the chooser's best so far.
#[derive(Clone, Copy)]
enum Best {
    Collected,
    Value(usize),
}

/// Offer the values of `found` (Note \[Several values\]); `true` when one
/// won. Each is traced as a candidate of `source` in `text`.
fn choose(
    chooser: &mut Chooser<'_, '_>,
    piece: Piece,
    text: &str,
    found: Found<'_>,
    source: TraceSource,
) -> bool {
    let Found { items, total } = found;
    let read = items.len();
    // Without a schema the first value is taken whatever the rest hold.
    let validator = chooser.opts.validator;
    let cap = (total > read && validator.is_some())
        .then(|| format!("{total} top-level values; only the first {read} were read (the limit)"));
    let mut best: Option<Best> = None;
    if validator.is_some_and(|v| accepts_array(v.schema())) {
        let (value, repairs, inexact) = collect(&items);
        let at = match (items.first(), items.last()) {
            (Some(a), Some(z)) => Some((
                piece,
                (offset_in(text, a.span).0, offset_in(text, z.span).1),
            )),
            _ => None,
        };
        let slot = chooser.note_span(source, Method::Repaired, at, true, &repairs, false);
        let before = best_errors(chooser);
        if chooser.offer(value, Method::Repaired, repairs, &inexact, slot) {
            if let Some(w) = cap {
                warn_winner(chooser, w);
            }
            return true;
        }
        if best_errors(chooser) != before {
            best = Some(Best::Collected);
        }
    }
    // Empty values go last (stable: the rest keep their order).
    let empty: Vec<bool> = items.iter().map(|it| says_nothing(&it.value)).collect();
    let mut order: Vec<(usize, Item<'_>)> = items.into_iter().enumerate().collect();
    order.sort_by_key(|&(k, _)| empty.get(k).copied().unwrap_or_default());
    let mut rest = order.into_iter();
    while let Some((k, item)) = rest.next() {
        let at = Some((piece, offset_in(text, item.span)));
        let slot = chooser.note_span(source, item.method, at, true, &item.repairs, false);
        let before = best_errors(chooser);
        if chooser.offer(item.value, item.method, item.repairs, &item.inexact, slot) {
            let why = match validator {
                None if k == 0 => format!("{total} top-level values; took the first"),
                None if !empty.get(..k).is_some_and(|e| e.iter().all(|&x| x)) => {
                    format!("{total} top-level values; took value {}", k + 1)
                }
                None => format!(
                    "{total} top-level values; took value {}: the first that is not empty",
                    k + 1
                ),
                Some(v) => {
                    let later = rest.filter(|(_, it)| valid_alone(chooser, v, it)).count();
                    if later == 0 {
                        format!(
                            "{total} top-level values; took value {}: the only one valid against the schema",
                            k + 1
                        )
                    } else {
                        format!(
                            "{total} top-level values; took value {}: the first of {} valid against the schema",
                            k + 1,
                            later + 1
                        )
                    }
                }
            };
            warn_winner(chooser, why);
            if let Some(w) = cap {
                warn_winner(chooser, w);
            }
            return true;
        }
        if best_errors(chooser) != before {
            best = Some(Best::Value(k));
        }
    }
    if let Some(b) = best {
        let took = match b {
            Best::Collected => "took the collected array".to_owned(),
            Best::Value(k) => format!("took value {}", k + 1),
        };
        warn_best(
            chooser,
            format!(
                "{total} top-level values; none valid against the schema; {took} with the fewest errors"
            ),
        );
        if let Some(w) = cap {
            warn_best(chooser, w);
        }
    }
    false
}

/// An empty object or array: it says nothing, so it is tried after the
/// values that say something (Note \[Several values\]).
fn says_nothing(value: &Value) -> bool {
    match value {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// The values as one array: its repairs ([`Repair::CollectedValues`], then
/// each value's in order of first use) and inexact numbers (their paths
/// under the value's index).
fn collect(items: &[Item<'_>]) -> (Value, Vec<Repair>, Vec<InexactNumber>) {
    let mut repairs = vec![Repair::CollectedValues];
    let mut inexact = Vec::new();
    let mut values = Vec::with_capacity(items.len());
    for (k, it) in items.iter().enumerate() {
        values.push(it.value.clone());
        for r in &it.repairs {
            if !repairs.contains(r) {
                repairs.push(*r);
            }
        }
        inexact.extend(it.inexact.iter().map(|n| InexactNumber {
            instance_path: format!("/{k}{}", n.instance_path),
            ..n.clone()
        }));
    }
    (Value::Array(values), repairs, inexact)
}

/// Would `item` win alone as [`Chooser::offer`] judges it (allowed, every
/// number exact, no replaced text, valid after coercion)? Used only to say
/// how many values were valid.
fn valid_alone(chooser: &Chooser<'_, '_>, v: &Validator, item: &Item<'_>) -> bool {
    if !chooser.opts.methods.allows(item.method)
        || !item.inexact.is_empty()
        || item.repairs.contains(&Repair::ReplacedInvalidText)
        || (chooser.replaced && replaced::holds_replacement(&item.value))
    {
        return false;
    }
    if chooser.opts.coerce {
        v.is_valid(&v.coerce(item.value.clone()).0)
    } else {
        v.is_valid(&item.value)
    }
}

/// The error count of the chooser's best so far: it changes exactly when
/// an offer became the best (only fewer errors replace it).
fn best_errors(chooser: &Chooser<'_, '_>) -> Option<usize> {
    chooser.best.as_ref().map(|(n, _)| *n)
}

fn warn_winner(chooser: &mut Chooser<'_, '_>, warning: String) {
    if let Some(e) = chooser.winner.as_mut() {
        e.warnings.push(warning);
    }
}

fn warn_best(chooser: &mut Chooser<'_, '_>, warning: String) {
    if let Some((_, e)) = chooser.best.as_mut() {
        e.warnings.push(warning);
    }
}

#[cfg(test)]
mod tests;
