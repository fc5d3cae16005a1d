//! Table tests for the extract chain and the tolerant parser.

use serde_json::{Value, json};

use super::Repair::*;
use super::*;
use crate::outcome::ViolationKind;
use crate::summary::ResultInfo;

fn ex(text: &str) -> Extraction {
    extract_text(text, &ExtractOptions::default())
}

/// The shared table of extract cases: one JSON object per line, `{"table",
/// "input", "value", "method", "repairs"}` (and a `note` heading a group;
/// `valid` when it is not "a value was found").
/// The Python package's tests read the same file (`crates/python/tests`),
/// so both front ends are held to one list of cases.
const CASES: &str = include_str!("../../tests/data/extract/cases.jsonl");

/// One row of [`CASES`]: input, expected value, method, repairs, and
/// `valid` when the row says (else: a value was found).
type Row = (String, Value, Method, Vec<Repair>, Option<bool>);

/// The rows of one table of [`CASES`].
fn rows(table: &str) -> Vec<Row> {
    let rows: Vec<_> = CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["table"] == table)
        .map(|r| {
            (
                r["input"].as_str().unwrap().to_owned(),
                r["value"].clone(),
                serde_json::from_value(r["method"].clone()).unwrap(),
                serde_json::from_value(r["repairs"].clone()).unwrap(),
                r["valid"].as_bool(),
            )
        })
        .collect();
    assert!(!rows.is_empty(), "no rows for table `{table}`");
    rows
}

/// [`extract_text_compact`] gives [`extract_text`]'s extraction, with the
/// value appended as the bytes `json::write_compact` writes for it.
pub(super) fn compact_agrees(text: &str, opts: &ExtractOptions<'_>) {
    let mut want = extract_text(text, opts);
    let mut want_bytes = b"[".to_vec();
    match want.value.take() {
        Some(v) => json::write_compact(&mut want_bytes, &v),
        None => want_bytes.extend_from_slice(b"null"),
    }
    let mut got_bytes = b"[".to_vec();
    let got = extract_text_compact(text, opts, &mut got_bytes);
    assert_eq!(
        String::from_utf8_lossy(&got_bytes),
        String::from_utf8_lossy(&want_bytes),
        "value of {text:?}"
    );
    assert_eq!(got, want, "extraction of {text:?}");
}

/// The option sets [`compact_agrees`] is checked under: every method, the
/// fast path's refusals (no bare, no fenced, markers first), and schemas a
/// candidate fails (it competes as a `Value`, perhaps coerced) or passes
/// (written from the tape), with `x-invariants` the tape evaluates and one
/// only the CEL interpreter can.
pub(super) fn compact_agrees_under_options(text: &str) {
    let schema = json!({"type": "object", "required": ["summary"]});
    let validator = Validator::new(&schema).unwrap();
    let schema = json!({"type": "object", "properties": {"a": {"type": "array"}}});
    let loose = Validator::new(&schema).unwrap();
    let schema = json!({"type": "object", "x-invariants": [
        {"rule": "!has(self.b) || self.b != null", "message": "b is null"},
        {"rule": "size(self) < 3", "message": "too many keys"}
    ]});
    let native = Validator::new(&schema).unwrap();
    let schema = json!({"type": ["object", "array"], "x-invariants": [
        {"rule": "string(size(self)).startsWith('1')", "message": "interpreted"}
    ]});
    let interpreted = Validator::new(&schema).unwrap();
    let methods = |names: &[&str]| Methods::from_names(names).unwrap();
    let option_sets = [
        ExtractOptions::default(),
        ExtractOptions {
            methods: methods(&["fenced", "repaired"]),
            ..ExtractOptions::default()
        },
        ExtractOptions {
            methods: methods(&["bare", "repaired"]),
            ..ExtractOptions::default()
        },
        ExtractOptions {
            markers: Some(MarkerGrammar::ClaudeOps),
            methods: methods(&["structured", "markers", "fenced", "bare", "repaired"]),
            ..ExtractOptions::default()
        },
        ExtractOptions {
            validator: Some(&validator),
            coerce: true,
            ..ExtractOptions::default()
        },
        ExtractOptions {
            validator: Some(&loose),
            coerce: true,
            ..ExtractOptions::default()
        },
        ExtractOptions {
            validator: Some(&loose),
            methods: methods(&["fenced", "repaired"]),
            ..ExtractOptions::default()
        },
        ExtractOptions {
            validator: Some(&native),
            ..ExtractOptions::default()
        },
        ExtractOptions {
            validator: Some(&interpreted),
            ..ExtractOptions::default()
        },
    ];
    for opts in &option_sets {
        compact_agrees(text, opts);
    }
}

