//! Property tests of the repair policy (`docs/repair-policy.md`): valid JSON
//! values, broken the ways LLMs break them, must come back as the original
//! value or the neighbour the policy documents for that break.
//!
//! Generated values use identifier keys and strings of letters, digits and
//! spaces (no quotes or brackets inside strings; the inner-quote property
//! adds its own), so each break has one right answer.

use agentshape_core::extract::{ExtractOptions, Repair, extract_text};
use agentshape_core::validate::Validator;
use proptest::prelude::*;
use serde_json::{Map, Value};

fn ex(text: &str) -> Option<Value> {
    extract_text(text, &ExtractOptions::default()).value
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-100_000i64..100_000).prop_map(Value::from),
        (-1000i32..1000).prop_map(|n| Value::from(f64::from(n) + 0.5)),
        "[a-zA-Z][a-zA-Z0-9 ]{0,10}[a-zA-Z0-9]".prop_map(Value::String),
    ]
}

fn key() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,7}"
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A top-level answer: an object with at least one member.
fn answer() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(key(), value(), 1..5)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

/// How to write a value: each flag is one LLM habit.
#[derive(Debug, Clone, Copy, Default)]
#[allow(clippy::struct_excessive_bools)]
struct Style {
    single_quotes: bool,
    smart_quotes: bool,
    unquoted_keys: bool,
    trailing_commas: bool,
    comments: bool,
    python: bool,
    js_null: Option<&'static str>,
    ellipsis: bool,
}

fn write(v: &Value, st: Style, out: &mut String) {
    match v {
        Value::Null => out.push_str(
            st.js_null
                .unwrap_or(if st.python { "None" } else { "null" }),
        ),
        Value::Bool(b) => out.push_str(match (b, st.python) {
            (true, true) => "True",
            (false, true) => "False",
            (true, false) => "true",
            (false, false) => "false",
        }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => quoted(s, st, out),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    sep(st, out);
                }
                write(x, st, out);
            }
            if st.ellipsis && !items.is_empty() {
                out.push_str(", ...");
            }
            close(!items.is_empty(), st, ']', out);
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    sep(st, out);
                }
                if st.unquoted_keys {
                    out.push_str(k);
                } else {
                    quoted(k, st, out);
                }
                out.push_str(": ");
                write(x, st, out);
            }
            close(!m.is_empty(), st, '}', out);
        }
    }
}

fn quoted(s: &str, st: Style, out: &mut String) {
    let (open, shut) = if st.smart_quotes {
        ('\u{201c}', '\u{201d}')
    } else if st.single_quotes {
        ('\'', '\'')
    } else {
        ('"', '"')
    };
    out.push(open);
    out.push_str(s);
    out.push(shut);
}

fn sep(st: Style, out: &mut String) {
    out.push(',');
    if st.comments {
        out.push_str(" // note\n");
    } else {
        out.push(' ');
    }
}

fn close(nonempty: bool, st: Style, closer: char, out: &mut String) {
    if st.trailing_commas && nonempty {
        out.push(',');
    }
    if st.comments {
        out.push_str(" /* end */ ");
    }
    out.push(closer);
}

fn written(v: &Value, st: Style) -> String {
    let mut s = String::new();
    write(v, st, &mut s);
    s
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), Just(Some("undefined")), Just(Some("NaN"))],
        any::<bool>(),
    )
        .prop_map(|(q, smart, uk, tc, c, py, js, el)| Style {
            single_quotes: q,
            smart_quotes: smart && !q,
            unquoted_keys: uk,
            trailing_commas: tc,
            comments: c,
            python: py,
            js_null: js,
            ellipsis: el,
        })
}

const PROSE: &[&str] = &[
    "Here is the result:",
    "Sure! I checked the logs and this is what I found.",
    "Done. Summary below",
    "",
];
const AFTER: &[&str] = &[
    "",
    "Let me know if you need anything else.",
    "That's all for now!",
    "(generated in 2.3 s)",
];

