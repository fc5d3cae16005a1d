//! CLI tests: the `agentshape` binary run as a user runs it, exit codes and
//! output shapes checked against DESIGN.md. One integration binary for the crate.

// In tests a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used, clippy::panic, clippy::missing_panics_doc)]
// Tests read better with `use` next to their first use, short similar names and inline string building.
#![allow(
    clippy::items_after_statements,
    clippy::similar_names,
    clippy::format_collect
)]

mod agent_env;
mod alerts;
mod ask;
mod ask_claude;
mod browser;
mod builder;
mod check;
mod cli_safety;
mod core_safety;
mod exit_codes;
mod export;
mod extract;
mod feed;
mod flows;
mod hook;
mod hook_install;
mod hostile_cel;
mod limits;
mod lint;
mod lists;
#[cfg(feature = "local")]
mod local;
mod model;
mod native_import;
mod native_parse;
mod ops;
mod ops_scale;
mod otel;
mod parse;
mod playground;
mod process_safety;
mod profiles;
mod provider_safety;
mod run;
mod secrets_doors;
mod serve;
mod serve_auth;
mod serve_hostile;
mod serve_pg;
mod serve_robust;
mod served;
mod session_page;
mod sessions;
mod several_values;
mod silent_changes;
mod special_files;
mod stats;
mod store_load;
mod store_outage;
mod store_pg;
mod store_safety;
mod store_tls;
mod usage;
mod validate;

use std::path::PathBuf;

use assert_cmd::Command;

/// The binary under test, run from the repository root so `examples/` resolve.
pub(crate) fn agentshape() -> Command {
    let mut cmd = Command::cargo_bin("agentshape").expect("binary built");
    cmd.current_dir(repo_root());
    cmd.env_remove("NO_COLOR");
    cmd
}

/// The binary as a plain `std` command run from the repository root, for
/// tests that spawn it and signal it or read its output while it runs.
pub(crate) fn agentshape_std() -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("agentshape"));
    cmd.current_dir(repo_root());
    cmd
}

/// Poll `cond` every 20 ms until it holds, failing the test after `guard`
/// (a hang guard, never a speed assertion).
pub(crate) fn wait_until(what: &str, guard: std::time::Duration, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < guard, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The repository root.
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Assert the process exited with `code`, showing its standard error when not.
#[track_caller]
pub(crate) fn assert_exit(out: &std::process::Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Stdout parsed as JSON lines.
pub(crate) fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// A temporary file holding `content`.
pub(crate) fn temp_file(content: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(f.path(), content).expect("write temp file");
    f
}
