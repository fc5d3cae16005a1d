//! File edits drawn as diffs: the file's path, then its lines added
//! (`add`) and removed (`del`) with a little context, for Claude Code's
//! `Edit`, `MultiEdit` and `Write`, Codex's `apply_patch` and Gemini CLI's
//! `replace` and `write_file`.
//!
//! An `Edit` holds the replaced text and its replacement, not the file, so
//! its diff is of those two strings (computed by `similar`, line by line,
//! with at most [`DIFF_TIMEOUT`] of work: a larger pair is shown as
//! all-removed then all-added). A `Write` holds the new content only: every
//! line is added. A Codex patch is drawn from its own text (`*** Update
//! File: path`, `@@`, `+`, `-`, ` ` lines). At most [`MAX_LINES`] lines of
//! one call are drawn; the first [`SHOWN_LINES`] show, the rest fold.

use std::time::Duration;

use maud::{Markup, html};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// Names of the tools that edit files, across the three agents.
pub(crate) const EDIT_TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "Write",
    "apply_patch",
    "replace",
    "write_file",
];

/// Diff lines shown before the rest is folded.
const SHOWN_LINES: usize = 40;
/// Diff lines drawn at most for one call.
const MAX_LINES: usize = 2_000;
/// The most time one diff may take.
const DIFF_TIMEOUT: Duration = Duration::from_millis(20);

/// One line of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Del,
    Ctx,
    /// A hunk's header or a gap between hunks.
    Hunk,
}

/// One file's part of an edit.
#[derive(Debug, Default)]
struct FileDiff<'a> {
    path: &'a str,
    /// `edit`, `write`, `add`, `update`, `delete`, `move to …`.
    op: String,
    lines: Vec<(Kind, &'a str)>,
}

fn path_of(input: &Value) -> &str {
    ["file_path", "path", "absolute_path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .unwrap_or("")
}

/// `old` → `new` as diff lines with 3 lines of context, gaps between hunks.
fn diff_lines<'a>(old: &'a str, new: &'a str, out: &mut Vec<(Kind, &'a str)>) {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    for (i, group) in diff.grouped_ops(3).iter().enumerate() {
        if i > 0 {
            out.push((Kind::Hunk, "⋯"));
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => Kind::Ctx,
                    ChangeTag::Delete => Kind::Del,
                    ChangeTag::Insert => Kind::Add,
                };
                out.push((
                    kind,
                    change.value().strip_suffix('\n').unwrap_or(change.value()),
                ));
                if out.len() > MAX_LINES {
                    return;
                }
            }
        }
    }
}

/// The text of a Codex patch: the input itself, or a field or argument
/// holding it (`apply_patch` called through `shell`).
pub(crate) fn patch_text(input: &Value) -> Option<&str> {
    let text = input
        .as_str()
        .or_else(|| input.get("input").and_then(Value::as_str))
        .or_else(|| input.get("patch").and_then(Value::as_str))
        .or_else(|| {
            input
                .get("command")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .find(|a| a.contains("*** Begin Patch"))
        })?;
    let start = text.find("*** Begin Patch")?;
    let text = &text[start..];
    Some(
        text.find("*** End Patch")
            .map_or(text, |end| &text[..end + "*** End Patch".len()]),
    )
}

/// A Codex patch's files and lines.
fn parse_patch(patch: &str) -> Vec<FileDiff<'_>> {
    let mut files: Vec<FileDiff<'_>> = Vec::new();
    let mut drawn = 0;
    for line in patch.lines() {
        let header = [
            ("*** Update File: ", "update"),
            ("*** Add File: ", "add"),
            ("*** Delete File: ", "delete"),
        ]
        .iter()
        .find_map(|(p, op)| line.strip_prefix(p).map(|path| (path, *op)));
        if let Some((path, op)) = header {
            files.push(FileDiff {
                path: path.trim(),
                op: op.to_owned(),
                lines: Vec::new(),
            });
            continue;
        }
        let Some(f) = files.last_mut() else { continue };
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            f.op = format!("move to {}", to.trim());
            continue;
        }
        if drawn >= MAX_LINES || line.starts_with("*** ") {
            continue;
        }
        drawn += 1;
        let kind = match line.as_bytes().first() {
            Some(b'+') => Kind::Add,
            Some(b'-') => Kind::Del,
            Some(b'@') => Kind::Hunk,
            _ => Kind::Ctx,
        };
        let text = match kind {
            Kind::Hunk => line,
            Kind::Ctx => line.strip_prefix(' ').unwrap_or(line),
            Kind::Add | Kind::Del => &line[1..],
        };
        f.lines.push((kind, text));
    }
    files
}

/// The files an edit call changes, as diffs; `None` when its input is not
/// shaped as the tool's is.
fn files<'a>(name: &str, input: &'a Value) -> Option<Vec<FileDiff<'a>>> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    Some(match name {
        "Edit" | "replace" => {
            let mut f = FileDiff {
                path: path_of(input),
                op: if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                    "edit, every occurrence".to_owned()
                } else {
                    "edit".to_owned()
                },
                lines: Vec::new(),
            };
            diff_lines(s("old_string")?, s("new_string")?, &mut f.lines);
            vec![f]
        }
        "MultiEdit" => {
            let mut f = FileDiff {
                path: path_of(input),
                op: "edits".to_owned(),
                lines: Vec::new(),
            };
            for (i, e) in input.get("edits")?.as_array()?.iter().enumerate() {
                if i > 0 {
                    f.lines.push((Kind::Hunk, "⋯"));
                }
                let old = e.get("old_string").and_then(Value::as_str)?;
                let new = e.get("new_string").and_then(Value::as_str)?;
                diff_lines(old, new, &mut f.lines);
            }
            vec![f]
        }
        "Write" | "write_file" => {
            let content = s("content")?;
            vec![FileDiff {
                path: path_of(input),
                op: "write".to_owned(),
                lines: content
                    .lines()
                    .take(MAX_LINES)
                    .map(|l| (Kind::Add, l))
                    .collect(),
            }]
        }
        "apply_patch" => {
            let files = parse_patch(patch_text(input)?);
            if files.is_empty() {
                return None;
            }
            files
        }
        _ => return None,
    })
}

