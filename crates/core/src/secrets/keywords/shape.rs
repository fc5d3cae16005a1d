//! What every match of a pattern holds where one of its keywords is: the
//! keyword's bytes as the match has them and the bytes right after.
//!
//! A module of the build script (which writes the built-in rules' table)
//! and of core's tests (which check it), never of the library: Note
//! \[Keywords as a match holds them\] in `keywords.rs`.

use super::byteset::{ByteSet, join_all, one, union};

/// Bytes after a keyword a shape says (at most; fewer when the match may
/// hold fewer after it).
pub const AFTER: usize = 3;

/// Whether every byte of `set` is `lower` (an ASCII lower-case byte) or
/// its capital, and it holds one.
fn is_folded(set: &ByteSet, lower: u8) -> bool {
    let both = union(&one(lower), &one(lower.to_ascii_uppercase()));
    *set != [0; 4] && union(set, &both) == both
}

/// Per byte from `keyword`'s first (lower case, as the detector holds
/// keywords), the bytes a match of `pattern` (Rust syntax, as the detector
/// compiles it) has there, for the keyword's bytes and the [`AFTER`] after
/// them, where every match holds the keyword so; `None` when that is not
/// known (a parse error included: the compile reports it).
pub fn shape_of(pattern: &str, keyword: &[u8]) -> Option<Vec<ByteSet>> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    at(&hir, keyword)
}

fn at(hir: &regex_syntax::hir::Hir, keyword: &[u8]) -> Option<Vec<ByteSet>> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(c) => at(&c.sub, keyword),
        // A match holds at least one match of `sub`, whole.
        HirKind::Repetition(r) if r.min >= 1 => at(&r.sub, keyword),
        // A match is one branch's: what each branch holds, joined.
        HirKind::Alternation(branches) => join_all(branches.iter().map(|b| at(b, keyword))),
        // A match holds a match of each item: one that says is enough;
        // else the runs of bytes at fixed places are read.
        HirKind::Concat(items) => items
            .iter()
            .find_map(|i| at(i, keyword))
            .or_else(|| in_runs(items, keyword)),
        HirKind::Literal(_) => in_runs(std::slice::from_ref(hir), keyword),
        _ => None,
    }
}

/// The set of bytes `hir` matches when it matches one byte; `None`
/// otherwise. A class with characters outside ASCII may begin with any
/// byte above it.
fn byte_set(hir: &regex_syntax::hir::Hir) -> Option<ByteSet> {
    use regex_syntax::hir::{Class, HirKind};
    let mut set = [0u64; 4];
    match hir.kind() {
        HirKind::Literal(lit) if lit.0.len() == 1 => return Some(one(lit.0[0])),
        HirKind::Class(Class::Bytes(c)) => {
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    set = union(&set, &one(b));
                }
            }
        }
        HirKind::Class(Class::Unicode(c)) => {
            for r in c.ranges() {
                for ch in r.start()..=r.end().min('\u{7f}') {
                    set = union(&set, &one(ch as u8));
                }
                if u32::from(r.end()) > 0x7f {
                    for b in 0x80..=0xff {
                        set = union(&set, &one(b));
                    }
                }
            }
        }
        HirKind::Capture(c) => return byte_set(&c.sub),
        _ => return None,
    }
    Some(set)
}

/// Each item's bytes at fixed places, in runs that end where a match's
/// next byte is not at a known place (what may repeat, or be left out);
/// the first place in a run where every match holds `keyword` (each byte
/// of it or its capital) with [`AFTER`] more bytes after it in the run.
fn in_runs(items: &[regex_syntax::hir::Hir], keyword: &[u8]) -> Option<Vec<ByteSet>> {
    use regex_syntax::hir::HirKind;
    let mut runs: Vec<Vec<ByteSet>> = vec![Vec::new()];
    for item in items {
        let run = runs.last_mut()?;
        match item.kind() {
            HirKind::Literal(lit) => run.extend(lit.0.iter().map(|&b| one(b))),
            // Looks match no byte: the run goes on.
            HirKind::Look(_) => {}
            HirKind::Repetition(r) => match byte_set(&r.sub) {
                Some(set) => {
                    // `min` bytes at known places; what more may come ends the run.
                    let min = usize::try_from(r.min).unwrap_or(usize::MAX);
                    run.extend(std::iter::repeat_n(set, min.min(keyword.len() + AFTER)));
                    if r.max != Some(r.min) {
                        runs.push(Vec::new());
                    }
                }
                None => runs.push(Vec::new()),
            },
            _ => match byte_set(item) {
                Some(set) => run.push(set),
                None => runs.push(Vec::new()),
            },
        }
    }
    let want = keyword.len() + AFTER;
    runs.iter().find_map(|run| {
        run.windows(want)
            .find(|w| w.iter().zip(keyword).all(|(s, &k)| is_folded(s, k)))
            .map(<[ByteSet]>::to_vec)
    })
}

