//! JSON Schema → llguidance grammar, with the options the local engine needs.
//!
//! Note [Compact JSON under the grammar]: the grammar fixes the separators
//! to `,` and `:` and allows no whitespace between tokens. A model with
//! random weights (the `tiny` test model) picks whatever the mask allows; with
//! flexible whitespace it can emit spaces forever and never reach the closing
//! brace. Compact JSON leaves it no choice but to make progress, and costs a
//! real model nothing (whitespace carries no data). Keys the schema's own
//! `x-guidance` object sets are kept: a caller who asks for something else
//! gets it.
//!
//! Note [Closed objects under the grammar]: an object schema with
//! `properties` and no `additionalProperties` (nor `patternProperties`) is
//! closed for the grammar only: `SmolLM2` under the open `escalation` object of
//! `agent-response.json` wrote `"noob":true` until the token limit. A closed
//! object's values are valid under the open schema too, and the reply is
//! still validated against the schema as written. An explicit
//! `additionalProperties` is kept; branches of `allOf` are not closed (their
//! properties add up across branches).

use std::sync::OnceLock;

use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use serde_json::{Map, Value, json};
use toktrie::{ApproximateTokEnv, TokEnv};

/// A schema llguidance cannot turn into a grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the schema cannot be compiled into a grammar: {0}")]
pub struct GrammarError(pub String);

/// The grammar for `schema`, with compact whitespace (Note [Compact JSON under the grammar]).
///
/// # Errors
/// [`GrammarError`] for `false` (no value matches) or a schema that is not
/// an object or a boolean.
pub fn grammar_for(schema: &Value) -> Result<TopLevelGrammar, GrammarError> {
    let mut schema = match schema {
        Value::Bool(true) => json!({}),
        Value::Object(_) => schema.clone(),
        Value::Bool(false) => return Err(GrammarError("`false` matches no value".into())),
        _ => {
            return Err(GrammarError(
                "a JSON Schema must be an object or a boolean".into(),
            ));
        }
    };
    close_objects(&mut schema, true);
    if let Some(obj) = schema.as_object_mut() {
        let opts = obj
            .entry("x-guidance")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(opts) = opts.as_object_mut() {
            for (k, v) in [
                ("whitespace_flexible", json!(false)),
                ("item_separator", json!(",")),
                ("key_separator", json!(":")),
            ] {
                opts.entry(k).or_insert(v);
            }
        }
    }
    Ok(TopLevelGrammar::from_json_schema(schema))
}

/// See Note [Closed objects under the grammar]: walk the subschemas by keyword
/// (never into `const`, `enum` or `default` values).
fn close_objects(schema: &mut Value, close: bool) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if close
        && obj.get("properties").is_some_and(Value::is_object)
        && !obj.contains_key("additionalProperties")
        && !obj.contains_key("patternProperties")
        && !obj.contains_key("unevaluatedProperties")
    {
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(map)) = obj.get_mut(key) {
            for sub in map.values_mut() {
                close_objects(sub, true);
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "additionalItems",
    ] {
        if let Some(sub) = obj.get_mut(key) {
            if let Value::Array(list) = sub {
                for s in list {
                    close_objects(s, true);
                }
            } else {
                close_objects(sub, true);
            }
        }
    }
    for (key, close_branch) in [
        ("anyOf", true),
        ("oneOf", true),
        ("prefixItems", true),
        ("allOf", false),
    ] {
        if let Some(Value::Array(list)) = obj.get_mut(key) {
            for s in list {
                close_objects(s, close_branch);
            }
        }
    }
}

/// A factory over a one-byte-per-token vocabulary: enough to compile a
/// grammar and report its errors without loading a model.
fn byte_factory() -> Result<&'static ParserFactory, GrammarError> {
    static FACTORY: OnceLock<Result<ParserFactory, String>> = OnceLock::new();
    FACTORY
        .get_or_init(|| {
            let env: TokEnv = ApproximateTokEnv::single_byte_env();
            let mut f = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
            f.quiet();
            Ok(f)
        })
        .as_ref()
        .map_err(|e| GrammarError(e.clone()))
}

/// Compile `schema` without a model, so a schema llguidance rejects is a
/// usage error before the (slow) model load.
///
/// # Errors
/// [`GrammarError`] with llguidance's message, on one line.
pub fn check(schema: &Value) -> Result<(), GrammarError> {
    let grammar = grammar_for(schema)?;
    let parser = byte_factory()?.create_parser(grammar);
    let matcher = Matcher::new(parser);
    match matcher.get_error() {
        Some(e) => Err(GrammarError(one_line(&e))),
        None => Ok(()),
    }
}

/// A matcher for `schema` over a model's vocabulary.
///
/// # Errors
/// [`GrammarError`] when the schema does not compile.
pub fn matcher(factory: &ParserFactory, schema: &Value) -> Result<Matcher, GrammarError> {
    let grammar = grammar_for(schema)?;
    let matcher = Matcher::new(factory.create_parser(grammar));
    match matcher.get_error() {
        Some(e) => Err(GrammarError(one_line(&e))),
        None => Ok(matcher),
    }
}

/// llguidance's messages can span lines; the CLI prints one.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_compile_or_fail_with_one_line() {
        let good = [
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
            json!(true),
            json!({"type": "array", "items": {"enum": ["x", "y"]}, "minItems": 1}),
        ];
        for s in good {
            assert_eq!(check(&s), Ok(()), "{s}");
        }
        let bad = [
            json!(false),
            json!(7),
            json!({"type": "string", "pattern": "(unclosed"}),
            json!({"type": "integer", "minimum": 5, "maximum": 1}),
        ];
        for s in bad {
            let e = check(&s).expect_err(&s.to_string()).to_string();
            assert!(!e.contains('\n') && !e.is_empty(), "{e}");
        }
    }

    #[test]
    fn open_objects_are_closed_for_the_grammar_only_where_safe() {
        let mut s = json!({
            "properties": {"a": {"properties": {"x": {}}}, "properties": {"type": "object", "properties": {}}},
            "allOf": [{"properties": {"y": {}}}],
            "anyOf": [{"properties": {"z": {}}, "additionalProperties": true}],
            "const": {"properties": {}}
        });
        close_objects(&mut s, true);
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["a"]["additionalProperties"], json!(false));
        assert_eq!(
            s["properties"]["properties"]["additionalProperties"],
            json!(false)
        );
        assert!(s["properties"].get("additionalProperties").is_none());
        assert!(s["allOf"][0].get("additionalProperties").is_none());
        assert_eq!(s["anyOf"][0]["additionalProperties"], json!(true));
        assert_eq!(s["const"], json!({"properties": {}}));
    }

    #[test]
    fn compact_whitespace_is_added_but_the_schema_s_own_options_win() {
        let g = grammar_for(&json!({"x-guidance": {"whitespace_flexible": true}})).unwrap();
        let v = serde_json::to_value(&g).unwrap();
        let opts = &v["grammars"][0]["json_schema"]["x-guidance"];
        assert_eq!(opts["whitespace_flexible"], json!(true));
        assert_eq!(opts["item_separator"], json!(","));
    }
}
