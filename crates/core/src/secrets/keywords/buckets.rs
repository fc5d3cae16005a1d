//! Which of the vector prefilter's buckets each keyword goes in, and the
//! nibble tables the buckets make.
//!
//! A module of the library and of the build script (which assigns the
//! built-in keywords once, Note \[Keyword buckets\] in `keywords.rs`), so it
//! uses nothing outside `core`/`std`.
//!
//! Note \[Buckets chosen by a model of text\]: a position passes a bucket
//! when, for each of its five bytes, the byte's low nibble is one that some
//! keyword of the bucket has there and its high nibble is too. A bucket's
//! test is therefore a product of per-position nibble sets, and is as loose
//! as the union of its keywords makes it: `key` and `pwd` together also
//! pass `kwy` and `ped`. Which keywords share a bucket decides how many
//! ordinary positions pass (on `extract --jsonl` output, reading four
//! bytes: 12% for a greedy grouping, 5.4% after the search below; reading
//! five, 4.5%, for a quarter more shuffles). The cost of a bucket is the chance
//! that a position of text passes it, read from a model of the bytes of
//! text agents print (English letters at their usual rates, spaces, digits,
//! JSON's punctuation; each byte independent), and of the words it is
//! mostly made of (Note \[Common words in the model\]); the cost of a
//! grouping is their sum. Keywords are placed greedily, the longest
//! first, each in the bucket it costs least to widen; then single moves
//! that lower the sum are kept, from a seeded sequence. The build script
//! runs the search for the built-in keywords (about 2 s, unoptimised); a
//! keyword it has not placed (a user rule's) is placed greedily when a
//! detector is built, in tens of microseconds.

use super::byteset::{ByteSet, bytes};

/// Buckets: four groups of eight, one bit of a byte each.
pub const BUCKETS: usize = 32;

/// Bytes of a keyword's beginning the prefilter reads.
pub const SPAN: usize = 5;

/// Groups of eight buckets (one byte of bits per position each).
pub const GROUPS: usize = BUCKETS / 8;

/// A model of how often each byte occurs in text agents print, per 10,000
/// bytes: English letters at their usual rates (one in twelve a capital),
/// spaces, digits and JSON's punctuation; every other byte rare.
const FREQUENCY: [u32; 256] = {
    // Small letters (each gives its capital a twelfth), spaces, JSON's
    // punctuation; digits 40 each; other ASCII 2, other bytes 1.
    let rates: [(u8, u32); 43] = [
        (b'e', 787),
        (b't', 564),
        (b'a', 508),
        (b'o', 465),
        (b'i', 434),
        (b'n', 415),
        (b's', 391),
        (b'h', 378),
        (b'r', 372),
        (b'd', 267),
        (b'l', 248),
        (b'c', 174),
        (b'u', 174),
        (b'm', 149),
        (b'w', 149),
        (b'f', 136),
        (b'g', 124),
        (b'y', 124),
        (b'p', 118),
        (b'b', 93),
        (b'v', 62),
        (b'k', 50),
        (b'j', 9),
        (b'x', 9),
        (b'q', 6),
        (b'z', 4),
        (b' ', 1200),
        (b'"', 300),
        (b',', 120),
        (b'.', 120),
        (b':', 100),
        (b'\n', 80),
        (b'_', 60),
        (b'-', 60),
        (b'/', 50),
        (b'\\', 40),
        (b'{', 25),
        (b'}', 25),
        (b'[', 20),
        (b']', 20),
        (b'=', 20),
        (b'(', 20),
        (b')', 20),
    ];
    let mut f = [2u32; 256];
    let mut b = 0;
    while b < 256 {
        if b >= 0x80 {
            f[b] = 1;
        } else if b'0' as usize <= b && b <= b'9' as usize {
            f[b] = 40;
        }
        b += 1;
    }
    let mut i = 0;
    while i < rates.len() {
        let (byte, n) = rates[i];
        f[byte as usize] = n;
        if byte.is_ascii_lowercase() {
            f[byte.to_ascii_uppercase() as usize] = if n >= 24 { n / 12 } else { 2 };
        }
        i += 1;
    }
    f
};

