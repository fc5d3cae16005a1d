//! Issue 27, through the binary: Postgres passwords never printed, whatever
//! the form of the URL (store's Note [One reading of a connection string]);
//! Postgres over TLS with every `sslmode` (store's Note [sslmode]) against
//! throwaway servers with a certificate made at test time; and the exit
//! codes of stores that are not stores (store's Note [Not a store]).

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use agentshape_testkit::pg::{self, PgServer};

use crate::support::{agentshape, assert_exit, assert_exit_for, json_lines, repo_root};

/// A hang guard for every command here (never a speed assertion).
const GUARD: Duration = Duration::from_secs(120);

const SECRET: &str = "cretPW27";

fn sessions(store: &str, extra: &[&str]) -> std::process::Output {
    agentshape()
        .env("AGENTSHAPE_STORE_CONNECT_MS", "5000")
        .arg("sessions")
        .args(extra)
        .args(["--store", store])
        .timeout(GUARD)
        .output()
        .unwrap()
}

fn ingest(store: &str) -> std::process::Output {
    agentshape()
        .args([
            "ingest",
            "--store",
            store,
            "examples/healthy-structured.ndjson",
        ])
        .current_dir(repo_root())
        .timeout(GUARD)
        .output()
        .unwrap()
}

/// `url` (`postgresql://postgres@HOST/db`) with a password in `form`.
fn with_password(url: &str, form: &str) -> String {
    let rest = url.strip_prefix("postgresql://postgres@").unwrap();
    match form {
        "slash" => format!("postgresql://postgres:se/{SECRET}@{rest}"),
        "query" => format!("{url}?password=se/{SECRET}"),
        "encoded-key" => format!("{url}?application_name=x&pass%77ord={SECRET}"),
        other => unreachable!("{other}"),
    }
}

/// The `ingest` hint `sessions` prints for a log the store lacks, in text
/// and JSON, and every other line: never the password, in any URL form.
#[test]
fn the_ingest_hint_never_prints_a_postgres_password() {
    for form in ["slash", "query", "encoded-key"] {
        // The throwaway server trusts local connections: the password is
        // sent to no one, but it is in the URL.
        let url = with_password(&pg::fresh_db(), form);
        assert_exit(&ingest(&url), 0);
        let logs = tempfile::tempdir().unwrap();
        std::fs::write(logs.path().join("never-stored.ndjson"), "{}\n").unwrap();
        let dir = logs.path().to_str().unwrap();
        for extra in [vec!["--log-dir", dir], vec!["--json", "--log-dir", dir]] {
            let out = sessions(&url, &extra);
            assert_exit(&out, 0);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(all.contains("agentshape ingest --store"), "{form}: {all}");
            assert!(all.contains("***"), "{form}: {all}");
            assert!(!all.contains(SECRET), "{form} {extra:?}: {all}");
        }
        // `store copy --json` names both stores.
        let copy = logs.path().join("copy.db");
        let out = agentshape()
            .args(["store", "copy", "--json", "--from", &url, "--to"])
            .arg(&copy)
            .timeout(GUARD)
            .output()
            .unwrap();
        assert_exit(&out, 0);
        let v = &json_lines(&out.stdout)[0];
        assert!(v["from"].as_str().unwrap().contains("***"), "{v}");
        assert!(!format!("{out:?}").contains(SECRET), "{form}: {v}");
    }
}

/// A server that cannot be reached: the one-line error names the URL
/// without its password, in each form (and a `key=value` string is a
/// Postgres location, not a file name that would be printed whole).
#[test]
fn a_connection_error_never_prints_the_password() {
    for (url, shown) in [
        (
            format!("postgres://w:se/{SECRET}@127.0.0.1:1/db"),
            "postgres://w:***@127.0.0.1:1/db".to_owned(),
        ),
        (
            format!("postgres://w@127.0.0.1:1/db?password={SECRET}"),
            "postgres://w@127.0.0.1:1/db?password=***".to_owned(),
        ),
        (
            format!("postgres://w@127.0.0.1:1/db?pass%77ord={SECRET}"),
            "postgres://w@127.0.0.1:1/db?pass%77ord=***".to_owned(),
        ),
        (
            format!("host=127.0.0.1 port=1 user=w password='a b {SECRET}' dbname=db"),
            "host=127.0.0.1 port=1 user=w password=*** dbname=db".to_owned(),
        ),
    ] {
        for out in [sessions(&url, &[]), ingest(&url)] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_exit_for(&out, 75, format_args!("{url}"));
            assert!(err.contains(&shown), "{url}: {err}");
            assert!(!err.contains(SECRET), "{url}: {err}");
            assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
}

fn tls_server() -> &'static PgServer {
    static S: OnceLock<PgServer> = OnceLock::new();
    S.get_or_init(|| pg::private_tcp(true))
}

fn plain_tcp_server() -> &'static PgServer {
    static S: OnceLock<PgServer> = OnceLock::new();
    S.get_or_init(|| pg::private_tcp(false))
}

/// A fresh database on `server` over TCP to `host`, with `params`.
fn tcp_db(server: &PgServer, host: &str, params: &str) -> String {
    let socket_url = server.fresh_db();
    let db = socket_url.rsplit('/').next().unwrap();
    // The schema first, over the socket, so read-only commands find a store.
    assert_exit(&ingest(&socket_url), 0);
    format!("{}{params}", server.tcp_url(host, db))
}

