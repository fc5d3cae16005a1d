//! A session's header facts as text, the same in the HTML file and the
//! Markdown: agent, project, models, start, duration, tokens, cost.

use std::fmt::Write as _;

use agentshape_store::time;
use serde_json::Value;

use super::bundle::Part;

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
    let models = models(p);
    if !models.is_empty() {
        out.push(("Models", models.join(", ")));
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
        out.push(("Duration", duration(ms)));
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

/// `41 m 48 s`, `2 h 0 m 5 s`, `12 s`, `850 ms`.
pub(crate) fn duration(ms: i64) -> String {
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h} h {m} m {s} s")
    } else if m > 0 {
        format!("{m} m {s} s")
    } else {
        format!("{s} s")
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_counts_read_as_people_write_them() {
        assert_eq!(duration(2_508_000), "41 m 48 s");
        assert_eq!(duration(7_205_000), "2 h 0 m 5 s");
        assert_eq!(duration(12_400), "12 s");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(thousands(1_204_330), "1,204,330");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(-12_000), "-12,000");
    }
}