/// Note \[Common words in the model\]: the byte model takes bytes as
/// independent, so it sees no difference between a keyword's neighbours
/// that are common words and those that never occur. On `extract --jsonl`
/// output, 746,000 positions of 16.7 MB passed a bucket and 555,000 of
/// them were then dropped by the triple table, most at the words of JSON
/// keys and prose (`stat` of `status`, `line`, `serv` of `service`, `epai`
/// of `repairs`) whose every nibble some keyword of a bucket has at that
/// place. So a bucket also costs [`WORD_RATE`] for each window of
/// [`SPAN`] bytes it passes of a list of words common in what agents and
/// agentshape print and read (English words, the keys of JSON results,
/// agentshape's own result fields, the keys of the session files it
/// reads), each word read from each of its bytes and followed by a quote
/// or a blank. The list is of words such text is made of, not of one
/// corpus. Positions that pass, before and after: the bench's
/// `extract --jsonl` output 746,000 → 455,000 (16.7 MB); the real Claude
/// Code, Codex and Gemini CLI sessions of `../shared/corpus/native`, which
/// no word was taken from, 503,000 → 353,000 (11.9 MB); the bench's
/// stream-json transcripts 1.64 → 1.04 million and its generated session
/// files 1.33 → 1.06 million (40 MB each). Masking 4 MB of that output in
/// one thread (criterion, interleaved) went from 4.67–4.73 to 4.61–4.65 ms,
/// and callgrind counts 314.5 → 297.0 million instructions for masking
/// the whole output in `extract --jsonl --json`: the positions dropped
/// were the cheap ones, and the closure a keyword hit runs (the generic
/// rule's gate, about 75 ns a hit) is what the pass costs most besides
/// its vector work. The build script's search takes about 2 s instead of
/// 0.8 s (unoptimised).
#[rustfmt::skip]
const COMMON_WORDS: &[&str] = &[
    "the", "and", "that", "this", "with", "from", "have", "will", "there", "their", "which", "when",
    "what", "would", "should", "could", "about", "after", "before", "other", "these", "those",
    "then", "than", "into", "only", "some", "more", "also", "each", "were", "been", "being",
    "because", "while", "where", "here", "over", "such", "just", "like", "make", "need", "file",
    "files", "code", "function", "return", "value", "values", "error", "errors", "test", "tests",
    "check", "change", "changes", "update", "line", "lines", "name", "type", "string", "number",
    "object", "array", "list", "item", "items", "data", "result", "results", "status", "state",
    "message", "messages", "content", "text", "input", "output", "request", "response", "server",
    "service", "client", "user", "users", "session", "time", "timeout", "config", "option",
    "options", "path", "version", "build", "run", "running", "command", "process", "event",
    "events", "model", "tool", "tools", "schema", "field", "fields", "method", "valid", "repairs",
    "coercions", "true", "false", "null", "summary", "description", "details", "notes", "title",
    "steps", "index", "count", "total", "start", "end", "issue", "fix", "fixed", "added", "removed",
    "using", "used", "called", "call", "set", "get", "new", "old", "first", "last", "next",
    "default", "local", "remote", "system", "memory", "cache", "query", "table", "database",
    "connection", "network", "task", "tasks", "plan", "step", "done", "id",
    // The keys of the session files agentshape reads (Claude Code, Codex).
    "uuid", "parentuuid", "sessionid", "timestamp", "assistant", "role", "usage", "input_tokens",
    "output_tokens", "cache_read_input_tokens", "tool_use", "tool_result", "tool_use_id", "cwd",
    "gitbranch", "usertype", "issidechain", "requestid", "stop_reason", "payload", "turn_context",
    "response_item", "function_call", "arguments", "call_id",
];

/// What one window of a common word costs a bucket that passes it: about
/// one occurrence of each listed word per 3,000 bytes of text, per word
/// and follower.
const WORD_RATE: f64 = 0.000_15;

/// The bytes that follow a word in the windows: a quote (a JSON key or
/// string's end) and a blank (prose).
const FOLLOWERS: [u8; 2] = [b'"', b' '];

/// How many windows [`COMMON_WORDS`] make: one per byte of each word and
/// follower.
const WINDOW_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < COMMON_WORDS.len() {
        n += COMMON_WORDS[i].len() * FOLLOWERS.len();
        i += 1;
    }
    n
};

