//! Profiles: everything that describes one kind of agent, as a TOML file.
//!
//! A profile bundles the schema of the agent's answer, the legacy markers it
//! may print instead (Note [Marker grammar] in [`crate::extract::markers`]),
//! the handoff files it may leave, the extraction methods allowed (Note
//! [Methods allowed] in `extract::methods`), coercion, extra invariants and
//! what makes two findings "the same" across sibling outputs. Built in:
//! `claude-ops` (seed 000), `claude-loop` (seed 001), `code-review` (seed
//! 002), each the file `profiles/<name>.toml` compiled into the binary, read
//! by the same code as a user's file. `agentshape profile show NAME` prints
//! one as a starting point.
//!
//! Note [Profile files]: core parses the text; the caller reads the file and
//! the schema file beside it (core does no I/O): [`Profile::from_toml`] takes
//! a `read_schema` callback for `schema = "path"`, which the caller resolves
//! relative to the profile file. Keys (every one optional but `schema`;
//! unknown keys are refused, naming the key):
//!
//! ```toml
//! name = "my-agent"                 # default: the file's stem
//! description = "..."
//! schema = "schemas/answer.json"    # a path, a JSON object as a string, a [schema] table,
//!                                   # or a built-in schema: "builtin:agent-response"
//! handoff = ["handoff.json"]        # legacy fallback files in the state directory
//! coerce = false                    # schema-aligned coercion, each reported
//! pass_env = ["AGENTSHAPE_STORE"]   # agentshape's own variables the agent may see
//! [extract]
//! methods = ["structured", "fenced", "bare", "repaired", "markers"]
//! [[invariants]]                    # added to the schema's root `x-invariants`
//! rule = "self.findings.size() <= 200"
//! message = "at most 200 findings"
//! [contradictions]                  # `check --contradictions` defaults
//! items = "/findings"
//! key = ["file", "line"]
//! compare = ["severity"]
//! [markers]                         # Note [Marker grammar]
//! ```
//!
//! A bad file is one error naming the key ([`Error::ProfileKey`]): unknown
//! key, wrong type, missing or unreadable schema, bad marker field.
//!
//! `pass_env`: agents never inherit agentshape's own `AGENTSHAPE_*`
//! variables (the store URL with its password, `serve`'s token; runtime
//! `process`'s Note \[Agents get no credentials of ours\]); a profile whose
//! agent needs one names it here. Only such names are accepted
//! ([`check_pass_env`]): any other variable reaches the agent anyway.

use serde::Deserialize;
use serde_json::Value;

use crate::check::ContradictionOptions;
use crate::error::{Error, Result};
use crate::extract::{MarkerGrammar, MarkerSpec, Methods};

/// The names of the built-in profiles.
pub const BUILTIN: &[&str] = &["claude-ops", "claude-loop", "code-review"];

/// The built-in schemas by name: what `schema = "builtin:NAME"` names
/// (Note \[Copied profiles\]), each the file `schemas/NAME.json`.
pub const BUILTIN_SCHEMAS: &[(&str, &str)] = &[
    (
        "agent-response",
        include_str!("../../../../schemas/agent-response.json"),
    ),
    (
        "loop-action",
        include_str!("../../../../schemas/loop-action.json"),
    ),
    (
        "code-review",
        include_str!("../../../../schemas/code-review.json"),
    ),
];

/// The embedded files: (name, profile TOML, the built-in schema it names).
const FILES: &[(&str, &str, &str)] = &[
    (
        "claude-ops",
        include_str!("../../../../profiles/claude-ops.toml"),
        "agent-response",
    ),
    (
        "claude-loop",
        include_str!("../../../../profiles/claude-loop.toml"),
        "loop-action",
    ),
    (
        "code-review",
        include_str!("../../../../profiles/code-review.toml"),
        "code-review",
    ),
];

/// The prefix of a `schema` value naming a built-in schema.
const BUILTIN_SCHEMA: &str = "builtin:";

