//! Legacy text markers: Claude Ops `[EVENT:..]`/`[MEMORY:..]`, claude-loop
//! sigils, and any agent's own, described as data.
//!
//! Agents built before structured output report through markers in their
//! prose (seeds 000 and 001). This module maps them into the same shape the
//! profile's schema asks for, so a legacy run validates like a modern one.
//! A grammar is a [`MarkerSpec`]: the `[markers]` table of a profile file
//! (Note [Marker grammar]). The built-in grammars are the `[markers]` tables
//! of `profiles/claude-ops.toml` and `profiles/claude-loop.toml`, read by the
//! same code as a user's ([`MarkerGrammar::ClaudeOps`], [`MarkerGrammar::ClaudeLoop`]).
//!
//! Note [Marker grammar]: a grammar is a list of rules, each a `prefix` that
//! starts a marker, then:
//! - `at`: `anywhere` (default; several per line) or `line-start` (after
//!   blanks; one per line, taking the rest of the line).
//! - `close` (optional, `]`): the fields run from the prefix to it; the text
//!   after it, to the next marker on the line (any rule's prefix) or the end
//!   of the line, trimmed, is the field named by `text`, and must not be
//!   empty. Without `close` the fields run to the next marker or the end of
//!   the line, and each part is trimmed; with `close` the parts are exact.
//! - `fields`: names, `?` marking an optional one (optional fields come last),
//!   split on `separator` (default `:`) into at most that many parts, the last
//!   taking the rest. `kinds` gives each field's kind: `word` (default:
//!   letters, digits, `_ - . /`, any non-ASCII; no blanks or brackets), `id`
//!   (ASCII letters, digits, `_ - .`) or `text` (anything). An empty `word`
//!   or `id` part makes the marker invalid; an empty `text` part is absent.
//! - `values`: the allowed values of a field, matched ignoring ASCII case and
//!   kept as listed (`Warning` becomes `warning`).
//! - `set`: the marker's object; each value a template (`"{service}:{category}"`:
//!   a string naming fields in braces), a list of templates (the first whose
//!   fields are all present), or any constant. A template naming an absent
//!   field drops the key. Without `set`, the object is the fields by name.
//!
//! A marker whose fields do not fit is skipped: nothing is invented. In
//! `mode = "collect"` every marker's object goes into the array named by its
//! rule's `into`; the value holds every array, the `fixed` keys, and (with
//! `summary`) the first prose line outside fences holding no prefix, else
//! `summary_default` with `{array}` replaced by that array's length. In
//! `mode = "last"` the value is the object of the last marker in the text
//! (plus the `fixed` keys it lacks). A fence line (```` ``` ```` after blanks)
//! holds no markers; markers inside fenced blocks count (agents echo their
//! report in a block, and the old Go regexes scanned the whole text). No
//! marker, or no collected item: no value.
//!
//! Note [Claude Ops markers]: the `claude-ops` grammar.
//! - `[EVENT:level:service] message` and `[EVENT:level] message`; `level` is
//!   `info`, `warning` or `critical` in any case (normalized to lowercase);
//!   `message` is the rest of the line (up to the next marker on that line),
//!   trimmed. An unknown level or an empty message skips the marker.
//! - `[MEMORY:category:service] text` → `{"key": "service:category", "value": text}`
//!   (the key format of seed 000), `[MEMORY:category] text` → key `category`.
//! - Tags are upper case (`EVENT`, `MEMORY`), as the prompts wrote them.
//! - The result is `{"summary", "events", "memories", "escalation": {"needed":
//!   false}, "services_checked": []}`: markers say nothing of escalation or
//!   checked services, so those are the neutral values the agent-response
//!   schema requires.
//!
//! Note [claude-loop sigils]: the `claude-loop` grammar.
//! `<loop>COMPLETE</loop>` → `{"action": "complete"}`; `WORKER_SUCCESS: id`
//! → `{"action": "complete", "story_id": id}`; `WORKER_FAILURE: id: reason`
//! → `{"action": "skip", "story_id": id, "error": reason}` (the reason is
//! optional). `skip` is the loop-action value
//! for "this story was not done by this worker"; the failure itself lives in
//! `error`. Worker sigils must start a line (after blanks); the `<loop>` tag may
//! sit anywhere except on a fence line. The last sigil in the text wins.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Which legacy grammar a profile speaks: a built-in one by name, or a
/// grammar read from a profile file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarkerGrammar<'a> {
    /// `[EVENT:level:service] message`, `[MEMORY:category:service] text` (seed 000).
    ClaudeOps,
    /// `<loop>COMPLETE</loop>`, `WORKER_SUCCESS: id`, `WORKER_FAILURE: id: reason` (seed 001).
    ClaudeLoop,
    /// Any grammar (Note [Marker grammar]).
    Spec(&'a MarkerSpec),
}

