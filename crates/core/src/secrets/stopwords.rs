//! An allowlist's stopwords: does a secret contain one (ASCII case folded)?
//!
//! Note \[Stopwords without an automaton\]: gitleaks' generic rule and the
//! global allowlist carry about 1,500 stopwords. Building an Aho-Corasick
//! automaton over them cost 11.7 M instructions (callgrind), more than the
//! rest of masking a short command's output together, and it was built as
//! soon as one candidate reached the allowlists, which a few kilobytes of
//! ordinary agent output do. A secret is short (tens of bytes), so the
//! first checks read it against the words directly, bucketed by their
//! first byte (building the buckets is one pass over the words); only after
//! [`AUTOMATON_AFTER`] checks, when a long input keeps reaching the
//! allowlist, is the automaton built and used from then on. Both answer
//! the same: whether any word occurs in the secret with ASCII letters
//! compared case-insensitively, every other byte exactly
//! (`stopwords_agree_with_the_automaton`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};

/// How many checks go through the buckets before the automaton is built.
const AUTOMATON_AFTER: usize = 256;

/// The stopwords of one allowlist.
#[derive(Debug)]
pub(super) struct Stopwords {
    /// The words as written (what the automaton is built from).
    words: Vec<String>,
    /// Every word ASCII-lowercased, one after another.
    bytes: Vec<u8>,
    /// `(start, end)` in `bytes` of each word, sorted by its first byte.
    spans: Vec<(u32, u32)>,
    /// Where the words of each first byte begin in `spans` (257 entries).
    first: Vec<u32>,
    /// Whether an empty word is among them (it occurs in every secret).
    empty: bool,
    checks: AtomicUsize,
    automaton: OnceLock<Option<AhoCorasick>>,
}

impl Stopwords {
    /// The stopwords `words`, ready to check (nothing expensive is built).
    pub(super) fn new(words: &[String]) -> Stopwords {
        let mut bytes = Vec::with_capacity(words.iter().map(String::len).sum());
        let mut spans = Vec::with_capacity(words.len());
        let mut empty = false;
        for w in words {
            if w.is_empty() {
                empty = true;
                continue;
            }
            let start = bytes.len();
            bytes.extend(w.bytes().map(|b| b.to_ascii_lowercase()));
            // Words are short: a u32 offset holds any real list.
            spans.push((
                u32::try_from(start).unwrap_or(u32::MAX),
                u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            ));
        }
        spans.sort_by_key(|&(s, _)| bytes.get(s as usize).copied().unwrap_or(0));
        let mut first = vec![0u32; 257];
        for &(s, _) in &spans {
            let b = bytes.get(s as usize).copied().unwrap_or(0);
            first[usize::from(b) + 1] += 1;
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        Stopwords {
            words: words.to_vec(),
            bytes,
            spans,
            first,
            empty,
            checks: AtomicUsize::new(0),
            automaton: OnceLock::new(),
        }
    }

    /// Whether `secret` contains one of the words (ASCII case folded).
    pub(super) fn found_in(&self, secret: &str) -> bool {
        if self.empty {
            return true;
        }
        if self.checks.fetch_add(1, Ordering::Relaxed) >= AUTOMATON_AFTER {
            let ac = self.automaton.get_or_init(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .build(&self.words)
                    .ok()
            });
            if let Some(ac) = ac {
                return ac.is_match(secret);
            }
        }
        self.scan(secret)
    }

    /// The bucketed reading of [`Stopwords::found_in`].
    fn scan(&self, secret: &str) -> bool {
        let lower: Vec<u8> = secret.bytes().map(|b| b.to_ascii_lowercase()).collect();
        for (i, &b) in lower.iter().enumerate() {
            let from = self.first[usize::from(b)] as usize;
            let to = self.first[usize::from(b) + 1] as usize;
            let rest = &lower[i..];
            for &(s, e) in self.spans.get(from..to).unwrap_or_default() {
                let word = self.bytes.get(s as usize..e as usize).unwrap_or_default();
                if rest.starts_with(word) {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn automaton(words: &[String], secret: &str) -> bool {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(words)
            .unwrap()
            .is_match(secret)
    }

    #[test]
    fn stopwords_are_found_case_folded_anywhere() {
        let words: Vec<String> = ["example", "Test", "ß", "x"].map(String::from).to_vec();
        let s = Stopwords::new(&words);
        for (secret, want) in [
            ("myEXAMPLEkey", true),
            ("mytestkey", true),
            ("Straße", true),
            ("STRASSE", false),
            ("abcdefg", false),
            ("", false),
            ("X", true),
        ] {
            assert_eq!(s.scan(secret), want, "{secret}");
            assert_eq!(automaton(&words, secret), want, "{secret}");
        }
        // After the automaton takes over, the same answers.
        for _ in 0..AUTOMATON_AFTER + 2 {
            assert!(s.found_in("myEXAMPLEkey"));
            assert!(!s.found_in("abcdefg"));
        }
        assert!(s.automaton.get().is_some());
        assert!(Stopwords::new(&[String::new()]).found_in("anything"));
    }

    proptest! {
        #[test]
        fn stopwords_agree_with_the_automaton(
            words in proptest::collection::vec("[aAbB\u{e9}\u{c9}_]{1,4}", 1..12),
            secret in "[aAbB\u{e9}\u{c9}_c]{0,24}",
        ) {
            let s = Stopwords::new(&words);
            prop_assert_eq!(s.scan(&secret), automaton(&words, &secret));
        }
    }
}
