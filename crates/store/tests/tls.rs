//! Postgres over TLS (Note [sslmode] in `tls`): each `sslmode` against
//! throwaway servers on 127.0.0.1, one with `ssl=on` and a certificate for
//! `localhost` signed by a CA made at test time, one without TLS. What the
//! connection really is comes from the server (`pg_stat_ssl`), not from
//! what the store says.

use std::sync::OnceLock;

use agentshape_store::{ErrorKind, PgStore};
use agentshape_testkit::pg::{self, PgServer};

fn tls_server() -> &'static PgServer {
    static S: OnceLock<PgServer> = OnceLock::new();
    S.get_or_init(|| pg::private_tcp(true))
}

fn plain_server() -> &'static PgServer {
    static S: OnceLock<PgServer> = OnceLock::new();
    S.get_or_init(|| pg::private_tcp(false))
}

/// A fresh database on `server`: its name.
fn fresh(server: &PgServer) -> String {
    let url = server.fresh_db();
    url.rsplit('/').next().unwrap().to_owned()
}

/// Whether every connection of `db` from 127.0.0.1 uses TLS, asked of the
/// server over its socket; `None` when there is none.
fn ssl_of(server: &PgServer, db: &str) -> Option<bool> {
    let mut admin = postgres::Client::connect(&server.url("postgres"), postgres::NoTls).unwrap();
    let row = admin
        .query_one(
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.datname = $1 AND a.client_addr IS NOT NULL",
            &[&db],
        )
        .unwrap();
    row.get(0)
}

fn open(url: &str) -> Result<PgStore, agentshape_store::Error> {
    PgStore::open(url)
}

#[test]
fn require_prefer_and_disable_connect_as_libpq_would() {
    let s = tls_server();
    for (params, tls, says) in [
        (
            "&sslmode=require",
            true,
            Some("connected with TLS, certificate not verified (sslmode=require)"),
        ),
        (
            "",
            true,
            Some("connected with TLS, certificate not verified (sslmode=prefer)"),
        ),
        (
            "&sslmode=prefer",
            true,
            Some("connected with TLS, certificate not verified (sslmode=prefer)"),
        ),
        (
            "&sslmode=disable",
            false,
            Some("connected without TLS (sslmode=disable)"),
        ),
    ] {
        let db = fresh(s);
        let store = open(&format!("{}{params}", s.tcp_url("localhost", &db)))
            .unwrap_or_else(|e| panic!("{params}: {e}"));
        assert_eq!(ssl_of(s, &db), Some(tls), "{params}");
        assert_eq!(store.transport().as_deref(), says, "{params}");
    }
}

#[test]
fn verify_ca_checks_the_chain_and_not_the_host() {
    let s = tls_server();
    let ca = s.ca();
    // 127.0.0.1 is not in the certificate (only `localhost`): verify-ca passes.
    let db = fresh(s);
    let url = format!(
        "{}&sslmode=verify-ca&sslrootcert={}",
        s.tcp_url("127.0.0.1", &db),
        ca.display()
    );
    let store = open(&url).unwrap();
    assert_eq!(ssl_of(s, &db), Some(true));
    assert_eq!(
        store.transport().as_deref(),
        Some(
            "connected with TLS, certificate chain verified, host name not checked \
             (sslmode=verify-ca)"
        )
    );
    // libpq: `require` with a root certificate checks the chain too.
    let wrong = format!(
        "{}&sslmode=require&sslrootcert={}",
        s.tcp_url("localhost", &db),
        s.other_ca().display()
    );
    let e = open(&wrong).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(
        e.to_string().contains("not signed by a trusted root"),
        "{e}"
    );

    let wrong = format!(
        "{}&sslmode=verify-ca&sslrootcert={}",
        s.tcp_url("localhost", &db),
        s.other_ca().display()
    );
    let e = open(&wrong).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Io, "{msg}");
    assert!(msg.contains("not signed by a trusted root"), "{msg}");
    assert!(msg.contains("(sslmode=verify-ca)"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn verify_full_checks_the_chain_and_the_host() {
    let s = tls_server();
    let ca = s.ca();
    let db = fresh(s);
    let url = format!(
        "{}&sslmode=verify-full&sslrootcert={}",
        s.tcp_url("localhost", &db),
        ca.display()
    );
    let store = open(&url).unwrap();
    assert_eq!(ssl_of(s, &db), Some(true));
    assert_eq!(store.transport(), None, "verify-full needs no word");
    // The same, as key=value pairs.
    let kv = format!(
        "host=localhost hostaddr=127.0.0.1 port={} user=postgres dbname={db} \
         sslmode=verify-full sslrootcert='{}'",
        s.port().unwrap(),
        ca.display()
    );
    open(&kv).unwrap_or_else(|e| panic!("{kv}: {e}"));

    let mismatched = format!(
        "{}&sslmode=verify-full&sslrootcert={}",
        s.tcp_url("127.0.0.1", &db),
        ca.display()
    );
    let e = open(&mismatched).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Io, "{msg}");
    assert!(
        msg.contains("not valid for the host name `127.0.0.1`") && msg.contains("verify-full"),
        "{msg}"
    );
}

#[test]
fn a_server_without_tls() {
    let s = plain_server();
    let db = fresh(s);
    let e = open(&format!("{}&sslmode=require", s.tcp_url("localhost", &db))).unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Io, "{msg}");
    assert!(
        msg.contains("server does not support TLS") && msg.contains("(sslmode=require)"),
        "{msg}"
    );
    // prefer falls back to plain text only here, and says so.
    let store = open(&s.tcp_url("localhost", &db)).unwrap();
    assert_eq!(ssl_of(s, &db), Some(false));
    assert_eq!(
        store.transport().as_deref(),
        Some("connected without TLS: the server offers none (sslmode=prefer)")
    );
}

#[test]
fn bad_tls_settings_are_usage_errors_before_any_connect() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1: a usage error must come before the connect.
    for (url, says) in [
        (
            "postgres://h:1/db?sslmode=verify_full".to_owned(),
            "sslmode `verify_full`",
        ),
        (
            "postgres://h:1/db?sslmode=allow".to_owned(),
            "`allow` is not supported",
        ),
        (
            format!(
                "postgres://h:1/db?sslmode=verify-ca&sslrootcert={}",
                dir.path().join("none.pem").display()
            ),
            "cannot be read",
        ),
    ] {
        let e = open(&url).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage, "{url}: {e}");
        assert!(e.to_string().contains(says), "{url}: {e}");
        // And so does parsing the location.
        if !says.contains("cannot be read") {
            let e = agentshape_store::StoreUrl::parse(&url).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Usage, "{url}");
        }
    }
}
