//! Masking: each secret replaced with `[REDACTED:<rule-id>:<fingerprint>]`.
//!
//! Note \[Keyed fingerprints\]: the fingerprint is HMAC-SHA256(key, secret),
//! the first 8 hex digits (32 bits), with the key generated once per store.
//! Keyed, so nobody without the key can test a guess against a fingerprint
//! (an unkeyed hash of a low-entropy password would be brute-forced in
//! seconds), and the same secret shows the same fingerprint everywhere in one
//! store. 32 bits tell secrets apart: among the n distinct secrets of a store
//! two share a fingerprint with probability about n²/2³³ (1 in 8,600 for 1,000
//! secrets), and a person comparing two places reads the rule id too. More
//! digits would not protect better: whoever holds the key can confirm a guess
//! at any length, and a short one gives such a person 2³² candidates per
//! fingerprint less to go on only for secrets from a space far above 2³².
//! HMAC is computed here over `sha2` (RFC 2104; tested against RFC 4231's
//! vectors), which the workspace already builds.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, LazyLock};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::SecretsError;
use super::detect::Detector;

/// The key of the fingerprints: 32 bytes, kept by the store as 64 hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct MaskKey([u8; 32]);

impl MaskKey {
    /// A key from its bytes (the caller draws them from a secure source).
    pub fn from_bytes(bytes: [u8; 32]) -> MaskKey {
        MaskKey(bytes)
    }

    /// A key from 64 hex digits (either case; surrounding whitespace ignored).
    ///
    /// # Errors
    /// [`SecretsError::Key`] when the text is not 64 hex digits.
    pub fn from_hex(text: &str) -> Result<MaskKey, SecretsError> {
        let text = text.trim();
        if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SecretsError::Key {
                message: format!(
                    "expected 64 hex digits, got {} characters",
                    text.chars().count()
                ),
            });
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in text.as_bytes().chunks(2).enumerate() {
            // Checked above: every byte is a hex digit.
            let digit = |b: u8| match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => b - b'A' + 10,
            };
            bytes[i] = digit(pair[0]) << 4 | digit(pair[1]);
        }
        Ok(MaskKey(bytes))
    }

    /// The key as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// The key's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for MaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MaskKey(<redacted>)")
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// HMAC-SHA256 (RFC 2104) with the pads' states hashed once.
#[derive(Clone)]
struct Hmac {
    inner: Sha256,
    outer: Sha256,
}

impl Hmac {
    fn new(key: &[u8]) -> Hmac {
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let pad = |x: u8| block.map(|b| b ^ x);
        Hmac {
            inner: Sha256::new_with_prefix(pad(0x36)),
            outer: Sha256::new_with_prefix(pad(0x5c)),
        }
    }

    fn mac(&self, message: &[u8]) -> [u8; 32] {
        let inner = self.inner.clone().chain_update(message).finalize();
        self.outer.clone().chain_update(inner).finalize().into()
    }
}

/// A secret that was masked. Never holds the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The id of the rule that found it.
    pub rule: String,
    /// Its keyed fingerprint (8 hex digits), as in the mask.
    pub fingerprint: String,
    /// Byte offset of the secret in the text given to [`Masker::mask_str`] or
    /// [`Masker::scan`]; for [`Masker::mask_value`] and
    /// [`Masker::mask_json_text`], in the JSON string (or key) it was found in.
    pub start: usize,
    /// Byte offset just past the secret (same reference as `start`).
    pub end: usize,
}

/// Masked text and what was masked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked<'a> {
    /// The text with each secret replaced by its mask; borrowed when nothing was found.
    pub text: Cow<'a, str>,
    /// What was masked, in text order.
    pub found: Vec<Found>,
}

/// A detector and a key: masks secrets in text and JSON. Cheap to clone, `Send + Sync`.
#[derive(Clone)]
pub struct Masker {
    detector: Arc<Detector>,
    keyed: Arc<LazyLock<Keyed, KeySource>>,
}

