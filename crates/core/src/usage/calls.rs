//! Usage reports folded into model calls: the one place the counting rules
//! of Note \[Native tokens\] and Note \[Message usage\] (in
//! `summary::native`) are written, used by the session summary (and so the
//! store and the usage reports) and by the OpenTelemetry export (one
//! `chat` span per call), so the two can never count differently.

use std::collections::HashMap;

use crate::facts::{TokenCounts, UsageTokens};

/// The model name Claude Code gives its own locally made messages: no call.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// One usage report ([`Event::Usage`](crate::Event::Usage)) as the fold
/// takes it.
#[derive(Debug, Clone, Copy)]
pub struct Report<'a> {
    /// The API message id.
    pub message_id: Option<&'a str>,
    /// The API request id.
    pub request_id: Option<&'a str>,
    /// The model that answered.
    pub model: Option<&'a str>,
    /// The counts, as the agent reported them.
    pub tokens: &'a TokenCounts,
    /// Running totals (Codex) rather than one message's.
    pub cumulative: bool,
    /// Reported on a sub-agent's inline line.
    pub sidechain: bool,
}

/// One model call, with the times (of any kind the caller uses) of its
/// first and last report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<T> {
    /// `message id:request id` for a call its agent names (Claude), which
    /// names it across files; `#<n>` (the n-th such call) otherwise.
    pub key: String,
    /// Whether `key` names the call across files.
    pub global: bool,
    /// The API message id, where there is one.
    pub message_id: Option<String>,
    /// The model, as reported.
    pub model: Option<String>,
    /// Reported on a sub-agent's inline line.
    pub sidechain: bool,
    /// The call's counts as the agent reported them (a Codex total's
    /// growth).
    pub counts: TokenCounts,
    /// The time of its first report.
    pub first: T,
    /// The time of its last report.
    pub last: T,
}

impl<T> Call<T> {
    /// The call's tokens in the one vocabulary (Note \[Usage vocabulary\]):
    /// `input_includes_cache` for Codex and Gemini.
    pub fn tokens(&self, input_includes_cache: bool) -> UsageTokens {
        UsageTokens::from_counts(&self.counts, input_includes_cache)
    }
}

/// The calls of one session, as its usage reports arrive.
#[derive(Debug, Clone)]
pub struct Calls<T> {
    keyed: HashMap<String, usize>,
    list: Vec<Call<T>>,
    unnamed: u64,
    /// The last running total seen (Codex).
    cumulative: Option<TokenCounts>,
    /// The last totals of the running segments already ended.
    segments: TokenCounts,
}

impl<T> Default for Calls<T> {
    fn default() -> Self {
        Calls {
            keyed: HashMap::new(),
            list: Vec::new(),
            unnamed: 0,
            cumulative: None,
            segments: TokenCounts::default(),
        }
    }
}

/// Whether a running total fell below the one before it: a new segment.
fn falls(now: &TokenCounts, before: &TokenCounts) -> bool {
    now.input < before.input
        || now.output < before.output
        || now.cache_read < before.cache_read
        || now.cache_write < before.cache_write
}

impl<T: Clone> Calls<T> {
    /// Take in one report made at `at`; the index of the call it made or
    /// updated, `None` when it is no call (a running total that did not
    /// grow, Claude Code's `<synthetic>` messages).
    ///
    /// A report with a message id is that message's call: the first time
    /// it makes the call, later ones (Claude writes one line per content
    /// block, the usage growing) replace its counts and move its `last`
    /// time. A running total's growth since the last one is a call; a
    /// total that fell starts a new segment, and the total itself is the
    /// growth. Any other report is a call of its own.
    pub fn push(&mut self, r: &Report<'_>, at: T) -> Option<usize> {
        if r.model == Some(SYNTHETIC_MODEL) {
            return None;
        }
        let mut counts = *r.tokens;
        if r.cumulative {
            let before = self.cumulative.unwrap_or_default();
            if falls(r.tokens, &before) {
                self.segments.add(&before);
            } else {
                counts = r.tokens.since(&before);
            }
            self.cumulative = Some(*r.tokens);
            if counts.is_zero() {
                return None;
            }
        }
        let named = r.message_id.filter(|_| !r.cumulative);
        let key = if let Some(id) = named {
            let key = format!("{id}:{}", r.request_id.unwrap_or(""));
            if let Some(&i) = self.keyed.get(&key) {
                let c = &mut self.list[i];
                c.counts = counts;
                c.last = at;
                if r.model.is_some() {
                    c.model = r.model.map(str::to_owned);
                }
                return Some(i);
            }
            self.keyed.insert(key.clone(), self.list.len());
            key
        } else {
            self.unnamed += 1;
            format!("#{}", self.unnamed)
        };
        self.list.push(Call {
            key,
            global: named.is_some(),
            message_id: named.map(str::to_owned),
            model: r.model.map(str::to_owned),
            sidechain: r.sidechain,
            counts,
            first: at.clone(),
            last: at,
        });
        Some(self.list.len() - 1)
    }

