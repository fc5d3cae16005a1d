//! Runtime's Note [Huge pages for bulk only]: a command runs on small
//! pages (a short command's allocator arena faulted in whole zeroed 2 MiB
//! huge pages for kilobytes used), takes huge pages back once its input is
//! more than one batch of lines, and starts its children with the setting
//! it was itself started with. Read from `/proc/<pid>/status`
//! (`THP_enabled`), as the kernel reports it.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::{agent_script, agentshape, agentshape_std, assert_exit, example, json_lines};

/// `THP_enabled` of a process's status (`self` for this one).
fn thp_enabled(pid: &str) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("THP_enabled:"))?;
    Some(line.split_whitespace().nth(1)? == "1")
}

/// What this test process was started with: what agentshape is started
/// with too, and what it gives back.
fn started_with() -> bool {
    thp_enabled("self").expect("this kernel reports THP_enabled in /proc/self/status")
}

/// Waits until `child`'s `THP_enabled` is `want`, for up to 20 s.
fn wait_for(child: &mut Child, want: bool, what: &str) {
    let pid = child.id().to_string();
    let start = Instant::now();
    loop {
        if thp_enabled(&pid) == Some(want) {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "{what}: the command ended before THP_enabled was {want}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: THP_enabled stayed {:?}, not {want}",
            thp_enabled(&pid)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_command_starts_on_small_pages_and_bulk_input_takes_huge_pages_back() {
    let had = started_with();
    let mut child = agentshape_std()
        .args(["extract", "--jsonl", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Reading its input (none yet): small pages.
    wait_for(&mut child, false, "while starting");
    // More than one batch (1,024 lines) with the input still open: the
    // command has bulk input.
    let mut stdin = child.stdin.take().unwrap();
    let line = "\"{\\\"done\\\": true}\"\n";
    stdin.write_all(line.repeat(3000).as_bytes()).unwrap();
    stdin.flush().unwrap();
    wait_for(&mut child, had, "after 3,000 lines");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_exit(&out, 0);
    assert_eq!(json_lines(&out.stdout).len(), 3000);
}

/// An agent that writes its own `THP_enabled` into its transcript, then
/// acts as the fake agent.
fn pages_agent(dir: &Path) -> std::path::PathBuf {
    agent_script(
        dir,
        "pages-agent",
        "grep THP_enabled /proc/self/status | sed 's/^/PAGES /'\n",
    )
}

#[test]
fn an_agent_gets_the_page_setting_agentshape_was_started_with() {
    let had = started_with();
    let dir = tempfile::tempdir().unwrap();
    let out = agentshape()
        .args(["run", "--json", "--log-dir"])
        .arg(dir.path().join("logs"))
        .env("AGENTSHAPE_STORE", dir.path().join("s.db"))
        .env("FAKE_TRANSCRIPT", example("healthy-structured.ndjson"))
        .arg("--")
        .arg(pages_agent(dir.path()))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let session = &json_lines(&out.stdout)[0]["session"];
    let transcript = std::fs::read_to_string(session["raw_log_path"].as_str().unwrap()).unwrap();
    let seen = transcript
        .lines()
        .find_map(|l| l.strip_prefix("PAGES "))
        .expect("the agent wrote its THP_enabled");
    assert_eq!(
        seen.split_whitespace().nth(1),
        Some(if had { "1" } else { "0" }),
        "the agent's pages: {seen}"
    );
}
