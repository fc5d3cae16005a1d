//! The tiered supervisor of seed 000 (`agentshape ops`): observe →
//! investigate → remediate, escalating when an agent asks to.
//!
//! A cycle runs tier 1. When its structured output says
//! `escalation.needed`, the policies are checked in order, max tier, dry
//! run, cooldown, and if all allow it a child session runs at tier + 1 with
//! `parent_id` set and the escalation context appended to its system prompt
//! (Note \[Escalation context\]). Without `--once` cycles repeat every
//! `interval_secs`.
//!
//! Note \[Escalation cooldown\]: each escalation writes one `escalations` row per affected
//! service (in the child session's transaction). Before escalating, the
//! escalations of each affected service within the window (default 4 h) are
//! counted; at `max_escalations_per_service` (default 2) the escalation is
//! blocked. The count and the record of the new escalation are one atomic
//! step in the store (`Store::claim_escalation`, Note \[Escalation claims\]
//! in the store), taken before the child runs, so supervisors sharing a store
//! cannot both pass a check that only one escalation fits in. The affected
//! services are those `services_checked` reports not healthy, else the
//! services of warning and critical events, else the failed checks.
//!
//! Note \[Supervisor leases\]: several `ops` processes (on several machines)
//! may share one store. A supervisor takes a lease (a `leases` row with a
//! holder and an expiry, never a database lock or transaction) for each
//! **cycle**, not for each service: a cycle's tier-1 session checks every
//! service at once and the services at stake are known only when it ends,
//! so there is no per-service unit of work to hand out; per-service
//! exclusivity is what the escalation claims already give, atomically and
//! without holding anything while an agent runs. The lease is named after
//! the config's `environment` (`ops-cycle:<environment>`): replicas of one
//! environment take turns (a supervisor that finds the lease held waits for
//! it, saying so on stderr once), while supervisors of different
//! environments run side by side and share only the per-service claims. The
//! lease lasts `policy.lease_seconds` (default 60), is renewed every third
//! of that by a thread with its own store connection while the cycle's
//! agents run, and is released when the cycle ends (also on errors and
//! interrupts). A supervisor killed with SIGKILL renews nothing: its lease
//! lapses and the next supervisor takes over within `lease_seconds`. Its
//! escalation claims outlive it: a claim whose child session started keeps
//! counting, one whose child never started stops counting after the same
//! `lease_seconds`, so it blocks nobody for long. The holder id is
//! `host:pid:random`. Expiry is judged by the database's clock.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentshape_core::profile::Profile;
use agentshape_core::validate::Validator;
use agentshape_store::{Claim, ClaimRequest, LeaseState, Session, Store, time};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::hub::Hub;
use crate::process::{AgentCommand, ProcessOptions, Source};
use crate::profile::{load_profile, profile_label};
use crate::runner::{
    AgentKind, SessionOutcome, SessionSpec, agent_args, new_session_id, run_session,
};

