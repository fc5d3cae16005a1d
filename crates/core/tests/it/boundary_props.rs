//! Property tests of string boundaries (Note [String boundaries] in
//! `extract::repair::boundary`, rule 4 of `docs/repair-policy.md`): values
//! written with the quote damage models produce (inner quotes nobody
//! escaped, stray words after a closing quote, a closing quote lost before
//! the next key) must come back as the value that was meant.
//!
//! The generated texts hold words, spaces, commas and quotes, but no colon
//! and no bracket: a colon after a quoted word makes `"word":` a key by
//! rule, so a text holding one has two right answers.

use agentshape_core::extract::{ExtractOptions, Repair, extract_text};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn ex(text: &str) -> (Option<Value>, Vec<Repair>) {
    let e = extract_text(text, &ExtractOptions::default());
    (e.value, e.repairs)
}

fn key() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,7}"
}

fn word() -> impl Strategy<Value = String> {
    "[a-z]{1,8}"
}

/// A text of words, some with a quote glued to their start or end, joined
/// by spaces or (`commas`) also by `, `; it never starts or ends with a
/// quote (`""a` and `a""` read an empty string first by rule), nor holds
/// `a" "b` (two strings missing their comma, by rule), nor ends in a
/// quoted word (`…, d "e"` is a member that lost its colon, by rule).
fn quoted_text(commas: bool) -> impl Strategy<Value = String> {
    proptest::collection::vec((word(), 0..4u8, any::<bool>()), 1..10).prop_map(move |words| {
        let n = words.len();
        let mut out = String::new();
        let mut closed = false;
        // The word before this one followed a comma.
        let mut comma_before = false;
        for (i, (w, quote, comma)) in words.into_iter().enumerate() {
            let sep_comma = i > 0 && commas && comma;
            if i > 0 {
                out.push_str(if sep_comma { ", " } else { " " });
            }
            let after_comma = std::mem::replace(&mut comma_before, sep_comma) && i > 0;
            // `a" "b` is two strings missing their comma, and `, d "e…`
            // a member that lost its colon, by rule.
            if quote & 1 == 1 && i > 0 && i + 1 < n && !closed && !after_comma {
                out.push('"');
            }
            out.push_str(&w);
            closed = quote & 2 == 2 && i + 1 < n;
            if closed {
                out.push('"');
            }
        }
        out
    })
}

/// Writes `"k": "text"` members with the text's quotes left unescaped.
fn raw_object(members: &[(String, String)]) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("\"{k}\": \"{v}\""))
        .collect();
    format!("{{{}}}", body.join(", "))
}

fn object(members: Vec<(String, Value)>) -> Value {
    Value::Object(members.into_iter().collect::<Map<_, _>>())
}

