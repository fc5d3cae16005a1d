//! The engine under a grammar, against the `tiny` model (random weights: its
//! output is valid only because the grammar forces it). The model is loaded
//! once for the whole table (Note [One model per process]). A missing model
//! fails with `model::resolve`'s message naming `agentshape model fetch`.

#![allow(clippy::unwrap_used, clippy::panic)]

use agentshape_core::validate::Validator;
use serde_json::{Value, json};

use super::engine::{Engine, SampleOptions, Speaker, Stop};
use super::*;
use crate::model;

fn tiny() -> Arc<Engine> {
    let path = model::resolve(Some("tiny")).unwrap_or_else(|e| panic!("{e}"));
    Engine::load(&path).unwrap()
}

fn opts() -> SampleOptions {
    SampleOptions {
        max_tokens: 400,
        // See the CLI tests: one thread is the robust choice on a shared box.
        threads: 1,
        ..SampleOptions::default()
    }
}

/// Twenty-odd schemas covering the keywords agents' schemas use.
///
/// Strings and integers are bounded wherever they appear: a random-weight
/// model only stops where the grammar forces it, and an unbounded integer
/// or string lets it write digits or characters until `max_tokens` (seen:
/// `-2555…` for 400 tokens). A real model ends them; the `SmolLM2` test in
/// the CLI suite runs the unbounded `agent-response.json`.
fn table() -> Vec<(&'static str, Value)> {
    vec![
        (
            "object",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false}),
        ),
        (
            "array of integers",
            json!({"type": "array", "items": {"type": "integer"}, "maxItems": 3}),
        ),
        ("enum", json!({"enum": ["low", "medium", "high"]})),
        (
            "nested objects",
            json!({"type": "object", "properties": {"host": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "port": {"type": "integer"}}, "required": ["name", "port"], "additionalProperties": false}}, "required": ["host"], "additionalProperties": false}),
        ),
        (
            "number with bounds",
            json!({"type": "number", "minimum": 0.5, "maximum": 2.5}),
        ),
        (
            "string lengths",
            json!({"type": "string", "minLength": 3, "maxLength": 6}),
        ),
        (
            "anyOf",
            json!({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 4}]}),
        ),
        (
            "$ref",
            json!({"$defs": {"p": {"type": "object", "properties": {"x": {"type": "integer", "minimum": -100, "maximum": 100}}, "required": ["x"], "additionalProperties": false}}, "type": "object", "properties": {"from": {"$ref": "#/$defs/p"}, "to": {"$ref": "#/$defs/p"}}, "required": ["from", "to"], "additionalProperties": false}),
        ),
        ("const", json!({"const": {"status": "ok", "n": 3}})),
        ("boolean", json!({"type": "boolean"})),
        (
            "nullable",
            json!({"type": "object", "properties": {"v": {"type": ["string", "null"], "maxLength": 5}}, "required": ["v"], "additionalProperties": false}),
        ),
        (
            "required and optional",
            json!({"type": "object", "properties": {"id": {"type": "integer"}, "note": {"type": "string", "maxLength": 5}}, "required": ["id"], "additionalProperties": false}),
        ),
        (
            "array with minItems and maxItems",
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 4}),
        ),
        (
            "integer bounds",
            json!({"type": "integer", "minimum": -5, "maximum": 17}),
        ),
        (
            "exclusive bounds",
            json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4}),
        ),
        (
            "pattern",
            json!({"type": "string", "pattern": "^[a-z]{2}-[0-9]{1,3}$"}),
        ),
        (
            "oneOf of objects",
            json!({"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "n": {"type": "integer", "minimum": 0, "maximum": 1000}}, "required": ["kind", "n"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "b"}, "s": {"type": "string", "maxLength": 3}}, "required": ["kind", "s"], "additionalProperties": false}
            ]}),
        ),
        (
            "array of objects",
            json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}}),
        ),
        (
            "enum of mixed types",
            json!({"enum": [1, "two", null, false]}),
        ),
        (
            "tuple (prefixItems)",
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "boolean"}], "items": false, "minItems": 2}),
        ),
        (
            "string format date",
            json!({"type": "string", "format": "date"}),
        ),
        (
            "events with enum levels",
            json!({"type": "object", "properties": {"events": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"level": {"enum": ["info", "warning", "critical"]}, "message": {"type": "string", "maxLength": 12}}, "required": ["level", "message"], "additionalProperties": false}}}, "required": ["events"], "additionalProperties": false}),
        ),
    ]
}

