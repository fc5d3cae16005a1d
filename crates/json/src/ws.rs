//! JSON whitespace (RFC 8259: space, line feed, tab, carriage return):
//! one test of a byte ([`is_ws`]), and two skips built on it, a byte at a
//! time for compact text ([`skip_ws`]: most tokens have no whitespace
//! before them) and a word at a time for pretty text ([`ws_end`]).

/// Whether `c` is JSON whitespace (RFC 8259: space, line feed, tab,
/// carriage return), for the tape reader and the one-pass writer alike.
#[inline]
pub fn is_ws(c: Option<&u8>) -> bool {
    matches!(c, Some(b' ' | b'\n' | b'\t' | b'\r'))
}

/// The index of the first byte at or after `i` that is not JSON whitespace,
/// or `b.len()`.
///
/// Note [Whitespace words]: pretty-printed agent JSON puts a line break and
/// an indentation before most tokens, and the reader skipped them a byte at
/// a time (a fifth of its instructions on the corpus's fenced replies).
/// The four whitespace bytes are tested eight at a time here, each byte
/// exactly (a byte with its high bit set is never taken for one).
pub fn ws_end(b: &[u8], mut i: usize) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let t = w & LOW7;
        // The high bit of `t ^ c + LOW7` is set where a byte is not `c`
        // (no carry leaves a byte); a byte with its own high bit set is
        // not whitespace.
        let not = |c: u8| (t ^ (ONES * u64::from(c))) + LOW7;
        let other = ((not(b' ') & not(b'\n') & not(b'\t') & not(b'\r')) | w) & HIGH;
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while is_ws(b.get(i)) {
        i += 1;
    }
    i
}

/// The index of the first byte at or after `i` that is not JSON whitespace,
/// read a byte at a time (the prescan's and the reply reader's skip).
#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while is_ws(b.get(i)) {
        i += 1;
    }
    i
}
