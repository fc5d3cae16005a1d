//! Claude Code command hooks (issue 30), the side that touches the world:
//! the store with a deadline, the spool, the session file's end.
//!
//! [`check`] judges a `Stop`/`SubagentStop` turn and answers within the
//! hook's budget; [`capture`] feeds `PostToolUse` calls to the live feed;
//! [`spool`] keeps what the store could not take in time; [`transcript`]
//! reads the last message of a session file.

pub mod capture;
pub mod check;
pub mod spool;
pub mod transcript;
