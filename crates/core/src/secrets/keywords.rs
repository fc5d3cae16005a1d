//! The rules' keywords found in one pass over a text, with tables built in
//! microseconds.
//!
//! Note \[Keyword pairs\]: a rule runs only when one of its keywords occurs
//! (ASCII case-insensitive; Note \[Keyword prefilter\] in `detect.rs`). This
//! pass was an Aho-Corasick automaton: a contiguous NFA, then a DFA once a
//! process had scanned 256 KB. Building the NFA over the ~260 built-in
//! keywords was 3.2 of the 18 million instructions masking added to a short
//! command (callgrind), and the DFA cost ~8 ms more (most of it zeroing
//! pages). Nearly every keyword is two bytes or more, so the pass here reads
//! each pair of adjacent bytes, folded to lower case, and tests one bit of an
//! 8 KB table of the pairs that begin a keyword; only on a set bit are the
//! keywords that begin with that pair compared. A byte costs a table lookup
//! and a bit test, whatever the number of keywords, and building the tables
//! is one pass over the keywords. One-byte keywords (a user's) have a table
//! of their own. Overlapping hits are all seen: every position is tried.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

/// Text a process scans with the pair tables before the keyword DFA is
/// built (Note \[Keywords, pairs then DFA\]).
pub const DFA_AFTER_BYTES: u64 = 256 << 10;

/// Bytes folded to ASCII lower case.
const LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        // `i < 256`: the cast keeps every bit.
        #[allow(clippy::cast_possible_truncation)]
        let b = i as u8;
        t[i] = b.to_ascii_lowercase();
        i += 1;
    }
    t
};

/// The keywords of a rule set and the tables that find them.
#[derive(Debug)]
pub(super) struct Keywords {
    /// The keywords, lower case, in the order given (their ids).
    patterns: Vec<Box<[u8]>>,
    /// One bit per lower-case byte pair that begins a keyword of 2+ bytes.
    pairs: Box<[u64; 1024]>,
    /// Per word of `pairs`, the set bits in the words before it.
    rank: Box<[u32; 1024]>,
    /// Per set bit of `pairs` in order, where its keywords begin in `by_pair`
    /// (one more entry at the end).
    starts: Vec<u32>,
    /// Keyword ids grouped by their first pair.
    by_pair: Vec<u32>,
    /// One-byte keywords: their ids by byte (lower case).
    single: Vec<(u8, u32)>,
    single_set: [bool; 256],
    /// The same keywords as an Aho-Corasick DFA, once built (`None` if it
    /// could not be; Note \[Keywords, pairs then DFA\]).
    dfa: OnceLock<Option<AhoCorasick>>,
    /// Bytes scanned so far, by every caller.
    scanned: AtomicU64,
}

// Note \[Keywords, pairs then DFA\]: the pair tables cost nothing to
// build but a lookup per byte; an Aho-Corasick DFA scans text where
// keywords are rare several times faster (its prefilter skips), but
// building it over ~260 keywords costs ~8 ms, which a short command (a
// hook that must answer in 20 ms, `extract` of one reply) would pay in
// full. So the pairs answer first, and the DFA is built once the process
// has scanned [`DFA_AFTER_BYTES`] (where the DFA's build has paid for
// itself), and then answers. Both find every occurrence of the same
// patterns ASCII case-insensitively, so they report the same hits (in
// another order: callers collect them, and none depends on it).

