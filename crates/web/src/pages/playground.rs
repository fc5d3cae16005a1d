//! The playground page (issue 9, item 5): paste a reply or a transcript,
//! pick a profile or a schema, see what `extract` sees.
//!
//! The server renders the shell (the form, the profile list, an optional
//! pre-filled text from `?text=`, so another page can link "try this in the
//! playground"); `assets/playground.js` posts to `/api/extract` as you type
//! and draws the answer with `textContent` only. The DOM names below are a
//! contract with the browser tests: keep them.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::{Nav, error_page, layout};
use crate::playground::profile_list;

/// The formats offered, as the CLI's `--format` spells them.
const FORMATS: &[&str] = &[
    "auto",
    "text",
    "claude",
    "codex",
    "anthropic",
    "openai-chat",
    "openai-responses",
    "ollama",
    "gemini",
];

/// The one-click examples: `(data-example, label)`; their texts live in
/// `playground.js`.
const EXAMPLES: &[(&str, &str)] = &[
    ("fenced", "Fenced reply"),
    ("broken", "Broken JSON"),
    ("markers", "Legacy markers"),
    ("invariant", "Invariant failing"),
    ("prose", "Prose only"),
];

/// `?text=&profile=&format=&coerce=`: what to pre-fill.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageQuery {
    text: Option<String>,
    profile: Option<String>,
    format: Option<String>,
    coerce: Option<String>,
}

/// `GET /playground`: the page; an unknown profile or format is 400.
pub(crate) async fn page(q: Result<Query<PageQuery>, QueryRejection>) -> Response {
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => return error_page(StatusCode::BAD_REQUEST, &e.body_text()),
    };
    let profiles = profile_list();
    let names: Vec<&str> = profiles.iter().filter_map(|p| p["name"].as_str()).collect();
    let profile = q.profile.as_deref().unwrap_or_default();
    if !profile.is_empty() && !names.contains(&profile) {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("unknown profile `{profile}` (known: {})", names.join(", ")),
        );
    }
    let format = q
        .format
        .as_deref()
        .filter(|f| !f.is_empty())
        .unwrap_or("auto");
    if !FORMATS.contains(&format) {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("unknown format `{format}` (known: {})", FORMATS.join(", ")),
        );
    }
    let coerce = matches!(q.coerce.as_deref(), Some("1" | "true" | "on" | "yes"));
    let text = q.text.as_deref().unwrap_or_default();
    let body = shell(text, profile, format, coerce, &profiles);
    layout("Playground", Nav::Playground, &["playground.js"], &body).into_response()
}

/// The page body. Every interpolation is escaped by maud.
fn shell(
    text: &str,
    profile: &str,
    format: &str,
    coerce: bool,
    profiles: &[serde_json::Value],
) -> Markup {
    html! {
        h1 { "Playground" }
        p.muted {
            "Paste an agent reply or a transcript (NDJSON) and see what "
            code { "agentshape extract" } " sees: the method that won, every candidate tried, "
            "repairs, coercions, and the errors highlighted in the value."
        }
        div.pg-examples {
            span.muted { "Examples:" }
            @for (name, label) in EXAMPLES {
                button.example.secondary type="button" data-example=(name) { (label) }
            }
        }
        div.grid2 {
            section.pg-input {
                label for="input" { "Reply or transcript" }
                textarea #input rows="22" spellcheck="false" autocomplete="off"
                    placeholder="Paste a reply or a stream-json transcript here" { (text) }
                div.pg-controls {
                    label {
                        "Profile"
                        select #profile {
                            option value="" selected[profile.is_empty()] { "none" }
                            @for p in profiles {
                                @let name = p["name"].as_str().unwrap_or_default();
                                option value=(name) selected[name == profile]
                                    title=(p["description"].as_str().unwrap_or_default()) { (name) }
                            }
                        }
                    }
                    label {
                        "Schema"
                        select #schema {
                            option value="" selected { "none" }
                            option value="builder" { "schema from the builder" }
                        }
                    }
                    label {
                        "Format"
                        select #format {
                            @for f in FORMATS {
                                option value=(f) selected[*f == format] { (f) }
                            }
                        }
                    }
                    label.pg-check {
                        input #coerce type="checkbox" checked[coerce];
                        "coerce"
                    }
                    button #run type="button" { "Extract" }
                }
                p #schema-note .muted {}
            }
            section #result .pg-result data-state="idle" {
                div.pg-verdict {
                    span #verdict .badge { "idle" }
                    " via "
                    code #method { "–" }
                    span #format-note .muted {}
                }
                p #message .bad {}
                h2 { "Value" }
                pre #value {}
                h2 { "Errors" }
                ul #errors .error-list {}
                div.grid2 {
                    div {
                        h2 { "Repairs" }
                        ul #repairs {}
                    }
                    div {
                        h2 { "Coercions" }
                        ul #coercions {}
                    }
                }
                h2 { "Candidates, in the order tried" }
                ol #candidates .pg-candidates {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped_and_the_contract_ids_are_there() {
        let hostile = "</textarea><script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
        let html = shell(hostile, "claude-ops", "claude", true, &profile_list()).into_string();
        assert!(
            html.contains("&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script>") && !html.contains("<img"));
        for id in [
            "id=\"input\"",
            "id=\"profile\"",
            "id=\"schema\"",
            "id=\"coerce\"",
            "id=\"run\"",
            "id=\"result\"",
            "data-state=\"idle\"",
            "id=\"method\"",
            "id=\"value\"",
            "id=\"errors\"",
            "id=\"repairs\"",
            "id=\"coercions\"",
            "id=\"candidates\"",
            "data-example=\"fenced\"",
            "data-example=\"broken\"",
            "data-example=\"markers\"",
            "data-example=\"prose\"",
            "<option value=\"claude-ops\" selected",
            "<option value=\"claude\" selected",
            "checked",
        ] {
            assert!(html.contains(id), "{id} missing");
        }
        // No inline script, handlers or styles (Note [CSP]).
        assert!(!html.contains("onclick") && !html.contains("<script"));
        assert!(!html.contains("style="));
    }
}
