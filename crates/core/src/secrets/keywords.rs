//! The rules' keywords found in one pass over a text, with tables built in
//! microseconds.
//!
//! Note \[Keyword triples\]: a rule runs only when one of its keywords
//! occurs (ASCII case-insensitive; Note \[Keyword prefilter\] in
//! `detect.rs`), and masking reads every byte a command prints or stores
//! through this pass (issue 40 asks it to run at memory speed). It was an
//! Aho-Corasick automaton (a contiguous NFA, then a DFA once a process had
//! scanned 256 KB), then a table of the byte pairs that begin a keyword.
//! Both lost to the keyword set's shape: ~260 keywords, four of them two
//! bytes long (`ey`, `sk`, `s.`, `q~`), so no literal prefilter applies;
//! the DFA's tables (~1,500 states) live in L2, and ran at 4.5 ns a byte on
//! `extract --jsonl` output (perf: 14% of the whole command); and a fifth of
//! the pairs of ordinary text begin a keyword (`ke`, `to`, `ap`…), so the
//! pair table woke its compare loop at every fifth byte.
//!
//! So the pass reads each *triple* of adjacent bytes. Each byte maps, by
//! one 256-entry table, to a class: 0 for a byte no keyword holds, else one
//! of 63 (a letter and its capital share one; more than 63 distinct bytes
//! share classes, which only adds false hits). Three classes make an 18-bit
//! index into a 32 KB bit table (it stays in L1) of the triples that begin
//! a keyword; a two-byte keyword sets all 64 triples its pair begins (one
//! word of the table), so it is found at a text's last byte too. Only on a
//! set bit (3.5% of the positions of `extract --jsonl` output, against 21%
//! for pairs) are the keywords that begin with that triple compared, whole
//! and folded. A byte costs two table loads and a bit test, whatever the
//! number of keywords; building is one pass over the keywords and zeroing
//! 48 KB, nothing for a short command to wait on. One-byte keywords (a
//! user's) have a table of their own. Every occurrence is reported,
//! overlapping ones included: every position is tried.
//!
//! Note \[A fourth byte\]: on `extract --jsonl` output, 600,000 positions
//! of 16.7 MB set a triple's bit and 94,000 began a keyword: ordinary
//! words share a keyword's first three bytes (`aut` of `auth`, `son` of
//! `sonar`, `tel` of `telegr`). Each triple's slot keeps a word of the
//! classes its keywords' fourth bytes have (every bit when one is three
//! bytes or shorter), and the keywords are compared only when the text's
//! fourth byte has one of them.
//!
//! Note \[Hits gathered, then compared\]: the pass reads 256 positions,
//! writing each one's offset into a buffer and moving the buffer's end by
//! the table's bit, with no branch; then it compares the keywords at the
//! offsets gathered. Testing the bit with a branch at each position cost a
//! mispredicted branch at most hits, and the compare and the caller's
//! closure, inlined into the loop, left it short of registers (perf
//! annotate: the text and table pointers reloaded from the stack at every
//! byte).
//!
//! Note \[Keyword buckets\]: that loop still read a byte in about four
//! cycles, half of what masking `extract --jsonl`'s output cost. Where the
//! CPU has AVX2 (asked once, when the tables are made), a vector prefilter
//! reads 32 positions at a time first, as Teddy does in Hyperscan and the
//! `aho-corasick` crate: each keyword (two bytes or more) is in one of 32
//! buckets, and a position passes a bucket when each of its five bytes has
//! a low and a high nibble that some keyword of the bucket has at that place
//! (both cases of a letter; any byte past a keyword's end). Sixteen-entry
//! tables of bucket bits, one per nibble, place and group of eight buckets,
//! are looked up with `vpshufb` and and-ed: 40 shuffles for 32 positions,
//! no table in memory. A keyword's occurrence always passes its bucket, so
//! only the positions that pass are read by the triple table and compared;
//! which keywords share a bucket decides how many pass (`buckets.rs`,
//! Note \[Buckets chosen by a model of text\]; 2.7% of `extract --jsonl`
//! output, 4.5% before common words were in the model). Positions the
//! vector pass cannot read (fewer than 36 bytes left) go through the
//! triple loop, as all do on other CPUs. With AVX-512 a block is 64
//! positions (Note \[Keyword buckets 64 wide\] in `vector.rs`).
//!
//! Note \[Keywords as a match holds them\]: a keyword wakes its rules
//! wherever it occurs, but most rules' matches hold it in one way only:
//! JWT's `ey` as written and followed by letters or digits, Twilio's `sk`
//! as `SK` and hex digits, `s.` of Vault tokens followed by word bytes.
//! `they `, `key"`, `risk`, `task`, `disk` were 40% of the keyword hits on
//! `extract --jsonl` output, each compared, gated and let go. The build
//! script reads off each built-in pattern's syntax tree, per keyword, the
//! bytes every match has from the keyword's first on, for the keyword and
//! the three after it (`shape.rs`: a literal run at known places in each
//! branch; none when a branch may lack it, as the generic rule's do), and
//! a detector gives a keyword the shapes of its rules joined (none when
//! one rule has none: a user's rule, a changed pattern), with `\` allowed
//! after the keyword (a JSON escape, read as written, may stand for any
//! byte). A shaped keyword is reported only where the text has those
//! bytes, the text's end included (no match fits there): the buckets'
//! nibble sets, the triple's third byte and the fourth byte's classes are
//! the shape's, and the compare checks every byte. Masking 4 MB of
//! `extract --jsonl` output in one thread: keyword hits 21,163 → 12,053,
//! 4.43 → 4.27 ms (criterion); positions passing the buckets rose
//! (115,197 → 132,950: the search placed keywords anew), those passing the
//! triple table fell (46,909 → 43,427).

#[cfg(target_arch = "x86_64")]
mod buckets;
mod byteset;
#[cfg(test)]
mod shape;
#[cfg(target_arch = "x86_64")]
mod vector;