/// Everything a profile says (Note [Profile files]).
#[derive(Debug, Clone)]
pub struct Profile {
    /// The profile's name.
    pub name: String,
    /// One line for people.
    pub description: Option<String>,
    /// The JSON Schema of the structured output, with the profile's extra
    /// invariants added to its root `x-invariants`.
    pub schema: Value,
    /// The legacy marker grammar, if the profile has one.
    pub markers: Option<MarkerSpec>,
    /// Legacy handoff file names (seed 000's `handoff.json`), looked for in
    /// the state directory when structured output is absent.
    pub handoff: Vec<String>,
    /// The extraction methods allowed, and where the markers go.
    pub methods: Methods,
    /// Schema-aligned coercion on by default.
    pub coerce: bool,
    /// What identifies "the same finding" across sibling outputs, if said.
    pub contradictions: Option<ContradictionOptions>,
    /// agentshape's own environment variables the agent may inherit (see
    /// the module's `pass_env`).
    pub pass_env: Vec<String>,
    /// Mask secrets in what the session stores and prints (default true);
    /// `mask = false` is `--no-mask` for every command using the profile.
    pub mask: bool,
}

fn yes() -> bool {
    true
}

/// The file as written; checked into a [`Profile`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    schema: Option<Value>,
    #[serde(default)]
    handoff: Vec<String>,
    #[serde(default)]
    coerce: bool,
    #[serde(default)]
    extract: Option<RawExtract>,
    #[serde(default)]
    invariants: Vec<RawInvariant>,
    #[serde(default)]
    contradictions: Option<RawContradictions>,
    #[serde(default)]
    markers: Option<MarkerSpec>,
    #[serde(default)]
    pass_env: Vec<String>,
    #[serde(default = "yes")]
    mask: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExtract {
    methods: Vec<String>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct RawInvariant {
    rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawContradictions {
    #[serde(default)]
    items: Option<String>,
    key: Vec<String>,
    #[serde(default)]
    compare: Option<Vec<String>>,
    #[serde(default)]
    near_lines: Option<u64>,
    #[serde(default)]
    line_field: Option<String>,
    #[serde(default)]
    description_field: Option<String>,
}

impl Profile {
    /// A built-in profile by name.
    ///
    /// # Errors
    /// [`Error::UnknownProfile`] when no built-in profile has that name.
    pub fn builtin(name: &str) -> Result<Profile> {
        let (text, schema) = builtin_files(name).ok_or_else(|| unknown(name))?;
        Profile::from_toml(text, name, name, &mut |_| Ok(schema.to_owned()))
    }

    /// The TOML text of a built-in profile, as embedded (for `profile show`).
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        builtin_files(name).map(|(t, _)| t)
    }

    /// The TOML text of a built-in profile as `profile show` prints it: a
    /// file that works wherever it is saved (Note \[Copied profiles\]).
    ///
    /// Note \[Copied profiles\]: a built-in's file names its schema by a
    /// path relative to itself in this repository
    /// (`../schemas/agent-response.json`), which means nothing next to a
    /// user's copy (`profile show claude-ops > mine.toml`, then `--profile
    /// ./mine.toml`, failed). So the printed copy names the schema as
    /// `builtin:agent-response`, which every build resolves to the schema
    /// compiled in, the same one the built-in profile uses; a user who wants
    /// to change the schema saves `profile show NAME --schema` and points
    /// `schema` at that file.
    pub fn builtin_text_portable(name: &str) -> Option<String> {
        let &(_, text, schema) = FILES.iter().find(|(n, _, _)| *n == name)?;
        let mut out = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if line.starts_with("schema = ") {
                out.push_str("schema = \"");
                out.push_str(BUILTIN_SCHEMA);
                out.push_str(schema);
                out.push_str("\"\n");
            } else {
                out.push_str(line);
            }
        }
        Some(out)
    }

    /// The schema text of a built-in profile, as embedded.
    pub fn builtin_schema(name: &str) -> Option<&'static str> {
        builtin_files(name).map(|(_, s)| s)
    }

    /// Read a profile file's text (Note [Profile files]). `origin` names the
    /// file in errors; `stem` is the name when the file gives none;
    /// `read_schema` returns the text of the schema file a `schema = "path"`
    /// names (the caller resolves the path against the profile's folder), or
    /// why it cannot.
    ///
    /// # Errors
    /// [`Error::ProfileKey`] naming the file and the key at fault.
    pub fn from_toml(
        text: &str,
        origin: &str,
        stem: &str,
        read_schema: &mut dyn FnMut(&str) -> std::result::Result<String, String>,
    ) -> Result<Profile> {
        let bad = |key: &str, message: String| Error::ProfileKey {
            origin: origin.to_owned(),
            key: key.to_owned(),
            message,
        };
        let raw: RawProfile = toml::from_str(text).map_err(|e| toml_error(origin, text, &e))?;
        let mut schema = match raw.schema {
            None => {
                return Err(bad(
                    "schema",
                    "missing: a path, a JSON object as a string, or a [schema] table".into(),
                ));
            }
            Some(Value::Object(m)) => Value::Object(m),
            Some(Value::String(s)) if s.trim_start().starts_with('{') => {
                serde_json::from_str(&s).map_err(|e| bad("schema", format!("inline JSON: {e}")))?
            }
            Some(Value::String(named)) if named.starts_with(BUILTIN_SCHEMA) => {
                let name = &named[BUILTIN_SCHEMA.len()..];
                let text = builtin_schema_text(name).ok_or_else(|| {
                    let known: Vec<&str> = BUILTIN_SCHEMAS.iter().map(|(n, _)| *n).collect();
                    bad(
                        "schema",
                        format!(
                            "`{named}`: no built-in schema `{name}` (built in: {})",
                            known.join(", ")
                        ),
                    )
                })?;
                serde_json::from_str(text)
                    .map_err(|e| bad("schema", format!("`{named}` is not JSON: {e}")))?
            }
            Some(Value::String(path)) => {
                let text =
                    read_schema(&path).map_err(|e| bad("schema", format!("`{path}`: {e}")))?;
                serde_json::from_str(&text)
                    .map_err(|e| bad("schema", format!("`{path}` is not JSON: {e}")))?
            }
            Some(other) => {
                return Err(bad(
                    "schema",
                    format!("expected a path or a table, found {}", json_kind(&other)),
                ));
            }
        };
        if !schema.is_object() {
            return Err(bad("schema", "must be a JSON object".into()));
        }
        if !raw.invariants.is_empty() {
            add_invariants(&mut schema, &raw.invariants).map_err(|m| bad("invariants", m))?;
        }
        for (i, h) in raw.handoff.iter().enumerate() {
            if h.is_empty() || h.contains(['/', '\\']) || h == "." || h == ".." {
                return Err(bad(
                    &format!("handoff[{i}]"),
                    format!(
                        "`{h}` must be a plain file name (it is looked for in the state directory)"
                    ),
                ));
            }
        }
        let methods = match &raw.extract {
            Some(e) => Methods::from_names(&e.methods).map_err(|m| bad("extract.methods", m))?,
            None => Methods::default(),
        };
        let contradictions = raw
            .contradictions
            .map(|c| {
                contradiction_options(c).map_err(|(k, m)| bad(&format!("contradictions.{k}"), m))
            })
            .transpose()?;
        let name = raw.name.unwrap_or_else(|| stem.to_owned());
        if name.trim().is_empty() {
            return Err(bad("name", "must not be empty".into()));
        }
        check_pass_env(&raw.pass_env).map_err(|m| bad("pass_env", m))?;
        Ok(Profile {
            name,
            description: raw.description,
            schema,
            markers: raw.markers,
            handoff: raw.handoff,
            methods,
            coerce: raw.coerce,
            contradictions,
            pass_env: raw.pass_env,
            mask: raw.mask,
        })
    }

    /// The marker grammar, borrowed for [`crate::extract::ExtractOptions`].
    pub fn grammar(&self) -> Option<MarkerGrammar<'_>> {
        self.markers.as_ref().map(MarkerGrammar::Spec)
    }
}