fn lines_markup(lines: &[(Kind, &str)]) -> Markup {
    html! {
        @for (kind, text) in lines {
            @match kind {
                Kind::Add => span.add { "+ " (text) "\n" },
                Kind::Del => span.del { "- " (text) "\n" },
                Kind::Ctx => span.ctx { "  " (text) "\n" },
                Kind::Hunk => span.hunk { (text) "\n" },
            }
        }
    }
}

/// The diff view of an edit call; `None` when its input is not an edit's.
pub(crate) fn view(name: &str, input: &Value) -> Option<Markup> {
    let files = files(name, input)?;
    Some(html! {
        div.diff {
            @for f in &files {
                @let added = f.lines.iter().filter(|(k, _)| *k == Kind::Add).count();
                @let removed = f.lines.iter().filter(|(k, _)| *k == Kind::Del).count();
                div.file {
                    span.op { (f.op) } " "
                    code.path { (if f.path.is_empty() { "(no path)" } else { f.path }) } " "
                    span.counts { span.n-add { "+" (added) } " " span.n-del { "−" (removed) } }
                }
                @if f.lines.len() > SHOWN_LINES {
                    pre.diff-lines { (lines_markup(&f.lines[..SHOWN_LINES])) }
                    details.more {
                        summary { (f.lines.len() - SHOWN_LINES) " more lines" }
                        pre.diff-lines { (lines_markup(&f.lines[SHOWN_LINES..])) }
                    }
                } @else if !f.lines.is_empty() {
                    pre.diff-lines { (lines_markup(&f.lines)) }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_edit_is_its_lines_removed_and_added_with_its_path() {
        let input = json!({"file_path": "/src/a.rs", "old_string": "fn a() {\n    1\n}", "new_string": "fn a() {\n    2\n}"});
        let html = view("Edit", &input).unwrap().into_string();
        assert!(
            html.contains(r#"<code class="path">/src/a.rs</code>"#),
            "{html}"
        );
        assert!(html.contains(r#"<span class="del">-     1"#), "{html}");
        assert!(html.contains(r#"<span class="add">+     2"#), "{html}");
        assert!(html.contains(r#"<span class="ctx">  fn a() {"#), "{html}");
        assert!(
            html.contains("+1</span> <span class=\"n-del\">−1"),
            "{html}"
        );
        // Gemini's `replace` has the same shape.
        assert!(
            view("replace", &input)
                .unwrap()
                .into_string()
                .contains("class=\"del\"")
        );
        // Not an edit's input: no diff view.
        assert!(view("Edit", &json!({"file_path": "x"})).is_none());
    }

    #[test]
    fn multi_edit_write_and_a_codex_patch() {
        let multi = json!({"file_path": "l.ts", "edits": [
            {"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]});
        let html = view("MultiEdit", &multi).unwrap().into_string();
        assert_eq!(html.matches("class=\"del\"").count(), 2, "{html}");
        assert!(html.contains("⋯"), "{html}");
        let write = json!({"file_path": "n.txt", "content": "one\ntwo <b>\n"});
        let html = view("write_file", &write).unwrap().into_string();
        assert_eq!(html.matches("class=\"add\"").count(), 2, "{html}");
        assert!(html.contains("two &lt;b&gt;"), "{html}");
        let patch = "*** Begin Patch\n*** Update File: src/x.py\n*** Move to: src/y.py\n@@ def f():\n-    return 1\n+    return 2\n     pass\n*** Add File: new.md\n+hello\n*** End Patch\n";
        for input in [
            json!(patch),
            json!({"input": patch}),
            json!({"command": ["apply_patch", patch]}),
        ] {
            let html = view("apply_patch", &input).unwrap().into_string();
            assert!(html.contains("move to src/y.py"), "{html}");
            assert!(
                html.contains(r#"<code class="path">src/x.py</code>"#),
                "{html}"
            );
            assert!(html.contains(r#"<span class="hunk">@@ def f():"#), "{html}");
            assert!(
                html.contains(r#"<span class="del">-     return 1"#),
                "{html}"
            );
            assert!(
                html.contains(r#"<span class="add">+     return 2"#),
                "{html}"
            );
            assert!(
                html.contains(r#"<span class="op">add</span> <code class="path">new.md"#),
                "{html}"
            );
        }
        assert!(view("apply_patch", &json!("not a patch")).is_none());
    }

    #[test]
    fn a_long_diff_folds_and_a_huge_one_is_bounded() {
        let content: String = (0..5_000)
            .map(|i| ["l", &i.to_string(), "\n"].concat())
            .collect();
        let html = view("Write", &json!({"file_path": "big", "content": content}))
            .unwrap()
            .into_string();
        assert_eq!(html.matches("class=\"add\"").count(), MAX_LINES, "bounded");
        assert!(
            html.contains(&format!("{} more lines", MAX_LINES - SHOWN_LINES)),
            "folded"
        );
    }
}