/// The built-in keywords' buckets, chosen by the build script (Note
/// \[Buckets chosen by a model of text\] in `buckets.rs`), sorted.
#[cfg(target_arch = "x86_64")]
static BUILTIN_BUCKETS: &[(&[u8], u8)] = include!(concat!(env!("OUT_DIR"), "/builtin_buckets.rs"));

use byteset::{ByteSet, bytes, holds, join_all, one, union};

/// Per built-in rule and keyword with a shape (Note \[Keywords as a match
/// holds them\]): the rule's id and pattern (as `rules.toml` has them),
/// the keyword (lower case), its shape; read off the patterns by the
/// build script.
static BUILTIN_SHAPES: &[(&str, &str, &[u8], &[ByteSet])] =
    include!(concat!(env!("OUT_DIR"), "/builtin_shapes.rs"));

/// The shape the build script read for `keyword` (lower case) of the
/// built-in rule `id` with the pattern `regex`; `None` for another rule,
/// or a pattern changed since.
pub(super) fn builtin_shape(id: &str, regex: &str, keyword: &str) -> Option<&'static [ByteSet]> {
    // Sorted by rule id and keyword (the build script writes it so; a
    // test holds it to that): a search by halves, where reading the table
    // through for each of a detector's keywords was a tenth of building
    // the built-in detector.
    let at = BUILTIN_SHAPES
        .binary_search_by(|&(i, _, k, _)| (i, k).cmp(&(id, keyword.as_bytes())))
        .ok()?;
    let (_, r, _, shape) = BUILTIN_SHAPES[at];
    (r == regex).then_some(shape)
}

/// The shape of `keyword` (lower case) for a detector whose rules with it
/// are `rules`: what each rule's matches have there, joined, when every
/// one is a built-in rule the build script read a shape of (Note
/// \[Keywords as a match holds them\]); a `\\` is allowed after the
/// keyword too (a JSON escape, read as written, may stand for any byte).
pub(super) fn keyword_shape<'r>(
    keyword: &str,
    rules: impl Iterator<Item = &'r super::rules::Rule>,
) -> Option<Vec<ByteSet>> {
    let mut shape = join_all(rules.map(|r| builtin_shape(&r.id, &r.regex, keyword)))?;
    for set in shape.iter_mut().skip(keyword.len()) {
        *set = union(set, &one(b'\\'));
    }
    Some(shape)
}

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

/// Classes a byte can have besides 0 (six bits per byte of a triple).
const CLASSES: usize = 63;

/// Words of the triple table: 2^18 bits.
const WORDS: usize = 1 << 12;

/// Positions read before their hits are compared (Note \[Hits gathered,
/// then compared\]): each one's offset fits a byte.
const PIECE: usize = 256;

/// The keywords of a rule set and the tables that find them.
#[derive(Debug)]
pub(super) struct Keywords {
    /// The keywords, lower case, in the order given (their ids).
    patterns: Vec<Box<[u8]>>,
    /// Per keyword, its first eight bytes as a little-endian word and the
    /// mask of the bytes it has (Note \[A word at a time\]).
    heads: Vec<(u64, u64)>,
    /// Each byte's class: 0 when no keyword of two bytes or more holds it.
    class: [u8; 256],
    /// One bit per class triple that begins a keyword of 2+ bytes.
    triples: Box<[u64; WORDS]>,
    /// Per word of `triples`, the set bits in the words before it.
    rank: Box<[u32; WORDS]>,
    /// Per set bit of `triples` in order, where its keywords begin in
    /// `by_triple` (one more entry at the end).
    starts: Vec<u32>,
    /// Keyword ids grouped by the triples they begin with.
    by_triple: Vec<u32>,
    /// Per set bit of `triples` in order, one bit per class a fourth byte
    /// of its keywords has (Note \[A fourth byte\]).
    fourth: Vec<u64>,
    /// Per keyword, the bytes every match of its rules has from its first
    /// on, when known (Note \[Keywords as a match holds them\]).
    shapes: Vec<Option<Box<[ByteSet]>>>,
    /// One-byte keywords: their ids by byte (lower case).
    single: Vec<(u8, u32)>,
    single_set: [bool; 256],
    /// The vector prefilter, when the CPU has AVX2 and a keyword has two
    /// bytes or more (Note \[Keyword buckets\]).
    #[cfg(target_arch = "x86_64")]
    kernel: Option<vector::Kernel>,
}

/// The vector prefilter for the keywords of two bytes or more, when this
/// CPU has AVX2: the built-in keywords in the buckets the build script
/// chose, others placed now (Note \[Buckets chosen by a model of text\]
/// in `buckets.rs`).
#[cfg(target_arch = "x86_64")]
fn kernel(patterns: &[Box<[u8]>], shapes: &[Option<Box<[ByteSet]>>]) -> Option<vector::Kernel> {
    vector::Kernel::new(&bucket_tables(patterns, shapes)?)
}

/// The buckets' tables of the keywords of two bytes or more, when there
/// are some: the built-in keywords in the buckets the build script chose,
/// others placed now.
#[cfg(target_arch = "x86_64")]
fn bucket_tables(
    patterns: &[Box<[u8]>],
    shapes: &[Option<Box<[ByteSet]>>],
) -> Option<buckets::Tables> {
    let long: Vec<buckets::Word<'_>> = patterns
        .iter()
        .zip(shapes)
        .map(|(p, s)| (&**p, s.as_deref()))
        .filter(|(p, _)| p.len() >= 2)
        .collect();
    if long.is_empty() {
        return None;
    }
    let placed: Vec<Option<u8>> = long
        .iter()
        .map(|p| {
            BUILTIN_BUCKETS
                .binary_search_by(|(k, _)| (*k).cmp(p.0))
                .ok()
                .map(|i| BUILTIN_BUCKETS[i].1)
        })
        .collect();
    let placed = buckets::assign(&long, &placed, 0);
    Some(buckets::tables(&long, &placed))
}