impl<'a> MarkerGrammar<'a> {
    /// The rules this grammar stands for.
    pub fn spec(self) -> &'a MarkerSpec {
        match self {
            MarkerGrammar::ClaudeOps => builtin(&CLAUDE_OPS, CLAUDE_OPS_TOML),
            MarkerGrammar::ClaudeLoop => builtin(&CLAUDE_LOOP, CLAUDE_LOOP_TOML),
            MarkerGrammar::Spec(s) => s,
        }
    }
}

const CLAUDE_OPS_TOML: &str = include_str!("../../../../profiles/claude-ops.toml");
const CLAUDE_LOOP_TOML: &str = include_str!("../../../../profiles/claude-loop.toml");
static CLAUDE_OPS: OnceLock<MarkerSpec> = OnceLock::new();
static CLAUDE_LOOP: OnceLock<MarkerSpec> = OnceLock::new();

/// The `[markers]` table of an embedded profile, parsed once. The embedded
/// files are checked by the tests (`builtin_grammars_parse`), so the empty
/// fallback is never met in a build that passed them.
fn builtin(cell: &'static OnceLock<MarkerSpec>, text: &str) -> &'static MarkerSpec {
    #[derive(Deserialize)]
    struct Only {
        markers: MarkerSpec,
    }
    cell.get_or_init(|| {
        toml::from_str::<Only>(text).map_or_else(|_| MarkerSpec::empty(), |o| o.markers)
    })
}

/// Parse markers in `text` into the profile's shape, `None` when there are none.
pub fn parse_markers(text: &str, grammar: MarkerGrammar<'_>) -> Option<Value> {
    grammar.spec().parse(text)
}

/// How the markers found become one value (Note [Marker grammar]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Every marker goes into its rule's array.
    #[default]
    Collect,
    /// The last marker in the text is the value.
    Last,
}

/// Where a marker may start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum At {
    /// Anywhere in a line, several per line.
    #[default]
    Anywhere,
    /// At the start of a line, after blanks.
    LineStart,
}

/// What a field may hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Letters, digits, `_ - . /` and any non-ASCII character.
    #[default]
    Word,
    /// ASCII letters, digits, `_ - .`.
    Id,
    /// Anything.
    Text,
}

impl Kind {
    fn accepts(self, s: &str) -> bool {
        match self {
            Kind::Word => is_name(s),
            Kind::Id => is_story_id(s),
            Kind::Text => true,
        }
    }
}

