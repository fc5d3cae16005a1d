//! Where a JSON value may sit in a reply: fenced code blocks and balanced
//! brackets in prose, in the order DESIGN.md gives.
//!
//! Order: fenced blocks tagged `json` (any case; `jsonc`/`json5` too) from the
//! last to the first, then untagged fenced blocks holding `{` or `[`, last
//! first, then balanced values in the prose outside fenced blocks, first first.
//! Each scan is a single linear pass using memchr.
//!
//! Note \[Fences\]: a fence is a line whose first non-blank characters are three
//! backticks. An opening fence's info string (its first word) is the tag. A
//! closing fence is a fence line with nothing after its backticks, so
//! `"```bash\n…\n```"` inside a JSON string on one line never closes a block,
//! and a `` ```bash `` line inside an open block is content. A block that never
//! closes runs to the end of the text (a reply cut by a token limit).
//!
//! Note [Bracketed fences]: a model asked for a list sometimes wraps the
//! fenced block itself in the brackets (`[```json\n{…}\n```]`): a fence
//! line may open with one `[` before its backticks and close with `]` after
//! them; the block's content is the candidate (jsonrepair-0250).
//!
//! Note [Bare values]: bare values are searched only outside fenced blocks:
//! json/untagged blocks were already candidates, and blocks in other languages
//! (`bash`, `python`) are code, whose `[ -f x ]` and `${VAR}` are not JSON.

/// How a fenced block was tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Json,
    Untagged,
    Other,
}

/// One fenced block: its tag, its content, and the whole block's extent.
#[derive(Debug, Clone, Copy)]
struct Fence {
    tag: Tag,
    content: (usize, usize),
    block: (usize, usize),
}

/// Where a candidate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The content of a fenced block.
    Fenced,
    /// A balanced value in prose.
    Bare,
}

/// At most this many candidates are tried per text.
///
/// Note [Candidate cap]: a hostile text such as `{}{}{}…` holds one candidate
/// per two bytes; with a schema, each would be validated. Real replies hold a
/// handful, so a cap keeps the work bounded without changing any real outcome.
pub const MAX_CANDIDATES: usize = 64;

/// The candidate spans of `text`, in trial order.
pub fn candidates(text: &str) -> Vec<(Source, &str)> {
    let fences = scan_fences(text);
    let mut out = Vec::new();
    for tag in [Tag::Json, Tag::Untagged] {
        for f in fences.iter().rev().filter(|f| f.tag == tag) {
            let Some(content) = text.get(f.content.0..f.content.1) else {
                continue;
            };
            if tag == Tag::Untagged && memchr::memchr2(b'{', b'[', content.as_bytes()).is_none() {
                continue;
            }
            out.push((Source::Fenced, content));
        }
    }
    let mut pos = 0;
    let bytes = text.as_bytes();
    let mut regions = fences.iter().map(|f| f.block).peekable();
    while out.len() < MAX_CANDIDATES {
        let Some(rest) = bytes.get(pos..) else { break };
        let Some(off) = memchr::memchr2(b'{', b'[', rest) else {
            break;
        };
        let start = pos + off;
        // Skip fenced regions.
        while regions.peek().is_some_and(|r| r.1 <= start) {
            regions.next();
        }
        if let Some(&(rs, re)) = regions.peek() {
            if rs <= start && start < re {
                pos = re;
                continue;
            }
        }
        let end = balanced_end(bytes, start);
        if let Some(s) = text.get(start..end) {
            out.push((Source::Bare, s));
        }
        pos = end.max(start + 1);
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// The searcher for fence backticks, built once: building one per reply
/// (its rare-byte tables and vector setup) cost more than many replies'
/// search.
static FENCE_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"```"));

/// Whether `text` holds a ```` ``` ````, without which it holds no
/// fenced block.
pub fn may_hold_fence(text: &str) -> bool {
    FENCE_FINDER.find(text.as_bytes()).is_some()
}

