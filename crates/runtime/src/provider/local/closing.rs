//! Finishing the value before the token budget runs out.
//!
//! Note [Closing under the budget]: the grammar guarantees the shape of a
//! *finished* answer only. A small greedy model can repeat itself inside a
//! string or an array that the schema does not bound (`SmolLM2-135M` wrote
//! the same sentence until `--max-tokens` cut it in 22 of 87 JSONSchemaBench
//! schemas), and a cut answer is not JSON at all. So the last part of the
//! budget ([`reserve`] of the tokens, [`time_reserve_starts`] of the time
//! limit) is spent closing: among the tokens the grammar allows,
//! only those that close the innermost open thing soonest stay candidates
//! ([`rank`]: the end of generation, then `}` or `]`, then `"`, then `,` or
//! `:`; inside a string, the closing quote), and the model chooses among those as usual. The mask is still applied
//! first, so every token is one the grammar allows and the answer stays
//! schema-valid; what the closing changes is only *which* valid answer: a
//! string ends early, an array stops growing, optional keys are left out.
//! Required keys, `minLength` and `minItems` are still honoured (the mask
//! allows no closer before them), so a schema whose shortest valid value is
//! longer than the reserve can still be cut; the output reports how many
//! tokens were sampled closing (`timing.closing_tokens`) so a shortened answer
//! is never mistaken for the model's own.

/// How many of `limit` tokens are kept for closing: a quarter, at least one.
/// A quarter leaves the model three quarters of the budget for content and,
/// with the default limit, hundreds of tokens to close in: far more than the
/// structure of any schema in the JSONSchemaBench sample needs.
#[must_use]
pub fn reserve(limit: u64) -> u64 {
    (limit / 4).max(1)
}

/// When closing starts under a time limit: after three quarters of it, for
/// the same reason as [`reserve`] (a reply stopped by `--timeout` is as cut
/// as one stopped by `--max-tokens`).
#[must_use]
pub fn time_reserve_starts(timeout: std::time::Duration) -> std::time::Duration {
    timeout.saturating_sub(timeout / 4)
}

/// How soon a token closes what is open, from its text and whether the
/// answer so far ends inside a string: higher closes sooner. `eog` is the
/// model's end-of-generation token, which the mask allows only where the
/// value is complete. Inside a string only a `"` closes (a `}` there is
/// text).
#[must_use]
pub fn rank(piece: &[u8], eog: bool, in_string: bool) -> u8 {
    // A token that only closes beats one that closes and then opens or
    // continues something (`}` before `},{`).
    let only_closers = |rest: &[u8]| rest.iter().all(|b| matches!(b, b'}' | b']'));
    match piece.split_first() {
        _ if eog && !in_string => 5,
        Some((b'"', rest)) if in_string => {
            if only_closers(rest) {
                4
            } else {
                3
            }
        }
        _ if in_string => 0,
        Some((b'}' | b']', rest)) => {
            if only_closers(rest) {
                4
            } else {
                3
            }
        }
        Some((b'"', _)) => 2,
        Some((b',' | b':', _)) => 1,
        _ => 0,
    }
}

/// Whether JSON text written so far ends inside a string, fed piece by
/// piece. Exact for the compact JSON the grammar emits; outside a string
/// nothing but `"` matters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lexer {
    in_string: bool,
    escaped: bool,
}

impl Lexer {
    /// Read `bytes`.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if !self.in_string {
                self.in_string = b == b'"';
            } else if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
        }
    }

    /// Whether the text so far ends inside a string.
    #[must_use]
    pub fn in_string(self) -> bool {
        self.in_string
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closers_outrank_content() {
        let table: &[(&[u8], bool, bool, u8)] = &[
            (b"", true, false, 5),
            (b"}", false, false, 4),
            (b"]}", false, false, 4),
            (b"},{", false, false, 3),
            (b"],", false, false, 3),
            (b"\"", false, false, 2),
            (b"\"}", false, false, 2),
            (b",", false, false, 1),
            (b":", false, false, 1),
            (b"the", false, false, 0),
            (b" \"", false, false, 0),
            (b"{", false, false, 0),
            (b"[", false, false, 0),
            (b"1", false, false, 0),
            (b"", false, false, 0),
            // Inside a string only the quote closes.
            (b"\"", false, true, 4),
            (b"\"}", false, true, 4),
            (b"\",", false, true, 3),
            (b"}", false, true, 0),
            (b"]", false, true, 0),
            (b",", false, true, 0),
            (b"the", false, true, 0),
            (b"", true, true, 0),
        ];
        for &(piece, eog, in_string, want) in table {
            assert_eq!(
                rank(piece, eog, in_string),
                want,
                "{:?} in_string={in_string}",
                String::from_utf8_lossy(piece)
            );
        }
    }

    #[test]
    fn the_lexer_knows_when_a_string_is_open() {
        let table: &[(&[&str], bool)] = &[
            (&[], false),
            (&["{\"a"], true),
            (&["{\"a\":"], false),
            (&["{\"a\":\"x\\", "\"", "y"], true),
            (&["{\"a\":\"x\\\\", "\""], false),
            (&["[\"}", "]"], true),
            (&["[\"}", "\"]"], false),
            (&["\"\\u00", "22"], true),
        ];
        for (pieces, want) in table {
            let mut l = Lexer::default();
            for p in *pieces {
                l.feed(p.as_bytes());
            }
            assert_eq!(l.in_string(), *want, "{pieces:?}");
        }
    }

    #[test]
    fn closing_starts_at_three_quarters_of_the_time_limit() {
        use std::time::Duration;
        for (t, want) in [(0, 0), (4, 3), (120_000, 90_000)] {
            assert_eq!(
                time_reserve_starts(Duration::from_millis(t)),
                Duration::from_millis(want)
            );
        }
    }

    #[test]
    fn the_reserve_is_a_quarter_and_never_zero() {
        for (limit, want) in [(0, 1), (1, 1), (3, 1), (16, 4), (256, 64), (512, 128)] {
            assert_eq!(reserve(limit), want, "{limit}");
        }
    }
}
