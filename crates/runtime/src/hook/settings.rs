//! Claude Code's settings file (`.claude/settings.json`): adding and
//! removing agentshape's hook entries, as pure functions from the file's
//! text to the new text (the CLI reads, writes and shows the diff).
//!
//! Claude Code keeps hooks under `"hooks"`: an object keyed by event name
//! (`"Stop"`, `"SubagentStop"`, `"PostToolUse"`, …), each an array of
//! matcher groups `{"matcher": "…", "hooks": [{"type": "command",
//! "command": "…", "timeout": 10}]}`. It validates the file strictly, so
//! nothing of ours but the standard keys ever goes into it: an entry is
//! recognised as ours by its command alone (Note \[Which entry is ours\]).
//!
//! Note \[Editing a user's settings\]: the file is the user's (and other
//! tools'), so an edit keeps every byte it does not change: every other
//! key, setting and hook, their order, the spacing, escapes, numbers as
//! written and the final newline (or its absence). The edit is made on
//! the text (Note \[Editing JSON as text\] in `json_edit`), so an
//! uninstall after an install gives the file back byte for byte. A file
//! that needs no change comes back as it was (`changed` is false and the
//! caller writes nothing), so installing twice changes nothing. No file
//! (or one of only white space) becomes a new one, pretty-printed with a
//! 2-space indent and a final newline. Text that is not JSON,
//! and JSON whose top level, `hooks` or event value has the wrong type, is
//! refused with an error naming the line and column or the key, never
//! overwritten.

use serde_json::{Map, Value};

use super::json_edit;

/// The Claude Code hook events agentshape answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// `Stop`: the main agent's final message.
    Stop,
    /// `SubagentStop`: a sub-agent's final message.
    SubagentStop,
    /// `PostToolUse`: every tool call and its result.
    PostToolUse,
}

impl HookEvent {
    /// Every event, in the order `hook uninstall` goes through them.
    pub const ALL: [HookEvent; 3] = [
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PostToolUse,
    ];

    /// The event's key under `"hooks"` in the settings file.
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PostToolUse => "PostToolUse",
        }
    }

    /// The `agentshape hook` subcommand that answers the event.
    pub fn subcommand(self) -> &'static str {
        match self {
            HookEvent::Stop => "stop",
            HookEvent::SubagentStop => "subagent-stop",
            HookEvent::PostToolUse => "post-tool-use",
        }
    }
}

/// What an edit did for one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Install: no entry of ours was there; one was appended.
    Added,
    /// Install: our entry ran another command (an older binary, other
    /// flags); its command was replaced in place (duplicates of ours dropped).
    Replaced,
    /// Install: our entry with this very command was already there.
    Unchanged,
    /// Uninstall: our entries were removed.
    Removed,
    /// Uninstall: there was no entry of ours.
    Absent,
}

impl Change {
    /// The word `--json` output uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Replaced => "replaced",
            Change::Unchanged => "unchanged",
            Change::Removed => "removed",
            Change::Absent => "absent",
        }
    }

    /// Whether the file changes.
    fn edits(self) -> bool {
        matches!(self, Change::Added | Change::Replaced | Change::Removed)
    }
}

/// One event's part of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventChange {
    /// The event.
    pub event: HookEvent,
    /// What happened to its entry.
    pub change: Change,
    /// The command now installed (install), or the first one removed
    /// (uninstall); `None` when uninstall found nothing.
    pub command: Option<String>,
}

/// The result of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new text of the file: the input itself, byte for byte, when
    /// nothing changed (empty when there was no file and nothing to add).
    pub text: String,
    /// Whether the text differs from the input (only then is it written).
    pub changed: bool,
    /// One entry per event asked for, in the order asked (duplicates dropped).
    pub events: Vec<EventChange>,
}

/// A settings file agentshape will not edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The text is not JSON (or not UTF-8).
    #[error("not valid JSON at line {line}, column {column}: {reason}")]
    NotJson {
        /// 1-based line.
        line: usize,
        /// 1-based column (in bytes; as `serde_json` counts).
        column: usize,
        /// What the parser expected there.
        reason: String,
    },
    /// JSON, but a value we must edit has the wrong type.
    #[error("{key} is {found}, expected {expected}")]
    WrongType {
        /// Which value: "the top level", "`hooks`", "`hooks.Stop`".
        key: String,
        /// What it is ("an array").
        found: &'static str,
        /// What Claude Code expects there ("an object").
        expected: &'static str,
    },
}

