//! How large a rule may be before it reaches the `cel` parser.
//!
//! Note [Rule size limits]: the `cel` crate's parser, its interpreter, and
//! our own walks over a compiled rule (the meters, the reach, the native
//! evaluator, and dropping or cloning the AST) all recurse once per level
//! of the rule's syntax tree. A long `+` chain, a member chain
//! `self.a.a.…`, a run of `!` or `-`, or deeply nested brackets made the
//! tree as deep as the rule is long, and a few kilobytes of rule overflowed
//! the stack (the process aborts; a Python thread segfaults). 100,000
//! nested parentheses made the parser's own error message panic. So before
//! a rule is parsed, one pass over its text measures three things and
//! refuses the rule (a schema error) when one is past its limit:
//!
//! - its length, [`MAX_RULE_BYTES`];
//! - its bracket nesting, [`MAX_RULE_NESTING`]: `(`, `[` and `{` open a
//!   level, so a call `f(` or a macro `x.all(` is one level;
//! - its operators, [`MAX_RULE_OPERATORS`]: every binary or unary operator
//!   (`+ - * / % ! == != < <= > >= && || in ?`), every member link `.`
//!   and every index `[`, counted over the whole rule (not per level).
//!
//! Every level of the syntax tree comes from an operator, a link, or a
//! bracket, so the tree is at most about `operators + 4 × nesting` deep
//! (a macro adds a few levels inside its parentheses). String literals and
//! `//` comments are skipped exactly as the CEL lexer reads them; a string
//! the lexer would not read whole (not closed, a newline in a one-line
//! string, an unknown escape) is refused here too, since the lexer would
//! read the rest of it as code.
//!
//! Where the stack ran out, in a debug build on a 2 MiB thread (a tokio
//! worker's or a Python thread's stack): at 12 nested parentheses (the
//! parser), 27 `+` terms (the interpreter), 52 indexes, 905 member links;
//! in a release build at 545 `+` terms (the parser refused 96 nested
//! expressions, its own limit, before its stack ran out). The debug
//! build's are below what a rule may reasonably need, so the limits are set
//! for rules (the longest in the examples is 88 bytes with 7 operators and 2
//! levels; the limits allow 18 times the operators and 8 times the
//! nesting), and every rule runs on a stack segment sized for it (Note
//! [Stack for rules]): the deepest accepted rules compile and evaluate on
//! a 256 KiB thread (`deepest_accepted_rules_run_on_a_small_stack`).

/// The longest rule, in bytes of its source (Note [Rule size limits]).
pub const MAX_RULE_BYTES: usize = 8192;

/// The deepest bracket nesting of a rule (Note [Rule size limits]).
pub const MAX_RULE_NESTING: usize = 16;

/// The most operators, member links and indexes in one rule (Note [Rule
/// size limits]).
pub const MAX_RULE_OPERATORS: usize = 128;

/// What one pass over a rule's text found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Measure {
    /// The deepest bracket nesting.
    pub(super) nesting: usize,
    /// Operators, member links and indexes.
    pub(super) operators: usize,
}

/// The rule's size when it is within the limits; else why it is refused,
/// in words that end a sentence starting with "is ...".
pub(super) fn check(source: &str) -> Result<Measure, String> {
    let bytes = source.len();
    if bytes > MAX_RULE_BYTES {
        return Err(format!(
            "too long: {bytes} bytes (at most {MAX_RULE_BYTES} per rule)"
        ));
    }
    let m = measure(source)?;
    if m.nesting > MAX_RULE_NESTING {
        return Err(format!(
            "too deep: {} nested brackets (at most {MAX_RULE_NESTING} per rule)",
            m.nesting
        ));
    }
    if m.operators > MAX_RULE_OPERATORS {
        return Err(format!(
            "too large: {} operators and member links (at most {MAX_RULE_OPERATORS} per rule)",
            m.operators
        ));
    }
    Ok(m)
}

