//! The run summary: what one agent run said and how it ended.
//!
//! Built by folding decoded [`Event`]s through a
//! [`SummaryBuilder`]; its JSON form is DESIGN.md's "Run summary", plus line
//! counters and per-tool counts that batch users and benchmarks need. The
//! summary's types are facts every stage shares, so they live in
//! [`crate::facts`] (Note [Facts below stages]) and are re-exported here.

mod native;

use serde_json::Value;

pub use crate::facts::{
    ApiErrorInfo, ErrorCategory, ResultInfo, RunSummary, SessionInfo, SubAgentInfo, TokenCounts,
    Usage,
};

use crate::classify::{self, NO_DETAIL};
use crate::event::{Event, ResultEvent, SkipReason};
use crate::facts::Format;

/// The warning for a Claude stream without a `result` line (seed 004).
pub const NO_RESULT_WARNING: &str =
    "stream-json ended without a 'result' message; token usage unavailable";

/// The warning for a Codex stream without a completed turn.
pub const NO_TURN_WARNING: &str =
    "codex stream ended without a 'turn.completed' message; token usage unavailable";

/// The error text of an `is_error` result (Note [Error text of an error result]).
///
/// Note [Error text of an error result]: an error result never ends with an
/// empty `error`. Seed 004 uses the `result` string, and "API error (no
/// detail)" without one; but some results leave `result` empty and put the
/// message elsewhere. The text is the first of these that says something
/// (blank strings say nothing):
///
/// 1. the `result` string, followed by the result's own `error` field
///    (` · `-joined) when that differs: a rate-limit message in `error`
///    must not be hidden behind a generic `result`;
/// 2. the `error` field alone;
/// 3. the 2.1.x `errors` list, joined with `; `;
/// 4. the `permission_denials`: `permission denied: Bash (rm -rf x), Write (f)`;
/// 5. an `error_*` subtype, with what it means when known:
///    `error_max_turns: the maximum number of turns was reached (no detail)`;
/// 6. "API error (no detail)".
///
/// The category then comes from this text's keywords (seed 004), else from
/// the HTTP status of the API error (`api_error_status` 429 → `rate_limit`,
/// 401/403 → `auth`), else from the subtype, else `api`.
fn error_text(info: &ResultInfo) -> String {
    let result = said(info.text.as_deref());
    let error = said(info.error.as_deref());
    match (result, error) {
        (Some(r), Some(e)) if r != e => return format!("{r} · {e}"),
        (Some(t), _) | (None, Some(t)) => return t.to_owned(),
        (None, None) => {}
    }
    let errors: Vec<&str> = info
        .errors
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect();
    if !errors.is_empty() {
        return errors.join("; ");
    }
    if !info.permission_denials.is_empty() {
        return format!("permission denied: {}", info.permission_denials.join(", "));
    }
    if let Some(subtype) = info
        .subtype
        .as_deref()
        .map(str::trim)
        .filter(|s| s.starts_with("error_"))
    {
        return match subtype_meaning(subtype) {
            Some(m) => format!("{subtype}: {m} (no detail)"),
            None => format!("{subtype} (no detail)"),
        };
    }
    NO_DETAIL.to_owned()
}

/// The trimmed text, unless it is blank (blank text says nothing).
fn said(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// What a Claude error subtype means, in words.
fn subtype_meaning(subtype: &str) -> Option<&'static str> {
    match subtype {
        "error_max_turns" => Some("the maximum number of turns was reached"),
        "error_max_budget_usd" => Some("the maximum budget was reached"),
        "error_max_structured_output_retries" => {
            Some("no schema-valid structured output within the allowed retries")
        }
        "error_during_execution" => Some("an error occurred during execution"),
        _ => None,
    }
}

/// The category an API error's HTTP status implies (`429`, `401`, `403`;
/// a number or a numeric string).
fn status_category(status: Option<&Value>) -> Option<ErrorCategory> {
    let code = match status? {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    match code {
        429 => Some(ErrorCategory::RateLimit),
        401 | 403 => Some(ErrorCategory::Auth),
        _ => None,
    }
}

/// Folds decoded [`Event`]s into a [`RunSummary`].
///
/// Push every event of one run in order, then call [`SummaryBuilder::finish`]
/// with the decoded format. The rules are seed 004's (see the Notes below
/// and in [`crate::decode`]):
///
/// - assistant text blocks are joined with `\n` into `output`;
/// - the last result wins for `result`, tokens and `structured_output`, but
///   a later non-error result does not clear an earlier error (a later error
///   replaces it);
/// - the first `Init` wins for session id, model, `apiKeySource` and cwd;
/// - heuristics run at the end, for Claude runs only.
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    summary: RunSummary,
    seen_init: bool,
    /// The final top-level assistant message, for the interactive-hang test.
    final_id: Option<String>,
    final_text: String,
    final_stop_reason: Option<String>,
    final_asks: bool,
    top_messages: u64,
    /// Whether the blocks being pushed belong to a top-level message.
    in_top_level: bool,
    background_launches: u64,
    /// Native session files: started by the first [`Event::Line`].
    native: Option<Box<native::NativeState>>,
}

