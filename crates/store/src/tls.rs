//! TLS for the Postgres store: libpq's `sslmode`s on rustls.
//!
//! Note \[sslmode\]: managed Postgres services require TLS, so the store
//! reads `sslmode` and `sslrootcert` (URL parameters or `key=value` pairs)
//! and means by them what libpq means:
//!
//! | sslmode       | TLS                          | certificate checked                  |
//! |---------------|------------------------------|--------------------------------------|
//! | `disable`     | never                        | –                                    |
//! | `prefer` (default) | when the server offers it, else plain | no (chain, as verify-ca, when `sslrootcert` is given) |
//! | `require`     | always (else the connect fails) | no (chain, as verify-ca, when `sslrootcert` is given) |
//! | `verify-ca`   | always                       | chain, against `sslrootcert` or the system's roots; not the host name |
//! | `verify-full` | always                       | chain and host name                  |
//!
//! `prefer` never falls back to plain text after the server said it speaks
//! TLS: a failed handshake is an error, not a quiet downgrade. `allow` is
//! refused (the client cannot try plain first). `sslrootcert=system` names
//! the system's roots, which `verify-*` also use when no file is given. A
//! Unix socket never uses TLS (the server offers none there), whatever the
//! mode, as in libpq. Channel binding (SCRAM-SHA-256-PLUS) is not offered:
//! password authentication over TLS uses plain SCRAM-SHA-256.
//!
//! The connector is ours, over `tokio-rustls` (already in the build for
//! HTTP), rather than a connector crate: `verify-ca` needs a verifier that
//! checks the chain but not the name, which none of them has, and the
//! store needs to know afterwards whether a connection used TLS (what
//! `sessions` and errors say when the mode is not `verify-full`).

use std::future::Future;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use postgres::Socket;
use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The largest `sslrootcert` file read (a CA bundle is a few hundred KB).
pub const ROOT_CERT_CAP: u64 = 4 << 20;

/// libpq's `sslmode` values this store supports (Note \[sslmode\]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain text.
    Disable,
    /// TLS when the server offers it.
    Prefer,
    /// TLS, certificate not checked (unless a root is given).
    Require,
    /// TLS, chain checked, host name not.
    VerifyCa,
    /// TLS, chain and host name checked.
    VerifyFull,
}

impl SslMode {
    /// Read a `sslmode` value.
    ///
    /// # Errors
    /// The reason, for a value that is not one of the five.
    pub fn parse(s: &str) -> Result<Self, String> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(
                    "sslmode `allow` is not supported (use `prefer` or `disable`)".to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "sslmode `{other}` is not one of disable, prefer, require, verify-ca, verify-full"
                ));
            }
        })
    }

    /// The libpq spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// What a TLS connection checks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Nothing,
    Chain,
    Full,
}

/// The TLS settings of one store, read from its connection string.
#[derive(Clone)]
pub(crate) struct Tls {
    mode: SslMode,
    root_cert: Option<PathBuf>,
    /// Every host is a Unix socket: no TLS whatever the mode.
    local: bool,
    config: Arc<ClientConfig>,
    /// Whether a connection of this store used TLS.
    used: Arc<AtomicBool>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("mode", &self.mode)
            .field("root_cert", &self.root_cert)
            .finish_non_exhaustive()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The roots: `sslrootcert`'s certificates, or the system's.
fn roots(root_cert: Option<&Path>) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match root_cert {
        Some(path) if path != Path::new("system") => {
            let shown = path.display();
            let mut file = std::fs::File::open(path)
                .map_err(|e| format!("sslrootcert `{shown}` cannot be read: {e}"))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("sslrootcert `{shown}` cannot be read: {e}"))?;
            if !meta.is_file() {
                return Err(format!("sslrootcert `{shown}` is not a regular file"));
            }
            let mut pem = Vec::new();
            (&mut file)
                .take(ROOT_CERT_CAP + 1)
                .read_to_end(&mut pem)
                .map_err(|e| format!("sslrootcert `{shown}` cannot be read: {e}"))?;
            if pem.len() as u64 > ROOT_CERT_CAP {
                return Err(format!(
                    "sslrootcert `{shown}` is larger than {} MiB",
                    ROOT_CERT_CAP >> 20
                ));
            }
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| {
                    format!("sslrootcert `{shown}` is not a PEM certificate file: {e}")
                })?;
                store.add(cert).map_err(|e| {
                    format!("sslrootcert `{shown}` holds a certificate that cannot be used: {e}")
                })?;
            }
            if store.is_empty() {
                return Err(format!("sslrootcert `{shown}` holds no PEM certificate"));
            }
        }
        _ => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err("no system root certificates found; give sslrootcert=PATH".to_owned());
            }
        }
    }
    Ok(store)
}

