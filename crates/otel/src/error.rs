//! What can go wrong, as values the CLI maps to exit codes.

/// An error of OpenTelemetry export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint (flag or variable) is not an `http`/`https` URL. The
    /// text names the setting and the URL without its credentials.
    #[error("{setting}: {reason}")]
    Endpoint {
        /// `--otlp-endpoint` or the variable's name.
        setting: String,
        /// Why, without the URL's password.
        reason: String,
    },
    /// A header (flag or `OTEL_EXPORTER_OTLP_HEADERS`) is not `KEY=VALUE`
    /// with a valid name and value. The value is never shown.
    #[error("{setting}: {reason}")]
    Header {
        /// `--otlp-header` or the variable's name.
        setting: String,
        /// Why, without the value.
        reason: String,
    },
    /// `OTEL_RESOURCE_ATTRIBUTES` is not `key=value,…`.
    #[error("OTEL_RESOURCE_ATTRIBUTES: {0}")]
    Resource(String),
    /// The exporter could not be built.
    #[error("cannot set up the OTLP exporter for {endpoint}: {reason}")]
    Setup {
        /// The endpoint, without credentials.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] agentshape_store::Error),
}
