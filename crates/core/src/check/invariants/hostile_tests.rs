//! Issue 27: rules that are too deep for a stack (Note [Rule size limits])
//! or that build too much (Note [Memory charge]).

use serde_json::json;

use super::*;

fn one_rule(rule: &str) -> Value {
    json!({"type": "object", "x-invariants": [{"rule": rule, "message": "m"}]})
}

fn compile_error(rule: &str) -> String {
    match Invariants::compile(&one_rule(rule)) {
        Err(Error::InvalidSchema { message }) => message,
        Err(other) => panic!("{}…: not a schema error: {other}", excerpt(rule)),
        Ok(_) => panic!("{}…: compiled", excerpt(rule)),
    }
}

fn excerpt(rule: &str) -> String {
    rule.chars().take(30).collect()
}

/// `n` copies of `unit` joined by `sep`.
fn chain(unit: &str, sep: &str, n: usize) -> String {
    vec![unit; n].join(sep)
}

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

/// Every shape that made a tree as deep as the rule is long is refused
/// before it is parsed, with one line naming the rule's place and the
/// limit it broke. Before the limits, most of these overflowed the stack
/// (the test process aborted) and 100,000 parentheses made the parser's
/// error message panic.
#[test]
fn hostile_rules_are_schema_errors_naming_the_limit() {
    let cases: Vec<(String, &str)> = vec![
        // The probes.
        (chain("1", "+", 3000), "too large: 2999 operators"),
        (format!("self{}", ".a".repeat(5000)), "too long"),
        (nested("(", "1", ")", 3000), "too deep"),
        (nested("(", "1", ")", 100_000), "too long"),
        (nested("size(", "self", ")", 20_000), "too long"),
        // Each limit on its own, in rules short enough for the length limit.
        (chain("1", "+", 1000), "too large: 999 operators"),
        (format!("self{} == 1", ".a".repeat(1000)), "too large"),
        (format!("self.a{} == 1", "[0]".repeat(400)), "too large"),
        (format!("{}true", "!".repeat(1000)), "too large"),
        (format!("{}1 == 1", "-".repeat(1000)), "too large"),
        (chain("self.a", " == ", 300), "too large"),
        (chain("self.a", " in ", 300), "too large"),
        (
            format!("{}false", "true ? true : ".repeat(300)),
            "too large",
        ),
        (nested("(", "1", ")", 300), "too deep: 300 nested brackets"),
        (nested("size(", "self", ")", 500), "too deep"),
        (nested("[", "1", "]", 300), "too deep"),
        (nested("{1: ", "1", "}", 300), "too deep"),
        (nested("self.a.all(x, ", "true", ")", 200), "too deep"),
        (format!("'{}'", "x".repeat(MAX_RULE_BYTES)), "too long"),
        // A string the lexer would not read whole hides nothing.
        (
            format!("'a\n{}", nested("(", "1", ")", 3000)),
            "not readable",
        ),
        (
            format!("'\\q{}'", nested("(", "1", ")", 3000)),
            "not readable",
        ),
    ];
    for (rule, want) in &cases {
        let e = compile_error(rule);
        assert!(e.contains(want), "{}…: {e}", excerpt(rule));
        assert!(e.contains("at `/x-invariants/0`"), "{e}");
        assert!(!e.contains('\n') && e.len() < 300, "{e}");
    }
}

/// The deepest rules the limits accept (operators, links, nesting and
/// macros at their limits) compile, evaluate through both evaluators and
/// drop on a 256 KiB thread stack, an eighth of the smallest stack they run
/// on (Note [Rule size limits]); in a debug build, whose frames are the
/// largest.
/// `shape` around a `+` chain that brings the rule's operators to exactly
/// [`MAX_RULE_OPERATORS`].
fn filled(shape: impl Fn(&str) -> String) -> String {
    let used = limits::measure(&shape("1")).unwrap().operators;
    let k = MAX_RULE_OPERATORS - used;
    let rule = shape(&format!("{} == {k}", chain("1", " + ", k)));
    assert_eq!(
        limits::measure(&rule).unwrap().operators,
        MAX_RULE_OPERATORS
    );
    rule
}

