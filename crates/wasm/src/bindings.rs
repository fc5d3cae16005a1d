//! The JavaScript surface: every export of the `.wasm`, each a thin call
//! into the modules beside this one. The package's `index.js` wraps these
//! (values stringified and parsed there: Note \[Text crosses as JSON\] in the
//! crate root); nobody is meant to call them directly.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use agentshape_core::json;
use wasm_bindgen::prelude::*;

use crate::errors::{Failure, Result};
use crate::{check, decode, extract, lint, schema, validate};

/// A failure as a JavaScript `Error` named after its kind (Note \[Errors
/// across the boundary\] in `errors`).
fn thrown(f: &Failure) -> JsValue {
    let e = js_sys::Error::new(&f.message);
    e.set_name(f.kind.name());
    e.into()
}

fn js<T>(r: Result<T>) -> std::result::Result<T, JsValue> {
    r.map_err(|f| thrown(&f))
}

// Note [Text written in place]: a `&str` argument costs wasm-bindgen's
// glue a `malloc`, a JavaScript loop over the ASCII prefix, a `slice`, two
// `realloc`s and `encodeInto` for the rest, and a `free`; and the package
// checked every string's well-formedness first (a lone surrogate would
// otherwise reach us as U+FFFD). For `Validator.isValidJson`, the hot call
// of a validation loop, the package instead encodes the string once, with
// `TextEncoder.encodeInto`, straight into a buffer this module keeps
// (`textBuffer`), and `isValidAt` answers with a number: its flags say
// whether the bytes hold U+FFFD, and only then does the package check the
// string (`isWellFormed`), so a lone surrogate is still an `InputError`
// while ordinary text is never walked in JavaScript. The buffer is freed
// after a call over 16 MiB, so one huge instance does not keep its memory.
// `extract` and `repair` of a string take the same road (`extractPlainAt`,
// `RawExtractor.extractAt`, `repairAt`); the package sends a string of over
// 1 Mi UTF-16 units through the `&str` exports instead, whose glue sizes
// its buffer to the bytes rather than to three per unit.
//
// Note [Answers read in place]: their answers come back the same way. A
// `String` return cost the glue a copy out of a Rust allocation that is
// then freed, and a `TextDecoder.decode`: in Node 1.7 µs for a 700-byte
// repair (a C++ call and a two-byte string), about 8% of `repair`'s
// profile. So these exports write their answer into a buffer this module
// keeps (`outBuffer`) and answer a number: the answer's length in bytes
// times four, plus its encoding (0 UTF-8, 1 ASCII, 2 UTF-16
// little-endian, 3 Latin-1); -1 when the text held U+FFFD (as above);
// -2 - n when it is an error, the buffer then holding its n bytes: its
// kind's name, a newline and its message, so the package makes the one
// `AgentshapeError` (a Rust-made `Error` cost a second object and stack
// walk per throw: 1,500 of the 20,000 bench replies have no JSON, and
// `repair` throws for them as `jsonrepair` does). The encodings are
// chosen for the reader:
// - ASCII is read by `Buffer`'s `latin1` slice where `Buffer` is (Node,
//   Bun): 0.3 µs for those 700 bytes, and a one-byte string, which
//   `JSON.parse` also reads faster;
// - `extract`'s result, which only `JSON.parse` reads, is made ASCII: its
//   other characters written as `\u` escapes (core's
//   `json::escape_non_ascii`; the bench replies hold five each, and
//   decoding and parsing their results took 27% less); where `Buffer` is,
//   U+00A0 to U+00FF are written as one byte each instead (Latin-1, read
//   by the same `latin1` slice; core's `json::escape_beyond_latin1`):
//   `JSON.parse` copies a string without escapes and reads one with them
//   a character at a time, and `é`, `ï`, `ñ` are most of those
//   characters (parsing the bench replies' values: 8% faster; `extract`
//   of the 20,000 replies, five interleaved rounds: 3% faster);
// - `repair`'s answer is the user's text and keeps its characters, in
//   UTF-16 where `Buffer` is, which copies them into a two-byte string in
//   0.5 µs where `TextDecoder` took 2.1 µs to decode the same repair's
//   UTF-8 (core's `json::utf16le_of`; the bench's 14,579 repairs that are
//   not ASCII), and in UTF-8 elsewhere.
// A rewritten answer is written into a spare buffer, which then changes
// places with the out buffer. The package reads the answer before its next
// call; the buffer is emptied at the next answer, and dropped then when it
// had grown past 16 MiB.
thread_local! {
    static TEXT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The UTF-16 a string is written in before [`text_from_units`] makes
    /// it the UTF-8 at [`text_buffer`] (Note \[Text written as UTF-16\]).
    static UNITS: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The length of the text [`text_from_units`] last wrote, which held
    /// no lone surrogate ([`transcoded`]). Any other writer of the text
    /// buffer asks for it with [`text_buffer`], which clears this.
    static TRANSCODED: Cell<Option<usize>> = const { Cell::new(None) };
    static OUT: RefCell<Answer> = const { RefCell::new(Answer { out: Vec::new(), spare: Vec::new() }) };
}

