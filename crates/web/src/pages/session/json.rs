//! The structured output, pretty-printed as HTML: every value sits in a
//! `span` whose `data-path` is its JSON Pointer, so a validation error (which
//! names an instance path) can point at the value it is about.
//!
//! Note \[Error anchors\]: an error's `instance_path` names a value that may
//! not exist (a missing required property names its parent's path plus
//! nothing, a `propertyNames` error names a key). Each error is resolved to
//! the nearest value that does exist (its path, else its parent's, up to the
//! root); that span gets the class `hl` and an `id` (`at-N`) that the error's
//! link targets, so the highlight works without script (`:target`) and
//! `session.js` only adds focus. Rendering goes through maud, so keys and
//! strings are escaped like every other interpolation.

use std::collections::BTreeMap;

use maud::{Markup, html};
use serde_json::Value;

/// Resolved value path → the anchor id of its span (Note \[Error anchors\]).
pub(crate) type Anchors = BTreeMap<String, String>;

/// One JSON Pointer token: `~` → `~0`, `/` → `~1` (RFC 6901).
pub(crate) fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The path of the nearest value of `root` at or above `pointer` (Note
/// \[Error anchors\]). A pointer that is not one (no leading `/`) is the root.
pub(crate) fn resolve(root: &Value, pointer: &str) -> String {
    let mut p = pointer;
    loop {
        if p.is_empty() || !p.starts_with('/') {
            return String::new();
        }
        if root.pointer(p).is_some() {
            return p.to_owned();
        }
        match p.rfind('/') {
            Some(i) => p = &p[..i],
            None => return String::new(),
        }
    }
}

/// Two spaces per level, as `serde_json`'s pretty printer.
fn pad(depth: usize) -> String {
    "  ".repeat(depth)
}

/// A JSON string literal (quotes and escapes), as text.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// `value` as indented JSON in spans (one per value, `data-path` set).
pub(crate) fn render(value: &Value, anchors: &Anchors) -> Markup {
    node(value, "", 0, anchors)
}

fn node(v: &Value, path: &str, depth: usize, anchors: &Anchors) -> Markup {
    let anchor = anchors.get(path);
    let ty = match v {
        Value::Null => "j-null",
        Value::Bool(_) => "j-bool",
        Value::Number(_) => "j-num",
        Value::String(_) => "j-str",
        Value::Array(_) => "j-arr",
        Value::Object(_) => "j-obj",
    };
    let class = if anchor.is_some() {
        format!("jv hl {ty}")
    } else {
        format!("jv {ty}")
    };
    html! {
        span class=(class) id=[anchor] data-path=(path) {
            @match v {
                Value::Object(m) if m.is_empty() => "{}",
                Value::Object(m) => {
                    "{\n"
                    @for (i, (k, x)) in m.iter().enumerate() {
                        (pad(depth + 1))
                        span.jk { (quoted(k)) }
                        ": "
                        (node(x, &format!("{path}/{}", escape_token(k)), depth + 1, anchors))
                        @if i + 1 < m.len() { "," }
                        "\n"
                    }
                    (pad(depth)) "}"
                },
                Value::Array(a) if a.is_empty() => "[]",
                Value::Array(a) => {
                    "[\n"
                    @for (i, x) in a.iter().enumerate() {
                        (pad(depth + 1))
                        (node(x, &format!("{path}/{i}"), depth + 1, anchors))
                        @if i + 1 < a.len() { "," }
                        "\n"
                    }
                    (pad(depth)) "]"
                },
                Value::String(s) => (quoted(s)),
                other => (other.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolve_finds_the_nearest_existing_value() {
        let v = json!({"a": {"b": [1, 2]}, "x/y": {"~": 3}});
        for (pointer, want) in [
            ("", ""),
            ("/a/b/1", "/a/b/1"),
            ("/a/b/7", "/a/b"),
            ("/a/missing/deeper", "/a"),
            ("/x~1y/~0", "/x~1y/~0"),
            ("/nope", ""),
            ("garbage", ""),
        ] {
            assert_eq!(resolve(&v, pointer), want, "{pointer}");
        }
    }

    #[test]
    fn every_value_has_its_pointer_and_the_text_is_the_pretty_json() {
        let v = json!({"a": [1, {"b/c": null}], "s": "t~"});
        let html = render(&v, &Anchors::new()).into_string();
        for p in [
            r#"data-path="""#,
            r#"data-path="/a""#,
            r#"data-path="/a/0""#,
            r#"data-path="/a/1""#,
            r#"data-path="/a/1/b~1c""#,
            r#"data-path="/s""#,
        ] {
            assert!(html.contains(p), "{p} in {html}");
        }
        // The text content (tags removed) is serde_json's pretty form.
        let mut text = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        let text = text.replace("&quot;", "\"");
        assert_eq!(text, serde_json::to_string_pretty(&v).unwrap());
    }

    #[test]
    fn hostile_keys_and_strings_are_text() {
        let v = json!({"<script>alert(1)</script>": "<img src=x onerror=alert(1)>"});
        let html = render(&v, &Anchors::new()).into_string();
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn anchored_paths_are_marked() {
        let v = json!({"events": [{"level": "loud"}]});
        let anchors: Anchors = [("/events/0/level".to_owned(), "at-0".to_owned())].into();
        let html = render(&v, &anchors).into_string();
        assert!(
            html.contains(r#"class="jv hl j-str" id="at-0" data-path="/events/0/level""#),
            "{html}"
        );
        assert_eq!(html.matches(" hl ").count(), 1, "{html}");
    }
}
