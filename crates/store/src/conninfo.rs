//! Postgres connection strings, read the way the client reads them: what
//! to hide in messages ([`redact`]) and the TLS options the client does not
//! know (`split_tls`).
//!
//! Note \[One reading of a connection string\]: a password must never reach
//! a message, and the only reliable way to know which characters are the
//! password is to cut the string exactly where the client (`tokio-postgres`
//! 0.7's `Config::from_str`) cuts it. Its two forms:
//! - URL (`postgres://` or `postgresql://`, lower case): the credentials run
//!   to the *first* `@` anywhere in the rest (so `w:se/cretpw@host` is user
//!   `w`, password `se/cretpw`), the password follows the first `:` in them;
//!   the host runs to the next `/` or `?`, the database to the next `?`;
//!   then `key=value` parameters split on `&`, the key percent-decoded
//!   (`pass%77ord=` is `password=`).
//! - `key=value` pairs separated by whitespace, a value either bare (a
//!   backslash escapes the next character) or in single quotes.
//!
//! `pieces` mirrors both cuts, byte for byte, and everything else here
//! works on its output; a unit test checks it against the client's own
//! parser over a table of forms and generated strings. Redaction then
//! hides more than the client reads, never less: the user info up to the
//! last `@` before the first `/` or `?` as well (what an RFC 3986 reader,
//! or a person, takes for the password: `u:p@ss@h`), and everything from a
//! syntax error on (an unterminated quote may hold the rest of a password).

use std::borrow::Cow;
use std::ops::Range;

/// What replaces a secret in messages.
pub const MASK: &str = "***";

/// The parameters whose values are secrets.
fn is_secret(key: &str) -> bool {
    matches!(key, "password" | "sslpassword")
}

/// One `key=value` the client reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    /// The key as the client reads it (percent-decoded in a URL).
    pub key: String,
    /// The value as the client reads it (decoded or unquoted).
    pub value: String,
    /// The raw value in the string (what a message must hide for secrets).
    pub raw_value: Range<usize>,
    /// The whole raw parameter, with one separator, for removing it.
    pub whole: Range<usize>,
}

/// A connection string cut as the client cuts it.
#[derive(Debug, Default)]
pub(crate) struct Cut {
    /// Whether it is the URL form.
    pub url: bool,
    /// The parameters (the URL's password as a `password` piece).
    pub pieces: Vec<Piece>,
    /// Where the client would stop with a syntax error, if it would.
    pub error_at: Option<usize>,
    /// In a URL: where its `?` is (removing every parameter removes it too).
    pub query_at: Option<usize>,
}

fn decode(s: &str) -> String {
    percent_decode(s).into_owned()
}

/// `%XX` decoding as the client's `percent_decode` (invalid escapes kept).
fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// The URL prefix the client recognises, if `s` has one.
fn url_prefix(s: &str) -> Option<usize> {
    ["postgres://", "postgresql://"]
        .iter()
        .find(|p| s.starts_with(**p))
        .map(|p| p.len())
}

/// Cut `s` as the client does (Note \[One reading of a connection string\]).
pub(crate) fn pieces(s: &str) -> Cut {
    match url_prefix(s) {
        Some(start) => cut_url(s, start),
        None => cut_key_values(s),
    }
}

fn cut_url(s: &str, start: usize) -> Cut {
    let mut cut = Cut {
        url: true,
        ..Cut::default()
    };
    let mut at = start;
    // Credentials: up to the first `@` anywhere.
    if let Some(rel) = s[start..].find('@') {
        let creds = start..start + rel;
        if let Some(colon) = s[creds.clone()].find(':') {
            let raw = creds.start + colon + 1..creds.end;
            cut.pieces.push(Piece {
                key: "password".to_owned(),
                value: decode(&s[raw.clone()]),
                raw_value: raw,
                whole: creds.start + colon..creds.end,
            });
        }
        at = creds.end + 1;
    }
    // Host and database: up to the first `?`.
    let Some(rel) = s[at..].find('?') else {
        return cut;
    };
    let mut pos = at + rel + 1;
    cut.query_at = Some(pos - 1);
    while pos < s.len() {
        let Some(eq) = s[pos..].find('=') else {
            cut.error_at = Some(pos);
            return cut;
        };
        let key = decode(&s[pos..pos + eq]);
        let vstart = pos + eq + 1;
        let (vend, next) = match s[vstart..].find('&') {
            Some(amp) => (vstart + amp, vstart + amp + 1),
            None => (s.len(), s.len()),
        };
        cut.pieces.push(Piece {
            key,
            value: decode(&s[vstart..vend]),
            raw_value: vstart..vend,
            whole: pos..next,
        });
        pos = next;
    }
    cut
}