impl Keywords {
    /// These keywords with the AVX2 kernel even where the CPU has AVX-512
    /// (Note \[Keyword buckets 64 wide\] in `vector.rs`), so tests read
    /// both kernels; `None` without AVX2.
    #[cfg(all(test, target_arch = "x86_64"))]
    fn with_avx2(patterns: &[String], shapes: &[Option<Vec<ByteSet>>]) -> Option<Keywords> {
        let mut k = Keywords::shaped(patterns, shapes);
        k.kernel = Some(vector::Kernel::new_avx2(&bucket_tables(
            &k.patterns,
            &k.shapes,
        )?)?);
        Some(k)
    }

    /// The keyword tables of `patterns` with each kernel this CPU has: the
    /// one [`Keywords::new`] picks, and the AVX2 one where that is wider.
    #[cfg(test)]
    fn every_kernel(patterns: &[String]) -> Vec<Keywords> {
        Keywords::every_kernel_shaped(patterns, &[])
    }

    /// [`Keywords::every_kernel`] with shapes.
    #[cfg(test)]
    fn every_kernel_shaped(patterns: &[String], shapes: &[Option<Vec<ByteSet>>]) -> Vec<Keywords> {
        let k = Keywords::shaped(patterns, shapes);
        #[cfg(target_arch = "x86_64")]
        if k.kernel.as_ref().is_some_and(vector::Kernel::wide) {
            if let Some(narrow) = Keywords::with_avx2(patterns, shapes) {
                return vec![k, narrow];
            }
        }
        vec![k]
    }
}

/// The triple index of three classes.
fn index(a: u8, b: u8, c: u8) -> usize {
    usize::from(a) << 12 | usize::from(b) << 6 | usize::from(c)
}

/// Whether `text` folded to lower case is `lower` (of the same length).
fn folded_eq(text: &[u8], lower: &[u8]) -> bool {
    text.iter()
        .zip(lower)
        .all(|(&t, &k)| LOWER[usize::from(t)] == k)
}

/// A keyword's first eight bytes as a little-endian word, and the mask of
/// the bytes it has.
fn head(p: &[u8]) -> (u64, u64) {
    let mut bytes = [0u8; 8];
    let mut mask = [0u8; 8];
    for (i, &b) in p.iter().take(8).enumerate() {
        bytes[i] = b;
        mask[i] = 0xff;
    }
    (u64::from_le_bytes(bytes), u64::from_le_bytes(mask))
}

/// Eight bytes folded to ASCII lower case at once, as [`LOWER`] folds
/// each (Note \[A word at a time\]).
///
/// Note \[A word at a time\]: at a set bit of the triple table the
/// keywords that begin with that triple are compared with the text
/// (`compare`); a byte loop per keyword, its end unknown to the branch
/// predictor, was most of that cost (perf on `extract --jsonl` output:
/// `compare` 28% of masking, 18% in its byte loop). The text's next eight
/// bytes are folded once, and each keyword's first eight (most are
/// shorter) compared by one XOR under its mask. Folding: a byte's low
/// seven bits plus `0x80 - b'A'` carries into its top bit when they are
/// `b'A'` or more, plus `0x80 - b'Z' - 1` when they are above `b'Z'`
/// (neither sum leaves the byte); a byte below `0x80` whose two sums
/// differ there is a capital, and gains `0x20`.
fn fold_word(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let low7 = x & (0x7f * ONES);
    let from_a = low7 + (0x80 - u64::from(b'A')) * ONES;
    let past_z = low7 + (0x80 - u64::from(b'Z') - 1) * ONES;
    let capital = (from_a ^ past_z) & !x & HIGH;
    x | (capital >> 2)
}

/// One bit per class (of `class`) of a byte in `set`.
fn classes_of(class: &[u8; 256], set: &ByteSet) -> u64 {
    bytes(set).fold(0, |bits, b| bits | 1 << (class[usize::from(b)] & 63))
}

impl Keywords {
    /// Tables for `patterns` (non-empty strings; compared ASCII
    /// case-insensitively).
    #[cfg(test)]
    pub(super) fn new(patterns: &[String]) -> Keywords {
        Keywords::shaped(patterns, &[])
    }

