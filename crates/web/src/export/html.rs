//! The export as one self-contained HTML page (Note \[Export\]): inline
//! CSS, no script, a CSP that lets nothing load, the rows drawn by the
//! session page's own `transcript::lines`.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::bundle::{Bundle, Part};
use super::facts::{facts, models, thousands};
use crate::pages::session::session_href;
use crate::pages::session::transcript::{self, Row};

/// The file's policy: nothing from anywhere, styles only from the file
/// itself, images only inline. No `script-src`: `default-src 'none'`
/// forbids every script.
pub(crate) const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The dashboard's stylesheet, as the page has it.
const APP_CSS: &str = include_str!("../../assets/app.css");

/// What a file needs beyond the page's stylesheet: sub-agent blocks, a
/// footer, and print (light colours; folded parts printed open where the
/// browser supports `::details-content`, Note \[Export\]).
const EXPORT_CSS: &str = r"
body.export main { max-width: 1100px; }
.export details.sub-agent { margin: .5rem 0 .5rem .8rem; padding: .2rem 0 .2rem .7rem;
  border-left: 3px solid var(--accent); }
.export details.sub-agent > summary { cursor: pointer; padding: .2rem 0; }
.export details.sub-agent > .transcript { margin-top: .4rem; }
.export .tag { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.export footer { margin-top: 2rem; font-size: 12px; }
@media print {
  :root { --bg: #fff; --fg: #000; --card: #fff; --code: #f3f3f3; --line: #ccc; --muted: #555; }
  body { font-size: 11px; }
  main { padding: 0; max-width: none; }
  details::details-content { content-visibility: visible; display: contents; }
  a { color: inherit; }
}
";

/// The whole page.
pub(crate) fn render(b: &Bundle) -> String {
    let s = &b.root.session;
    let (_, rest) = b.placed(&b.root);
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="referrer" content="no-referrer";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={ "agentshape " (env!("CARGO_PKG_VERSION")) };
                // No icon, said explicitly, so a browser asks for none.
                link rel="icon" href="data:,";
                title { "Session " (s.id) " · agentshape" }
                style { (PreEscaped(APP_CSS)) (PreEscaped(EXPORT_CSS)) }
            }
            body.export {
                main {
                    section.export-session id={ "session-" (anchor(&s.id)) }
                        data-session-id=(s.id) {
                        h1 { "Session " code.session-id { (s.id) } }
                        (facts_list(&b.root))
                        @if let Some(sum) = &s.summary { p #summary { (sum) } }
                        @if s.error.is_some() || s.error_category.is_some() {
                            p #session-error .bad {
                                @if let Some(c) = &s.error_category { span.badge { (c) } " " }
                                (s.error.as_deref().unwrap_or(""))
                            }
                        }
                        h2 { "Transcript" }
                        (source_note(&b.root))
                        div #transcript .transcript { (transcript_of(b, &b.root, Rest::Separate)) }
                        @if !rest.is_empty() {
                            h2 { "Sub-agents" }
                            div #sub-agents { @for c in rest { (sub_agent(b, c)) } }
                        }
                        @if b.tree_cut {
                            p.muted { "Only the first " (agentshape_store::query::MAX_TREE) " sessions below this one are included." }
                        }
                        footer.muted {
                            "Exported from an agentshape store by agentshape " (env!("CARGO_PKG_VERSION"))
                            ": the session's facts and transcript as stored, secrets masked as the store masked them. "
                            "This file runs no script and loads nothing."
                        }
                    }
                }
            }
        }
    };
    local_links(b, page.into_string())
}

/// An id as it appears in `/sessions/<id>` (percent-encoded, so safe in an
/// attribute and a fragment).
fn anchor(id: &str) -> String {
    session_href(id).trim_start_matches("/sessions/").to_owned()
}

/// Links to a session the file holds point into the file, not to a
/// dashboard that is not there.
fn local_links(b: &Bundle, mut page: String) -> String {
    for p in std::iter::once(&b.root).chain(&b.subs) {
        let href = format!("href=\"{}\"", session_href(&p.session.id));
        if page.contains(&href) {
            page = page.replace(
                &href,
                &format!("href=\"#session-{}\"", anchor(&p.session.id)),
            );
        }
    }
    page
}

fn facts_list(p: &Part) -> Markup {
    html! {
        dl.facts {
            @for (label, text) in facts(p) {
                dt { (label) }
                @match label {
                    "Project" => dd .mono .project { (text) },
                    _ => dd { (text) },
                }
            }
        }
    }
}

fn source_note(p: &Part) -> Markup {
    html! {
        @if p.from_log || p.truncated || p.rows.is_empty() {
            p.muted.transcript-source {
                @if p.rows.is_empty() {
                    @if p.session.parent_id.is_some() && p.session.source_path.is_some() {
                        "No rows of its own: its lines are in its parent's transcript."
                    } @else {
                        "No transcript stored."
                    }
                } @else if p.from_log {
                    "Decoded from the forensic log (this session has no feed rows)."
                }
                @if p.truncated {
                    " The forensic log is longer than a transcript reads; its end is not shown."
                }
            }
        }
    }
}

/// Where a part's children that its rows do not place go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// In the page's "Sub-agents" section (the exported session's).
    Separate,
    /// At the end of its own transcript (a sub-agent's).
    AtEnd,
}

/// `p`'s rows with each placed child's block before the row it goes
/// before (Note \[Export\]).
fn transcript_of(b: &Bundle, p: &Part, rest: Rest) -> Markup {
    let (placed, unplaced) = b.placed(p);
    let mut segments: Vec<(&[Row], Option<&Part>)> = Vec::with_capacity(placed.len() + 1);
    let mut start = 0;
    for (i, c) in placed {
        segments.push((&p.rows[start..i], Some(c)));
        start = i;
    }
    segments.push((&p.rows[start..], None));
    html! {
        @for (rows, child) in segments {
            (transcript::lines(rows))
            @if let Some(c) = child { (sub_agent(b, c)) }
        }
        @if rest == Rest::AtEnd {
            @for c in unplaced { (sub_agent(b, c)) }
        }
    }
}

/// One sub-agent, folded: its facts in the summary, its transcript inside.
fn sub_agent(b: &Bundle, c: &Part) -> Markup {
    let s = &c.session;
    // The tree is at most `MAX_TREE_DEPTH` deep; a deeper part is a cycle.
    let deeper = c.depth <= agentshape_store::query::MAX_TREE_DEPTH;
    html! {
        details.sub-agent id={ "session-" (anchor(&s.id)) } data-session-id=(s.id) data-depth=(c.depth) {
            summary {
                span.tag { "sub-agent" } " " code { (s.id) }
                @let m = models(c);
                @if !m.is_empty() { " · " span.model { (m.join(", ")) } }
                " · " (thousands(s.input_tokens)) " in / " (thousands(s.output_tokens)) " out"
                @if let Some(cost) = s.cost_usd { " · " (format!("${cost:.4}")) }
                @if let Some(sum) = &s.summary { br; span.muted { (sum) } }
            }
            (facts_list(c))
            (source_note(c))
            @if deeper {
                div.transcript { (transcript_of(b, c, Rest::AtEnd)) }
            }
        }
    }
}
