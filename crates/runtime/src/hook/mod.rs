//! Claude Code command hooks (issue 30), the side that touches the world:
//! the store with a deadline, the spool, the session file's end, and
//! Claude Code's settings file.
//!
//! [`check`] judges a `Stop`/`SubagentStop` turn and answers within the
//! hook's budget; [`capture`] feeds `PostToolUse` calls to the live feed;
//! [`spool`] keeps what the store could not take in time; [`transcript`]
//! reads the last message of a session file; [`settings`] merges and
//! removes agentshape's entries in `settings.json`. What fails on the way
//! is a [`HookError`], said as a warning (never a failed hook).

pub mod capture;
pub mod check;
mod error;
mod json_edit;
pub mod settings;
pub mod spool;
pub mod transcript;

pub use error::HookError;