/// One rule of a grammar, as written in a profile's `[[markers.rule]]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// What starts the marker (`[EVENT:`).
    pub prefix: String,
    /// Where it may start.
    #[serde(default)]
    pub at: At,
    /// What ends the fields (`]`), if anything.
    #[serde(default)]
    pub close: Option<String>,
    /// Field names, `name?` for an optional one.
    #[serde(default)]
    pub fields: Vec<String>,
    /// Between fields.
    #[serde(default = "default_separator")]
    pub separator: String,
    /// The field taking the text after `close`.
    #[serde(default)]
    pub text: Option<String>,
    /// The array this marker's object joins (`mode = "collect"`).
    #[serde(default)]
    pub into: Option<String>,
    /// Kinds of fields (default `word`).
    #[serde(default)]
    pub kinds: BTreeMap<String, Kind>,
    /// Allowed values of fields.
    #[serde(default)]
    pub values: BTreeMap<String, Vec<String>>,
    /// The marker's object, from templates and constants.
    #[serde(default)]
    pub set: Option<Map<String, Value>>,
}

fn default_separator() -> String {
    ":".to_owned()
}

/// A marker grammar (Note [Marker grammar]); checked when read, so every
/// grammar in hand is well-formed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawSpec")]
pub struct MarkerSpec {
    mode: Mode,
    summary: Option<String>,
    summary_default: Option<String>,
    fixed: Map<String, Value>,
    rules: Vec<Checked>,
    /// The distinct `into` arrays, in rule order.
    arrays: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    summary_default: Option<String>,
    #[serde(default)]
    fixed: Map<String, Value>,
    #[serde(default)]
    rule: Vec<Rule>,
}

/// A rule with its fields parsed.
#[derive(Debug, Clone, PartialEq)]
struct Checked {
    rule: Rule,
    /// (name, optional, kind).
    fields: Vec<(String, bool, Kind)>,
    required: usize,
}

/// A grammar that does not hold together: the key (`markers.rule[1].fields[0]`)
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {message}")]
pub struct SpecError {
    /// The dotted key, from the profile's root.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

fn bad(key: String, message: impl Into<String>) -> SpecError {
    SpecError {
        key,
        message: message.into(),
    }
}

/// A field name: ASCII letters, digits and `_`, not starting with a digit.
fn is_field_name(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The field names a template string refers to (`{name}`).
fn placeholders(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open + 1..).unwrap_or_default();
        match after.find('}') {
            Some(close) => {
                let name = after.get(..close).unwrap_or_default();
                if is_field_name(name) {
                    out.push(name);
                }
                rest = after.get(close + 1..).unwrap_or_default();
            }
            None => break,
        }
    }
    out
}

impl TryFrom<RawSpec> for MarkerSpec {
    type Error = SpecError;

