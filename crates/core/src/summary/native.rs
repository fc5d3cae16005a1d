//! The native-session part of the run summary: folds the events of a Claude
//! Code session, a Codex rollout or a Gemini chat into a [`SessionInfo`],
//! and fills the run summary's common fields from it.
//!
//! Note \[Native tokens\]: each API message is counted once.
//!
//! - Claude Code writes one line per content block, so several lines repeat
//!   a `message.id`, and their `usage` is the same or grows from line to
//!   line as the message streamed (`output_tokens` rising). A message is
//!   keyed by its id and `requestId`; only its last line's usage is kept
//!   (counting the first line undercounts, summing all lines overcounts).
//!   Memory: one entry of four counts per message, no lines.
//! - Codex `token_count` events carry the session's running totals, about
//!   half of them repeating the previous one: the session's tokens are the
//!   last total of each segment, never a sum of totals. A total that falls
//!   (a rollout holding several `session_meta` lines, a total back to 0)
//!   starts a new segment, and the segments' last totals are added. Tokens
//!   by model attribute each total's growth to the model of the turn in
//!   effect.
//!
//! Note \[Message usage\]: besides the session's sums, the fold keeps one
//! [`MessageUsage`] per model call, at the call's own time, in the one
//! vocabulary of Note \[Usage vocabulary\] (what daily reports and model-call
//! spans are made of): a Claude message (keyed `message id:request id`, its
//! last line's usage and time, so a resumed session's copy in another file
//! is the same key), each growth of a Codex total (at its `token_count`
//! line), each Gemini message. Memory: one small record per model call.
//! - Gemini writes one `tokens` object per message: summed per message.
//!
//! Note \[Native output\]: a session file holds many turns, and `output` (what
//! extraction reads as the answer) is the text of the final main-chain
//! assistant turn, the assistant text after the last real user prompt,
//! not the whole session joined. Sub-agent (sidechain) text is never part
//! of it, except in a sub-agent's own file, where the sidechain is the
//! whole file.
//!
//! Note \[Native result\]: a native file has no result line. `result` is
//! filled from the session (deduplicated input and output tokens, `num_turns`
//! = real user prompts), and `saw_result` is true once the chain holds an
//! assistant message (or an API error): a session that never got an answer
//! reports "no result". The run is an error only when the last main-chain
//! message is an API error (retried API errors followed by an answer are
//! listed in `session.api_errors`, not an error of the run).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::classify;
use crate::event::{Event, LineInfo};
use crate::facts::{
    ApiErrorInfo, Format, MessageUsage, ResultInfo, RunSummary, SessionInfo, SubAgentInfo,
    TokenCounts, Usage,
};
use crate::usage::calls::{Calls, Report};

/// API errors kept in `api_errors` (all are counted).
const MAX_API_ERRORS: usize = 100;
/// Sidechain line ids remembered to group 1.0.x inline sub-agents.
const MAX_SIDECHAIN_IDS: usize = 1 << 20;
/// The model name Claude Code gives its own locally made messages.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// What one chain (the main conversation, or the sidechain lines) says.
#[derive(Debug, Default)]
struct Chain {
    lines: u64,
    turns: u64,
    text: String,
    chunks: u64,
    model: Option<String>,
    messages: u64,
    last_error: Option<ApiErrorInfo>,
    session_id: Option<String>,
    agent_id: Option<String>,
}

/// Running state of a native session's summary.
#[derive(Debug, Default)]
pub(super) struct NativeState {
    info: SessionInfo,
    side: bool,
    at: Option<String>,
    main: Chain,
    sidechain: Chain,
    /// The model calls (Note \[Message usage\]), with their lines' times.
    calls: Calls<Option<String>>,
    message_ids: HashSet<String>,
    anonymous_messages: u64,
    /// Sidechain line uuid → index in `info.subagents` (1.0.x grouping).
    side_roots: HashMap<String, usize>,
    /// Agent id → index in `info.subagents`.
    agents: HashMap<String, usize>,
    /// The sub-agent of the current sidechain line, by index.
    side_agent: Option<usize>,
    /// Call index → the sub-agent that made it (sidechain calls only).
    call_agents: HashMap<usize, usize>,
    first_glued: Option<u64>,
}

impl NativeState {
    fn chain(&mut self) -> &mut Chain {
        if self.side {
            &mut self.sidechain
        } else {
            &mut self.main
        }
    }

