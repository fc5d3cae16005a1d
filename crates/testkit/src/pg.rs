//! A throwaway Postgres server for tests: one per test binary, a fresh
//! database per test.
//!
//! Note \[Throwaway Postgres\]: the server is Debian's `postgresql` package
//! (`./scripts/setup.sh --only postgres`), started from
//! `/usr/lib/postgresql/<version>/bin` (or `AGENTSHAPE_PG_BIN`) with
//! `initdb` + `pg_ctl` in a temporary folder, listening only on a Unix
//! socket in that folder (no port to collide on), with `fsync=off`: its data
//! is thrown away. `initdb` refuses to run as root, so under root the server
//! runs as `nobody` (the folder is chowned to it). It is never left behind:
//! a watchdog process (its own process group, so a Ctrl-C to the tests does
//! not take it first) waits for the test binary to exit — normally, by a
//! panic or by SIGKILL — then stops the server and removes the folder.
//!
//! [`private_tcp`] starts one that also listens on 127.0.0.1 (a free
//! port; trust authentication, as on the socket), with `ssl=on` and a
//! certificate for `localhost` signed by a CA made at start by `rcgen`
//! (nothing to install), for the store's TLS tests.
//!
//! A machine without Postgres fails every test that asks for a server, with
//! a message naming the set-up command: never a silent skip, and never a
//! hang (`pg_ctl -w -t 60`, and the store's own connect deadline).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The command that installs what these tests need.
pub const SETUP: &str = "./scripts/setup.sh --only postgres";

/// The running server.
#[derive(Debug)]
pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    next: AtomicUsize,
    /// `postgres` options (socket folder, no fsync): the same on a restart.
    opts: String,
    /// Runs server programs as `nobody` under root.
    user: Option<(u32, u32)>,
    /// A [`private`] server, stopped when dropped; the shared one lives
    /// as long as the test binary (its watchdog stops it).
    owned: bool,
    /// The TCP port on 127.0.0.1, for a [`private_tcp`] server.
    port: Option<u16>,
}

/// The folder holding `initdb`, `pg_ctl` and `postgres`: `AGENTSHAPE_PG_BIN`,
/// else the newest `/usr/lib/postgresql/*/bin`.
pub fn bin_dir() -> Option<PathBuf> {
    let ok = |d: &Path| {
        ["initdb", "pg_ctl", "postgres", "createdb"]
            .iter()
            .all(|b| d.join(b).is_file())
    };
    if let Some(d) = std::env::var_os("AGENTSHAPE_PG_BIN") {
        let d = PathBuf::from(d);
        return ok(&d).then_some(d);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            ok(&bin).then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d)
}

