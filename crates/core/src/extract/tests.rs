//! Table tests for the extract chain and the tolerant parser.

use serde_json::{Value, json};

use super::Repair::*;
use super::*;
use crate::summary::ResultInfo;

fn ex(text: &str) -> Extraction {
    extract_text(text, &ExtractOptions::default())
}

/// (input, expected value, method, repairs)
type Row = (&'static str, Value, Method, &'static [Repair]);

fn check(rows: &[Row]) {
    for (input, want, method, repairs) in rows {
        let got = ex(input);
        let want_value = if want.is_null() && *method == Method::None {
            None
        } else {
            Some(want.clone())
        };
        assert_eq!(got.value, want_value, "value, input: {input:?}");
        assert_eq!(got.method, *method, "method, input: {input:?}");
        assert_eq!(got.repairs, *repairs, "repairs, input: {input:?}");
        assert_eq!(got.valid, got.value.is_some(), "valid, input: {input:?}");
    }
}

#[test]
fn repair_table() {
    use Method::Repaired as R;
    #[rustfmt::skip]
    let rows: &[Row] = &[
        (r#"{"a": 1,}"#, json!({"a": 1}), R, &[TrailingComma]),
        ("[1, 2,]", json!([1, 2]), R, &[TrailingComma]),
        (r#"{"a": [1,,2]}"#, json!({"a": [1, 2]}), R, &[TrailingComma]),
        (r"{'a': 'b'}", json!({"a": "b"}), R, &[SingleQuotes]),
        (r"{'a': 'it\'s'}", json!({"a": "it's"}), R, &[SingleQuotes]),
        (r#"{"a": "it's"}"#, json!({"a": "it's"}), Method::Bare, &[]),
        (r#"{summary: "x", n_2: 1}"#, json!({"summary": "x", "n_2": 1}), R, &[UnquotedKey]),
        (r#"{"a": True, "b": False, "c": None}"#, json!({"a": true, "b": false, "c": null}), R, &[PythonLiteral]),
        (r"{'a': True, 'b': None, 'c': [1, 'x']}", json!({"a": true, "b": null, "c": [1, "x"]}), R, &[SingleQuotes, PythonLiteral]),
        (r#"{"a": undefined, "b": NaN, "c": Infinity, "d": -Infinity}"#, json!({"a": null, "b": null, "c": null, "d": null}), R, &[JsLiteral]),
        ("{\"a\": 1, // note\n\"b\": 2}", json!({"a": 1, "b": 2}), R, &[Comment]),
        ("{\"a\": 1, /* note */ \"b\": 2}", json!({"a": 1, "b": 2}), R, &[Comment]),
        ("{\"a\": 1, # note\n\"b\": 2}", json!({"a": 1, "b": 2}), R, &[Comment]),
        ("{\"u\": \"https://x.example/a//b\" // c\n}", json!({"u": "https://x.example/a//b"}), R, &[Comment]),
        ("{\"a\": \"line1\nline2\tx\"}", json!({"a": "line1\nline2\tx"}), R, &[RawControlCharInString]),
        (r#"{"a": "say "hi" now"}"#, json!({"a": "say \"hi\" now"}), R, &[UnescapedQuote]),
        ("{\"a\": 1\n\"b\": 2}", json!({"a": 1, "b": 2}), R, &[MissingComma]),
        (r#"[1 2 "x"]"#, json!([1, 2, "x"]), R, &[MissingComma]),
        (r#"{"a" 1}"#, json!({"a": 1}), R, &[MissingColon]),
        (r#"{"a": "hel"#, json!({"a": "hel"}), R, &[Truncated]),
        (r#"{"a": [1, {"b": 2"#, json!({"a": [1, {"b": 2}]}), R, &[Truncated]),
        (r#"{"a": 1, "b"#, json!({"a": 1}), R, &[Truncated, DanglingKeyDropped]),
        (r#"{"a": 1, "b":"#, json!({"a": 1}), R, &[DanglingKeyDropped, Truncated]),
        (r#"{"a": 1,"#, json!({"a": 1}), R, &[TrailingComma, Truncated]),
        (r#"{"hours": 30.0"#, json!({"hours": 30.0}), R, &[Truncated]),
        (r#"{"n": 1."#, json!({"n": 1.0}), R, &[Truncated]),
        (r#"{"n": 2e"#, json!({"n": 2.0}), R, &[Truncated]),
        ("[2e, -, 1.]", json!([2.0, 0, 1.0]), R, &[IncompleteNumber]),
        (r#"{"zip": 0789, "n": -05}"#, json!({"zip": "0789", "n": "-05"}), R, &[UnquotedString]),
        (r#"{"v": 1_234.5_6, "n": [-1_000, 2_0e1_0], "w": 1__2, "x": 12_}"#, json!({"v": 1234.56, "n": [-1000, 20e10], "w": "1__2", "x": "12_"}), R, &[DigitSeparator, UnquotedString]),
        (r#"{"_id": ObjectId("5f1"), "d": new Date('2024-01-01'), "n": NumberLong( 2 ), "c": Foo(x), "f": print("x")}"#, json!({"_id": "5f1", "d": "2024-01-01", "n": 2, "c": "Foo(x)", "f": "print(\"x\")"}), R, &[WrapperCall, SingleQuotes, UnquotedString]),
        (r#"{"a": true, COMMENT "b": "x", note 'c' : 1, d "e", f: 2}"#, json!({"a": true, "b": "x", "c": 1, "d": "e", "f": 2}), R, &[StrayWord, SingleQuotes, UnquotedKey, MissingColon]),
        (r"{text: words{in braces}m, b: x{y, c: 1}", json!({"text": "words{in braces}m", "b": "x{y", "c": 1}), R, &[UnquotedKey, UnquotedString]),
        ("{`a´: `b`, `c`: `it's ´x´`}", json!({"a": "b", "c": "it's ´x´"}), R, &[BacktickQuotes, UnescapedQuote]),
        (r#"{"k": ["a"], ["b", "c"], "rows": [["x", 1], "y", 2], ["z", 3]]}"#, json!({"k": ["a", "b", "c"], "rows": [["x", 1], ["y", 2], ["z", 3]]}), R, &[ArrayContinued, MismatchedBracket]),
        (r#"{"a": 1}, "b" "x"}, "c": {"d": 2}, "e": 3} then"#, json!({"a": 1, "b": "x", "c": {"d": 2}, "e": 3}), R, &[ExtraCloser, MissingColon]),
        (r#"Use {"a": 1}, "b", then"#, json!({"a": 1}), Method::Bare, &[]),
        (r#"{"key:"value", "n:"2, "t:": 1}"#, json!({"key": "value", "n": 2, "t:": 1}), R, &[MissingQuote, UnquotedString]),
        ("{\"key_1\n \": 1, \"k\\n\": 2, \"s \": 3}", json!({"key_1": 1, "k\n": 2, "s ": 3}), R, &[RawControlCharInString]),
        (r#"{"k"e"y": "v", "a"b: 1, "c"d" 2}"#, json!({"k\"e\"y": "v", "a": "b: 1", "c": "d\" 2"}), R, &[UnescapedQuote, MissingColon, UnquotedString]),
        (r#"{"r": 12345/67890, "t": 12:30}"#, json!({"r": "12345/67890", "t": "12:30"}), R, &[UnquotedString]),
        // Note [Missing quotes]
        (r#"{"name": "John", "city": "New York, "gender": "male"}"#, json!({"name": "John", "city": "New York", "gender": "male"}), R, &[MissingQuote]),
        (r#"{"url": "https://x.example/,"id": 2}"#, json!({"url": "https://x.example/", "id": 2}), R, &[MissingQuote]),
        ("[\"abc,\n\"def\"\n]", json!(["abc", "def"]), R, &[MissingQuote]),
        (r#"["abc,/* c */ "def", "x, /*y*/ z"]"#, json!(["abc", "def", "x, /*y*/ z"]), R, &[MissingQuote, Comment]),
        (r#"{"a": ipsum, sic, datum.", "b": x, "c": y}"#, json!({"a": "ipsum, sic, datum.", "b": "x", "c": "y"}), R, &[MissingQuote, UnquotedString]),
        (r#"{"a": "He said, "hi" to me"}"#, json!({"a": "He said, \"hi\" to me"}), R, &[UnescapedQuote]),
        (r#"{"a": "b}"#, json!({"a": "b"}), R, &[MissingQuote]),
        (r#"{"key": ["value]}"#, json!({"key": ["value"]}), R, &[MissingQuote]),
        ("[\"abc  ]\n", json!(["abc"]), R, &[MissingQuote]),
        (r#"{"s": "Restarted {svc}"#, json!({"s": "Restarted {svc}"}), R, &[Truncated]),
        (r#"{"a": {"b": "x]"#, json!({"a": {"b": "x]"}}), R, &[Truncated]),
        (r#"{ "w": abcdef", "n": 12345" }"#, json!({"w": "abcdef", "n": 12345}), R, &[UnquotedString, MissingQuote]),
        (r#"{"a":"foo",b":"bar"}"#, json!({"a": "foo", "b": "bar"}), R, &[UnquotedKey, MissingQuote]),
        (r#"["a" 2]"#, json!(["a", 2]), R, &[MissingComma]),
        ("{\"k\": \"v, w\"```", json!({"k": "v, w"}), R, &[MissingComma, UnexpectedChar, Truncated]),
        // Mismatched closers: a typo when a comma follows and the next token fits the parent.
        (r#"{"k1": ["a", "b"}, "k2": ["c"]}"#, json!({"k1": ["a", "b"], "k2": ["c"]}), R, &[MismatchedBracket]),
        (r#"{"arr": [{"k": "v"], "k2": "v2"}"#, json!({"arr": [{"k": "v"}], "k2": "v2"}), R, &[MismatchedBracket]),
        // Smart quotes, Unicode spaces, URLs and regexes, tuples, escaped JSON.
        ("{‘a’: ‘it’s’}", json!({"a": "it’s"}), R, &[SmartQuotes, UnescapedQuote]),
        ("{“a” “b”}", json!({"a": "b"}), R, &[SmartQuotes, MissingColon]),
        ("{\"a\":\u{a0}\"foo\",\u{200b}\"b\": 1}", json!({"a": "foo", "b": 1}), R, &[UnicodeWhitespace]),
        ("{url: https://x.example/a, re: /a+b/}", json!({"url": "https://x.example/a", "re": "/a+b/"}), R, &[UnquotedKey, UnquotedString]),
        (r#"{"c": (1, 2), "e": (), "s": (3)}"#, json!({"c": [1, 2], "e": [], "s": 3}), R, &[PythonTuple]),
        (r#"{"s": {'a', 'b', "c"}, "k": {"x", "y": 1}}"#, json!({"s": ["a", "b", "c"], "k": {"y": 1}}), R, &[SingleQuotes, PythonSet, DanglingKeyDropped]),
        (r#"{\"key\": \"va\\\"l\"}"#, json!({"key": "va\"l"}), R, &[EscapedJson]),
        ("{\n \"c\": [\n  {\"a\": 1},\n  // b ]\n  {\"a\": 2}\n ]\n}", json!({"c": [{"a": 1}, {"a": 2}]}), R, &[Comment]),
        (r#"{"a": "x\"#, json!({"a": "x"}), R, &[Truncated]),
        (r#"{"a": 1]"#, json!({"a": 1}), R, &[MismatchedBracket]),
        (r#"Here: {"a": "b",} thanks"#, json!({"a": "b"}), R, &[TrailingComma]),
        (r#"{"a": "b" "#, json!({"a": "b"}), R, &[Truncated]),
        (r#"{"a": "\x41"}"#, json!({"a": "x41"}), R, &[InvalidEscape]),
        (r#"{"a": "\ud83d\ude00"}"#, json!({"a": "😀"}), Method::Bare, &[]),
        // docs/repair-policy.md rules 4, 9, 10, 14, 15
        (r#"{"a": "first, b: 1}"#, json!({"a": "first", "b": 1}), R, &[MissingQuote, UnquotedKey]),
        ("[tru", json!([true]), R, &[Truncated]),
        ("{\"a\": [1, nu", json!({"a": [1, null]}), R, &[Truncated]),
        ("{ ... }", json!({}), R, &[EllipsisDropped]),
        ("{\"a\": \"hello\n\"}", json!({"a": "hello"}), R, &[RawControlCharInString]),
        (r#"{{"a": 1}}"#, json!({"a": 1}), R, &[DoubledBrace]),
        ("```json\n(1, 2)\n```", json!([1, 2]), R, &[PythonTuple]),
    ];
    check(rows);
}

#[test]
fn candidate_order_table() {
    use Method::{Bare, Fenced, Repaired};
    #[rustfmt::skip]
    let rows: &[Row] = &[
        ("  {\"a\": 1}\n", json!({"a": 1}), Bare, &[]),
        ("[1, 2, 3]", json!([1, 2, 3]), Bare, &[]),
        ("Here is the result: [{\"a\": 1}] ok", json!([{"a": 1}]), Bare, &[]),
        ("Sure:\n```json\n{\"a\": 1}\n```\nDone.", json!({"a": 1}), Fenced, &[]),
        ("```json\n{\"a\": 1}\n```\nfix:\n```JSON\n{\"a\": 2}\n```", json!({"a": 2}), Fenced, &[]),
        ("```json\n{\"a\": 1}\n```\n```bash\nls\n```\n```json\n{\"a\": 3}\n```", json!({"a": 3}), Fenced, &[]),
        ("```\n{\"u\": 1}\n```\n```json\n{\"j\": 1}\n```", json!({"j": 1}), Fenced, &[]),
        ("```\n{\"u\": 1}\n```\n```\n{\"u\": 2}\n```", json!({"u": 2}), Fenced, &[]),
        ("I filled the {service} and {status} placeholders.\n\n```json\n{\"a\": 1}\n```", json!({"a": 1}), Fenced, &[]),
        ("See [1] and {service}. Then {\"a\": 1}", json!({"a": 1}), Bare, &[]),
        ("first {\"a\": 1} then {\"a\": 2}", json!({"a": 1}), Bare, &[]),
        ("x {\"s\": \"} [ {\"} y", json!({"s": "} [ {"}), Bare, &[]),
        ("```json\n{\"r\": \"Run:\\n```bash\\nls\\n```\\nok\"}\n```\nbye", json!({"r": "Run:\n```bash\nls\n```\nok"}), Fenced, &[]),
        ("Prose.\n\n```json\n{\"a\": [1, {\"b\": \"cu", json!({"a": [1, {"b": "cu"}]}), Repaired, &[Truncated]),
        ("```json\nnot json at all\n```\n{\"a\": 1}", json!({"a": 1}), Bare, &[]),
        ("```json\n{\"a\": 1,}\n```", json!({"a": 1}), Repaired, &[TrailingComma]),
        ("```bash\nif [ -f x ]; then echo ${HOME}; fi\n```\nno json", Value::Null, Method::None, &[]),
        ("plain prose with no json", Value::Null, Method::None, &[]),
        ("", Value::Null, Method::None, &[]),
        // Note [No structure from prose]
        ("See [1].", Value::Null, Method::None, &[]),
        ("The answer uses the {placeholder} syntax [citation needed].", Value::Null, Method::None, &[]),
        ("The set {x | x > 0} and ${HOME} and {{name}}", Value::Null, Method::None, &[]),
        ("The result: {\"a\": 1} as asked", json!({"a": 1}), Bare, &[]),
        ("callback_123({});", json!({}), Bare, &[]),
        // Note [Whole-reply scalars], [Quoted speech]
        ("\"The TV is 72\"\"", json!("The TV is 72\""), Repaired, &[UnescapedQuote]),
        ("\"a\" + \"b\"", json!("ab"), Repaired, &[StringConcatenation]),
        ("nul", Value::Null, Repaired, &[Truncated]),
        ("12.5e", json!(12.5), Repaired, &[Truncated]),
        ("000789", json!("000789"), Repaired, &[UnquotedString]),
        ("\"Done,\" she said, \"is better.\"", Value::Null, Method::None, &[]),
        ("'Tis the season", Value::Null, Method::None, &[]),
        ("hello world", Value::Null, Method::None, &[]),
    ];
    check(rows);
}

#[test]
fn schema_picks_the_valid_candidate() {
    let schema =
        json!({"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}});
    let v = Validator::new(&schema).unwrap();
    let opts = ExtractOptions {
        validator: Some(&v),
        markers: None,
        coerce: true,
        ..ExtractOptions::default()
    };
    // The last json fence is tried first but is invalid; the earlier one validates.
    let text = "```json\n{\"ok\": true}\n```\n```json\n{\"nope\": 1}\n```";
    let got = extract_text(text, &opts);
    assert_eq!(got.value, Some(json!({"ok": true})));
    assert!(got.valid && got.errors.is_empty());
    // None validates: the one with the fewest errors, with its errors.
    let text = "{\"ok\": 3} and {\"ok\": \"x\", \"more\": 1}";
    let got = extract_text(text, &opts);
    assert_eq!(got.value, Some(json!({"ok": 3})));
    assert!(!got.valid);
    assert_eq!(got.errors.len(), 1);
    assert_eq!(got.errors[0].instance_path, "/ok");
    // Nothing at all.
    let got = extract_text("nothing", &opts);
    assert_eq!(got.method, Method::None);
    assert!(!got.valid);
}

#[test]
fn markers_fallback_and_preference() {
    let text = "Checked jellyfin.\n[EVENT:critical:jellyfin] HTTP 502\n[MEMORY:timing:jellyfin] slow restart";
    let opts = ExtractOptions {
        validator: None,
        markers: Some(MarkerGrammar::ClaudeOps),
        coerce: false,
        ..ExtractOptions::default()
    };
    let got = extract_text(text, &opts);
    assert_eq!(got.method, Method::Markers);
    assert_eq!(
        got.value.as_ref().unwrap()["events"][0]["service"],
        "jellyfin"
    );
    assert_eq!(
        got.value.as_ref().unwrap()["memories"][0]["key"],
        "jellyfin:timing"
    );
    // Without markers enabled, the bracketed marker is words in brackets
    // inside prose: no structured output (Note [No structure from prose]).
    let got = ex(text);
    assert_eq!(got.method, Method::None);
    // JSON wins over markers without a schema.
    let text2 = format!("{text}\n{{\"summary\": \"s\"}}");
    assert_eq!(extract_text(&text2, &opts).method, Method::Bare);
    // With a schema: the JSON is invalid, the markers validate: markers win.
    let schema = json!({"type": "object", "required": ["summary", "events", "escalation", "services_checked"]});
    let v = Validator::new(&schema).unwrap();
    let opts = ExtractOptions {
        validator: Some(&v),
        ..opts
    };
    let got = extract_text(&text2, &opts);
    assert_eq!(got.method, Method::Markers);
    assert!(got.valid);
}

#[test]
fn markers_value_validates_against_agent_response() {
    let schema: Value =
        serde_json::from_str(include_str!("../../../../schemas/agent-response.json")).unwrap();
    let v = Validator::new(&schema).unwrap();
    let text =
        "Checked all.\n[EVENT:warning] disk\n[EVENT:info:x] ok\n[MEMORY:a:b] c\n[MEMORY:d] e";
    let opts = ExtractOptions {
        validator: Some(&v),
        markers: Some(MarkerGrammar::ClaudeOps),
        coerce: false,
        ..ExtractOptions::default()
    };
    let got = extract_text(text, &opts);
    assert_eq!(got.method, Method::Markers);
    assert!(got.valid, "{:?}", got.errors);
}

#[test]
fn run_order() {
    let opts = ExtractOptions::default();
    let mut run = RunSummary {
        output: "text {\"from\": \"output\"}".into(),
        ..RunSummary::default()
    };
    assert_eq!(
        extract_run(&run, &opts).value,
        Some(json!({"from": "output"}))
    );
    run.result = Some(ResultInfo {
        text: Some("```json\n{\"from\": \"result\"}\n```".into()),
        ..ResultInfo::default()
    });
    let got = extract_run(&run, &opts);
    assert_eq!(
        (got.value, got.method),
        (Some(json!({"from": "result"})), Method::Fenced)
    );
    run.structured_tool_input = Some(json!({"from": "tool"}));
    assert_eq!(
        extract_run(&run, &opts).value,
        Some(json!({"from": "tool"}))
    );
    run.structured_output = Some(json!({"from": "structured"}));
    let got = extract_run(&run, &opts);
    assert_eq!(
        (got.value, got.method),
        (Some(json!({"from": "structured"})), Method::Structured)
    );
    // Markers over the output when no JSON: loop sigils.
    let run = RunSummary {
        output: "working\nWORKER_SUCCESS: US-1".into(),
        ..RunSummary::default()
    };
    let opts = ExtractOptions {
        markers: Some(MarkerGrammar::ClaudeLoop),
        ..opts
    };
    let got = extract_run(&run, &opts);
    assert_eq!(
        (got.value, got.method),
        (
            Some(json!({"action": "complete", "story_id": "US-1"})),
            Method::Markers
        )
    );
}

#[test]
fn adversarial_inputs_are_linear_and_safe() {
    for s in [
        "[".repeat(1 << 20),
        "{".repeat(1 << 20),
        "{\"a\":".repeat(100_000),
        "\"".repeat(100_000),
        "[\"".repeat(100_000),
        "{\"a\": \"x\" ".repeat(50_000) + "\"",
        "```json\n".repeat(50_000),
        "{}".repeat(200_000),
        "'".repeat(100_000),
        "\" ".repeat(100_000),
        // Note [Missing quotes]: every quote is ambiguous; look-ahead is capped.
        "[\"a, \"b".repeat(100_000),
        "{\"a\": \"x, \"k\" ".repeat(50_000),
        format!("{{\"a\": \"{}", " ".repeat(1 << 20)),
        format!("{{\"a\": \"{}", "}".repeat(1 << 20)),
        "“".repeat(100_000),
        "(".repeat(1 << 20),
        "[2e ".repeat(100_000),
        format!("{{\\\"a\\\": {}", "\\\"".repeat(100_000)),
        // The heuristics of Notes [Wrapper calls], [Stray words],
        // [Continued arrays], [Extra closers], [Python sets], [Backtick quotes].
        "{\"a\": ObjectId(\"x ".repeat(50_000),
        "{\"a\": new Date(".repeat(50_000),
        "{a ".repeat(100_000) + "\"k\": 1}",
        "{\"k\": [[1]], ".to_owned() + &"[2], ".repeat(100_000),
        "{\"k\": [[1], 2], ".to_owned() + &"[2], 3, ".repeat(100_000),
        "{\"a\": 1}, \"b".repeat(100_000),
        "{\"a\": 1} , \"b\": 2}".repeat(50_000),
        "{'a', ".repeat(100_000),
        "{`a".repeat(100_000),
        "{t: x{".repeat(100_000),
    ] {
        fuzz_extract(s.as_bytes());
    }
    let deep = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let got = ex(&deep);
    assert_eq!(got.method, Method::Repaired);
    assert!(got.repairs.contains(&DepthLimit));
}

#[test]
fn repairs_serialize_snake_case() {
    let s = serde_json::to_string(&[TrailingComma, RawControlCharInString, DanglingKeyDropped])
        .unwrap();
    assert_eq!(
        s,
        r#"["trailing_comma","raw_control_char_in_string","dangling_key_dropped"]"#
    );
}

mod prop {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn never_panics(s in proptest::collection::vec(
            prop_oneof![
                Just('{'), Just('}'), Just('['), Just(']'), Just('"'), Just(','), Just(':'),
                Just('\''), Just('\n'), Just('\\'), Just('`'), Just('/'), Just('*'), Just('#'),
                Just(' '), Just('a'), Just('1'), Just('.'), Just('-'), Just('é'), Just('u'),
                any::<char>(),
            ], 0..200)) {
            let text: String = s.into_iter().collect();
            super::super::fuzz_extract(text.as_bytes());
        }

        #[test]
        fn never_panics_with_fences(parts in proptest::collection::vec(
            prop_oneof![
                Just("```json\n"), Just("```\n"), Just("\n```"), Just("[EVENT:info:x] m\n"),
                Just("WORKER_FAILURE: a: b\n"), Just("{\"a\": "), Just("'x'"), Just("True"),
                Just("// c\n"), Just("/*"), Just("\\u12"), Just("\\ud800"), Just("1e"), Just("-"),
            ], 0..40)) {
            super::super::fuzz_extract(parts.concat().as_bytes());
        }
    }
}

/// Bench helper: `BENCH_REPLIES=in.jsonl BENCH_OUT=out.jsonl cargo test -p
/// agentshape-core --lib bench_replies -- --ignored` writes one extracted
/// value per reply, for `check_outputs.py replies`.
#[test]
#[ignore = "manual: needs BENCH_REPLIES and BENCH_OUT"]
/// Prints the extraction throughput (reply text bytes over time spent in
/// `extract_text` only) to stderr.
#[allow(clippy::disallowed_methods, clippy::print_stderr)] // a manual tool reading the bench corpus
fn bench_replies() {
    use std::io::Write;
    let input = std::env::var("BENCH_REPLIES").unwrap();
    let out = std::env::var("BENCH_OUT").unwrap();
    let data = std::fs::read_to_string(input).unwrap();
    let rows: Vec<Value> = data
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    let mut bytes = 0usize;
    let mut spent = std::time::Duration::ZERO;
    for row in &rows {
        let text = row["text"].as_str().unwrap();
        bytes += text.len();
        let t = std::time::Instant::now();
        let got = ex(text);
        spent += t.elapsed();
        let v = json!({"id": row["id"], "value": got.value});
        writeln!(w, "{v}").unwrap();
    }
    let mb = bytes as f64 / 1e6;
    eprintln!(
        "bench_replies: {} replies, {mb:.1} MB in {:.3} s: {:.1} MB/s",
        rows.len(),
        spent.as_secs_f64(),
        mb / spent.as_secs_f64()
    );
}