    /// The calls so far, in first-seen order.
    pub fn calls(&self) -> &[Call<T>] {
        &self.list
    }

    /// The calls, in first-seen order.
    pub fn into_calls(self) -> Vec<Call<T>> {
        self.list
    }

    /// Whether the reports were running totals (a Codex rollout).
    pub fn running(&self) -> bool {
        self.cumulative.is_some()
    }

    /// The session's tokens as its agent reports them: the segments' last
    /// totals for running totals (never a sum of totals), else the sum of
    /// the calls.
    pub fn totals(&self) -> TokenCounts {
        if let Some(last) = self.cumulative {
            let mut t = self.segments;
            t.add(&last);
            return t;
        }
        let mut t = TokenCounts::default();
        for c in &self.list {
            t.add(&c.counts);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(input: u64, output: u64) -> TokenCounts {
        TokenCounts {
            input,
            output,
            ..TokenCounts::default()
        }
    }

    fn report<'a>(id: Option<&'a str>, t: &'a TokenCounts, cumulative: bool) -> Report<'a> {
        Report {
            message_id: id,
            request_id: id.map(|_| "r"),
            model: Some("m"),
            tokens: t,
            cumulative,
            sidechain: false,
        }
    }

    #[test]
    fn a_message_is_one_call_its_last_usage_its_first_time() {
        let mut calls = Calls::default();
        let (a, b, c) = (counts(3, 1), counts(3, 9), counts(1, 1));
        assert_eq!(calls.push(&report(Some("m1"), &a, false), 10), Some(0));
        assert_eq!(calls.push(&report(Some("m1"), &b, false), 20), Some(0));
        assert_eq!(calls.push(&report(None, &c, false), 30), Some(1));
        let got = calls.calls();
        assert_eq!((got[0].first, got[0].last, got[0].counts), (10, 20, b));
        assert_eq!((got[0].key.as_str(), got[0].global), ("m1:r", true));
        assert_eq!((got[1].key.as_str(), got[1].global), ("#1", false));
        assert_eq!(calls.totals(), counts(4, 10));
        let synthetic = Report {
            model: Some(SYNTHETIC_MODEL),
            ..report(Some("x"), &c, false)
        };
        assert_eq!(calls.push(&synthetic, 40), None);
    }

    #[test]
    fn running_totals_grow_repeat_and_restart() {
        let mut calls = Calls::default();
        let totals = [
            counts(10, 1),
            counts(10, 1),
            counts(30, 2),
            counts(5, 1),
            counts(8, 1),
        ];
        let made: Vec<Option<usize>> = totals
            .iter()
            .enumerate()
            .map(|(i, t)| calls.push(&report(Some("ignored"), t, true), i))
            .collect();
        assert_eq!(made, [Some(0), None, Some(1), Some(2), Some(3)]);
        let growth: Vec<TokenCounts> = calls.calls().iter().map(|c| c.counts).collect();
        assert_eq!(
            growth,
            [counts(10, 1), counts(20, 1), counts(5, 1), counts(3, 0)]
        );
        assert!(calls.running());
        assert_eq!(
            calls.totals(),
            counts(38, 3),
            "30 + 8: each segment's last total"
        );
        assert!(
            calls
                .calls()
                .iter()
                .all(|c| !c.global && c.message_id.is_none())
        );
    }
}