    fn try_from(raw: RawSpec) -> Result<Self, SpecError> {
        if raw.rule.is_empty() {
            return Err(bad(
                "markers.rule".into(),
                "at least one [[markers.rule]] is needed",
            ));
        }
        let mut arrays: Vec<String> = Vec::new();
        let mut rules = Vec::with_capacity(raw.rule.len());
        for (i, rule) in raw.rule.into_iter().enumerate() {
            let key = |k: &str| format!("markers.rule[{i}].{k}");
            let one_line = |s: &str| !s.contains(['\n', '\r']);
            if rule.prefix.trim().is_empty() || !one_line(&rule.prefix) {
                return Err(bad(key("prefix"), "must be non-blank text on one line"));
            }
            if rule.separator.is_empty() || !one_line(&rule.separator) {
                return Err(bad(key("separator"), "must be non-empty text on one line"));
            }
            if let Some(c) = &rule.close {
                if c.is_empty() || !one_line(c) {
                    return Err(bad(key("close"), "must be non-empty text on one line"));
                }
            }
            let mut fields = Vec::with_capacity(rule.fields.len());
            let mut seen_optional = false;
            for (j, f) in rule.fields.iter().enumerate() {
                let (name, optional) = match f.strip_suffix('?') {
                    Some(n) => (n, true),
                    None => (f.as_str(), false),
                };
                if !is_field_name(name) {
                    return Err(bad(
                        key(&format!("fields[{j}]")),
                        format!(
                            "`{f}` is not a field name (letters, digits, `_`; `?` at the end marks it optional)"
                        ),
                    ));
                }
                if seen_optional && !optional {
                    return Err(bad(
                        key(&format!("fields[{j}]")),
                        format!("`{f}` is required but follows an optional field"),
                    ));
                }
                if fields.iter().any(|(n, _, _)| n == name) || rule.text.as_deref() == Some(name) {
                    return Err(bad(
                        key(&format!("fields[{j}]")),
                        format!("`{name}` is named twice"),
                    ));
                }
                seen_optional |= optional;
                let kind = rule.kinds.get(name).copied().unwrap_or_default();
                fields.push((name.to_owned(), optional, kind));
            }
            if let Some(t) = &rule.text {
                if !is_field_name(t) {
                    return Err(bad(key("text"), format!("`{t}` is not a field name")));
                }
                if rule.close.is_none() {
                    return Err(bad(
                        key("text"),
                        "needs `close`: the text is what follows it",
                    ));
                }
            }
            let known =
                |n: &str| fields.iter().any(|(f, _, _)| f == n) || rule.text.as_deref() == Some(n);
            for k in rule.kinds.keys() {
                if !fields.iter().any(|(f, _, _)| f == k) {
                    return Err(bad(
                        key(&format!("kinds.{k}")),
                        "names no field of this rule",
                    ));
                }
            }
            for (k, v) in &rule.values {
                if !known(k) {
                    return Err(bad(
                        key(&format!("values.{k}")),
                        "names no field of this rule",
                    ));
                }
                if v.is_empty() {
                    return Err(bad(key(&format!("values.{k}")), "lists no value"));
                }
            }
            if let Some(set) = &rule.set {
                for (k, v) in set {
                    let templates: Vec<&str> = match v {
                        Value::String(t) => vec![t.as_str()],
                        Value::Array(items) if items.iter().all(Value::is_string) => {
                            items.iter().filter_map(Value::as_str).collect()
                        }
                        _ => Vec::new(),
                    };
                    for t in templates {
                        if let Some(p) = placeholders(t).into_iter().find(|p| !known(p)) {
                            return Err(bad(
                                key(&format!("set.{k}")),
                                format!("`{{{p}}}` names no field of this rule"),
                            ));
                        }
                    }
                }
            }
            match (raw.mode, &rule.into) {
                (Mode::Collect, None) => {
                    return Err(bad(
                        key("into"),
                        "missing: with mode = \"collect\" each rule names the array its markers go into",
                    ));
                }
                (Mode::Collect, Some(a)) => {
                    if a.is_empty() {
                        return Err(bad(key("into"), "must not be empty"));
                    }
                    if !arrays.contains(a) {
                        arrays.push(a.clone());
                    }
                }
                (Mode::Last, Some(_)) => {
                    return Err(bad(key("into"), "only with mode = \"collect\""));
                }
                (Mode::Last, None) => {}
            }
            let required = fields.iter().filter(|(_, o, _)| !o).count();
            rules.push(Checked {
                rule,
                fields,
                required,
            });
        }
        if raw.mode == Mode::Last && (raw.summary.is_some() || raw.summary_default.is_some()) {
            return Err(bad(
                "markers.summary".into(),
                "only with mode = \"collect\"",
            ));
        }
        if let Some(d) = &raw.summary_default {
            if let Some(p) = placeholders(d)
                .into_iter()
                .find(|p| !arrays.iter().any(|a| a == p))
            {
                return Err(bad(
                    "markers.summary_default".into(),
                    format!("`{{{p}}}` names no `into` array"),
                ));
            }
        }
        Ok(MarkerSpec {
            mode: raw.mode,
            summary: raw.summary,
            summary_default: raw.summary_default,
            fixed: raw.fixed,
            rules,
            arrays,
        })
    }
}

