//! Cost from usage: a price table as data, and the estimate it gives.
//!
//! Native session files (Claude Code, Codex, Gemini CLI) carry token counts
//! but no cost, so a session's cost is computed here from its de-duplicated
//! usage per model and a price table. The built-in table is
//! `pricing/prices.toml`, compiled in and dated; a user file in the same
//! format replaces or adds models ([`PriceTable::extend`]). The caller reads
//! that file (core does no I/O).
//!
//! Note \[Estimated cost\]: a cost computed here is always marked
//! `estimated`: the table is a snapshot of published prices, and tiers the
//! table does not model (long context, batch, 1-hour cache writes) change
//! the real bill. A model the table does not know is never priced as zero:
//! it is listed in `unpriced`, and the estimate covers only the models it
//! knows (`cost_usd` is `None` when it knows none of them).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The built-in table, as shipped.
pub const BUILTIN_PRICES: &str = include_str!("pricing/prices.toml");

/// Why a price file was refused.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    /// Not TOML, or not a price table.
    #[error("price table: {0}")]
    Parse(String),
    /// A model entry that cannot price anything.
    #[error("price table: model entry {index}: {reason}")]
    Entry {
        /// 1-based position of the `[[model]]` entry.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// One model family's prices, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// `anthropic`, `openai`, `google`, or the user's own label.
    #[serde(default)]
    pub provider: Option<String>,
    /// Model-name prefixes this entry prices (lower case).
    #[serde(rename = "match")]
    pub prefixes: Vec<String>,
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning tokens are billed as output).
    pub output: f64,
    /// Tokens written to the prompt cache (Anthropic); `input` when absent.
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Tokens read from the prompt cache; `input` when absent.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Whether the reported input count already includes cached tokens
    /// (`OpenAI`, Gemini) or not (Anthropic).
    #[serde(default)]
    pub input_includes_cache: bool,
}

/// Token counts of one model, as a session used them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens, as the agent reported them.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
}

impl ModelPrice {
    /// The cost of `tokens` at these prices, in US dollars.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        let per = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
        let cache_read = self.cache_read.unwrap_or(self.input);
        let cache_write = self.cache_write.unwrap_or(self.input);
        let uncached = if self.input_includes_cache {
            tokens
                .input
                .saturating_sub(tokens.cache_read)
                .saturating_sub(tokens.cache_write)
        } else {
            tokens.input
        };
        per(uncached, self.input)
            + per(tokens.output, self.output)
            + per(tokens.cache_read, cache_read)
            + per(tokens.cache_write, cache_write)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    updated: Option<String>,
    #[serde(default)]
    model: Vec<ModelPrice>,
}

/// A price table: the built-in one, possibly extended by a user file.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    /// When the prices were taken (`updated` of the file, the user's when extended).
    pub updated: Option<String>,
    models: Vec<ModelPrice>,
}

/// What pricing one session gave (Note \[Estimated cost\]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// The cost of the models the table knows; `None` when it knows none
    /// (or the session used no tokens of a known model).
    pub cost_usd: Option<f64>,
    /// The models the table has no price for (never counted as free).
    pub unpriced: Vec<String>,
}

impl PriceTable {
    /// The built-in table (`pricing/prices.toml`).
    pub fn builtin() -> PriceTable {
        // The built-in file is tested to parse; an empty table is the
        // harmless fallback, never a panic.
        PriceTable::from_toml(BUILTIN_PRICES).unwrap_or(PriceTable {
            updated: None,
            models: Vec::new(),
        })
    }

    /// Parse a table (the built-in file's format).
    ///
    /// # Errors
    /// [`PricingError`] when the text is not TOML of that shape, or an
    /// entry has no prefix or a negative or non-finite price.
    pub fn from_toml(text: &str) -> Result<PriceTable, PricingError> {
        let file: File = toml::from_str(text).map_err(|e| {
            PricingError::Parse(e.message().lines().next().unwrap_or("").to_owned())
        })?;
        let mut models = Vec::with_capacity(file.model.len());
        for (i, mut m) in file.model.into_iter().enumerate() {
            let entry = |reason: String| PricingError::Entry {
                index: i + 1,
                reason,
            };
            m.prefixes = m
                .prefixes
                .iter()
                .map(|p| p.trim().to_ascii_lowercase())
                .filter(|p| !p.is_empty())
                .collect();
            if m.prefixes.is_empty() {
                return Err(entry("`match` names no model prefix".to_owned()));
            }
            for (name, price) in [
                ("input", Some(m.input)),
                ("output", Some(m.output)),
                ("cache_write", m.cache_write),
                ("cache_read", m.cache_read),
            ] {
                if let Some(p) = price
                    && !(p.is_finite() && p >= 0.0)
                {
                    return Err(entry(format!(
                        "`{name}` must be a price of 0 or more, not {p}"
                    )));
                }
            }
            models.push(m);
        }
        Ok(PriceTable {
            updated: file.updated,
            models,
        })
    }

