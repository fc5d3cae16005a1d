//! Validate: JSON Schema (draft-07, 2019-09, 2020-12) compiled once, many instances.
//!
//! A thin layer over the maintained `jsonschema` crate: the draft comes from
//! `$schema` (default 2020-12, or forced with [`ValidateOptions::draft`]), errors
//! are converted to the project-wide [`Violation`] shape in a deterministic order,
//! and [`Validator::is_valid`] is the allocation-free fast path used when choosing
//! among extraction candidates.
//!
//! Core does no I/O: a `$ref` to another document is resolved only through a
//! [`Retriever`] the caller supplies; without one such a schema is
//! [`Error::InvalidSchema`].
//!
//! `format` follows each draft's rule unless [`ValidateOptions::assert_formats`]
//! says otherwise: an assertion in draft-04/06/07, an annotation (not checked)
//! in 2019-09 and 2020-12. Agent output is usually written against 2020-12 (the
//! default), where `"format": "date"` alone does not reject `"yesterday"`; a
//! caller that wants that opts in.
//!
//! [`Validator::coerce`] applies schema-aligned coercions (see [`coerce`]).
//!
//! A schema's `x-invariants` rules (CEL, see [`crate::check`]) are compiled
//! with it: a rule that does not compile makes the schema invalid. The
//! validator itself ignores the keyword; [`Validator::invariants`] evaluates them.

pub mod coerce;
mod draft;
mod instance;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::Value;

use crate::check::Invariants;
use crate::error::{Error, Result};
use crate::json::tape;
use crate::outcome::Violation;

/// The coercions live with the other result types (Note [Result types] in
/// `outcome`); re-exported where they are made.
pub use crate::outcome::{Coercion, CoercionKind};
pub use draft::Draft;
pub use instance::{Instance, InstanceBuilder};

/// Supplies the documents behind `$ref`s to other URIs (`http://…/defs.json`).
///
/// Core never fetches anything itself; a CLI maps URIs to files, a test maps
/// `http://localhost:1234/…` to the suite's `remotes/`. Any
/// `Fn(&str) -> Result<Value, String> + Send + Sync` closure is a retriever.
pub trait Retriever: Send + Sync {
    /// The JSON document at `uri` (absolute, without fragment).
    ///
    /// # Errors
    /// A one-line reason when the document is unknown or unreadable; schema
    /// compilation then fails with [`Error::InvalidSchema`] naming the URI.
    fn retrieve(&self, uri: &str) -> std::result::Result<Value, String>;
}

impl<F> Retriever for F
where
    F: Fn(&str) -> std::result::Result<Value, String> + Send + Sync,
{
    fn retrieve(&self, uri: &str) -> std::result::Result<Value, String> {
        self(uri)
    }
}

/// How to compile a schema: the builder behind [`Validator`].
///
/// `ValidateOptions::default().build(&schema)` is what [`Validator::new`] does.
#[derive(Clone, Default)]
pub struct ValidateOptions {
    draft: Option<Draft>,
    assert_formats: Option<bool>,
    retriever: Option<Arc<dyn Retriever>>,
}

impl std::fmt::Debug for ValidateOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValidateOptions")
            .field("draft", &self.draft)
            .field("assert_formats", &self.assert_formats)
            .field("retriever", &self.retriever.as_ref().map(|_| "<retriever>"))
            .finish()
    }
}

impl ValidateOptions {
    /// Options with every default: draft from `$schema`, draft's `format`
    /// rule, no external documents.
    pub fn new() -> Self {
        Self::default()
    }

    /// Use `draft` whatever `$schema` says (or when it is absent); an unknown
    /// `$schema` is then not an error.
    #[must_use]
    pub fn draft(mut self, draft: Draft) -> Self {
        self.draft = Some(draft);
        self
    }

    /// Treat `format` as an assertion (`true`) or an annotation (`false`) in
    /// every draft, instead of the draft's own rule.
    #[must_use]
    pub fn assert_formats(mut self, yes: bool) -> Self {
        self.assert_formats = Some(yes);
        self
    }

    /// Resolve `$ref`s to other documents through `retriever`.
    #[must_use]
    pub fn retriever(mut self, retriever: impl Retriever + 'static) -> Self {
        self.retriever = Some(Arc::new(retriever));
        self
    }