/// Where a key comes from, asked once, when first needed (Note \[A key
/// read when first needed\]).
type KeySource = Box<dyn FnOnce() -> Keyed + Send>;

/// The key and its HMAC pads.
struct Keyed {
    key: MaskKey,
    hmac: Hmac,
}

impl Keyed {
    fn new(key: MaskKey) -> Keyed {
        let hmac = Hmac::new(key.as_bytes());
        Keyed { key, hmac }
    }
}

impl fmt::Debug for Masker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Masker")
            .field("rules", &self.detector.rule_ids().count())
            .finish_non_exhaustive()
    }
}

/// One built-in detector shared by every [`Masker::builtin`], its rules
/// compiled when first needed (Note \[Rules compiled when first needed\]).
///
/// It used to be compiled whole here (`Detector::new`), which cost every
/// masking process ~150 ms before its first byte of output, although
/// [`Detector::builtin`] was already lazy; the hook (issue 30) must answer
/// in 20 ms, process start included.
fn builtin_arc() -> Arc<Detector> {
    static BUILTIN: std::sync::OnceLock<Arc<Detector>> = std::sync::OnceLock::new();
    // A test compiles the built-in rules; failing here is a build defect.
    Arc::clone(BUILTIN.get_or_init(|| {
        Arc::new(
            Detector::build(super::RuleSet::builtin(), true)
                .expect("built-in secret rules compile (tested)"),
        )
    }))
}

// Note [A key read when first needed]: only a secret found needs the key
// (its fingerprint, a replaced id). The CLI's key for printed output is the
// store's, read from the SQLite file `run` would use (`mask` in the CLI):
// opening it (the schema parsed, the WAL index mapped) was ~2 ms, most of
// what masking added to a short `parse` on a machine with a store
// (2026-11-30: +3.0 ms with `./agentshape.db`, +1.2 ms without), paid by
// every command although most output holds no secret. `Masker::lazy` takes
// where the key comes from and asks it once, at the first fingerprint; a
// masker that never finds a secret never asks.
impl Masker {
    /// A masker over `detector` with fingerprints keyed by `key`.
    pub fn new(detector: Arc<Detector>, key: MaskKey) -> Masker {
        let keyed = Keyed::new(key);
        Masker::with_source(detector, Box::new(move || keyed))
    }

    /// A masker over `detector` whose key comes from `source`, called once,
    /// on the first secret found (Note \[A key read when first needed\]).
    pub fn lazy(
        detector: Arc<Detector>,
        source: impl FnOnce() -> MaskKey + Send + 'static,
    ) -> Masker {
        Masker::with_source(detector, Box::new(move || Keyed::new(source())))
    }

    fn with_source(detector: Arc<Detector>, source: KeySource) -> Masker {
        Masker {
            detector,
            keyed: Arc::new(LazyLock::new(source)),
        }
    }

    /// A masker over the built-in rules.
    pub fn builtin(key: MaskKey) -> Masker {
        Masker::new(builtin_arc(), key)
    }

    /// The built-in rules' detector, shared (compiled when first needed).
    pub fn builtin_detector() -> Arc<Detector> {
        builtin_arc()
    }

    /// The detector.
    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    /// The key (read from its source now if it was not yet).
    pub fn key(&self) -> &MaskKey {
        &self.keyed.key
    }

    /// The keyed fingerprint of a secret: HMAC-SHA256(key, secret), first 8
    /// hex digits (Note \[Keyed fingerprints\]).
    pub fn fingerprint(&self, secret: &str) -> String {
        hex(&self.keyed.hmac.mac(secret.as_bytes())[..4])
    }

    fn found(&self, text: &str, findings: Vec<super::Finding>) -> Vec<Found> {
        findings
            .into_iter()
            .map(|f| Found {
                rule: f.rule.to_string(),
                fingerprint: self.fingerprint(&text[f.start..f.end]),
                start: f.start,
                end: f.end,
            })
            .collect()
    }

