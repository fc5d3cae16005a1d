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
//! whose key fields other than the line field are equal (one bucket, found
//! through an index keyed by those fields) are sorted by line and grouped by
//! anchor: the lowest line not yet grouped is an anchor, and its group takes
//! every item whose line is at most `n` past the anchor's; the next item
//! starts the next group. Nearness is measured against the anchor, never
//! against the last member, so groups do not chain: with `n = 3`, lines 10,
//! 13 and 16 make the groups {10, 13} and {16}, and a file with a finding on
//! every line is cut into groups of `n + 1` lines instead of becoming one
//! "contradiction". Grouping is one pass over the sorted bucket. Such a group
//! reports the lines it covers (`lines`) and, like every contradiction, the
//! token-set similarity of the descriptions of its most similar disagreeing
//! pair, so a reviewer sees "almost the same finding, different verdict". Items
//! whose line is not an integer are grouped exactly.
//!
//! Note [Similarity budget]: the similarity compares pairs within one group,
//! which is quadratic in the group's size; a group is small unless many items
//! share a few lines. Descriptions are tokenized once per item (tokens
//! interned as numbers, compared by merging sorted lists), and at most
//! [`SIMILARITY_PAIRS`] pairs of one group are compared, in order; past that
//! the reported similarity is the best of the pairs compared.
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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
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
    let mut tokens = Tokenizer::default();
    for (_, mut bucket) in buckets {
        if opts.near_lines.is_some() {
            bucket.sort_by_key(|e| (e.line, e.source, e.index));
        }
        for group in clusters(&bucket, opts.near_lines) {
            if let Some(c) = contradiction(group, sources, opts, &mut tokens) {
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
/// anchor groups of lines at most `n` past their anchor (Note [Near lines]).
/// `bucket` is sorted by line (items without an integer line first).
fn clusters<'b, 'a>(bucket: &'b [Entry<'a>], near: Option<u64>) -> Vec<&'b [Entry<'a>]> {
    let Some(n) = near else {
        return vec![bucket];
    };
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(anchor) = bucket.get(start) {
        let belongs = |e: &Entry<'_>| match (anchor.line, e.line) {
            (None, None) => true,
            (Some(a), Some(b)) => b.abs_diff(a) <= n,
            _ => false,
        };
        let len = bucket
            .get(start + 1..)
            .unwrap_or_default()
            .iter()
            .take_while(|e| belongs(e))
            .count();
        let end = start + 1 + len;
        out.push(bucket.get(start..end).unwrap_or_default());
        start = end;
    }
    out
}