/// The prefix of agentshape's own environment variables, the only ones an
/// agent does not inherit unless `pass_env` names them.
pub const OWN_ENV_PREFIX: &str = "AGENTSHAPE_";

/// Check a `pass_env` list (a profile's, or an ops config's): each entry is
/// the name of one of agentshape's own variables, `AGENTSHAPE_` and then
/// upper-case letters, digits and `_`.
///
/// # Errors
/// A message naming the first entry that is not.
pub fn check_pass_env(names: &[String]) -> std::result::Result<(), String> {
    for n in names {
        let rest = n.strip_prefix(OWN_ENV_PREFIX).unwrap_or("");
        let ok = !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(format!(
                "`{n}`: only agentshape's own variables ({OWN_ENV_PREFIX}NAME) are withheld from agents, so only they can be named here; every other variable reaches the agent anyway"
            ));
        }
    }
    Ok(())
}

fn builtin_files(name: &str) -> Option<(&'static str, &'static str)> {
    let &(_, text, schema) = FILES.iter().find(|(n, _, _)| *n == name)?;
    Some((text, builtin_schema_text(schema)?))
}

/// The text of the built-in schema `name` (`agent-response`, …).
pub fn builtin_schema_text(name: &str) -> Option<&'static str> {
    BUILTIN_SCHEMAS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, t)| t)
}