    /// Compile `schema`.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`], with one line, when the schema is not valid for
    /// its draft, declares an unknown `$schema`, has a `$ref` that cannot be
    /// resolved, or has an `x-invariants` rule that does not compile.
    pub fn build(&self, schema: &Value) -> Result<Validator> {
        let draft = match self.draft {
            Some(d) => d,
            None => Draft::declared(schema)
                .map_err(|uri| Error::InvalidSchema {
                    message: format!(
                        "unknown `$schema` `{uri}` (known: draft-04, draft-06, draft-07, \
                         2019-09, 2020-12)"
                    ),
                })?
                .unwrap_or_default(),
        };
        let inner = self
            .jsonschema_options::<jsonschema::json::SerdeJson>(draft, None)
            .build(schema)
            .map_err(|e| Error::InvalidSchema {
                message: schema_error_message(&e),
            })?;
        let invariants = Invariants::compile(schema)?;
        Ok(Validator {
            invariants,
            schema: schema.clone(),
            draft,
            options: self.clone(),
            inner,
            tape: OnceLock::new(),
            subschemas: Mutex::new(HashMap::new()),
        })
    }

    fn jsonschema_options<F: jsonschema::json::Json>(
        &self,
        draft: Draft,
        root: Option<Arc<Value>>,
    ) -> jsonschema::ValidationOptions<'_, Arc<dyn jsonschema::Retrieve>, F> {
        let mut opts = jsonschema::options_for::<F>()
            .with_draft(draft.to_jsonschema())
            .with_retriever(Fetch {
                root,
                user: self.retriever.clone(),
            });
        if let Some(yes) = self.assert_formats {
            opts = opts.should_validate_formats(yes);
        }
        opts
    }
}

/// The URI under which the root schema is served to subschema validators.
const ROOT_URI: &str = "urn:agentshape:root";

/// Adapts [`Retriever`] to the crate's trait, and serves the root schema to
/// the per-subschema validators used by coercion.
struct Fetch {
    root: Option<Arc<Value>>,
    user: Option<Arc<dyn Retriever>>,
}

impl jsonschema::Retrieve for Fetch {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> std::result::Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let uri = uri.as_str();
        if uri == ROOT_URI {
            if let Some(root) = &self.root {
                return Ok(Value::clone(root));
            }
        }
        match &self.user {
            Some(r) => r.retrieve(uri).map_err(Into::into),
            None => Err(format!(
                "`{uri}` is another document and no retriever was configured (core does no I/O)"
            )
            .into()),
        }
    }
}