/// Every fenced block of `text`, in order.
fn scan_fences(text: &str) -> Vec<Fence> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut open: Option<(Tag, usize, usize)> = None; // tag, block start, content start
    let finder = &*FENCE_FINDER;
    let mut pos = 0;
    while let Some(off) = bytes.get(pos..).and_then(|r| finder.find(r)) {
        let p = pos + off;
        let line_start = bytes
            .get(..p)
            .and_then(|b| memchr::memrchr(b'\n', b))
            .map_or(0, |i| i + 1);
        let line_end = bytes
            .get(p..)
            .and_then(|b| memchr::memchr(b'\n', b))
            .map_or(bytes.len(), |i| p + i);
        // See Note [Bracketed fences]: `[```json` opens a fence too.
        let indent_ok = bytes.get(line_start..p).is_some_and(|s| {
            let blank = |s: &[u8]| s.iter().all(|&b| b == b' ' || b == b'\t');
            blank(s)
                || (open.is_none()
                    && memchr::memchr_iter(b'[', s).count() == 1
                    && s.iter().all(|&b| matches!(b, b' ' | b'\t' | b'[')))
        });
        if !indent_ok {
            pos = p + 3;
            continue;
        }
        let info = text
            .get(p..line_end)
            .unwrap_or_default()
            .trim_start_matches('`')
            .trim();
        // An "info string" opening with a bracket is a value on the fence
        // line (`` ````{"a": 1}``` ``), not a language: no fence here.
        if open.is_none() && info.starts_with(['{', '[']) {
            pos = line_end.max(p + 3);
            continue;
        }
        if let Some((tag, block_start, content_start)) = open {
            // See Note [Bracketed fences]: `` ```] `` closes it.
            if info.is_empty() || info == "]" {
                out.push(Fence {
                    tag,
                    content: (content_start, line_start.max(content_start)),
                    block: (block_start, line_end),
                });
                open = None;
            }
        } else {
            let word = info.split_whitespace().next().unwrap_or("");
            let tag = if word.is_empty() {
                Tag::Untagged
            } else if ["json", "jsonc", "json5"]
                .iter()
                .any(|t| word.eq_ignore_ascii_case(t))
            {
                Tag::Json
            } else {
                Tag::Other
            };
            open = Some((tag, line_start, (line_end + 1).min(bytes.len())));
        }
        pos = line_end.max(p + 3);
    }
    if let Some((tag, block_start, content_start)) = open {
        out.push(Fence {
            tag,
            content: (content_start, bytes.len()),
            block: (block_start, bytes.len()),
        });
    }
    out
}

