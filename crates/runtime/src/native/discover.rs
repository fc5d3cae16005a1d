//! Which session files to import: the paths given, or the agents' standard
//! folders.
//!
//! Note \[Standard folders\]: with no path, each agent's own folder for this
//! user: Claude Code `$CLAUDE_CONFIG_DIR/projects`, else
//! `~/.claude/projects` (`<encoded-cwd>/<uuid>.jsonl`, and in 2.1.x
//! `<uuid>/subagents/agent-<id>.jsonl`); Codex `$CODEX_HOME/sessions`, else
//! `~/.codex/sessions` (`YYYY/MM/DD/rollout-*.jsonl`); Gemini CLI
//! `~/.gemini/tmp/<hash>/chats/*.json`. A folder that does not exist is
//! skipped (and reported once by the caller). What a file is, is decided by
//! its content (core's decoders), never by these names: the names only
//! choose which files are looked at.
//!
//! A walk goes at most [`MAX_DEPTH`] folders down, never through a symbolic
//! link to a folder (a link loop cannot hold it), and takes regular files
//! only (a FIFO is never opened).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Agent;

/// How deep a walk goes below a root.
pub const MAX_DEPTH: usize = 8;

/// Where the standard folders are: the variables that move them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`.
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`.
    pub codex_home: Option<PathBuf>,
}

impl Env {
    /// This process's environment (empty values count as unset).
    pub fn from_process() -> Env {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
        }
    }
}

/// A folder or file to look in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The agent whose standard folder this is; `None` for a path the user gave.
    pub agent: Option<Agent>,
    /// The path.
    pub path: PathBuf,
}

/// The standard folders (Note \[Standard folders\]), of one agent or all.
pub fn standard_roots(env: &Env, only: Option<Agent>) -> Vec<Root> {
    let home = |rel: &str| env.home.as_ref().map(|h| h.join(rel));
    Agent::ALL
        .into_iter()
        .filter(|a| only.is_none_or(|o| o == *a))
        .filter_map(|agent| {
            let path = match agent {
                Agent::Claude => env
                    .claude_config_dir
                    .clone()
                    .or_else(|| home(".claude"))
                    .map(|d| d.join("projects")),
                Agent::Codex => env
                    .codex_home
                    .clone()
                    .or_else(|| home(".codex"))
                    .map(|d| d.join("sessions")),
                Agent::Gemini => home(".gemini/tmp"),
            }?;
            Some(Root {
                agent: Some(agent),
                path,
            })
        })
        .collect()
}

/// What `stat` says about a file: enough to tell it unchanged, grown or
/// replaced (store's Note \[Import marks\]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStat {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub inode: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, milliseconds since the epoch.
    pub mtime_ms: i64,
}

impl FileStat {
    /// From a file's metadata.
    pub fn of(m: &std::fs::Metadata) -> FileStat {
        FileStat {
            dev: m.dev(),
            inode: m.ino(),
            size: m.size(),
            mtime_ms: m
                .mtime()
                .saturating_mul(1000)
                .saturating_add(m.mtime_nsec() / 1_000_000),
        }
    }
}

/// A file to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The file (absolute when its root was).
    pub path: PathBuf,
    /// Its `stat`.
    pub stat: FileStat,
    /// The standard folder it was found in, if any.
    pub agent: Option<Agent>,
}

/// The files under `roots` (Note \[Standard folders\]); `since_ms` leaves
/// out files last modified before it. Sub-agent files come after the
/// others, so a parent is usually stored before its children.
pub fn files(roots: &[Root], since_ms: Option<i64>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for root in roots {
        let Ok(meta) = std::fs::metadata(&root.path) else {
            continue;
        };
        if meta.is_file() {
            push(&mut out, &root.path, &meta, root.agent, since_ms);
        } else if meta.is_dir() {
            walk(&root.path, root, 0, since_ms, &mut out);
        }
    }
    out.sort_by(|a, b| {
        (is_subagent_file(&a.path), &a.path).cmp(&(is_subagent_file(&b.path), &b.path))
    });
    out.dedup_by(|a, b| a.path == b.path);
    out
}

fn push(
    out: &mut Vec<Candidate>,
    path: &Path,
    meta: &std::fs::Metadata,
    agent: Option<Agent>,
    since_ms: Option<i64>,
) {
    let stat = FileStat::of(meta);
    if since_ms.is_some_and(|s| stat.mtime_ms < s) {
        return;
    }
    out.push(Candidate {
        path: path.to_owned(),
        stat,
        agent,
    });
}

fn walk(dir: &Path, root: &Root, depth: usize, since_ms: Option<i64>, out: &mut Vec<Candidate>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // `DirEntry::metadata` does not follow links: a link is neither
        // walked nor read.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if meta.is_dir() {
            if depth < MAX_DEPTH {
                walk(&path, root, depth + 1, since_ms, out);
            }
        } else if meta.is_file() && wanted(&path, root.agent) {
            push(out, &path, &meta, root.agent, since_ms);
        }
    }
}

/// Whether a file found by walking a folder is looked at.
pub(crate) fn wanted(path: &Path, agent: Option<Agent>) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match agent {
        Some(Agent::Claude | Agent::Codex) => ext == "jsonl",
        Some(Agent::Gemini) => {
            ext == "json"
                && path
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == "chats")
        }
        None => ext == "jsonl" || ext == "json",
    }
}

/// A Claude Code 2.1.x sub-agent file: `<session>/subagents/agent-<id>.jsonl`.
pub fn is_subagent_file(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "subagents")
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_roots_honour_the_variables_and_the_filter() {
        let env = Env {
            home: Some("/h".into()),
            claude_config_dir: Some("/c".into()),
            codex_home: None,
        };
        let roots = standard_roots(&env, None);
        let paths: Vec<_> = roots.iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/c/projects"),
                PathBuf::from("/h/.codex/sessions"),
                PathBuf::from("/h/.gemini/tmp")
            ]
        );
        let only = standard_roots(&env, Some(Agent::Codex));
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].agent, Some(Agent::Codex));
        assert!(standard_roots(&Env::default(), Some(Agent::Gemini)).is_empty());
    }

    #[test]
    fn walks_pick_session_files_and_put_sub_agents_last() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("proj/abc/subagents")).unwrap();
        std::fs::create_dir_all(p.join("g/chats")).unwrap();
        for f in [
            "proj/abc/subagents/agent-1.jsonl",
            "proj/zzz.jsonl",
            "proj/notes.txt",
            "g/chats/session-1.json",
            "g/logs.json",
        ] {
            std::fs::write(p.join(f), "{}\n").unwrap();
        }
        std::os::unix::fs::symlink(p, p.join("proj/loop")).unwrap();
        let claude = Root {
            agent: Some(Agent::Claude),
            path: p.join("proj"),
        };
        let names: Vec<_> = files(&[claude], None)
            .into_iter()
            .map(|c| c.path.strip_prefix(p).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            ["proj/zzz.jsonl", "proj/abc/subagents/agent-1.jsonl"]
        );
        let gemini = Root {
            agent: Some(Agent::Gemini),
            path: p.join("g"),
        };
        assert_eq!(files(&[gemini], None).len(), 1);
        let mine = Root {
            agent: None,
            path: p.to_owned(),
        };
        assert_eq!(files(std::slice::from_ref(&mine), None).len(), 4);
        assert!(
            files(&[mine], Some(i64::MAX)).is_empty(),
            "--since in the future"
        );
    }
}
