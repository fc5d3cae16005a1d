//! A shell call drawn as what it did: the command line, its exit code and
//! its output (long output folded).
//!
//! Note \[Exit codes per agent\]: what each agent records of a command's end.
//! - Claude Code (`Bash`): no code when the command succeeded; a failed one
//!   is a result with `is_error`, its text starting `Exit code N` in recent
//!   versions (older ones give the output only). So: `exit N` when the text
//!   says it, `exit 0` for a result that is not an error, `failed` for an
//!   error without a code.
//! - Codex (`shell`, `exec_command`, `local_shell`): the code only in the
//!   output's text: a JSON `{"output", "metadata": {"exit_code"}}` (older
//!   layout) or a header before `Output:` (`Exit code: N`, `Process exited
//!   with code N`), core's Note \[Codex exit codes\]. The header is not
//!   repeated above the output.
//! - Gemini CLI (`run_shell_command`): the result's text ends with lines
//!   `Exit Code: N` (after `Command:`, `Directory:`, `Output:`, `Error:`).

use std::borrow::Cow;

use maud::{Markup, html};
use serde_json::Value;

use super::outcome::{Outcome, clipped, result_text};

/// Names of the tools that run a shell command, across the three agents.
pub(crate) const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "bash",
    "shell",
    "exec_command",
    "local_shell",
    "run_shell_command",
    "container.exec",
];

/// Output lines shown before the rest is folded.
const SHOWN_LINES: usize = 20;