/// One tier of the supervisor.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    /// Name (`observe`, `investigate`, `remediate`).
    pub name: String,
    /// Model passed as `--model`.
    pub model: String,
    /// Prompt file (relative to the config file), passed as `-p <contents>`.
    pub prompt: PathBuf,
    /// `--allowedTools`.
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`.
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
}

/// The longest duration any setting may ask for: a year, in seconds.
///
/// Note \[Duration limits\]: every duration a user gives (`run --timeout`,
/// `--pace`, `ask --timeout` and its backoffs, `memories prune --older-than`,
/// and the ops config's `interval_secs`, `timeout_secs` and
/// `cooldown_hours`) is at most a year. No agent run, retry wait or cycle
/// needs more, and the bound keeps every conversion (`Duration`, timers,
/// `Instant + Duration`, milliseconds as `i64`) far from overflow, so an
/// out-of-range number is a usage error (exit 64) that names the option,
/// never a panic.
pub const MAX_DURATION_SECS: u64 = 365 * 86_400;

/// The shortest pause between two ops cycles, seconds (Note \[Ops policy rules\]).
pub const MIN_INTERVAL_SECS: u64 = 60;

/// The supervisor's policies.
///
/// Note \[Ops policy rules\]: a policy is checked when the config loads,
/// before the store is opened or any agent starts, and a bad one is refused
/// (exit 64) naming the key:
/// - `max_tier`: 1 to the number of `[[tiers]]`; unset means every tier.
///   Above the tiers defined it would silently mean "all"; 0 would run
///   nothing while looking enabled.
/// - `cooldown_hours`: a finite number, 0 (no cooldown: every cycle may
///   escalate again) up to a year. Negative or `nan` windows used to be read
///   as "no window" and re-escalated every cycle.
/// - `max_escalations_per_service`: at least 1 (use `max_tier = 1` to never
///   escalate).
/// - `timeout_secs`: unset (no timeout) or a finite number above 0, at most
///   a year. `0`, negative and `nan` used to mean "no timeout at all".
/// - `lease_seconds`: 1 s to a day (Note \[Supervisor leases\]): how long
///   a killed supervisor can hold up the others, and how long an unused
///   escalation claim counts.
/// - `interval_secs` (top level): 60 s to a year. A faster loop restarts an
///   agent that fails at once hundreds of times a minute (runaway API spend);
///   for anything else run `--once` from cron or a systemd timer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    /// Highest tier that may run (default: the last tier).
    pub max_tier: Option<u32>,
    /// Cooldown window, hours.
    pub cooldown_hours: f64,
    /// Escalations per service per window.
    pub max_escalations_per_service: u64,
    /// Timeout of each session, seconds.
    pub timeout_secs: Option<f64>,
    /// How long a cycle's lease (and an unused escalation claim) lasts
    /// without renewal, seconds (Note \[Supervisor leases\]).
    pub lease_seconds: u64,
}

/// The longest lease, seconds (a day): a supervisor killed mid-cycle holds
/// the others up at most this long.
pub const MAX_LEASE_SECS: u64 = 86_400;

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_tier: None,
            cooldown_hours: 4.0,
            max_escalations_per_service: 2,
            timeout_secs: None,
            lease_seconds: 60,
        }
    }
}

impl Policy {
    /// The highest tier that may run, given how many tiers are defined.
    pub fn max_tier(&self, tiers: usize) -> u32 {
        let defined = u32::try_from(tiers).unwrap_or(u32::MAX);
        self.max_tier.unwrap_or(defined).min(defined).max(1)
    }

    /// The session timeout, when one is set and in range.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_secs
            .filter(|t| *t > 0.0)
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
    }

    /// Check the rules of Note \[Ops policy rules\] against `tiers` defined tiers.
    ///
    /// # Errors
    /// A message naming the first key that breaks them.
    pub fn check(&self, tiers: usize) -> std::result::Result<(), String> {
        const MAX_SECS: f64 = MAX_DURATION_SECS as f64;
        if let Some(max) = self.max_tier {
            if max == 0 || usize::try_from(max).is_ok_and(|m| m > tiers) {
                return Err(format!(
                    "`policy.max_tier` = {max}: must be between 1 and the number of [[tiers]] ({tiers})"
                ));
            }
        }
        let h = self.cooldown_hours;
        if !(h.is_finite() && (0.0..=MAX_SECS / 3600.0).contains(&h)) {
            return Err(format!(
                "`policy.cooldown_hours` = {h}: must be a number of hours from 0 to {} (a year)",
                MAX_DURATION_SECS / 3600
            ));
        }
        if self.max_escalations_per_service == 0 {
            return Err(
                "`policy.max_escalations_per_service` = 0: must be at least 1 (to never escalate, set `policy.max_tier = 1`)"
                    .into(),
            );
        }
        if !(1..=MAX_LEASE_SECS).contains(&self.lease_seconds) {
            return Err(format!(
                "`policy.lease_seconds` = {}: must be from 1 to {MAX_LEASE_SECS} seconds (a day)",
                self.lease_seconds
            ));
        }
        if let Some(t) = self.timeout_secs {
            if !(t.is_finite() && t > 0.0 && t <= MAX_SECS) {
                return Err(format!(
                    "`policy.timeout_secs` = {t}: must be a number of seconds above 0, at most {MAX_DURATION_SECS} (a year); leave it out for no timeout"
                ));
            }
        }
        Ok(())
    }
}

/// The `ops.toml` configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpsConfig {
    /// Seconds between cycles.
    #[serde(default = "default_interval")]
    pub interval_secs: u64,
    /// The agent program and fixed arguments, as the file gives them.
    #[serde(default, rename = "command")]
    command_given: Option<Vec<String>>,
    /// The agent program and fixed arguments: the file's, else `claude`, or
    /// for `agent = "local"` this agentshape binary (Note \[Local tiers\]).
    #[serde(skip)]
    pub command: Vec<String>,
    /// Agent kind (`claude`, `codex`, `raw`, `local`).
    #[serde(default = "default_agent")]
    pub agent: String,
    /// Profile: a built-in name or a profile file, relative to this config's
    /// folder (Note \[Profile names and paths\] in `profile`).
    #[serde(default = "default_profile")]
    pub profile: String,
    /// The store: a SQLite path or a `postgres://` URL (`ops --store`
    /// overrides it; without either, `AGENTSHAPE_STORE`, else `agentshape.db`).
    #[serde(default)]
    pub store: Option<String>,
    /// Forensic logs.
    #[serde(default = "default_logs")]
    pub log_dir: PathBuf,
    /// Where a legacy agent writes `handoff.json`.
    #[serde(default)]
    pub state_dir: Option<PathBuf>,
    /// `Environment: ...` line appended to every tier's system prompt.
    #[serde(default)]
    pub environment: Option<String>,
    /// agentshape's own variables (`AGENTSHAPE_*`) every tier's agent may
    /// inherit, beside the profile's `pass_env` (Note \[Agents get no
    /// credentials of ours\] in `process`).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Policies.
    #[serde(default)]
    pub policy: Policy,
    /// Tiers, 1 first.
    pub tiers: Vec<TierConfig>,
    /// The directory of the config file (prompt paths are relative to it).
    #[serde(skip)]
    pub base: PathBuf,
}