fn cut_key_values(s: &str) -> Cut {
    let mut cut = Cut::default();
    let b = s.as_bytes();
    let ws = |i: usize| s[i..].chars().next().is_some_and(char::is_whitespace);
    let next = |i: usize| i + s[i..].chars().next().map_or(1, char::len_utf8);
    let skip_ws = |mut i: usize| {
        while i < s.len() && ws(i) {
            i = next(i);
        }
        i
    };
    let mut i = 0;
    loop {
        i = skip_ws(i);
        let kstart = i;
        while i < s.len() && !ws(i) && b[i] != b'=' {
            i = next(i);
        }
        if i == kstart {
            if i < s.len() {
                // An `=` with no keyword before it.
                cut.error_at = Some(i);
            }
            return cut;
        }
        let key = s[kstart..i].to_owned();
        i = skip_ws(i);
        if i >= s.len() || b[i] != b'=' {
            cut.error_at = Some(kstart);
            return cut;
        }
        i = skip_ws(i + 1);
        let vstart = i;
        let mut value = String::new();
        if i < s.len() && b[i] == b'\'' {
            i += 1;
            loop {
                match s[i..].chars().next() {
                    None => {
                        cut.error_at = Some(vstart);
                        return cut;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => {
                        i += 1;
                        if let Some(c) = s[i..].chars().next() {
                            value.push(c);
                            i += c.len_utf8();
                        }
                    }
                    Some(c) => {
                        value.push(c);
                        i += c.len_utf8();
                    }
                }
            }
        } else {
            while let Some(c) = s[i..].chars().next() {
                if c.is_whitespace() {
                    break;
                }
                i += c.len_utf8();
                if c == '\\' {
                    if let Some(c2) = s[i..].chars().next() {
                        value.push(c2);
                        i += c2.len_utf8();
                    }
                } else {
                    value.push(c);
                }
            }
            if value.is_empty() {
                cut.error_at = Some(vstart);
                return cut;
            }
        }
        cut.pieces.push(Piece {
            key,
            value,
            raw_value: vstart..i,
            whole: kstart..i,
        });
    }
}

/// Whether `s` is a `key=value` connection string the client can read
/// (`host=db.internal dbname=ops`): its first keyword is one the client
/// knows, so a file named `notes=1.db` stays a file.
pub(crate) fn looks_like_key_values(s: &str) -> bool {
    if url_prefix(s).is_some() || s.contains("://") {
        return false;
    }
    let cut = cut_key_values(s);
    cut.error_at.is_none()
        && cut.pieces.first().is_some_and(|p| {
            matches!(
                p.key.as_str(),
                "host" | "hostaddr" | "port" | "user" | "password" | "dbname" | "sslmode"
            )
        })
}

/// Where the authority starts when `s` is `scheme://…` (RFC 3986 scheme
/// characters), else `None`.
pub(crate) fn scheme_end(s: &str) -> Option<usize> {
    let (head, _) = s.split_once("://")?;
    let mut chars = head.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(head.len() + 3)
}

/// `s` for messages: every secret the client would read in it, and
/// anything a person may have meant as one, replaced by [`MASK`] (Note
/// \[One reading of a connection string\]). The one redaction every message
/// uses (errors, hints, `sessions`, `store copy`). Safe on any string: a
/// file path comes back unchanged.
pub fn redact(s: &str) -> String {
    let start = scheme_end(s);
    // Another scheme (`mysql://`, `http://`) is cut like a Postgres URL:
    // user info to the first `@`, then a query.
    let cut = match start {
        Some(at) => cut_url(s, at),
        None if s.contains('=') => cut_key_values(s),
        None => Cut::default(),
    };
    let mut hide: Vec<Range<usize>> = cut
        .pieces
        .iter()
        .filter(|p| is_secret(&p.key))
        .map(|p| p.raw_value.clone())
        .collect();
    if let Some(e) = cut.error_at {
        hide.push(e..s.len());
    }
    // The user info as far as the last `@` before the path too (what a
    // person or an RFC 3986 reader takes for it: `u:p@ss@h`).
    if let Some(at) = start {
        let rest = &s[at..];
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some(end) = [authority.rfind('@'), rest.find('@')]
            .into_iter()
            .flatten()
            .max()
            && let Some(colon) = rest[..end].find(':')
        {
            hide.push(at + colon + 1..at + end);
        }
    }
    mask(s, hide)
}

/// `s` with each of `ranges` (merged where they touch) replaced by [`MASK`].
fn mask(s: &str, mut ranges: Vec<Range<usize>>) -> String {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    for r in merged {
        out.push_str(&s[pos..r.start]);
        out.push_str(MASK);
        pos = r.end;
    }
    out.push_str(&s[pos..]);
    out
}

/// `s` without the parameters `keys` (which the client would refuse: it
/// knows no `sslrootcert` and no `verify-*` mode), and their values in the
/// order given (the last one of a key wins, as in the client).
pub(crate) fn split_tls<'k>(s: &str, keys: &[&'k str]) -> (String, Vec<(&'k str, String)>) {
    let cut = pieces(s);
    let mut found = Vec::new();
    let mut drop: Vec<Range<usize>> = Vec::new();
    for p in &cut.pieces {
        if let Some(k) = keys.iter().find(|k| **k == p.key) {
            found.retain(|(f, _): &(&str, String)| f != k);
            found.push((*k, p.value.clone()));
            drop.push(p.whole.clone());
        }
    }
    if drop.is_empty() {
        return (s.to_owned(), found);
    }
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    for r in &drop {
        out.push_str(&s[pos..r.start]);
        pos = r.end;
    }
    out.push_str(&s[pos..]);
    if cut.url {
        // `?a=1&sslmode=x` leaves a trailing `&`; a query emptied leaves `?`.
        while out.ends_with('&') {
            out.pop();
        }
        if out.ends_with('?') && cut.query_at.is_some() {
            out.pop();
        }
    }
    (out, found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's reading of the password, if it reads `s` at all.
    fn client_password(s: &str) -> Option<String> {
        let c = s.parse::<postgres::Config>().ok()?;
        c.get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
    }

    const SECRET: &str = "Zq7Secret";

    /// Whether a message shows the secret, plainly or percent-encoded.
    fn shows(msg: &str) -> bool {
        percent_decode(msg).contains(SECRET) || msg.contains(SECRET)
    }

    #[test]
    fn every_form_hides_the_password() {
        let s = SECRET;
        let cases: Vec<(String, &str)> = vec![
            (format!("postgres://u:{s}@h/db"), "postgres://u:***@h/db"),
            (
                format!("postgres://w:se/cret{s}@host/db"),
                "postgres://w:***@host/db",
            ),
            (
                format!("postgres://u:p@ss{s}:w@h:1/db"),
                "postgres://u:***@h:1/db",
            ),
            (
                format!("postgres://u:a%2F{s}@h/db"),
                "postgres://u:***@h/db",
            ),
            (format!("postgres://u:a?b{s}@h/db"), "postgres://u:***@h/db"),
            (format!("postgres://u:a#b{s}@h/db"), "postgres://u:***@h/db"),
            (
                format!("postgresql://u:{s}@[::1]:5433/db"),
                "postgresql://u:***@[::1]:5433/db",
            ),
            (
                format!("postgres://h/db?password={s}&x=1"),
                "postgres://h/db?password=***&x=1",
            ),
            (
                format!("postgres://h/db?pass%77ord={s}"),
                "postgres://h/db?pass%77ord=***",
            ),
            (
                format!("postgres://h/db?sslmode=require&password={s}"),
                "postgres://h/db?sslmode=require&password=***",
            ),
            (
                format!("postgres://h/db?%70assword={s}&a=b"),
                "postgres://h/db?%70assword=***&a=b",
            ),
            ("postgres://h/db?password".to_owned(), "postgres://h/db?***"),
            (format!("postgres://u:{s}@h"), "postgres://u:***@h"),
            (
                format!("host=h password={s} dbname=d"),
                "host=h password=*** dbname=d",
            ),
            (
                format!("host=h password='a b {s}' dbname=d"),
                "host=h password=*** dbname=d",
            ),
            (format!("host=h password = {s}"), "host=h password = ***"),
            (
                format!("host=h password=a\\ {s} dbname=d"),
                "host=h password=*** dbname=d",
            ),
            (
                format!("host=h password='unterminated {s}"),
                "host=h password=***",
            ),
            (format!("mysql://u:{s}@h/db"), "mysql://u:***@h/db"),
            (
                format!("http://alice:{s}@host/x?password={s}"),
                "http://alice:***@host/x?password=***",
            ),
            ("postgres://u@h/db".to_owned(), "postgres://u@h/db"),
            ("agentshape.db".to_owned(), "agentshape.db"),
        ];
        for (input, want) in &cases {
            let got = redact(input);
            assert_eq!(&got, want, "{input}");
            assert!(!shows(&got), "{input} -> {got}");
            if let Some(p) = client_password(input) {
                assert!(
                    p.contains(SECRET) || p == "p" || p == "a",
                    "the client reads {p:?} from {input}"
                );
            }
        }
    }

    /// Generated strings from the characters that matter: whenever the
    /// client reads a password holding the secret, the message hides it.
    #[test]
    fn redaction_agrees_with_the_client_on_generated_strings() {
        // Each slot of a URL or of key=value pairs, filled from the
        // characters that matter; the secret lands in one random slot.
        let bits = [
            "",
            "u",
            ":",
            "@",
            "/",
            "?",
            "&",
            "=",
            "%",
            "%3D",
            "%40",
            "%2F",
            "password",
            "pass%77ord",
            "h",
            "db",
            " ",
            "'",
            "\\",
            "#",
            "[::1]",
            "5432",
            "x",
            "%",
        ];
        let mut rng = fastrand::Rng::with_seed(27);
        let mut read = 0;
        for _ in 0..60_000 {
            let slot = |rng: &mut fastrand::Rng| -> String {
                (0..rng.usize(0..3))
                    .map(|_| bits[rng.usize(0..bits.len())])
                    .collect()
            };
            let url = rng.bool();
            let mut parts: Vec<String> = if url {
                vec![
                    ["postgres://", "postgresql://"][rng.usize(0..2)].to_owned(),
                    slot(&mut rng),
                    ":".to_owned(),
                    slot(&mut rng),
                    "@".to_owned(),
                    slot(&mut rng),
                    "/db?".to_owned(),
                    slot(&mut rng),
                    ["password=", "pass%77ord=", "x="][rng.usize(0..3)].to_owned(),
                    slot(&mut rng),
                ]
            } else {
                vec![
                    "host=h ".to_owned(),
                    slot(&mut rng),
                    ["password=", "password = ", "password='", "dbname="][rng.usize(0..4)]
                        .to_owned(),
                    slot(&mut rng),
                    [" ", "' ", ""][rng.usize(0..3)].to_owned(),
                    slot(&mut rng),
                ]
            };
            let at = rng.usize(1..parts.len());
            // Every bit is ASCII: any index is a char boundary.
            let pos = rng.usize(0..=parts[at].len());
            parts[at].insert_str(pos, SECRET);
            let s: String = parts.concat();
            if let Some(p) = client_password(&s)
                && p.contains(SECRET)
            {
                read += 1;
                let got = redact(&s);
                assert!(!shows(&got), "{s:?} -> {got:?} (client reads {p:?})");
            }
        }
        assert!(read > 500, "only {read} generated strings had a password");
    }

    #[test]
    fn tls_options_are_taken_out_as_the_client_would_read_them() {
        let cases = [
            (
                "postgres://h/db?sslmode=verify-full&sslrootcert=%2Fca.pem",
                "postgres://h/db",
                vec![("sslmode", "verify-full"), ("sslrootcert", "/ca.pem")],
            ),
            (
                "postgres://h/db?connect_timeout=1&sslmode=require&application_name=x",
                "postgres://h/db?connect_timeout=1&application_name=x",
                vec![("sslmode", "require")],
            ),
            (
                "postgres://h/db?application_name=x&sslmode=require",
                "postgres://h/db?application_name=x",
                vec![("sslmode", "require")],
            ),
            (
                "host=h sslmode=verify-ca sslrootcert='/a b/ca.pem' dbname=d",
                "host=h   dbname=d",
                vec![("sslmode", "verify-ca"), ("sslrootcert", "/a b/ca.pem")],
            ),
            ("postgres://h/db", "postgres://h/db", vec![]),
        ];
        for (input, rest, want) in cases {
            let (got_rest, got) = split_tls(input, &["sslmode", "sslrootcert"]);
            assert_eq!(got_rest, rest, "{input}");
            let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (*k, v.as_str())).collect();
            assert_eq!(got, want, "{input}");
            assert!(got_rest.parse::<postgres::Config>().is_ok(), "{got_rest}");
        }
    }

    #[test]
    fn key_value_strings_are_recognised_only_with_a_known_first_key() {
        assert!(looks_like_key_values("host=h dbname=d"));
        assert!(looks_like_key_values("dbname=d password='x y'"));
        assert!(!looks_like_key_values("notes=1.db"));
        assert!(!looks_like_key_values("agentshape.db"));
        assert!(!looks_like_key_values("host=h password='open"));
    }
}