#[test]
fn tiny_model_under_every_schema_gives_valid_output() {
    let engine = tiny();
    let table = table();
    assert!(table.len() >= 20);
    let mut failures = Vec::new();
    for (name, schema) in &table {
        let validator = Validator::new(schema).unwrap();
        let prompt = engine.prompt(&[(Speaker::User, "Give me the value.")]);
        let matcher = engine.matcher(schema).unwrap();
        let mut streamed = String::new();
        let g = engine
            .generate(&prompt, Some(matcher), &opts(), &mut |t| match t {
                Sampled::Text(t) => streamed.push_str(t),
                Sampled::Rewound { kept, .. } => kept.clone_into(&mut streamed),
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(streamed, g.text, "{name}: the stream is the text");
        let verdict = serde_json::from_str::<Value>(&g.text)
            .map_err(|e| e.to_string())
            .and_then(|v| {
                let errors = validator.errors(&v);
                if errors.is_empty() {
                    Ok(())
                } else {
                    Err(format!("{errors:?}"))
                }
            });
        if let Err(e) = verdict {
            failures.push(format!("{name}: {:?} ({:?}): {e}", g.text, g.stop));
        } else {
            assert_ne!(g.stop, Stop::MaxTokens, "{name}");
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Note [Closing under the budget]: the random-weight model never ends an
/// unbounded string, integer or array on its own (see [`table`]); within the
/// budget's closing reserve it must, and the answer must be valid.
#[test]
fn unbounded_values_are_closed_within_the_budget() {
    let engine = tiny();
    let table = [
        ("string", json!({"type": "string"})),
        ("integer", json!({"type": "integer"})),
        (
            "array of strings",
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        ("anything", json!({})),
        (
            "required keys",
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}}, "c": {"type": "object", "properties": {"d": {"type": "string"}}, "required": ["d"]}}, "required": ["a", "b", "c"]}),
        ),
        (
            "minItems",
            json!({"type": "array", "items": {"type": "string"}, "minItems": 3}),
        ),
    ];
    let mut failures = Vec::new();
    for (name, schema) in &table {
        let validator = Validator::new(schema).unwrap();
        let prompt = engine.prompt(&[(Speaker::User, "Give me the value.")]);
        let g = engine
            .generate(
                &prompt,
                Some(engine.matcher(schema).unwrap()),
                &SampleOptions {
                    max_tokens: 96,
                    ..opts()
                },
                &mut |_| {},
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let valid =
            serde_json::from_str::<Value>(&g.text).is_ok_and(|v| validator.errors(&v).is_empty());
        if !valid || g.stop == Stop::MaxTokens || g.timing.closing_tokens == 0 {
            failures.push(format!(
                "{name}: {:?} ({:?}, {} closing tokens)",
                g.text, g.stop, g.timing.closing_tokens
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Note [Closing under the budget]: required keys that alone need more
/// than the budget's last quarter. The first try is cut at the limit; the
/// answer is rolled back and closed sooner, and ends valid; the stream
/// reports the rollback so a reader's copy of the text stays right.
#[test]
fn an_answer_cut_at_the_limit_is_rolled_back_and_closed_sooner() {
    let engine = tiny();
    let keys = [
        "alpha_one",
        "beta_two",
        "gamma_three",
        "delta_four",
        "epsilon_five",
        "zeta_six",
    ];
    let props: serde_json::Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).to_owned(), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": props, "required": keys});
    let validator = Validator::new(&schema).unwrap();
    let prompt = engine.prompt(&[(Speaker::User, "Give me the value.")]);
    let mut streamed = String::new();
    let mut rewinds = 0;
    let g = engine
        .generate(
            &prompt,
            Some(engine.matcher(&schema).unwrap()),
            &SampleOptions {
                max_tokens: 64,
                ..opts()
            },
            &mut |t| match t {
                Sampled::Text(t) => streamed.push_str(t),
                Sampled::Rewound { kept, .. } => {
                    rewinds += 1;
                    kept.clone_into(&mut streamed);
                }
            },
        )
        .unwrap();
    let value: Value =
        serde_json::from_str(&g.text).unwrap_or_else(|e| panic!("{e}: {:?}", g.text));
    assert!(validator.errors(&value).is_empty(), "{value}");
    assert_ne!(g.stop, Stop::MaxTokens);
    assert!(rewinds > 0 && g.timing.rewound_tokens > 0, "{:?}", g.timing);
    assert_eq!(
        streamed, g.text,
        "the stream, rollbacks applied, is the text"
    );
    assert!(g.completion_tokens <= 64 && g.timing.tokens > g.completion_tokens);
}

#[test]
fn the_model_is_loaded_once_per_process() {
    let a = tiny();
    let b = tiny();
    assert!(Arc::ptr_eq(&a, &b));
}

#[test]
fn max_tokens_cuts_the_reply_and_says_so() {
    let engine = tiny();
    let schema = json!({"type": "array", "items": {"type": "integer"}, "minItems": 50});
    let prompt = engine.prompt(&[(Speaker::User, "numbers")]);
    let g = engine
        .generate(
            &prompt,
            Some(engine.matcher(&schema).unwrap()),
            &SampleOptions {
                max_tokens: 5,
                ..opts()
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!((g.stop, g.completion_tokens), (Stop::MaxTokens, 5));
    let s = summary("tiny", &g);
    assert_eq!(s.error_category, Some(ErrorCategory::MaxTokens));
    assert_eq!(s.output, g.text);
}

#[test]
fn the_timeout_stops_sampling_and_says_so() {
    let engine = tiny();
    let schema = json!({"type": "array", "items": {"type": "integer"}, "minItems": 50});
    let prompt = engine.prompt(&[(Speaker::User, "numbers")]);
    // Already past: the first check in the loop stops it, before any token.
    let g = engine
        .generate(
            &prompt,
            Some(engine.matcher(&schema).unwrap()),
            &SampleOptions {
                timeout: Some(std::time::Duration::ZERO),
                ..opts()
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!((g.stop, g.completion_tokens), (Stop::Timeout, 0));
    let s = summary("tiny", &g);
    assert_eq!(s.error_category, Some(ErrorCategory::Timeout));
    assert!(
        s.error
            .as_deref()
            .is_some_and(|e| e.starts_with("timeout:")),
        "{:?}",
        s.error
    );
}

#[test]
fn a_prompt_over_the_context_is_a_clear_error() {
    let engine = tiny();
    let context = engine.context() as usize;
    let huge = "word ".repeat(context * 2);
    let err = engine
        .generate(&huge, None, &opts(), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("prompt is ")
            && err.ends_with(&format!("the model's context is {context}")),
        "{err}"
    );
    // An empty prompt is an answer or an error, never a panic.
    let _ = engine.generate("", None, &opts(), &mut |_| {});
}

#[test]
fn timing_is_reported_and_the_grammar_share_is_measured() {
    let engine = tiny();
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 20}}, "required": ["a"]});
    let prompt = engine.prompt(&[(Speaker::User, "x")]);
    let g = engine
        .generate(
            &prompt,
            Some(engine.matcher(&schema).unwrap()),
            &opts(),
            &mut |_| {},
        )
        .unwrap();
    let t = g.timing;
    assert_eq!(t.tokens, g.completion_tokens);
    assert!(
        t.tokens > 0 && t.sample_ms > 0.0 && t.grammar_ms > 0.0,
        "{t:?}"
    );
    assert!(t.grammar_ms <= t.sample_ms, "{t:?}");
    eprintln!(
        "tiny: {:.0} tokens/s, grammar {:.0}% of sampling",
        t.tokens_per_second,
        100.0 * t.grammar_ms / t.sample_ms
    );
}