/// What a tier's agent may inherit of agentshape's own variables (Note
/// \[Agents get no credentials of ours\] in `process`): the config's and the
/// profile's `pass_env`, and for a local tier (agentshape itself, Note
/// \[Local tiers\]) where its models are.
fn tier_pass_env(cfg: &OpsConfig, profile: &Profile, kind: AgentKind) -> Vec<String> {
    let mut pass: Vec<String> = cfg.pass_env.clone();
    let local = (kind == AgentKind::Local).then(|| "AGENTSHAPE_MODEL_DIR".to_owned());
    for n in profile.pass_env.iter().cloned().chain(local) {
        if !pass.contains(&n) {
            pass.push(n);
        }
    }
    pass
}

fn default_interval() -> u64 {
    3600
}
fn default_agent() -> String {
    "claude".to_owned()
}
fn default_profile() -> String {
    "claude-ops".to_owned()
}
fn default_logs() -> PathBuf {
    PathBuf::from("logs")
}

impl OpsConfig {
    /// Load and check a config file.
    ///
    /// # Errors
    /// [`Error::Input`] for a config that is missing or not a regular file
    /// of at most 16 MiB, [`Error::Config`] for malformed or inconsistent ones.
    pub fn load(path: &Path) -> Result<Self> {
        let bad = |message: String| Error::Config {
            path: path.display().to_string(),
            message,
        };
        // Note [Regular files only] in `infile`: a FIFO, a folder or a
        // device is refused by name, never waited on or read forever.
        let text = crate::infile::read_to_string(path, crate::infile::MAX_CONFIG_BYTES)
            .map_err(Error::input("config"))?;
        let mut cfg: OpsConfig = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        cfg.base = path.parent().map(Path::to_owned).unwrap_or_default();
        if cfg.tiers.is_empty() {
            return Err(bad("at least one [[tiers]] entry is needed".into()));
        }
        if !(MIN_INTERVAL_SECS..=MAX_DURATION_SECS).contains(&cfg.interval_secs) {
            return Err(bad(format!(
                "`interval_secs` = {}: must be from {MIN_INTERVAL_SECS} to {MAX_DURATION_SECS} seconds (for one cycle at a time, use --once)",
                cfg.interval_secs
            )));
        }
        cfg.policy.check(cfg.tiers.len()).map_err(bad)?;
        agentshape_core::profile::check_pass_env(&cfg.pass_env)
            .map_err(|m| bad(format!("`pass_env`: {m}")))?;
        let Some(kind) = AgentKind::from_name(&cfg.agent).filter(|k| *k != AgentKind::Replay)
        else {
            return Err(bad(format!(
                "agent `{}`: expected claude, codex, raw or local",
                cfg.agent
            )));
        };
        if kind == AgentKind::Local && !cfg!(feature = "local") {
            return Err(bad(
                "agent `local` needs the local engine, which this build does not have (built without the `local` feature)".into(),
            ));
        }
        cfg.command = match cfg.command_given.clone() {
            Some(c) if c.is_empty() => return Err(bad("`command` is empty".into())),
            Some(c) => c,
            None if kind == AgentKind::Local => {
                let exe = std::env::current_exe().map_err(|e| {
                    bad(format!(
                        "agent `local`: cannot find this program to run tiers with ({e}); set `command`"
                    ))
                })?;
                vec![exe.display().to_string()]
            }
            None => vec!["claude".to_owned()],
        };
        load_profile(&cfg.profile, &cfg.base).map_err(|e| bad(e.to_string()))?;
        for t in &cfg.tiers {
            // An early check that names the problem; reading the prompt
            // checks again on the opened file (Note [Regular files only]).
            let p = cfg.base.join(&t.prompt);
            match std::fs::metadata(&p) {
                Ok(m) if m.is_file() => {}
                Ok(m) => {
                    return Err(bad(format!(
                        "tier `{}`: prompt `{}` is {}, not a regular file",
                        t.name,
                        p.display(),
                        crate::infile::describe(m.file_type())
                    )));
                }
                Err(_) => {
                    return Err(bad(format!(
                        "tier `{}`: prompt `{}` not found",
                        t.name,
                        p.display()
                    )));
                }
            }
        }
        Ok(cfg)
    }
}

