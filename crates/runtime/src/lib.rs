//! # agentshape-runtime
//!
//! Everything at the edges that talks to the world: agent processes, provider
//! HTTP clients, retry and escalation policy, the ops supervisor and the live
//! hub. It depends on `agentshape-core` for every decision about data; the
//! core never depends on this crate.

pub mod alerts;
pub mod error;
pub mod feed;
pub mod forensic;
pub mod hook;
pub mod hub;
pub mod infile;
pub mod ingest;
pub mod loopflow;
pub mod model;
pub mod native;
pub mod ops;
pub mod pages;
pub mod partial;
pub mod pricing;
pub mod process;
pub mod profile;
mod record;
pub mod runner;
pub mod secrets;

pub use error::{Error, Result};
pub mod provider;
pub mod retry;
