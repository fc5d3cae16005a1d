//! CLI tests: the `agentshape` binary run as a user runs it, exit codes and
//! output shapes checked against DESIGN.md. One integration binary for the crate.

// In tests a failed unwrap is a failed test, with its message.
#![allow(clippy::unwrap_used, clippy::panic, clippy::missing_panics_doc)]
// Tests read better with `use` next to their first use, short similar names and inline string building.
#![allow(
    clippy::items_after_statements,
    clippy::similar_names,
    clippy::format_collect
)]

mod agent_env;
mod alerts;
mod ask;
mod ask_claude;
mod browser;
mod builder;
mod check;
mod cli_safety;
mod command_snapshots;
mod core_safety;
mod exit_cleanup;
mod exit_codes;
mod export;
mod extract;
mod feed;
mod flows;
mod hook;
mod hook_install;
mod hostile_cel;
mod huge_pages;
mod limits;
mod lint;
mod lists;
#[cfg(feature = "local")]
mod local;
mod model;
mod native_import;
mod native_parse;
mod ops;
mod ops_scale;
mod otel;
mod parse;
mod playground;
mod process_safety;
mod profiles;
mod provider_safety;
mod run;
mod secrets_doors;
mod serve;
mod serve_auth;
mod serve_hostile;
mod serve_pg;
mod serve_robust;
mod session_page;
mod sessions;
mod several_values;
mod silent_changes;
mod special_files;
mod stats;
mod store_load;
mod store_outage;
mod store_pg;
mod store_safety;
mod store_tls;
mod support;
mod usage;
mod validate;