/// What the supervisor reports as it goes.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OpsReport<'a> {
    /// A session finished.
    Session {
        /// The session.
        #[serde(skip)]
        outcome: &'a SessionOutcome,
        /// Its id.
        id: &'a str,
        /// Parent.
        parent_id: Option<&'a str>,
        /// Tier.
        tier: u32,
        /// Status.
        status: &'a str,
        /// Extraction method.
        extraction_method: Option<&'a str>,
        /// Summary.
        summary: Option<&'a str>,
    },
    /// An escalation decision.
    Decision {
        /// The session that asked.
        session_id: &'a str,
        /// Its tier.
        tier: u32,
        /// Whether the next tier runs.
        escalate: bool,
        /// `escalate`, `max_tier`, `dry_run` or `cooldown`.
        decision: &'a str,
        /// The affected services.
        services: &'a [String],
        /// Why.
        detail: String,
    },
    /// The cycle's lease is held by another supervisor: this one waits
    /// (reported once per holder; Note \[Supervisor leases\]).
    LeaseBusy {
        /// The lease.
        name: &'a str,
        /// Who holds it.
        holder: &'a str,
        /// When it lapses unless renewed (the database's clock).
        expires_at: &'a str,
    },
}

/// The escalation context for the next tier.
///
/// Note \[Escalation context\]: seed 000's mapping, one line each, in order,
/// only for what is present: `Escalation reason: ...`, `Investigation
/// findings: ...`, `Failed checks: a, b`, `Service status: name: status
/// (detail); ...`.
pub fn escalation_context(escalation: &Value, record: &Session) -> String {
    let mut lines = Vec::new();
    if let Some(r) = escalation.get("reason").and_then(Value::as_str) {
        lines.push(format!("Escalation reason: {r}"));
    }
    if let Some(c) = escalation.get("context").and_then(Value::as_str) {
        lines.push(format!("Investigation findings: {c}"));
    }
    let failed: Vec<&str> = escalation
        .get("failed_checks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !failed.is_empty() {
        lines.push(format!("Failed checks: {}", failed.join(", ")));
    }
    if !record.services.is_empty() {
        let status: Vec<String> = record
            .services
            .iter()
            .map(|s| match &s.detail {
                Some(d) => format!("{}: {} ({d})", s.name, s.status),
                None => format!("{}: {}", s.name, s.status),
            })
            .collect();
        lines.push(format!("Service status: {}", status.join("; ")));
    }
    lines.join("\n")
}

/// The services an escalation is for (Note \[Escalation cooldown\]).
pub fn affected_services(escalation: &Value, record: &Session) -> Vec<String> {
    let mut out: Vec<String> = record
        .services
        .iter()
        .filter(|s| s.status != "healthy")
        .map(|s| s.name.clone())
        .collect();
    if out.is_empty() {
        out = record
            .events
            .iter()
            .filter(|e| e.level != "info")
            .filter_map(|e| e.service.clone())
            .collect();
    }
    if out.is_empty() {
        out = escalation
            .get("failed_checks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    out.sort();
    out.dedup();
    out
}

/// A supervisor's identity in leases and claims: `host:pid:random`, so two
/// processes never share one, even with the same pid on two machines.
pub fn holder_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}:{}:{:08x}", std::process::id(), fastrand::u32(..))
}