/// The start of a refused rule, on one line, for its error message: a
/// refused rule may be kilobytes long.
pub(super) fn excerpt(source: &str) -> String {
    const MAX_CHARS: usize = 40;
    let head: String = source.chars().take(4 * MAX_CHARS).collect();
    let line = head.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = line.chars().take(MAX_CHARS).collect();
    if cut.len() < line.len() || head.len() < source.len() {
        cut.push('…');
    }
    cut
}

/// One pass over `source` (Note [Rule size limits]); `Err` for a string
/// literal the CEL lexer would not read whole.
pub(super) fn measure(source: &str) -> Result<Measure, String> {
    let b = source.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut m = Measure {
        nesting: 0,
        operators: 0,
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let next = b.get(i + 1).copied();
        match c {
            b'/' if next == Some(b'/') => {
                while b.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                i = string_end(b, i, false)?;
                continue;
            }
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                let start = i;
                while b.get(i).is_some_and(|&c| word(c)) {
                    i += 1;
                }
                let w = &b[start..i];
                let quoted = matches!(b.get(i), Some(b'"' | b'\''));
                // The lexer's string prefixes: `r` (raw), `b` (bytes), `br`.
                match w {
                    b"r" | b"R" | b"br" | b"bR" | b"Br" | b"BR" if quoted => {
                        i = string_end(b, i, true)?;
                    }
                    b"b" | b"B" if quoted => i = string_end(b, i, false)?,
                    b"in" => m.operators += 1,
                    _ => {}
                }
                continue;
            }
            // A number (`1`, `0x1f`, `2u`, `1e5`) is never a string prefix.
            b'0'..=b'9' => {
                while b.get(i).is_some_and(|&c| word(c)) {
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                m.nesting = m.nesting.max(depth);
                if c == b'[' {
                    m.operators += 1;
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'=' | b'<' | b'>' | b'!' | b'&' | b'|' => {
                m.operators += 1;
                // `==`, `!=`, `<=`, `>=`, `&&`, `||` are one operator each.
                if next == Some(b'=') || (c == b'&' || c == b'|') && next == Some(c) {
                    i += 1;
                }
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'?' | b'.' => m.operators += 1,
            _ => {}
        }
        i += 1;
    }
    Ok(m)
}

/// Where the string literal opening at `b[at]` (a quote) ends, read as the
/// CEL lexer's `STRING` rule reads it: one-line strings stop at a newline,
/// escapes are checked unless `raw`, and `'''`/`"""` open a long string.
fn string_end(b: &[u8], at: usize, raw: bool) -> Result<usize, String> {
    let unclosed = || format!("not readable: the string literal at byte {at} is not closed");
    let q = b[at];
    let triple = b.get(at + 1) == Some(&q) && b.get(at + 2) == Some(&q);
    let mut i = if triple { at + 3 } else { at + 1 };
    loop {
        let Some(&c) = b.get(i) else {
            return Err(unclosed());
        };
        if triple {
            if c == q && b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
                return Ok(i + 3);
            }
        } else if c == q {
            return Ok(i + 1);
        } else if c == b'\n' || c == b'\r' {
            return Err(unclosed());
        }
        if c == b'\\' && !raw {
            i = escape_end(b, i).ok_or_else(|| {
                format!("not readable: the escape sequence at byte {i} is not one CEL knows")
            })?;
        } else {
            i += 1;
        }
    }
}

/// The end of the escape sequence at `b[at]` (a backslash), as the CEL
/// lexer's `ESC_SEQ` reads it.
fn escape_end(b: &[u8], at: usize) -> Option<usize> {
    let digits = |from: usize, n: usize, ok: fn(&u8) -> bool| {
        (from..from + n)
            .all(|j| b.get(j).is_some_and(ok))
            .then_some(from + n)
    };
    match *b.get(at + 1)? {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`' => {
            Some(at + 2)
        }
        b'0'..=b'3' => digits(at + 2, 2, |c| (b'0'..=b'7').contains(c)),
        b'x' | b'X' => digits(at + 2, 2, u8::is_ascii_hexdigit),
        b'u' => digits(at + 2, 4, u8::is_ascii_hexdigit),
        b'U' => digits(at + 2, 8, u8::is_ascii_hexdigit),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(rule: &str) -> (usize, usize) {
        let m = measure(rule).unwrap();
        (m.nesting, m.operators)
    }

    /// Operators, links and brackets are counted where the lexer sees
    /// code, and never inside strings or comments.
    #[test]
    fn rules_are_measured_as_the_lexer_reads_them() {
        for (rule, want) in [
            ("true", (0, 0)),
            ("self.a + self.b == 3", (0, 4)),
            ("self.x in ['a', 'b']", (1, 3)),
            (
                "size(self.a) >= 2 && !(self.b != 1) || self.c[0] < -1",
                (1, 11),
            ),
            ("a ? b : c", (0, 1)),
            ("'(((+++)))' == \"[[[.\"", (0, 1)),
            ("r'\\q(((' == b'x' && br\"\\(\" == R'''a'b(('''", (0, 3)),
            ("'''a\n'b'(''' + \"\"\"\\\"(\"\"\"", (0, 1)),
            ("self.a // a comment ((( with ' a quote\n+ 1", (0, 2)),
            ("1.5e3 + 0x1f + 2u", (0, 3)),
            ("rb'x' + inx.in_", (0, 2)),
            ("x.all(y, y in [1, [2, {3: 4}]])", (4, 4)),
        ] {
            assert_eq!(ops(rule), want, "{rule}");
        }
    }

    /// A string the lexer would not read whole is refused: the lexer would
    /// read the rest of the rule as code, unmeasured.
    #[test]
    fn unreadable_strings_are_refused() {
        for rule in [
            "'abc",
            "'abc\n((('",
            "\"a\rb\"",
            "'\\q((('",
            "'\\x4'",
            "'\\u12'",
            "'''abc''",
            "r'abc",
            "b\"\\8\"",
        ] {
            let e = measure(rule).unwrap_err();
            assert!(e.starts_with("not readable: "), "{rule}: {e}");
        }
        for rule in [
            "'\\x4a\\u00e9\\U0001F600\\012\\`'",
            "r'\\q'",
            "''",
            "''''''",
        ] {
            assert!(measure(rule).is_ok(), "{rule}");
        }
    }

    #[test]
    fn each_limit_is_checked_with_its_number() {
        let ok = |r: &str| check(r).is_ok();
        let plus = |n: usize| vec!["1"; n].join("+");
        assert!(ok(&plus(MAX_RULE_OPERATORS + 1)));
        let e = check(&plus(MAX_RULE_OPERATORS + 2)).unwrap_err();
        let want = format!("{} operators", MAX_RULE_OPERATORS + 1);
        assert!(e.contains(&want), "{e}");
        assert!(e.contains(&format!("at most {MAX_RULE_OPERATORS}")), "{e}");
        let nest = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert!(ok(&nest(MAX_RULE_NESTING)));
        let e = check(&nest(MAX_RULE_NESTING + 1)).unwrap_err();
        let want = format!("{} nested brackets", MAX_RULE_NESTING + 1);
        assert!(e.contains(&want), "{e}");
        assert!(e.contains(&format!("at most {MAX_RULE_NESTING}")), "{e}");
        let long = format!("'{}'", "x".repeat(MAX_RULE_BYTES - 2));
        assert!(ok(&long));
        let e = check(&format!("{long} ")).unwrap_err();
        let want = format!("{} bytes", MAX_RULE_BYTES + 1);
        assert!(e.contains(&want), "{e}");
        assert!(e.contains(&format!("at most {MAX_RULE_BYTES}")), "{e}");
    }
}