/// `(uid, gid)` of `nobody` when this process is root (initdb refuses root).
fn unprivileged() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<u32>()
        .ok()?;
    if euid != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&"nobody"))
            .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
    })
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("throwaway Postgres: {what}: {e}; run {SETUP}"));
    assert!(
        out.status.success(),
        "throwaway Postgres: {what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `program` of the server's bin folder, run as the server's user.
fn server_cmd(bin: &Path, dir: &Path, user: Option<(u32, u32)>, program: &str) -> Command {
    let mut c = Command::new(bin.join(program));
    c.env("LC_ALL", "C").env_remove("PGDATA");
    if let Some((uid, gid)) = user {
        use std::os::unix::process::CommandExt;
        c.uid(uid).gid(gid).current_dir(dir);
    }
    c
}

fn start() -> PgServer {
    start_with(&Listen::Socket)
}

/// Where a server listens besides its socket folder.
enum Listen {
    /// The Unix socket only.
    Socket,
    /// 127.0.0.1 on a free port too, with TLS or without.
    Tcp { tls: bool },
}

fn start_with(listen: &Listen) -> PgServer {
    let Some(bin) = bin_dir() else {
        panic!(
            "Postgres is not installed (no initdb/pg_ctl under /usr/lib/postgresql/*/bin \
             or AGENTSHAPE_PG_BIN): run {SETUP}"
        );
    };
    let dir = tempfile::Builder::new()
        .prefix("agentshape-pg-")
        .tempdir()
        .expect("a temporary folder for the throwaway Postgres")
        .keep();
    let data = dir.join("data");
    let user = unprivileged();
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("chown the server folder");
    }
    let as_server = |program: &str| server_cmd(&bin, &dir, user, program);
    // The watchdog first: whatever happens next, the folder goes.
    let watchdog = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
         if [ -f '{data}/postmaster.pid' ]; then kill -QUIT \"$(head -1 '{data}/postmaster.pid')\" 2>/dev/null; sleep 1; fi; \
         rm -rf '{dir}'",
        pid = std::process::id(),
        data = data.display(),
        dir = dir.display(),
    );
    {
        use std::os::unix::process::CommandExt;
        // Never waited on: it outlives this process on purpose (its parent
        // becomes init, which reaps it).
        #[allow(clippy::zombie_processes)]
        Command::new("sh")
            .arg("-c")
            .arg(watchdog)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the throwaway Postgres watchdog");
    }
    run(
        as_server("initdb").arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]),
        "initdb",
    );
    let base = format!(
        "-c unix_socket_directories='{}' -c fsync=off \
         -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
        dir.display()
    );
    let tls = match listen {
        Listen::Tcp { tls: true } => {
            let (cert, key) = tls_files(&dir, user);
            format!(
                " -c ssl=on -c ssl_cert_file='{}' -c ssl_key_file='{}'",
                cert.display(),
                key.display()
            )
        }
        _ => String::new(),
    };
    let mut server = PgServer {
        dir,
        bin,
        next: AtomicUsize::new(0),
        opts: String::new(),
        user,
        owned: false,
        port: None,
    };
    if matches!(listen, Listen::Socket) {
        server.opts = format!("-c listen_addresses='' {base}");
        server.start();
        return server;
    }
    // A free port, asked of the kernel; another process may take it between
    // the probe and the server's bind, so a few tries.
    let mut last = String::new();
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port on 127.0.0.1")
            .port();
        server.opts = format!("-c listen_addresses='127.0.0.1' -c port={port} {base}{tls}");
        match server.try_start() {
            Ok(()) => {
                server.port = Some(port);
                return server;
            }
            Err(e) => last = e,
        }
    }
    panic!("throwaway Postgres on 127.0.0.1 did not start: {last}");
}

/// The CA (for `localhost`, made now) of a TLS server's certificate, and
/// another CA that signed nothing of it.
pub const CA_FILE: &str = "ca.pem";
/// A CA that did not sign the server's certificate.
pub const OTHER_CA_FILE: &str = "other-ca.pem";

/// Make a CA, a server certificate for `localhost` signed by it, and an
/// unrelated CA, in `dir`; the key readable by the server's user only.
fn tls_files(dir: &Path, user: Option<(u32, u32)>) -> (PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca = |name: &str| {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).expect("a self-signed CA");
        (cert.pem(), Issuer::new(params, key))
    };
    let (ca_pem, issuer) = ca("agentshape test CA");
    let (other_pem, _) = ca("agentshape unrelated CA");
    let key = KeyPair::generate().expect("a server key");
    let mut params =
        CertificateParams::new(vec!["localhost".to_owned()]).expect("server parameters");
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let cert = params
        .signed_by(&key, &issuer)
        .expect("a server certificate");
    let write = |name: &str, text: &str, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write a TLS file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .expect("chmod a TLS file");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).expect("chown a TLS file");
        }
        path
    };
    write(CA_FILE, &ca_pem, 0o644);
    write(OTHER_CA_FILE, &other_pem, 0o644);
    let cert = write("server.crt", &cert.pem(), 0o644);
    let key = write("server.key", &key.serialize_pem(), 0o600);
    (cert, key)
}

/// The server of this test binary, started on first use.
///
/// # Panics
/// When Postgres is not installed (the message names [`SETUP`]) or does not start.
pub fn server() -> &'static PgServer {
    static SERVER: OnceLock<PgServer> = OnceLock::new();
    SERVER.get_or_init(start)
}

/// A server of the caller's own, which it may stop and start (the outage
/// tests); stopped and removed when dropped (or, at the latest, by its
/// watchdog when the test binary exits).
///
/// # Panics
/// As [`server`].
pub fn private() -> PgServer {
    let mut s = start();
    s.owned = true;
    s
}

