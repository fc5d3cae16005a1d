//! Message contents: exported only when asked (`--otlp-content`), and then
//! masked exactly as the store masks what it keeps.
//!
//! Note \[Contents are opt-in\]: prompts, answers, tool inputs and results
//! hold whatever the agent saw, credentials included. A trace backend is
//! read by more people than the store, so by default no content leaves: the
//! spans say what happened (names, ids, times, counts, verdicts), not what
//! was said. With contents on, every text goes through the same
//! [`Masker`] the store door uses (the built-in rules and the user's, keyed
//! like the store), so a secret reaches the collector as
//! `[REDACTED:<rule>:<fingerprint>]`, and the fingerprint compares with the
//! dashboard's. Each text is also cut to [`Content::max_chars`]: backends
//! refuse or truncate huge attributes, and a 10 MB tool result is not worth
//! a span. Error texts of a failed session or call are masked the same way,
//! contents on or off (they go in the span's status).

use agentshape_core::secrets::Masker;

/// The most characters of one content text by default.
pub const MAX_CHARS: usize = 8 * 1024;

/// How texts are treated on their way into spans.
#[derive(Debug, Clone, Default)]
pub struct Content {
    /// Whether message contents are exported at all (`--otlp-content`).
    pub enabled: bool,
    /// The masker (`None`: masking is off, `--no-mask`).
    pub masker: Option<Masker>,
    /// The most characters of one text (0: [`MAX_CHARS`]).
    pub max_chars: usize,
}

impl Content {
    /// `text` masked and cut: for error texts, always.
    pub fn masked(&self, text: &str) -> String {
        let masked = match &self.masker {
            Some(m) => m.mask_str(text).text.into_owned(),
            None => text.to_owned(),
        };
        let max = if self.max_chars == 0 {
            MAX_CHARS
        } else {
            self.max_chars
        };
        match masked.char_indices().nth(max) {
            Some((end, _)) => format!("{}…", &masked[..end]),
            None => masked,
        }
    }

    /// `text` masked and cut when contents are on; `None` when they are off.
    pub fn text(&self, text: &str) -> Option<String> {
        self.enabled.then(|| self.masked(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentshape_core::secrets::MaskKey;

    #[test]
    fn off_gives_nothing_on_gives_the_text_masked_and_cut() {
        let key = "AKIAIOSFODNN7EXAMPLQ";
        let text = format!("aws key {key} here");
        let off = Content::default();
        assert_eq!(off.text(&text), None);
        let on = Content {
            enabled: true,
            masker: Some(Masker::builtin(MaskKey::from_bytes([7; 32]))),
            max_chars: 0,
        };
        let got = on.text(&text).unwrap();
        assert!(!got.contains(key), "{got}");
        assert!(got.contains("[REDACTED:"), "{got}");
        let cut = Content {
            enabled: true,
            masker: None,
            max_chars: 3,
        };
        assert_eq!(cut.text("héllo").unwrap(), "hél…");
    }
}