impl Keywords {
    /// Tables for `patterns` (non-empty strings; compared ASCII
    /// case-insensitively).
    pub(super) fn new(patterns: &[String]) -> Keywords {
        let patterns: Vec<Box<[u8]>> = patterns
            .iter()
            .map(|p| p.bytes().map(|b| LOWER[usize::from(b)]).collect())
            .collect();
        let mut pairs = Box::new([0u64; 1024]);
        let mut grouped: Vec<(u16, u32)> = Vec::new();
        let mut single = Vec::new();
        let mut single_set = [false; 256];
        for (id, p) in patterns.iter().enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            match **p {
                [] => {}
                [b] => {
                    single.push((b, id));
                    single_set[usize::from(b)] = true;
                }
                [a, b, ..] => {
                    let pair = u16::from_be_bytes([a, b]);
                    pairs[usize::from(pair >> 6)] |= 1 << (pair & 63);
                    grouped.push((pair, id));
                }
            }
        }
        grouped.sort_unstable();
        let mut rank = Box::new([0u32; 1024]);
        let mut total = 0;
        for (r, w) in rank.iter_mut().zip(pairs.iter()) {
            *r = total;
            total += w.count_ones();
        }
        let mut starts = Vec::with_capacity(total as usize + 1);
        let mut last = None;
        for (i, &(pair, _)) in grouped.iter().enumerate() {
            if last != Some(pair) {
                starts.push(u32::try_from(i).unwrap_or(u32::MAX));
                last = Some(pair);
            }
        }
        starts.push(u32::try_from(grouped.len()).unwrap_or(u32::MAX));
        Keywords {
            patterns,
            pairs,
            rank,
            starts,
            by_pair: grouped.into_iter().map(|(_, id)| id).collect(),
            dfa: OnceLock::new(),
            scanned: AtomicU64::new(0),
            single,
            single_set,
        }
    }

    /// How many keywords there are (ids are `0..len`).
    pub(super) fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Scan with the DFA from now on (a server about to mask a lot).
    pub(super) fn warm(&self) {
        self.scanned.fetch_max(DFA_AFTER_BYTES, Ordering::Relaxed);
    }

    /// The DFA, when this process has scanned enough to want it (Note
    /// \[Keywords, pairs then DFA\]).
    fn dfa(&self, len: usize) -> Option<&AhoCorasick> {
        let len = len as u64;
        let before = self.scanned.fetch_add(len, Ordering::Relaxed);
        if before.saturating_add(len) < DFA_AFTER_BYTES {
            return None;
        }
        self.dfa
            .get_or_init(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(self.patterns.iter().map(|p| &p[..]))
                    .ok()
            })
            .as_ref()
    }

    /// Calls `each(id, start, end)` for every occurrence of every keyword in
    /// `text`, overlapping ones included (in no promised order); stops when
    /// `each` returns false.
    pub(super) fn scan(&self, text: &[u8], mut each: impl FnMut(usize, usize, usize) -> bool) {
        if let Some(dfa) = self.dfa(text.len()) {
            for m in dfa.find_overlapping_iter(text) {
                if !each(m.pattern().as_usize(), m.start(), m.end()) {
                    return;
                }
            }
            return;
        }
        self.scan_pairs(text, each);
    }

    /// Calls `each(start, end)` for keyword hits in `text` such that every
    /// occurrence of a keyword overlaps a reported hit (the DFA reports the
    /// hit that ends first, then searches on from its end, so an
    /// occurrence it leaves out overlaps the hit it reported). Enough to tell which strings of JSON text hold a keyword
    /// (Note \[Clean JSON without a Value\] in `clean_json.rs`), and the
    /// DFA finds these several times faster than every occurrence.
    pub(super) fn scan_covering(&self, text: &[u8], mut each: impl FnMut(usize, usize)) {
        if let Some(dfa) = self.dfa(text.len()) {
            for m in dfa.find_iter(text) {
                each(m.start(), m.end());
            }
            return;
        }
        self.scan_pairs(text, |_, start, end| {
            each(start, end);
            true
        });
    }

    /// [`Keywords::scan`] with the pair tables.
    fn scan_pairs(&self, text: &[u8], mut each: impl FnMut(usize, usize, usize) -> bool) {
        let singles = !self.single.is_empty();
        let mut prev = match text.first() {
            Some(&b) => LOWER[usize::from(b)],
            None => return,
        };
        for i in 0..text.len() {
            let a = prev;
            if singles && self.single_set[usize::from(a)] {
                for &(b, id) in &self.single {
                    if b == a && !each(id as usize, i, i + 1) {
                        return;
                    }
                }
            }
            let Some(&next) = text.get(i + 1) else { break };
            let b = LOWER[usize::from(next)];
            prev = b;
            let pair = u16::from_be_bytes([a, b]);
            let (word, bit) = (usize::from(pair >> 6), pair & 63);
            let w = self.pairs[word];
            if w & (1 << bit) == 0 {
                continue;
            }
            let slot = self.rank[word] + (w & ((1u64 << bit) - 1)).count_ones();
            let (from, to) = (
                self.starts[slot as usize] as usize,
                self.starts[slot as usize + 1] as usize,
            );
            for &id in &self.by_pair[from..to] {
                let p = &self.patterns[id as usize];
                let end = i + p.len();
                if end <= text.len()
                    && text[i + 2..end]
                        .iter()
                        .zip(&p[2..])
                        .all(|(&t, &k)| LOWER[usize::from(t)] == k)
                    && !each(id as usize, i, end)
                {
                    return;
                }
            }
        }
    }

    /// Whether any keyword occurs in `text`.
    pub(super) fn any(&self, text: &[u8]) -> bool {
        let mut found = false;
        self.scan(text, |_, _, _| {
            found = true;
            false
        });
        found
    }
}