/// A server of the caller's own that also listens on 127.0.0.1 (a free
/// port), with `ssl=on` and a certificate for `localhost` signed by a CA
/// made at start ([`PgServer::ca`]) when `tls`; stopped when dropped.
///
/// # Panics
/// As [`server`].
pub fn private_tcp(tls: bool) -> PgServer {
    let mut s = start_with(&Listen::Tcp { tls });
    s.owned = true;
    s
}

/// Percent-encode a socket folder for the host part of a URL.
fn encode(path: &Path) -> String {
    let mut out = String::new();
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

impl PgServer {
    /// The URL of database `db` on this server.
    pub fn url(&self, db: &str) -> String {
        // The socket's name carries the port (`.s.PGSQL.<port>`).
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("postgresql://postgres@{}{port}/{db}", encode(&self.dir))
    }

    /// The URL of database `db` over TCP for a [`private_tcp`] server:
    /// `host` is the name TLS checks (`localhost` or `127.0.0.1`), the
    /// address is always 127.0.0.1 (`hostaddr`: `localhost` may also
    /// resolve to `::1`, where nothing listens). More parameters go after
    /// `&`.
    ///
    /// # Panics
    /// When the server does not listen on TCP.
    pub fn tcp_url(&self, host: &str, db: &str) -> String {
        let port = self.port.expect("a server started by private_tcp");
        format!("postgresql://postgres@{host}:{port}/{db}?hostaddr=127.0.0.1")
    }

    /// The TCP port on 127.0.0.1 of a [`private_tcp`] server.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The CA that signed a TLS server's certificate ([`CA_FILE`]).
    pub fn ca(&self) -> PathBuf {
        self.dir.join(CA_FILE)
    }

    /// A CA that signed nothing of this server ([`OTHER_CA_FILE`]).
    pub fn other_ca(&self) -> PathBuf {
        self.dir.join(OTHER_CA_FILE)
    }

    /// A new empty database, its URL.
    ///
    /// # Panics
    /// When `createdb` fails.
    pub fn fresh_db(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let name = format!("t{}_{n}", std::process::id());
        let port = self.port.unwrap_or(5432).to_string();
        run(
            Command::new(self.bin.join("createdb"))
                .arg("-h")
                .arg(&self.dir)
                .args(["-p", &port])
                .args([
                    "-U",
                    "postgres",
                    "-T",
                    "template0",
                    "-S",
                    "file_copy",
                    &name,
                ]),
            "createdb",
        );
        self.url(&name)
    }

    /// Start the server on its data folder (again, after [`PgServer::stop`]):
    /// same socket, same databases, same data.
    ///
    /// # Panics
    /// When `pg_ctl start` fails.
    pub fn start(&self) {
        if let Err(e) = self.try_start() {
            panic!("{e}");
        }
    }

    fn try_start(&self) -> Result<(), String> {
        let out = server_cmd(&self.bin, &self.dir, self.user, "pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "60", "-o", &self.opts, "start"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("throwaway Postgres: pg_ctl start: {e}; run {SETUP}"))?;
        if out.status.success() {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        Err(format!(
            "throwaway Postgres: pg_ctl start failed ({}): {}{}{log}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }

    /// Stop the server (`-m fast`: open connections are closed, as when a
    /// database is restarted under its clients) and wait until it is down.
    ///
    /// # Panics
    /// When `pg_ctl stop` fails.
    pub fn stop(&self) {
        run(
            server_cmd(&self.bin, &self.dir, self.user, "pg_ctl")
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["-w", "-t", "60", "-m", "fast", "stop"]),
            "pg_ctl stop",
        );
    }

    /// The folder of the server's socket (and its log, `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // Best effort: the watchdog removes whatever is left at exit.
        let _ = server_cmd(&self.bin, &self.dir, self.user, "pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-w", "-t", "60", "-m", "immediate", "stop"])
            .stdin(Stdio::null())
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh database on this binary's server (see [`PgServer::fresh_db`]).
pub fn fresh_db() -> String {
    server().fresh_db()
}