/// A compiled schema: compile once, validate and coerce many instances.
pub struct Validator {
    schema: Value,
    draft: Draft,
    options: ValidateOptions,
    inner: jsonschema::Validator,
    /// The same schema for instances read by [`tape::Doc`], compiled on
    /// first use (Note [Validating from text] in `tape`); `None` when it
    /// does not compile that way.
    tape: OnceLock<Option<jsonschema::Validator<tape::Tape>>>,
    /// The schema's `x-invariants`, compiled with it.
    invariants: Invariants,
    /// Validators for subschemas by JSON Pointer, compiled lazily by
    /// [`Validator::coerce`] to decide whether a coerced value fits; `None`
    /// when the subschema does not compile on its own.
    subschemas: Mutex<HashMap<String, Option<Arc<jsonschema::Validator>>>>,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("draft", &self.draft)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl Validator {
    /// Compile `schema` with default options; the draft comes from `$schema`
    /// (default 2020-12).
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] when the schema is not valid for its draft,
    /// declares an unknown `$schema`, or has a `$ref` to another document.
    pub fn new(schema: &Value) -> Result<Self> {
        ValidateOptions::default().build(schema)
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The draft the schema was compiled as.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// Fast check without collecting errors; does not allocate.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }

    /// The verdict on the JSON text `text` without building a `Value`:
    /// `Some(valid)` when `text` is strict JSON that the borrowed reader
    /// takes (Note [Validating from text] in `tape`) and every number in it
    /// is exact; `None` when the caller must parse it ([`crate::json::parse`])
    /// and use [`Validator::errors_and_invariants`]. Says nothing of
    /// `x-invariants`: callers check [`Validator::invariants`] is empty.
    pub fn is_valid_text(&self, text: &str) -> Option<bool> {
        let validator = self.tape_validator()?;
        // `text` is a `str`: no second UTF-8 check (Note [Bytes, not text]).
        tape::with_doc_str(text, |doc| validator.is_valid(doc.root()))
    }

    /// [`Validator::is_valid_text`] on bytes: `None` also when they are
    /// not UTF-8 (checked once, as the reader reads them: Note [Bytes, not
    /// text] in `tape`).
    pub fn is_valid_json(&self, text: &[u8]) -> Option<bool> {
        let validator = self.tape_validator()?;
        tape::with_doc(text, |doc| validator.is_valid(doc.root()))
    }

    /// [`Validator::is_valid_text`] on a document already read; `None`
    /// when the schema does not compile for the tape.
    pub(crate) fn is_valid_doc(&self, doc: &tape::Doc<'_>) -> Option<bool> {
        Some(self.tape_validator()?.is_valid(doc.root()))
    }

    /// The schema compiled for instances read in place (Note [Validating
    /// from text] in `tape`), on first use; `None` when it does not compile
    /// that way.
    fn tape_validator(&self) -> Option<&jsonschema::Validator<tape::Tape>> {
        self.tape
            .get_or_init(|| {
                self.options
                    .jsonschema_options::<tape::Tape>(self.draft, None)
                    .build(&self.schema)
                    .ok()
            })
            .as_ref()
    }

    /// The whole verdict on the JSON text `text` (schema, then
    /// `x-invariants`) without building a `Value`, when it is valid against
    /// the schema: `Some(violations)` of the invariants (empty: valid). `None`
    /// when the caller must parse and use [`Validator::errors_and_invariants`]:
    /// the borrowed reader declined the text (Note [Validating from text] in
    /// `tape`), the instance is schema-invalid (its errors need the `Value`),
    /// or a rule needs the CEL interpreter. Where it answers, it gives
    /// exactly what `errors_and_invariants` gives.
    pub fn check_text(&self, text: &str) -> Option<Vec<Violation>> {
        let validator = self.tape_validator()?;
        tape::with_doc(text.as_bytes(), |doc| {
            if !validator.is_valid(doc.root()) {
                return None;
            }
            self.invariants.evaluate_tape(doc.root())
        })?
    }

    /// The whole verdict on the JSON bytes `text`, as
    /// [`Validator::errors_and_invariants`] gives it for the same JSON
    /// (empty: valid), without building a `Value` where it can: `None` when
    /// the caller must parse and use `errors_and_invariants` (the borrowed
    /// reader declined the text, a rule needs the CEL interpreter, or the
    /// instance is schema-invalid and the schema has `x-invariants`).
    ///
    /// Text that is not UTF-8 is `None`, for the caller to report (Note
    /// [Bytes, not text] in `tape`).
    ///
    /// Note [Errors from text]: a tenth of the bench corpus's instances are
    /// schema-invalid, and each was read twice: by the borrowed reader, then
    /// by `serde_json` into a `Value` (an `IndexMap` per object, every key
    /// hashed) only for `jsonschema` to collect its errors. It collects them
    /// from the document read in place just as well: the same compiled
    /// keywords, the instance a message quotes is the node's `Value`, and
    /// [`Validator::errors`]' sort and dedup make the order the same
    /// (`tape_verdicts_agree_with_value_verdicts`).
    pub fn verdict_json(&self, text: &[u8]) -> Option<Vec<Violation>> {
        let validator = self.tape_validator()?;
        tape::with_doc(text, |doc| self.verdict_doc(validator, doc))?
    }

    /// [`Validator::verdict_json`] on text already known to be UTF-8 (a
    /// binding's string): the same verdict without checking it again.
    pub fn verdict_text(&self, text: &str) -> Option<Vec<Violation>> {
        let validator = self.tape_validator()?;
        tape::with_doc_str(text, |doc| self.verdict_doc(validator, doc))?
    }

    /// The verdict on a document read in place (Note [Errors from text]).
    fn verdict_doc(
        &self,
        validator: &jsonschema::Validator<tape::Tape>,
        doc: &tape::Doc<'_>,
    ) -> Option<Vec<Violation>> {
        if validator.is_valid(doc.root()) {
            return self.invariants.evaluate_tape(doc.root());
        }
        if !self.invariants.is_empty() {
            return None;
        }
        Some(violations(validator.iter_errors(doc.root())))
    }

    /// Every violation of `instance`, sorted by instance path, then schema
    /// path, then message, so output is stable across runs.
    pub fn errors(&self, instance: &Value) -> Vec<Violation> {
        violations(self.inner.iter_errors(instance))
    }

    /// The schema's compiled `x-invariants` rules (empty when it has none).
    /// Evaluate them after validation: `invariants().evaluate(&instance,
    /// &errors)`, or [`check_extraction`](crate::check::check_extraction).
    pub fn invariants(&self) -> &Invariants {
        &self.invariants
    }

    /// Schema errors followed by invariant violations: the whole verdict of
    /// the validate and check stages on one instance.
    pub fn errors_and_invariants(&self, instance: &Value) -> Vec<Violation> {
        let mut errors = if self.inner.is_valid(instance) {
            Vec::new()
        } else {
            self.errors(instance)
        };
        let found = self.invariants.evaluate(instance, &errors);
        errors.extend(found);
        errors
    }

    /// Apply schema-aligned coercions to `instance`, returning the new value
    /// and every coercion applied, in order. An instance that already
    /// validates is returned untouched. The result may still be invalid:
    /// re-check it with [`Validator::errors`].
    pub fn coerce(&self, instance: Value) -> (Value, Vec<Coercion>) {
        coerce::coerce(self, instance)
    }

    /// Decode the strings of an invalid `instance` that hold a JSON object
    /// or array where the schema asks for one and not for a string (Note
    /// [Embedded JSON] in `extract::embedded`); `read` finds a string's
    /// document. The walk of [`Validator::coerce`], with only this
    /// conversion; each decoded string is one [`Coercion`] of kind
    /// `embedded_json`. A valid instance comes back as it is.
    pub fn decode_embedded(
        &self,
        instance: Value,
        read: &dyn Fn(&str) -> Option<Value>,
    ) -> (Value, Vec<Coercion>) {
        coerce::decode_embedded(self, instance, read)
    }

    /// Whether `value` is valid against the subschema at JSON Pointer
    /// `pointer` of the root schema (`""` is the root). `false` when that
    /// subschema cannot be compiled on its own.
    pub(crate) fn fits(&self, pointer: &str, value: &Value) -> bool {
        if pointer.is_empty() {
            return self.inner.is_valid(value);
        }
        self.subschema(pointer).is_some_and(|v| v.is_valid(value))
    }

    fn subschema(&self, pointer: &str) -> Option<Arc<jsonschema::Validator>> {
        let mut cache = self
            .subschemas
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = cache.get(pointer) {
            return hit.clone();
        }
        let wrapper = serde_json::json!({
            "$ref": format!("{ROOT_URI}#{}", fragment_encode(pointer))
        });
        let compiled = self
            .options
            .jsonschema_options::<jsonschema::json::SerdeJson>(
                self.draft,
                Some(Arc::new(self.schema.clone())),
            )
            .build(&wrapper)
            .ok()
            .map(Arc::new);
        cache.insert(pointer.to_owned(), compiled.clone());
        compiled
    }
}

/// `jsonschema`'s errors as violations, sorted by instance path, then
/// schema path, then message, without repeats.
fn violations<'i>(errors: impl Iterator<Item = jsonschema::ValidationError<'i>>) -> Vec<Violation> {
    let mut errors: Vec<Violation> = errors
        .map(|e| Violation {
            instance_path: e.instance_path().as_str().to_owned(),
            schema_path: e.schema_path().as_str().to_owned(),
            message: violation_message(&e),
            kind: None,
            rule: None,
        })
        .collect();
    errors.sort_by(|a, b| {
        (&a.instance_path, &a.schema_path, &a.message).cmp(&(
            &b.instance_path,
            &b.schema_path,
            &b.message,
        ))
    });
    errors.dedup();
    errors
}

