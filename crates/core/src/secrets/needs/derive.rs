//! The literals every match of a pattern holds, read off its syntax tree.
//!
//! A module of the build script (which writes the built-in rules' table)
//! and of core's tests (which check it), never of the library: see Note
//! \[Literals a match needs\] in `needs/mod.rs`.

/// One byte of a needed literal: exactly this byte, or an ASCII letter in
/// either case (`(?i)` folds it; kept lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Exact(u8),
    Fold(u8),
}

/// A literal that a match may hold.
pub type Literal = Vec<Unit>;

/// Every match holds a literal of each of these lists (each list one
/// requirement; none, nothing is known).
pub type Needs = Vec<Vec<Literal>>;

/// The most literals one requirement may list (more would cost more to look
/// for than they save).
const MOST_CHOICES: usize = 8;
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
    let implied: Vec<bool> = (0..needs.len())
        .map(|a| {
            (0..needs.len()).any(|b| {
                b != a
                    && needs[b]
                        .iter()
                        .all(|lb| needs[a].iter().any(|la| contains(lb, la)))
            })
        })
        .collect();
    let mut keep = implied.iter().map(|&i| !i);
    needs.retain(|_| keep.next().unwrap_or(true));
    // Keep the strongest: the requirement whose shortest literal is longest.
    needs.sort_by_key(|n| std::cmp::Reverse(n.iter().map(Vec::len).min().unwrap_or(0)));
    needs.dedup();
    needs.truncate(MOST_NEEDS);
    needs
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
            // Each item's needs hold; so does each run of adjacent literal items.
            let mut out: Needs = items.iter().flat_map(needs).collect();
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
                best.sort_by_key(|n| std::cmp::Reverse(n.iter().map(Vec::len).min().unwrap_or(0)));
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
        };
        key(self).cmp(&key(other))
    }
}