    /// The findings in `s`, read with its object key in front when the key
    /// holds a rule's keyword (`"password": "..."`), in `s`'s offsets.
    fn find_in(&self, key: Option<&str>, s: &str) -> Vec<super::Finding> {
        match key.filter(|k| self.detector.has_keyword(k)) {
            Some(k) => {
                let synth = format!("\"{k}\": \"{s}\"");
                let shift = k.len() + 5;
                let end = shift + s.len();
                self.detector
                    .find(&synth)
                    .into_iter()
                    .filter(|f| f.start >= shift && f.end <= end)
                    .map(|mut f| {
                        f.start -= shift;
                        f.end -= shift;
                        f
                    })
                    .collect()
            }
            None => self.detector.find(s),
        }
    }

    /// What masking `s` replaces, in `s`'s offsets.
    ///
    /// Note \[Masking settles\]: a mask changes the text around it, and a rule
    /// can match in the masked text where it did not before (a `\b` that the
    /// secret's last character blocked now sits after `]`). So the masked
    /// text is searched again until nothing new is found, and the findings of
    /// later rounds (never inside a mask, so within the original text between
    /// masks) are mapped back. Masking masked text then finds nothing: it is
    /// idempotent. Text with no finding is searched once.
    pub(super) fn settle(&self, key: Option<&str>, s: &str) -> Vec<Found> {
        let mut found = self.found(s, self.find_in(key, s));
        // Each round masks at least one more character; the bound is a guard.
        for _ in 0..16 {
            if found.is_empty() {
                break;
            }
            let masked = apply(s, &found);
            let more = self.find_in(key, &masked);
            if more.is_empty() {
                break;
            }
            let more: Vec<super::Finding> = more
                .into_iter()
                .map(|mut f| {
                    f.start = to_original(&found, f.start);
                    f.end = to_original(&found, f.end);
                    f
                })
                .collect();
            found.extend(self.found(s, more));
            found.sort_by_key(|f| f.start);
        }
        found
    }

    /// What [`Masker::mask_str`] would mask, without building the text.
    pub fn scan(&self, text: &str) -> Vec<Found> {
        self.settle(None, text)
    }

