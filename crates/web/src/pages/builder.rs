//! The schema builder page (issue 9, item 4; seed 002's form, whole).
//!
//! The server renders the static shell: the toolbar (open, name, save,
//! download), the output shape, title and description, the empty field
//! list, the `x-invariants` box and the preview and lint panes, with the
//! schemas of `--schemas` already in the "Open" list. `assets/builder.js`
//! does the rest in the browser: fields, the live preview, lint and the
//! invariant check through `/api/lint` and `/api/invariants`, opening and
//! saving through `/api/schemas`. The ids and classes are a contract with
//! the browser tests (see the module's tests).

use std::sync::Arc;

use axum::extract::State as AxState;
use maud::{Markup, html};

use super::{Nav, layout};
use crate::{State, builder};

/// `GET /builder`.
pub(crate) async fn page(AxState(state): AxState<Arc<State>>) -> Markup {
    let listed = builder::entries(&state).await;
    render(state.schemas.is_some(), &listed)
}

/// The page for a server with (`folder`) or without `--schemas`, and the
/// files found there (or why the folder could not be read).
fn render(folder: bool, listed: &Result<Vec<builder::Entry>, String>) -> Markup {
    let body = html! {
        h1 { "Schema builder" }
        p.muted {
            "Build the JSON Schema an agent must answer in, without writing it by hand. "
            "Every object gets " code { "additionalProperties: false" } " and lists its required "
            "fields in " code { "required" } ", as providers' strict modes expect (OpenAI strict "
            "mode wants every field required: an optional one shows in its lint below)."
        }
        section.builder-toolbar.card {
            label {
                "Open"
                select #open name="open" {
                    option value="" { "choose a schema…" }
                    @if let Ok(entries) = listed {
                        @for e in entries {
                            option value=(e.name) { (e.name) }
                        }
                    }
                }
            }
            button #open-button .secondary type="button" { "Open" }
            label {
                "File name"
                input #schema-name type="text" name="schema-name" placeholder="review.json"
                    autocomplete="off" spellcheck="false";
            }
            button #save type="button" { "Save" }
            a #download .button href="#" download="schema.json" { "Download" }
            span #save-status data-state="" {}
            @if !folder {
                p #schemas-note .muted {
                    "Saving and opening need a folder: start "
                    code { "agentshape serve --schemas DIR" } ". You can still build, lint and download."
                }
            } @else if let Err(e) = listed {
                p #schemas-note .bad { "The schema folder cannot be read: " (e) }
            }
        }
        div.grid2.builder {
            section.builder-form {
                div.card {
                    label {
                        "Output"
                        select #mode name="mode" {
                            option value="single" selected { "Single object" }
                            option value="list" { "List of items" }
                        }
                    }
                    label {
                        "Title"
                        input #schema-title type="text" name="title" autocomplete="off";
                    }
                    label {
                        "Description"
                        input #schema-description type="text" name="description" autocomplete="off";
                    }
                }
                h2 { "Fields" }
                div #fields .fields {}
                button #add-field type="button" { "Add field" }
                div #kept .kept {}
                h2 { "Invariants (" code { "x-invariants" } ")" }
                p.muted {
                    "One CEL rule per line over " code { "self" } " (the whole output), checked by "
                    code { "agentshape check" } ", for example "
                    code { "self.counts.blocker == self.findings.filter(f, f.severity == 'blocker').size()" }
                    "."
                }
                textarea #invariants name="invariants" rows="4" spellcheck="false" {}
                p #invariants-status data-ok="true" .muted { "no rules" }
            }
            section.builder-out {
                h2 { "Preview" }
                pre #preview {}
                h2 { "Lint per provider" }
                p.muted {
                    "What " code { "agentshape lint --provider P" } " reports for this schema. "
                    "When a provider rejects it as written, " code { "agentshape ask" } " sends it the "
                    code { "lint --fix" } " version (shown under each provider) and still validates "
                    "the answer against this schema."
                }
                div #lint .lint { p.muted { "Lint runs after each change." } }
            }
        }
    };
    layout("Schema builder", Nav::Builder, &["builder.js"], &body)
}

#[cfg(test)]
mod tests {
    use super::render;
    use crate::builder::Entry;

    /// The DOM contract the browser tests rely on.
    const IDS: &[&str] = &[
        "mode",
        "add-field",
        "preview",
        "lint",
        "invariants",
        "invariants-status",
        "schema-name",
        "save",
        "save-status",
        "download",
        "open",
    ];

    #[test]
    fn the_page_has_every_contract_id_and_loads_its_module() {
        let html = render(true, &Ok(Vec::new())).into_string();
        for id in IDS {
            assert!(html.contains(&format!("id=\"{id}\"")), "#{id}");
        }
        assert!(html.contains("<option value=\"single\" selected>"));
        assert!(html.contains("<option value=\"list\">"));
        assert!(html.contains("src=\"/assets/builder.js\""));
        assert!(html.contains("<pre id=\"preview\"></pre>"));
        // No inline script or style (Note [CSP]).
        assert!(!html.contains("<script>") && !html.contains("style="));
        assert!(!html.contains(" onclick=") && !html.contains(" onchange="));
    }

    #[test]
    fn schema_names_are_escaped_in_the_open_list() {
        let entries = vec![Entry {
            name: "<img src=x onerror=alert(1)>.json".to_owned(),
            size: 2,
            modified: None,
        }];
        let html = render(true, &Ok(entries)).into_string();
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;.json"));
        let html = render(true, &Err("<b>denied</b>".to_owned())).into_string();
        assert!(html.contains("&lt;b&gt;denied") && !html.contains("<b>denied"));
        let html = render(false, &Ok(Vec::new())).into_string();
        assert!(html.contains("--schemas DIR"));
    }
}