/// The out buffer, and where an answer is rewritten (escaped, or made
/// UTF-16) before the two change places: no allocation per answer.
struct Answer {
    out: Vec<u8>,
    spare: Vec<u8>,
}

/// An in-place answer: the text at [`text_buffer`] held U+FFFD (Note
/// \[Answers read in place\]).
const NOT_ANSWERED: f64 = -1.0;

/// Where the fields after the value in the last `extract` result start
/// and which common fields they are (Note \[The fields apart\] in
/// `extract`, [`extract::rest_info`]).
#[wasm_bindgen(js_name = restInfo)]
pub fn rest_info() -> u32 {
    extract::rest_info()
}

/// The address of the answer the last in-place export wrote (Note
/// \[Answers read in place\]).
#[wasm_bindgen(js_name = outBuffer)]
pub fn out_buffer() -> usize {
    OUT.with(|o| o.borrow().out.as_ptr().addr())
}

/// How an answer's characters outside ASCII are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NonAscii {
    /// As they are, in UTF-8: the answer is the user's text (`repair`).
    Kept,
    /// As they are, the whole answer then in UTF-16 (little-endian), which
    /// Node's `Buffer` reads by copying (`repair` when the package runs
    /// there; core's `json::utf16le_of`).
    Utf16,
    /// As `\u` escapes: the answer is JSON only `JSON.parse` reads
    /// (`extract`'s result), and ASCII reads faster (core's
    /// `json::escape_non_ascii`).
    Escaped,
    /// U+00A0 to U+00FF as one byte each, the others as `\u` escapes:
    /// `extract`'s result where the package reads it with `Buffer`'s
    /// `latin1` slice (core's `json::escape_beyond_latin1`).
    Latin1,
}

/// An answer's encoding, its code's last two bits (Note \[Answers read in
/// place\]).
#[derive(Clone, Copy)]
enum Encoding {
    Utf8 = 0,
    Ascii = 1,
    Utf16 = 2,
    Latin1 = 3,
}

