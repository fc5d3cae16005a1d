//! # agentshape-egress
//!
//! The one policy for every HTTP request agentshape makes (issue 40 §2):
//! the OTLP exporter, alert webhooks, the model providers and `model
//! fetch` all build their client with [`Policy`] and send through
//! [`send`], so a rule changed here changes for all of them.
//!
//! Note \[Outbound policy\]: what every request gets, and why.
//! - **No redirects off the origin.** A 3xx is not followed by default
//!   ([`Redirects::Never`]): a collector or a webhook that answers 307 to
//!   another host would receive the request's credentials (`x-api-key`, a
//!   bearer token) and its body. The 3xx becomes [`Error::Redirect`], which
//!   names the status and the `Location`'s origin only (its path and query
//!   may hold tokens). The providers keep their same-origin hops
//!   ([`Redirects::SameOrigin`], runtime's Note \[Same-origin redirects\]).
//! - **No `Referer`.** reqwest adds one on a followed redirect, holding the
//!   previous URL with its query (an `?apikey=`); it is turned off, and
//!   [`send`] removes any that a caller set.
//! - **Timeouts.** A connect timeout always; a total timeout for requests
//!   with small answers, a read (stall) timeout for downloads, which may
//!   take as long as the link needs ([`Policy::total`], [`Policy::stall`]).
//! - **Bounded bodies.** A response is read through [`Bounded`]: a
//!   `Content-Length` over the caller's limit is refused before reading,
//!   and a body that grows past it is cut at the first chunk over (the
//!   connection is dropped). No caller reads a body whole without a limit.
//! - **One credential.** A URL with user info and an explicit
//!   `Authorization` header would send two `Authorization` headers (reqwest
//!   turns the user info into one); the request is refused instead
//!   ([`Error::TwoCredentials`]), before anything is sent.
//! - **No credentials in messages.** Errors never hold the URL (reqwest's
//!   messages do: they are taken without it); a redirect names an origin
//!   only ([`origin`]).

#![forbid(unsafe_code)]

mod body;
mod error;
mod policy;

pub use body::{Bounded, read_capped};
pub use error::{BodyError, Error, describe};
pub use policy::{Policy, Redirects, origin, send};
