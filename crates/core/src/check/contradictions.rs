//! Contradictions across sibling outputs: same identity key, different verdict.
//!
//! Several agents (a security specialist, a conventions specialist, ...) review
//! the same code and each emits a list of items (`/findings`). Items are grouped
//! by an identity key (`file`, `line`); a group whose compared fields
//! (`severity`) take more than one value is a [`Contradiction`], listing every
//! source's value and carrying the items themselves, so a downstream agent sees
//! the disagreement as data instead of silently picking one side.
//!
//! Note [Near lines]: two agents often point at neighbouring lines for the same
//! code (the `fn` line, the line of the `join`). With `near_lines: Some(n)`, items
//! whose key fields other than the line field are equal are sorted by line and
//! chained into one group while consecutive lines differ by at most `n`
//! (single linkage, so a group may span more than `n` lines). Such a group
//! reports the lines it covers (`lines`) and, like every contradiction, the
//! token-set similarity of the descriptions of its most similar disagreeing
//! pair, so a reviewer sees "almost the same finding, different verdict". Items
//! whose line is not an integer are grouped exactly.
//!
//! Note [Token-set similarity]: descriptions are compared by the Jaccard index
//! of their token sets (lowercased runs of letters and digits): |A∩B| / |A∪B|,
//! rounded to three decimals. It needs no model, is symmetric and order-blind,
//! and is 1 for the same words in any order; it says nothing about meaning
//! ("prevents path traversal" and "allows path traversal" share most tokens),
//! which is why it is reported beside the verdicts, not used to decide them.
//!
//! Compared values are equal when they are equal JSON (`"blocker"` differs from
//! `"Blocker"`; run the outputs through the schema's coercion first if that
//! matters). Key values compare as JSON too, with `42` and `42.0` the same.
//! Items of one source that disagree with each other are reported as well.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What to group and what to compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContradictionOptions {
    /// JSON Pointer to the array of items in each output (`""`: the output is
    /// the array).
    pub items: String,
    /// The identity fields of an item; items lacking any of them are counted
    /// in [`ContradictionReport::items_without_key`] and not grouped.
    pub key: Vec<String>,
    /// The verdict fields; a missing one counts as `null`.
    pub compare: Vec<String>,
    /// Also group items whose line field differs by at most this many lines
    /// (Note [Near lines]).
    pub near_lines: Option<u64>,
    /// The key field holding the line (`line`), used by `near_lines`.
    pub line_field: String,
    /// The field whose token-set similarity is reported (`description`).
    pub description_field: String,
}

impl Default for ContradictionOptions {
    /// The code-review profile's shape: `/findings`, key `file,line`, compare
    /// `severity`, descriptions in `description`.
    fn default() -> Self {
        ContradictionOptions {
            items: "/findings".into(),
            key: vec!["file".into(), "line".into()],
            compare: vec!["severity".into()],
            near_lines: None,
            line_field: "line".into(),
            description_field: "description".into(),
        }
    }
}

/// One source's verdict in a contradiction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourcedValue {
    /// The output it came from (a file name, an agent name).
    pub source: String,
    /// The compared field's value; an object of the compared fields when
    /// several are compared.
    pub value: Value,
}

/// One contradicting item, attached as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourcedItem {
    /// The output it came from.
    pub source: String,
    /// JSON Pointer to the item within that output.
    pub instance_path: String,
    /// The item as the agent wrote it.
    pub item: Value,
}

/// A group of items with the same identity and different verdicts.
///
/// Serialized in DESIGN.md's error shape (`instance_path`, `schema_path`,
/// `message`) plus `kind: "contradiction"` and the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contradiction {
    /// The first item's pointer within its source.
    pub instance_path: String,
    /// Empty: a contradiction comes from no schema keyword.
    pub schema_path: String,
    /// One line for people: what differs, where, and who said what.
    pub message: String,
    /// Always `"contradiction"`.
    pub kind: String,
    /// The identity: each key field's value (in near-line groups, the first line).
    pub key: Map<String, Value>,
    /// The distinct lines of a near-line group spanning several lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<Value>>,
    /// Every item's verdict, in source order.
    pub values: Vec<SourcedValue>,
    /// Token-set similarity of the descriptions of the most similar
    /// disagreeing pair (Note [Token-set similarity]); absent without descriptions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The contradicting items themselves (omitted when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<SourcedItem>,
}