#[test]
fn deepest_accepted_rules_run_on_a_small_stack() {
    let ops = MAX_RULE_OPERATORS;
    let depth = MAX_RULE_NESTING;
    // (rule, instance, findings). The member and index chains go deeper
    // than the instance: both evaluators recurse to the innermost link
    // before they find it missing (a deep instance would measure the
    // instance's depth, which JSON bounds, not the rule's).
    let rules: Vec<(String, Value, usize)> = vec![
        // `+` chain.
        (filled(ToOwned::to_owned), json!({}), 0),
        // Member and index chains.
        (
            format!("self{} == 1", ".a".repeat(ops - 1)),
            json!({"a": {}}),
            1,
        ),
        (
            format!("self.a{} == 1", "[0]".repeat(ops - 2)),
            json!({"a": [[1]]}),
            1,
        ),
        // Unary chains.
        (format!("{}true", "!".repeat(ops)), json!({}), 0),
        (format!("{}1 == 1", "-".repeat(ops - 2)), json!({}), 0),
        // Nested brackets.
        (
            format!("{}.size() == 1", nested("[", "1", "]", depth)),
            json!({}),
            0,
        ),
        (filled(|c| nested("(", c, ")", depth)), json!({}), 0),
        (filled(|c| nested("{1: ", c, "}[1]", depth)), json!({}), 0),
        // Nested macros, each a level of nesting, and the `[1]` inside.
        (
            filled(|c| nested("[1].all(x, ", c, ")", depth - 1)),
            json!({}),
            0,
        ),
        (
            filled(|c| nested("[1].map(x, ", c, ").size() == 1", depth - 1)),
            json!({}),
            0,
        ),
    ];
    for (rule, _, _) in &rules {
        assert!(limits::check(rule).is_ok(), "{}…", excerpt(rule));
    }
    for (rule, instance, findings) in rules {
        let run = move || {
            let schema = one_rule(&rule);
            let inv = match Invariants::compile(&schema) {
                Ok(inv) => inv,
                Err(e) => return Err(format!("{}…: {e}", excerpt(&rule))),
            };
            let native = inv.evaluate(&instance, &[]);
            let mut plain = Invariants::compile(&schema).map_err(|e| e.to_string())?;
            plain.projected = false;
            let interpreted = plain.evaluate(&instance, &[]);
            Ok((native, interpreted))
        };
        let got = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
        let (native, interpreted) = got.unwrap();
        assert_eq!(native, interpreted);
        assert_eq!(native.len(), findings, "{native:?}");
    }
}

// ---- Note [Memory charge] ---------------------------------------------------

fn items(n: usize) -> Value {
    json!({ "items": (0..n).collect::<Vec<_>>(), "s": "x".repeat(640) })
}

/// What a rule builds is charged before it is copied, in both evaluators:
/// each case passes at its exact cost and is stopped one unit below it.
#[test]
fn what_a_rule_builds_is_charged() {
    // (rule, items, cost)
    let cases: &[(&str, usize, u64)] = &[
        // `map(x, x)` and `filter` append their loop variable: loops only.
        ("self.items.map(x, x).size() == 10", 10, 10),
        ("self.items.filter(x, true).size() == 10", 10, 10),
        // Each element copied into a list literal: 10 loops, 10 × 2 ints,
        // then each [x, x] (2) appended.
        ("self.items.map(x, [x, x]).size() == 10", 10, 50),
        // The whole list per item: 10 + 10 × 10.
        ("self.items.map(x, self.items).size() == 10", 10, 110),
        // The shape, small: 5 loops, and per item an inner map
        // (5 loops, 5 × 5 copied) appended (5 lists of 5): 5 + 5 × 55.
        (
            "self.items.map(x, self.items.map(y, self.items)).size() == 5",
            5,
            280,
        ),
        // A map literal: its key is a literal, its value 10; appended, 11.
        ("self.items.map(x, {'k': self.items}).size() == 10", 10, 220),
        // `+` copies both sides: a 640-byte string is 1 + 640 / 64 units.
        ("(self.s + self.s).size() == 1280", 0, 22),
        ("(self.items + self.items).size() == 20", 10, 20),
        // A literal is never charged.
        (
            "self.items.all(x, x in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])",
            10,
            110,
        ),
    ];
    for &(rule, n, cost) in cases {
        for projected in [true, false] {
            for (limit, passes) in [(cost, true), (cost - 1, false)] {
                let mut inv = Invariants::compile(&one_rule(rule))
                    .unwrap()
                    .with_cost_limit(limit);
                inv.projected = projected;
                let got = inv.evaluate(&items(n), &[]);
                if passes {
                    assert!(got.is_empty(), "{rule} at {limit} ({projected}): {got:?}");
                } else {
                    assert_eq!(got.len(), 1, "{rule} at {limit} ({projected})");
                    assert!(
                        got[0].message.contains("exceeded the cost limit"),
                        "{rule} ({projected}): {}",
                        got[0].message
                    );
                }
            }
        }
    }
}

/// The rules that grew to gigabytes end with the cost-limit
/// finding under the default limit: at most [`COST_LIMIT`] units were
/// copied (about a million list elements, or 64 MB of text).
#[test]
fn rules_that_build_gigabytes_stop_at_the_cost_limit() {
    let a: Vec<usize> = (0..2000).collect();
    let s = "x".repeat(1 << 20);
    let cases = [
        (
            "self.a.map(x, self.a.map(y, self.a)).size() > 0",
            json!({ "a": a }),
        ),
        (
            "self.a.map(x, self.s + self.s + self.s + self.s).size() > 0",
            json!({ "a": a, "s": s }),
        ),
        (
            "self.a.map(x, [self.s, self.s, self.s, self.s]).size() > 0",
            json!({ "a": a, "s": s }),
        ),
        (
            "self.a.map(x, {'k': self.a, 'v': self.a}).size() > 0",
            json!({ "a": a }),
        ),
    ];
    for (rule, instance) in cases {
        let inv = Invariants::compile(&one_rule(rule)).unwrap();
        let got = inv.evaluate(&instance, &[]);
        assert_eq!(got.len(), 1, "{rule}");
        assert!(
            got[0].message.contains("exceeded the cost limit"),
            "{rule}: {}",
            got[0].message
        );
    }
}