impl SummaryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        SummaryBuilder {
            in_top_level: true,
            ..SummaryBuilder::default()
        }
    }

    /// Fold one event.
    pub fn push(&mut self, event: Event) {
        if self.native.is_none() && matches!(event, Event::Line(_)) {
            self.native = Some(Box::default());
        }
        if let Some(native) = self.native.as_mut() {
            native.push(&event);
        }
        match event {
            Event::Init {
                session_id,
                model,
                api_key_source,
                cwd,
            } => {
                // Seed 004 (DEC-015): the first init wins; later ones are ignored.
                if !self.seen_init {
                    self.seen_init = true;
                    let s = &mut self.summary;
                    s.session_id = session_id.or(s.session_id.take());
                    s.model = model.or(s.model.take());
                    s.api_key_source = api_key_source;
                    s.cwd = cwd;
                }
            }
            Event::Message {
                id,
                stop_reason,
                parent_tool_use_id,
            } => self.message(id, stop_reason, parent_tool_use_id.is_none()),
            Event::Text { text } => {
                if self.summary.text_chunks > 0 {
                    self.summary.output.push('\n');
                }
                self.summary.output.push_str(&text);
                self.summary.text_chunks += 1;
                if self.in_top_level {
                    if !self.final_text.is_empty() {
                        self.final_text.push('\n');
                    }
                    self.final_text.push_str(&text);
                }
            }
            Event::ToolUse { name, input, .. } => {
                self.summary.tool_uses += 1;
                match name.as_str() {
                    "StructuredOutput" => {
                        // Note [Big numbers] (`crate::json`): listed, not changed silently.
                        let (value, inexact) = match crate::json::parse(input.get()) {
                            Ok(p) => (p.value, p.inexact),
                            Err(_) => (input.to_value(), Vec::new()),
                        };
                        self.summary.structured_tool_input = Some(value);
                        self.summary.structured_tool_inexact = inexact;
                    }
                    // Seed 004: only `run_in_background` strictly `true` counts.
                    "Task" => {
                        let value = input.to_value();
                        if value.get("run_in_background") == Some(&Value::Bool(true)) {
                            self.background_launches += 1;
                        }
                    }
                    "AskUserQuestion" if self.in_top_level => self.final_asks = true,
                    _ => {}
                }
                *self.summary.tool_use_counts.entry(name).or_insert(0) += 1;
            }
            Event::Result(result) => self.result(*result),
            Event::Skipped { reason, .. } => {
                self.summary.skipped_lines += u64::from(reason != SkipReason::Blank);
                match reason {
                    SkipReason::Blank => self.summary.blank_lines += 1,
                    SkipReason::Malformed => self.summary.malformed_lines += 1,
                    SkipReason::NonObject => self.summary.non_object_lines += 1,
                    SkipReason::TooLong => self.summary.too_long_lines += 1,
                }
            }
            Event::Warning { message } => self.summary.warnings.push(message),
            Event::ReplacedText { sequences } => self.summary.replaced_text += sequences,
            Event::End { lines, objects } => {
                self.summary.lines = lines;
                self.summary.events = objects;
            }
            Event::Thinking { .. }
            | Event::ToolResult { .. }
            | Event::Partial { .. }
            | Event::Other { .. }
            | Event::Line(_)
            | Event::UserText { .. }
            | Event::Usage { .. }
            | Event::Compaction { .. }
            | Event::CompactSummary { .. }
            | Event::ApiError { .. }
            | Event::SubAgent { .. }
            | Event::ToolError { .. }
            | Event::Glued { .. } => {}
        }
    }

    fn message(&mut self, id: Option<String>, stop_reason: Option<String>, top_level: bool) {
        self.in_top_level = top_level;
        if !top_level {
            return;
        }
        // Lines sharing a message id continue one message.
        let same = id.is_some() && id == self.final_id;
        if !same {
            self.top_messages += 1;
            self.final_id = id;
            self.final_text.clear();
            self.final_asks = false;
            self.final_stop_reason = None;
        }
        if stop_reason.is_some() {
            self.final_stop_reason = stop_reason;
        }
    }

    fn result(&mut self, result: ResultEvent) {
        let s = &mut self.summary;
        s.saw_result = true;
        let info = result.info;
        if info.is_error {
            let text = classify::truncate_error(&error_text(&info));
            let category = match result.category {
                Some(c @ (ErrorCategory::Refusal | ErrorCategory::MaxTokens)) => c,
                hint => classify::keyword_category(&text)
                    .or_else(|| status_category(info.api_error_status.as_ref()))
                    .or(hint)
                    .unwrap_or(ErrorCategory::Api),
            };
            s.error = Some(text);
            s.error_category = Some(category);
        } else if let Some(error) = result.error {
            let error = if error.trim().is_empty() {
                NO_DETAIL.to_owned()
            } else {
                error
            };
            let text = classify::truncate_error(&error);
            s.error_category = Some(
                result
                    .category
                    .unwrap_or_else(|| classify::classify_error_text(&text)),
            );
            s.error = Some(text);
        }
        if s.session_id.is_none() {
            s.session_id = result.session_id.or_else(|| info.session_id.clone());
        }
        s.structured_output = result.structured_output;
        s.structured_inexact = result.structured_inexact;
        s.result = Some(info);
    }

    /// The summary, after the end-of-run rules (missing result, heuristics).
    pub fn finish(mut self, format: Format) -> RunSummary {
        self.summary.format = format;
        if format.is_native() {
            let native = self.native.take().unwrap_or_default();
            native.finish(&mut self.summary, format);
            return self.summary;
        }
        if !self.summary.saw_result {
            match format {
                Format::Claude => self.summary.warnings.push(NO_RESULT_WARNING.to_owned()),
                Format::Codex => self.summary.warnings.push(NO_TURN_WARNING.to_owned()),
                _ => {}
            }
        }
        if format == Format::Claude && self.summary.saw_result && self.summary.error.is_none() {
            self.heuristics();
        }
        self.summary
    }

    /// Note [Hang heuristics]: seed 004's two advisory detectors, run only
    /// for Claude streams that ended with a result and carry no error; each
    /// adds a prefixed warning and sets `error_category`, never `error`.
    ///
    /// - interactive-hang: a single-turn run (the result's `num_turns` is 1;
    ///   without `num_turns`, at most one top-level assistant message) whose
    ///   final top-level assistant message (lines sharing an id are one
    ///   message; sub-agent messages are not "final") has `stop_reason`
    ///   `end_turn` and either its text, trailing whitespace ignored, ends
    ///   with `?`, or it holds an `AskUserQuestion` tool use.
    /// - background-task, only when interactive-hang did not fire: at least
    ///   one `Task` tool use with `input.run_in_background` strictly `true`,
    ///   and either the run's text (`output`, all chunks joined) matches
    ///   seed 004's phrase regex or the result's `num_turns` is below
    ///   launches + 2 (a missing `num_turns` does not trigger).
    fn heuristics(&mut self) {
        let num_turns = self.summary.result.as_ref().and_then(|r| r.num_turns);
        let single_turn = num_turns.map_or(self.top_messages <= 1, |n| n == 1);
        let ends_with_question = self.final_text.trim_end().ends_with('?');
        if single_turn
            && self.final_stop_reason.as_deref() == Some("end_turn")
            && (ends_with_question || self.final_asks)
        {
            let why = if self.final_asks {
                "it called AskUserQuestion"
            } else {
                "its final text ends with a question"
            };
            self.summary.warnings.push(format!(
                "interactive-hang: the single-turn run ended its turn (stop_reason end_turn) and {why}; it likely stalled waiting for user input"
            ));
            self.summary.error_category = Some(ErrorCategory::Interactive);
            return;
        }
        let launches = self.background_launches;
        if launches > 0
            && (classify::has_background_phrase(&self.summary.output)
                || num_turns.is_some_and(|n| n < launches + 2))
        {
            self.summary.warnings.push(format!(
                "background-task: {launches} background Task launch(es), and the run ended before they could finish (claude -p does not poll background tasks)"
            ));
            self.summary.error_category = Some(ErrorCategory::BackgroundTask);
        }
    }
}