/// `f` of the text at [`text_buffer`], writing its answer into the out
/// buffer, as the number the package reads (Note \[Answers read in
/// place\]).
fn answer_in_place(
    len: usize,
    non_ascii: NonAscii,
    f: impl FnOnce(&str, &mut Vec<u8>) -> Result<()>,
) -> f64 {
    OUT.with(|o| {
        let Ok(mut answer) = o.try_borrow_mut() else {
            // Not re-entered: the module calls no JavaScript while it answers.
            return NOT_ANSWERED;
        };
        let Answer { out, spare } = &mut *answer;
        for buffer in [&mut *out, &mut *spare] {
            if buffer.capacity() > KEEP_TEXT {
                *buffer = Vec::new();
            }
            buffer.clear();
        }
        match with_text(len, |t| f(t, out)) {
            None => NOT_ANSWERED,
            Some(Ok(())) => {
                let encoding = match non_ascii {
                    _ if out.is_ascii() => return answer_code(out.len(), Encoding::Ascii),
                    NonAscii::Kept => return answer_code(out.len(), Encoding::Utf8),
                    NonAscii::Utf16 => {
                        json::utf16le_of(out, spare);
                        Encoding::Utf16
                    }
                    NonAscii::Escaped => {
                        json::escape_non_ascii(out, spare);
                        Encoding::Ascii
                    }
                    NonAscii::Latin1 => {
                        json::escape_beyond_latin1(out, spare);
                        Encoding::Latin1
                    }
                };
                std::mem::swap(out, spare);
                answer_code(out.len(), encoding)
            }
            Some(Err(e)) => {
                out.clear();
                out.extend_from_slice(e.kind.name().as_bytes());
                out.push(b'\n');
                out.extend_from_slice(e.message.as_bytes());
                -(out.len() as f64) - 2.0
            }
        }
    })
}

/// An answer's length in bytes times four, plus its encoding.
fn answer_code(len: usize, encoding: Encoding) -> f64 {
    len as f64 * 4.0 + f64::from(encoding as u8)
}

/// The bytes above which the text buffer is freed after use.
const KEEP_TEXT: usize = 16 << 20;

/// The address in this module's memory of a buffer of at least `len`
/// bytes for the next `isValidAt` (Note \[Text written in place\]).
#[wasm_bindgen(js_name = textBuffer)]
pub fn text_buffer(len: usize) -> usize {
    TRANSCODED.set(None);
    TEXT.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() < len {
            t.resize(len, 0);
        }
        t.as_ptr().addr()
    })
}

// Note [Text written as UTF-16]: `encodeInto` was the largest single
// cost of the package's `repair` in Node (15% of a V8 profile; 20 ms for
// the 20,000 bench replies, most of them two-byte strings for an arrow or
// a dash), and the UTF-8 check and U+FFFD scan of its bytes another 4%;
// `isValidJson` paid it on every line too (7% of validating the 100,000
// bench instances from text).
// Node's `Buffer` writes a string's UTF-16 units by copying them (3.4 ms
// for the same replies), so where `Buffer` is the package writes them at
// [`units_buffer`] and [`text_from_units`] makes them the UTF-8 at
// [`text_buffer`] (core's `json::utf8_of_utf16le`, 16 units a step while
// they are ASCII). A lone surrogate is found in that pass, so the bytes
// need no U+FFFD scan after (the UTF-8 check stays: making a `&str`
// without it needs `unsafe`), and text holding a real U+FFFD is read in
// place too. Elsewhere (browsers, Deno) the package keeps `encodeInto`.

/// The address in this module's memory of room for `units` UTF-16 units
/// (two bytes each, little-endian), for the next [`text_from_units`] (Note
/// \[Text written as UTF-16\]).
#[wasm_bindgen(js_name = unitsBuffer)]
pub fn units_buffer(units: usize) -> usize {
    UNITS.with(|u| {
        let mut u = u.borrow_mut();
        let bytes = units.saturating_mul(2);
        if u.len() < bytes {
            u.resize(bytes, 0);
        }
        u.as_ptr().addr()
    })
}

/// The first `units` units at [`units_buffer`] written at [`text_buffer`]
/// as UTF-8: their length in bytes, or -1 when they hold a lone surrogate
/// (the package then takes the road that reports it), or when fewer
/// than `units` were asked for. The next in-place export then reads the
/// text without the U+FFFD scan.
#[wasm_bindgen(js_name = textFromUnits)]
pub fn text_from_units(units: usize) -> f64 {
    text_buffer(units.saturating_mul(3));
    let written = UNITS.with(|u| {
        let u = u.borrow();
        let utf16le = u.get(..units.saturating_mul(2))?;
        TEXT.with(|t| json::utf8_of_utf16le(utf16le, &mut t.borrow_mut()))
    });
    release_if_large(&UNITS);
    TRANSCODED.set(written);
    written.map_or(-1.0, |n| n as f64)
}