fn contradiction(
    group: &[Entry<'_>],
    sources: &[(&str, &Value)],
    opts: &ContradictionOptions,
    tokens: &mut Tokenizer,
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
    let similarity = best_similarity(group, &opts.description_field, tokens);
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

/// At most this many pairs of one group are compared for the similarity
/// (Note [Similarity budget]).
pub const SIMILARITY_PAIRS: usize = 100_000;

/// The highest similarity among pairs with different verdicts that both have
/// a string description (at most [`SIMILARITY_PAIRS`] pairs compared).
fn best_similarity(group: &[Entry<'_>], field: &str, tokens: &mut Tokenizer) -> Option<f64> {
    let sets: Vec<Option<Vec<u32>>> = group
        .iter()
        .map(|e| match e.item.get(field) {
            Some(Value::String(d)) => Some(tokens.ids(d)),
            _ => None,
        })
        .collect();
    let mut best: Option<f64> = None;
    let mut budget = SIMILARITY_PAIRS;
    for (i, (a, sa)) in group.iter().zip(&sets).enumerate() {
        let Some(sa) = sa else { continue };
        for (b, sb) in group.iter().zip(&sets).skip(i + 1) {
            if a.verdict_canon == b.verdict_canon {
                continue;
            }
            let Some(sb) = sb else { continue };
            if budget == 0 {
                return best.map(round3);
            }
            budget -= 1;
            let s = sorted_jaccard(sa, sb);
            best = Some(best.map_or(s, |x: f64| x.max(s)));
        }
    }
    best.map(round3)
}

fn round3(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

/// Interns tokens as numbers, so a description's token set is a sorted list
/// of `u32` and two sets compare by one merge.
#[derive(Default)]
struct Tokenizer {
    ids: HashMap<String, u32>,
}

impl Tokenizer {
    fn ids(&mut self, text: &str) -> Vec<u32> {
        let mut out: Vec<u32> = tokens(text)
            .into_iter()
            .map(|t| {
                let next = u32::try_from(self.ids.len()).unwrap_or(u32::MAX);
                *self.ids.entry(t).or_insert(next)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The Jaccard index of two sorted, deduplicated lists (1 when both are empty).
fn sorted_jaccard(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
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
    fn near_lines_group_neighbours_and_report_the_span() {
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

    /// Issue 13: nearness is measured against the group's anchor, so 10, 13
    /// and 16 with `near_lines: 3` are not one group (13 and 16 are 3 apart,
    /// but 16 is 6 past the anchor 10).
    #[test]
    fn near_lines_do_not_chain() {
        let a = json!({"findings": [finding("f.rs", 10, "blocker", "x")]});
        let b = json!({"findings": [finding("f.rs", 13, "minor", "x")]});
        let c = json!({"findings": [finding("f.rs", 16, "nit", "x")]});
        let opts = ContradictionOptions {
            near_lines: Some(3),
            ..ContradictionOptions::default()
        };
        let r = find_contradictions(&[("a", &a), ("b", &b), ("c", &c)], &opts);
        assert_eq!(r.contradictions.len(), 1, "{:#?}", r.contradictions);
        let only = &r.contradictions[0];
        assert_eq!(only.lines, Some(vec![json!(10), json!(13)]));
        assert_eq!(only.values.len(), 2);
        assert!(only.message.contains("line=10..13"), "{}", only.message);
    }

    /// A finding on every line of one file, in three sources that disagree
    /// everywhere: anchor groups of `n + 1` lines, never one group for the
    /// whole file (a functional check, not a timed one; the 20,000-finding
    /// case is the `check` bench).
    #[test]
    fn a_finding_on_every_line_makes_many_small_groups() {
        let n = 600;
        let sev = ["blocker", "major", "minor"];
        let outputs: Vec<Value> = (0..3)
            .map(|s| {
                let findings: Vec<Value> = (1..=n)
                    .map(|line| finding("src/big.rs", line, sev[s], &format!("finding {line}")))
                    .collect();
                json!({ "findings": findings })
            })
            .collect();
        let sources: Vec<(&str, &Value)> = ["a", "b", "c"].into_iter().zip(&outputs).collect();
        let opts = ContradictionOptions {
            near_lines: Some(50),
            ..ContradictionOptions::default()
        };
        let r = find_contradictions(&sources, &opts);
        assert_eq!(r.items_seen, 1800);
        // Lines 1..=51, 52..=102, ...: 12 groups of 51 lines, the last of 39.
        assert_eq!(r.contradictions.len(), 12);
        for c in &r.contradictions {
            let lines = c.lines.as_ref().unwrap();
            let first = lines.first().unwrap().as_i64().unwrap();
            let last = lines.last().unwrap().as_i64().unwrap();
            assert!(last - first <= 50, "{first}..{last}");
            assert_eq!(c.values.len(), 3 * lines.len());
        }
        assert_eq!(r.contradictions[1].key["line"], json!(52));
        // Same descriptions on the same line across sources: similarity 1.
        assert_eq!(r.contradictions[0].similarity, Some(1.0));
    }

    #[test]
    fn items_with_the_same_non_integer_line_are_one_group() {
        let a = json!({"findings": [{"file": "f", "line": "12a", "severity": "blocker"}]});
        let b = json!({"findings": [{"file": "f", "line": "12a", "severity": "nit"}]});
        let opts = ContradictionOptions {
            near_lines: Some(3),
            ..ContradictionOptions::default()
        };
        let r = find_contradictions(&[("a", &a), ("b", &b)], &opts);
        assert_eq!(r.contradictions.len(), 1);
    }

    #[test]
    fn sorted_jaccard_matches_the_set_jaccard() {
        let mut t = Tokenizer::default();
        for (a, b) in [
            ("Path traversal", "path TRAVERSAL"),
            ("a b", "c d"),
            ("", ""),
            ("a b c", "a b"),
            ("x y y z", "z q"),
        ] {
            let (ia, ib) = (t.ids(a), t.ids(b));
            assert!(
                (sorted_jaccard(&ia, &ib) - token_jaccard(a, b)).abs() < 1e-12,
                "{a} / {b}"
            );
        }
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
