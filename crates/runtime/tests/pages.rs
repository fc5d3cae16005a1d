//! `pages` (Note [Huge pages for bulk only] in `src/pages.rs`) in a
//! process of its own: the setting is the whole process's, and the
//! library's unit tests spawn agents and alert commands, which restore it
//! (`for_children`) while another test would be reading it.
#![cfg(target_os = "linux")]

use agentshape_runtime::pages::{bulk, for_children, small};

/// The kernel's answer for this process.
fn off() -> bool {
    nix::sys::prctl::get_thp_disable().expect("prctl answers")
}

#[test]
fn small_then_back_to_what_the_process_had() {
    let had = off();
    small();
    assert!(off(), "small pages after small()");
    bulk();
    assert_eq!(off(), had, "bulk() gives back what the process had");
    small();
    assert!(off(), "small pages again");
    for_children();
    assert_eq!(off(), had, "children get what the process had");
}