/// Whether the first `len` bytes at [`text_buffer`] are what
/// [`text_from_units`] just wrote, so hold no lone surrogate and need no
/// U+FFFD scan (their U+FFFD are the user's). Asked once per text: the
/// answer is taken.
fn transcoded(len: usize) -> bool {
    TRANSCODED.take() == Some(len)
}

/// `f` of the text JavaScript wrote at [`text_buffer`] (its first `len`
/// bytes), or `None` when they hold U+FFFD: the package then checks the
/// string (a lone surrogate became U+FFFD in `encodeInto`) and calls the
/// export taking a `&str` (Note \[Text written in place\]). [`transcoded`]
/// text is not scanned (Note \[Text written as UTF-16\]).
fn with_text<T>(len: usize, f: impl FnOnce(&str) -> T) -> Option<T> {
    let checked = transcoded(len);
    let out = TEXT.with(|t| {
        let t = t.borrow();
        let bytes = t.get(..len).unwrap_or_default();
        if !checked && validate::holds_replacement(bytes) {
            return None;
        }
        // `encodeInto` writes UTF-8; the check is the price of no `unsafe`
        // (simdutf8's 16 bytes a step: `std`'s was 2% of `extract`'s V8
        // profile).
        simdutf8::basic::from_utf8(bytes).ok().map(f)
    });
    release_if_large(&TEXT);
    out
}

/// Frees `buffer` (the text or the units buffer) when it has grown past
/// [`KEEP_TEXT`], so one long string does not keep its memory.
fn release_if_large(buffer: &'static std::thread::LocalKey<RefCell<Vec<u8>>>) {
    buffer.with(|b| {
        if let Ok(mut b) = b.try_borrow_mut()
            && b.len() > KEEP_TEXT
        {
            *b = Vec::new();
        }
    });
}

/// The crate's version (the package's `version`).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// A compiled JSON Schema (with its `x-invariants`).
#[wasm_bindgen(js_name = RawValidator)]
pub struct JsValidator {
    inner: Rc<agentshape_core::validate::Validator>,
}

#[wasm_bindgen(js_class = RawValidator)]
impl JsValidator {
    /// Compile `schema` (JSON text) with `options` (JSON text).
    #[wasm_bindgen(constructor)]
    pub fn new(schema: &str, options: &str) -> std::result::Result<JsValidator, JsValue> {
        let inner = js(schema::compile(schema, options))?;
        Ok(JsValidator {
            inner: Rc::new(inner),
        })
    }

    /// The violations of the JSON text `instance`, as JSON text.
    pub fn validate(&self, instance: &str) -> std::result::Result<String, JsValue> {
        js(validate::verdict_json(&self.inner, instance))
    }

    /// [`JsValidator::validate`] of the `len` bytes the package wrote at
    /// [`text_buffer`], answered in the out buffer (Note \[Answers read in
    /// place\]): for `validateJson(line)` the way `isValidAt` is for
    /// `isValidJson(line)`. The violations are JSON only `JSON.parse`
    /// reads, so they cross as `extract`'s result does (Latin-1 when
    /// `latin1`, else ASCII). Measured: `validateJson` of the 100,000 bench
    /// instances 0.63–0.66 s through the `&str` export (its glue's
    /// `encodeInto`, the package's well-formedness check, a `String`
    /// returned), against 0.44 s for `isValidJson`.
    #[wasm_bindgen(js_name = validateAt)]
    pub fn validate_at(&self, len: usize, latin1: bool) -> f64 {
        answer_in_place(len, escaped(latin1), |t, out| {
            let found = validate::verdict(&self.inner, t)?;
            out.extend_from_slice(crate::errors::to_json(&found).as_bytes());
            Ok(())
        })
    }

