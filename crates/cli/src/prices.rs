//! The price table the commands that price use (`import`, `usage`, and
//! the spans of a live export).

use crate::exit::CliError;

/// The built-in prices with the user's file (66 when the file named by
/// `AGENTSHAPE_PRICES` is missing, 64 when it is not a price table).
///
/// # Errors
/// As said.
pub fn load_prices() -> Result<agentshape_core::pricing::PriceTable, CliError> {
    agentshape_runtime::pricing::load(None).map_err(|e| match e {
        agentshape_runtime::Error::Input { what, source } => CliError::NoInput {
            path: what.to_owned(),
            source: source.into_io(),
        },
        e => CliError::Usage(e.to_string()),
    })
}
