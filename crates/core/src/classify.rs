//! Error-text classification and the text tests behind the heuristics.
//!
//! Seed 004's contract, shared by every decoder: error text is cut at 4096
//! characters, then classified by keyword, `rate_limit` before `auth`, else
//! `api`. The background-task phrase test is seed 004's regex
//! `\b(waiting on|still waiting|continuing|in progress|in the background)\b`,
//! written by hand (no regex crate in the core).
//!
//! It sits below both of its users, the decoders and the summary builder
//! (which `decode` drives), so neither imports the other through it; it
//! is still reachable as `decode::classify`.

use crate::facts::ErrorCategory;

/// Error text longer than this many characters (Unicode scalar values, as
/// Python's `len`) is cut.
pub const ERROR_TEXT_MAX_CHARS: usize = 4096;

/// The suffix appended to cut error text.
pub const TRUNCATION_SUFFIX: &str = " ... (truncated)";

/// The error text of an `is_error` result that carried no `result` string.
pub const NO_DETAIL: &str = "API error (no detail)";

/// Cut `text` to [`ERROR_TEXT_MAX_CHARS`] characters plus [`TRUNCATION_SUFFIX`].
pub fn truncate_error(text: &str) -> String {
    match text.char_indices().nth(ERROR_TEXT_MAX_CHARS) {
        Some((cut, _)) => {
            let mut out = String::with_capacity(cut + TRUNCATION_SUFFIX.len());
            out.push_str(text.get(..cut).unwrap_or(text));
            out.push_str(TRUNCATION_SUFFIX);
            out
        }
        None => text.to_owned(),
    }
}

const RATE_LIMIT_KEYWORDS: &[&str] = &["429", "rate limit", "rate-limit"];
const AUTH_KEYWORDS: &[&str] = &[
    "401",
    "403",
    "unauthorized",
    "authentication",
    "auth error",
    "anthropic_api_key",
];

/// The category the error text's keywords name, if any (case-insensitive;
/// `rate_limit` is tested before `auth`, so text naming both is a rate limit).
pub fn keyword_category(text: &str) -> Option<ErrorCategory> {
    if RATE_LIMIT_KEYWORDS
        .iter()
        .any(|k| contains_ignore_ascii_case(text, k))
    {
        Some(ErrorCategory::RateLimit)
    } else if AUTH_KEYWORDS
        .iter()
        .any(|k| contains_ignore_ascii_case(text, k))
    {
        Some(ErrorCategory::Auth)
    } else {
        None
    }
}

/// Seed 004's classification: keywords, else `api`.
pub fn classify_error_text(text: &str) -> ErrorCategory {
    keyword_category(text).unwrap_or(ErrorCategory::Api)
}

/// Whether `haystack` contains the ASCII `needle`, ignoring ASCII case.
pub fn contains_ignore_ascii_case(haystack: &str, needle: &str) -> bool {
    find_ignore_ascii_case(haystack.as_bytes(), needle.as_bytes(), 0).is_some()
}

fn find_ignore_ascii_case(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    let last = hay.len().checked_sub(needle.len())?;
    (from..=last).find(|&i| {
        hay.get(i..i + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

const BACKGROUND_PHRASES: &[&str] = &[
    "waiting on",
    "still waiting",
    "continuing",
    "in progress",
    "in the background",
];

/// Seed 004's background-task regex:
/// `\b(waiting on|still waiting|continuing|in progress|in the background)\b`,
/// case-insensitive.
///
/// Note [Hand-written word boundary]: Python's `\b` on `str` is Unicode-aware:
/// a word character is a letter, a digit or `_` in any script. A phrase
/// matches when the character before it (if any) and the character after it
/// (if any) are not word characters; [`char::is_alphanumeric`] plus `_`
/// stands in for Python's `\w`. Every occurrence is tried, so
/// "continuingly ... continuing." still matches on the second one.
pub fn has_background_phrase(text: &str) -> bool {
    // ASCII lowercasing keeps byte offsets, so positions found in `lower` are
    // valid in `text`; the phrases are ASCII. `memmem` keeps this linear and
    // vectorized: the text can be a whole run's output.
    let lower = text.to_ascii_lowercase();
    BACKGROUND_PHRASES.iter().any(|phrase| {
        memchr::memmem::find_iter(lower.as_bytes(), phrase.as_bytes()).any(|at| {
            let end = at + phrase.len();
            let before_ok = text
                .get(..at)
                .and_then(|s| s.chars().next_back())
                .is_none_or(|c| !is_word_char(c));
            let after_ok = text
                .get(end..)
                .and_then(|s| s.chars().next())
                .is_none_or(|c| !is_word_char(c));
            before_ok && after_ok
        })
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_classification_table() {
        let cases: &[(&str, ErrorCategory)] = &[
            (
                "API Error: Request rejected (429)",
                ErrorCategory::RateLimit,
            ),
            ("Rate Limit exceeded", ErrorCategory::RateLimit),
            ("rate-limit hit", ErrorCategory::RateLimit),
            ("401 Unauthorized and 429", ErrorCategory::RateLimit),
            ("HTTP 401", ErrorCategory::Auth),
            ("403 Forbidden", ErrorCategory::Auth),
            ("Unauthorized", ErrorCategory::Auth),
            (
                "authentication_error: invalid x-api-key",
                ErrorCategory::Auth,
            ),
            ("Auth Error", ErrorCategory::Auth),
            ("Set ANTHROPIC_API_KEY", ErrorCategory::Auth),
            ("set anthropic_api_key", ErrorCategory::Auth),
            ("529 overloaded_error", ErrorCategory::Api),
            ("", ErrorCategory::Api),
        ];
        for (text, want) in cases {
            assert_eq!(classify_error_text(text), *want, "{text}");
        }
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let long = "é".repeat(5000);
        let cut = truncate_error(&long);
        assert_eq!(
            cut.chars().count(),
            4096 + TRUNCATION_SUFFIX.chars().count()
        );
        assert!(cut.ends_with(" ... (truncated)"));
        assert_eq!(truncate_error(&"a".repeat(4096)), "a".repeat(4096));
    }

    #[test]
    fn background_phrase_table() {
        let cases: &[(&str, bool)] = &[
            ("I am still waiting for the agents.", true),
            ("Waiting on the build", true),
            ("Tasks are IN PROGRESS", true),
            ("running in the background now", true),
            ("Continuing.", true),
            ("continuingly", false),
            ("discontinuing", false),
            ("in progressive mode", false),
            ("in_progress", false),
            ("é continuing", true),
            ("écontinuing", false),
            ("continuingly, continuing", true),
            ("all done", false),
        ];
        for (text, want) in cases {
            assert_eq!(has_background_phrase(text), *want, "{text}");
        }
    }
}
