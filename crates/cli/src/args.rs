//! Command-line definitions (clap derive). Parsing only; no behaviour here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Transcript format.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FormatArg,
    /// Skip (and count) lines longer than this many bytes.
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    pub max_line_bytes: usize,
    /// Transcript files (`-` for stdin).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where the schema comes from.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct SchemaArgs {
    /// JSON Schema file to validate against.
    #[arg(long, value_name = "SCHEMA")]
    pub schema: Option<PathBuf>,
    /// Built-in profile (schema + legacy markers): claude-ops, claude-loop, code-review.
    #[arg(long, value_name = "PROFILE")]
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
    /// Replies or transcripts (`-` or nothing for stdin).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// JSON Schema file.
    #[arg(long, value_name = "SCHEMA")]
    pub schema: PathBuf,
    /// One instance per input line.
    #[arg(long)]
    pub jsonl: bool,
    /// Apply schema-aligned coercions before validating, each reported.
    #[arg(long)]
    pub coerce: bool,
    /// Instance file (`-` or nothing for stdin).
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
    /// Agent outputs: JSON files, replies or transcripts (`-` for stdin).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}