    /// [`JsValidator::is_valid`] on the `len` bytes the package wrote
    /// at [`text_buffer`]: flags (`validate::is_valid_flags`; Note \[Text
    /// written in place\]).
    #[wasm_bindgen(js_name = isValidAt)]
    pub fn is_valid_at(&self, len: usize) -> u32 {
        let scan = !transcoded(len);
        let flags = TEXT.with(|t| {
            let t = t.borrow();
            validate::is_valid_flags(&self.inner, t.get(..len).unwrap_or_default(), scan)
        });
        release_if_large(&TEXT);
        flags
    }

    /// Whether the JSON text `instance` is valid.
    #[wasm_bindgen(js_name = isValid)]
    pub fn is_valid(&self, instance: &str) -> std::result::Result<bool, JsValue> {
        js(validate::is_valid(&self.inner, instance))
    }

    /// `[value, coercions]` as JSON text.
    pub fn coerce(&self, instance: &str) -> std::result::Result<String, JsValue> {
        js(validate::coerce_json(&self.inner, instance))
    }

    /// The schema as given, as JSON text.
    #[wasm_bindgen(js_name = schemaJson)]
    pub fn schema_json(&self) -> String {
        crate::errors::to_json(self.inner.schema())
    }

    /// An extractor validating against this schema.
    pub fn extractor(&self, options: &str) -> std::result::Result<JsExtractor, JsValue> {
        let setup = js(extract::Setup::new(Some(Rc::clone(&self.inner)), options))?;
        Ok(JsExtractor { setup })
    }

    /// `check` with this schema: the report as JSON text.
    pub fn check(&self, values: &str, options: &str) -> std::result::Result<String, JsValue> {
        js(check::check(values, Some(Rc::clone(&self.inner)), options))
    }
}

/// Compiled extraction settings.
#[wasm_bindgen(js_name = RawExtractor)]
pub struct JsExtractor {
    setup: extract::Setup,
}

#[wasm_bindgen(js_class = RawExtractor)]
impl JsExtractor {
    /// Settings without a schema (`options`: profile, coerce, format).
    #[wasm_bindgen(constructor)]
    pub fn new(options: &str) -> std::result::Result<JsExtractor, JsValue> {
        let setup = js(extract::Setup::new(None, options))?;
        Ok(JsExtractor { setup })
    }

    /// The extraction of `text`, as JSON text.
    pub fn extract(&self, text: &str) -> String {
        self.setup.run_json(text)
    }

    /// [`Self::extract`] of the text at [`text_buffer`], answered in the
    /// out buffer (Note \[Answers read in place\]).
    #[wasm_bindgen(js_name = extractAt)]
    pub fn extract_at(&self, len: usize, latin1: bool) -> f64 {
        answer_in_place(len, escaped(latin1), |t, out| {
            self.setup.run_into(t, out);
            Ok(())
        })
    }
}

/// `extract(text)` with no options, as JSON text.
#[wasm_bindgen(js_name = extractPlain)]
pub fn extract_plain(text: &str) -> String {
    extract::extract_plain(text)
}

/// [`extract_plain`] of the text at [`text_buffer`], answered in the out
/// buffer (Note \[Answers read in place\]).
#[wasm_bindgen(js_name = extractPlainAt)]
pub fn extract_plain_at(len: usize, latin1: bool) -> f64 {
    answer_in_place(len, escaped(latin1), |t, out| {
        extract::extract_plain_into(t, out);
        Ok(())
    })
}

/// How `extract`'s result is written: in Latin-1 when the package reads it
/// with `Buffer`'s `latin1` slice (`latin1`), else in ASCII.
fn escaped(latin1: bool) -> NonAscii {
    if latin1 {
        NonAscii::Latin1
    } else {
        NonAscii::Escaped
    }
}