    /// Add a user table: an entry whose first prefix equals an existing
    /// entry's first prefix replaces it; any other entry is added. Its
    /// `updated` date wins when it has one.
    pub fn extend(&mut self, user: PriceTable) {
        for m in user.models {
            let first = m.prefixes.first().cloned();
            match self
                .models
                .iter_mut()
                .find(|e| e.prefixes.first() == first.as_ref())
            {
                Some(existing) => *existing = m,
                None => self.models.push(m),
            }
        }
        if user.updated.is_some() {
            self.updated = user.updated;
        }
    }

    /// The entries, in file order.
    pub fn models(&self) -> &[ModelPrice] {
        &self.models
    }

    /// The price of `model`: the entry with the longest prefix of its name
    /// (lower case, after any `provider/` part) that [`names_model`] accepts,
    /// later entries winning ties (so a user entry beats a built-in one of
    /// the same prefix length).
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .trim()
            .to_ascii_lowercase();
        let mut best: Option<(usize, &ModelPrice)> = None;
        for m in &self.models {
            for p in &m.prefixes {
                if names_model(&name, p) && best.is_none_or(|(len, _)| p.len() >= len) {
                    best = Some((p.len(), m));
                }
            }
        }
        best.map(|(_, m)| m)
    }

    /// The cost of one model call in the usage vocabulary (`None`: the
    /// model is not priced).
    pub fn cost_of(&self, model: &str, tokens: &crate::usage::UsageTokens) -> Option<f64> {
        let price = self.price(model)?;
        let cache_read = price.cache_read.unwrap_or(price.input);
        let cache_write = price.cache_write.unwrap_or(price.input);
        let per = |n: u64, p: f64| n as f64 * p / 1_000_000.0;
        Some(
            per(tokens.input, price.input)
                + per(tokens.output, price.output)
                + per(tokens.cache_read, cache_read)
                + per(tokens.cache_write(), cache_write),
        )
    }

    /// Price a session's usage per model (Note \[Estimated cost\]).
    pub fn estimate<'a, I>(&self, usage: I) -> Estimate
    where
        I: IntoIterator<Item = (&'a str, Tokens)>,
    {
        let mut total: Option<f64> = None;
        let mut unpriced = BTreeSet::new();
        for (model, tokens) in usage {
            if tokens == Tokens::default() {
                continue;
            }
            match self.price(model) {
                Some(price) => *total.get_or_insert(0.0) += price.cost(&tokens),
                None => {
                    unpriced.insert(model.to_owned());
                }
            }
        }
        Estimate {
            cost_usd: total,
            unpriced: unpriced.into_iter().collect(),
        }
    }
}

/// Whether the table name `prefix` names `model`: the same name, or the
/// name followed by a release tail only — a date (`-20250514`,
/// `-2025-08-07`, `@20250514`), `-latest`, `-preview…`, `-exp…`, or a
/// further name part that is not a version number (`-codex`, `-mini`).
///
/// Note \[Model versions are not prefixes\]: `claude-opus-4` must not
/// price `claude-opus-4-6`, a newer model whose price may differ: a tail
/// that starts with a short number is another version, so the model is
/// reported as unpriced (never priced as its predecessor). A version the
/// table prices the same is listed by name (`claude-opus-4-1`).
pub fn names_model(model: &str, prefix: &str) -> bool {
    let Some(tail) = model.strip_prefix(prefix) else {
        return false;
    };
    if tail.is_empty() {
        return true;
    }
    let Some(rest) = tail.strip_prefix('-').or_else(|| tail.strip_prefix('@')) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return !rest.is_empty();
    }
    // A date (8 digits, or a 4-digit year followed by `-MM-DD`) is a release of this model.
    digits >= 4
}