fn unknown(name: &str) -> Error {
    Error::UnknownProfile {
        name: name.to_owned(),
        known: BUILTIN.join(", "),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// Append the profile's rules to the schema's root `x-invariants`.
fn add_invariants(schema: &mut Value, extra: &[RawInvariant]) -> std::result::Result<(), String> {
    let Some(root) = schema.as_object_mut() else {
        return Err("the schema is not an object".into());
    };
    let list = root
        .entry("x-invariants")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(items) = list.as_array_mut() else {
        return Err("the schema's `x-invariants` is not a list".into());
    };
    for inv in extra {
        if inv.rule.trim().is_empty() {
            return Err("a rule is empty".into());
        }
        let v = serde_json::to_value(inv).map_err(|e| e.to_string())?;
        items.push(v);
    }
    Ok(())
}

fn contradiction_options(
    c: RawContradictions,
) -> std::result::Result<ContradictionOptions, (&'static str, String)> {
    let mut o = ContradictionOptions::default();
    if let Some(items) = c.items {
        if !(items.is_empty() || items.starts_with('/')) {
            return Err((
                "items",
                format!(
                    "`{items}` is not a JSON Pointer (like `/findings`, or \"\" for the whole output)"
                ),
            ));
        }
        o.items = items;
    }
    let fields = |v: Vec<String>| {
        v.into_iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
    };
    o.key = fields(c.key);
    if o.key.is_empty() {
        return Err(("key", "needs at least one field".into()));
    }
    if let Some(compare) = c.compare {
        o.compare = fields(compare);
        if o.compare.is_empty() {
            return Err(("compare", "needs at least one field".into()));
        }
    }
    o.near_lines = c.near_lines;
    if let Some(l) = c.line_field {
        o.line_field = l;
    }
    if let Some(d) = c.description_field {
        o.description_field = d;
    }
    Ok(o)
}

/// One line for a TOML error: the key at fault (from the error's span: the
/// key on that line, under its table header) and what is wrong.
fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> Error {
    let message = e
        .message()
        .lines()
        .next()
        .unwrap_or("invalid TOML")
        .to_owned();
    let key = e
        .span()
        .map(|span| key_at(text, span.start))
        .filter(|k| !k.is_empty());
    match key {
        Some(key) => Error::ProfileKey {
            origin: origin.to_owned(),
            key,
            message,
        },
        None => Error::InvalidProfile {
            name: origin.to_owned(),
            message,
        },
    }
}

/// The dotted key whose line holds byte `at`: `table.key` from the nearest
/// `[table]` header above and the text before `=` (or the header itself).
fn key_at(text: &str, at: usize) -> String {
    let at = at.min(text.len());
    let head = text.get(..at).unwrap_or(text);
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let line = text
        .get(line_start..)
        .and_then(|l| l.lines().next())
        .unwrap_or_default()
        .trim();
    let header = |l: &str| -> Option<String> {
        let l = l.trim();
        let inner = l
            .strip_prefix("[[")
            .and_then(|x| x.split("]]").next())
            .or_else(|| l.strip_prefix('[').and_then(|x| x.split(']').next()))?;
        Some(inner.trim().to_owned())
    };
    if let Some(h) = header(line) {
        return h;
    }
    let key = line
        .split('=')
        .next()
        .unwrap_or_default()
        .trim()
        .trim_matches('"')
        .to_owned();
    let above = text.get(..line_start).unwrap_or_default();
    let table = above
        .lines()
        .rev()
        .find_map(|l| {
            if l.trim_start().starts_with('[') {
                header(l).map(|h| (h, l.trim_start().starts_with("[[")))
            } else {
                None
            }
        })
        .map(|(name, array)| {
            if !array {
                return name;
            }
            // The index of this `[[name]]` entry: how many came before it.
            let n = above
                .lines()
                .filter(|l| {
                    l.trim_start().starts_with("[[") && header(l).as_deref() == Some(name.as_str())
                })
                .count();
            format!("{name}[{}]", n.saturating_sub(1))
        });
    match table {
        Some(t) if !key.is_empty() => format!("{t}.{key}"),
        Some(t) => t,
        None => key,
    }
}

#[cfg(test)]
mod from_text_tests;
#[cfg(test)]
mod tests;
