//! Finishing the value before the token budget runs out.
//!
//! Note [Closing under the budget]: the grammar guarantees the shape of a
//! *finished* answer only. A small greedy model can repeat itself inside a
//! string or an array that the schema does not bound (`SmolLM2-135M` wrote
//! the same sentence until `--max-tokens` cut it in 22 of 87 JSONSchemaBench
//! schemas), and a cut answer is not JSON at all. So the last part of the
//! budget ([`reserve`] of the tokens, [`time_reserve_starts`] of the time
//! limit) is spent closing: among the tokens the grammar allows, only those
//! that close the innermost open thing soonest stay candidates ([`rank`]: the
//! end of generation, then `}` or `]`, then `"`, then `,` or `:`; inside a
//! string, the closing quote), and the model chooses among those as usual.
//! The mask is still applied first, so every token is one the grammar allows
//! and the answer stays schema-valid; what closing changes is only *which*
//! valid answer: a string ends early, an array stops growing, optional keys
//! are left out.
//!
//! Required keys, `minLength` and `minItems` still hold (the mask allows no
//! closer before them), so a schema with many required keys can need more
//! than the reserve. An answer cut at the limit all the same is rolled back
//! (matcher and KV cache) to an earlier point and closed from there
//! ([`close_from`]: three tries, the last closing from the first token),
//! keeping what came before. Only a schema whose *shortest* valid value is
//! longer than the limit is still cut (exit 3, `max_tokens`). The output says
//! how many tokens of the answer were sampled closing and how many were
//! rolled back (`timing.closing_tokens`, `timing.rewound_tokens`), so a
//! shortened answer is never mistaken for the model's own; `--live` shows a
//! rollback as a warning followed by the partial object of what was kept.

/// How many of `limit` tokens are kept for closing: a quarter, at least one.
/// A quarter leaves the model three quarters of the budget for content and,
/// with the default limit, hundreds of tokens to close in: far more than the
/// structure of any schema in the JSONSchemaBench sample needs.
#[must_use]
pub fn reserve(limit: u64) -> u64 {
    (limit / 4).max(1)
}

/// After how many tokens try `attempt` (0, 1, 2) starts closing: at the
/// [`reserve`], then at half that point, then from the first token; `None`
/// when no try is left. A try cut at `limit` is sampled again from that
/// point (the tokens before it are kept), so a schema whose required keys
/// alone outgrow the reserve still ends valid, and only such answers pay
/// for the extra tries.
#[must_use]
pub fn close_from(limit: u64, attempt: u32) -> Option<u64> {
    let first = limit.saturating_sub(reserve(limit));
    match attempt {
        0 => Some(first),
        1 => Some(first / 2),
        2 => Some(0),
        _ => None,
    }
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
/// value is complete.
///
/// The class comes first: the end of generation; a token that only closes
/// objects or arrays; one that closes and goes on (`},{`); a quote; `,` or
/// `:`; anything else. Inside a string only a quote closes (a `}` there is
/// text). Within a class, less new content wins (`:"` before `:">`), except
/// for plain text inside a string, which can only be there because the
/// string may not end yet (`minLength`, a pattern): there more text per
/// token gets there sooner.
#[must_use]
pub fn rank(piece: &[u8], eog: bool, in_string: bool) -> u8 {
    let structural = |b: &u8| matches!(b, b'{' | b'}' | b'[' | b']' | b'"' | b':' | b',');
    let only_closers = |rest: &[u8]| rest.iter().all(|b| matches!(b, b'}' | b']'));
    let class: u8 = match piece.split_first() {
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
    };
    let content = piece.iter().filter(|b| !structural(b)).count().min(31);
    let content = u8::try_from(content).unwrap_or(31);
    let tie = if in_string && class == 0 {
        content
    } else {
        31 - content
    };
    class * 32 + tie
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
        // (piece, eog, in_string) of each row outranks the next row's.
        let order: &[(&[u8], bool, bool)] = &[
            (b"", true, false),
            (b"}", false, false),
            (b"]}", false, false),
            (b"},{", false, false),
            (b"],", false, false),
            (b"\"", false, false),
            (b"\"}", false, false),
            (b"\"ab", false, false),
            (b",", false, false),
            (b":\"", false, false),
            (b":\">", false, false),
            (b"1", false, false),
            (b"12", false, false),
            (b" the", false, false),
        ];
        for w in order.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (ra, rb) = (rank(a.0, a.1, a.2), rank(b.0, b.1, b.2));
            assert!(
                ra >= rb,
                "{:?} ({ra}) should outrank {:?} ({rb})",
                String::from_utf8_lossy(a.0),
                String::from_utf8_lossy(b.0)
            );
        }
        // Inside a string: the quote first, then the longest text.
        let order: &[&[u8]] = &[b"\"", b"\"}", b"\",", b"\",\"", b"abcdef", b"abc", b"}"];
        for w in order.windows(2) {
            let (ra, rb) = (rank(w[0], false, true), rank(w[1], false, true));
            assert!(
                ra >= rb,
                "in a string {:?} ({ra}) should outrank {:?} ({rb})",
                String::from_utf8_lossy(w[0]),
                String::from_utf8_lossy(w[1])
            );
        }
        let r = |p: &[u8]| rank(p, false, false);
        assert!(rank(b"", true, false) > r(b"}"));
        assert!(r(b"}") > r(b"},{") && r(b"},{") > r(b"\"") && r(b"\"") > r(b","));
        assert!(r(b":\"") > r(b":\">") && r(b",") > r(b"1") && r(b"1") > r(b"12"));
        assert!(rank(b"\"", false, true) > rank(b"}", false, true));
        assert!(rank(b"abcdef", false, true) > rank(b"abc", false, true));
        assert_eq!(rank(b"", true, true), rank(b"", false, true));
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
    fn each_try_closes_sooner_and_there_are_three() {
        let table = [
            (256, [Some(192), Some(96), Some(0), None]),
            (16, [Some(12), Some(6), Some(0), None]),
            (1, [Some(0), Some(0), Some(0), None]),
            (0, [Some(0), Some(0), Some(0), None]),
        ];
        for (limit, want) in table {
            let got: Vec<_> = (0..4).map(|a| close_from(limit, a)).collect();
            assert_eq!(got, want, "{limit}");
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
