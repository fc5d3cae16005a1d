//! Follow session folders as agents write them (`agentshape watch`,
//! `serve --watch`).
//!
//! Note \[Watching\]: file-system notifications (the `notify` crate:
//! inotify on Linux, `FSEvents` on macOS) say which file changed, and that
//! file alone is imported at once (Note \[Incremental import\]: its new
//! lines go to the store's feed, where `serve` tails them). Notifications
//! can be lost (a queue overflow, a folder created before its watch was
//! added, a network file system that sends none), so every
//! [`WatchOptions::rescan`] the whole tree is compared with the marks
//! again; that costs one `stat` per unchanged file. A standard folder that
//! does not exist yet is looked for again at each rescan and watched once
//! it appears. A file that is no session file is remembered with its
//! `stat` and not read again until it changes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agentshape_store::Store;
use notify::{RecursiveMode, Watcher};

use super::discover::{Candidate, FileStat, Root, files};
use super::import::{Change, FileReport, Importer};
use crate::error::{Error, Result};

/// How a watch paces itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// How often the whole tree is compared again (default 2 s).
    pub rescan: Duration,
    /// The longest the loop sleeps before looking at `stop` again.
    pub tick: Duration,
    /// `--since`: files last modified before it are left out.
    pub since_ms: Option<i64>,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            rescan: Duration::from_secs(2),
            tick: Duration::from_millis(200),
            since_ms: None,
        }
    }
}

/// The state of one watch: the files seen to be no session file.
struct Follow<'a> {
    roots: &'a [Root],
    opts: WatchOptions,
    ignored: HashMap<PathBuf, FileStat>,
}

impl Follow<'_> {
    /// Import one candidate unless it is a known non-session file; report
    /// what changed.
    fn one(
        &mut self,
        importer: &mut Importer,
        store: &mut dyn Store,
        file: &Candidate,
        each: &mut dyn FnMut(&FileReport),
    ) {
        if self.ignored.get(&file.path) == Some(&file.stat) {
            return;
        }
        let report = match importer.import(store, file) {
            Ok(r) => r,
            Err(e) => FileReport::failed(&file.path.display().to_string(), e.to_string()),
        };
        match report.change {
            Change::Unchanged => {}
            Change::Skipped if report.error.is_none() => {
                if self.ignored.insert(file.path.clone(), file.stat).is_none() {
                    each(&report);
                }
            }
            _ => {
                self.ignored.remove(&file.path);
                each(&report);
            }
        }
    }

    fn rescan(
        &mut self,
        importer: &mut Importer,
        store: &mut dyn Store,
        each: &mut dyn FnMut(&FileReport),
    ) {
        for file in files(self.roots, self.opts.since_ms) {
            self.one(importer, store, &file, each);
        }
    }

    /// A notified path: imported when it is a file under a root that the
    /// walk would take.
    fn notified(
        &mut self,
        importer: &mut Importer,
        store: &mut dyn Store,
        path: &Path,
        each: &mut dyn FnMut(&FileReport),
    ) {
        let Some(root) = self.roots.iter().find(|r| path.starts_with(&r.path)) else {
            return;
        };
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_file() || !(path == root.path || super::discover::wanted(path, root.agent)) {
            return;
        }
        let stat = FileStat::of(&meta);
        if self.opts.since_ms.is_some_and(|s| stat.mtime_ms < s) {
            return;
        }
        let file = Candidate {
            path: path.to_owned(),
            stat,
            agent: root.agent,
        };
        self.one(importer, store, &file, each);
    }
}

/// Import everything under `roots`, then follow it until `stop` is set
/// (Note \[Watching\]); `each` sees every file that changed.
///
/// # Errors
/// The notification service cannot be started.
pub fn watch(
    roots: &[Root],
    opts: WatchOptions,
    importer: &mut Importer,
    store: &mut dyn Store,
    stop: &AtomicBool,
    each: &mut dyn FnMut(&FileReport),
) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res {
            let _ = tx.send(event.paths);
        }
    })
    .map_err(|e| Error::Io {
        context: "starting file-system notifications".to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let mut followed: HashSet<PathBuf> = HashSet::new();
    let mut add_watches = |w: &mut notify::RecommendedWatcher| {
        for root in roots {
            if !followed.contains(&root.path)
                && root.path.exists()
                && w.watch(&root.path, RecursiveMode::Recursive).is_ok()
            {
                followed.insert(root.path.clone());
            }
        }
    };
    // Watch first, then scan: a line written in between is seen twice
    // (the second time as unchanged), never missed.
    add_watches(&mut watcher);
    let mut follow = Follow {
        roots,
        opts,
        ignored: HashMap::new(),
    };
    follow.rescan(importer, store, each);
    let mut next_rescan = Instant::now() + opts.rescan;
    while !stop.load(Ordering::Relaxed) {
        let wait = next_rescan
            .saturating_duration_since(Instant::now())
            .min(opts.tick);
        match rx.recv_timeout(wait) {
            Ok(paths) => {
                let mut dirty: Vec<PathBuf> = paths;
                while let Ok(more) = rx.try_recv() {
                    dirty.extend(more);
                }
                dirty.sort();
                dirty.dedup();
                for path in dirty {
                    follow.notified(importer, store, &path, each);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if Instant::now() >= next_rescan {
            add_watches(&mut watcher);
            follow.rescan(importer, store, each);
            next_rescan = Instant::now() + opts.rescan;
        }
    }
    Ok(())
}
