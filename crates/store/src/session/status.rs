//! A session's status, typed in Rust and text only at the SQL edge (and in
//! JSON, where it is the same text).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What became of a session (runtime's Note \[Session status\]).
///
/// A stored text this build does not know (a newer build's status, or a
/// row edited by hand) reads as [`Status::Other`], keeping the text: a
/// read never fails on a status, and a row copied or rewritten keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// Started and not finished yet (or lost: Note \[Lost sessions\]).
    Running,
    /// The agent finished and reported a result.
    #[default]
    Completed,
    /// The agent reported an error result.
    Error,
    /// The agent stopped before a result.
    Failed,
    /// Killed at its time limit.
    Timeout,
    /// The agent's program was not found.
    NotFound,
    /// Stopped by the user (a signal), not a failure of the agent.
    Interrupted,
    /// A status this build does not know, as stored.
    Other(String),
}

impl Status {
    /// The text stored and printed.
    pub fn as_str(&self) -> &str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Error => "error",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
            Status::NotFound => "not_found",
            Status::Interrupted => "interrupted",
            Status::Other(s) => s,
        }
    }

    /// The status a stored text names; an unknown text is kept as
    /// [`Status::Other`].
    pub fn parse(s: &str) -> Self {
        match s {
            "running" => Status::Running,
            "completed" => Status::Completed,
            "error" => Status::Error,
            "failed" => Status::Failed,
            "timeout" => Status::Timeout,
            "not_found" => Status::NotFound,
            "interrupted" => Status::Interrupted,
            other => Status::Other(other.to_owned()),
        }
    }
}

/// Never fails: see [`Status::parse`].
impl FromStr for Status {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Status::parse(s))
    }
}

impl From<&str> for Status {
    fn from(s: &str) -> Self {
        Status::parse(s)
    }
}

impl From<&String> for Status {
    fn from(s: &String) -> Self {
        Status::parse(s)
    }
}

impl From<String> for Status {
    fn from(s: String) -> Self {
        Status::parse(&s)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for Status {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Status {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Status {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// As its text, so every JSON that printed the stored string prints the same.
impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Status::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_status_reads_back_as_itself() {
        for s in [
            Status::Running,
            Status::Completed,
            Status::Error,
            Status::Failed,
            Status::Timeout,
            Status::NotFound,
            Status::Interrupted,
        ] {
            assert_eq!(Status::parse(s.as_str()), s);
            assert!(!matches!(Status::parse(s.as_str()), Status::Other(_)));
        }
    }

    #[test]
    fn an_unknown_status_keeps_its_text() {
        let s = Status::parse("paused by a later build");
        assert_eq!(s, Status::Other("paused by a later build".to_owned()));
        assert_eq!(s.as_str(), "paused by a later build");
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            "\"paused by a later build\""
        );
        let back: Status = serde_json::from_str("\"paused by a later build\"").unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn serialises_as_the_stored_text() {
        assert_eq!(
            serde_json::to_string(&Status::NotFound).unwrap(),
            "\"not_found\""
        );
        assert!(Status::Running == "running");
    }
}