/// The name of the cycle lease for a config (Note \[Supervisor leases\]).
pub fn lease_name(config: &OpsConfig) -> String {
    format!("ops-cycle:{}", config.environment.as_deref().unwrap_or(""))
}

/// Opens another handle on the supervisor's store (the lease is renewed
/// through it while the cycle's own handle runs sessions).
pub type OpenStore = dyn Fn() -> agentshape_store::Result<Box<dyn Store>> + Send + Sync;

/// How a supervisor takes its cycle lease (Note \[Supervisor leases\]).
pub struct CycleLease {
    /// The lease name ([`lease_name`]).
    pub name: String,
    /// This supervisor ([`holder_id`]).
    pub holder: String,
    /// A second store handle for renewing.
    pub open: Box<OpenStore>,
}

/// A held lease, renewed by a thread until dropped; dropping it stops the
/// thread, which releases the lease.
struct HeldLease {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HeldLease {
    fn start(mut store: Box<dyn Store>, name: String, holder: String, ttl: Duration) -> Self {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let thread = std::thread::Builder::new()
            .name("agentshape-ops-lease".to_owned())
            .spawn(move || {
                let mut lost = false;
                // Renew every third of the lease: two renewals may fail (a
                // busy or restarting store) before it lapses.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(ttl / 3)
                {
                    if lost {
                        continue;
                    }
                    if let Ok(LeaseState::Busy { .. }) = store.acquire_lease(&name, &holder, ttl_ms)
                    {
                        // Taken over after it lapsed: the escalation claims
                        // still hold the policies; stop renewing.
                        lost = true;
                    }
                }
                let _ = store.release_lease(&name, &holder);
            })
            .ok();
        HeldLease {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The supervisor.
pub struct Supervisor<'a> {
    /// Configuration.
    pub config: &'a OpsConfig,
    /// Log decisions without escalating.
    pub dry_run: bool,
    /// The live hub.
    pub hub: &'a Hub,
    /// How agents are run (grace periods, the interrupts to honour).
    pub process: ProcessOptions,
    /// Heartbeat and live-feed intervals (Note \[Live feed\] in `feed`).
    pub feed: crate::feed::FeedOptions,
    /// The cycle lease; `None` runs cycles without one (a store no other
    /// supervisor shares).
    pub lease: Option<CycleLease>,
}

impl Supervisor<'_> {
    /// Note \[Local tiers\]: an `agent = "local"` tier runs `agentshape ask
    /// --provider local` (this binary, unless `command` says otherwise) as its
    /// agent process, the prompt on stdin, the profile's schema in a file
    /// beside the session's forensic log (`<id>.schema.json`, kept: it is
    /// part of what the agent was given). A child process rather than the
    /// engine in-process, so a local tier gets what every tier gets: the
    /// timeout and interrupts kill it, its stdout is the forensic log, and
    /// the supervisor stays responsive while the model samples. Its stdout
    /// is the value `ask` printed, read as plain text (bare JSON).
    fn write_tier_schema(&self, id: &str, schema: &Value) -> Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt as _;
        let dir = &self.config.log_dir;
        let io = |context: String| move |source| Error::Io { context, source };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(format!("creating log dir `{}`", dir.display())))?;
        let path = dir.join(format!("{id}.schema.json"));
        std::fs::write(&path, schema.to_string())
            .map_err(io(format!("writing `{}`", path.display())))?;
        Ok(path)
    }

