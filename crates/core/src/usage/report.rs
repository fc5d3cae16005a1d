//! Usage reports: calls grouped by a period, a session or a 5-hour block,
//! each group's tokens and cost, and the models it could not price.
//!
//! Note \[Partial cost\]: a call whose model the price table does not know
//! adds its tokens but no cost, and its group (and every group holding it:
//! the totals row, the model's own line) is `partial`, naming the model in
//! `unpriced_models`. A partial sum is never shown as the whole: every
//! place that shows a cost shows `partial` beside it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::facts::UsageTokens;
use crate::pricing::{ModelPrice, PriceTable};

/// One stored model call, as a report reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageCall {
    /// The stored session it belongs to.
    pub session_id: String,
    /// That session's parent (a sub-agent's own file), if any.
    pub parent_id: Option<String>,
    /// `claude-code`, `codex` or `gemini-cli`.
    pub agent: String,
    /// The session's project (its working directory).
    pub project: Option<String>,
    /// When the call was made, in milliseconds since the epoch (UTC).
    pub at_ms: i64,
    /// The model (empty when the agent did not say).
    pub model: String,
    /// Made by an inline sub-agent (Claude Code's `isSidechain` lines).
    pub sidechain: bool,
    /// Its tokens.
    pub tokens: UsageTokens,
}

/// Tokens and cost of a set of calls. The names are the report's column
/// names (`usage --json` and the table say the same).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    /// Prompt tokens not cached.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Of `output`, reasoning tokens (where the agent reports them).
    pub reasoning: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache (5-minute and 1-hour).
    pub cache_write: u64,
    /// Of `cache_write`, the 1-hour writes.
    pub cache_write_1h: u64,
    /// Every token: input, output, cache reads and writes.
    pub total_tokens: u64,
    /// Model calls.
    pub calls: u64,
    /// The cost of the calls whose model is priced (Note \[Partial cost\]).
    pub cost_usd: f64,
    /// Some calls' models are not priced: `cost_usd` is a part.
    pub partial: bool,
    /// The models the price table does not know.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
}

/// Running sums behind a [`Figures`].
#[derive(Debug, Clone, Default)]
struct Sum {
    tokens: UsageTokens,
    calls: u64,
    cost: f64,
    unpriced: BTreeSet<String>,
}

impl Sum {
    fn add(&mut self, call: &UsageCall, cost: Option<f64>) {
        self.tokens.add(&call.tokens);
        self.calls += 1;
        match cost {
            Some(c) => self.cost += c,
            None if !call.tokens.is_zero() => {
                let name = if call.model.is_empty() {
                    "(unknown model)".to_owned()
                } else {
                    call.model.clone()
                };
                self.unpriced.insert(name);
            }
            None => {}
        }
    }

    fn figures(&self) -> Figures {
        let t = &self.tokens;
        Figures {
            input: t.input,
            output: t.output,
            reasoning: t.reasoning,
            cache_read: t.cache_read,
            cache_write: t.cache_write(),
            cache_write_1h: t.cache_write_1h,
            total_tokens: t.total(),
            calls: self.calls,
            cost_usd: self.cost,
            partial: !self.unpriced.is_empty(),
            unpriced_models: self.unpriced.iter().cloned().collect(),
        }
    }
}

/// One model's share of a group.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelFigures {
    /// The model.
    pub model: String,
    /// Its tokens and cost.
    #[serde(flatten)]
    pub figures: Figures,
}

/// A group of calls: a day, week or month (or any key the caller names).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Group {
    /// What the calls share: `2026-08-17`, `2026-W33`, `2026-08`, a project.
    pub key: String,
    /// The models, most tokens first.
    pub models: Vec<String>,
    /// The group's tokens and cost.
    #[serde(flatten)]
    pub figures: Figures,
    /// Per model, most tokens first.
    pub breakdown: Vec<ModelFigures>,
}

/// Groups and each model's share of them, as they are summed.
#[derive(Default)]
struct Grouped {
    all: Sum,
    models: BTreeMap<String, Sum>,
}

impl Grouped {
    fn add(&mut self, call: &UsageCall, cost: Option<f64>) {
        self.all.add(call, cost);
        self.models
            .entry(call.model.clone())
            .or_default()
            .add(call, cost);
    }