/// The file's bytes as text, or [`SettingsError::NotJson`] naming the line
/// and column of the first byte that is not UTF-8.
///
/// # Errors
/// When the bytes are not UTF-8.
pub fn decode(bytes: &[u8]) -> Result<&str, SettingsError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = memchr::memchr_iter(b'\n', good).count() + 1;
        let column = good.len() - memchr::memrchr(b'\n', good).map_or(0, |p| p + 1) + 1;
        SettingsError::NotJson {
            line,
            column,
            reason: "invalid UTF-8".to_owned(),
        }
    })
}

/// Make sure exactly one agentshape entry runs `command` for each event
/// (Note \[Editing a user's settings\]). `text` is the file's content,
/// `None` when there is no file. An event's entry of ours with another
/// command is replaced in place; a missing one is appended as a new
/// matcher group (`PostToolUse`'s with `"matcher": "*"`, every tool).
///
/// # Errors
/// [`SettingsError`] when the text is not JSON, or the top level, `hooks`
/// or an event's value has the wrong type.
pub fn install(text: Option<&str>, entries: &[(HookEvent, &str)]) -> Result<Edited, SettingsError> {
    let root = parse(text)?;
    let mut out = start_text(text);
    let mut events: Vec<EventChange> = Vec::new();
    for &(event, command) in entries {
        if events.iter().any(|e| e.event == event) {
            continue;
        }
        check_event(&root, event)?;
        let change;
        (out, change) = install_one(&out, event, command)?;
        events.push(EventChange {
            event,
            change,
            command: Some(command.to_owned()),
        });
    }
    Ok(finish(text, out, events))
}

/// Remove agentshape's entries for each event, and only them: a matcher
/// group left with no hooks is dropped, then an event left with no
/// groups, then `hooks` when that left it empty (a container that was
/// empty before is kept).
///
/// # Errors
/// As [`install`].
pub fn uninstall(text: Option<&str>, events: &[HookEvent]) -> Result<Edited, SettingsError> {
    let root = parse(text)?;
    let mut out = start_text(text);
    let mut done: Vec<EventChange> = Vec::new();
    let mut emptied_an_event = false;
    for &event in events {
        if done.iter().any(|e| e.event == event) {
            continue;
        }
        check_event(&root, event)?;
        let (removed, emptied);
        (out, removed, emptied) = uninstall_one(&out, event)?;
        emptied_an_event |= emptied;
        done.push(EventChange {
            event,
            change: if removed.is_some() {
                Change::Removed
            } else {
                Change::Absent
            },
            command: removed,
        });
    }
    if emptied_an_event {
        let tree = tree(&out)?;
        if let (Some(i), Some(hooks)) = (tree.index_of("hooks"), tree.get("hooks"))
            && matches!(&hooks.kind, json_edit::Kind::Object(m) if m.is_empty())
        {
            out = json_edit::remove(&out, &tree, i);
        }
    }
    Ok(finish(text, out, done))
}

/// The text edits start from: the file's, or for no file (or one of only
/// white space) an empty object laid out as a new file is.
fn start_text(text: Option<&str>) -> String {
    match text.filter(|t| !t.trim().is_empty()) {
        Some(t) => t.to_owned(),
        None => "{\n}\n".to_owned(),
    }
}

/// The new text: the input unchanged, or the edited text.
fn finish(text: Option<&str>, edited: String, events: Vec<EventChange>) -> Edited {
    let changed = events.iter().any(|e| e.change.edits());
    let text = if changed {
        edited
    } else {
        text.unwrap_or_default().to_owned()
    };
    Edited {
        text,
        changed,
        events,
    }
}

/// The spans of `text`, which [`parse`] found to be JSON.
fn tree(text: &str) -> Result<json_edit::Node, SettingsError> {
    json_edit::parse(text).ok_or_else(|| SettingsError::NotJson {
        line: 1,
        column: 1,
        reason: "the text could not be parsed for editing".to_owned(),
    })
}
/// The top-level object; no file, or one of only white space, is `{}`.
fn parse(text: Option<&str>) -> Result<Map<String, Value>, SettingsError> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let (line, column) = (e.line(), e.column());
        let full = e.to_string();
        let reason = full
            .strip_suffix(&format!(" at line {line} column {column}"))
            .unwrap_or(&full)
            .to_owned();
        // `serde_json` says column 0 when it failed on a newline: name
        // that newline's place on the line it ends, as an editor shows it.
        let (line, column) = match (column, text.split('\n').nth(line.wrapping_sub(2))) {
            (0, Some(before)) => (line - 1, before.len() + 1),
            _ => (line, column),
        };
        SettingsError::NotJson {
            line,
            column,
            reason,
        }
    })?;
    let Value::Object(root) = value else {
        return Err(wrong("the top level".to_owned(), &value, "an object"));
    };
    if let Some(hooks) = root.get("hooks")
        && !hooks.is_object()
    {
        return Err(wrong("`hooks`".to_owned(), hooks, "an object"));
    }
    Ok(root)
}