/// The end (exclusive) of the balanced value opening at `start`, or the end of
/// the text when it never closes. Brackets inside strings do not count.
///
/// Note [Quotes in prose]: a `'` opens a string only where a value or key can
/// start (after `{`, `[`, `,` or `:`), so an apostrophe in an unquoted word or
/// a comment (`don't`) does not swallow the rest of the value.
///
/// Note [Bracket scan]: this runs over every bare candidate, valid or not,
/// and looked at each byte through a `match` (a jump table) and a
/// whitespace test. Bytes that are none of `"` `'` `/` and the brackets
/// now cost a table load: whitespace runs are skipped, any other byte
/// only becomes `prev`; strings are skipped a word at a time
/// (`string_end`). `bracket_scan_agrees_with_the_byte_loop` holds it to
/// the byte loop it replaced.
///
/// Note [Vector bracket scan]: the table walk still cost ~30 instructions
/// per whitespace run, plain run or string over the corpus (1.17 million
/// steps, ~45 million instructions, most of `run_chain`'s own). Now the
/// scan jumps from one quote, `/` or bracket to the next, 16 bytes a step
/// (`special_at`, Note [Vector byte masks] in `bytescan`), and `prev`,
/// which only `'` and `/` need, is found when they are met: the last byte
/// of the gap before them that is not whitespace. (Jumping only over the
/// plain runs, whitespace still a stop, paid nothing: most plain runs are
/// a `:` or `,`.) Measured (callgrind, `extract --jsonl --json` on the
/// 20,000-reply bench corpus, output byte-identical, release with thin
/// LTO): 0.897 → 0.886 billion instructions (−1.2%); `run_chain`'s own
/// 57.1 → 47.0 million. Tried and dropped: the stops of 64 bytes found at
/// once (backslashes among them, so that a string's end was found in the
/// same bits) and kept from stop to stop, the scan a function of its own:
/// ~15 instructions a stop, but ~110 per window filled (106,000 fills for
/// 418,000 stops), so `run_chain` with the scan 47.0 → 45.9 million only.
///
/// Note [Bracket scan out of line]: inlined into `run_chain`, the scan
/// kept the text, its length and the depth on the stack (reloaded at
/// every stop), and `string_end`, given the quote as a value, built a
/// vector of it for every string. Now the scan is a function of its own
/// and the quote a constant of `string_end`'s. Measured (callgrind,
/// `extract --jsonl --json` on the 20,000-reply bench corpus, output
/// byte-identical, release with thin LTO): `run_chain` with the scan
/// 47.0 → 42.5 million (29.7 of them the scan's own); the whole run
/// 0.874 → 0.873 billion instructions (two runs each, 0.874 and 0.877
/// against 0.873 and 0.872: the allocator's work across threads moves
/// the whole by ±3 million from run to run).
#[inline(never)]
pub fn balanced_end(bytes: &[u8], start: usize) -> usize {
    let mut depth: usize = 0;
    let mut i = start;
    // The last byte before `from` that the byte loop would have kept as
    // `prev`; bytes from `from` to `i` are plain or whitespace, so `prev`
    // at `i` is the last of them that is not whitespace, or this.
    let mut prev = b'{';
    let mut from = start;
    loop {
        i = special_at(bytes, i);
        let Some(&b) = bytes.get(i) else {
            return bytes.len();
        };
        // Only `'` and `/` depend on `prev`: it is found when they are met.
        let prev_here = || {
            bytes
                .get(from..i)
                .and_then(|gap| gap.iter().rev().find(|c| !c.is_ascii_whitespace()))
                .copied()
                .unwrap_or(prev)
        };
        match b {
            b'"' | b'\'' if b == b'"' || matches!(prev_here(), b'{' | b'[' | b',' | b':') => {
                i = if b == b'"' {
                    string_end::<b'"'>(bytes, i + 1)
                } else {
                    string_end::<b'\''>(bytes, i + 1)
                };
                prev = b;
                from = i;
                continue;
            }
            // Note [Comments in values]: `//` and `/*` start a comment only
            // after whitespace or `{` `[` `,`, so `https://x` is not one.
            b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*'))
                && (i
                    .checked_sub(1)
                    .and_then(|j| bytes.get(j))
                    .is_some_and(u8::is_ascii_whitespace)
                    || matches!(prev_here(), b'{' | b'[' | b',')) =>
            {
                // A comment leaves `prev` as it was before it.
                prev = prev_here();
                let rest = bytes.get(i + 2..).unwrap_or_default();
                i = if bytes.get(i + 1) == Some(&b'/') {
                    memchr::memchr(b'\n', rest).map_or(bytes.len(), |k| i + 2 + k)
                } else {
                    memchr::memmem::find(rest, b"*/").map_or(bytes.len(), |k| i + 2 + k + 2)
                };
                from = i;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if b == b'}' && bytes.get(start) == Some(&b'{') && member_follows(bytes, i + 1)
                    {
                        depth = 1;
                    } else {
                        return i + 1;
                    }
                }
            }
            _ => {}
        }
        prev = b;
        i += 1;
        from = i;
    }
}