/// The windows of [`COMMON_WORDS`], made at compile time (the build
/// script's search reads them at every move): from each byte of a word,
/// its rest, the follower, then blanks.
static WINDOWS: [[u8; SPAN]; WINDOW_COUNT] = {
    let mut out = [[0u8; SPAN]; WINDOW_COUNT];
    let mut n = 0;
    let mut i = 0;
    while i < COMMON_WORDS.len() {
        let word = COMMON_WORDS[i].as_bytes();
        let mut f = 0;
        while f < FOLLOWERS.len() {
            let mut from = 0;
            while from < word.len() {
                let mut j = 0;
                while j < SPAN {
                    let at = from + j;
                    out[n][j] = if at < word.len() {
                        word[at]
                    } else if at == word.len() {
                        FOLLOWERS[f]
                    } else {
                        b' '
                    };
                    j += 1;
                }
                n += 1;
                from += 1;
            }
            f += 1;
        }
        i += 1;
    }
    out
};

/// A bucket's nibble sets: per position, one bit per low nibble and one per
/// high nibble that some keyword of the bucket has there (both cases of a
/// letter; every nibble past a keyword's end).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Sets {
    lo: [u16; SPAN],
    hi: [u16; SPAN],
}

impl Sets {
    /// `self` widened by `keyword` (lower case).
    #[cfg(test)]
    fn with(self, keyword: &[u8]) -> Sets {
        self.with_word((keyword, None))
    }

    /// `self` widened by `word`: per position, the bytes its shape has
    /// there (Note \[Keywords as a match holds them\] in `keywords.rs`),
    /// else the keyword's byte in both cases; every nibble past both.
    fn with_word(mut self, (keyword, shape): Word<'_>) -> Sets {
        for j in 0..SPAN {
            if let Some(set) = shape.and_then(|s| s.get(j)) {
                for b in bytes(set) {
                    self.lo[j] |= 1 << (b & 15);
                    self.hi[j] |= 1 << (b >> 4);
                }
            } else if let Some(&b) = keyword.get(j) {
                self.lo[j] |= 1 << (b & 15);
                self.hi[j] |= 1 << (b >> 4) | 1 << (b.to_ascii_uppercase() >> 4);
            } else {
                self.lo[j] = u16::MAX;
                self.hi[j] = u16::MAX;
            }
        }
        self
    }

    /// The chance, in the model, that a position of text passes: the
    /// product over positions of the share of bytes both of whose nibbles
    /// are in the sets, plus the word term (Note \[Common words in the
    /// model\]); 0 for an empty bucket.
    fn cost(&self) -> f64 {
        if self.lo[0] == 0 {
            return 0.0;
        }
        let total = f64::from(FREQUENCY.iter().sum::<u32>());
        let mut chance = 1.0;
        for j in 0..SPAN {
            let mut passing = 0u32;
            for (b, &n) in FREQUENCY.iter().enumerate() {
                if (self.lo[j] >> (b & 15)) & 1 != 0 && (self.hi[j] >> (b >> 4)) & 1 != 0 {
                    passing += n;
                }
            }
            chance *= f64::from(passing) / total;
        }
        chance + self.words_cost()
    }

    /// The model's word term (Note \[Common words in the model\]): each
    /// window of a common word the bucket passes, at [`WORD_RATE`].
    fn words_cost(&self) -> f64 {
        // Plain loops that stop at a window's first byte the bucket does
        // not pass: the build script runs unoptimised, and this runs twice
        // a move.
        let mut passing = 0u32;
        for w in &WINDOWS {
            let mut j = 0;
            while j < SPAN && (self.lo[j] >> (w[j] & 15)) & (self.hi[j] >> (w[j] >> 4)) & 1 != 0 {
                j += 1;
            }
            passing += u32::from(j == SPAN);
        }
        let passing = f64::from(passing);
        passing * WORD_RATE
    }
}