/// Refuse an event value that is not an array (Claude Code's own rule).
fn check_event(root: &Map<String, Value>, event: HookEvent) -> Result<(), SettingsError> {
    match root.get("hooks").and_then(|h| h.get(event.key())) {
        Some(v) if !v.is_array() => Err(wrong(
            format!("`hooks.{}`", event.key()),
            v,
            "an array of matcher groups",
        )),
        _ => Ok(()),
    }
}

fn wrong(key: String, found: &Value, expected: &'static str) -> SettingsError {
    SettingsError::WrongType {
        key,
        found: kind(found),
        expected,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Where our entries for `event` are in an event's array of groups:
/// (group index, hook index, the command), in order.
fn ours(text: &str, groups: &json_edit::Node, event: HookEvent) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    for (g, group) in groups.items().iter().enumerate() {
        let Some(hooks) = group.get("hooks") else {
            continue;
        };
        for (h, hook) in hooks.items().iter().enumerate() {
            let command = hook
                .get("command")
                .and_then(|c| serde_json::from_str::<String>(&text[c.start..c.end]).ok());
            if let Some(c) = command.filter(|c| is_ours(c, event)) {
                found.push((g, h, c));
            }
        }
    }
    found
}

/// The text with agentshape's entry for `event` running `command`, and
/// what changed (Note \[Editing JSON as text\] in `json_edit`).
fn install_one(
    text: &str,
    event: HookEvent,
    command: &str,
) -> Result<(String, Change), SettingsError> {
    let root = tree(text)?;
    let group = new_group(event, command);
    let Some(hooks) = root.get("hooks") else {
        let value = serde_json::json!({ event.key(): [group] });
        return Ok((
            json_edit::append(text, &root, &root, Some("hooks"), &value),
            Change::Added,
        ));
    };
    let Some(groups) = hooks.get(event.key()) else {
        let value = Value::Array(vec![group]);
        return Ok((
            json_edit::append(text, &root, hooks, Some(event.key()), &value),
            Change::Added,
        ));
    };
    let found = ours(text, groups, event);
    let Some((g, h, old)) = found.first() else {
        return Ok((
            json_edit::append(text, &root, groups, None, &group),
            Change::Added,
        ));
    };
    let mut out = text.to_owned();
    let mut change = Change::Unchanged;
    if old != command
        && let Some(node) = groups.items()[*g]
            .get("hooks")
            .and_then(|hs| hs.items().get(*h))
            .and_then(|hook| hook.get("command"))
    {
        out = json_edit::replace(&out, node, &Value::String(command.to_owned()));
        change = Change::Replaced;
    }
    // Exactly one: further entries of ours (installed by hand, or twice
    // by an older build) go, and a group they leave empty with them.
    if found.len() > 1 {
        out = remove_hooks(&out, event, &found[1..])?;
        change = Change::Replaced;
    }
    Ok((out, change))
}

/// Remove the hooks at `at` (group, hook) of `event`'s array, from the
/// back so the places before stay valid; a group left with no hooks goes.
fn remove_hooks(
    text: &str,
    event: HookEvent,
    at: &[(usize, usize, String)],
) -> Result<String, SettingsError> {
    let mut out = text.to_owned();
    for (g, h, _) in at.iter().rev() {
        let root = tree(&out)?;
        let Some(groups) = root.get("hooks").and_then(|hs| hs.get(event.key())) else {
            break;
        };
        let Some(group) = groups.items().get(*g) else {
            continue;
        };
        let Some(hooks) = group.get("hooks") else {
            continue;
        };
        out = if hooks.items().len() == 1 {
            json_edit::remove(&out, groups, *g)
        } else {
            json_edit::remove(&out, hooks, *h)
        };
    }
    Ok(out)
}

/// Remove our entries for `event`: the text, the first command removed,
/// and whether the event's array was emptied by it (and so dropped).
fn uninstall_one(
    text: &str,
    event: HookEvent,
) -> Result<(String, Option<String>, bool), SettingsError> {
    let root = tree(text)?;
    let Some(groups) = root.get("hooks").and_then(|hs| hs.get(event.key())) else {
        return Ok((text.to_owned(), None, false));
    };
    let found = ours(text, groups, event);
    let Some((_, _, command)) = found.first() else {
        return Ok((text.to_owned(), None, false));
    };
    let command = command.clone();
    let mut out = remove_hooks(text, event, &found)?;
    let root = tree(&out)?;
    let emptied = root
        .get("hooks")
        .and_then(|hs| hs.get(event.key()))
        .is_some_and(|g| g.items().is_empty());
    if emptied
        && let Some(hooks) = root.get("hooks")
        && let Some(i) = hooks.index_of(event.key())
    {
        out = json_edit::remove(&out, hooks, i);
    }
    Ok((out, Some(command), emptied))
}

/// The matcher group `install` appends.
fn new_group(event: HookEvent, command: &str) -> Value {
    let mut hook = Map::new();
    hook.insert("type".to_owned(), "command".into());
    hook.insert("command".to_owned(), command.into());
    hook.insert("timeout".to_owned(), 10.into());
    let mut group = Map::new();
    if event == HookEvent::PostToolUse {
        group.insert("matcher".to_owned(), "*".into());
    }
    group.insert("hooks".to_owned(), Value::Array(vec![Value::Object(hook)]));
    Value::Object(group)
}

/// Whether a hook command is agentshape's entry for `event`.
///
/// Note \[Which entry is ours\]: Claude Code rejects unknown keys, so no
/// marker can be stored beside the entry; the command says it. An entry
/// is ours when its first word's file name is `agentshape` (or
/// `agentshape.exe`), its second is `hook` and its third is the event's
/// subcommand, wherever the binary lives: a reinstall from another build
/// replaces it instead of adding a second, and a hand-written
/// `agentshape hook stop --profile x` entry counts as ours too (so a
/// reinstall updates it, uninstall removes it). Anything else, agentshape
/// run through a wrapper included, is someone else's and never touched.
pub fn is_ours(command: &str, event: HookEvent) -> bool {
    let Some(words) = split_words(command) else {
        return false;
    };
    let [program, hook, sub, ..] = words.as_slice() else {
        return false;
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    matches!(name, "agentshape" | "agentshape.exe") && hook == "hook" && sub == event.subcommand()
}

/// The words of a command as a POSIX shell splits them (quotes,
/// backslashes and `#` comments; no expansion), or `None` for an
/// unterminated quote or a final lone backslash: [`shlex::split`].
pub fn split_words(command: &str) -> Option<Vec<String>> {
    shlex::split(command)
}

/// One word for a POSIX shell (Claude Code runs a hook's command through
/// one): as it is when every character is plain, else in single quotes
/// (a `'` inside written `'\''`). Not [`shlex::try_quote`]: it quotes
/// `=`, `%` and `,` too and writes a `'` in double quotes, so a reinstall
/// would rewrite every entry an earlier version installed.
pub fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=:,./@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The command line for `words`, each [`quote`]d.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines of context around each change in [`unified_diff`].
const CONTEXT: usize = 3;

/// How long [`unified_diff`] searches for the shortest diff before it
/// settles for a longer one: settings files are small, and the answer stays
/// correct, only longer.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// A unified diff (`diff -u` format, 3 lines of context) from `old` to
/// `new`; empty when they are equal. A file without a final newline gets
/// `\ No newline at end of file`; `old_label` is `/dev/null` for a file
/// that does not exist yet. The diff is [`similar`]'s.
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(old_label, new_label)
        .to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::format_collect)]
