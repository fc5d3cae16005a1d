//! The one exit-code assertion. A bare `assert_eq!` on `status.code()` says
//! only "left: Some(1), right: Some(0)"; this one shows what the process
//! printed, which is nearly always the reason.

use std::fmt::Display;
use std::process::Output;

/// Assert the process exited with `code`; on failure show its stdout and stderr.
#[track_caller]
pub(crate) fn assert_exit(out: &Output, code: i32) {
    check(out, code, None);
}

/// [`assert_exit`] for one case among several: `what` names the case.
#[track_caller]
pub(crate) fn assert_exit_for(out: &Output, code: i32, what: impl Display) {
    check(out, code, Some(&what));
}

#[track_caller]
fn check(out: &Output, code: i32, what: Option<&dyn Display>) {
    if out.status.code() == Some(code) {
        return;
    }
    let case = what.map(|w| format!(" ({w})")).unwrap_or_default();
    panic!(
        "expected exit code {code}, got {}{case}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_wrong_code_shows_what_the_process_printed() {
    use std::os::unix::process::ExitStatusExt;
    let out = Output {
        status: std::process::ExitStatus::from_raw(1 << 8),
        stdout: b"the report\n".to_vec(),
        stderr: b"agentshape: the reason\n".to_vec(),
    };
    assert_exit(&out, 1);
    let caught = std::panic::catch_unwind(|| assert_exit_for(&out, 0, "case 7")).unwrap_err();
    let message = caught.downcast_ref::<String>().unwrap();
    assert!(message.contains("expected exit code 0"), "{message}");
    assert!(message.contains("(case 7)"), "{message}");
    assert!(message.contains("the report"), "{message}");
    assert!(message.contains("agentshape: the reason"), "{message}");
}
