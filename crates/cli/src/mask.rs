//! The output door: every string a command prints goes through one masker
//! (issue 29), unless `--no-mask` turned masking off.
//!
//! Note \[Output keys\]: the fingerprints a command prints are keyed like
//! the store's, so they compare with the dashboard's and `secrets scan`'s:
//! a command that reads a store (`sessions`, `memories`) uses that store's
//! key; `parse` and `extract`, which have none, use the key of the store
//! `run` would use when it exists and is a SQLite file (`AGENTSHAPE_STORE`
//! or `./agentshape.db`, opened read-only, never created), else a random key
//! for this process, so fingerprints then compare only within that output.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use agentshape_core::secrets::{Detector, MaskKey, Masker};
use agentshape_store::StoreUrl;

static OFF: AtomicBool = AtomicBool::new(false);
static KEY: Mutex<Option<MaskKey>> = Mutex::new(None);
static MASKER: OnceLock<Masker> = OnceLock::new();
static RULES: OnceLock<Arc<Detector>> = OnceLock::new();

/// Mask with these rules (the built-in ones and the user's file) in what
/// is printed and in every store opened from now on.
pub fn use_rules(detector: Arc<Detector>) {
    let _ = RULES.set(Arc::clone(&detector));
    agentshape_store::secrets::set_process_masking(!OFF.load(Ordering::SeqCst), Some(detector));
}

/// What `--no-mask` says on stderr, every time.
pub const OFF_WARNING: &str = "secret masking is OFF: raw credentials will be written/shown";

/// Turn masking off for everything this process prints and writes; false
/// when it already was.
pub fn turn_off() -> bool {
    let was = OFF.swap(true, Ordering::SeqCst);
    agentshape_store::secrets::set_process_masking(false, RULES.get().cloned());
    !was
}

/// Key printed fingerprints with this store's key (Note \[Output keys\]);
/// call before the first secret is masked (before the first line is printed).
pub fn use_store_key(key: Option<MaskKey>) {
    if let (Some(k), Ok(mut slot)) = (key, KEY.lock()) {
        *slot = Some(k);
    }
}

/// Build the masker on a thread of its own now, so that the command's
/// first printed line does not wait for it; nothing when masking is off.
/// Call once the rules are set ([`use_rules`]).
///
/// Note [Masker built beside the input]: building the masker (the built-in
/// rules read, the keyword tables made: about half a millisecond) was
/// done by the first line printed, after the input had been read and
/// worked on, on the thread that printed it, while the others waited for
/// it (`OnceLock`). It is started here, at the command's start, on
/// another core while the command reads its input; whoever needs it first
/// still waits for it as before. It is made either way: only a command
/// that prints nothing, or one a profile turns masking off for, builds it
/// for nothing.
pub fn warm() {
    if OFF.load(Ordering::SeqCst) || MASKER.get().is_some() {
        return;
    }
    // A thread that cannot be made leaves the building to the first line.
    let _ = std::thread::Builder::new()
        .name("mask-warm".into())
        .spawn(|| {
            scanner();
        });
}

/// The masker of printed output; `None` when masking is off.
pub fn masker() -> Option<&'static Masker> {
    if OFF.load(Ordering::SeqCst) {
        return None;
    }
    Some(scanner())
}

/// The masker fingerprints are made with, even when masking is off
/// (`secrets scan` finds secrets either way). Its key is found when the
/// first secret is (core's Note \[A key read when first needed\]): the
/// key `use_store_key` set, else the default store's, else a random one.
pub fn scanner() -> &'static Masker {
    MASKER.get_or_init(|| {
        let detector = RULES
            .get()
            .cloned()
            .unwrap_or_else(Masker::builtin_detector);
        Masker::lazy(detector, output_key)
    })
}

/// The key of printed fingerprints (Note \[Output keys\]).
fn output_key() -> MaskKey {
    KEY.lock()
        .ok()
        .and_then(|k| k.clone())
        .or_else(default_store_key)
        .or_else(|| agentshape_store::secrets::new_key().ok())
        .unwrap_or_else(|| MaskKey::from_bytes(rand_fallback()))
}

/// The key of the store `run` would use, when it exists (never created).
/// Only a SQLite file: printing never waits on a network connection (a
/// Postgres store's fingerprints are compared through `secrets scan
/// --store` and the dashboard).
fn default_store_key() -> Option<MaskKey> {
    let url = StoreUrl::resolve(None).ok()?;
    url.sqlite_path()?;
    url.open_read_only().ok()?.mask_key()
}

/// Only when the OS gives no randomness: the process id and clock (the
/// fingerprints then still compare within this output).
fn rand_fallback() -> [u8; 32] {
    let mut b = [0u8; 32];
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    b[..16].copy_from_slice(&t.to_le_bytes());
    b[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    b
}

/// `text` masked for printing.
pub fn text(text: &str) -> std::borrow::Cow<'_, str> {
    match masker() {
        Some(m) => m.mask_str(text).text,
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// A JSON line masked for printing (the same shape).
pub fn json(text: &str) -> std::borrow::Cow<'_, str> {
    match masker() {
        Some(m) => m.mask_json_text(text).text,
        None => std::borrow::Cow::Borrowed(text),
    }
}
