//! The literals every match of a pattern holds, read off its syntax tree.
//!
//! A module of the build script (which writes the built-in rules' table)
//! and of core's tests (which check it), never of the library: see Note
//! \[Literals a match needs\] in `needs/mod.rs`.

/// One byte of a needed literal: exactly this byte, or an ASCII letter in
/// either case (`(?i)` folds it; kept lower case); or, first in a literal
/// only, a word boundary (`\b`) before its first byte, which is an ASCII
/// word byte (Note \[Literals at a word boundary\] in `needs/mod.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Exact(u8),
    Fold(u8),
    Boundary,
}

/// The longest literal a finite language may hold (longer ones add little
/// and a product of them grows fast).
const LONGEST: usize = 40;

/// A literal that a match may hold.
pub type Literal = Vec<Unit>;

/// Every match holds a literal of each of these lists (each list one
/// requirement; none, nothing is known).
pub type Needs = Vec<Vec<Literal>>;

/// The most literals one requirement may list (more would cost more to look
/// for than they save).
pub(super) const MOST_CHOICES: usize = 8;
/// The most requirements kept for one pattern (the longest first).
const MOST_NEEDS: usize = 3;

/// What every match of `pattern` (Rust syntax, as the detector compiles it)
/// needs; empty when it cannot be read (a parse error: the compile reports it).
pub fn needs_of(pattern: &str) -> Needs {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Vec::new();
    };
    let mut needs = needs(&hir);
    needs.sort();
    needs.dedup();
    // A requirement that another implies says nothing more (`k` beside `key`).
    // Of two that imply each other (`d` and `abcd|d`), the one with fewer
    // literals is kept.
    let holds_all = |b: usize, a: usize| {
        needs[b]
            .iter()
            .all(|lb| needs[a].iter().any(|la| contains(lb, la)))
    };
    let implied: Vec<bool> = (0..needs.len())
        .map(|a| {
            (0..needs.len()).any(|b| {
                b != a
                    && holds_all(b, a)
                    && (!holds_all(a, b) || (needs[b].len(), b) < (needs[a].len(), a))
            })
        })
        .collect();
    let mut keep = implied.iter().map(|&i| !i);
    needs.retain(|_| keep.next().unwrap_or(true));
    // Keep the strongest: the requirement whose shortest literal is longest
    // (in bytes: the detector looks for the first requirement first, and a
    // boundary makes `ey` rarer than `.ey` only after it is found).
    needs.sort_by_key(|n| std::cmp::Reverse(n.iter().map(|l| bytes(l)).min().unwrap_or(0)));
    needs.dedup();
    needs.truncate(MOST_NEEDS);
    needs
}

/// `lit` as the detector's table holds it (`needs::Literal`): its bytes,
/// whether it folds, whether it is needed at a word boundary. Exact bytes
/// stay as written when nothing folds; otherwise they are lower case,
/// compared ignoring case (which only widens an exact byte). A boundary is
/// only ever first ([`required`]). The build script writes this; the
/// tests read it.
pub fn as_table(lit: &[Unit]) -> (Vec<u8>, bool, bool) {
    let folded = lit.iter().any(|u| matches!(u, Unit::Fold(_)));
    let boundary = lit.first() == Some(&Unit::Boundary);
    let bytes = lit
        .iter()
        .filter_map(|u| match *u {
            Unit::Exact(b) if folded => Some(b.to_ascii_lowercase()),
            Unit::Exact(b) | Unit::Fold(b) => Some(b),
            Unit::Boundary => None,
        })
        .collect();
    (bytes, folded, boundary)
}

/// How many bytes `l` has (a boundary is none).
fn bytes(l: &[Unit]) -> usize {
    l.iter().filter(|&&u| u != Unit::Boundary).count()
}

/// Whether `outer` holds `inner`.
fn contains(outer: &[Unit], inner: &[Unit]) -> bool {
    inner.is_empty() || outer.windows(inner.len()).any(|w| w == inner)
}

/// The byte `hir` always is, when it is one byte (a literal byte or an ASCII
/// letter in both cases, with the Unicode characters that fold to it).
fn unit(hir: &regex_syntax::hir::Hir) -> Option<Unit> {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Literal(lit) if lit.0.len() == 1 => Some(Unit::Exact(lit.0[0])),
        HirKind::Class(Class::Unicode(c)) => {
            // A range of more than a few characters is not one letter's.
            if c.ranges()
                .iter()
                .any(|r| u32::from(r.end()) - u32::from(r.start()) > 2)
            {
                return None;
            }
            let chars: Vec<char> = c
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .collect();
            letter(&chars, c.ranges().len())
        }
        HirKind::Class(Class::Bytes(c)) => {
            if c.ranges().iter().any(|r| r.end() - r.start() > 2) {
                return None;
            }
            let bytes: Vec<char> = c
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(char::from)
                .collect();
            letter(&bytes, c.ranges().len())
        }
        _ => None,
    }
}