    fn into_group(self, key: String) -> Group {
        let mut breakdown: Vec<ModelFigures> = self
            .models
            .into_iter()
            .map(|(model, sum)| ModelFigures {
                model,
                figures: sum.figures(),
            })
            .collect();
        breakdown.sort_by(|a, b| {
            b.figures
                .total_tokens
                .cmp(&a.figures.total_tokens)
                .then_with(|| a.model.cmp(&b.model))
        });
        Group {
            key,
            models: breakdown
                .iter()
                .filter(|m| !m.model.is_empty() && m.figures.total_tokens > 0)
                .map(|m| m.model.clone())
                .collect(),
            figures: self.all.figures(),
            breakdown,
        }
    }
}

/// Prices calls, looking each model up once (a lookup normalises the
/// name and tries its aliases: most of a call's price when done per call).
struct Pricer<'p> {
    prices: &'p PriceTable,
    seen: HashMap<String, Option<&'p ModelPrice>>,
}

impl<'p> Pricer<'p> {
    fn new(prices: &'p PriceTable) -> Self {
        Pricer {
            prices,
            seen: HashMap::new(),
        }
    }

    /// The price of one call (`None`: its model is not priced).
    fn price(&mut self, call: &UsageCall) -> Option<f64> {
        if call.model.is_empty() {
            return None;
        }
        let found = if let Some(found) = self.seen.get(&call.model) {
            *found
        } else {
            let found = self.prices.price(&call.model);
            self.seen.insert(call.model.clone(), found);
            found
        };
        found.map(|p| p.call_cost(&call.tokens))
    }
}

/// Calls grouped by `key` (a call it names `None` is left out), in key
/// order, and the totals of every call it kept.
pub fn group_by<'a, I, K>(calls: I, key: K, prices: &PriceTable) -> (Vec<Group>, Group)
where
    I: IntoIterator<Item = &'a UsageCall>,
    K: Fn(&UsageCall) -> Option<String>,
{
    let mut groups: BTreeMap<String, Grouped> = BTreeMap::new();
    let mut total = Grouped::default();
    let mut lookup = Pricer::new(prices);
    for call in calls {
        let Some(k) = key(call) else { continue };
        let cost = lookup.price(call);
        groups.entry(k).or_default().add(call, cost);
        total.add(call, cost);
    }
    let groups = groups.into_iter().map(|(k, g)| g.into_group(k)).collect();
    (groups, total.into_group("total".to_owned()))
}

/// A session's usage: its own calls and its sub-agents'.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionGroup {
    /// The stored session id.
    pub session_id: String,
    /// `claude-code`, `codex` or `gemini-cli`.
    pub agent: String,
    /// Its project.
    pub project: Option<String>,
    /// Its first call, in milliseconds since the epoch.
    #[serde(skip)]
    pub first_ms: i64,
    /// Its last call.
    #[serde(skip)]
    pub last_ms: i64,
    /// Models, most tokens first.
    pub models: Vec<String>,
    /// With its sub-agents (inline and with files of their own): what the
    /// session cost.
    #[serde(flatten)]
    pub figures: Figures,
    /// The main agent's own calls only.
    pub own: Figures,
    /// Sub-agents whose calls are folded in: sessions of their own (a
    /// Claude Code `subagents/agent-*.jsonl`) and inline sidechains.
    pub subagents: u64,
    /// Per model.
    pub breakdown: Vec<ModelFigures>,
}

