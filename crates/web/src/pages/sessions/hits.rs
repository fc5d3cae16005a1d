//! The transcript hits of a search on the Sessions page (Note \[Transcript
//! search\] and Note \[Hits in time order\] in the store's `query`): newest
//! line first, each naming its session, project and parent, and a link
//! to the next page of hits.

use agentshape_store::query::{HIT_WINDOW, Hits, TranscriptHit};
use maud::{Markup, html};

use super::{encode, truncate, truncate_start, when};
use crate::pages::usage::short_project;

/// The most characters of a parent's id shown (its link keeps it whole).
const PARENT_CHARS: usize = 13;

/// Where a hit links: its row on the session's page, the page starting at
/// it (`?after=` the row before) with the row's anchor.
pub(crate) fn hit_href(h: &TranscriptHit) -> String {
    format!(
        "/sessions/{}?after={}#row-{}",
        encode(&h.session_id),
        h.feed_id.saturating_sub(1),
        h.feed_id
    )
}

/// The hits section; `more` links to the hits after the last one.
pub(super) fn hits(q: &str, found: &Hits, more: Option<&str>) -> Markup {
    let hits = &found.hits;
    html! {
        section #transcript-hits .card data-count=(hits.len()) {
            h2 { "In transcripts" span.muted { " · text, prompts and tool names holding “" (q) "”, newest line first" } }
            @if hits.is_empty() {
                p.empty #transcript-hits-empty {
                    "No transcript line holds it."
                    @if q.chars().count() < 3 { " (A SQLite store searches transcripts for 3 characters or more.)" }
                }
            } @else {
                ol.hits {
                    @for h in hits {
                        li.hit data-session-id=(h.session_id) data-feed-id=(h.feed_id) data-at=(h.created_at) {
                            a.hit-link href=(hit_href(h)) {
                                code { (h.session_id) }
                                @if let Some(line) = h.line { " · line " (line) }
                            }
                            " " span.tag { (match h.kind.as_str() { "user_text" => "user", "tool_use" => "tool", _ => "assistant" }) }
                            " " span.mono.muted { (when(&h.created_at)) }
                            @if let Some(p) = h.project.as_deref() {
                                " " span.hit-project title=(p) { (truncate_start(&short_project(p), 40)) }
                            }
                            @if let Some(p) = h.parent_id.as_deref() {
                                " " span.hit-parent.muted {
                                    "parent "
                                    a href={ "/sessions/" (encode(p)) } title=(p) { code { (truncate(p, PARENT_CHARS)) } }
                                }
                            }
                            div.snippet { (h.before) mark { (h.hit) } (h.after) }
                        }
                    }
                }
                @if found.windowed {
                    p.note #hits-windowed {
                        "More than " (HIT_WINDOW) " lines hold it: these are the newest of the "
                        (HIT_WINDOW) " stored last. More words or a filter find older ones."
                    }
                }
                @if let Some(href) = more {
                    nav.pager { a #more-hits href=(href) { "More hits →" } }
                }
            }
        }
    }
}