#[cfg(test)]
mod tests {
    use super::Keywords;

    /// Every occurrence, found the slow way.
    fn naive(patterns: &[&str], text: &str) -> Vec<(usize, usize, usize)> {
        let lower = text.to_ascii_lowercase();
        let mut out = Vec::new();
        for start in 0..lower.len() {
            for (id, p) in patterns.iter().enumerate() {
                let p = p.to_ascii_lowercase();
                if lower.as_bytes()[start..].starts_with(p.as_bytes()) {
                    out.push((id, start, start + p.len()));
                }
            }
        }
        out.sort_by_key(|&(id, s, _)| (s, id));
        out
    }

    fn found(k: &Keywords, text: &str) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        k.scan(text.as_bytes(), |id, s, e| {
            out.push((id, s, e));
            true
        });
        out.sort_by_key(|&(id, s, _)| (s, id));
        out
    }

    #[test]
    fn every_overlapping_occurrence_is_found_in_any_case() {
        let patterns = [
            "key", "ey", "keys", "API_", "x", "sk", "s.", "://", "ÉÉ", "token", "k",
        ];
        let k = Keywords::new(&patterns.map(String::from));
        assert_eq!(k.len(), patterns.len());
        let warm = Keywords::new(&patterns.map(String::from));
        warm.warm();
        for text in [
            "",
            "k",
            "KEY",
            "monkeys and a Token, api_KEY=sk.s. https://x.Y éé ÉÉ",
            "eyeyeyey keykeys kkk",
            "ends with ke",
            "ends with key",
            "\u{0}\u{ff}ÿ",
        ] {
            assert_eq!(found(&k, text), naive(&patterns, text), "{text:?}");
            // The DFA a long job scans with finds the same.
            assert_eq!(found(&warm, text), naive(&patterns, text), "DFA: {text:?}");
        }
        assert!(warm.dfa.get().is_some_and(Option::is_some));
        assert!(k.any(b"..TOKEN.."));
        assert!(!k.any(b"nothing here at all"));
        assert!(!Keywords::new(&[]).any(b"key"));
    }

    #[test]
    fn covering_hits_overlap_every_occurrence() {
        let patterns = ["key", "ey", "keys", "eys", "token", "ok", "s."];
        let cold = Keywords::new(&patterns.map(String::from));
        let warm = Keywords::new(&patterns.map(String::from));
        warm.warm();
        for text in ["", "monkeys tokens.keys", "KEYKEYS eyeys", "s.s.s. okey"] {
            for k in [&cold, &warm] {
                let mut hits = Vec::new();
                k.scan_covering(text.as_bytes(), |s, e| hits.push((s, e)));
                for (_, s, e) in naive(&patterns, text) {
                    assert!(
                        hits.iter().any(|&(hs, he)| hs < e && s < he),
                        "{text:?}: ({s}, {e}) not covered by {hits:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_builtin_keyword_is_found_at_the_start_and_end_of_a_text() {
        let rules = crate::secrets::RuleSet::builtin();
        let words: Vec<String> = rules
            .rules
            .iter()
            .flat_map(|r| r.keywords.iter().cloned())
            .collect();
        let k = Keywords::new(&words);
        for (id, w) in words.iter().enumerate() {
            for text in [w.clone(), format!("{w} "), format!(" {}", w.to_uppercase())] {
                let mut hit = false;
                k.scan(text.as_bytes(), |i, _, _| {
                    hit |= i == id;
                    true
                });
                assert!(hit, "{w:?} in {text:?}");
            }
        }
    }
}
