//! Snapshots of a run: exit code, stdout and stderr as one text, checked
//! with `insta` against `tests/it/snapshots/`. What varies between
//! machines and runs (temp paths, the checkout's path, times, durations,
//! the version) is replaced by a filter, so a snapshot changes only when
//! the output does.
//!
//! A changed snapshot fails the test (CI sets `INSTA_UPDATE=no`); to accept
//! a deliberate change, run the test with `INSTA_UPDATE=always` (or
//! `cargo insta review`) and commit the `.snap` file.

use std::process::Output;

/// Exit code, stdout and stderr of `out` as one text.
pub(crate) fn render(out: &Output) -> String {
    let code = out
        .status
        .code()
        .map_or_else(|| "killed by a signal".to_owned(), |c| c.to_string());
    format!(
        "exit code: {code}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The filters every run snapshot goes through, most specific first.
pub(crate) fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    // A temp file or folder of `tempfile` (`.tmpXXXXXX`), wherever TMPDIR is.
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    let tmp = regex_escape(tmp.trim_end_matches('/'));
    settings.add_filter(&format!(r"{tmp}/\.tmp[A-Za-z0-9]+"), "[TEMP]");
    // The checkout, wherever it is (the binary runs from its root).
    if let Ok(root) = super::repo_root().canonicalize() {
        settings.add_filter(&regex_escape(&root.to_string_lossy()), "[REPO]");
    }
    // Times and durations.
    settings.add_filter(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
        "[TIME]",
    );
    settings.add_filter(r"\b\d+(\.\d+)?\s?(ns|µs|us|ms|s)\b", "[DURATION]");
    // The version of the binary.
    settings.add_filter(
        &regex_escape(&format!("agentshape {}", env!("CARGO_PKG_VERSION"))),
        "agentshape [VERSION]",
    );
    settings
}

/// `text` with every regex metacharacter escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Snapshot a run (an `Output`) under `name` with [`settings`]' filters.
macro_rules! assert_run_snapshot {
    ($name:expr, $out:expr) => {{
        let text = $crate::support::snapshot::render(&$out);
        $crate::support::snapshot::settings().bind(|| {
            insta::assert_snapshot!($name, text);
        });
    }};
}

pub(crate) use assert_run_snapshot;

#[test]
fn what_varies_is_filtered() {
    let root = super::repo_root().canonicalize().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let text = format!(
        "{}/a.db {}/examples/x.ndjson at 2026-01-05T09:00:13.250Z took 1.5s and 230 ms; agentshape {}; 3 sessions",
        temp.path().display(),
        root.display(),
        env!("CARGO_PKG_VERSION")
    );
    settings().bind(|| {
        insta::assert_snapshot!(
            text,
            @"[TEMP]/a.db [REPO]/examples/x.ndjson at [TIME] took [DURATION] and [DURATION]; agentshape [VERSION]; 3 sessions"
        );
    });
}