/// The index of the first quote, `/` or bracket at or after `i`, or the
/// length of `bytes`: 16 bytes at a time where the target has vector compares
/// (`bytescan::bracket_stops`, Note [Vector bracket scan]).
#[allow(clippy::inline_always)]
#[inline(always)]
fn special_at(bytes: &[u8], mut i: usize) -> usize {
    #[cfg(vector_bytes)]
    while let Some(chunk) = bytes.get(i..i + crate::bytescan::LANES) {
        let Ok(chunk) = <&[u8; crate::bytescan::LANES]>::try_from(chunk) else {
            break;
        };
        let stops = crate::bytescan::bracket_stops(chunk);
        if stops != 0 {
            return i + stops.trailing_zeros() as usize;
        }
        i += crate::bytescan::LANES;
    }
    while bytes.get(i).is_some_and(|&c| !SPECIAL[usize::from(c)]) {
        i += 1;
    }
    i.min(bytes.len())
}

/// The bytes [`balanced_end`] stops at: quotes, `/` and brackets.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        #[allow(clippy::cast_possible_truncation)] // `c` < 256.
        let b = c as u8;
        t[c] = matches!(b, b'"' | b'\'' | b'/' | b'{' | b'[' | b'}' | b']');
        c += 1;
    }
    t
};

