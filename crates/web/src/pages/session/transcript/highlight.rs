//! Code highlighted on the server: syntect's bundled syntaxes (on the
//! pure-Rust regex engine), written as spans named after their scopes
//! (`hl-keyword`, `hl-string`, ...) that app.css colours for light and dark.
//!
//! Note \[Highlight budget\]: highlighting is the costly part of drawing a
//! transcript (a regex engine per line), so a page highlights at most
//! [`PAGE_BUDGET`] bytes of code, blocks of at most [`MAX_BLOCK`] bytes
//! whose lines are at most [`MAX_LINE`] bytes (minified code, base64); the
//! rest is shown as plain escaped text. A page's cost stays linear in its
//! size and bounded whatever an agent printed. A block the engine gives up
//! on (its backtracking limit) is shown plain too.

use std::sync::OnceLock;

use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// Bytes of code one page highlights at most (Note \[Highlight budget\]).
pub(crate) const PAGE_BUDGET: usize = 256 * 1024;
/// A longer block is shown plain (Note \[Highlight budget\]).
const MAX_BLOCK: usize = 32 * 1024;
/// A block with a longer line is shown plain (Note \[Highlight budget\]).
const MAX_LINE: usize = 1_000;

/// What is left of a page's budget (Note \[Highlight budget\]).
#[derive(Debug)]
pub(crate) struct Budget {
    left: usize,
}

impl Budget {
    pub(crate) fn new(bytes: usize) -> Self {
        Budget { left: bytes }
    }
}

/// The bundled syntaxes, loaded once (a few milliseconds).
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// `code` as HTML: class-named spans when `lang` names a known syntax and
/// the budget allows, else escaped text. Never markup from `code` itself:
/// syntect escapes every piece of text it writes.
pub(crate) fn code(code: &str, lang: &str, budget: &mut Budget) -> String {
    highlighted(code, lang, budget).unwrap_or_else(|| escape(code))
}

fn highlighted(code: &str, lang: &str, budget: &mut Budget) -> Option<String> {
    if lang.is_empty()
        || code.len() > MAX_BLOCK
        || code.len() > budget.left
        || code.lines().any(|l| l.len() > MAX_LINE)
    {
        return None;
    }
    let set = syntaxes();
    let syntax = set.find_syntax_by_token(lang)?;
    budget.left -= code.len();
    let mut out = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        set,
        ClassStyle::SpacedPrefixed { prefix: "hl-" },
    );
    for line in LinesWithEndings::from(code) {
        out.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(out.finalize())
}

/// Text escaped for HTML element content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_language_is_spans_and_the_rest_is_escaped_text() {
        let mut b = Budget::new(PAGE_BUDGET);
        let html = code("fn main() { let s = \"<b>\"; }\n", "rust", &mut b);
        assert!(html.contains(r#"<span class="hl-"#), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert_eq!(
            code("<i>x</i>", "no-such-lang", &mut b),
            "&lt;i&gt;x&lt;/i&gt;"
        );
        assert_eq!(code("<i>", "", &mut b), "&lt;i&gt;");
    }

    #[test]
    fn the_budget_bounds_what_is_highlighted() {
        let block = "let x = 1;\n".repeat(100);
        let mut b = Budget::new(block.len() + 10);
        assert!(code(&block, "rs", &mut b).contains("<span"));
        // Spent: the next block is plain.
        assert!(!code(&block, "rs", &mut b).contains("<span"));
        let long = format!("let x = \"{}\";\n", "y".repeat(MAX_LINE));
        assert!(!code(&long, "rs", &mut Budget::new(PAGE_BUDGET)).contains("<span"));
    }
}