impl Tls {
    /// The settings for `mode` and `root_cert`; `local` when every host is
    /// a Unix socket. Reads the roots now, so a bad `sslrootcert` is a
    /// configuration error before any connect.
    ///
    /// # Errors
    /// The reason, for an unreadable or unusable `sslrootcert`.
    pub(crate) fn new(
        mode: SslMode,
        root_cert: Option<PathBuf>,
        local: bool,
    ) -> Result<Self, String> {
        let check = match mode {
            SslMode::VerifyFull => Check::Full,
            // libpq: a root certificate makes `require` (and `prefer`) check the chain.
            SslMode::VerifyCa | SslMode::Prefer | SslMode::Require if root_cert.is_some() => {
                Check::Chain
            }
            SslMode::VerifyCa => Check::Chain,
            SslMode::Disable | SslMode::Prefer | SslMode::Require => Check::Nothing,
        };
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS set-up failed: {e}"))?;
        let config = if local || mode == SslMode::Disable {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
                .with_no_client_auth()
        } else {
            match check {
                Check::Nothing => builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
                    .with_no_client_auth(),
                Check::Chain => {
                    let roots = Arc::new(roots(root_cert.as_deref())?);
                    let inner = WebPkiServerVerifier::builder_with_provider(roots, provider)
                        .build()
                        .map_err(|e| format!("TLS set-up failed: {e}"))?;
                    builder
                        .dangerous()
                        .with_custom_certificate_verifier(Arc::new(ChainOnly(inner)))
                        .with_no_client_auth()
                }
                Check::Full => builder
                    .with_root_certificates(roots(root_cert.as_deref())?)
                    .with_no_client_auth(),
            }
        };
        Ok(Tls {
            mode,
            root_cert,
            local,
            config: Arc::new(config),
            used: Arc::default(),
        })
    }

    /// The client's mode for this store.
    pub(crate) fn client_mode(&self) -> postgres::config::SslMode {
        use postgres::config::SslMode as C;
        match self.mode {
            _ if self.local => C::Disable,
            SslMode::Disable => C::Disable,
            SslMode::Prefer => C::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => C::Require,
        }
    }

    /// The mode, for messages: `sslmode=require` (and what a root makes of it).
    pub(crate) fn mode_note(&self) -> String {
        match (self.mode, &self.root_cert) {
            (SslMode::Prefer | SslMode::Require, Some(_)) => format!(
                "sslmode={} with sslrootcert: chain checked as verify-ca",
                self.mode.as_str()
            ),
            _ => format!("sslmode={}", self.mode.as_str()),
        }
    }

    /// What errors add after the URL: the mode, unless a Unix socket.
    pub(crate) fn error_note(&self) -> String {
        if self.local {
            String::new()
        } else {
            format!(" ({})", self.mode_note())
        }
    }

    /// How the last connection went, when it was not fully verified TLS
    /// (Note \[sslmode\]): `None` for `verify-full` and Unix sockets.
    pub(crate) fn transport(&self) -> Option<String> {
        if self.local || self.mode == SslMode::VerifyFull {
            return None;
        }
        let note = self.mode_note();
        Some(if !self.used.load(Ordering::Acquire) {
            match self.mode {
                SslMode::Disable => format!("connected without TLS ({note})"),
                _ => format!("connected without TLS: the server offers none ({note})"),
            }
        } else if self.mode == SslMode::VerifyCa || self.root_cert.is_some() {
            format!(
                "connected with TLS, certificate chain verified, host name not checked ({note})"
            )
        } else {
            format!("connected with TLS, certificate not verified ({note})")
        })
    }