mod tests {
    use super::*;
    use serde_json::json;

    const CMD: &str = "/opt/bin/agentshape hook stop --profile claude-ops --store /srv/a.db";
    const SUB: &str = "/opt/bin/agentshape hook subagent-stop --profile claude-ops";
    const POST: &str = "/opt/bin/agentshape hook post-tool-use --store /srv/a.db";

    fn install_stop(text: Option<&str>) -> Edited {
        install(text, &[(HookEvent::Stop, CMD)]).unwrap()
    }

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn stop_group(cmd: &str) -> Value {
        json!({"hooks": [{"type": "command", "command": cmd, "timeout": 10}]})
    }

    /// Install on many inputs: (name, input, the whole expected JSON).
    #[test]
    fn install_table() {
        let foreign = json!({"type": "command", "command": "./lint.sh", "timeout": 5});
        let twice = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{CMD}"}}]}}, {{"hooks": [{{"type": "command", "command": "agentshape hook stop"}}]}}]}}}}"#
        );
        let cases: Vec<(&str, Option<&str>, Value)> = vec![
            (
                "no file",
                None,
                json!({"hooks": {"Stop": [stop_group(CMD)]}}),
            ),
            (
                "empty file",
                Some(""),
                json!({"hooks": {"Stop": [stop_group(CMD)]}}),
            ),
            (
                "empty object",
                Some("{}"),
                json!({"hooks": {"Stop": [stop_group(CMD)]}}),
            ),
            (
                "other settings kept, in order, hooks appended last",
                Some(
                    r#"{"permissions": {"allow": ["Bash(ls:*)"]}, "model": "opus", "env": {"A": "1"}}"#,
                ),
                json!({"permissions": {"allow": ["Bash(ls:*)"]}, "model": "opus", "env": {"A": "1"},
                       "hooks": {"Stop": [stop_group(CMD)]}}),
            ),
            (
                "other hooks on the same event kept, ours appended",
                Some(
                    r#"{"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}]}}"#,
                ),
                json!({"hooks": {"Stop": [{"matcher": "", "hooks": [foreign.clone()]}, stop_group(CMD)]}}),
            ),
            (
                "other events kept",
                Some(
                    r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
                ),
                json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
                                 "Stop": [stop_group(CMD)]}}),
            ),
            (
                "replaced in place when the command changed (another binary, other flags)",
                Some(
                    r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}, {"type": "command", "command": "'/old place/agentshape' hook stop --profile x", "timeout": 30}]}]}}"#,
                ),
                json!({"hooks": {"Stop": [{"hooks": [foreign.clone(), {"type": "command", "command": CMD, "timeout": 30}]}]}}),
            ),
            (
                "a second entry of ours dropped, with the group it empties",
                Some(&twice),
                json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": CMD}]}]}}),
            ),
            (
                "agentshape for another event is not ours for Stop",
                Some(
                    r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agentshape hook post-tool-use"}]}]}}"#,
                ),
                json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agentshape hook post-tool-use"}]}, stop_group(CMD)]}}),
            ),
        ];
        for (name, input, want) in cases {
            let out = install_stop(input);
            assert!(out.changed, "{name}");
            assert_eq!(value(&out.text), want, "{name}");
            // A new file is laid out pretty, with a final newline.
            if input.is_none_or(|i| i.trim().is_empty()) {
                assert_eq!(
                    out.text,
                    format!("{}\n", serde_json::to_string_pretty(&want).unwrap()),
                    "{name}"
                );
            }
            // Nothing of ours was there: uninstall gives back every byte.
            if let Some(i) = input.filter(|i| !i.contains("agentshape") && !i.trim().is_empty()) {
                let back = uninstall(Some(&out.text), &[HookEvent::Stop]).unwrap();
                assert_eq!(back.text, i, "{name}");
            }
            // Installing again changes nothing, byte for byte.
            let again = install_stop(Some(&out.text));
            assert!(!again.changed, "{name}");
            assert_eq!(again.text, out.text, "{name}");
            assert_eq!(again.events[0].change, Change::Unchanged, "{name}");
        }
    }

    #[test]
    fn change_kinds_are_reported() {
        let added = install_stop(None);
        assert_eq!(
            added.events,
            vec![EventChange {
                event: HookEvent::Stop,
                change: Change::Added,
                command: Some(CMD.to_owned())
            }]
        );
        let older = added.text.replace("claude-ops", "code-review");
        let replaced = install_stop(Some(&older));
        assert_eq!(replaced.events[0].change, Change::Replaced);
        assert_eq!(replaced.text, added.text);
    }

    #[test]
    fn post_tool_use_matches_every_tool_and_events_are_not_repeated() {
        let out = install(
            None,
            &[
                (HookEvent::PostToolUse, POST),
                (HookEvent::SubagentStop, SUB),
                (HookEvent::PostToolUse, POST),
            ],
        )
        .unwrap();
        assert_eq!(out.events.len(), 2);
        assert_eq!(
            value(&out.text),
            json!({"hooks": {
                "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": POST, "timeout": 10}]}],
                "SubagentStop": [stop_group(SUB)],
            }})
        );
        assert!(out.text.find("\"matcher\"").unwrap() < out.text.find("\"command\"").unwrap());
    }

    /// One-line JSON, tabs, keys in odd order: read, order kept, every
    /// byte kept but the edit's, left alone byte for byte when unchanged.
    #[test]
    fn unusual_formatting() {
        let inputs = [
            r#"{"zeta":1,"alpha":{"y":[1,2],"b":true},"hooks":{"Stop":[]}}"#,
            "{\n\t\"zeta\" :\t1 ,\n\t\"alpha\": {\"y\": [1,\n2], \"b\": true},\r\n\"hooks\":{\"Stop\":[ ]}}",
        ];
        for input in inputs {
            let out = install_stop(Some(input));
            assert!(out.changed);
            let keys: Vec<String> = value(&out.text)
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            assert_eq!(keys, ["zeta", "alpha", "hooks"]);
            // Every byte before the edit is the input's (issue 40).
            let kept = &input[..input.find("\"hooks\"").unwrap()];
            assert!(out.text.starts_with(kept), "{}", out.text);
            assert!(out.text.ends_with("]}}"), "{}", out.text);
            assert_eq!(value(&out.text)["alpha"], json!({"y": [1, 2], "b": true}));
            // Uninstalled again: nothing of ours; the `Stop` array our
            // removal emptied goes, and `hooks` with it (uninstall cannot
            // know the empty array was there before, and it meant nothing).
            let back = uninstall(Some(&out.text), &HookEvent::ALL).unwrap();
            assert_eq!(
                value(&back.text),
                json!({"zeta": 1, "alpha": {"y": [1, 2], "b": true}})
            );
            // Nothing to do: the odd formatting stays, byte for byte.
            let none = uninstall(Some(input), &HookEvent::ALL).unwrap();
            assert!(!none.changed);
            assert_eq!(none.text, input);
        }
    }

    #[test]
    fn uninstall_keeps_foreign_hooks_and_drops_containers_it_emptied() {
        let input = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
                "Stop": [
                    {"hooks": [{"type": "command", "command": "./lint.sh"}, {"type": "command", "command": CMD}]},
                    stop_group("agentshape.exe hook stop"),
                ],
                "SubagentStop": [stop_group(SUB)],
                "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": POST, "timeout": 10}]}],
            },
            "env": {},
        });
        let text = serde_json::to_string_pretty(&input).unwrap();
        let out = uninstall(Some(&text), &HookEvent::ALL).unwrap();
        assert!(out.changed);
        assert_eq!(
            value(&out.text),
            json!({
                "model": "opus",
                "hooks": {
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
                    "Stop": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}],
                },
                "env": {},
            })
        );
        let keys: Vec<String> = value(&out.text)["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["PreToolUse", "Stop"]);
        let changes: Vec<(HookEvent, Change, Option<&str>)> = out
            .events
            .iter()
            .map(|e| (e.event, e.change, e.command.as_deref()))
            .collect();
        assert_eq!(
            changes,
            [
                (HookEvent::Stop, Change::Removed, Some(CMD)),
                (HookEvent::SubagentStop, Change::Removed, Some(SUB)),
                (HookEvent::PostToolUse, Change::Removed, Some(POST)),
            ]
        );
        // Only ours: `hooks` emptied by us goes; the file keeps the rest.
        let only = install_stop(Some(r#"{"model": "opus"}"#));
        let back = uninstall(Some(&only.text), &[HookEvent::Stop]).unwrap();
        assert_eq!(value(&back.text), json!({"model": "opus"}));
        // One event only: the others stay.
        let both = install(
            None,
            &[(HookEvent::Stop, CMD), (HookEvent::PostToolUse, POST)],
        )
        .unwrap();
        let one = uninstall(Some(&both.text), &[HookEvent::PostToolUse]).unwrap();
        assert_eq!(
            value(&one.text),
            json!({"hooks": {"Stop": [stop_group(CMD)]}})
        );
    }

    #[test]
    fn uninstall_when_absent_changes_nothing() {
        let inputs = [
            None,
            Some(""),
            Some("{}"),
            Some(r#"{"hooks": {}}"#),
            Some(r#"{"hooks":{"Stop":[{"hooks":[]}],"SubagentStop":[]}}"#),
            Some(
                r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "wrapper agentshape hook stop"}]}]}}"#,
            ),
        ];
        for input in inputs {
            let out = uninstall(input, &HookEvent::ALL).unwrap();
            assert!(!out.changed, "{input:?}");
            assert_eq!(out.text, input.unwrap_or_default());
            assert!(
                out.events
                    .iter()
                    .all(|e| e.change == Change::Absent && e.command.is_none())
            );
        }
    }

    #[test]
    fn refusals_name_the_line_or_the_key() {
        let cases: Vec<(&str, SettingsError)> = vec![
            (
                "{\n  \"model\": \"opus\",\n  \"hooks\": {,}\n}",
                SettingsError::NotJson {
                    line: 3,
                    column: 13,
                    reason: "key must be a string".to_owned(),
                },
            ),
            (
                "{\"a\": 1,}",
                SettingsError::NotJson {
                    line: 1,
                    column: 9,
                    reason: "trailing comma".to_owned(),
                },
            ),
            (
                "// comment\n{}",
                SettingsError::NotJson {
                    line: 1,
                    column: 1,
                    reason: "expected value".to_owned(),
                },
            ),
            (
                "[]",
                SettingsError::WrongType {
                    key: "the top level".to_owned(),
                    found: "an array",
                    expected: "an object",
                },
            ),
            (
                r#"{"hooks": []}"#,
                SettingsError::WrongType {
                    key: "`hooks`".to_owned(),
                    found: "an array",
                    expected: "an object",
                },
            ),
            (
                r#"{"hooks": null}"#,
                SettingsError::WrongType {
                    key: "`hooks`".to_owned(),
                    found: "null",
                    expected: "an object",
                },
            ),
            (
                r#"{"hooks": {"Stop": {"hooks": []}}}"#,
                SettingsError::WrongType {
                    key: "`hooks.Stop`".to_owned(),
                    found: "an object",
                    expected: "an array of matcher groups",
                },
            ),
        ];
        for (input, want) in cases {
            assert_eq!(install_stop_err(input), want, "{input}");
            assert_eq!(
                uninstall(Some(input), &[HookEvent::Stop]).unwrap_err(),
                want,
                "{input}"
            );
        }
        let e = install_stop_err("{\n  \"a\": tru\n}");
        assert_eq!(
            e.to_string(),
            "not valid JSON at line 2, column 11: expected ident"
        );
        // Another event's odd value is not ours to judge.
        assert!(
            install(
                Some(r#"{"hooks": {"Notification": 3}}"#),
                &[(HookEvent::Stop, CMD)]
            )
            .is_ok()
        );
    }

    fn install_stop_err(text: &str) -> SettingsError {
        install(Some(text), &[(HookEvent::Stop, CMD)]).unwrap_err()
    }

    #[test]
    fn decode_names_the_bad_byte() {
        assert_eq!(decode(b"{}").unwrap(), "{}");
        assert_eq!(
            decode(b"{\n  \"a\": \"\xff\"}").unwrap_err(),
            SettingsError::NotJson {
                line: 2,
                column: 9,
                reason: "invalid UTF-8".to_owned()
            }
        );
    }

    #[test]
    fn ownership_by_command() {
        let ours_stop = [
            "agentshape hook stop",
            "/usr/local/bin/agentshape hook stop --profile x",
            "'/home/a b/bin/agentshape' hook stop",
            "\"/home/a b/bin/agentshape\" hook 'stop'",
            "C:\\\\tools\\\\agentshape.exe hook stop",
            "  agentshape   hook\tstop  ",
        ];
        for c in ours_stop {
            assert!(is_ours(c, HookEvent::Stop), "{c}");
        }
        let not = [
            "agentshape hook subagent-stop",
            "agentshape hook",
            "agentshape-dev hook stop",
            "nice agentshape hook stop",
            "agentshape check stop",
            "'agentshape hook stop",
            "/bin/agentshape/x hook stop",
            "",
        ];
        for c in not {
            assert!(!is_ours(c, HookEvent::Stop), "{c}");
        }
        assert!(is_ours(
            "agentshape hook subagent-stop",
            HookEvent::SubagentStop
        ));
        assert!(is_ours(
            "agentshape hook post-tool-use",
            HookEvent::PostToolUse
        ));
    }

    #[test]
    fn quoting_round_trips_through_the_splitter() {
        let words = [
            "/a b/agentshape",
            "hook",
            "stop",
            "--schema",
            "/x/it's \"q\" $HOME\\",
            "",
            "plain-1.toml",
        ];
        let line = command_line(&words);
        assert_eq!(
            line,
            r#"'/a b/agentshape' hook stop --schema '/x/it'\''s "q" $HOME\' '' plain-1.toml"#
        );
        assert_eq!(split_words(&line).unwrap(), words);
        assert!(is_ours(&line, HookEvent::Stop));
        assert_eq!(
            quote("postgres://u@h/db?sslmode=require"),
            "'postgres://u@h/db?sslmode=require'"
        );
    }

    #[test]
    fn words_split_as_a_shell_splits_them() {
        let words = |c: &str| split_words(c).unwrap();
        assert_eq!(
            words("a 'b c'\t\"d\\\"e\"  f\\ g"),
            ["a", "b c", "d\"e", "f g"]
        );
        // `#` starts a comment at the start of a word, as in the shell.
        assert_eq!(
            words("agentshape hook stop # installed by hand"),
            ["agentshape", "hook", "stop"]
        );
        assert_eq!(words("a#b"), ["a#b"]);
        assert!(is_ours("agentshape hook stop # note", HookEvent::Stop));
        assert_eq!(split_words("a 'b"), None);
        assert_eq!(split_words("a \"b"), None);
    }

    /// Apply a unified diff to `old`, checking every context and removed
    /// line, to prove the diff takes `old` to `new`.
    fn apply(old: &str, diff: &str) -> String {
        let a: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out: Vec<String> = Vec::new();
        let mut next = 0; // the next old line to copy
        let mut lines = diff.split_inclusive('\n').skip(2).peekable();
        while let Some(header) = lines.next() {
            let h = header.strip_prefix("@@ -").unwrap();
            let old_range = h.split(' ').next().unwrap();
            let mut parts = old_range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |l| l.parse().unwrap());
            let first = if len == 0 { start } else { start - 1 };
            assert!(first >= next, "hunks out of order");
            out.extend(a[next..first].iter().map(|s| (*s).to_owned()));
            next = first;
            let mut prev_mark = "";
            while let Some(l) = lines.peek().filter(|l| !l.starts_with("@@")) {
                let l = *l;
                lines.next();
                let (mark, body) = l.split_at(1);
                let last = std::mem::replace(&mut prev_mark, mark);
                match mark {
                    " " | "-" => {
                        let want = body.strip_suffix('\n').unwrap_or(body);
                        let got = a[next].strip_suffix('\n').unwrap_or(a[next]);
                        assert_eq!(got, want, "context or removed line differs");
                        if mark == " " {
                            out.push(a[next].to_owned());
                        }
                        next += 1;
                    }
                    "+" => out.push(body.to_owned()),
                    "\\" => {
                        // The line before has no newline: in the new text
                        // only when it was added (a context line was copied
                        // from `old` as it is, a removed one is gone).
                        if last == "+" {
                            let prev = out.last_mut().unwrap();
                            *prev = prev.strip_suffix('\n').unwrap().to_owned();
                        }
                    }
                    _ => panic!("bad diff line {l:?}"),
                }
            }
        }
        out.extend(a[next..].iter().map(|s| (*s).to_owned()));
        out.concat()
    }

    #[test]
    fn diff_takes_old_to_new() {
        let many: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let pairs: Vec<(String, String)> = vec![
            (String::new(), "{}\n".to_owned()),
            ("{}\n".to_owned(), String::new()),
            ("a\nb\nc\n".to_owned(), "a\nB\nc\n".to_owned()),
            ("a\nb\nc\n".to_owned(), "x\na\nb\nc\ny\n".to_owned()),
            ("x\na\nb\nc\ny\n".to_owned(), "a\nb\nc\n".to_owned()),
            ("{\"a\":1}".to_owned(), "{\n  \"a\": 1\n}\n".to_owned()),
            ("a\nb".to_owned(), "a\nb\n".to_owned()),
            ("a\nb\n".to_owned(), "a\nc".to_owned()),
            (
                many.clone(),
                many.replace("line 2\n", "")
                    .replace("line 25\n", "line 25\nnew\n"),
            ),
            (
                many.clone(),
                many.replace("line 10\n", "ten\n").replace("line 14\n", ""),
            ),
            (many.clone(), format!("{many}tail\n")),
        ];
        for (old, new) in &pairs {
            let diff = unified_diff(old, new, "a/s.json", "b/s.json");
            assert!(
                diff.starts_with("--- a/s.json\n+++ b/s.json\n@@ -"),
                "{diff}"
            );
            assert_eq!(&apply(old, &diff), new, "{old:?} -> {new:?}\n{diff}");
        }
        assert_eq!(unified_diff("same\n", "same\n", "a", "b"), "");
        // Far-apart changes are two hunks, with 3 lines of context each.
        let two = unified_diff(&many, &pairs[8].1, "a", "b");
        assert_eq!(two.matches("@@ -").count(), 2, "{two}");
        assert!(
            two.contains("@@ -1,5 +1,4 @@\n line 1\n-line 2\n line 3\n"),
            "{two}"
        );
        assert!(two.contains("@@ -23,6 +22,7 @@\n line 23\n"), "{two}");
        // Near changes share one.
        assert_eq!(
            unified_diff(&many, &pairs[9].1, "a", "b")
                .matches("@@ -")
                .count(),
            1
        );
        assert_eq!(
            unified_diff("", "{}\n", "/dev/null", "b"),
            "--- /dev/null\n+++ b\n@@ -0,0 +1 @@\n+{}\n"
        );
        assert_eq!(
            unified_diff("a\nb", "a\nc", "x", "y"),
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }
}