/// Fill a template from the captures: `None` when it names an absent field.
fn fill(t: &str, captures: &[(&str, String)]) -> Option<String> {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let after = rest.get(open + 1..).unwrap_or_default();
        let Some(close) = after.find('}') else { break };
        let name = after.get(..close).unwrap_or_default();
        out.push_str(rest.get(..open).unwrap_or_default());
        if is_field_name(name) {
            let (_, v) = captures.iter().find(|(n, _)| *n == name)?;
            out.push_str(v);
        } else {
            out.push('{');
            out.push_str(name);
            out.push('}');
        }
        rest = after.get(close + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    Some(out)
}

impl MarkerSpec {
    /// A grammar with no rules (finds nothing).
    fn empty() -> Self {
        MarkerSpec {
            mode: Mode::Collect,
            summary: None,
            summary_default: None,
            fixed: Map::new(),
            rules: Vec::new(),
            arrays: Vec::new(),
        }
    }

    /// The value the markers in `text` make, `None` when there are none.
    pub fn parse(&self, text: &str) -> Option<Value> {
        let bytes = text.as_bytes();
        if !self
            .rules
            .iter()
            .any(|r| memchr::memmem::find(bytes, r.rule.prefix.as_bytes()).is_some())
        {
            return None;
        }
        let mut arrays: Vec<Vec<Value>> = vec![Vec::new(); self.arrays.len()];
        let mut last: Option<(usize, Value)> = None;
        let mut summary: Option<&str> = None;
        let mut in_fence = false;
        let base = text.as_ptr() as usize;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            let mut found: Vec<(usize, usize, Value)> = Vec::new();
            // Line-start rules: the first whose prefix starts the line.
            let at = line.as_ptr() as usize - base + (line.len() - line.trim_start().len());
            for (ri, r) in self.rules.iter().enumerate() {
                if r.rule.at != At::LineStart {
                    continue;
                }
                if let Some(rest) = t.strip_prefix(r.rule.prefix.as_str()) {
                    if let Some(v) = r.build(rest) {
                        found.push((at, ri, v));
                    }
                    break;
                }
            }
            // Anywhere rules: each runs to the next one on the line.
            let mut rest = line;
            while let Some((pos, ri)) = self.next_marker(rest) {
                let r = &self.rules[ri];
                let after = rest.get(pos + r.rule.prefix.len()..).unwrap_or_default();
                let (body, remaining) = match self.next_marker(after) {
                    Some((n, _)) => (
                        after.get(..n).unwrap_or_default(),
                        after.get(n..).unwrap_or_default(),
                    ),
                    None => (after, ""),
                };
                let offset = rest.as_ptr() as usize - base + pos;
                rest = remaining;
                if let Some(v) = r.build(body) {
                    found.push((offset, ri, v));
                }
            }
            found.sort_by_key(|f| f.0);
            for (offset, ri, v) in found {
                match self.mode {
                    Mode::Collect => {
                        let slot = self.rules[ri]
                            .rule
                            .into
                            .as_ref()
                            .and_then(|a| self.arrays.iter().position(|x| x == a));
                        if let Some(items) = slot.and_then(|s| arrays.get_mut(s)) {
                            items.push(v);
                        }
                    }
                    Mode::Last => {
                        if last.as_ref().is_none_or(|(p, _)| offset >= *p) {
                            last = Some((offset, v));
                        }
                    }
                }
            }
            if self.summary.is_some()
                && summary.is_none()
                && !in_fence
                && !t.is_empty()
                && !self
                    .rules
                    .iter()
                    .any(|r| t.contains(r.rule.prefix.as_str()))
            {
                summary = Some(t);
            }
        }
        let mut out = Map::new();
        match self.mode {
            Mode::Collect => {
                if arrays.iter().all(Vec::is_empty) {
                    return None;
                }
                if let Some(key) = &self.summary {
                    let text = summary.map_or_else(
                        || {
                            let template = self.summary_default.as_deref().unwrap_or("");
                            let counts: Vec<(&str, String)> = self
                                .arrays
                                .iter()
                                .zip(&arrays)
                                .map(|(a, items)| (a.as_str(), items.len().to_string()))
                                .collect();
                            fill(template, &counts).unwrap_or_default()
                        },
                        str::to_owned,
                    );
                    out.insert(key.clone(), Value::String(text));
                }
                for (name, items) in self.arrays.iter().zip(arrays) {
                    out.insert(name.clone(), Value::Array(items));
                }
            }
            Mode::Last => match last? {
                (_, Value::Object(m)) => out = m,
                (_, other) => return Some(other),
            },
        }
        for (k, v) in &self.fixed {
            if !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
        Some(Value::Object(out))
    }

    /// Offset and rule of the next `anywhere` prefix in `text`.
    fn next_marker(&self, text: &str) -> Option<(usize, usize)> {
        self.rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.rule.at == At::Anywhere)
            .filter_map(|(i, r)| {
                memchr::memmem::find(text.as_bytes(), r.rule.prefix.as_bytes()).map(|p| (p, i))
            })
            .min()
    }
}