/// `chars` (a class's members, `ranges` of them) as one case-folded ASCII
/// letter: its two cases, and the Kelvin sign or the long s that fold to
/// `k` and `s`.
fn letter(chars: &[char], ranges: usize) -> Option<Unit> {
    if ranges == 0 || chars.is_empty() {
        return None;
    }
    let first = chars[0].to_ascii_lowercase();
    if !first.is_ascii_lowercase() {
        return None;
    }
    let allowed = |c: char| {
        c.to_ascii_lowercase() == first
            || (first == 'k' && c == '\u{212A}')
            || (first == 's' && c == '\u{17F}')
    };
    let both = chars.contains(&first) && chars.contains(&first.to_ascii_uppercase());
    (both && chars.iter().all(|&c| allowed(c))).then_some(Unit::Fold(first as u8))
}

/// The literal bytes `hir` always matches, as units, when it is a literal
/// (a run of literal bytes and single folded letters).
fn run(hir: &regex_syntax::hir::Hir) -> Option<Literal> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(lit) => Some(lit.0.iter().map(|&b| Unit::Exact(b)).collect()),
        HirKind::Capture(c) => run(&c.sub),
        HirKind::Concat(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(run(i)?);
            }
            Some(out)
        }
        _ => unit(hir).map(|u| vec![u]),
    }
}

fn needs(hir: &regex_syntax::hir::Hir) -> Needs {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(_) | HirKind::Class(_) => {
            run(hir).map(|l| vec![vec![l]]).unwrap_or_default()
        }
        HirKind::Capture(c) => needs(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => needs(&r.sub),
        // Empty, a look-around, or what may repeat zero times: nothing.
        HirKind::Empty | HirKind::Look(_) | HirKind::Repetition(_) => Vec::new(),
        HirKind::Concat(items) => {
            // Each item's needs hold; so does each run of adjacent literal
            // items, and each product of adjacent finite items.
            let mut out: Needs = items.iter().flat_map(needs).collect();
            out.extend(products(items));
            let mut current: Literal = Vec::new();
            for i in items {
                if let Some(l) = run(i) {
                    current.extend(l);
                } else {
                    if current.len() > 1 {
                        out.push(vec![std::mem::take(&mut current)]);
                    }
                    current.clear();
                }
            }
            if current.len() > 1 {
                out.push(vec![current]);
            }
            out
        }
        HirKind::Alternation(branches) => {
            // A match is one branch's: it holds one of the branches' strongest choices.
            let mut choices: Vec<Literal> = Vec::new();
            for b in branches {
                let mut best = needs(b);
                best.sort_by_key(|n| {
                    std::cmp::Reverse(n.iter().map(|l| bytes(l)).min().unwrap_or(0))
                });
                match best.into_iter().next() {
                    Some(n) => choices.extend(n),
                    None => return Vec::new(),
                }
            }
            choices.sort();
            choices.dedup();
            if choices.is_empty() || choices.len() > MOST_CHOICES {
                Vec::new()
            } else {
                vec![choices]
            }
        }
    }
}

/// Note \[Products of small languages\]: a run of adjacent items each of
/// which matches one of a few strings (a literal, a class of a few bytes,
/// an optional one of them, an alternation of them) matches one string of
/// their product, and the next item, when every one of its matches begins
/// with one of a few literals, adds its beginning too. So every match of
/// `sonar[_.-]?(login|token)` holds one of eight literals (`sonar_token`,
/// `sonarlogin`…), where separate literals asked only for `sonar` and one of
/// `login`/`token`, which `sonarr` beside any `token` met. A run that begins
/// right after a word boundary (`\b`) keeps it: a literal whose first byte
/// is a word byte is then needed where no word byte comes before it.
fn products(items: &[regex_syntax::hir::Hir]) -> Needs {
    use regex_syntax::hir::{HirKind, Look};
    let mut out = Vec::new();
    let mut start = 0;
    while start < items.len() {
        // Looks before the run match nothing; a word boundary among them
        // is kept.
        let mut boundary = false;
        while let Some(HirKind::Look(look)) = items.get(start).map(regex_syntax::hir::Hir::kind) {
            boundary |= matches!(
                look,
                Look::WordUnicode
                    | Look::WordAscii
                    | Look::WordStartUnicode
                    | Look::WordStartAscii
                    | Look::WordStartHalfUnicode
                    | Look::WordStartHalfAscii
            );
            start += 1;
        }
        if start >= items.len() {
            break;
        }
        let mut acc: Vec<Literal> = vec![Vec::new()];
        let mut end = start;
        while let Some(next) = items
            .get(end)
            .and_then(language)
            .and_then(|l| product(&acc, &l))
        {
            acc = next;
            end += 1;
        }
        let mut spans = end - start;
        if let Some(next) = items
            .get(end)
            .and_then(prefixes)
            .and_then(|p| product(&acc, &p))
        {
            acc = next;
            spans += 1;
        }
        // One item alone says no more than its own needs, but for a boundary.
        if spans >= 2 || (spans == 1 && boundary) {
            if let Some(choices) = required(acc, boundary) {
                out.push(choices);
            }
        }
        // A finite item the product had no room for may begin the next run.
        start = if end > start && items.get(end).and_then(language).is_some() {
            end
        } else {
            end + 1
        };
    }
    out
}

