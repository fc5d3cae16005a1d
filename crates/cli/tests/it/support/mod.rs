//! What the CLI tests share, one copy of each: running the binary and
//! checking how it ended (`binary`, `exit`), the bundled inputs and ways to
//! read what the binary wrote (`inputs`), the planted secrets of core's
//! corpus (`planted`), a served dashboard (`served`), snapshots of a run
//! (`snapshot`) and stream-json transcripts (`transcript`). A test module
//! that needs a variant names it after what differs.

mod binary;
mod exit;
mod inputs;
pub(crate) mod planted;
pub(crate) mod served;
pub(crate) mod snapshot;
pub(crate) mod transcript;

pub(crate) use binary::{agentshape, agentshape_std, repo_root, wait_until};
pub(crate) use exit::{assert_exit, assert_exit_for};
pub(crate) use inputs::{agent_script, example, fake_agent, json_lines, sql, temp_file};
