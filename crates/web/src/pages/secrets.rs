//! The overview's "Secrets" panel (issue 29): the newest secrets masked,
//! by rule, session and when; never the secret (the store never has it).

use agentshape_store::query::SecretRow;
use maud::{Markup, html};

use super::sessions::{encode, when};

/// Rows the panel lists.
pub(crate) const SHOWN: usize = 20;

/// The panel.
pub(crate) fn panel(rows: &[SecretRow]) -> Markup {
    html! {
        h2 { "Secrets" span.muted { " · masked before they were stored; rotate them" } }
        @if rows.is_empty() {
            p #secrets-empty .empty { "No secrets masked yet." }
        } @else {
            table #secrets {
                thead { tr { th { "When" } th { "Rule" } th { "Session" } th { "Where" } th { "Fingerprint" } } }
                tbody {
                    @for r in rows {
                        tr {
                            td.mono { (when(&r.created_at)) }
                            td { (r.rule) }
                            td.mono { a href={ "/sessions/" (encode(&r.session_id)) } { (r.session_id) } }
                            td { (r.place) }
                            td.mono { (r.fingerprint) }
                        }
                    }
                }
            }
        }
    }
}