/// Is `got` what a cut-off prefix of `orig` may give (Note [Truncation]):
/// a cut string keeps its start, a cut number keeps a number, a cut
/// container keeps its complete members and a prefix of the last one, and
/// a key cut before its value is dropped?
fn is_prefix_neighbour(got: &Value, orig: &Value) -> bool {
    match (got, orig) {
        (Value::String(g), Value::String(o)) => o.starts_with(g.as_str()),
        (Value::Number(_), Value::Number(_)) => true,
        (Value::Array(g), Value::Array(o)) => {
            g.len() <= o.len()
                && g.iter().zip(o).enumerate().all(|(i, (a, b))| {
                    if i + 1 == g.len() {
                        is_prefix_neighbour(a, b)
                    } else {
                        a == b
                    }
                })
        }
        (Value::Object(g), Value::Object(o)) => {
            let ok: Vec<_> = o.iter().take(g.len()).collect();
            g.len() <= o.len()
                && g.iter()
                    .zip(ok)
                    .enumerate()
                    .all(|(i, ((gk, gv), (ok, ov)))| {
                        gk == ok
                            && if i + 1 == g.len() {
                                is_prefix_neighbour(gv, ov)
                            } else {
                                gv == ov
                            }
                    })
        }
        _ => got == orig,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every LLM habit at once or in any mix, with prose around and an
    /// optional fence: the original value comes back.
    #[test]
    fn broken_styles_round_trip(
        v in answer(),
        st in style(),
        before in 0..PROSE.len(),
        after in 0..AFTER.len(),
        fence in 0..3usize,
    ) {
        let body = written(&v, st);
        // Documented neighbour (rule 13, Note [No structure from prose]):
        // outside a fence, a lax value in prose with no quoted string is
        // notation, not data: no value.
        let unquoted = !body.contains(['"', '\'', '\u{201c}']);
        let prose = !PROSE[before].is_empty() || !AFTER[after].is_empty();
        let want = if unquoted && prose && fence == 0 {
            None
        } else {
            // `...` elisions are dropped and `undefined`/`NaN` become the
            // value's own `null`: the original comes back.
            Some(v.clone())
        };
        let body = match fence {
            0 => body,
            1 => format!("```json\n{body}\n```"),
            _ => format!("```\n{body}\n```"),
        };
        let text = format!("{}\n{body}\n{}", PROSE[before], AFTER[after]);
        prop_assert_eq!(ex(&text), want, "text: {}", text);
    }

    /// Truncation at every position: nothing, or a documented neighbour
    /// of the original (never a value the text did not start to say).
    #[test]
    fn truncation_at_every_position(v in answer()) {
        let s = serde_json::to_string(&v).unwrap();
        for (i, _) in s.char_indices().skip(1) {
            let cut = &s[..i];
            if let Some(got) = ex(cut) {
                prop_assert!(is_prefix_neighbour(&got, &v), "cut: {cut:?} got: {got}");
            }
        }
        prop_assert_eq!(ex(&s), Some(v));
    }

    /// Concatenated answers: the first wins (DESIGN.md candidate order), with
    /// or without a comma or a line break between them.
    #[test]
    fn concatenated_values_take_the_first(a in answer(), b in answer(), sep in 0..3usize) {
        let sa = serde_json::to_string(&a).unwrap();
        let sb = serde_json::to_string(&b).unwrap();
        let text = match sep {
            0 => format!("{sa}{sb}"),
            1 => format!("{sa}\n{sb}"),
            _ => format!("{sa}, {sb}"),
        };
        prop_assert_eq!(ex(&text), Some(a));
    }

    /// A missing closing brace (or several) is closed; a doubled closing
    /// brace at the end is ignored.
    #[test]
    fn missing_or_doubled_closers(v in answer(), missing in any::<bool>()) {
        let s = serde_json::to_string(&v).unwrap();
        let text = if missing {
            s.trim_end_matches(['}', ']']).to_owned()
        } else {
            format!("{s}}}")
        };
        let got = ex(&text);
        if missing {
            // The closers go with whatever value was last: a neighbour.
            let got = got.expect("a value");
            prop_assert!(is_prefix_neighbour(&got, &v), "text: {text:?} got: {got}");
        } else {
            prop_assert_eq!(got, Some(v));
        }
    }

    /// Doubled braces (`{{…}}`, as a template engine escapes them): the
    /// inner object is the value.
    #[test]
    fn doubled_braces(v in answer()) {
        let s = serde_json::to_string(&v).unwrap();
        let text = format!("{{{s}}}");
        prop_assert_eq!(ex(&text), Some(v), "text: {}", text);
    }

    /// Unescaped inner quotes (a quote followed by a letter) and raw line
    /// breaks inside strings are kept as characters.
    #[test]
    fn inner_quotes_and_raw_newlines(k in key(), a in "[a-z]{1,8}", b in "[a-z]{1,8}", c in "[a-z]{1,8}") {
        let text = format!("{{\"{k}\": \"{a} \"{b}\" {c}\", \"n\": \"{a}\n{b}\"}}");
        let mut want = Map::new();
        want.insert(k, Value::String(format!("{a} \"{b}\" {c}")));
        want.insert("n".into(), Value::String(format!("{a}\n{b}")));
        prop_assert_eq!(ex(&text), Some(Value::Object(want)), "text: {}", text);
    }
}

/// What may stand between top-level values (Note [Several values] in
/// `extract::several`): whitespace, commas, comments.
const SEPARATORS: &[&str] = &[
    "\n",
    ", ",
    " ",
    "\n\n",
    ",\n",
    "\r\n",
    "\t",
    " /* next */ ",
    "\n// next\n",
    "\n# next\n",
];

/// `vs` written one after another: containers in style `st` where `lax`
/// says so, scalars always strict (a scalar of several must be). With
/// `lines`, each value starts a line (only separators ending in a line
/// break): in a fenced block, a value starting mid-line after a value of
/// several lines is not looked for (Note [Several values in a fence]).
fn several(vs: &[Value], seps: &[usize], st: Style, lax: &[bool], lines: bool) -> String {
    let usable: Vec<&str> = SEPARATORS
        .iter()
        .copied()
        .filter(|s| !lines || s.ends_with('\n'))
        .collect();
    let mut text = String::new();
    for (i, v) in vs.iter().enumerate() {
        if i > 0 {
            text.push_str(usable[seps[i % seps.len()] % usable.len()]);
        }
        let container = v.is_object() || v.is_array();
        if container && lax[i % lax.len()] {
            write(v, st, &mut text);
        } else {
            // The default style is strict JSON.
            write(v, Style::default(), &mut text);
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// k values joined by any separators (in a fence, ending in a line
    /// break): with an array schema, exactly
    /// the k values come back, in order, an array value as one item; without
    /// a schema, the first that is not empty, and a warning.
    #[test]
    fn several_values_are_collected(
        vs in proptest::collection::vec(value(), 2..7),
        seps in proptest::collection::vec(0..SEPARATORS.len(), 1..7),
        st in style(),
        lax in proptest::collection::vec(any::<bool>(), 1..7),
        fence in any::<bool>(),
    ) {
        let body = several(&vs, &seps, st, &lax, fence);
        let text = if fence { format!("Here:\n```json\n{body}\n```\n") } else { body };
        let schema = serde_json::json!({"type": "array"});
        let validator = Validator::new(&schema).unwrap();
        let opts = ExtractOptions { validator: Some(&validator), ..ExtractOptions::default() };
        let got = extract_text(&text, &opts);
        prop_assert_eq!(got.value, Some(Value::Array(vs.clone())), "text: {}", text);
        prop_assert!(got.repairs.contains(&Repair::CollectedValues), "text: {}", text);
        let got = extract_text(&text, &ExtractOptions::default());
        let empty = |v: &Value| v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty);
        let first = vs.iter().find(|v| !empty(v)).unwrap_or(&vs[0]);
        prop_assert_eq!(got.value.as_ref(), Some(first), "text: {}", text);
        prop_assert_eq!(got.warnings.len(), 1, "text: {}", text);
    }
}
