//! An agent's Markdown (its text and thinking) as HTML that is safe to put
//! in the page.
//!
//! Note \[Safe Markdown\]: the text is an agent's, so untrusted (Note
//! \[CSP\] in `security`). Three walls:
//! 1. Raw HTML in the Markdown is never markup: an HTML block is shown as a
//!    code block and inline HTML as text, both escaped, so `<script>` or
//!    `<img onerror>` in a reply reads as what the agent wrote.
//! 2. pulldown-cmark writes the rest, and ammonia (an allow-list
//!    sanitizer) cleans its output: links only to `http`, `https` and
//!    `mailto` (a `javascript:` or `data:` link keeps its text and loses its
//!    target; relative links, which would point into this dashboard, are
//!    dropped too), every link `rel="noopener noreferrer nofollow"`, no
//!    `style` (the CSP forbids inline styles; tables' alignment is dropped),
//!    no ids, no event handlers, no images.
//! 3. The page's CSP, whatever slipped through.
//!
//! Images are not loaded (the CSP forbids other origins anyway): an image
//! becomes a link whose text is `image: ` and its alt text. A task list's
//! boxes are the characters ☐ and ☑ (ammonia drops `<input>`). A single
//! newline is a line break, as in chat replies (agents rarely mean to join
//! lines).

use std::collections::HashSet;
use std::sync::OnceLock;

use ammonia::{Builder, UrlRelative};
use maud::{Markup, PreEscaped, html};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::highlight::{self, Budget};

/// The sanitizer, configured once (Note \[Safe Markdown\]).
fn cleaner() -> &'static Builder<'static> {
    static CLEANER: OnceLock<Builder<'static>> = OnceLock::new();
    CLEANER.get_or_init(|| {
        let mut b = Builder::default();
        b.url_schemes(HashSet::from(["http", "https", "mailto"]))
            .url_relative(UrlRelative::Deny)
            .link_rel(Some("noopener noreferrer nofollow"))
            .rm_tags(["img"])
            // The highlighter's class-named spans (Note [Highlight budget]).
            .add_tag_attributes("span", ["class"])
            .add_tag_attributes("pre", ["class"]);
        b
    })
}

/// `text` as sanitized HTML in a `div.md` (Note \[Safe Markdown\]).
pub(crate) fn render(text: &str, budget: &mut Budget) -> Markup {
    html! { div.md { (PreEscaped(to_html(text, budget))) } }
}

