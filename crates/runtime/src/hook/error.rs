//! Why a hook could not judge a turn or record a call. None of these stops
//! the hook (see Note \[A hook never breaks the session\] in `check`): each
//! becomes one line of its warning on stderr, so each says what failed in
//! words a user reads there.

use std::path::PathBuf;

/// Why a hook could not judge a turn or record a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// The hook input (stdin) could not be read.
    #[error("cannot read the hook input: {0}")]
    ReadInput(#[source] std::io::Error),
    /// The hook input is larger than the caller takes.
    #[error("hook input is larger than {} MiB", max >> 20)]
    InputTooLarge {
        /// The most bytes taken.
        max: u64,
    },
    /// The store could not be opened, or failed a read or a write.
    #[error(transparent)]
    Store(#[from] agentshape_store::Error),
    /// The store did not answer within the hook's budget.
    #[error("the store did not answer in time")]
    Timeout,
    /// The store's thread ended before it answered: the store could not be
    /// opened, and why was said already (or never known).
    #[error("the store could not be opened")]
    Closed,
    /// The profile or schema to judge by could not be loaded (the caller's
    /// reason, as it says it).
    #[error(transparent)]
    Judge(Box<dyn std::error::Error + Send + Sync>),
    /// The hook input names no message to judge, nor a session file to
    /// read it from.
    #[error("hook input has neither last_assistant_message nor transcript_path")]
    NoMessage,
    /// The session file holds no assistant message with text.
    #[error("no assistant message with text in {}", path.display())]
    NoAssistantText {
        /// The session file read.
        path: PathBuf,
    },
    /// The session file could not be read.
    #[error(transparent)]
    Transcript(#[from] crate::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines a user reads on stderr are the ones the hooks always wrote.
    #[test]
    fn messages_are_the_warnings_users_read() {
        assert_eq!(
            HookError::ReadInput(std::io::Error::other("closed")).to_string(),
            "cannot read the hook input: closed"
        );
        assert_eq!(
            HookError::InputTooLarge { max: 64 << 20 }.to_string(),
            "hook input is larger than 64 MiB"
        );
        assert_eq!(
            HookError::Timeout.to_string(),
            "the store did not answer in time"
        );
        assert_eq!(
            HookError::Closed.to_string(),
            "the store could not be opened"
        );
        assert_eq!(
            HookError::NoMessage.to_string(),
            "hook input has neither last_assistant_message nor transcript_path"
        );
        assert_eq!(
            HookError::NoAssistantText {
                path: PathBuf::from("/tmp/s.jsonl")
            }
            .to_string(),
            "no assistant message with text in /tmp/s.jsonl"
        );
        let store = agentshape_store::StoreUrl::parse("").unwrap_err();
        let said = store.to_string();
        assert_eq!(HookError::from(store).to_string(), said);
        let judge = HookError::Judge("cannot read profile `x`".into());
        assert_eq!(judge.to_string(), "cannot read profile `x`");
    }
}