/// The command line a shell call's input holds, if any.
pub(crate) fn command(input: &Value) -> Option<Cow<'_, str>> {
    let c = input.get("command").or_else(|| input.get("cmd"))?;
    if let Some(s) = c.as_str() {
        return Some(Cow::Borrowed(s));
    }
    let argv: Vec<&str> = c
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    // `["bash", "-lc", "the command"]`: the command is the third.
    if let [sh, flag, script] = argv.as_slice()
        && matches!(sh.rsplit('/').next(), Some("bash" | "sh" | "zsh"))
        && matches!(*flag, "-c" | "-lc")
    {
        return Some(Cow::Borrowed(script));
    }
    Some(Cow::Owned(
        argv.iter()
            .map(|a| {
                if !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
                {
                    (*a).to_owned()
                } else {
                    format!("'{}'", a.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

/// The exit code a result's text records, and the text to show without
/// the lines that said it (Note \[Exit codes per agent\]).
pub(crate) fn exit_code(text: &str) -> (Option<i64>, Cow<'_, str>) {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(trimmed)
        && let Some(code) = v
            .pointer("/metadata/exit_code")
            .or_else(|| v.get("exit_code"))
    {
        let out = v
            .get("output")
            .and_then(Value::as_str)
            .map_or(Cow::Borrowed(text), |s| Cow::Owned(s.to_owned()));
        return (code.as_i64(), out);
    }
    // Claude: `Exit code N` as the first line.
    if let Some(rest) = trimmed.strip_prefix("Exit code ") {
        let (first, body) = rest.split_once('\n').unwrap_or((rest, ""));
        if let Ok(n) = first.trim().parse() {
            return (Some(n), Cow::Borrowed(body));
        }
    }
    // Codex: a header before `Output:`.
    let mut code = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n').take(16) {
        offset += line.len();
        let l = line.trim_end();
        if l == "Output:" {
            if code.is_some() {
                return (code, Cow::Borrowed(&text[offset..]));
            }
            break;
        }
        if let Some(n) = l
            .strip_prefix("Exit code: ")
            .or_else(|| l.strip_prefix("Process exited with code "))
            .and_then(|n| n.trim().parse().ok())
        {
            code = Some(n);
        }
    }
    if code.is_some() {
        return (code, Cow::Borrowed(text));
    }
    // Gemini: `Exit Code: N` among the last lines of a `Command:` report.
    if trimmed.starts_with("Command: ") {
        let code = text
            .lines()
            .rev()
            .take(8)
            .find_map(|l| l.strip_prefix("Exit Code: ")?.trim().parse().ok());
        return (code, Cow::Borrowed(text));
    }
    (None, Cow::Borrowed(text))
}

/// The view of a shell call; `None` when its input names no command.
pub(crate) fn view(input: &Value, result: Option<&Outcome<'_>>) -> Option<Markup> {
    let cmd = command(input)?;
    let note = ["description", "justification"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    let dir = ["workdir", "dir_path", "directory", "cwd"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str));
    let text = result.and_then(|r| r.content).map(result_text);
    let (code, output) = match &text {
        Some(t) => {
            let (c, o) = exit_code(t);
            (c, Some(o))
        }
        None => (None, None),
    };
    let failed = result.is_some_and(|r| r.is_error) || code.is_some_and(|c| c != 0);
    Some(html! {
        div.shell {
            div.cmdline {
                span.prompt aria-hidden="true" { "$ " }
                code.cmd { (&*cmd) }
                " "
                @match (result, code) {
                    (None, _) => span.exit.muted title="the call's result is not on this page" { "no result" },
                    (Some(_), Some(c)) => span.exit.failed[c != 0] { "exit " (c) },
                    (Some(_), None) if failed => span.exit.failed { "failed" },
                    (Some(_), None) => span.exit title="the call did not fail (no code recorded)" { "exit 0" },
                }
            }
            @if note.is_some() || dir.is_some() {
                div.muted.note {
                    @if let Some(n) = note { (n) }
                    @if let Some(d) = dir { @if note.is_some() { " · " } "in " code { (d) } }
                }
            }
            @if let Some(out) = &output {
                @if !out.trim().is_empty() {
                    (clipped(out, SHOWN_LINES, if failed { "out failed" } else { "out" }))
                }
            } @else if result.is_some() {
                p.muted { "The decoder keeps no tool-result text; the forensic log has it." }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_command_line_of_each_agent() {
        assert_eq!(command(&json!({"command": "ls -la"})).unwrap(), "ls -la");
        assert_eq!(
            command(&json!({"cmd": "cargo test"})).unwrap(),
            "cargo test"
        );
        assert_eq!(
            command(&json!({"command": ["bash", "-lc", "rg foo | head"]})).unwrap(),
            "rg foo | head"
        );
        assert_eq!(
            command(&json!({"type": "exec", "command": ["git", "commit", "-m", "it's done"]}))
                .unwrap(),
            r"git commit -m 'it'\''s done'"
        );
        assert!(command(&json!({"path": "x"})).is_none());
        assert!(command(&json!({"command": [1, 2]})).is_none());
    }

    #[test]
    fn exit_codes_as_each_agent_records_them() {
        // Claude, recent versions.
        let (c, out) = exit_code("Exit code 2\nls: cannot access 'x'");
        assert_eq!((c, out.as_ref()), (Some(2), "ls: cannot access 'x'"));
        // Codex, newer header and older JSON.
        let (c, out) = exit_code(
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nboom\n",
        );
        assert_eq!((c, out.as_ref()), (Some(1), "boom\n"));
        let (c, out) = exit_code("Exit code: 0\nWall time: 1s\nOutput:\nok");
        assert_eq!((c, out.as_ref()), (Some(0), "ok"));
        let (c, out) =
            exit_code(r#"{"output":"done\n","metadata":{"exit_code":3,"duration_seconds":0.1}}"#);
        assert_eq!((c, out.as_ref()), (Some(3), "done\n"));
        // Gemini.
        let (c, _) = exit_code(
            "Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)",
        );
        assert_eq!(c, Some(1));
        // Output that merely mentions a code deep inside is not a code.
        let body = format!("{}Exit code: 9\n", "line\n".repeat(20));
        assert_eq!(exit_code(&body).0, None);
        assert_eq!(exit_code("plain output").0, None);
    }

    #[test]
    fn a_shell_view_shows_command_code_and_folds_long_output() {
        let long: String = (1..=30)
            .map(|i| ["line ", &i.to_string(), "\n"].concat())
            .collect();
        let r = Outcome {
            content: Some(&long),
            is_error: false,
        };
        let html = view(
            &json!({"command": "seq 30", "description": "count"}),
            Some(&r),
        )
        .unwrap()
        .into_string();
        assert!(
            html.contains(r#"<code class="cmd">seq 30</code>"#),
            "{html}"
        );
        assert!(html.contains(">exit 0</span>"), "{html}");
        assert!(html.contains("count"), "{html}");
        assert!(html.contains("line 20\n"), "{html}");
        assert!(html.contains("10 more lines"), "{html}");
        let err = Outcome {
            content: Some("Exit code 127\nsh: nope: not found"),
            is_error: true,
        };
        let html = view(&json!({"command": "nope"}), Some(&err))
            .unwrap()
            .into_string();
        assert!(
            html.contains(r#"<span class="exit failed">exit 127</span>"#),
            "{html}"
        );
        assert!(html.contains("not found"), "{html}");
        assert!(!html.contains("Exit code 127"), "{html}");
        let html = view(&json!({"command": "x"}), None).unwrap().into_string();
        assert!(html.contains("no result"), "{html}");
    }
}