    /// Fold one event (the run summary's own fields are folded separately).
    pub(super) fn push(&mut self, event: &Event) {
        match event {
            Event::Line(line) => self.line(line),
            Event::UserText { .. } => {
                let chain = self.chain();
                chain.turns += 1;
                chain.text.clear();
                chain.chunks = 0;
                chain.last_error = None;
            }
            Event::Text { text } => {
                let chain = self.chain();
                if chain.chunks > 0 {
                    chain.text.push('\n');
                }
                chain.text.push_str(text);
                chain.chunks += 1;
            }
            Event::Message { id, .. } => {
                match id {
                    Some(id) => {
                        if !self.message_ids.contains(id) {
                            self.message_ids.insert(id.clone());
                        }
                    }
                    None => self.anonymous_messages += 1,
                }
                let chain = self.chain();
                chain.messages += 1;
                chain.last_error = None;
            }
            Event::Usage {
                message_id,
                request_id,
                model,
                tokens,
                cumulative,
            } => self.usage(
                message_id.as_ref(),
                request_id.as_ref(),
                model.as_ref(),
                tokens,
                *cumulative,
            ),
            Event::Compaction { .. } => self.info.compactions += 1,
            Event::ApiError {
                message,
                category,
                status,
            } => {
                let info = ApiErrorInfo {
                    category: *category,
                    message: classify::truncate_error(message),
                    status: *status,
                    at: self.at.clone(),
                };
                self.info.api_error_count += 1;
                if self.info.api_errors.len() < MAX_API_ERRORS {
                    self.info.api_errors.push(info.clone());
                }
                self.chain().last_error = Some(info);
            }
            Event::SubAgent {
                agent_id,
                tool_use_id,
            } => {
                let i = self.agent(agent_id);
                if let Some(sub) = self.info.subagents.get_mut(i) {
                    sub.lines += 1;
                    if sub.tool_use_id.is_none() {
                        sub.tool_use_id.clone_from(tool_use_id);
                    }
                }
            }
            Event::ToolError { name, .. } => {
                *self.info.tool_errors.entry(name.clone()).or_insert(0) += 1;
            }
            Event::Glued { line, .. } => {
                self.info.glued_lines += 1;
                self.first_glued.get_or_insert(*line);
            }
            Event::Other { kind } => {
                *self.info.unknown_types.entry(kind.clone()).or_insert(0) += 1;
            }
            _ => {}
        }
    }

    fn line(&mut self, line: &LineInfo) {
        let info = &mut self.info;
        *info.line_types.entry(line.kind.clone()).or_insert(0) += 1;
        if line.timestamp.is_some() {
            if info.started_at.is_none() {
                info.started_at.clone_from(&line.timestamp);
            }
            info.ended_at.clone_from(&line.timestamp);
        }
        self.at.clone_from(&line.timestamp);
        if info.project.is_none() {
            info.project.clone_from(&line.cwd);
        }
        if line.version.is_some() {
            info.agent_version.clone_from(&line.version);
        }
        if let Some(branch) = line.git_branch.as_ref().filter(|b| !b.is_empty()) {
            info.git_branch = Some(branch.clone());
        }
        let model = line.model.as_ref().filter(|m| *m != SYNTHETIC_MODEL);
        if let Some(model) = model {
            if !info.models.contains(model) {
                info.models.push(model.clone());
            }
        }
        self.side = line.sidechain;
        self.side_agent = None;
        if line.sidechain {
            self.info.sidechain_lines += 1;
            self.side_agent = Some(self.group_sidechain(line));
        }
        let side = line.sidechain;
        let chain = self.chain();
        chain.lines += 1;
        if model.is_some() {
            chain.model = model.cloned();
        }
        if line.session_id.is_some() && (!side || chain.session_id.is_none()) {
            chain.session_id.clone_from(&line.session_id);
        }
        if chain.agent_id.is_none() {
            chain.agent_id.clone_from(&line.agent_id);
        }
    }

    /// A sidechain line joins its sub-agent: by `agentId` (2.1.x), else
    /// by following `parentUuid` to the chain's first line (1.0.x inline
    /// sidechains carry no agent id). The sub-agent's index.
    fn group_sidechain(&mut self, line: &LineInfo) -> usize {
        let index = if let Some(agent) = &line.agent_id {
            self.agent(agent)
        } else {
            let known = line
                .parent_uuid
                .as_ref()
                .and_then(|p| self.side_roots.get(p).copied());
            if let Some(i) = known {
                i
            } else {
                let id = line.uuid.clone().unwrap_or_default();
                self.info.subagents.push(SubAgentInfo {
                    id,
                    tool_use_id: None,
                    lines: 0,
                    ..SubAgentInfo::default()
                });
                self.info.subagents.len() - 1
            }
        };
        if let Some(uuid) = &line.uuid {
            if self.side_roots.len() < MAX_SIDECHAIN_IDS {
                self.side_roots.insert(uuid.clone(), index);
            }
        }
        if let Some(sub) = self.info.subagents.get_mut(index) {
            sub.lines += 1;
        }
        index
    }