/// The sets of the keywords in `members`.
fn sets_of(keywords: &[Word<'_>], members: impl Iterator<Item = usize>) -> Sets {
    members.fold(Sets::default(), |s, k| s.with_word(keywords[k]))
}

/// A keyword (lower case) and, when known, the bytes a match has from its
/// first on (Note \[Keywords as a match holds them\] in `keywords.rs`).
pub type Word<'a> = (&'a [u8], Option<&'a [ByteSet]>);

/// A bucket for each of `keywords` (lower case, two bytes or more): those
/// given in `placed` keep theirs; the others are placed greedily, the
/// longest first, then `moves` single moves of them are tried (Note
/// \[Buckets chosen by a model of text\]).
pub fn assign(keywords: &[Word<'_>], placed: &[Option<u8>], moves: usize) -> Vec<u8> {
    let mut bucket: Vec<Option<u8>> = keywords
        .iter()
        .enumerate()
        .map(|(k, _)| {
            placed
                .get(k)
                .copied()
                .flatten()
                .filter(|&b| usize::from(b) < BUCKETS)
        })
        .collect();
    let mut sets = [Sets::default(); BUCKETS];
    for (k, b) in bucket.iter().enumerate() {
        if let Some(b) = b {
            sets[usize::from(*b)] = sets[usize::from(*b)].with_word(keywords[k]);
        }
    }
    let mut free: Vec<usize> = (0..keywords.len())
        .filter(|&k| bucket[k].is_none())
        .collect();
    if free.is_empty() {
        // The built-in keywords, placed by the build script: nothing to cost.
        return bucket.into_iter().map(Option::unwrap_or_default).collect();
    }
    let mut costs = sets.map(|s| s.cost());
    free.sort_by_key(|&k| std::cmp::Reverse(keywords[k].0.len().min(SPAN)));
    for &k in &free {
        let mut best = (f64::INFINITY, 0usize);
        for (b, s) in sets.iter().enumerate() {
            let wider = s.with_word(keywords[k]);
            let added = if wider == *s {
                0.0
            } else {
                wider.cost() - costs[b]
            };
            if added < best.0 {
                best = (added, b);
            }
        }
        let b = best.1;
        sets[b] = sets[b].with_word(keywords[k]);
        costs[b] = sets[b].cost();
        bucket[k] = u8::try_from(b).ok();
    }
    let mut out: Vec<u8> = bucket.into_iter().map(Option::unwrap_or_default).collect();
    // Seeded xorshift: the same keywords always get the same buckets.
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..moves {
        // Both below their bounds: the casts keep every bit.
        #[allow(clippy::cast_possible_truncation)]
        let (k, to) = (
            free[(next() % free.len() as u64) as usize],
            (next() % BUCKETS as u64) as usize,
        );
        let from = usize::from(out[k]);
        if from == to {
            continue;
        }
        let left = sets_of(
            keywords,
            (0..keywords.len()).filter(|&o| o != k && usize::from(out[o]) == from),
        );
        let joined = sets[to].with_word(keywords[k]);
        let (left_cost, joined_cost) = (left.cost(), joined.cost());
        if left_cost + joined_cost < costs[from] + costs[to] {
            sets[from] = left;
            sets[to] = joined;
            costs[from] = left_cost;
            costs[to] = joined_cost;
            out[k] = u8::try_from(to).unwrap_or_default();
        }
    }
    out
}

/// Per group of eight buckets and position, the bits of the buckets whose
/// keywords have each low nibble there, and those with each high nibble
/// (index `group * SPAN + position`).
pub type Tables = ([[u8; 16]; GROUPS * SPAN], [[u8; 16]; GROUPS * SPAN]);

/// The nibble tables of `keywords` placed in `buckets`.
pub fn tables(keywords: &[Word<'_>], buckets: &[u8]) -> Tables {
    let mut lo = [[0u8; 16]; GROUPS * SPAN];
    let mut hi = [[0u8; 16]; GROUPS * SPAN];
    for (&k, &b) in keywords.iter().zip(buckets) {
        let (group, bit) = (usize::from(b) / 8 % GROUPS, 1u8 << (b % 8));
        let sets = Sets::default().with_word(k);
        for j in 0..SPAN {
            for n in 0..16 {
                if (sets.lo[j] >> n) & 1 != 0 {
                    lo[group * SPAN + j][n] |= bit;
                }
                if (sets.hi[j] >> n) & 1 != 0 {
                    hi[group * SPAN + j][n] |= bit;
                }
            }
        }
    }
    (lo, hi)
}

/// Whether the tables pass the position at `text[0..]` (`SPAN` bytes or
/// more): the vector kernel's test, one position at a time.
#[cfg(test)]
pub fn passes(tables: &Tables, text: &[u8]) -> bool {
    (0..GROUPS).any(|g| {
        (0..SPAN).fold(u8::MAX, |m, j| {
            let b = text.get(j).copied().unwrap_or(0);
            m & tables.0[g * SPAN + j][usize::from(b & 15)]
                & tables.1[g * SPAN + j][usize::from(b >> 4)]
        }) != 0
    })
}

#[cfg(test)]
mod tests {
    use super::super::byteset::holds;
    use super::{BUCKETS, SPAN, Sets, Word, assign};

    /// A shaped place's nibbles are those of the bytes its set holds,
    /// every byte tested (what `with_word` did before it read the set's
    /// bits).
    #[test]
    fn a_shapes_nibbles_are_its_bytes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let shape: Vec<[u64; 4]> = (0..SPAN)
                .map(|_| {
                    [
                        next() & next(),
                        next() & next() & next(),
                        next() & next(),
                        0,
                    ]
                })
                .collect();
            let sets = Sets::default().with_word((b"ab", Some(&shape)));
            for (j, set) in shape.iter().enumerate() {
                let (mut lo, mut hi) = (0u16, 0u16);
                for b in (0..=255u8).filter(|&b| holds(set, b)) {
                    lo |= 1 << (b & 15);
                    hi |= 1 << (b >> 4);
                }
                assert_eq!((sets.lo[j], sets.hi[j]), (lo, hi));
            }
        }
    }

    /// The model's cost of a placement: the sum of its buckets' costs.
    fn cost(keywords: &[Word<'_>], buckets: &[u8]) -> f64 {
        (0..BUCKETS)
            .map(|b| {
                keywords
                    .iter()
                    .zip(buckets)
                    .filter(|&(_, &x)| usize::from(x) == b)
                    .fold(Sets::default(), |s, (&k, _)| s.with_word(k))
                    .cost()
            })
            .sum()
    }

    /// Note [Common words in the model]: each word is read from each of
    /// its bytes, followed by a quote and by a blank, and a bucket whose
    /// keyword shares a common word's beginning pays for it where one
    /// that shares nothing with the words does not.
    #[test]
    fn common_words_cost_the_buckets_that_pass_them() {
        use super::{COMMON_WORDS, WINDOWS, WORD_RATE};
        let id = COMMON_WORDS
            .iter()
            .position(|w| *w == "id")
            .unwrap_or(usize::MAX);
        let before: usize = COMMON_WORDS.iter().take(id).map(|w| 2 * w.len()).sum();
        assert_eq!(
            WINDOWS.get(before..before + 4),
            Some(&[*b"id\"  ", *b"d\"   ", *b"id   ", *b"d    "][..])
        );
        assert_eq!(
            WINDOWS.len(),
            COMMON_WORDS.iter().map(|w| 2 * w.len()).sum::<usize>()
        );
        // `statu` of `status` with either follower, at least.
        assert!(Sets::default().with(b"status").words_cost() >= 2.0 * WORD_RATE);
        assert!(Sets::default().with(b"q~").words_cost().abs() < f64::EPSILON);
    }

    /// Note [Buckets chosen by a model of text]: the search lowers what
    /// the greedy placement costs, and the same keywords always get the
    /// same buckets.
    #[test]
    fn the_search_lowers_the_models_cost() {
        let words = super::super::tests::builtin_words();
        let keywords: Vec<Word<'_>> = words
            .iter()
            .map(|w| (w.as_bytes(), None))
            .filter(|(w, _)| w.len() >= 2)
            .collect();
        let greedy = assign(&keywords, &[], 0);
        let searched = assign(&keywords, &[], 3000);
        assert_eq!(searched, assign(&keywords, &[], 3000));
        let (before, after) = (cost(&keywords, &greedy), cost(&keywords, &searched));
        assert!(after < before * 0.9, "{before} -> {after}");
        // Every bucket's chance is a probability, an empty one's nothing.
        assert!((0.0..=1.0).contains(&Sets::default().with(b"key").cost()));
        assert!(Sets::default().cost().abs() < f64::EPSILON);
    }
}