fn check(table: &str) -> usize {
    let rows = rows(table);
    for (input, want, method, repairs, valid) in &rows {
        compact_agrees_under_options(input);
        let got = ex(input);
        let want_value = if want.is_null() && *method == Method::None {
            None
        } else {
            Some(want.clone())
        };
        assert_eq!(got.value, want_value, "value, input: {input:?}");
        assert_eq!(got.method, *method, "method, input: {input:?}");
        assert_eq!(got.repairs, *repairs, "repairs, input: {input:?}");
        let valid = valid.unwrap_or(got.value.is_some());
        assert_eq!(got.valid, valid, "valid, input: {input:?}");
        // Not valid only by Note [Replaced text]: one error of kind `text`
        // per string holding U+FFFD.
        if !valid && got.value.is_some() {
            assert!(
                !got.errors.is_empty()
                    && got
                        .errors
                        .iter()
                        .all(|e| e.kind == Some(crate::outcome::ViolationKind::Text)),
                "errors, input: {input:?}: {:?}",
                got.errors
            );
        }
    }
    rows.len()
}

#[test]
fn repair_table() {
    // Every row of the table when it was Rust literals is still there.
    assert_eq!(check("repair"), 79);
}

#[test]
fn candidate_order_table() {
    assert_eq!(check("order"), 32);
}