/// Note [Extra closers]: an outermost object's `}` followed by `,` and a
/// quoted key (`{"a": 1}, "b": 2}`) closed too early: more members follow, so
/// the value runs on to the next balanced `}` (and the parser drops the
/// extra one, [`crate::Repair::ExtraCloser`]). The key must close
/// within 64 bytes on its line and be followed by `:` or a quoted value, so
/// the look-ahead is bounded. `i` is just past the `}`.
pub fn member_follows(bytes: &[u8], i: usize) -> bool {
    let skip = |mut i: usize| {
        let stop = i + 16;
        while i < stop && bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let i = skip(i);
    if bytes.get(i) != Some(&b',') {
        return false;
    }
    let i = skip(i + 1);
    if bytes.get(i) != Some(&b'"') {
        return false;
    }
    let body = bytes
        .get(i + 1..(i + 65).min(bytes.len()))
        .unwrap_or_default();
    let Some(j) = body.iter().position(|&b| matches!(b, b'"' | b'\\' | b'\n')) else {
        return false;
    };
    if body.get(j) != Some(&b'"') || j == 0 {
        return false;
    }
    matches!(bytes.get(skip(i + 1 + j + 1)), Some(b':' | b'"'))
}

/// The index just past the closing quote `q` of a string whose content starts
/// at `i`, or the end of the text.
///
/// Strings of agent JSON are short: `json`'s word scan (Note [String scans]
/// there) finds their end before a `memchr2` call would have set up. It
/// also stops at control characters, which are stepped over.
fn string_end<const Q: u8>(bytes: &[u8], mut i: usize) -> usize {
    loop {
        i = crate::plain_run_end(bytes, i, Q, Q);
        match bytes.get(i) {
            None => return bytes.len(),
            Some(&c) if c == Q => return i + 1,
            Some(b'\\') => i += 2,
            Some(_) => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn spans(text: &str) -> Vec<(Source, &str)> {
        candidates(text)
    }

    #[test]
    fn candidate_order_table() {
        use Source::{Bare, Fenced};
        let rows: &[(&str, &[(Source, &str)])] = &[
            ("x {\"a\":1} y [2]", &[(Bare, "{\"a\":1}"), (Bare, "[2]")]),
            (
                "```json\n{\"a\":1}\n```\n```JSON\n{\"a\":2}\n```",
                &[(Fenced, "{\"a\":2}\n"), (Fenced, "{\"a\":1}\n")],
            ),
            (
                "```\n{\"u\":1}\n```\n```json\n{\"j\":1}\n```",
                &[(Fenced, "{\"j\":1}\n"), (Fenced, "{\"u\":1}\n")],
            ),
            ("```\nplain\n```\n{\"b\":1}", &[(Bare, "{\"b\":1}")]),
            ("```bash\n[ -f x ]\n```\n", &[]),
            ("intro\n```json\n{\"a\": [1,", &[(Fenced, "{\"a\": [1,")]),
            ("{\"s\": \"a } b\"} tail", &[(Bare, "{\"s\": \"a } b\"}")]),
            ("{'s': 'a } b'} tail", &[(Bare, "{'s': 'a } b'}")]),
            ("{a: don't } x", &[(Bare, "{a: don't }")]),
            ("open { never", &[(Bare, "{ never")]),
            (
                "```json\n{\"r\": \"```bash\\nx\\n```\"}\n```",
                &[(Fenced, "{\"r\": \"```bash\\nx\\n```\"}\n")],
            ),
            ("text ```json not a fence", &[]),
            ("````{\"a\": 1}```", &[(Bare, "{\"a\": 1}")]),
        ];
        for (input, want) in rows {
            assert_eq!(&spans(input), want, "input: {input:?}");
        }
    }

    /// The byte loop [`balanced_end`] replaced (Note [Bracket scan]), kept
    /// as the reference.
    fn byte_loop_end(bytes: &[u8], start: usize) -> usize {
        fn string_end(bytes: &[u8], mut i: usize, q: u8) -> usize {
            while let Some(off) = bytes.get(i..).and_then(|r| memchr::memchr2(q, b'\\', r)) {
                let at = i + off;
                if bytes[at] == b'\\' {
                    i = at + 2;
                } else {
                    return at + 1;
                }
            }
            bytes.len()
        }
        let mut depth: usize = 0;
        let mut i = start;
        let mut prev = b'{';
        while let Some(&b) = bytes.get(i) {
            match b {
                b'"' | b'\'' if b == b'"' || matches!(prev, b'{' | b'[' | b',' | b':') => {
                    i = string_end(bytes, i + 1, b);
                    prev = b;
                    continue;
                }
                b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*'))
                    && (matches!(prev, b'{' | b'[' | b',')
                        || i.checked_sub(1)
                            .and_then(|j| bytes.get(j))
                            .is_some_and(u8::is_ascii_whitespace)) =>
                {
                    let rest = bytes.get(i + 2..).unwrap_or_default();
                    i = if bytes.get(i + 1) == Some(&b'/') {
                        memchr::memchr(b'\n', rest).map_or(bytes.len(), |k| i + 2 + k)
                    } else {
                        memchr::memmem::find(rest, b"*/").map_or(bytes.len(), |k| i + 2 + k + 2)
                    };
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if b == b'}'
                            && bytes.get(start) == Some(&b'{')
                            && member_follows(bytes, i + 1)
                        {
                            depth = 1;
                        } else {
                            return i + 1;
                        }
                    }
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() {
                prev = b;
            }
            i += 1;
        }
        bytes.len()
    }

    fn pieces() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(vec![
                    "{",
                    "}",
                    "[",
                    "]",
                    "\"",
                    "'",
                    "\\",
                    "/",
                    "//",
                    "/*",
                    "*/",
                    ",",
                    ":",
                    " ",
                    "        ",
                    "\n",
                    "\t",
                    "\r",
                    "\x0c",
                    "\x01",
                    "a",
                    "don't",
                    "é",
                    "\"k\": ",
                    "}, \"b\": 2}",
                    "https://x",
                    "1",
                    // Plain runs past a vector chunk (Note [Vector bracket scan]).
                    "abcdefghijklmnopq",
                    "0123456789.-+e_abcdefghijklmnopqrstuvwxyz",
                ])
                .prop_map(|p| p.as_bytes().to_vec()),
                prop::collection::vec(any::<u8>(), 0..4),
            ],
            0..40,
        )
        .prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn bracket_scan_agrees_with_the_byte_loop(b in pieces(), from in 0usize..8) {
            // Bare values start at a bracket.
            for open in [b'{', b'['] {
                let mut text = b.clone();
                let at = from.min(text.len());
                text.insert(at, open);
                prop_assert_eq!(balanced_end(&text, at), byte_loop_end(&text, at), "{:?}", String::from_utf8_lossy(&text));
            }
        }
    }

    #[test]
    fn many_braces_are_capped_and_linear() {
        let s = "{}".repeat(100_000);
        assert_eq!(candidates(&s).len(), MAX_CANDIDATES);
        let s = "{".repeat(1_000_000);
        assert_eq!(candidates(&s).len(), 1);
    }
}