/// Calls grouped by session, a sub-agent's session folded into its
/// parent's (Note \[Partial cost\] holds per session too). Sorted by
/// first call.
pub fn sessions<'a, I>(calls: I, prices: &PriceTable) -> (Vec<SessionGroup>, Group)
where
    I: IntoIterator<Item = &'a UsageCall>,
{
    #[derive(Default)]
    struct Acc {
        agent: String,
        project: Option<String>,
        first: i64,
        last: i64,
        all: Grouped,
        own: Sum,
        children: BTreeSet<String>,
        inline: bool,
    }
    let mut by: HashMap<String, Acc> = HashMap::new();
    let mut total = Grouped::default();
    let mut lookup = Pricer::new(prices);
    for call in calls {
        let cost = lookup.price(call);
        let root = call.parent_id.as_ref().unwrap_or(&call.session_id);
        let acc = by.entry(root.clone()).or_insert_with(|| Acc {
            first: call.at_ms,
            last: call.at_ms,
            ..Acc::default()
        });
        let own = call.parent_id.is_none();
        if own && acc.agent.is_empty() {
            acc.agent.clone_from(&call.agent);
            acc.project.clone_from(&call.project);
        }
        acc.first = acc.first.min(call.at_ms);
        acc.last = acc.last.max(call.at_ms);
        acc.all.add(call, cost);
        if own && !call.sidechain {
            acc.own.add(call, cost);
        }
        if !own {
            acc.children.insert(call.session_id.clone());
        }
        acc.inline |= own && call.sidechain;
        total.add(call, cost);
    }
    let mut out: Vec<SessionGroup> = by
        .into_iter()
        .map(|(id, acc)| {
            let g = acc.all.into_group(id.clone());
            SessionGroup {
                session_id: id,
                agent: acc.agent,
                project: acc.project,
                first_ms: acc.first,
                last_ms: acc.last,
                models: g.models,
                figures: g.figures,
                own: acc.own.figures(),
                subagents: acc.children.len() as u64 + u64::from(acc.inline),
                breakdown: g.breakdown,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.first_ms
            .cmp(&b.first_ms)
            .then_with(|| a.session_id.cmp(&b.session_id))
    });
    (out, total.into_group("total".to_owned()))
}

/// The length of a billing block: 5 hours.
pub const BLOCK_MS: i64 = 5 * 3_600_000;

/// A 5-hour billing window (Note \[Blocks\]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Block {
    /// Start (the first call's hour), ms since the epoch.
    #[serde(skip)]
    pub start_ms: i64,
    /// End: start + 5 h.
    #[serde(skip)]
    pub end_ms: i64,
    /// The last call in it.
    #[serde(skip)]
    pub last_ms: i64,
    /// Still open: its end is after now and its last call within 5 h of now.
    pub active: bool,
    /// Models, most tokens first.
    pub models: Vec<String>,
    /// Its tokens and cost.
    #[serde(flatten)]
    pub figures: Figures,
    /// Per model.
    pub breakdown: Vec<ModelFigures>,
}

/// The start of the block a call at `at_ms` opens: its hour.
pub fn block_window_ms(at_ms: i64) -> (i64, i64) {
    let start = at_ms.div_euclid(3_600_000) * 3_600_000;
    (start, start + BLOCK_MS)
}

/// Calls in 5-hour billing blocks.
///
/// Note \[Blocks\]: Claude's subscription limits are counted in 5-hour
/// windows that open with the first message after the last window closed.
/// As ccusage draws them: calls in time order; a call opens a block at the
/// start of its hour (UTC) unless it falls inside the open block (before
/// its end, and within 5 hours of the block's last call); the block is
/// active when `now` is before its end and within 5 hours of its last call.
pub fn blocks<'a, I>(calls: I, prices: &PriceTable, now_ms: i64) -> (Vec<Block>, Group)
where
    I: IntoIterator<Item = &'a UsageCall>,
{
    let mut sorted: Vec<&UsageCall> = calls.into_iter().collect();
    sorted.sort_by_key(|c| c.at_ms);
    let mut out = Vec::new();
    let mut total = Grouped::default();
    let mut open: Option<(i64, i64, i64, Grouped)> = None;
    let close = |o: (i64, i64, i64, Grouped), out: &mut Vec<Block>| {
        let (start, end, last, g) = o;
        let g = g.into_group(String::new());
        out.push(Block {
            start_ms: start,
            end_ms: end,
            last_ms: last,
            active: now_ms < end && now_ms - last < BLOCK_MS,
            models: g.models,
            figures: g.figures,
            breakdown: g.breakdown,
        });
    };
    let mut lookup = Pricer::new(prices);
    for call in sorted {
        let cost = lookup.price(call);
        total.add(call, cost);
        let inside = open
            .as_ref()
            .is_some_and(|(_, end, last, _)| call.at_ms < *end && call.at_ms - last < BLOCK_MS);
        if !inside {
            if let Some(o) = open.take() {
                close(o, &mut out);
            }
            let (start, end) = block_window_ms(call.at_ms);
            open = Some((start, end, call.at_ms, Grouped::default()));
        }
        if let Some((_, _, last, g)) = open.as_mut() {
            *last = call.at_ms;
            g.add(call, cost);
        }
    }
    if let Some(o) = open.take() {
        close(o, &mut out);
    }
    (out, total.into_group("total".to_owned()))
}

#[cfg(test)]
mod tests;