/// A source whose items could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedSource {
    /// The output.
    pub source: String,
    /// Why, in one line.
    pub reason: String,
}

/// Everything [`find_contradictions`] found; the JSON a downstream agent reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContradictionReport {
    /// The sources, in the order given.
    pub sources: Vec<String>,
    /// The options used.
    pub options: ContradictionOptions,
    /// Items read across all sources.
    pub items_seen: usize,
    /// Items lacking a key field (not grouped).
    pub items_without_key: usize,
    /// Sources without an array at `options.items`.
    pub skipped: Vec<SkippedSource>,
    /// The contradictions, ordered by key.
    pub contradictions: Vec<Contradiction>,
}

/// One item with its identity and verdict.
struct Entry<'a> {
    source: usize,
    index: usize,
    item: &'a Value,
    /// Canonical identity, without the line field in near mode.
    bucket: String,
    line: Option<i64>,
    verdict: Value,
    verdict_canon: String,
}

/// Group the items of `sources` (name, output) by identity and report the
/// groups whose verdicts differ. Pure; sources without items are listed in
/// [`ContradictionReport::skipped`].
pub fn find_contradictions(
    sources: &[(&str, &Value)],
    opts: &ContradictionOptions,
) -> ContradictionReport {
    let mut report = ContradictionReport {
        sources: sources.iter().map(|(n, _)| (*n).to_owned()).collect(),
        options: opts.clone(),
        items_seen: 0,
        items_without_key: 0,
        skipped: Vec::new(),
        contradictions: Vec::new(),
    };
    let mut buckets: BTreeMap<String, Vec<Entry<'_>>> = BTreeMap::new();
    for (si, (name, output)) in sources.iter().enumerate() {
        let Some(Value::Array(items)) = output.pointer(&opts.items) else {
            report.skipped.push(SkippedSource {
                source: (*name).to_owned(),
                reason: format!("no array at `{}`", opts.items),
            });
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            report.items_seen += 1;
            match entry(si, index, item, opts) {
                Some(e) => buckets.entry(e.bucket.clone()).or_default().push(e),
                None => report.items_without_key += 1,
            }
        }
    }
    for (_, mut bucket) in buckets {
        if opts.near_lines.is_some() {
            bucket.sort_by_key(|e| (e.line, e.source, e.index));
        }
        for group in clusters(&bucket, opts.near_lines) {
            if let Some(c) = contradiction(group, sources, opts) {
                report.contradictions.push(c);
            }
        }
    }
    report
}

fn entry<'a>(
    source: usize,
    index: usize,
    item: &'a Value,
    opts: &ContradictionOptions,
) -> Option<Entry<'a>> {
    let mut bucket = String::new();
    let mut line = None;
    for field in &opts.key {
        let v = item.get(field)?;
        if opts.near_lines.is_some() && *field == opts.line_field {
            if let Some(n) = as_integer(v) {
                line = Some(n);
                bucket.push_str("\u{1f}~");
                continue;
            }
        }
        bucket.push_str(&canonical(v));
        bucket.push('\u{1f}');
    }
    let verdict = match opts.compare.as_slice() {
        [one] => item.get(one).cloned().unwrap_or(Value::Null),
        many => Value::Object(
            many.iter()
                .map(|f| (f.clone(), item.get(f).cloned().unwrap_or(Value::Null)))
                .collect(),
        ),
    };
    let verdict_canon = canonical(&verdict);
    Some(Entry {
        source,
        index,
        item,
        bucket,
        line,
        verdict,
        verdict_canon,
    })
}

/// Split one bucket into groups: the whole bucket without near lines, else
/// chains of lines at most `n` apart (Note [Near lines]).
fn clusters<'b, 'a>(bucket: &'b [Entry<'a>], near: Option<u64>) -> Vec<&'b [Entry<'a>]> {
    let Some(n) = near else {
        return vec![bucket];
    };
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..bucket.len() {
        let close = match (bucket[i - 1].line, bucket[i].line) {
            (Some(a), Some(b)) => b.abs_diff(a) <= n,
            _ => false,
        };
        if !close {
            out.push(&bucket[start..i]);
            start = i;
        }
    }
    if start < bucket.len() {
        out.push(&bucket[start..]);
    }
    out
}