fn one_line_error(out: &std::process::Output, code: i32, says: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_exit(out, code);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for s in says {
        assert!(err.contains(s), "wanted {s:?} in: {err}");
    }
}

#[test]
fn sessions_connects_with_each_sslmode_and_says_how() {
    let s = tls_server();
    let ca = s.ca();
    let ca = ca.to_str().unwrap();
    for (host, params, says) in [
        (
            "localhost",
            "&sslmode=require".to_owned(),
            Some("connected with TLS, certificate not verified (sslmode=require)"),
        ),
        (
            "localhost",
            String::new(),
            Some("connected with TLS, certificate not verified (sslmode=prefer)"),
        ),
        (
            "localhost",
            "&sslmode=disable".to_owned(),
            Some("connected without TLS (sslmode=disable)"),
        ),
        (
            "127.0.0.1",
            format!("&sslmode=verify-ca&sslrootcert={ca}"),
            Some(
                "connected with TLS, certificate chain verified, host name not checked (sslmode=verify-ca)",
            ),
        ),
        (
            "localhost",
            format!("&sslmode=verify-full&sslrootcert={ca}"),
            None,
        ),
    ] {
        let url = tcp_db(s, host, &params);
        let out = sessions(&url, &[]);
        assert_exit(&out, 0);
        let text = String::from_utf8_lossy(&out.stdout);
        match says {
            Some(says) => assert!(text.contains(says), "{url}: {text}"),
            None => assert!(!text.contains("connected"), "{url}: {text}"),
        }
        let out = sessions(&url, &["--json"]);
        assert_exit(&out, 0);
        let v = &json_lines(&out.stdout)[0];
        assert_eq!(v["transport"].as_str(), says, "{url}: {v}");
    }
}

#[test]
fn tls_failures_are_one_line_with_the_mode_and_exit_74_bad_settings_64() {
    let s = tls_server();
    let other = s.other_ca();
    let other = other.to_str().unwrap();
    let ca = s.ca();
    let ca = ca.to_str().unwrap();
    let cases = [
        (
            tcp_db(
                s,
                "localhost",
                &format!("&sslmode=verify-ca&sslrootcert={other}"),
            ),
            vec!["not signed by a trusted root", "(sslmode=verify-ca)"],
        ),
        (
            tcp_db(
                s,
                "127.0.0.1",
                &format!("&sslmode=verify-full&sslrootcert={ca}"),
            ),
            vec![
                "not valid for the host name `127.0.0.1`",
                "(sslmode=verify-full)",
            ],
        ),
        (
            tcp_db(plain_tcp_server(), "localhost", "&sslmode=require"),
            vec!["server does not support TLS", "(sslmode=require)"],
        ),
    ];
    for (url, says) in &cases {
        let mut says: Vec<&str> = says.clone();
        let shown = url.split('?').next().unwrap().to_owned();
        says.push(&shown);
        one_line_error(&sessions(url, &[]), 74, &says);
    }
    // Settings that are wrong before any connect: usage errors.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    for (params, says) in [
        ("&sslmode=verify_full".to_owned(), "sslmode `verify_full`"),
        (
            "&sslmode=allow".to_owned(),
            "sslmode `allow` is not supported",
        ),
        (
            format!("&sslmode=verify-ca&sslrootcert={}", missing.display()),
            "sslrootcert",
        ),
    ] {
        let url = format!("{}{params}", s.tcp_url("localhost", "x"));
        one_line_error(&sessions(&url, &[]), 64, &[says]);
    }
}

/// Prefer against a server without TLS connects in plain text, and says so.
#[test]
fn prefer_against_a_plain_server_connects_and_says_so() {
    let url = tcp_db(plain_tcp_server(), "localhost", "");
    let out = sessions(&url, &[]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("connected without TLS: the server offers none (sslmode=prefer)"),
        "{text}"
    );
}

fn sqlite_with(path: &Path, sql: &str) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(sql).unwrap();
}

/// A 0-byte file is an empty database: read-only commands call it missing
/// (66) and name it; another program's database is a data error (65); both
/// were 74 "no such table". `ingest` initialises the empty file.
#[test]
fn an_empty_or_foreign_sqlite_file_is_not_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let foreign = dir.path().join("foreign.db");
    sqlite_with(
        &foreign,
        "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x');",
    );
    let blank = dir.path().join("blank.db");
    sqlite_with(&blank, "PRAGMA user_version = 0;");
    for (path, code, says) in [
        (
            &empty,
            66,
            "is an empty database, not yet an agentshape store",
        ),
        (
            &blank,
            66,
            "is an empty database, not yet an agentshape store",
        ),
        (&foreign, 65, "is a database but not an agentshape store"),
    ] {
        let store = path.to_str().unwrap();
        for args in [
            vec!["sessions", "--store", store],
            vec!["memories", "list", "--store", store],
        ] {
            let out = agentshape().args(&args).timeout(GUARD).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_exit_for(&out, code, format_args!("{args:?}"));
            assert!(err.contains(says) && err.contains(store), "{args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        }
    }
    assert_eq!(
        std::fs::metadata(&empty).unwrap().len(),
        0,
        "read-only left it"
    );
    assert_exit(&ingest(empty.to_str().unwrap()), 0);
    let out = sessions(empty.to_str().unwrap(), &["--json"]);
    assert_exit(&out, 0);
    assert_eq!(
        json_lines(&out.stdout)[0]["sessions_by_status"]["completed"],
        1
    );
}
