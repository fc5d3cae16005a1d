//! What a tool call gave back ([`Outcome`]) and how its text is shown,
//! for the tool views (`tools`) and the shell view (`shell`): `tools` draws
//! a shell call with `shell`, so `shell` cannot take these from `tools`.

use std::borrow::Cow;

use maud::{Markup, html};
use serde_json::Value;

/// A tool's result, as the decoder kept it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome<'a> {
    /// The result's text (`None`: the decoder kept none).
    pub(crate) content: Option<&'a str>,
    pub(crate) is_error: bool,
}

/// The text of a result: Gemini CLI keeps a call's whole `result` (a list
/// of `functionResponse`s), whose `response.output` (or `.error`) is what
/// the tool said; every other result is its text.
pub(crate) fn result_text(content: &str) -> Cow<'_, str> {
    if !content.starts_with("[{\"functionResponse\"") {
        return Cow::Borrowed(content);
    }
    let Ok(Value::Array(parts)) = serde_json::from_str::<Value>(content) else {
        return Cow::Borrowed(content);
    };
    let said: Vec<&str> = parts
        .iter()
        .filter_map(|p| {
            let r = p.pointer("/functionResponse/response")?;
            r.get("output").or_else(|| r.get("error"))?.as_str()
        })
        .collect();
    if said.is_empty() {
        Cow::Borrowed(content)
    } else {
        Cow::Owned(said.join("\n"))
    }
}

/// `text` in a `pre` of class `class`: its first `shown` lines, the rest
/// folded under "N more lines".
pub(crate) fn clipped(text: &str, shown: usize, class: &str) -> Markup {
    let cut = text
        .match_indices('\n')
        .nth(shown.saturating_sub(1))
        .map(|(i, _)| i + 1)
        .filter(|i| *i < text.trim_end().len());
    html! {
        @if let Some(i) = cut {
            pre class=(class) { (&text[..i]) }
            details.more {
                summary { (text[i..].trim_end().lines().count()) " more lines" }
                pre class=(class) { (&text[i..]) }
            }
        } @else {
            pre class=(class) { (text) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_clipped_and_short_text_is_not() {
        let html = clipped("a\nb\nc\nd\n", 2, "out").into_string();
        assert!(
            html.starts_with(
                "<pre class=\"out\">a\nb\n</pre><details class=\"more\"><summary>2 more lines"
            ),
            "{html}"
        );
        let html = clipped("a\nb\n", 2, "out").into_string();
        assert_eq!(html, "<pre class=\"out\">a\nb\n</pre>");
    }
}