/// `repair(text)`: the repaired JSON text.
#[wasm_bindgen]
pub fn repair(text: &str) -> std::result::Result<String, JsValue> {
    js(extract::repair(text))
}

/// [`repair`] of the text at [`text_buffer`], answered in the out buffer
/// (Note \[Answers read in place\]), in UTF-16 when `utf16` (the package
/// asks for it where `Buffer` reads it: Node, Bun).
#[wasm_bindgen(js_name = repairAt)]
pub fn repair_at(len: usize, utf16: bool) -> f64 {
    let non_ascii = if utf16 {
        NonAscii::Utf16
    } else {
        NonAscii::Kept
    };
    answer_in_place(len, non_ascii, extract::repair_into)
}

/// `check` without a schema (a profile's, or contradictions only).
#[wasm_bindgen(js_name = checkValues)]
pub fn check_values(values: &str, options: &str) -> std::result::Result<String, JsValue> {
    js(check::check(values, None, options))
}

/// `parse` of a transcript's text.
#[wasm_bindgen]
pub fn parse(
    text: &str,
    format: &str,
    max_line_bytes: usize,
) -> std::result::Result<String, JsValue> {
    js(decode::parse(text.as_bytes(), format, max_line_bytes))
}

/// `parse` of a transcript's bytes (invalid UTF-8 lines are skipped and counted).
#[wasm_bindgen(js_name = parseBytes)]
pub fn parse_bytes(
    bytes: &[u8],
    format: &str,
    max_line_bytes: usize,
) -> std::result::Result<String, JsValue> {
    js(decode::parse(bytes, format, max_line_bytes))
}

/// An incremental transcript decoder.
#[wasm_bindgen(js_name = RawDecoder)]
pub struct JsDecoder {
    inner: decode::Stream,
}

#[wasm_bindgen(js_class = RawDecoder)]
impl JsDecoder {
    /// A decoder for `format`.
    #[wasm_bindgen(constructor)]
    pub fn new(format: &str, max_line_bytes: usize) -> std::result::Result<JsDecoder, JsValue> {
        Ok(JsDecoder {
            inner: js(decode::Stream::new(format, max_line_bytes))?,
        })
    }

    /// Feed text; the events of the completed lines as JSON text.
    pub fn feed(&mut self, chunk: &str) -> std::result::Result<String, JsValue> {
        js(self.inner.feed(chunk.as_bytes()))
    }

    /// Feed bytes; the events of the completed lines as JSON text.
    #[wasm_bindgen(js_name = feedBytes)]
    pub fn feed_bytes(&mut self, chunk: &[u8]) -> std::result::Result<String, JsValue> {
        js(self.inner.feed(chunk))
    }

    /// The run summary as JSON text; the decoder is spent after.
    pub fn finish(&mut self) -> std::result::Result<String, JsValue> {
        js(self.inner.finish())
    }
}

/// `lint(schema, provider)` as JSON text.
#[wasm_bindgen]
pub fn lint(schema: &str, provider: &str) -> std::result::Result<String, JsValue> {
    js(lint::lint(schema, provider))
}

/// `fix(schema, provider)` as JSON text.
#[wasm_bindgen]
pub fn fix(schema: &str, provider: &str) -> std::result::Result<String, JsValue> {
    js(lint::fix(schema, provider))
}

/// An answer to the fixed schema in the original's shape, as JSON text.
#[wasm_bindgen(js_name = mapBack)]
pub fn map_back(
    schema: &str,
    provider: &str,
    answer: &str,
) -> std::result::Result<String, JsValue> {
    js(lint::map_back(schema, provider, answer))
}

/// Traps on purpose (a WebAssembly `unreachable`): only for the package's
/// test of Note \[A trap replaces the instance\] in packages/agentshape/load.js,
/// which needs a trap no real input is known to cause.
#[doc(hidden)]
#[wasm_bindgen(js_name = __trapForTests)]
pub fn trap_for_tests() {
    std::process::abort();
}