    /// Tables for `patterns` (non-empty strings; compared ASCII
    /// case-insensitively), each found only where the text has the bytes
    /// its shape in `shapes` says, when it has one (Note \[Keywords as a
    /// match holds them\]; a keyword of one byte has none).
    pub(super) fn shaped(patterns: &[String], shapes: &[Option<Vec<ByteSet>>]) -> Keywords {
        let patterns: Vec<Box<[u8]>> = patterns
            .iter()
            .map(|p| p.bytes().map(|b| LOWER[usize::from(b)]).collect())
            .collect();
        let shapes: Vec<Option<Box<[ByteSet]>>> = (0..patterns.len())
            .map(|id| {
                let shape = shapes.get(id)?.as_ref()?;
                (patterns[id].len() >= 2 && shape.len() > patterns[id].len())
                    .then(|| shape.clone().into_boxed_slice())
            })
            .collect();
        let mut class = [0u8; 256];
        let mut distinct = 0usize;
        // The ASCII bytes with a class, so a shape's set is read only for
        // the bytes it adds (reading every byte of every set was an
        // eighth of building the built-in detector).
        let mut classed: ByteSet = [0; 4];
        let mut give = |b: u8, class: &mut [u8; 256], classed: &mut ByteSet| {
            if class[usize::from(b)] == 0 {
                // `% CLASSES + 1` is at most 63: the cast keeps every bit.
                #[allow(clippy::cast_possible_truncation)]
                let c = (distinct % CLASSES + 1) as u8;
                distinct += 1;
                for b in [b, b.to_ascii_uppercase(), b.to_ascii_lowercase()] {
                    class[usize::from(b)] = c;
                    *classed = union(classed, &one(b));
                }
            }
        };
        // The keywords' bytes, then the ASCII bytes their shapes allow
        // after them, so that a triple or fourth byte a shape excludes
        // (a blank, a quote) has a class of its own or 0.
        for p in patterns.iter().filter(|p| p.len() >= 2) {
            for &b in &**p {
                give(b, &mut class, &mut classed);
            }
        }
        for (s, p) in shapes.iter().zip(&patterns) {
            for set in s.iter().flat_map(|s| s.get(p.len()..).unwrap_or_default()) {
                let fresh = [set[0] & !classed[0], set[1] & !classed[1], 0, 0];
                for b in bytes(&fresh) {
                    give(b, &mut class, &mut classed);
                }
            }
        }
        let mut triples: Box<[u64; WORDS]> = vec![0u64; WORDS]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("WORDS words"));
        let mut grouped: Vec<(u32, u32)> = Vec::new();
        let mut single = Vec::new();
        let mut single_set = [false; 256];
        let of = |b: u8| class[usize::from(b)];
        for (id, p) in patterns.iter().enumerate() {
            let id = u32::try_from(id).unwrap_or(u32::MAX);
            match **p {
                [] => {}
                [b] => {
                    single.push((b, id));
                    single_set[usize::from(b)] = true;
                }
                [a, b] => {
                    // Every third class, 0 (the text's end) included; with
                    // a shape, the classes of the bytes it allows there.
                    let at = index(of(a), of(b), 0);
                    let thirds = match shapes[id as usize].as_deref().and_then(|s| s.get(2)) {
                        Some(set) => classes_of(&class, set),
                        None => u64::MAX,
                    };
                    triples[at >> 6] |= thirds;
                    for c in (0..64u32).filter(|c| thirds >> c & 1 != 0) {
                        grouped.push((u32::try_from(at).unwrap_or(0) | c, id));
                    }
                }
                [a, b, c, ..] => {
                    let at = index(of(a), of(b), of(c));
                    triples[at >> 6] |= 1 << (at & 63);
                    grouped.push((u32::try_from(at).unwrap_or(0), id));
                }
            }
        }
        grouped.sort_unstable();
        grouped.dedup();
        let mut rank: Box<[u32; WORDS]> = vec![0u32; WORDS]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("WORDS words"));
        let mut total = 0;
        for (r, w) in rank.iter_mut().zip(triples.iter()) {
            *r = total;
            total += w.count_ones();
        }
        let mut starts = Vec::with_capacity(total as usize + 1);
        let mut last = None;
        for (i, &(at, _)) in grouped.iter().enumerate() {
            if last != Some(at) {
                starts.push(u32::try_from(i).unwrap_or(u32::MAX));
                last = Some(at);
            }
        }
        starts.push(u32::try_from(grouped.len()).unwrap_or(u32::MAX));
        let heads = patterns.iter().map(|p| head(p)).collect();
        // Per slot, the classes its keywords' fourth bytes have; all of
        // them when one is three bytes or shorter, but for the bytes a
        // shape allows there.
        let fourth = starts
            .windows(2)
            .map(|w| {
                grouped[w[0] as usize..w[1] as usize]
                    .iter()
                    .fold(0u64, |bits, &(_, id)| {
                        let shape = shapes[id as usize].as_deref();
                        match (patterns[id as usize].get(3), shape.and_then(|s| s.get(3))) {
                            (Some(&b), _) => bits | 1 << (class[usize::from(b)] & 63),
                            (None, Some(set)) => bits | classes_of(&class, set),
                            (None, None) => u64::MAX,
                        }
                    })
            })
            .collect();
        Keywords {
            heads,
            fourth,
            class,
            triples,
            rank,
            starts,
            by_triple: grouped.into_iter().map(|(_, id)| id).collect(),
            #[cfg(target_arch = "x86_64")]
            kernel: kernel(&patterns, &shapes),
            patterns,
            shapes,
            single,
            single_set,
        }
    }

    /// How many keywords there are (ids are `0..len`).
    pub(super) fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Calls `each(id, start, end)` for every occurrence of every keyword in
    /// `text`, overlapping ones included (in no promised order); stops when
    /// `each` returns false.
    pub(super) fn scan(&self, text: &[u8], mut each: impl FnMut(usize, usize, usize) -> bool) {
        if !self.single.is_empty() && !self.scan_singles(text, &mut each) {
            return;
        }
        let Some(from) = self.scan_vector(text, &mut each) else {
            return;
        };
        match text.get(from..) {
            Some(rest) if from > 0 => {
                self.scan_triples(rest, |id, start, end| each(id, from + start, from + end));
            }
            _ => self.scan_triples(text, each),
        }
    }

    /// The positions the vector prefilter can read (Note \[Keyword
    /// buckets\]): those it passes read by the triple table and compared.
    /// Answers where the triple loop is to go on, or `None` when `each`
    /// said stop.
    #[cfg(target_arch = "x86_64")]
    fn scan_vector(
        &self,
        text: &[u8],
        each: &mut impl FnMut(usize, usize, usize) -> bool,
    ) -> Option<usize> {
        let Some(kernel) = &self.kernel else {
            return Some(0);
        };
        let class = |b: u8| usize::from(self.class[usize::from(b)] & 63);
        let triples: &[u64; WORDS] = &self.triples;
        let mut hits = [0u8; PIECE];
        let mut slots = [0u32; PIECE];
        // Inlined into each kernel's vector code (two of them now, Note
        // \[Keyword buckets 64 wide\] in `vector.rs`), where `popcnt` is
        // there for the slots' bit counts.
        kernel.pieces(
            text,
            #[inline(always)]
            |start, offsets| {
                // Without a branch per position (Note \[Hits gathered, then
                // compared\]): the triple's bit and its fourth byte's, then the
                // positions both pass compared from the slot found here. The
                // compare found the slot again, its bit count without the
                // CPU's `popcnt` (baseline x86-64, outside this AVX2 code):
                // 2% of masking `extract --jsonl`'s output (the masking loop).
                let mut n = 0;
                for &k in offsets {
                    let i = start + usize::from(k);
                    // The kernel passes only positions with five bytes in `text`.
                    let Some(&[first, second, third, next]) = text.get(i..i + 4) else {
                        continue;
                    };
                    let at = class(first) << 12 | class(second) << 6 | class(third);
                    let word = triples[at >> 6];
                    let slot = self.rank[at >> 6] + (word & ((1u64 << (at & 63)) - 1)).count_ones();
                    // A slot past the last (the triple's bit unset) reads none.
                    let fourth = self.fourth.get(slot as usize).copied().unwrap_or(0);
                    hits[n % PIECE] = k;
                    slots[n % PIECE] = slot;
                    n += usize::from((word >> (at & 63)) & (fourth >> class(next)) & 1 != 0);
                }
                for (&k, &slot) in hits[..n.min(PIECE)].iter().zip(&slots) {
                    if !self.compare_slot(text, start + usize::from(k), slot as usize, each) {
                        return false;
                    }
                }
                true
            },
        )
    }

    /// Without AVX2 every position goes through the triple loop.
    #[cfg(not(target_arch = "x86_64"))]
    #[allow(clippy::unused_self, clippy::unnecessary_wraps)]
    fn scan_vector(
        &self,
        _text: &[u8],
        _each: &mut impl FnMut(usize, usize, usize) -> bool,
    ) -> Option<usize> {
        Some(0)
    }

    /// [`Keywords::scan`]'s occurrences of the keywords of two bytes or
    /// more, found with the triple table alone (Note \[Keyword triples\]).
    fn scan_triples(&self, text: &[u8], mut each: impl FnMut(usize, usize, usize) -> bool) {
        // Classes are below 64 (six bits): the index stays under 2^18 and
        // the table's bounds are never checked in the loop.
        let class = |b: u8| usize::from(self.class[usize::from(b)] & 63);
        let triples: &[u64; WORDS] = &self.triples;
        let mut at = match *text {
            [] => return,
            [x] => class(x) << 12,
            [x, y, ..] => class(x) << 6 | class(y),
        };
        // Positions whose third byte is in the text, a piece at a time
        // (Note \[Hits gathered, then compared\]), then the last two (what
        // would be their missing bytes is class 0).
        let mut hits = [0u8; PIECE];
        for (p, piece) in text.get(2..).unwrap_or_default().chunks(PIECE).enumerate() {
            let mut n = 0;
            // Two positions a step: `at` gains both bytes' classes by one
            // shift and one `or` (the chain each step waits on), and the
            // bits above the 18 of a triple are dropped only when indexing.
            let mut pairs = piece.chunks_exact(2);
            let mut k = 0u8;
            for pair in &mut pairs {
                at = at << 12 | class(pair[0]) << 6 | class(pair[1]);
                let (first, second) = ((at >> 6) & (WORDS * 64 - 1), at & (WORDS * 64 - 1));
                hits[n % PIECE] = k;
                n += ((triples[first >> 6] >> (first & 63)) & 1) as usize;
                hits[n % PIECE] = k.wrapping_add(1);
                n += ((triples[second >> 6] >> (second & 63)) & 1) as usize;
                k = k.wrapping_add(2);
            }
            for &t in pairs.remainder() {
                at = at << 6 | class(t);
                let third = at & (WORDS * 64 - 1);
                hits[n % PIECE] = k;
                n += ((triples[third >> 6] >> (third & 63)) & 1) as usize;
            }
            at &= WORDS * 64 - 1;
            for &k in &hits[..n.min(PIECE)] {
                let i = p * PIECE + usize::from(k);
                let at = class(text[i]) << 12 | class(text[i + 1]) << 6 | class(text[i + 2]);
                if !self.compare(text, i, triples[at >> 6], at, &mut each) {
                    return;
                }
            }
        }
        if text.len() >= 2 {
            at = (at << 6) & (WORDS * 64 - 1);
        }
        for i in text.len().saturating_sub(2)..text.len() {
            let w = triples[at >> 6];
            if (w >> (at & 63)) & 1 != 0 && !self.compare(text, i, w, at, &mut each) {
                return;
            }
            at = (at << 6) & (WORDS * 64 - 1);
        }
    }

    /// The keywords that begin with the triple at `text[i..]` (bit `at` of
    /// word `w`), compared whole; false when `each` said stop.
    #[cold]
    #[inline(never)]
    fn compare(
        &self,
        text: &[u8],
        i: usize,
        w: u64,
        at: usize,
        each: &mut impl FnMut(usize, usize, usize) -> bool,
    ) -> bool {
        let bit = at & 63;
        let below = if bit == 0 { 0 } else { w & ((1u64 << bit) - 1) };
        let slot = (self.rank[at >> 6] + below.count_ones()) as usize;
        // Past the text's end, class 0: no keyword of four bytes or more
        // ends there, and a shorter one set every bit.
        let next = text
            .get(i + 3)
            .map_or(0, |&b| self.class[usize::from(b)] & 63);
        if (self.fourth[slot] >> next) & 1 == 0 {
            return true;
        }
        self.compare_slot(text, i, slot, each)
    }

    /// [`Keywords::compare`] from the triple's slot, its fourth byte
    /// passed.
    fn compare_slot(
        &self,
        text: &[u8],
        i: usize,
        slot: usize,
        each: &mut impl FnMut(usize, usize, usize) -> bool,
    ) -> bool {
        let (from, to) = (self.starts[slot] as usize, self.starts[slot + 1] as usize);
        // The text's next eight bytes folded once, when there are eight.
        let word = text
            .get(i..i + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(|b| fold_word(u64::from_le_bytes(b)));
        for &id in &self.by_triple[from..to] {
            let p = &self.patterns[id as usize];
            let end = i + p.len();
            if end > text.len() {
                continue;
            }
            let same = match word {
                Some(w) => {
                    let (bytes, mask) = self.heads[id as usize];
                    let head = p.len().min(8);
                    (w ^ bytes) & mask == 0 && folded_eq(&text[i + head..end], &p[head..])
                }
                None => folded_eq(&text[i..end], p),
            };
            if same && self.shape_holds(id as usize, text, i) && !each(id as usize, i, end) {
                return false;
            }
        }
        true
    }

    /// Whether the text at `i` has the bytes keyword `id`'s shape says
    /// (Note \[Keywords as a match holds them\]): true without a shape;
    /// false where the text ends first.
    fn shape_holds(&self, id: usize, text: &[u8], i: usize) -> bool {
        self.shapes[id].as_deref().is_none_or(|shape| {
            text.get(i..i + shape.len())
                .is_some_and(|t| t.iter().zip(shape).all(|(&b, set)| holds(set, b)))
        })
    }

    /// The one-byte keywords' occurrences; false when `each` said stop.
    fn scan_singles(
        &self,
        text: &[u8],
        each: &mut impl FnMut(usize, usize, usize) -> bool,
    ) -> bool {
        for (i, &t) in text.iter().enumerate() {
            let t = LOWER[usize::from(t)];
            if self.single_set[usize::from(t)] {
                for &(b, id) in &self.single {
                    if b == t && !each(id as usize, i, i + 1) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Calls `each(id, start, end)` for every keyword occurrence in `text`,
    /// in the order they start (Note \[Clean JSON without a Value\] in
    /// `clean_json.rs` merges them as they come).
    pub(super) fn scan_in_order(&self, text: &[u8], mut each: impl FnMut(usize, usize, usize)) {
        if self.single.is_empty() {
            // The triple pass reports positions in order.
            self.scan(text, |id, start, end| {
                each(id, start, end);
                true
            });
            return;
        }
        let mut hits = Vec::new();
        self.scan(text, |id, start, end| {
            hits.push((start, end, id));
            true
        });
        hits.sort_unstable();
        for (start, end, id) in hits {
            each(id, start, end);
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
    use super::{ByteSet, Keywords};

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
    fn a_word_folds_as_each_of_its_bytes_folds() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut bytes = [b'Q', 0xc3, b'@', b'[', b'z', 0x80, b'A', 0xff];
                bytes[at] = b;
                let want = u64::from_le_bytes(bytes.map(|x| super::LOWER[usize::from(x)]));
                assert_eq!(
                    super::fold_word(u64::from_le_bytes(bytes)),
                    want,
                    "{b:#x} at {at}"
                );
            }
        }
    }

    #[test]
    fn every_overlapping_occurrence_is_found_in_any_case() {
        let patterns = [
            "key",
            "ey",
            "keys",
            "API_",
            "x",
            "sk",
            "s.",
            "://",
            "ÉÉ",
            "token",
            "k",
            "credentials",
            "password",
        ];
        let k = Keywords::new(&patterns.map(String::from));
        assert_eq!(k.len(), patterns.len());
        for text in [
            "",
            "k",
            "KEY",
            "monkeys and a Token, api_KEY=sk.s. https://x.Y éé ÉÉ",
            "eyeyeyey keykeys kkk",
            "ends with ke",
            "ends with key",
            "\u{0}\u{ff}ÿ",
            "my CREDENTIALS, credentialz and a PassWord: passwor",
            "ends with credentials",
            "ends with credential",
        ] {
            assert_eq!(found(&k, text), naive(&patterns, text), "{text:?}");
        }
        // Across the pieces of 256 positions the pass reads at a time: a
        // keyword at every offset around each piece's edge.
        for lead in 240..270 {
            let text = format!(
                "{}{}",
                "-".repeat(lead),
                "TOKEN credentials ey sk. ".repeat(40)
            );
            assert_eq!(found(&k, &text), naive(&patterns, &text), "lead {lead}");
        }
        assert!(k.any(b"..TOKEN.."));
        assert!(!k.any(b"nothing here at all"));
        assert!(!Keywords::new(&[]).any(b"key"));
    }

    #[test]
    fn covering_hits_overlap_every_occurrence() {
        // Without and with a one-byte keyword (reported by a pass of its own).
        let patterns = ["key", "ey", "keys", "eys", "token", "ok", "s.", "y"];
        let without = Keywords::new(
            &patterns[..7]
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
        );
        let with = Keywords::new(&patterns.map(String::from));
        for (k, text) in [&without, &with].into_iter().flat_map(|k| {
            [
                "",
                "monkeys tokens.keys",
                "KEYKEYS eyeys",
                "s.s.s. okey",
                "yes",
            ]
            .map(|t| (k, t))
        }) {
            let mut hits = Vec::new();
            k.scan_in_order(text.as_bytes(), |_, s, e| hits.push((s, e)));
            assert!(hits.is_sorted_by_key(|&(s, _)| s), "{text:?}: {hits:?}");
            for (_, s, e) in naive(&patterns[..k.len()], text) {
                assert!(
                    hits.iter().any(|&(hs, he)| hs < e && s < he),
                    "{text:?}: ({s}, {e}) not covered by {hits:?}"
                );
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

    /// The built-in keywords (lower case, as the detector passes them).
    pub(super) fn builtin_words() -> Vec<String> {
        let rules = crate::secrets::RuleSet::builtin();
        let mut words: Vec<String> = Vec::new();
        for k in rules.rules.iter().flat_map(|r| r.keywords.iter()) {
            let k = k.to_ascii_lowercase();
            if !words.contains(&k) {
                words.push(k);
            }
        }
        words
    }

    /// Note \[Keywords as a match holds them\]: the table the build script
    /// wrote is what the patterns say, and most keywords have a shape
    /// (the generic rule's, whose matches may hold anything after them,
    /// have none).
    #[test]
    fn the_build_scripts_shapes_are_the_patterns() {
        let rules = crate::secrets::RuleSet::builtin();
        let mut shaped = 0;
        for r in &rules.rules {
            let pattern = crate::secrets::syntax::go_to_rust(&r.regex);
            for k in &r.keywords {
                let k = k.to_ascii_lowercase();
                let derived = super::shape::shape_of(&pattern, k.as_bytes());
                assert_eq!(
                    super::builtin_shape(&r.id, &r.regex, &k).map(<[ByteSet]>::to_vec),
                    derived,
                    "{} {k}",
                    r.id
                );
                shaped += usize::from(derived.is_some());
            }
        }
        assert!(shaped >= 90, "{shaped} keywords with a shape");
        // Sorted and each once, for the search by halves.
        assert!(
            super::BUILTIN_SHAPES
                .windows(2)
                .all(|w| (w[0].0, w[0].2) < (w[1].0, w[1].2))
        );
        let shape = |k: &str| {
            super::keyword_shape(
                k,
                rules
                    .rules
                    .iter()
                    .filter(|r| r.keywords.iter().any(|w| w.eq_ignore_ascii_case(k))),
            )
        };
        for k in ["ey", "sk", "s.", "q~"] {
            let s = shape(k).unwrap_or_default();
            assert_eq!(s.len(), k.len() + 3, "{k}");
            // A JSON escape may stand for any byte after the keyword.
            assert!(
                s[k.len()..].iter().all(|set| super::holds(set, b'\\')),
                "{k}"
            );
            assert!(
                s[k.len()..]
                    .iter()
                    .all(|set| !super::holds(set, b' ') && !super::holds(set, b'"')),
                "{k}"
            );
        }
        assert_eq!(shape("key"), None);
        assert_eq!(shape("token"), None);
    }

    /// Note \[Keywords as a match holds them\]: each built-in keyword with
    /// the shape a detector of the built-in rules gives it is found, by
    /// every kernel and by the triple loop alike, where the text has bytes
    /// its shape allows, and not where a blank follows it.
    #[test]
    fn shaped_keywords_are_found_only_as_a_match_holds_them() {
        let rules = crate::secrets::RuleSet::builtin();
        let words = builtin_words();
        let shapes: Vec<Option<Vec<ByteSet>>> = words
            .iter()
            .map(|w| {
                let with = rules
                    .rules
                    .iter()
                    .filter(|r| r.keywords.iter().any(|k| k.eq_ignore_ascii_case(w)));
                super::keyword_shape(w, with)
            })
            .collect();
        // A byte of each set: a letter or digit where there is one.
        let pick = |set: &ByteSet| {
            let all: Vec<u8> = (0..=255u8).filter(|&b| super::holds(set, b)).collect();
            all.iter()
                .copied()
                .find(u8::is_ascii_alphanumeric)
                .or(all.first().copied())
                .unwrap_or(b'x')
        };
        let filler = "line messag conf tok ap secre key_ ";
        for k in Keywords::every_kernel_shaped(&words, &shapes) {
            for (id, w) in words.iter().enumerate() {
                let Some(shape) = &shapes[id] else { continue };
                let good: Vec<u8> = shape.iter().map(pick).collect();
                let mut blank = good.clone();
                blank[w.len()] = b' ';
                for lead in [0, 1, 7, 31, 32, 33, 63, 64, 95] {
                    for (word, found) in [(&good, true), (&blank, false)] {
                        let text: Vec<u8> = [
                            filler.bytes().cycle().take(lead).collect::<Vec<u8>>(),
                            word.clone(),
                            filler.repeat(3).into_bytes(),
                        ]
                        .concat();
                        let mut hit = false;
                        k.scan(&text, |i, s, e| {
                            hit |= i == id && s == lead && e == lead + w.len();
                            true
                        });
                        let shown = String::from_utf8_lossy(&text).into_owned();
                        assert_eq!(hit, found, "{w:?} at {lead} in {shown:?}");
                        let mut slow = Vec::new();
                        k.scan_triples(&text, |i, s, e| {
                            slow.push((s, i, e));
                            true
                        });
                        let mut fast = Vec::new();
                        k.scan_in_order(&text, |i, s, e| fast.push((s, i, e)));
                        slow.sort_unstable();
                        assert_eq!(fast, slow, "{shown:?}");
                    }
                }
            }
        }
    }

    /// Note \[Keyword buckets\]: on a CPU with AVX2 the vector pass runs,
    /// and wherever it reads a built-in keyword (at every offset of a long
    /// text, in either case, among other keywords' beginnings) it is found
    /// as the triple loop alone finds it.
    #[test]
    fn the_vector_pass_finds_every_builtin_keyword_at_every_offset() {
        let words = builtin_words();
        let kernels = Keywords::every_kernel(&words);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            assert!(
                kernels[0].kernel.is_some(),
                "AVX2 is here: the vector pass must run"
            );
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512bw") {
            assert_eq!(kernels.len(), 2, "AVX-512 is here: both kernels are read");
        }
        for k in &kernels {
            // Filler that begins many keywords but completes none.
            let filler = "line messag conf tok ap secre key_ ";
            for (id, w) in words.iter().enumerate() {
                for lead in [0, 1, 7, 31, 32, 33, 63, 64, 95] {
                    let upper = w.to_ascii_uppercase();
                    let word = if lead % 2 == 0 {
                        w.as_str()
                    } else {
                        upper.as_str()
                    };
                    let text: String = filler.chars().cycle().take(lead).collect::<String>()
                        + word
                        + &filler.repeat(3);
                    let mut hit = false;
                    k.scan(text.as_bytes(), |i, s, e| {
                        hit |= i == id && s == lead && e == lead + w.len();
                        true
                    });
                    assert!(hit, "{w:?} at {lead} in {text:?}");
                    let mut slow = Vec::new();
                    k.scan_triples(text.as_bytes(), |i, s, e| {
                        slow.push((s, i, e));
                        true
                    });
                    let mut fast = Vec::new();
                    k.scan_in_order(text.as_bytes(), |i, s, e| fast.push((s, i, e)));
                    slow.sort_unstable();
                    assert_eq!(fast, slow, "{text:?}");
                }
            }
        }
    }

    /// Every built-in keyword passes the bucket the build script put it in,
    /// in either case, whatever follows it; a keyword it did not place (a
    /// user rule's) is placed when the tables are made, and passes too.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_keyword_passes_its_bucket() {
        let mut words = builtin_words();
        words.extend(["zz-own-rule", "q9", "xyz"].map(String::from));
        let long: Vec<super::buckets::Word<'_>> = words
            .iter()
            .map(|w| (w.as_bytes(), None))
            .filter(|(w, _)| w.len() >= 2)
            .collect();
        let placed: Vec<Option<u8>> = long
            .iter()
            .map(|&(w, _)| {
                super::BUILTIN_BUCKETS
                    .binary_search_by(|(k, _)| (*k).cmp(w))
                    .ok()
                    .map(|i| super::BUILTIN_BUCKETS[i].1)
            })
            .collect();
        assert_eq!(
            placed.iter().filter(|p| p.is_none()).count(),
            3,
            "the build script placed every built-in keyword"
        );
        let buckets = super::buckets::assign(&long, &placed, 0);
        assert_eq!(
            buckets,
            super::buckets::assign(&long, &placed, 0),
            "deterministic"
        );
        assert!(
            buckets
                .iter()
                .all(|&b| usize::from(b) < super::buckets::BUCKETS)
        );
        let tables = super::buckets::tables(&long, &buckets);
        for &(w, _) in &long {
            for tail in [&b"\0\0"[..], b"~~", b"\xff\xfe", b"AZ"] {
                for text in [w.to_vec(), w.to_ascii_uppercase()] {
                    let text = [&text[..], tail, b"  "].concat();
                    assert!(
                        super::buckets::passes(&tables, &text),
                        "{:?}",
                        text.escape_ascii().to_string()
                    );
                }
            }
        }
        // The buckets are not everything: ordinary words mostly fail them.
        let prose = b"the quick brown fox jumps over the lazy dog while reading files";
        let passed = (0..prose.len() - 4)
            .filter(|&i| super::buckets::passes(&tables, &prose[i..]))
            .count();
        assert!(
            passed * 4 < prose.len(),
            "{passed} of {} positions pass",
            prose.len()
        );
    }

    proptest::proptest! {
        /// Long texts made of keywords, their beginnings and other bytes in
        /// either case: the vector pass with the triple loop after it finds
        /// every occurrence the slow way finds, in order.
        #[test]
        fn the_vector_pass_finds_what_the_slow_way_finds(
            pieces in proptest::collection::vec((0usize..40, proptest::bool::ANY), 0..120),
        ) {
            let patterns = [
                "key", "ey", "token", "tok", "api-", "api", "s.", "sk", "password",
                "ghp_", "xoxb-", "-----begin", "://", "a3t", "linear", "sonar",
            ];
            let kernels = Keywords::every_kernel(&patterns.map(String::from));
            let fragments = [
                "ke", "ey", "tok", "en", "api", "-", "s", ".", "k", "pass", "word", "ghp", "_",
                "xox", "b-", "---", "--begin", ":", "//", "a3", "t", "lin", "ear", "sona", "r",
                " ", "\"", "é", "0", "line", "KEY", "Token", "\n", "z", "q~", "{", "}", "a", "e", "y",
            ];
            let text: String = pieces
                .iter()
                .map(|&(i, up)| {
                    let f = fragments[i % fragments.len()];
                    if up { f.to_ascii_uppercase() } else { f.to_owned() }
                })
                .collect();
            for k in &kernels {
                let mut fast = Vec::new();
                k.scan_in_order(text.as_bytes(), |id, s, e| fast.push((id, s, e)));
                let mut sorted = fast.clone();
                sorted.sort_by_key(|&(id, s, _)| (s, id));
                let mut in_order = fast.iter().map(|&(_, s, _)| s).collect::<Vec<_>>();
                in_order.dedup();
                proptest::prop_assert!(in_order.windows(2).all(|w| w[0] < w[1]), "in order");
                proptest::prop_assert_eq!(sorted, naive(&patterns, &text));
            }
        }
    }

    proptest::proptest! {
        /// More distinct keyword bytes than classes (they share classes),
        /// keywords of one, two and three bytes, one a prefix of another,
        /// texts from the same bytes in either case: every occurrence, as
        /// the slow way finds them.
        #[test]
        fn the_triple_tables_find_what_the_slow_way_finds(
            text in proptest::collection::vec(0usize..80, 0..60),
            upper in proptest::collection::vec(proptest::bool::ANY, 60),
        ) {
            // 75 distinct bytes: letters, digits and punctuation.
            let alphabet: Vec<char> = ('a'..='z').chain('0'..='9').chain("!#$%&()*+,-./:;<=>?@[]^_`{|}~".chars())
                .chain('A'..='J').collect::<Vec<_>>();
            let mut patterns: Vec<String> = alphabet
                .chunks(3)
                .map(|c| c.iter().collect())
                .collect();
            patterns.extend(["k", "ke", "key", "keys", "ab", "b~"].map(String::from));
            let k = Keywords::new(&patterns);
            let text: String = text
                .iter()
                .zip(&upper)
                .map(|(&i, &up)| {
                    let c = alphabet.get(i).copied().unwrap_or(' ');
                    if up { c.to_ascii_uppercase() } else { c }
                })
                .collect();
            let pats: Vec<&str> = patterns.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(found(&k, &text), naive(&pats, &text));
        }
    }
}