    /// The connector for one connect.
    pub(crate) fn connector(&self) -> Connector {
        Connector {
            config: Arc::clone(&self.config),
            used: Arc::clone(&self.used),
        }
    }
}

/// Accepts any certificate (`require`, `prefer`): the handshake's
/// signatures are still checked, so the connection is encrypted to whoever
/// holds the key of the certificate shown.
#[derive(Debug)]
struct AnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain is checked as usual; a certificate whose only
/// fault is the host name passes (webpki checks the chain first, so a
/// name error means the chain was good).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The connector handed to the client for one connect.
#[derive(Clone)]
pub(crate) struct Connector {
    config: Arc<ClientConfig>,
    used: Arc<AtomicBool>,
}

/// The handshake with one host.
pub(crate) struct Handshake {
    config: Arc<ClientConfig>,
    used: Arc<AtomicBool>,
    host: String,
}

/// A TLS handshake that failed for a reason of TLS (a certificate not
/// trusted, not for this host, a protocol mismatch): not an outage, so the
/// store neither retries it nor calls the server unavailable.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsFailure(pub String);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl MakeTlsConnect<Socket> for Connector {
    type Stream = TlsStream;
    type TlsConnect = Handshake;
    type Error = BoxError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Handshake, BoxError> {
        // The name is checked in `connect`: this runs for Unix sockets too,
        // where no handshake follows.
        Ok(Handshake {
            config: Arc::clone(&self.config),
            used: Arc::clone(&self.used),
            host: domain.to_owned(),
        })
    }
}

/// A rustls error in words a user can act on.
fn explain(e: &rustls::Error, host: &str) -> String {
    match e {
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("the server's certificate is not valid for the host name `{host}`"),
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "the server's certificate is not signed by a trusted root (sslrootcert)".to_owned()
        }
        rustls::Error::InvalidCertificate(c) => {
            format!("the server's certificate is refused: {c:?}")
        }
        other => other.to_string(),
    }
}

impl TlsConnect<Socket> for Handshake {
    type Stream = TlsStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<TlsStream, BoxError>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let name = ServerName::try_from(self.host.clone()).map_err(|e| {
                Box::new(TlsFailure(format!(
                    "`{}` is not a host name for TLS: {e}",
                    self.host
                ))) as BoxError
            })?;
            let connector = tokio_rustls::TlsConnector::from(self.config);
            match connector.connect(name, stream).await {
                Ok(s) => {
                    self.used.store(true, Ordering::Release);
                    Ok(TlsStream(Box::new(s)))
                }
                Err(e) => {
                    let tls = e
                        .get_ref()
                        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                        .map(|r| explain(r, &self.host));
                    Err(match tls {
                        Some(why) => Box::new(TlsFailure(why)) as BoxError,
                        None => Box::new(e) as BoxError,
                    })
                }
            }
        })
    }
}

/// A TLS connection to the server.
pub struct TlsStream(Box<tokio_rustls::client::TlsStream<Socket>>);

impl AsyncRead for TlsStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl postgres::tls::TlsStream for TlsStream {
    fn channel_binding(&self) -> ChannelBinding {
        // See Note [sslmode]: no SCRAM-SHA-256-PLUS.
        ChannelBinding::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_read_as_libpq_spells_them() {
        for m in ["disable", "prefer", "require", "verify-ca", "verify-full"] {
            assert_eq!(SslMode::parse(m).map(SslMode::as_str), Ok(m));
        }
        for bad in ["allow", "Require", "", "verify_full"] {
            let e = SslMode::parse(bad).unwrap_err();
            assert!(e.contains("sslmode"), "{e}");
        }
    }

    #[test]
    fn an_unusable_root_file_is_a_configuration_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate").unwrap();
        for (path, says) in [
            (missing, "cannot be read"),
            (junk, "holds no PEM certificate"),
            (dir.path().to_owned(), "not a regular file"),
        ] {
            let e = Tls::new(SslMode::VerifyCa, Some(path.clone()), false).unwrap_err();
            assert!(
                e.contains(says) && e.contains("sslrootcert"),
                "{path:?}: {e}"
            );
        }
    }
}