/// Issue 27: a lone surrogate escape became U+FFFD with no repair, `valid`.
#[test]
fn replaced_text_table() {
    assert_eq!(check("replaced"), 9);
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
        // Note [String boundaries] in `repair::boundary`: 1 MB strings full
        // of doubtful quotes, each scan passing the others.
        format!("{{\"a\": \"{}\"}}", "x \"".repeat(350_000)),
        format!("{{\"a\": \"{}", "\" x".repeat(350_000)),
        format!("[\"{}\"]", "a\" b, ".repeat(200_000)),
        format!("{{\"a\": \"{}\"}}", "w\", v ".repeat(200_000)),
        "{\"a\": \"x\" y ".repeat(100_000),
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

/// The decoded input's extraction, and the summary's count of replaced text.
fn ex_bytes(bytes: &[u8], opts: &ExtractOptions<'_>) -> (Extraction, u64) {
    use crate::decode::{DecodeOptions, Format, decode_bytes};
    let summary = decode_bytes(bytes, Format::Auto, &DecodeOptions::default());
    let replaced = summary.replaced_text;
    (extract_decoded(summary, opts), replaced)
}

/// Issue 27, Note [Replaced text]: a byte that is not UTF-8 (Latin-1 `é`)
/// became U+FFFD and the value was `valid` with no repair, strict or not,
/// fenced or bare; bytes in the prose around the value change nothing.
#[test]
fn bytes_not_utf8_are_reported_where_the_value_holds_them() {
    let opts = ExtractOptions::default();
    let cases: &[(&[u8], Value, Method)] = &[
        (
            b"{\"a\": \"caf\xe9\"}",
            json!({"a": "caf\u{fffd}"}),
            Method::Bare,
        ),
        (
            b"```json\n{\"a\": \"\xe9x\"}\n```",
            json!({"a": "\u{fffd}x"}),
            Method::Fenced,
        ),
        (
            b"Done: {\"a\": [\"\xe9\"],} ok",
            json!({"a": ["\u{fffd}"]}),
            Method::Repaired,
        ),
        (b"{\"a\xff\": 1}", json!({"a\u{fffd}": 1}), Method::Bare),
    ];
    for (input, value, method) in cases {
        let (got, replaced) = ex_bytes(input, &opts);
        let shown = String::from_utf8_lossy(input);
        assert_eq!(replaced, 1, "{shown}");
        assert_eq!(got.value.as_ref(), Some(value), "{shown}");
        assert_eq!(got.method, *method, "{shown}");
        assert!(
            got.repairs.contains(&ReplacedInvalidText),
            "{shown}: {:?}",
            got.repairs
        );
        assert!(!got.valid, "{shown}");
        assert_eq!(got.errors.len(), 1, "{shown}");
        assert_eq!(got.errors[0].kind, Some(ViolationKind::Text), "{shown}");
    }
    let (got, _) = ex_bytes(b"{\"a\": \"caf\xe9\"}", &opts);
    assert_eq!(got.errors[0].instance_path, "/a");
    // The bad byte is in the prose, not in the value: nothing was changed.
    let (got, replaced) = ex_bytes(b"Voil\xe0 the answer: {\"a\": 1}", &opts);
    assert_eq!(replaced, 1);
    assert_eq!(
        (got.value, got.method),
        (Some(json!({"a": 1})), Method::Bare)
    );
    assert!(got.valid && got.repairs.is_empty() && got.errors.is_empty());
    // UTF-8 input: no count, and an agent's own U+FFFD is its text.
    let (got, replaced) = ex_bytes("{\"a\": \"caf\u{e9} \u{fffd}\"}".as_bytes(), &opts);
    assert_eq!(replaced, 0);
    assert!(got.valid && got.repairs.is_empty());
    // With a schema, a clean candidate beats the replaced one.
    let schema = json!({"type": "object", "required": ["a"]});
    let v = Validator::new(&schema).unwrap();
    let with_schema = ExtractOptions {
        validator: Some(&v),
        ..ExtractOptions::default()
    };
    let (got, _) = ex_bytes(b"{\"a\": \"\xe9\"} or {\"a\": \"e\"}", &with_schema);
    assert_eq!(got.value, Some(json!({"a": "e"})));
    assert!(got.valid && got.repairs.is_empty());
    let (got, _) = ex_bytes(b"{\"a\": \"\xe9\"}", &with_schema);
    assert!(!got.valid && got.repairs == [ReplacedInvalidText]);
    assert_eq!(got.errors[0].kind, Some(ViolationKind::Text));
}

/// Issue 27: a transcript's result text with a lone surrogate escape, at
/// the line's level (no `String` holds it: the text was dropped) or inside
/// the reply's JSON (it became U+FFFD, `valid`).
#[test]
fn transcript_text_with_a_lone_surrogate_is_reported() {
    let opts = ExtractOptions::default();
    // A stream starts with its `system/init` line (format detection reads
    // the first line with `serde_json`, which refuses a lone surrogate).
    let lines: [&[u8]; 2] = [
        br#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"{\"a\": \"\udc00x\"}"}"#,
        br#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"{\"a\": \"\\udc00x\"}"}"#,
    ];
    for (i, line) in lines.iter().enumerate() {
        let (got, replaced) = ex_bytes(line, &opts);
        let shown = String::from_utf8_lossy(line);
        assert_eq!(replaced, u64::from(i == 0), "{shown}");
        assert_eq!(got.value, Some(json!({"a": "\u{fffd}x"})), "{shown}");
        assert_eq!(got.repairs, [ReplacedInvalidText], "{shown}");
        assert!(!got.valid, "{shown}");
        assert_eq!(got.errors[0].instance_path, "/a", "{shown}");
        assert_eq!(got.errors[0].kind, Some(ViolationKind::Text), "{shown}");
    }
    // An assistant text block (Claude) and an agent message (Codex) too.
    let claude = br#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"assistant","message":{"content":[{"type":"text","text":"{\"a\": \"\ud800\"}"}]}}"#;
    let codex = br#"{"type":"thread.started","thread_id":"t"}
{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"{\"a\": \"\ud800\"}"}}"#;
    for line in [&claude[..], &codex[..]] {
        let (got, replaced) = ex_bytes(line, &opts);
        assert_eq!(replaced, 1, "{}", String::from_utf8_lossy(line));
        assert_eq!(got.value, Some(json!({"a": "\u{fffd}"})));
        assert!(!got.valid && got.repairs == [ReplacedInvalidText]);
    }
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

        #[test]
        fn compact_agrees_on_noise(s in proptest::collection::vec(
            prop_oneof![
                Just('{'), Just('}'), Just('['), Just(']'), Just('"'), Just(','), Just(':'),
                Just('\n'), Just('\\'), Just('`'), Just(' '), Just('a'), Just('1'), Just('.'),
                Just('-'), Just('é'), Just('u'), Just('/'), any::<char>(),
            ], 0..120)) {
            let text: String = s.into_iter().collect();
            super::compact_agrees_under_options(&text);
        }

        /// Strict and nearly strict JSON where the fast path reads it:
        /// whole, fenced, bare in prose, after another block; with
        /// repeated keys, escapes, big and negative-zero numbers, empty
        /// and scalar-only containers (the weak and prose rules).
        #[test]
        fn compact_agrees_on_json_replies(
            v in json_text(),
            w in json_text(),
            frame in 0usize..7,
        ) {
            let text = match frame {
                0 => v.clone(),
                1 => format!("```json\n{v}\n```"),
                2 => format!("Here it is: {v} as asked."),
                3 => format!("{v}\nand then {w}"),
                4 => format!("```\n{w}\n```\n\n```json\n{v}\n```"),
                5 => format!("Note [x] first.\n\n{v}"),
                _ => format!("{v},"),
            };
            super::compact_agrees_under_options(&text);
        }
    }

    proptest! {
        /// The weak and prose rules read the same top level from the tape
        /// as from the value.
        #[test]
        fn tape_tops_agree(v in json_text()) {
            if let Some(doc) = crate::json::tape::Doc::parse(&v) {
                let root = doc.root();
                prop_assert_eq!(super::Top::of_tape(root), super::Top::of(&root.value()));
            }
        }
    }

    /// JSON text, written by hand so that keys can repeat and strings and
    /// numbers take the forms `serde_json` would not write.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("-0".to_owned()),
            Just("1.50".to_owned()),
            Just("1e400".to_owned()),
            Just("12345678901234567890123".to_owned()),
            Just("0.1e-5".to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| serde_json::Value::from(n).to_string()),
            proptest::collection::vec(
                prop_oneof![
                    Just("a"),
                    Just("é"),
                    Just(" "),
                    Just("\\\""),
                    Just("\\\\"),
                    Just("\\/"),
                    Just("\\n"),
                    Just("\\u0041"),
                    Just("\\u0001"),
                    Just("\\u001f"),
                    Just("\\u0022"),
                    Just("\\u005c"),
                    Just("\\uD83D\\uDE00"),
                    Just("\\ud800"),
                    Just("\\b"),
                    Just("\\u00e9"),
                    Just("word"),
                ],
                0..5,
            )
            .prop_map(|p| format!("\"{}\"", p.concat())),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                proptest::collection::vec(
                    (prop_oneof![Just("a"), Just("b"), Just("k\\u0041")], inner),
                    0..5
                )
                .prop_map(|m| {
                    let members: Vec<String> = m
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\": {v}"))
                        .collect();
                    format!("{{{}}}", members.join(",\n  "))
                }),
            ]
        })
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