    fn agent(&mut self, agent_id: &str) -> usize {
        if let Some(i) = self.agents.get(agent_id) {
            return *i;
        }
        self.info.subagents.push(SubAgentInfo {
            id: agent_id.to_owned(),
            tool_use_id: None,
            lines: 0,
            ..SubAgentInfo::default()
        });
        let i = self.info.subagents.len() - 1;
        self.agents.insert(agent_id.to_owned(), i);
        i
    }

    fn usage(
        &mut self,
        message_id: Option<&String>,
        request_id: Option<&String>,
        model: Option<&String>,
        tokens: &TokenCounts,
        cumulative: bool,
    ) {
        let report = Report {
            message_id: message_id.map(String::as_str),
            request_id: request_id.map(String::as_str),
            model: model.map(String::as_str),
            tokens,
            cumulative,
            sidechain: self.side,
        };
        let call = self.calls.push(&report, self.at.clone());
        if let (Some(call), Some(agent)) = (call, self.side_agent) {
            self.call_agents.insert(call, agent);
        }
    }

    /// Fill `summary` (and its `session`) at the end of the input.
    pub(super) fn finish(mut self, summary: &mut RunSummary, format: Format) {
        let mut info = std::mem::take(&mut self.info);
        let agent = match format {
            Format::CodexRollout => "codex",
            Format::GeminiChat => "gemini-cli",
            _ => "claude-code",
        };
        agent.clone_into(&mut info.agent);
        // See Note [Usage vocabulary]: Codex and Gemini count the cached tokens
        // inside input; Claude does not.
        let inside = matches!(format, Format::CodexRollout | Format::GeminiChat);
        let tokens = self.calls.totals();
        info.tokens = tokens;
        let mut by_model: BTreeMap<String, TokenCounts> = BTreeMap::new();
        let calls = std::mem::take(&mut self.calls).into_calls();
        // An inline sub-agent's own model and tokens: its calls, each once.
        let mut owned: Vec<(usize, usize)> = self.call_agents.drain().collect();
        owned.sort_unstable();
        for (call, agent) in owned {
            if let (Some(c), Some(sub)) = (calls.get(call), info.subagents.get_mut(agent)) {
                sub.tokens.add(&c.counts);
                if c.model.is_some() {
                    sub.model.clone_from(&c.model);
                }
            }
        }
        info.usage = calls
            .into_iter()
            .map(|c| {
                if let Some(model) = &c.model {
                    by_model.entry(model.clone()).or_default().add(&c.counts);
                }
                MessageUsage {
                    key: c.global.then(|| c.key.clone()),
                    tokens: c.tokens(inside),
                    at: c.first,
                    model: c.model,
                    sidechain: c.sidechain,
                }
            })
            .collect();
        info.tokens_by_model = by_model;
        info.messages = u64::try_from(self.message_ids.len())
            .unwrap_or(u64::MAX)
            .saturating_add(self.anonymous_messages);
        info.tool_calls = summary.tool_use_counts.clone();
        // A file with no main-chain line is a sub-agent's own file
        // (2.0.x `agent-<id>.jsonl`, 2.1.x `subagents/agent-<id>.jsonl`).
        let chain = if self.main.lines == 0 && self.sidechain.lines > 0 {
            let chain = self.sidechain;
            info.subagents.clear();
            info.agent_id.clone_from(&chain.agent_id);
            let own = chain.agent_id.as_ref().map(|a| format!("agent-{a}"));
            info.parent_session_id = chain.session_id.clone().filter(|s| Some(s) != own.as_ref());
            info.session_id = own.or_else(|| chain.session_id.clone());
            chain
        } else {
            info.session_id.clone_from(&self.main.session_id);
            self.main
        };
        info.turns = chain.turns;
        if let Some(line) = self.first_glued {
            summary.warnings.push(format!(
                "{} line(s) held several JSON objects glued together (first: line {line}); each object was decoded",
                info.glued_lines
            ));
        }
        summary.session_id.clone_from(&info.session_id);
        summary.model = chain.model;
        summary.cwd.clone_from(&info.project);
        summary.output = chain.text;
        summary.text_chunks = chain.chunks;
        summary.saw_result = chain.messages > 0 || chain.last_error.is_some();
        let error = chain.last_error;
        if let Some(e) = &error {
            summary.error = Some(e.message.clone());
            summary.error_category = Some(e.category);
        }
        summary.result = Some(ResultInfo {
            is_error: error.is_some(),
            num_turns: Some(info.turns),
            usage: Usage {
                input_tokens: tokens.input,
                output_tokens: tokens.output,
            },
            text: error.map(|e| e.message),
            session_id: info.session_id.clone(),
            ..ResultInfo::default()
        });
        summary.session = Some(Box::new(info));
    }
}
