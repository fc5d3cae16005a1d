//! Claude Code command hooks, the pure part (issue 30): what the hook
//! input says ([`input`]), the last assistant message of a session file when
//! the input lacks it ([`last_message`]), and the reason a blocked stop gives
//! the model ([`reason`], with [`shape`]'s one-line reminder of the schema).
//!
//! Reading stdin, the store, the clock and the exit code are the runtime's
//! and the CLI's; everything here is a function of bytes and values.

pub mod input;
pub mod last_message;
pub mod reason;
pub mod shape;

pub use input::{HookEvent, HookInput, InputError};
pub use last_message::LastMessage;
pub use reason::{BlockContext, MAX_REASON_BYTES, block_reason};
pub use shape::shape_line;
