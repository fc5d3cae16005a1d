//! Go RE2 patterns (gitleaks' syntax) read by the Rust `regex` crate.
//!
//! Note \[Go regex syntax\]: the two syntaxes agree except where Rust is
//! Unicode-aware or has operators Go lacks. To keep each rule's Go meaning:
//! `\w \W \d \D \s \S` become their ASCII classes (Go's are ASCII), `\b \B`
//! ASCII word boundaries (which also keeps the lazy DFA on non-ASCII text:
//! it gives up on Unicode word boundaries), `\<` `\>` the literal characters
//! (Rust: word boundaries), a `{` that does not start a repetition a literal
//! `{` (Go: literal, Rust: error), and inside a class a `[` that does not start
//! `[:name:]` a literal (Rust: nested class) as are doubled `&&` `--` `~~`
//! (Rust: set operations). Everything else is passed through unchanged.

/// `[0-9A-Za-z_]` and friends: Go's ASCII Perl classes.
fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        'd' => "[0-9]",
        'D' => "[^0-9]",
        's' => r"[\t\n\x0C\r ]",
        'S' => r"[^\t\n\x0C\r ]",
        _ => return None,
    })
}

/// Is `rest` (just after a `{`) a repetition `n}`, `n,}` or `n,m}`? Returns its length.
fn repetition_len(rest: &[char]) -> Option<usize> {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < rest.len() && rest[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return None;
    }
    if rest.get(i) == Some(&',') {
        i += 1;
        digits(&mut i);
    }
    (rest.get(i) == Some(&'}')).then_some(i + 1)
}

/// Translates a Go RE2 pattern into Rust `regex` syntax with the same meaning.
pub(crate) fn go_to_rust(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    // Position just after the class's `[` or `[^`: a `]` there is literal.
    let mut class_start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let e = chars[i + 1];
                i += 2;
                if let Some(class) = perl_class(e) {
                    out.push_str(class);
                } else if (e == 'b' || e == 'B') && !in_class {
                    out.push_str(if e == 'b' { r"(?-u:\b)" } else { r"(?-u:\B)" });
                } else if e == '<' || e == '>' {
                    out.push(e);
                } else {
                    out.push('\\');
                    out.push(e);
                }
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = i;
                continue;
            }
            '[' if in_class => {
                if chars.get(i + 1) == Some(&':') {
                    if let Some(at) = (i + 2..chars.len().saturating_sub(1))
                        .find(|&j| chars[j] == ':' && chars[j + 1] == ']')
                    {
                        out.extend(&chars[i..at + 2]);
                        i = at + 2;
                        continue;
                    }
                }
                out.push_str(r"\[");
            }
            ']' if in_class && i != class_start => {
                in_class = false;
                out.push(']');
            }
            '&' | '-' | '~' if in_class && chars.get(i + 1) == Some(&c) => {
                out.push('\\');
                out.push(c);
                out.push('\\');
                out.push(c);
                i += 2;
                continue;
            }
            '{' if !in_class => match repetition_len(&chars[i + 1..]) {
                Some(len) => {
                    out.extend(&chars[i..=i + len]);
                    i += len + 1;
                    continue;
                }
                None => out.push_str(r"\{"),
            },
            '}' if !in_class => out.push_str(r"\}"),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::go_to_rust;

    #[test]
    fn perl_classes_and_boundaries_are_ascii_as_in_go() {
        assert_eq!(go_to_rust(r"\bab\w+"), r"(?-u:\b)ab[0-9A-Za-z_]+");
        assert_eq!(go_to_rust(r"[\w.-]{3}"), r"[[0-9A-Za-z_].-]{3}");
        let re = regex::Regex::new(&go_to_rust(r"\b\w+\b")).unwrap();
        assert_eq!(re.find("é abc").unwrap().as_str(), "abc");
    }

    #[test]
    fn go_literals_stay_literals() {
        assert_eq!(
            go_to_rust(r"^\$(?:\d+|{\d+})$"),
            r"^\$(?:[0-9]+|\{[0-9]+\})$"
        );
        assert_eq!(go_to_rust(r"\<a\>"), "<a>");
        assert_eq!(go_to_rust(r"[[:alnum:]_[]"), r"[[:alnum:]_\[]");
        assert_eq!(go_to_rust(r"[]a]"), r"[]a]");
        assert_eq!(go_to_rust(r"[a--b]"), r"[a\-\-b]");
        for p in [
            r"^\$(?:\d+|{\d+})$",
            r"[[:alnum:]_[]",
            r"[a--b]",
            r"x{2,}y{,3}",
        ] {
            regex::Regex::new(&go_to_rust(p)).unwrap();
        }
        // Go reads `{,3}` as literal text.
        let re = regex::Regex::new(&go_to_rust("y{,3}")).unwrap();
        assert!(re.is_match("y{,3}") && !re.is_match("yyy"));
    }
}