    fn tier_spec<'v>(
        &self,
        id: String,
        tier: u32,
        validator: &'v Validator,
        profile: &'v Profile,
        context: Option<&str>,
    ) -> Result<SessionSpec<'v>> {
        let cfg = self.config;
        let t = &cfg.tiers[usize::try_from(tier - 1).unwrap_or(0)];
        let prompt_path = cfg.base.join(&t.prompt);
        let prompt = crate::infile::read_to_string(&prompt_path, crate::infile::MAX_CONFIG_BYTES)
            .map_err(Error::input("prompt"))?;
        let kind = AgentKind::from_name(&cfg.agent).unwrap_or(AgentKind::Claude);
        let mut system = Vec::new();
        if let Some(env) = &cfg.environment {
            system.push(format!("Environment: {env}"));
        }
        if let Some(c) = context.filter(|c| !c.is_empty()) {
            system.push(c.to_owned());
        }
        let system = (!system.is_empty()).then(|| system.join("\n\n"));
        let mut args: Vec<String> = cfg.command[1..].to_vec();
        let mut stdin = None;
        if kind == AgentKind::Local {
            let schema = self.write_tier_schema(&id, validator.schema())?;
            args.extend(
                [
                    "ask",
                    "--provider",
                    "local",
                    "--model",
                    &t.model,
                    "--schema",
                ]
                .map(str::to_owned),
            );
            args.push(schema.display().to_string());
            if let Some(system) = system {
                args.extend(["--system".to_owned(), system]);
            }
            args.push("-".to_owned());
            stdin = Some(prompt);
        } else {
            args.extend(["--model".to_owned(), t.model.clone(), "-p".to_owned()]);
            // Note [Prompt on stdin] in `provider::claude_code`: `claude -p`
            // reads the prompt from stdin, which has no 128 KiB cap; other
            // agents get it as `-p`'s argument, as before.
            if kind == AgentKind::Claude {
                stdin = Some(prompt);
            } else {
                args.push(prompt);
            }
            if !t.allowed_tools.is_empty() {
                args.extend(["--allowedTools".to_owned(), t.allowed_tools.join(",")]);
            }
            if !t.disallowed_tools.is_empty() {
                args.extend(["--disallowedTools".to_owned(), t.disallowed_tools.join(",")]);
            }
            if let Some(system) = system {
                args.extend(["--append-system-prompt".to_owned(), system]);
            }
        }
        Ok(SessionSpec {
            id,
            parent_id: None,
            tier,
            profile: Some(profile_label(&cfg.profile, &cfg.base)),
            validator: Some(validator),
            markers: profile.grammar(),
            methods: profile.methods,
            coerce: profile.coerce,
            agent: kind,
            model: Some(t.model.clone()),
            source: Source::Spawn(AgentCommand {
                program: cfg.command[0].clone(),
                args: agent_args(kind, &args, Some(validator.schema()), false),
                env: Vec::new(),
                pass_env: tier_pass_env(cfg, profile, kind),
                stdin,
            }),
            log_dir: cfg.log_dir.clone(),
            timeout: cfg.policy.timeout(),
            partial: false,
            handoff: cfg
                .state_dir
                .as_ref()
                .map(|d| profile.handoff.iter().map(|h| d.join(h)).collect())
                .unwrap_or_default(),
            escalated_for: Vec::new(),
            process: self.process.clone(),
            feed: self.feed.clone(),
        })
    }

    /// Take the cycle lease, waiting while another supervisor holds it
    /// (Note \[Supervisor leases\]); `None` when interrupted while waiting.
    async fn take_lease(
        &self,
        lease: &CycleLease,
        store: &mut dyn Store,
        report: &mut dyn FnMut(&OpsReport<'_>),
    ) -> Result<Option<HeldLease>> {
        let ttl = Duration::from_secs(self.config.policy.lease_seconds);
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        // Polled: a released lease is seen within a tenth of its length (at
        // most a second), a lapsed one when it lapses.
        let poll = (ttl / 10).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let mut interrupts = self.process.interrupts.clone();
        let mut told: Option<String> = None;
        loop {
            if interrupts.as_ref().is_some_and(|i| i.first().is_some()) {
                return Ok(None);
            }
            match store.acquire_lease(&lease.name, &lease.holder, ttl_ms)? {
                LeaseState::Held { .. } => break,
                LeaseState::Busy { holder, expires_at } => {
                    if told.as_deref() != Some(holder.as_str()) {
                        report(&OpsReport::LeaseBusy {
                            name: &lease.name,
                            holder: &holder,
                            expires_at: &expires_at,
                        });
                        told = Some(holder);
                    }
                }
            }
            match interrupts.as_mut() {
                Some(i) => {
                    tokio::select! {
                        () = tokio::time::sleep(poll) => {}
                        _ = i.recv() => return Ok(None),
                    }
                }
                None => tokio::time::sleep(poll).await,
            }
        }
        match (lease.open)() {
            Ok(renewer) => Ok(Some(HeldLease::start(
                renewer,
                lease.name.clone(),
                lease.holder.clone(),
                ttl,
            ))),
            Err(e) => {
                let _ = store.release_lease(&lease.name, &lease.holder);
                Err(e.into())
            }
        }
    }

    /// Run one cycle: tier 1 and every escalation the policies allow.
    /// Returns the sessions run, in order (none when interrupted while
    /// waiting for the cycle lease).
    ///
    /// # Errors
    /// Forensic log, spawn or store failures.
    pub async fn cycle(
        &self,
        store: &mut dyn Store,
        report: &mut dyn FnMut(&OpsReport<'_>),
    ) -> Result<Vec<SessionOutcome>> {
        let _held = match &self.lease {
            Some(lease) => match self.take_lease(lease, store, report).await? {
                Some(held) => Some(held),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let holder = self
            .lease
            .as_ref()
            .map_or_else(holder_id, |l| l.holder.clone());
        let cfg = self.config;
        let profile = load_profile(&cfg.profile, &cfg.base)?;
        let validator = Validator::new(&profile.schema)?;
        let max_tier = cfg.policy.max_tier(cfg.tiers.len());
        let mut sessions = Vec::new();
        let mut tier = 1u32;
        let mut spec = self.tier_spec(new_session_id(), tier, &validator, &profile, None)?;
        loop {
            let mut outcome = run_session(&spec, Some(store), self.hub).await?;
            // Not stored: stop here rather than escalate from a lost session.
            let store_error = outcome.store_error.take();
            let r = &outcome.record;
            report(&OpsReport::Session {
                outcome: &outcome,
                id: &r.id,
                parent_id: r.parent_id.as_deref(),
                tier,
                status: r.status.as_str(),
                extraction_method: r.extraction_method.as_deref(),
                summary: r.summary.as_deref(),
            });
            if let Some(e) = store_error {
                return Err(*e);
            }
            // The value the `escalation` column was written from (the
            // runner's `build_record`), not that column's text parsed back.
            let escalation = r
                .output
                .as_ref()
                .and_then(|v| v.get("escalation"))
                .unwrap_or(&Value::Null);
            let needed =
                r.status == "completed" && escalation.get("needed") == Some(&Value::Bool(true));
            if !needed {
                sessions.push(outcome);
                break;
            }
            let services = affected_services(escalation, r);
            let decide =
                |escalate: bool, decision: &'static str, detail: String| OpsReport::Decision {
                    session_id: &r.id,
                    tier,
                    escalate,
                    decision,
                    services: &services,
                    detail,
                };
            let at_max = || {
                decide(
                    false,
                    "max_tier",
                    format!("tier {tier} is the highest allowed ({max_tier})"),
                )
            };
            if tier >= max_tier {
                report(&at_max());
                sessions.push(outcome);
                break;
            }
            if self.dry_run {
                report(&decide(
                    false,
                    "dry_run",
                    format!("would escalate to tier {}", tier + 1),
                ));
                sessions.push(outcome);
                break;
            }
            // Hours to whole milliseconds; a window longer than ~290 million years saturates.
            #[allow(clippy::cast_possible_truncation)]
            let window_ms = (cfg.policy.cooldown_hours.max(0.0) * 3_600_000.0) as i64;
            let now_ms = time::now_ms();
            let lease_ms =
                i64::try_from(cfg.policy.lease_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
            let child_id = new_session_id();
            let request = ClaimRequest {
                parent_id: r.id.clone(),
                child_id: child_id.clone(),
                tier: tier + 1,
                max_tier,
                services: services.clone(),
                since: time::format_ms(now_ms.saturating_sub(window_ms)),
                max_per_window: cfg.policy.max_escalations_per_service,
                holder: holder.clone(),
                now: time::format_ms(now_ms),
                expires_at: time::format_ms(now_ms.saturating_add(lease_ms)),
            };
            match store.claim_escalation(&request)? {
                Claim::Granted => {}
                Claim::MaxTier => {
                    report(&at_max());
                    sessions.push(outcome);
                    break;
                }
                Claim::Cooldown { service, count } => {
                    report(&decide(
                        false,
                        "cooldown",
                        format!(
                            "`{service}` was escalated {count} times in the last {} h (max {})",
                            cfg.policy.cooldown_hours, cfg.policy.max_escalations_per_service
                        ),
                    ));
                    sessions.push(outcome);
                    break;
                }
            }
            report(&decide(
                true,
                "escalate",
                format!("tier {} with parent {}", tier + 1, r.id),
            ));
            let context = escalation_context(escalation, r);
            let parent = r.id.clone();
            sessions.push(outcome);
            tier += 1;
            spec = self.tier_spec(child_id, tier, &validator, &profile, Some(&context))?;
            spec.parent_id = Some(parent);
            spec.escalated_for = services;
        }
        Ok(sessions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `profile` in `ops.toml` is a built-in name or a file relative to the
    /// config's folder; a bad profile file is a config error naming its key.
    #[test]
    fn the_profile_is_a_name_or_a_file_beside_the_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t1.md"), "check").unwrap();
        std::fs::create_dir_all(dir.path().join("p")).unwrap();
        std::fs::write(
            dir.path().join("p/mine.toml"),
            "schema = '{\"type\": \"object\"}'\nhandoff = [\"state.json\"]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("p/bad.toml"), "schema = 1\n").unwrap();
        let config = |profile: &str| {
            let path = dir.path().join("ops.toml");
            std::fs::write(
                &path,
                format!("profile = \"{profile}\"\n[[tiers]]\nname = \"t1\"\nmodel = \"m\"\nprompt = \"t1.md\"\n"),
            )
            .unwrap();
            OpsConfig::load(&path)
        };
        assert!(config("claude-ops").is_ok());
        let cfg = config("p/mine.toml").unwrap();
        let profile = load_profile(&cfg.profile, &cfg.base).unwrap();
        assert_eq!(profile.handoff, vec!["state.json"]);
        let err = config("p/bad.toml").unwrap_err().to_string();
        assert!(
            err.contains("bad.toml") && err.contains("`schema`"),
            "{err}"
        );
        let err = config("p/none.toml").unwrap_err().to_string();
        assert!(
            err.contains("profile `") && err.contains("none.toml"),
            "{err}"
        );
    }

    #[test]
    fn impossible_policies_name_their_key() {
        let base = Policy::default();
        let cases: Vec<(Policy, &str)> = vec![
            (
                Policy {
                    max_tier: Some(0),
                    ..base.clone()
                },
                "max_tier",
            ),
            (
                Policy {
                    max_tier: Some(4),
                    ..base.clone()
                },
                "max_tier",
            ),
            (
                Policy {
                    cooldown_hours: -4.0,
                    ..base.clone()
                },
                "cooldown_hours",
            ),
            (
                Policy {
                    cooldown_hours: f64::NAN,
                    ..base.clone()
                },
                "cooldown_hours",
            ),
            (
                Policy {
                    cooldown_hours: 1e300,
                    ..base.clone()
                },
                "cooldown_hours",
            ),
            (
                Policy {
                    max_escalations_per_service: 0,
                    ..base.clone()
                },
                "max_escalations_per_service",
            ),
            (
                Policy {
                    timeout_secs: Some(0.0),
                    ..base.clone()
                },
                "timeout_secs",
            ),
            (
                Policy {
                    lease_seconds: 0,
                    ..base.clone()
                },
                "lease_seconds",
            ),
            (
                Policy {
                    lease_seconds: MAX_LEASE_SECS + 1,
                    ..base.clone()
                },
                "lease_seconds",
            ),
            (
                Policy {
                    timeout_secs: Some(-1.0),
                    ..base.clone()
                },
                "timeout_secs",
            ),
            (
                Policy {
                    timeout_secs: Some(f64::NAN),
                    ..base.clone()
                },
                "timeout_secs",
            ),
            (
                Policy {
                    timeout_secs: Some(1e300),
                    ..base.clone()
                },
                "timeout_secs",
            ),
        ];
        for (policy, key) in cases {
            let err = policy.check(3).expect_err(key);
            assert!(err.contains(&format!("`policy.{key}`")), "{err}");
        }
    }

    #[test]
    fn sane_policies_pass_and_max_tier_defaults_to_the_tiers() {
        let p = Policy {
            cooldown_hours: 0.0,
            timeout_secs: Some(0.5),
            ..Policy::default()
        };
        assert_eq!(p.check(1), Ok(()));
        assert_eq!(p.max_tier(1), 1);
        assert_eq!(Policy::default().max_tier(3), 3);
        assert_eq!(p.timeout(), Some(Duration::from_millis(500)));
        let top = Policy {
            max_tier: Some(2),
            lease_seconds: MAX_LEASE_SECS,
            timeout_secs: Some(MAX_DURATION_SECS as f64),
            ..Policy::default()
        };
        assert_eq!(top.check(3), Ok(()));
        assert_eq!(top.max_tier(3), 2);
    }
}