    /// `text` with every secret replaced by `[REDACTED:<rule>:<fingerprint>]`.
    /// Borrowed (no allocation) when nothing is found; masking masked text
    /// changes nothing (Note \[Masking settles\]).
    pub fn mask_str<'a>(&self, text: &'a str) -> Masked<'a> {
        let found = self.scan(text);
        Masked {
            text: apply(text, &found),
            found,
        }
    }

    /// Masks every string and object key of `value` in place: the same JSON
    /// shape (a key keeps its place; two keys that mask alike keep the last).
    ///
    /// A string member of an object is read with its key in front
    /// (`"password": "..."`), so the rules that need a name beside the value
    /// (passwords, generic keys) see it as they would in the JSON text.
    pub fn mask_value(&self, value: &mut Value) -> Vec<Found> {
        let mut found = Vec::new();
        self.mask_value_into(None, value, &mut found);
        found
    }

    fn mask_value_into(&self, key: Option<&str>, value: &mut Value, found: &mut Vec<Found>) {
        match value {
            Value::String(s) => self.mask_member(key, s, found),
            Value::Array(items) => {
                for item in items {
                    self.mask_value_into(None, item, found);
                }
            }
            Value::Object(map) => {
                if map.keys().any(|k| self.detector.may_match(k)) {
                    let old = std::mem::take(map);
                    for (k, mut v) in old {
                        let masked = self.mask_str(&k);
                        found.extend(masked.found);
                        let k = masked.text.into_owned();
                        self.mask_value_into(Some(&k), &mut v, found);
                        map.insert(k, v);
                    }
                } else {
                    for (k, v) in map.iter_mut() {
                        self.mask_value_into(Some(k), v, found);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Masks one JSON string, with its object key as context.
    fn mask_member(&self, key: Option<&str>, s: &mut String, found: &mut Vec<Found>) {
        let here = self.settle(key, s);
        if let Cow::Owned(new) = apply(s, &here) {
            *s = new;
            found.extend(here);
        }
    }

    /// Whether `bytes`, read as JSON text or as plain text (their lossy
    /// text when they are not UTF-8), certainly hold nothing to mask, said
    /// without reading them as text: a cheap first look before
    /// [`Masker::mask_json_text`] or [`Masker::mask_str`], which need
    /// text (Note \[Clean bytes unchecked\]). False means they may.
    pub fn bytes_hold_nothing(&self, bytes: &[u8]) -> bool {
        super::clean_json::clean_bytes(self, bytes)
    }

    /// Masks stored JSON text (a feed body, an event). When the raw text has
    /// no escapes and no rule matches it, it is returned borrowed, unparsed
    /// (its strings are its raw bytes, so nothing inside them can match);
    /// otherwise it is parsed, masked with [`Masker::mask_value`] and, when
    /// something was found, written back (valid JSON of the same shape,
    /// compact). Text that is not JSON is masked as plain text.
    pub fn mask_json_text<'a>(&self, json: &'a str) -> Masked<'a> {
        // Most text holds no secret: said without parsing it (Note \[Clean
        // JSON without a Value\] in `clean_json.rs`).
        if super::clean_json::is_clean(self, json) {
            return Masked {
                text: Cow::Borrowed(json),
                found: Vec::new(),
            };
        }
        self.mask_json_text_parsed(json)
    }

    /// [`Masker::mask_json_text`] without its first check: the text parsed
    /// into a `Value` whenever it may hold a secret.
    pub(super) fn mask_json_text_parsed<'a>(&self, json: &'a str) -> Masked<'a> {
        if memchr::memchr(b'\\', json.as_bytes()).is_none() && !self.detector.may_match(json) {
            return Masked {
                text: Cow::Borrowed(json),
                found: Vec::new(),
            };
        }
        let Ok(mut value) = serde_json::from_str::<Value>(json) else {
            return self.mask_str(json);
        };
        let found = self.mask_value(&mut value);
        // Note [A repeated key]: `serde_json` keeps a repeated key's last
        // value, so the text may hold strings the `Value` does not, which
        // masking never read: such a text is written from its `Value`
        // (what every reader that keeps the last value reads), and only
        // text whose every string was read goes out as it came.
        if found.is_empty() && !super::clean_json::repeats_a_key(json) {
            return Masked {
                text: Cow::Borrowed(json),
                found,
            };
        }
        match serde_json::to_string(&value) {
            Ok(text) => Masked {
                text: Cow::Owned(text),
                found,
            },
            // Serialising a `Value` does not fail; plain masking is the safe fallback.
            Err(_) => self.mask_str(json),
        }
    }
}

/// The length of the mask of `f`.
fn mask_len(f: &Found) -> usize {
    "[REDACTED:".len() + f.rule.len() + 1 + f.fingerprint.len() + 1
}

/// A position in text masked with `found` (sorted), outside every mask,
/// as a position in the text before masking.
fn to_original(found: &[Found], at: usize) -> usize {
    // The same place in both texts: just past the last mask before `at`.
    let (mut original, mut masked) = (0, 0);
    for f in found {
        let mask_start = masked + (f.start - original);
        if mask_start >= at {
            break;
        }
        masked = mask_start + mask_len(f);
        original = f.end;
    }
    original + (at - masked)
}

/// `text` with each found range replaced by its mask.
fn apply<'a>(text: &'a str, found: &[Found]) -> Cow<'a, str> {
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + found.len() * 32);
    let mut at = 0;
    for f in found {
        out.push_str(&text[at..f.start]);
        out.push_str("[REDACTED:");
        out.push_str(&f.rule);
        out.push(':');
        out.push_str(&f.fingerprint);
        out.push(']');
        at = f.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}