#[cfg(test)]
mod tests {
    use super::super::byteset::{ByteSet, holds};
    use super::shape_of;

    /// The bytes of a set, as a string.
    fn bytes(s: &ByteSet) -> String {
        (0..=255u8)
            .filter(|&b| holds(s, b))
            .map(char::from)
            .collect()
    }

    fn shape(pattern: &str, keyword: &str) -> Option<Vec<String>> {
        shape_of(pattern, keyword.as_bytes()).map(|s| s.iter().map(bytes).collect())
    }

    const ALNUM: &str = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const HEX: &str = "0123456789ABCDEFabcdef";

    #[test]
    fn shapes_read_off_the_patterns() {
        let s = |v: &[&str]| Some(v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        // JWT: `ey` as written, then letters and digits.
        assert_eq!(
            shape(r"\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,})", "ey"),
            s(&["e", "y", ALNUM, ALNUM, ALNUM])
        );
        // Twilio: capitals, then hex digits.
        assert_eq!(
            shape("SK[0-9a-fA-F]{32}", "sk"),
            s(&["S", "K", HEX, HEX, HEX])
        );
        // Branches joined: `hvs.` has `s.` too, followed by word bytes or `-`.
        let vault = r"\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'\x22\s;]|$)";
        // `\w` is Unicode's: any byte above ASCII may begin one.
        let above: String = (0x80..=0xffu8).map(char::from).collect();
        let word =
            &format!("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz{above}");
        assert_eq!(shape(vault, "s."), s(&["s", ".", word, word, word]));
        // The `s.` branch holds no `hvs.`: nothing known of it.
        assert_eq!(shape(vault, "hvs."), None);
        // Folded by `(?i)`: both cases.
        let digits = "0123456789";
        assert_eq!(
            shape("(?i)ey[0-9]{4}", "ey"),
            s(&["Ee", "Yy", digits, digits, digits])
        );
    }

    #[test]
    fn no_shape_where_a_match_may_lack_one() {
        // Fewer than three bytes after the keyword at known places.
        assert_eq!(shape("SK[0-9a-f]{2}", "sk"), None);
        assert_eq!(shape("SK[0-9a-f]?x{5}", "sk"), None);
        // A branch without the keyword.
        assert_eq!(shape("SK[0-9a-f]{8}|AB[0-9a-f]{8}", "sk"), None);
        // The keyword only inside what may repeat zero times.
        assert_eq!(shape("(SK[0-9a-f]{8})*x", "sk"), None);
        // Another keyword.
        assert_eq!(shape("SK[0-9a-f]{8}", "ey"), None);
        // A class wider than the keyword's letter.
        assert_eq!(shape("[a-z]K[0-9a-f]{8}", "sk"), None);
        // `(?i)` folds `k` to the Kelvin sign too: not ASCII, so not known.
        assert_eq!(shape("(?i)key[0-9]{4}", "key"), None);
        // Not a pattern.
        assert_eq!(shape("SK(", "sk"), None);
    }

    #[test]
    fn a_repeated_run_holds_its_first_bytes() {
        // `{3,}`: three bytes at known places, then the run ends.
        // `ab` repeats: what follows its first copy is `a` or `c`, not
        // at a known place here.
        assert_eq!(shape("xx(?:ab){1,}cd", "ab"), None);
        assert_eq!(
            shape("ab[0-9]{3}", "ab"),
            Some(vec![
                "a".into(),
                "b".into(),
                "0123456789".into(),
                "0123456789".into(),
                "0123456789".into()
            ])
        );
    }
}
