//! A session's header facts as text, the same in the HTML file and the
//! Markdown: agent, project, models, start, duration, tokens, cost.

use std::fmt::Write as _;

use agentshape_store::time;
use serde_json::Value;

use super::bundle::Part;
use crate::pages::numbers::span;
pub(crate) use crate::pages::numbers::thousands;

/// `(label, text)` of every fact the session has, in reading order.
pub(crate) fn facts(p: &Part) -> Vec<(&'static str, String)> {
    let s = &p.session;
    let mut out = Vec::new();
    if let Some(a) = &s.agent {
        let v = s
            .agent_version
            .as_deref()
            .map_or(String::new(), |v| format!(" {v}"));
        out.push(("Agent", format!("{a}{v}")));
    }
    if let Some(pr) = &s.project {
        out.push(("Project", pr.clone()));
    }
    if let Some(b) = &s.git_branch {
        out.push(("Branch", b.clone()));
    }
    if p.models.is_empty() {
        let models = models(p);
        if !models.is_empty() {
            out.push(("Models", models.join(", ")));
        }
    } else {
        out.push(("Models", mix(&p.models)));
    }
    out.push(("Status", s.shown_status.clone()));
    out.push(("Started", s.started_at.clone()));
    if let Some(e) = &s.ended_at {
        out.push(("Ended", e.clone()));
    }
    let ms = s.duration_ms.or_else(|| {
        let end = time::parse_ms(s.ended_at.as_deref()?)?;
        Some(end - time::parse_ms(&s.started_at)?)
    });
    if let Some(ms) = ms.filter(|ms| *ms >= 0) {
        out.push(("Duration", span(ms)));
    }
    if let Some(n) = s.num_turns {
        out.push(("Turns", thousands(n)));
    }
    let mut tokens = format!(
        "{} in / {} out",
        thousands(s.input_tokens),
        thousands(s.output_tokens)
    );
    if s.cache_read_tokens > 0 || s.cache_write_tokens > 0 {
        let _ = write!(
            tokens,
            " · cache {} read / {} written",
            thousands(s.cache_read_tokens),
            thousands(s.cache_write_tokens)
        );
    }
    out.push(("Tokens", tokens));
    if let Some(c) = s.cost_usd {
        let est = if s.cost_estimated { " (estimated)" } else { "" };
        out.push(("Cost", format!("${c:.4}{est}")));
    }
    out
}

/// The models the transcript names (a row's turn model, a usage row's
/// model), in order of first use; else the session's model.
pub(crate) fn models(p: &Part) -> Vec<String> {
    fn add(out: &mut Vec<String>, m: Option<&str>) {
        if let Some(m) = m.filter(|m| !m.is_empty() && *m != "<synthetic>")
            && !out.iter().any(|x| x == m)
        {
            out.push(m.to_owned());
        }
    }
    let mut out: Vec<String> = Vec::new();
    for r in &p.rows {
        add(&mut out, r.body.get("model").and_then(Value::as_str));
        add(
            &mut out,
            r.body.pointer("/event/model").and_then(Value::as_str),
        );
    }
    if out.is_empty() {
        add(&mut out, p.session.model.as_deref());
    }
    out
}

/// The session's stored calls per model as one line: `claude-opus-4 84%
/// (24,084,464 tokens), claude-sonnet-4 10% (…)`, as the page's header.
fn mix(models: &[agentshape_store::query::usage::ModelShare]) -> String {
    let all = models
        .iter()
        .map(agentshape_store::query::usage::ModelShare::total)
        .fold(0_i64, i64::saturating_add)
        .max(1);
    models
        .iter()
        .map(|m| {
            #[allow(clippy::cast_precision_loss)]
            let pct = m.total() as f64 * 100.0 / all as f64;
            let side = if m.sidechain {
                ", inline sub-agents"
            } else {
                ""
            };
            let name = if m.model.is_empty() {
                "(unnamed)"
            } else {
                &m.model
            };
            format!("{name} {pct:.0}% ({} tokens{side})", thousands(m.total()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