/// Percent-encode a JSON Pointer for use as a URI fragment.
fn fragment_encode(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for b in pointer.bytes() {
        if b.is_ascii_alphanumeric() || b"/~-._!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// One line saying what is wrong with a schema and where: meta-schema
/// violations name the place in the schema, reference failures say so.
fn schema_error_message(e: &jsonschema::ValidationError<'_>) -> String {
    let what = one_line(&e.to_string());
    if matches!(
        e.kind(),
        jsonschema::error::ValidationErrorKind::Referencing(_)
    ) {
        return format!("unresolvable `$ref`: {what}");
    }
    match e.instance_path().as_str() {
        "" => what,
        at => format!("at `{at}`: {what}"),
    }
}

/// Note \[Message excerpts\]: jsonschema quotes the failing instance in its
/// messages (`<instance> is not of type "integer"`), and an instance can be
/// a 20 MB reply. A message therefore quotes at most [`EXCERPT_CHARS`]
/// characters of the instance's JSON, then `…` (jsonschema's masked form with
/// the excerpt as placeholder), and the whole message is cut at
/// [`MESSAGE_CHARS`] with `…` (a list of unexpected keys can be long too).
/// The instance is rendered into a bounded buffer that stops writing at the
/// cap, so a huge instance costs no more than a small one; the instance path
/// still says exactly where the error is.
const EXCERPT_CHARS: usize = 200;

/// The longest violation message, in characters (Note \[Message excerpts\]).
const MESSAGE_CHARS: usize = 400;

/// One line for a validation error, quoting at most an excerpt of the instance.
fn violation_message(e: &jsonschema::ValidationError<'_>) -> String {
    let text = match excerpt(e.instance()) {
        None => e.to_string(),
        Some(cut) => e.masked_with(cut).to_string(),
    };
    let line = one_line(&text);
    match line.char_indices().nth(MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// The instance's JSON cut to [`EXCERPT_CHARS`] characters and `…`, or
/// `None` when it is short enough to quote whole.
fn excerpt(instance: &Value) -> Option<String> {
    /// A `fmt::Write` that refuses to grow past its limit, which stops the
    /// serializer early.
    struct Bounded {
        text: String,
        room: usize,
    }
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            for c in s.chars() {
                if self.room == 0 {
                    return Err(std::fmt::Error);
                }
                self.text.push(c);
                self.room -= 1;
            }
            Ok(())
        }
    }
    let mut w = Bounded {
        text: String::new(),
        room: EXCERPT_CHARS,
    };
    if write!(w, "{instance}").is_ok() {
        return None;
    }
    w.text.push('…');
    Some(w.text)
}

/// Collapse a multi-line message into one line (schema errors are printed as one).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_instance_and_schema_paths() {
        let v = Validator::new(&json!({
            "type": "object",
            "properties": {"level": {"enum": ["info", "warning"]}}
        }))
        .unwrap();
        assert!(v.is_valid(&json!({"level": "info"})));
        let errs = v.errors(&json!({"level": "error"}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].instance_path, "/level");
        assert_eq!(errs[0].schema_path, "/properties/level/enum");
    }

    #[test]
    fn invalid_schema_is_one_line_error() {
        let err = Validator::new(&json!({"type": 12}))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("invalid schema: at `/type`: "), "{err}");
        assert!(!err.contains('\n'));
        let err = Validator::new(&json!({"properties": {"a": {"pattern": "(("}}}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid schema: at `/properties/a/pattern`: "),
            "{err}"
        );
    }

    #[test]
    fn validator_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Validator>();
        check::<ValidateOptions>();
    }

    #[test]
    fn unknown_dollar_schema_is_invalid_unless_draft_forced() {
        let schema = json!({"$schema": "https://example.com/meta", "type": "string"});
        let err = Validator::new(&schema).unwrap_err().to_string();
        assert!(err.contains("unknown `$schema`"), "{err}");
        let v = ValidateOptions::new()
            .draft(Draft::Draft7)
            .build(&schema)
            .unwrap();
        assert_eq!(v.draft(), Draft::Draft7);
        assert!(v.is_valid(&json!("x")));
    }

    #[test]
    fn draft_comes_from_dollar_schema() {
        let v =
            Validator::new(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})).unwrap();
        assert_eq!(v.draft(), Draft::Draft7);
        assert_eq!(
            Validator::new(&json!({})).unwrap().draft(),
            Draft::Draft202012
        );
        // draft-07: `items` as an array is a tuple.
        let v = Validator::new(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{"type": "integer"}]
        }))
        .unwrap();
        assert!(!v.is_valid(&json!(["a"])));
    }

    #[test]
    fn unresolvable_ref_is_invalid_schema() {
        let err = Validator::new(&json!({"$ref": "#/$defs/missing"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid schema: unresolvable `$ref`: "),
            "{err}"
        );
        assert!(!err.contains('\n'));
        let err = Validator::new(&json!({"$ref": "https://example.com/s.json"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("example.com"), "{err}");
    }

    #[test]
    fn retriever_resolves_external_refs() {
        let schema = json!({"$ref": "https://example.com/s.json"});
        let v = ValidateOptions::new()
            .retriever(|uri: &str| {
                if uri == "https://example.com/s.json" {
                    Ok(json!({"type": "integer"}))
                } else {
                    Err(format!("unknown {uri}"))
                }
            })
            .build(&schema)
            .unwrap();
        assert!(v.is_valid(&json!(3)));
        assert!(!v.is_valid(&json!("3")));
    }

    #[test]
    fn format_is_annotation_in_2020_12_and_assertion_in_draft7() {
        let v = Validator::new(&json!({"format": "date"})).unwrap();
        assert!(v.is_valid(&json!("yesterday")));
        let v = ValidateOptions::new()
            .assert_formats(true)
            .build(&json!({"format": "date"}))
            .unwrap();
        assert!(!v.is_valid(&json!("yesterday")));
        let v = Validator::new(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "format": "date"
        }))
        .unwrap();
        assert!(!v.is_valid(&json!("yesterday")));
        assert!(v.is_valid(&json!("2024-01-31")));
    }

    #[test]
    fn errors_are_sorted_and_deterministic() {
        let v = Validator::new(&json!({
            "type": "object",
            "required": ["a"],
            "properties": {"b": {"type": "integer"}, "c": {"type": "string"}}
        }))
        .unwrap();
        let inst = json!({"c": 1, "b": "x"});
        let errs = v.errors(&inst);
        let paths: Vec<_> = errs.iter().map(|e| e.instance_path.as_str()).collect();
        assert_eq!(paths, ["", "/b", "/c"]);
        assert_eq!(errs, v.errors(&inst));
    }

    #[test]
    fn subschema_fit_uses_local_refs() {
        let v = Validator::new(&json!({
            "$defs": {"n": {"type": "integer"}},
            "properties": {"x": {"$ref": "#/$defs/n"}, "a b%": {"type": "string"}}
        }))
        .unwrap();
        assert!(v.fits("/properties/x", &json!(1)));
        assert!(!v.fits("/properties/x", &json!("1")));
        assert!(v.fits("/properties/a b%", &json!("s")));
        assert!(!v.fits("/properties/a b%", &json!(1)));
    }

    #[test]
    fn messages_quote_an_excerpt_of_a_huge_instance() {
        let v = Validator::new(&json!({
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": false
        }))
        .unwrap();
        let small = v.errors(&json!({"a": "x"}));
        assert_eq!(small[0].message, r#""x" is not of type "integer""#);
        let big = "y".repeat(1 << 20);
        let many: serde_json::Map<String, Value> =
            (0..5000).map(|i| (format!("k{i}"), json!(i))).collect();
        let mut instance = json!({"a": big});
        instance.as_object_mut().unwrap().extend(many);
        let errs = v.errors(&instance);
        assert_eq!(errs.len(), 2);
        for e in &errs {
            assert!(
                e.message.chars().count() <= MESSAGE_CHARS + 1,
                "{}",
                e.message
            );
            assert!(e.message.contains('…'), "{}", e.message);
        }
        let type_error = &errs
            .iter()
            .find(|e| e.instance_path == "/a")
            .unwrap()
            .message;
        assert!(type_error.starts_with(r#""yyyy"#), "{type_error}");
        assert!(
            type_error.ends_with(r#"yy… is not of type "integer""#),
            "{type_error}"
        );
    }
}