/// Fill a native session's `cost_usd`, `cost_estimated` and
/// `unpriced_models` from its per-model tokens (Note \[Estimated cost\]).
pub fn price_session(info: &mut crate::summary::SessionInfo, table: &PriceTable) {
    let estimate = table.estimate(info.tokens_by_model.iter().map(|(model, t)| {
        (
            model.as_str(),
            Tokens {
                input: t.input,
                output: t.output,
                cache_read: t.cache_read,
                cache_write: t.cache_write,
            },
        )
    }));
    info.cost_usd = estimate.cost_usd;
    info.cost_estimated = estimate.cost_usd.is_some();
    info.unpriced_models = estimate.unpriced;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn the_builtin_table_parses_and_is_dated() {
        let table = PriceTable::from_toml(BUILTIN_PRICES).expect("built-in prices parse");
        assert!(table.models().len() >= 20, "{}", table.models().len());
        assert!(table.updated.is_some());
        assert_eq!(PriceTable::builtin(), table);
    }

    #[test]
    fn the_longest_prefix_wins() {
        let table = PriceTable::builtin();
        let cases = [
            ("claude-opus-4-5-20251101", 5.0),
            ("claude-opus-4-1-20250805", 15.0),
            ("claude-sonnet-4-5-20250929", 3.0),
            ("claude-3-5-haiku-20241022", 0.80),
            ("claude-haiku-4-5-20251001", 1.0),
            ("gpt-5-codex", 1.25),
            ("gpt-5-mini-2025-08-07", 0.25),
            ("gpt-4o-mini", 0.15),
            ("o3-mini", 1.10),
            ("o3", 2.0),
            ("models/gemini-2.5-flash-lite", 0.10),
            ("gemini-2.5-flash", 0.30),
            ("Claude-Sonnet-4-20250514", 3.0),
        ];
        for (model, input) in cases {
            let price = table
                .price(model)
                .unwrap_or_else(|| panic!("{model} unpriced"));
            assert!(close(price.input, input), "{model}: {}", price.input);
        }
        assert!(table.price("<synthetic>").is_none());
        // Another version is not its predecessor (Note \[Model versions are not prefixes\]).
        assert!(table.price("claude-opus-4-6").is_none());
        assert!(table.price("gpt-5.2").is_none());
        assert!(table.price("claude-sonnet-4-5@20250929").is_some());
        assert!(table.price("gpt-4o-2024-08-06").is_some());
        assert!(table.price("llama3").is_none());
    }

    #[test]
    fn anthropic_cache_tokens_are_outside_input_openai_inside() {
        let table = PriceTable::builtin();
        // Sonnet: 1M uncached in ($3) + 1M out ($15) + 1M read ($0.30) + 1M write ($3.75).
        let sonnet = table.price("claude-sonnet-4").expect("sonnet");
        assert!(close(
            sonnet.cost(&t(1_000_000, 1_000_000, 1_000_000, 1_000_000)),
            22.05
        ));
        // gpt-5: 1M input of which 400K cached: 600K × 1.25 + 400K × 0.125 + 0 out.
        let gpt5 = table.price("gpt-5").expect("gpt-5");
        assert!(close(gpt5.cost(&t(1_000_000, 0, 400_000, 0)), 0.75 + 0.05));
    }

    #[test]
    fn unknown_models_are_listed_never_free() {
        let table = PriceTable::builtin();
        let est = table.estimate([
            ("claude-sonnet-4-20250514", t(1000, 1000, 0, 0)),
            ("my-local-model", t(5000, 5000, 0, 0)),
            ("unused-model", t(0, 0, 0, 0)),
        ]);
        assert!(close(est.cost_usd.expect("priced"), 0.003 + 0.015));
        assert_eq!(est.unpriced, vec!["my-local-model".to_owned()]);
        let none = table.estimate([("my-local-model", t(1, 1, 0, 0))]);
        assert_eq!(none.cost_usd, None);
        assert_eq!(none.unpriced, vec!["my-local-model".to_owned()]);
    }

    #[test]
    fn a_user_file_replaces_and_adds() {
        let mut table = PriceTable::builtin();
        let user = PriceTable::from_toml(
            r#"
updated = "2026-11-01"
[[model]]
match = ["claude-sonnet-4"]
input = 2.0
output = 10.0
[[model]]
provider = "local"
match = ["my-local-model"]
input = 0.0
output = 0.0
"#,
        )
        .expect("user table");
        let before = table.models().len();
        table.extend(user);
        assert_eq!(table.models().len(), before + 1);
        assert_eq!(table.updated.as_deref(), Some("2026-11-01"));
        let sonnet = table.price("claude-sonnet-4-20250514").expect("sonnet");
        assert!(close(sonnet.input, 2.0));
        // No cache prices: cache tokens cost what input costs.
        assert!(close(sonnet.cost(&t(0, 0, 1_000_000, 0)), 2.0));
        let est = table.estimate([("my-local-model", t(10, 10, 0, 0))]);
        assert_eq!(est.cost_usd, Some(0.0));
        assert!(est.unpriced.is_empty());
    }

    #[test]
    fn bad_files_are_one_line_errors() {
        let cases = [
            ("not toml [", "price table:"),
            (
                "[[model]]\nmatch = []\ninput = 1.0\noutput = 1.0\n",
                "model entry 1",
            ),
            (
                "[[model]]\nmatch = [\"x\"]\ninput = -1.0\noutput = 1.0\n",
                "`input` must be",
            ),
            ("[[model]]\nmatch = [\"x\"]\ninput = 1.0\n", "price table:"),
            (
                "[[model]]\nmatch = [\"x\"]\ninput = 1.0\noutput = 1.0\ncost = 3\n",
                "price table:",
            ),
        ];
        for (text, want) in cases {
            let err = PriceTable::from_toml(text).expect_err(text).to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
