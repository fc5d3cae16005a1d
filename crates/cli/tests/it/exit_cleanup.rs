//! Issue 40 §6: a command's exit costs no more than exiting. mimalloc's
//! collection at process exit gave every freed page back to the kernel,
//! one `madvise(MADV_DONTNEED)` each, after the output was written (Note
//! [Nothing given back at exit] in `.cargo/config.toml`). Read with
//! strace: a machine without it fails here, naming `./scripts/setup.sh
//! --only strace`.

use std::path::Path;
use std::process::Command;

use crate::support::{example, repo_root};

/// The system calls of one run of the binary with `args`, as strace writes
/// them with `-f` (each line starts with the thread's id); the first line
/// is the process's own `execve`.
fn trace(args: &[&str], dir: &Path) -> Vec<String> {
    let out = dir.join("trace");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=execve,write,writev,madvise", "-o"])
        .arg(&out)
        .arg(assert_cmd::cargo::cargo_bin("agentshape"))
        .args(args)
        .current_dir(repo_root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "strace could not be run ({e}): install it with ./scripts/setup.sh --only strace"
            )
        });
    assert!(status.success(), "strace {args:?}: {status}");
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `MADV_DONTNEED` calls the main thread made after its last write to
/// stdout (`write`, or `writev` for a batch of `--jsonl` lines) (threads' own stacks, given back as each ends, are not counted:
/// when a thread ends is not this test's business).
fn given_back_after_output(lines: &[String]) -> Vec<String> {
    let main = lines
        .first()
        .and_then(|l| l.split_whitespace().next())
        .expect("a trace")
        .to_owned();
    let of_main: Vec<&String> = lines
        .iter()
        .filter(|l| l.split_whitespace().next() == Some(main.as_str()))
        .collect();
    let last_write = of_main
        .iter()
        .rposition(|l| l.contains(" write(1, ") || l.contains(" writev(1, "))
        .expect("the command wrote to stdout");
    of_main[last_write..]
        .iter()
        .filter(|l| l.contains("MADV_DONTNEED"))
        .map(|l| (*l).clone())
        .collect()
}

#[test]
fn nothing_is_given_back_to_the_kernel_after_the_output() {
    let dir = tempfile::tempdir().unwrap();
    // Replies enough to free many pages: a few MB of `extract --jsonl`.
    let replies = dir.path().join("replies.jsonl");
    let mut text = String::new();
    for i in 0..4000 {
        let reply = format!(
            "Here is the result {i}:\n```json\n{{\"id\": {i}, \"summary\": \"{}\", \"tags\": [\"a\", \"b\"]}}\n```",
            "words of a summary ".repeat(40)
        );
        text.push_str(&serde_json::to_string(&reply).unwrap());
        text.push('\n');
    }
    std::fs::write(&replies, text).unwrap();
    let replies = replies.to_str().unwrap();
    let short = example("healthy-structured.ndjson");
    for args in [
        vec!["parse", "--json", "--quiet", short.as_str()],
        vec!["parse", "--json", "--quiet", "--no-mask", short.as_str()],
        vec!["extract", "--jsonl", "--json", "--quiet", replies],
    ] {
        let lines = trace(&args, dir.path());
        let late = given_back_after_output(&lines);
        assert!(
            late.is_empty(),
            "{args:?}: {} pages given back after the output, e.g. {:?}",
            late.len(),
            late.first()
        );
    }
}
