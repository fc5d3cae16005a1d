//! What agents used and what it cost: the model calls of native sessions
//! in one vocabulary ([`UsageTokens`]), and the reports made of them
//! (daily, weekly, monthly, per session, 5-hour blocks) priced with a
//! [`PriceTable`](crate::pricing::PriceTable).
//!
//! Core does no I/O and reads no clock or time zone: the caller hands in
//! the calls (read from the store or from files), the price table, the
//! function that names a call's day (or week, or month) in the user's time
//! zone, and "now" for the blocks.

pub mod calls;
mod report;

pub use crate::facts::{MessageUsage, UsageTokens};
pub use report::{
    Block, Figures, Group, ModelFigures, SessionGroup, UsageCall, block_window_ms, blocks,
    group_by, sessions,
};

/// A project as reports and pages show it: the last two parts of its path,
/// which tell a repository's worktrees apart (`src/agentshape` and
/// `agentshape/wt-otel`); the whole path is shown beside it where there is
/// room (a title, `--json`).
pub fn short_project(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.len() {
        0 => path.to_owned(),
        1 => parts[0].to_owned(),
        n => format!("{}/{}", parts[n - 2], parts[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::short_project;

    #[test]
    fn projects_keep_the_part_that_tells_worktrees_apart() {
        assert_eq!(short_project("/Users/me/src/agentshape"), "src/agentshape");
        assert_eq!(short_project("/work/wt-otel/"), "work/wt-otel");
        assert_eq!(short_project("/tmp"), "tmp");
        assert_eq!(short_project("relative/a/b"), "a/b");
        assert_eq!(short_project(""), "");
        assert_eq!(short_project("/"), "/");
    }
}