/// The sanitized HTML of `text`.
pub(crate) fn to_html(text: &str, budget: &mut Budget) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut events: Vec<Event<'_>> = Vec::new();
    // The code block being read: its language and text.
    let mut block: Option<(String, String)> = None;
    for e in Parser::new_ext(text, opts) {
        if let Some((lang, code)) = &mut block {
            match e {
                Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => code.push_str(&t),
                Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock) => {
                    let html = highlight::code(code, lang, budget);
                    events.push(Event::Html(CowStr::from(format!(
                        "<pre class=\"code\"><code>{html}</code></pre>"
                    ))));
                    block = None;
                }
                _ => {}
            }
            continue;
        }
        match e {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
                        .find(|s| !s.is_empty())
                        .unwrap_or("")
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                block = Some((lang, String::new()));
            }
            // Raw HTML is shown as what it is (Note [Safe Markdown], wall 1).
            Event::Start(Tag::HtmlBlock) => block = Some((String::new(), String::new())),
            Event::Html(t) | Event::InlineHtml(t) => events.push(Event::Text(t)),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                events.push(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
                events.push(Event::Text(CowStr::Borrowed("image: ")));
            }
            Event::End(TagEnd::Image) => events.push(Event::End(TagEnd::Link)),
            Event::TaskListMarker(done) => {
                events.push(Event::Text(CowStr::Borrowed(if done {
                    "☑ "
                } else {
                    "☐ "
                })));
            }
            Event::SoftBreak => events.push(Event::HardBreak),
            e => events.push(e),
        }
    }
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    // pulldown-cmark ends every block with a newline; the last is noise.
    cleaner().clean(out.trim_end()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::session::transcript::highlight::PAGE_BUDGET;

    /// Every tag of `html` is one Markdown may write, with no handler,
    /// style or id, and every link goes to the web.
    pub(crate) fn assert_inert(html: &str, case: &str) {
        const TAGS: &[&str] = &[
            "a",
            "p",
            "br",
            "em",
            "strong",
            "del",
            "code",
            "pre",
            "span",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "blockquote",
            "hr",
        ];
        let mut rest = html;
        while let Some(start) = rest.find('<') {
            let len = rest[start..].find('>').expect("a closed tag");
            let tag = &rest[start + 1..start + len];
            rest = &rest[start + len + 1..];
            let name = tag
                .trim_start_matches('/')
                .split([' ', '/'])
                .next()
                .unwrap_or("");
            assert!(TAGS.contains(&name), "{case:?} gave <{tag}> in {html}");
            // Attribute names: what is outside the quoted values.
            let outside: String = tag
                .split('"')
                .step_by(2)
                .collect::<String>()
                .to_ascii_lowercase();
            for attr in outside.split_whitespace().skip(1) {
                let attr = attr.trim_end_matches('=');
                assert!(
                    ["href", "rel", "class", "title", "start"].contains(&attr),
                    "{case:?} gave {attr} in <{tag}>"
                );
            }
            if let Some(h) = tag.split("href=\"").nth(1) {
                assert!(
                    h.starts_with("https://") || h.starts_with("http://"),
                    "{case:?} gave <{tag}>"
                );
            }
        }
    }

    fn md(text: &str) -> String {
        to_html(text, &mut Budget::new(PAGE_BUDGET))
    }

    #[test]
    fn headings_lists_tables_emphasis_and_code_render() {
        let html = md("# Plan\n\n## Steps\n\n1. **bold** and *it*\n2. `x < y`\n\n\
                       | a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n~~old~~");
        for want in [
            "<h1>Plan</h1>",
            "<h2>Steps</h2>",
            "<ol>",
            "<strong>bold</strong>",
            "<em>it</em>",
            "<code>x &lt; y</code>",
            "<table>",
            "<th>a</th>",
            "<td>2</td>",
            "☑ done",
            "☐ todo",
            "<del>old</del>",
        ] {
            assert!(html.contains(want), "{want} in {html}");
        }
        assert!(!html.contains("**"), "{html}");
        // Alignment would be an inline style, which the CSP forbids.
        assert!(!html.contains("style"), "{html}");
        assert!(!html.contains("<input"), "{html}");
    }

    #[test]
    fn a_fenced_block_is_highlighted_and_a_line_break_kept() {
        let html = md("Run:\nthis\n\n```rust\nlet x = \"<b>\";\n```\n");
        assert!(html.contains("Run:<br>"), "{html}");
        assert!(
            html.contains(r#"<pre class="code"><code><span class="hl-"#),
            "{html}"
        );
        assert!(html.contains("&lt;b&gt;"), "{html}");
        let plain = md("```\n<script>alert(1)</script>\n```");
        assert!(
            plain.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{plain}"
        );
    }

    /// Note [Safe Markdown]: every Markdown-borne payload is inert.
    #[test]
    fn markdown_borne_payloads_are_neutralised() {
        let cases = [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](  javascript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](&#106;avascript:alert(1))",
            "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "[x](vbscript:msgbox(1))",
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "![alt](https://example.com/x.png)",
            "![alt](javascript:alert(1))",
            "<a href=\"data:text/html,<script>alert(1)</script>\">d</a>",
            "<a href=\"javascript:alert(1)\">j</a>",
            "<javascript:alert(1)>",
            "<https://example.com/a>",
            "<div onclick=\"alert(1)\">\n\nhi\n\n</div>",
            "<svg onload=alert(1)>",
            "<iframe src=\"https://example.com\"></iframe>",
            "<style>body{display:none}</style>",
            "[x](/sessions/other)",
            "[x]: javascript:alert(1)\n\n[x]",
            "\"><svg onload=alert(1)>",
            "`<script>` and <b onmouseover=alert(1)>b</b>",
        ];
        for case in cases {
            let html = md(case);
            assert_inert(&html, case);
            for a in html.split("<a ").skip(1) {
                assert!(
                    a.contains("rel=\"noopener noreferrer nofollow\""),
                    "{case:?}: {html}"
                );
            }
        }
        // Raw HTML reads as written.
        assert!(md("<script>alert(1)</script>").contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            md("a <img src=x onerror=alert(1)> b").contains("&lt;img src=x onerror=alert(1)&gt;")
        );
        // An image is a link, never loaded.
        let img = md("![a cat](https://example.com/cat.png)");
        assert!(
            img.contains(r#"href="https://example.com/cat.png""#),
            "{img}"
        );
        assert!(img.contains("image: a cat</a>"), "{img}");
        // An autolink to the web stays a link.
        assert!(md("<https://example.com/a>").contains(r#"href="https://example.com/a""#));
    }
}