/// `choices` as a requirement, each literal marked as needing a word
/// boundary before it when `boundary` and its first byte is a word byte;
/// `None` when a choice is empty (a match may hold none of them).
fn required(mut choices: Vec<Literal>, boundary: bool) -> Option<Vec<Literal>> {
    if choices.is_empty() || choices.iter().any(Vec::is_empty) || choices.len() > MOST_CHOICES {
        return None;
    }
    if boundary {
        for c in &mut choices {
            let word = match c[0] {
                Unit::Exact(b) => b.is_ascii_alphanumeric() || b == b'_',
                Unit::Fold(_) => true,
                Unit::Boundary => false,
            };
            if word {
                c.insert(0, Unit::Boundary);
            }
        }
    }
    choices.sort();
    choices.dedup();
    Some(choices)
}

/// Every string of `a` followed by every string of `b`, when there are at
/// most [`MOST_CHOICES`] and none is longer than [`LONGEST`].
fn product(a: &[Literal], b: &[Literal]) -> Option<Vec<Literal>> {
    if a.len() * b.len() > MOST_CHOICES {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            if x.len() + y.len() > LONGEST {
                return None;
            }
            let mut l = x.clone();
            l.extend_from_slice(y);
            out.push(l);
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

/// Every string `hir` matches, when they are few (a look-around matches
/// the empty string: it only narrows where the others may be).
fn language(hir: &regex_syntax::hir::Hir) -> Option<Vec<Literal>> {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![Vec::new()]),
        HirKind::Literal(lit) => {
            (lit.0.len() <= LONGEST).then(|| vec![lit.0.iter().map(|&b| Unit::Exact(b)).collect()])
        }
        HirKind::Class(class) => {
            if let Some(u) = unit(hir) {
                return Some(vec![vec![u]]);
            }
            // A class of a few ASCII bytes: each of them.
            let bytes: Vec<u8> = match class {
                Class::Unicode(c) => {
                    let n: u32 = c
                        .ranges()
                        .iter()
                        .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                        .sum();
                    if n > 4 || c.ranges().iter().any(|r| !r.end().is_ascii()) {
                        return None;
                    }
                    c.ranges()
                        .iter()
                        .flat_map(|r| r.start()..=r.end())
                        .map(|ch| ch as u8)
                        .collect()
                }
                Class::Bytes(c) => {
                    let n: u32 = c
                        .ranges()
                        .iter()
                        .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                        .sum();
                    if n > 4 {
                        return None;
                    }
                    c.ranges()
                        .iter()
                        .flat_map(|r| r.start()..=r.end())
                        .collect()
                }
            };
            Some(bytes.into_iter().map(|b| vec![Unit::Exact(b)]).collect())
        }
        HirKind::Capture(c) => language(&c.sub),
        HirKind::Repetition(r) if r.max == Some(1) && r.min <= 1 => {
            let mut l = language(&r.sub)?;
            if r.min == 0 {
                l.push(Vec::new());
            }
            (l.len() <= MOST_CHOICES).then_some(l)
        }
        HirKind::Repetition(_) => None,
        HirKind::Concat(items) => items
            .iter()
            .try_fold(vec![Vec::new()], |acc, i| product(&acc, &language(i)?)),
        HirKind::Alternation(branches) => union(branches, language),
    }
}

/// What `each` gives for every branch, together, when every branch gives
/// something and there are at most [`MOST_CHOICES`].
fn union(
    branches: &[regex_syntax::hir::Hir],
    each: fn(&regex_syntax::hir::Hir) -> Option<Vec<Literal>>,
) -> Option<Vec<Literal>> {
    let mut out = Vec::new();
    for b in branches {
        out.extend(each(b)?);
    }
    out.sort();
    out.dedup();
    (out.len() <= MOST_CHOICES).then_some(out)
}

/// Literals one of which every match of `hir` begins with, when they are
/// few and none is empty.
fn prefixes(hir: &regex_syntax::hir::Hir) -> Option<Vec<Literal>> {
    use regex_syntax::hir::HirKind;
    if let Some(l) = language(hir) {
        return (!l.iter().any(Vec::is_empty)).then_some(l);
    }
    match hir.kind() {
        HirKind::Capture(c) => prefixes(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => prefixes(&r.sub),
        HirKind::Concat(items) => {
            let mut acc: Vec<Literal> = vec![Vec::new()];
            for i in items {
                if let Some(l) = language(i) {
                    acc = product(&acc, &l)?;
                } else {
                    if let Some(p) = prefixes(i) {
                        acc = product(&acc, &p).unwrap_or(acc);
                    }
                    break;
                }
            }
            (!acc.iter().any(Vec::is_empty)).then_some(acc)
        }
        HirKind::Alternation(branches) => union(branches, prefixes),
        _ => None,
    }
}

impl PartialOrd for Unit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Unit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let key = |u: &Unit| match *u {
            Unit::Exact(b) => (0, b),
            Unit::Fold(b) => (1, b),
            Unit::Boundary => (2, 0),
        };
        key(self).cmp(&key(other))
    }
}