impl Checked {
    /// The marker's object from the text after its prefix, `None` when its
    /// fields do not fit (Note [Marker grammar]).
    fn build(&self, body: &str) -> Option<Value> {
        let r = &self.rule;
        let (fields_part, text) = match &r.close {
            Some(close) => {
                let (f, t) = body.split_once(close.as_str())?;
                (f, Some(t.trim()))
            }
            None => (body, None),
        };
        let mut captures: Vec<(&str, String)> = Vec::with_capacity(self.fields.len() + 1);
        if !self.fields.is_empty() {
            // Without `close`, blanks around the fields are not part of them
            // (`WORKER_FAILURE: US-7`, or a blank separator after the prefix).
            let fields_part = if r.close.is_none() {
                fields_part.trim()
            } else {
                fields_part
            };
            let parts: Vec<&str> = fields_part
                .splitn(self.fields.len(), r.separator.as_str())
                .collect();
            if parts.len() < self.required {
                return None;
            }
            for ((name, optional, kind), part) in self.fields.iter().zip(parts) {
                let part = if r.close.is_none() { part.trim() } else { part };
                if part.is_empty() {
                    if *kind == Kind::Text && *optional {
                        continue;
                    }
                    return None;
                }
                if !kind.accepts(part) {
                    return None;
                }
                captures.push((name.as_str(), self.allowed(name, part)?));
            }
        }
        if let Some(name) = &r.text {
            let t = text.unwrap_or_default();
            if t.is_empty() {
                return None;
            }
            captures.push((name.as_str(), self.allowed(name, t)?));
        }
        let mut obj = Map::new();
        match &r.set {
            None => {
                for (n, v) in captures {
                    obj.insert(n.to_owned(), Value::String(v));
                }
            }
            Some(set) => {
                for (k, v) in set {
                    let filled = match v {
                        Value::String(t) => fill(t, &captures).map(Value::String),
                        Value::Array(items) if items.iter().all(Value::is_string) => items
                            .iter()
                            .filter_map(Value::as_str)
                            .find_map(|t| fill(t, &captures))
                            .map(Value::String),
                        other => Some(other.clone()),
                    };
                    if let Some(f) = filled {
                        obj.insert(k.clone(), f);
                    }
                }
            }
        }
        Some(Value::Object(obj))
    }

    /// `value` as the rule's `values` list spells it, or as is without a list.
    fn allowed(&self, name: &str, value: &str) -> Option<String> {
        match self.rule.values.get(name) {
            None => Some(value.to_owned()),
            Some(list) => list.iter().find(|v| v.eq_ignore_ascii_case(value)).cloned(),
        }
    }
}

/// A level, category or service name: non-empty, no blanks or brackets.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/') || b >= 0x80
        })
}

/// A story id: one token (`US-004`, `story_12`).
fn is_story_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

#[cfg(test)]
mod tests;
