//! The candidate trace: every candidate the extract chain found, in the
//! order it tried them, and why each won or lost (the playground of
//! `agentshape serve` shows it, so a person can see why a reply was rejected).
//!
//! Note [One chain, traced]: the trace is recorded by the real chain (the
//! `Chooser` of the parent module notes each candidate as it goes), never by
//! a second search that could drift from it. Untraced runs pay one `None`
//! check per candidate. Only the candidates of the text being searched when a
//! winner is found are listed as [`Reason::NotReached`]; later texts of a run
//! and the markers after a winner are not searched at all, so not listed.

use serde::{Deserialize, Serialize};

use super::Repair;
use crate::outcome::{Extraction, Method};

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TraceSource {
    /// Native structured output (or the `StructuredOutput` tool input).
    Structured,
    /// The content of a fenced code block.
    Fenced,
    /// A balanced value in prose (or the whole reply).
    Bare,
    /// The profile's legacy markers over the whole output.
    Markers,
}

/// Which text a candidate's span points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Piece {
    /// The reply given to `extract_text` (for a plain-text input: the input).
    Text,
    /// A transcript's result text.
    Result,
    /// A transcript's assistant output (its text blocks joined).
    Output,
}

/// Why a candidate won or lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// Won: no schema, so the first candidate that gives a value wins.
    First,
    /// Won: it validates against the schema.
    Valid,
    /// Won: nothing validated, and it had the fewest errors (earliest on a tie).
    FewestErrors,
    /// Lost: neither strict JSON nor the tolerant parser made a value of it.
    NotJson,
    /// Lost: the profile's markers found nothing in the text.
    NoMarkers,
    /// Lost: it does not validate, and a later candidate did.
    Invalid,
    /// Lost: nothing validated, and the winner had fewer errors (or as few, earlier).
    MoreErrors,
    /// Lost: a weak candidate (Note [Weak candidates]), kept for last, and
    /// another won before it was reached.
    WeakUnused,
    /// Not tried: an earlier candidate of the same text had already won.
    NotReached,
    /// Not offered: the profile does not allow its method (Note [Methods
    /// allowed] in `methods`).
    NotAllowed,
    /// Dropped: brackets in prose whose value keeps nothing the text said
    /// (Note [No structure from prose] in `extract::repair`).
    Prose,
}

/// One candidate the chain found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateTrace {
    /// Where it came from.
    pub source: TraceSource,
    /// The method it is reported under when it wins (`repaired` when it
    /// parsed only after repairs).
    pub method: Method,
    /// The text `span` points into (`None` for structured output and markers).
    pub piece: Option<Piece>,
    /// Its byte range `[start, end)` in `piece`, blanks trimmed.
    pub span: Option<(usize, usize)>,
    /// Whether it gave a value (strictly or after repairs).
    pub parsed: bool,
    /// The repairs it needed (empty when strict JSON or not parsed).
    pub repairs: Vec<Repair>,
    /// Kept for last as more likely prose than an answer (Note [Weak candidates]).
    pub weak: bool,
    /// Whether it validated; `None` without a schema or when never judged.
    pub valid: Option<bool>,
    /// How many errors it had (schema errors and inexact numbers).
    pub errors: usize,
    /// Whether it is the value returned.
    pub won: bool,
    /// Why it won or lost.
    pub reason: Reason,
}

/// An extraction with the trace of the chain that produced it.
#[derive(Debug, Clone, PartialEq)]
pub struct Traced {
    /// Exactly what the untraced function returns for the same input.
    pub extraction: Extraction,
    /// Every candidate, in the order the chain met them (Note [One chain, traced]).
    pub candidates: Vec<CandidateTrace>,
}

/// The recorder the chooser carries while tracing.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    pub(super) entries: Vec<CandidateTrace>,
    pub(super) winner: Option<usize>,
    pub(super) best: Option<usize>,
}

impl Recorder {
    /// Add one entry; returns its slot.
    pub(super) fn note(&mut self, entry: CandidateTrace) -> usize {
        self.entries.push(entry);
        self.entries.len() - 1
    }

