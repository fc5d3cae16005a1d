//! The one grammar of JSON number literals (RFC 8259, as `serde_json`
//! reads them), shared by the strict readers and the writers.

/// Where a number literal lies: [`number_literal`]'s answer.
#[derive(Debug, Clone, Copy)]
pub struct NumberLiteral {
    /// The index just past the literal.
    pub end: usize,
    /// The integer part's digits, `b[int_start..int_end]` (after any `-`).
    pub int_start: usize,
    /// See `int_start`.
    pub int_end: usize,
    /// No fraction and no exponent.
    pub simple: bool,
}

/// The number literal at `start` of `b` by the grammar `serde_json` reads
/// (RFC 8259: `-`, an integer part without a leading zero, a fraction, an
/// exponent); `None` when none is there or the literal is broken (`-`,
/// `1.`, `1e`, `01`: an error to `serde_json` either way). Shared by the
/// tape reader and the one-pass writer (`extract::minify`), which then
/// decide alike which literals `serde_json` writes as they stand.
#[inline]
pub fn number_literal(b: &[u8], start: usize) -> Option<NumberLiteral> {
    let n = number_parts(b, start)?;
    // `01` is two tokens to `serde_json`: an error either way.
    if b.get(n.end).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some(NumberLiteral {
        end: n.end,
        int_start: n.int_start,
        int_end: n.int_end,
        simple: n.fraction == 0 && n.exponent == 0,
    })
}

/// The parts of a number literal: [`number_parts`]'s answer.
#[derive(Debug, Clone, Copy)]
pub struct NumberParts {
    /// The index just past the literal.
    pub end: usize,
    /// The integer part's digits, `b[int_start..int_end]` (after any `-`).
    pub int_start: usize,
    /// See `int_start`.
    pub int_end: usize,
    /// The digits of the fraction, 0 when there is none (a `.` needs one).
    pub fraction: usize,
    /// The digits of the exponent, 0 when there is none (an `e` needs one).
    pub exponent: usize,
}

/// The number literal at `start` of `b` by RFC 8259's grammar, what follows
/// it unchecked: the one number lexer. [`number_literal`] refuses a digit
/// after it (`01`); the prescan leaves that to its caller, as for any
/// value, and counts the digits for its exactness test (`scan_number`).
/// Inlined into both, so each keeps the loop it had.
#[allow(clippy::inline_always)]
#[inline(always)]
pub fn number_parts(b: &[u8], start: usize) -> Option<NumberParts> {
    let digits_from = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let int_start = i;
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits_from(i + 1),
        _ => return None,
    }
    let int_end = i;
    let mut fraction = 0;
    if b.get(i) == Some(&b'.') {
        let from = i + 1;
        i = digits_from(from);
        if i == from {
            return None;
        }
        fraction = i - from;
    }
    let mut exponent = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let from = i;
        i = digits_from(from);
        if i == from {
            return None;
        }
        exponent = i - from;
    }
    Some(NumberParts {
        end: i,
        int_start,
        int_end,
        fraction,
        exponent,
    })
}