/// Distinct keys, as a JSON object holds them.
fn members<T: Strategy>(v: T) -> impl Strategy<Value = Vec<(String, T::Value)>>
where
    T::Value: Clone,
{
    proptest::collection::btree_map(key(), v, 1..5).prop_map(|m| m.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Inner quotes anywhere in member values, with commas in the text:
    /// every quote but the real closing one is a character.
    #[test]
    fn inner_quotes_in_member_values(ms in members(quoted_text(true)), fence in any::<bool>()) {
        let body = raw_object(&ms);
        let text = if fence { format!("Here:\n```json\n{body}\n```") } else { body };
        let want = object(ms.into_iter().map(|(k, v)| (k, Value::String(v))).collect());
        let (got, _) = ex(&text);
        prop_assert_eq!(got, Some(want), "text: {}", text);
    }

    /// Inner quotes in array items (words and spaces: in an array, `", "`
    /// is where one item ends and the next starts, by rule).
    #[test]
    fn inner_quotes_in_array_items(items in proptest::collection::vec(quoted_text(false), 1..5)) {
        let body: Vec<String> = items.iter().map(|t| format!("\"{t}\"")).collect();
        let text = format!("[{}]", body.join(", "));
        let want = Value::Array(items.into_iter().map(Value::String).collect());
        let (got, _) = ex(&text);
        prop_assert_eq!(got, Some(want), "text: {}", text);
    }

    /// Words after a member's closing quote, before `,` or `}`, are stray
    /// text: dropped and reported, the members kept as written.
    #[test]
    fn stray_words_after_a_value(
        ms in members((word(), proptest::collection::vec(word(), 0..3))),
        pretty in any::<bool>(),
    ) {
        let sep = if pretty { ",\n  " } else { ", " };
        let body: Vec<String> = ms
            .iter()
            .map(|(k, (v, stray))| {
                let mut m = format!("\"{k}\": \"{v}\"");
                for s in stray {
                    m.push(' ');
                    m.push_str(s);
                }
                m
            })
            .collect();
        let text = format!("{{{}}}", body.join(sep));
        let strays = ms.iter().any(|(_, (_, s))| !s.is_empty());
        let want = object(ms.into_iter().map(|(k, (v, _))| (k, Value::String(v))).collect());
        let (got, repairs) = ex(&text);
        prop_assert_eq!(got, Some(want), "text: {}", text);
        prop_assert_eq!(repairs.contains(&Repair::StrayWord), strays, "text: {}", text);
    }

    /// A value that lost its closing quote before the next key, quoted
    /// (`"a": "text "b": …`) or bare after a comma (`"a": "text, b: …`):
    /// the value ends there and the member after it is kept.
    #[test]
    fn lost_closing_quote_before_a_key(
        a in key(),
        b in key(),
        words in proptest::collection::vec(word(), 1..6),
        next in word(),
        bare in any::<bool>(),
    ) {
        prop_assume!(a != b);
        let text_value = words.join(" ");
        let text = if bare {
            format!("{{\"{a}\": \"{text_value}, {b}: \"{next}\"}}")
        } else {
            format!("{{\"{a}\": \"{text_value} \"{b}\": \"{next}\"}}")
        };
        let want = object(vec![
            (a, Value::String(text_value)),
            (b, Value::String(next)),
        ]);
        let (got, repairs) = ex(&text);
        prop_assert_eq!(got, Some(want), "text: {}", text);
        prop_assert!(repairs.contains(&Repair::MissingQuote), "text: {}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Members with no comma between them, the next key's quote glued to
    /// the value's closing quote or after spaces: every member is kept.
    #[test]
    fn members_without_commas(ms in members(quoted_text(false)), glue in 0..3usize) {
        let sep = ["", " ", "\n"][glue];
        let body: Vec<String> = ms.iter().map(|(k, v)| format!("\"{k}\": \"{v}\"")).collect();
        let text = format!("{{{}}}", body.join(sep));
        let want = object(ms.into_iter().map(|(k, v)| (k, Value::String(v))).collect());
        prop_assert_eq!(ex(&text).0, Some(want), "text: {}", text);
    }
}

/// The examples of issue 32 §1, each with the value meant.
#[test]
fn boundary_examples() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"message": "he said "hi" to me", "ok": true}"#,
            r#"{"message": "he said \"hi\" to me", "ok": true}"#,
        ),
        (
            r#"{"a": "first, b: "second"}"#,
            r#"{"a": "first", "b": "second"}"#,
        ),
        (
            r#"["lorem "ipsum" dolor", "x"]"#,
            r#"["lorem \"ipsum\" dolor", "x"]"#,
        ),
        (r#"{"b": "xxxxx" true}"#, r#"{"b": "xxxxx"}"#),
        (
            r#"{"key": value "key2": "value2"}"#,
            r#"{"key": "value", "key2": "value2"}"#,
        ),
        ("{\"key\": \"value}```", r#"{"key": "value"}"#),
        (
            r#"{"a": "say "hi", then "bye" ok", "n": 1}"#,
            r#"{"a": "say \"hi\", then \"bye\" ok", "n": 1}"#,
        ),
        (
            r#"{"bad": ["Lorem","consectetur" comment],"good": ["elit"]}"#,
            r#"{"bad": ["Lorem", "consectetur", "comment"], "good": ["elit"]}"#,
        ),
        (
            r#"{"arr": [{"k": "v"], "k2": "v2"}"#,
            r#"{"arr": [{"k": "v"}], "k2": "v2"}"#,
        ),
        (
            r#"{"key": "Lorem "ipsum" s,"}"#,
            r#"{"key": "Lorem \"ipsum\" s,"}"#,
        ),
        // A doubled quote at the end: the first is text.
        (r#"{"a": "He said: "yes""}"#, r#"{"a": "He said: \"yes\""}"#),
        // A quotation, then the string's closing quote lost.
        (
            r#"{"k": "v", "k2": "the "quote" ends here}"#,
            r#"{"k": "v", "k2": "the \"quote\" ends here"}"#,
        ),
        (
            r#"{"a": "the "q" x, "b": 1}"#,
            r#"{"a": "the \"q\" x", "b": 1}"#,
        ),
        (
            r#"{"a": "the "q" x, b: 1}"#,
            r#"{"a": "the \"q\" x", "b": 1}"#,
        ),
    ];
    for (input, want) in cases {
        let want: Value = serde_json::from_str(want).expect("JSON");
        assert_eq!(ex(input).0, Some(want), "input: {input}");
    }
}
