//! Running the `agentshape` binary as a user does, from the repository root.

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
