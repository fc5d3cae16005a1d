//! Which disagreements with a peer library are accepted, and why: every
//! disagreeing row of the repair corpus is put in a class here, and a row in
//! no class fails the run (`every_disagreement_class_is_accepted`).

use serde_json::Value;

use super::Case;

/// Accepted classes of disagreement: (class, reason), one per rule of
/// `docs/repair-policy.md` where we part from a peer. Each disagreeing row
/// is put in a class by [`classify`]; printed with counts. A row in no class
/// is `unclassified`, which is not accepted: a new disagreement fails the run.
pub(super) const DISAGREEMENTS: &[(&str, &str)] = &[
    (
        "prose_words",
        "policy (rules 1, 13): unquoted words are prose, not a string: a whole reply of words \
         (`foo`, `hello world`, a UUID, a URL), a word in brackets (`[e]`), a sign or dot with no \
         digit (`-`, `.`); jsonrepair reads every one as a string or 0",
    ),
    (
        "lenient",
        "policy (rule 12): upstream throws on input we can still read (`{\"a\":2}{}` takes the \
         first value, `\"\\u26\"` keeps the text); returning a value is our policy for agent replies",
    ),
    (
        "multiple_values",
        "policy (rule 12): json_repair/BAML merge several top-level values (or newline-separated \
         scalars) into a list, or keep the last; without a schema (as this corpus runs) we take \
         the first (DESIGN.md candidate order) with a warning; an array schema gets the list",
    ),
    (
        "dangling_key_kept",
        "policy (rule 9): jsonrepair/BAML keep a cut-off key as `null`/`\"\"`; we drop it, as \
         fixJson does (a streamed prefix must not invent a null)",
    ),
    (
        "baml_schema_coercion",
        "policy: BAML expectations apply the target class (field aliases, defaults for missing \
         fields, number coercion, enum names); extraction without a schema cannot",
    ),
    (
        "number_policy",
        "policy (rule 8): a cut exponent is completed as jsonrepair does (`2e` -> `2.0`); fixJson \
         and json_repair drop it (`5e` -> `5`); `-0` is JSON's -0.0",
    ),
    (
        "fences",
        "policy (rule 11): a fence in another language is code",
    ),
    (
        "string_boundary",
        "rule 4 (Note [String boundaries]): readings the look-ahead rules decide the other \
         way (`\"v\"alue\"`, `\"value1\" value2\"` as one string, a quoted answer with a \
         `\"key\":` inside a string), `+` around a comment, mixed quote pairs, keeping `\\l` \
         escapes, doubly escaped JSON nested in a string, regexes full of both quote kinds",
    ),
    (
        "other_heuristic",
        "real gap: `[{5}s` (a one-item set of a number)",
    ),
];

/// Rows past the generic checks of [`classify`], by id.
const RESIDUAL: &[(&str, &[&str])] = &[
    (
        "prose_words",
        &[
            "jsonrepair-0035",
            "jsonrepair-0036",
            "jsonrepair-0037",
            "jsonrepair-0056",
            "jsonrepair-0065",
            "jsonrepair-0312",
            "jsonrepair-0319",
            "jsonrepair-0322",
            "jsonrepair-0328",
            "jsonrepair-0331",
            "jsonrepair-0334",
            "jsonrepair-0338",
            "jsonrepair-0339",
            "jsonrepair-0345",
            "jsonrepair-0348",
        ],
    ),
    (
        "multiple_values",
        &[
            "json_repair-0018",
            "json_repair-0019",
            "json_repair-0020",
            "jsonrepair-0391",
            "jsonrepair-0395",
        ],
    ),
    (
        "number_policy",
        &[
            "jsonrepair-0019",
            "json_repair-0095",
            "ai-fixjson-0017",
            "ai-fixjson-0019",
        ],
    ),
    ("fences", &["jsonrepair-0247"]),
    (
        "string_boundary",
        &[
            "jsonrepair-0092",
            "jsonrepair-0212",
            "jsonrepair-0355",
            "json_repair-0067",
            "json_repair-0107",
            "json_repair-0134",
            "json_repair-0185",
            "json_repair-0196",
            "json_repair-0237",
            "json_repair-0241",
        ],
    ),
    ("other_heuristic", &["json_repair-0142"]),
];

/// The class of a disagreement, for the accepted list.
pub(super) fn classify(case: &Case, got: Option<&Value>) -> &'static str {
    let exp = &case.expected;
    if !case.repairable {
        return "lenient";
    }
    if case.group == "baml" {
        return "baml_schema_coercion";
    }
    if let Some((class, _)) = RESIDUAL
        .iter()
        .find(|(_, ids)| ids.contains(&case.id.as_str()))
    {
        return class;
    }
    if let (Value::Object(e), Some(Value::Object(g))) = (exp, got) {
        let extra_empty = e
            .iter()
            .all(|(k, v)| g.get(k) == Some(v) || (!g.contains_key(k) && (v.is_null() || v == "")));
        if extra_empty && e.len() > g.len() {
            return "dangling_key_kept";
        }
    }
    "unclassified"
}