    /// Settle the reasons once the chain has ended (`schema`: a validator was
    /// given).
    pub(super) fn finish(mut self, schema: bool) -> Vec<CandidateTrace> {
        let (slot, reason) = match (self.winner, self.best) {
            (Some(w), _) => (Some(w), if schema { Reason::Valid } else { Reason::First }),
            (None, Some(b)) => (Some(b), Reason::FewestErrors),
            (None, None) => (None, Reason::First),
        };
        let none_valid = self.winner.is_none();
        for (i, e) in self.entries.iter_mut().enumerate() {
            if Some(i) == slot {
                e.won = true;
                e.reason = reason;
            } else if none_valid && e.reason == Reason::Invalid {
                e.reason = Reason::MoreErrors;
            }
        }
        self.entries
    }
}

/// The byte range of `inner` within `outer`, which it must be a slice of
/// (every span the chain looks at is).
pub(super) fn offset_in(outer: &str, inner: &str) -> (usize, usize) {
    let start = (inner.as_ptr() as usize).saturating_sub(outer.as_ptr() as usize);
    (start, start + inner.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{ExtractOptions, MarkerGrammar, extract_text, trace_run, trace_text};
    use super::*;
    use crate::summary::{ResultInfo, RunSummary};
    use crate::validate::Validator;

    /// (source, method, span text, parsed, won, reason) of each candidate.
    type Row<'a> = (TraceSource, Method, Option<&'a str>, bool, bool, Reason);

    fn rows<'a>(text: &'a str, t: &Traced) -> Vec<Row<'a>> {
        t.candidates
            .iter()
            .map(|c| {
                let span = c.span.map(|(a, b)| &text[a..b]);
                (c.source, c.method, span, c.parsed, c.won, c.reason)
            })
            .collect()
    }

    #[test]
    fn a_fenced_block_after_broken_bare_json() {
        use Method::{Fenced, Repaired};
        use TraceSource as S;
        let text = "Draft: {\"ok\": tru, \"n\": 1,\nFinal:\n```json\n{\"ok\": true}\n```\n";
        // No schema: the fence is tried first and wins; the broken bare value
        // outside it is found but never reached.
        let t = trace_text(text, &ExtractOptions::default());
        assert_eq!(t.extraction.method, Fenced);
        let got = rows(text, &t);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            got[0],
            (
                S::Fenced,
                Fenced,
                Some("{\"ok\": true}"),
                true,
                true,
                Reason::First
            )
        );
        assert_eq!(got[1].0, S::Bare);
        assert!(
            got[1].2.is_some_and(|s| s.starts_with("{\"ok\": tru,")),
            "{got:?}"
        );
        assert_eq!(got[1].5, Reason::NotReached);
        assert!(!got[1].4);
        // A schema the fence fails and the repaired prose value passes: both
        // are tried, in order, and the second wins.
        let schema = json!({"type": "object", "required": ["n"]});
        let v = Validator::new(&schema).unwrap();
        let opts = ExtractOptions {
            validator: Some(&v),
            ..ExtractOptions::default()
        };
        let text = "Draft: {'ok': True, 'n': 1,}\n```json\n{\"ok\": true}\n```\n";
        let t = trace_text(text, &opts);
        assert_eq!(t.extraction, extract_text(text, &opts));
        assert_eq!(t.extraction.method, Repaired);
        let got = rows(text, &t);
        assert_eq!(
            got,
            vec![
                (
                    S::Fenced,
                    Fenced,
                    Some("{\"ok\": true}"),
                    true,
                    false,
                    Reason::Invalid
                ),
                (
                    S::Bare,
                    Repaired,
                    Some("{'ok': True, 'n': 1,}"),
                    true,
                    true,
                    Reason::Valid
                ),
            ]
        );
        assert_eq!(t.candidates[0].errors, 1);
        assert_eq!(t.candidates[0].valid, Some(false));
        assert!(t.candidates[1].repairs.contains(&Repair::SingleQuotes));
    }

    #[test]
    fn prose_only_wins_nothing() {
        let opts = ExtractOptions {
            markers: Some(MarkerGrammar::ClaudeOps),
            ..ExtractOptions::default()
        };
        // (A lax `{service}` in prose still wins without a schema: a weak
        // candidate is kept for last, not dropped.)
        for text in [
            "plain prose, nothing else",
            "```bash\nif [ -f x ]; then echo ${HOME}; fi\n```\nno json",
        ] {
            let t = trace_text(text, &opts);
            assert_eq!(t.extraction.method, Method::None, "{text}");
            assert!(
                t.candidates.iter().all(|c| !c.won),
                "{text}: {:?}",
                t.candidates
            );
            assert!(
                t.candidates
                    .iter()
                    .any(|c| c.source == TraceSource::Markers && c.reason == Reason::NoMarkers)
            );
        }
    }

    #[test]
    fn none_valid_the_fewest_errors_wins_and_the_rest_have_more() {
        let schema = json!({"type": "object", "required": ["a", "b"]});
        let v = Validator::new(&schema).unwrap();
        let opts = ExtractOptions {
            validator: Some(&v),
            ..ExtractOptions::default()
        };
        let text = "{\"x\": 1} then {\"a\": 1} then not {json";
        let t = trace_text(text, &opts);
        assert_eq!(t.extraction, extract_text(text, &opts));
        let got: Vec<(bool, Reason, usize)> = t
            .candidates
            .iter()
            .map(|c| (c.won, c.reason, c.errors))
            .collect();
        assert_eq!(got[0], (false, Reason::MoreErrors, 2));
        assert_eq!(got[1], (true, Reason::FewestErrors, 1));
    }

    #[test]
    fn weak_candidates_are_listed_where_found() {
        // `["x"]` is weak: kept for last; the later object wins first.
        // `[1]` in prose is no candidate at all (Note [No structure from
        // prose] in `repair`).
        let text = "See [1]. See [\"x\"]. Then {\"a\": 1}";
        let t = trace_text(text, &ExtractOptions::default());
        let got = rows(text, &t);
        assert_eq!(got[0].2, Some("[1]"));
        assert_eq!(got[0].5, Reason::Prose);
        assert_eq!(got[1].2, Some("[\"x\"]"));
        assert!(t.candidates[1].weak);
        assert_eq!(got[1].5, Reason::WeakUnused);
        assert_eq!(got[2].2, Some("{\"a\": 1}"));
        assert_eq!(got[2].5, Reason::First);
    }

    #[test]
    fn a_run_traces_structured_then_its_pieces() {
        let mut run = RunSummary {
            output: "text {\"from\": \"output\"}".into(),
            ..RunSummary::default()
        };
        run.result = Some(ResultInfo {
            text: Some("no json here".into()),
            ..ResultInfo::default()
        });
        let opts = ExtractOptions::default();
        let t = trace_run(&run, &opts);
        assert_eq!(t.extraction.value, Some(json!({"from": "output"})));
        let last = t.candidates.last().unwrap();
        assert_eq!(last.piece, Some(Piece::Output));
        let (a, b) = last.span.unwrap();
        assert_eq!(&run.output[a..b], "{\"from\": \"output\"}");
        run.structured_output = Some(json!({"from": "structured"}));
        let t = trace_run(&run, &opts);
        assert_eq!(t.candidates.len(), 1);
        assert_eq!(t.candidates[0].source, TraceSource::Structured);
        assert!(t.candidates[0].won);
    }

    #[test]
    fn the_trace_never_changes_the_extraction() {
        let schema = json!({"type": "object", "required": ["summary"]});
        let v = Validator::new(&schema).unwrap();
        for text in [
            "",
            "[1, 2]",
            "```json\n{\"a\": 1,}\n```",
            "x {\"summary\": \"s\"} [EVENT:info] y",
            "[EVENT:critical:x] down\n[MEMORY:k:s] v",
            "{\"n\": 123456789012345678901234567890}",
        ] {
            for validator in [None, Some(&v)] {
                let opts = ExtractOptions {
                    validator,
                    markers: Some(MarkerGrammar::ClaudeOps),
                    coerce: true,
                    ..ExtractOptions::default()
                };
                let t = trace_text(text, &opts);
                assert_eq!(t.extraction, extract_text(text, &opts), "{text}");
                let won = t.candidates.iter().filter(|c| c.won).count();
                assert_eq!(
                    won,
                    usize::from(t.extraction.method != Method::None),
                    "{text}"
                );
            }
        }
    }
}
