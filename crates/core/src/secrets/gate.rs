//! A cheap stand-in for a rule's regex, to decide whether to compile it.
//!
//! Note \[Relaxed gates\]: a built-in rule is compiled when its keywords
//! first occur (Note \[Rules compiled when first needed\]), but ordinary
//! text wakes a few rules all the time (`://` wakes `url-password`, `key`
//! the generic rule, `sk` Twilio's) and most never match. Compiling them was
//! most of a short command's masking cost: bounded repetitions of wide
//! classes (`[^\s/?#@'"<>\\]{1,256}`: 256 copies of a Unicode class) make
//! NFAs of thousands of states. So a woken rule whose regex has such
//! repetitions first runs a *relaxed* regex, the same pattern with every
//! `{n,m}` where m > 16 (or n > 32) read as `{min(n, 16),}`: it matches wherever the rule can (every
//! string the rule matches it matches too), costs a fraction to compile,
//! and when it finds nothing in the text the rule is skipped uncompiled.

/// A relaxed regex, built for `is_match` only: no capture groups, no
/// one-pass or backtracking engine, no literal prefilter. Those serve
/// finding where a match is; a gate only asks whether there is one, and
/// building them was most of what compiling a gate cost (callgrind).
pub(super) fn compile(relaxed: &str) -> Option<regex_automata::meta::Regex> {
    is_match_only(relaxed, None)
}

/// `pattern` (Rust syntax) built for `is_match` only, as [`compile`] builds
/// a gate; `limits` raises the NFA and lazy DFA size limits (bytes) for a
/// large pattern (an allowlist's alternation), as `regex`'s `size_limit`
/// and `dfa_size_limit` do. `None` when it does not compile.
pub(super) fn is_match_only(
    pattern: &str,
    limits: Option<(usize, usize)>,
) -> Option<regex_automata::meta::Regex> {
    use regex_automata::meta::{Config, Regex};
    use regex_automata::nfa::thompson::WhichCaptures;
    let mut config = Config::new()
        .which_captures(WhichCaptures::None)
        .onepass(false)
        .backtrack(false)
        .auto_prefilter(false);
    if let Some((nfa, dfa)) = limits {
        config = config.nfa_size_limit(Some(nfa)).hybrid_cache_capacity(dfa);
    }
    Regex::builder().configure(config).build(pattern).ok()
}

/// The most copies of a repeated item a relaxed regex keeps.
const KEEP: usize = 16;

/// `pattern` (Rust syntax) with every counted repetition outside classes
/// whose maximum is above [`KEEP`] (or minimum above twice that) made
/// open-ended, its minimum capped at [`KEEP`]; `None` when that changes
/// nothing (the rule is cheap as it is).
pub(super) fn relax(pattern: &str) -> Option<String> {
    let b = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len());
    let mut changed = false;
    let (mut i, mut copied, mut class_depth) = (0, 0, 0usize);
    while i < b.len() {
        match b[i] {
            b'\\' => {
                // `\p{..}`, `\x{..}`: skip the braces too.
                i += 2;
                if i < b.len() && b[i] == b'{' && matches!(b[i - 1], b'p' | b'P' | b'x' | b'u') {
                    while i < b.len() && b[i] != b'}' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'[' => {
                class_depth += 1;
                i += 1;
                // A `]` first in a class is literal.
                if b.get(i) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i) == Some(&b']') {
                    i += 1;
                }
            }
            b']' if class_depth > 0 => {
                class_depth -= 1;
                i += 1;
            }
            b'{' if class_depth == 0 => {
                let close = pattern[i..].find('}').map(|c| i + c)?;
                let inner = &pattern[i + 1..close];
                let (min, max) = if let Some((n, m)) = inner.split_once(',') {
                    (n.parse::<usize>().ok()?, m.parse::<usize>().ok())
                } else {
                    let n = inner.parse::<usize>().ok()?;
                    (n, Some(n))
                };
                // Only many copies cost: `{2}`, `{0,3}`, `{17,}` stay.
                if max.is_some_and(|m| m > KEEP) || min > 2 * KEEP {
                    out.push_str(&pattern[copied..i]);
                    out.push('{');
                    out.push_str(&min.min(KEEP).to_string());
                    out.push_str(",}");
                    copied = close + 1;
                    changed = true;
                }
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&pattern[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::relax;
    use crate::secrets::RuleSet;
    use crate::secrets::syntax::go_to_rust;

    #[test]
    fn relaxed_patterns_open_counted_repetitions_only() {
        assert_eq!(relax(r"ab+c*").as_deref(), None);
        assert_eq!(
            relax(r"x[a-z]{1,256}@[^\s{}]{40}\{3}{0,3}").as_deref(),
            Some(r"x[a-z]{1,}@[^\s{}]{16,}\{3}{0,3}")
        );
        assert_eq!(
            relax(r"\p{L}{0,50}?k{2}[a-z]{17,}").as_deref(),
            Some(r"\p{L}{0,}?k{2}[a-z]{17,}")
        );
        assert_eq!(relax(r"ey[a-z]{17,}\.(?:x{10,}={0,2})?"), None);
        assert_eq!(relax(r"-[\s\S]{64,}?K").as_deref(), Some(r"-[\s\S]{16,}?K"));
    }

    /// Every built-in rule's relaxed regex compiles and matches every
    /// planted context its rule matches.
    #[test]
    fn relaxed_regexes_match_wherever_their_rules_do() {
        let contexts = crate::secrets::tests::planted_contexts();
        let (mut relaxed, mut matched) = (0, 0);
        for rule in RuleSet::builtin().rules {
            let rust = go_to_rust(&rule.regex);
            let Some(r) = relax(&rust) else { continue };
            relaxed += 1;
            let gate = super::compile(&r).unwrap_or_else(|| panic!("{}: {r}", rule.id));
            let full = regex::RegexBuilder::new(&rust)
                .size_limit(64 << 20)
                .build()
                .unwrap();
            for c in &contexts {
                if full.is_match(c) {
                    matched += 1;
                    assert!(gate.is_match(c), "{}: {c:?}", rule.id);
                }
            }
        }
        assert!(relaxed > 100 && matched > 40, "{relaxed} {matched}");
    }
}