fn contradiction(
    group: &[Entry<'_>],
    sources: &[(&str, &Value)],
    opts: &ContradictionOptions,
) -> Option<Contradiction> {
    let distinct: BTreeSet<&str> = group.iter().map(|e| e.verdict_canon.as_str()).collect();
    if distinct.len() < 2 {
        return None;
    }
    let first = group.first()?;
    let source_name = |e: &Entry<'_>| sources.get(e.source).map_or("", |s| s.0).to_owned();
    let pointer = |e: &Entry<'_>| format!("{}/{}", opts.items, e.index);
    let mut key = Map::new();
    for field in &opts.key {
        key.insert(
            field.clone(),
            first.item.get(field).cloned().unwrap_or(Value::Null),
        );
    }
    let lines: Vec<i64> = group
        .iter()
        .filter_map(|e| e.line)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let lines = (lines.len() > 1).then(|| lines.into_iter().map(Value::from).collect::<Vec<_>>());
    let values: Vec<SourcedValue> = group
        .iter()
        .map(|e| SourcedValue {
            source: source_name(e),
            value: e.verdict.clone(),
        })
        .collect();
    let items = group
        .iter()
        .map(|e| SourcedItem {
            source: source_name(e),
            instance_path: pointer(e),
            item: e.item.clone(),
        })
        .collect();
    let similarity = best_similarity(group, &opts.description_field);
    let compared = opts
        .compare
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let at = key
        .iter()
        .map(|(k, v)| match (k == &opts.line_field, &lines) {
            (true, Some(ls)) => format!(
                "{k}={}..{}",
                plain(ls.first().unwrap_or(v)),
                plain(ls.last().unwrap_or(v))
            ),
            _ => format!("{k}={}", plain(v)),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let said = values
        .iter()
        .map(|v| format!("{} ({})", plain(&v.value), v.source))
        .collect::<Vec<_>>()
        .join(" vs ");
    let mut message = format!("{compared} differs for {at}: {said}");
    if let Some(s) = similarity {
        let _ = write!(message, "; description similarity {s:.2}");
    }
    Some(Contradiction {
        instance_path: pointer(first),
        schema_path: String::new(),
        message,
        kind: "contradiction".into(),
        key,
        lines,
        values,
        similarity,
        items,
    })
}

/// The highest similarity among pairs with different verdicts that both have
/// a string description.
fn best_similarity(group: &[Entry<'_>], field: &str) -> Option<f64> {
    let mut best: Option<f64> = None;
    for (i, a) in group.iter().enumerate() {
        for b in &group[i + 1..] {
            if a.verdict_canon == b.verdict_canon {
                continue;
            }
            let (Some(Value::String(da)), Some(Value::String(db))) =
                (a.item.get(field), b.item.get(field))
            else {
                continue;
            };
            let s = token_jaccard(da, db);
            best = Some(best.map_or(s, |x: f64| x.max(s)));
        }
    }
    best.map(|s| (s * 1000.0).round() / 1000.0)
}

/// Jaccard index of the token sets of `a` and `b` (Note [Token-set
/// similarity]); 1 when both have no tokens.
pub fn token_jaccard(a: &str, b: &str) -> f64 {
    let ta = tokens(a);
    let tb = tokens(b);
    if ta.is_empty() && tb.is_empty() {
        return 1.0;
    }
    let common = ta.intersection(&tb).count();
    let all = ta.union(&tb).count();
    common as f64 / all as f64
}

fn tokens(s: &str) -> HashSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// An integral JSON number as `i64` (`42` and `42.0` alike).
fn as_integer(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let f = v.as_f64()?;
    // Integral and in range: the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
}

/// A canonical text for equality: JSON, with integral numbers as integers.
fn canonical(v: &Value) -> String {
    match as_integer(v) {
        Some(i) if v.is_number() => i.to_string(),
        _ => v.to_string(),
    }
}

/// A value for a message: strings without quotes.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn finding(file: &str, line: i64, severity: &str, description: &str) -> Value {
        json!({"file": file, "line": line, "severity": severity, "description": description,
               "raisedBy": "x"})
    }

    #[test]
    fn same_key_different_severity_is_a_contradiction() {
        let security = json!({"findings": [
            finding("src/tools/fs.ts", 42, "blocker", "absolute path allows path traversal"),
            finding("src/a.ts", 1, "minor", "naming"),
        ]});
        let conventions = json!({"findings": [
            finding("src/tools/fs.ts", 42, "nit", "workspace path resolution prevents path traversal"),
            finding("src/a.ts", 1, "minor", "naming"),
        ]});
        let report = find_contradictions(
            &[("security", &security), ("conventions", &conventions)],
            &ContradictionOptions::default(),
        );
        assert_eq!(report.items_seen, 4);
        assert_eq!(report.contradictions.len(), 1);
        let c = &report.contradictions[0];
        assert_eq!(
            c.key,
            *json!({"file": "src/tools/fs.ts", "line": 42})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            serde_json::to_value(&c.values).unwrap(),
            json!([{"source": "security", "value": "blocker"},
                   {"source": "conventions", "value": "nit"}])
        );
        assert_eq!(c.instance_path, "/findings/0");
        assert_eq!(c.items[1].instance_path, "/findings/0");
        assert_eq!(c.items[1].source, "conventions");
        // {path, traversal} shared of 7 distinct tokens.
        assert_eq!(c.similarity, Some(0.286));
        assert_eq!(
            c.message,
            "`severity` differs for file=src/tools/fs.ts line=42: blocker (security) vs nit \
             (conventions); description similarity 0.29"
        );
    }

    #[test]
    fn near_lines_chain_neighbours_and_report_the_span() {
        let a = json!({"findings": [finding("f.rs", 10, "blocker", "unbounded read of input")]});
        let b = json!({"findings": [finding("f.rs", 12, "minor", "unbounded read of the input"),
                                    finding("f.rs", 30, "nit", "style")]});
        let exact = find_contradictions(&[("a", &a), ("b", &b)], &ContradictionOptions::default());
        assert_eq!(exact.contradictions.len(), 0);
        let opts = ContradictionOptions {
            near_lines: Some(2),
            ..ContradictionOptions::default()
        };
        let near = find_contradictions(&[("a", &a), ("b", &b)], &opts);
        assert_eq!(near.contradictions.len(), 1);
        let c = &near.contradictions[0];
        assert_eq!(c.lines, Some(vec![json!(10), json!(12)]));
        assert_eq!(c.similarity, Some(0.8));
        assert!(c.message.contains("line=10..12"), "{}", c.message);
        let tight = ContradictionOptions {
            near_lines: Some(1),
            ..ContradictionOptions::default()
        };
        assert!(
            find_contradictions(&[("a", &a), ("b", &b)], &tight)
                .contradictions
                .is_empty()
        );
    }

    #[test]
    fn several_compared_fields_give_objects_and_missing_keys_are_counted() {
        let a = json!([{"id": 1, "ok": true, "score": 3}, {"ok": false}]);
        let b = json!([{"id": 1.0, "ok": true, "score": 4}]);
        let opts = ContradictionOptions {
            items: String::new(),
            key: vec!["id".into()],
            compare: vec!["ok".into(), "score".into()],
            ..ContradictionOptions::default()
        };
        let r = find_contradictions(&[("a", &a), ("b", &b), ("c", &json!({}))], &opts);
        assert_eq!(r.items_without_key, 1);
        assert_eq!(
            r.skipped,
            [SkippedSource {
                source: "c".into(),
                reason: "no array at ``".into()
            }]
        );
        assert_eq!(r.contradictions.len(), 1);
        assert_eq!(
            r.contradictions[0].values[1].value,
            json!({"ok": true, "score": 4})
        );
        assert_eq!(r.contradictions[0].similarity, None);
    }

    #[test]
    fn token_jaccard_table() {
        for (a, b, want) in [
            ("Path traversal", "path TRAVERSAL", 1.0),
            ("a b", "c d", 0.0),
            ("", "", 1.0),
            ("a b c", "a b", 2.0 / 3.0),
        ] {
            assert!((token_jaccard(a, b) - want).abs() < 1e-9, "{a} / {b}");
        }
    }
}
