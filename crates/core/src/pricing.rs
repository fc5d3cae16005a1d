//! Cost from usage: a price table as data, and the estimate it gives.
//!
//! Native session files (Claude Code, Codex, Gemini CLI) carry token counts
//! but no cost, so a call's or a session's cost is computed here from its
//! tokens and a price table. The built-in table is `LiteLLM`'s model price
//! file (the one ccusage reads), pinned in `pricing/litellm.json` with its
//! provenance in `pricing/SOURCE.md` (`scripts/update-prices.sh` refreshes
//! both) and turned into a static Rust table by the build script, so nothing
//! is parsed at run time. A user file (TOML, [`PriceTable::from_toml`]) adds
//! or overrides models ([`PriceTable::extend`]); the caller reads that file
//! (core does no I/O).
//!
//! Note \[Estimated cost\]: a cost computed here is always marked
//! `estimated`: the table is a snapshot of published prices, and what
//! transcripts do not say (batch, flex or priority processing, regional
//! uplifts, per-request fees such as web search) changes the real bill. A
//! model the table does not know is never priced as zero: it is listed in
//! `unpriced`, and the estimate covers only the models it knows (`cost_usd`
//! is `None` when it knows none of them).
//!
//! Note \[Price lookup\]: `LiteLLM` keys one model many ways: the provider's
//! own name (`claude-opus-5`), resellers' paths (`azure_ai/claude-opus-5`),
//! Bedrock's ids with a region and vendor prefix and a version suffix
//! (`us.anthropic.claude-opus-4-20250514-v1:0`), Vertex's `@date`. Some
//! models a transcript names exist only in those forms (in `LiteLLM` 1.110.2,
//! `claude-opus-4-20250514` is only a Bedrock id). So a name is looked up
//! (lower case) as: the exact key (as written, then without a `provider/`
//! path, so `bedrock/us.anthropic.…` keeps its region's price); else an
//! alias built from every key (`model_alias`: no `provider/` path, no
//! Bedrock region `us.`/`eu.`/`global.`/`apac.`/`au.`/`jp.`/`us-gov.`, no
//! `anthropic.`, no `-v1:0`, `@date` as `-date`), the transcript's name
//! brought to the same form; else, for a dated name (`-20250514`,
//! `-2025-08-07`), its undated name. When
//! several keys give one alias, the build script keeps the provider's own
//! entry (`litellm_provider` anthropic, openai or gemini), then the base
//! name (`anthropic.X`), then `global.`, then regional ones (regional
//! Bedrock prices carry a premium), then resellers'; a free entry (a local
//! runner's `ollama/llama3`) gives no alias. Nothing is matched by
//! prefix in the built-in table: a newer version (`claude-opus-4-6`) is
//! never priced as its predecessor (Note \[Model versions are not
//! prefixes\]); a name the file lacks is unpriced.
//!
//! Note \[Long-context tiers\]: a tier (`input_cost_per_token_above_200k_tokens`
//! and its kin, `[[model.tier]]` in a user file) applies when one call's
//! prompt (uncached input + cache reads + cache writes) exceeds its
//! threshold, and then every token of that call is priced at the tier's
//! prices (a price the tier does not list is the base one): this is how
//! Anthropic and Google bill long requests. ccusage instead splits each
//! token kind at 200k (the tokens past 200k at the tier price); the two
//! agree whenever no call's prompt exceeds the threshold. A session's sums
//! ([`PriceTable::estimate`]) cannot say which call was long, so they are
//! priced at base prices; per-call reports ([`PriceTable::cost_of`]) apply
//! tiers.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::facts::{SessionInfo, TokenCounts, UsageTokens};

include!("pricing/names.rs");

/// One entry of the generated built-in table (prices per million tokens).
struct Builtin {
    key: &'static str,
    provider: &'static str,
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    cache_write_1h: Option<f64>,
    reasoning: Option<f64>,
    tiers: &'static [Tier],
}

// `SOURCE_VERSION`, `SOURCE_TAKEN`, `BUILTIN` (key order) and `NAMES`
// (every key and alias, lower case, sorted, with its `BUILTIN` index),
// written by the build script from `pricing/litellm.json` and `SOURCE.md`.
include!(concat!(env!("OUT_DIR"), "/prices.rs"));

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

/// One model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// `anthropic`, `openai`, `google`, the user's own label, or for a
    /// built-in entry `LiteLLM`'s `litellm_provider` (`bedrock_converse`, …).
    #[serde(default)]
    pub provider: Option<String>,
    /// Model-name prefixes this entry prices (lower case); for a built-in
    /// entry, its `LiteLLM` key.
    #[serde(rename = "match")]
    pub prefixes: Vec<String>,
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning tokens too, unless `reasoning` is set).
    pub output: f64,
    /// Tokens written to the prompt cache for 5 minutes; `input` when absent.
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Tokens written to the prompt cache for 1 hour; when absent, twice
    /// `input` for an Anthropic model (Anthropic's published rule), else
    /// the 5-minute price.
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    /// Tokens read from the prompt cache; `input` when absent.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Reasoning (thinking) tokens, where the provider prices them apart
    /// from output; `output` when absent.
    #[serde(default)]
    pub reasoning: Option<f64>,
    /// Whether a session's summed input count ([`Tokens::input`]) already
    /// includes cached tokens (`OpenAI`, Gemini) or not (Anthropic).
    #[serde(default)]
    pub input_includes_cache: bool,
    /// Long-context tiers (Note \[Long-context tiers\]), any order.
    #[serde(default, rename = "tier", skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<Tier>,
}

/// The prices of one call whose prompt exceeds `above` tokens (Note
/// \[Long-context tiers\]); a price left out is the model's base one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// The prompt size (tokens) this tier starts after.
    pub above: u64,
    /// Uncached input tokens.
    #[serde(default)]
    pub input: Option<f64>,
    /// Output tokens.
    #[serde(default)]
    pub output: Option<f64>,
    /// Cache reads.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// 5-minute cache writes.
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// 1-hour cache writes.
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
}

/// Token counts of one model, as a session used them (summed over its calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens, as the agent reported them (cached ones inside or
    /// not: [`ModelPrice::input_includes_cache`]).
    pub input: u64,
    /// Output tokens (reasoning inside).
    pub output: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Tokens written to the prompt cache (both durations).
    pub cache_write: u64,
    /// Of `cache_write`, the tokens written for 1 hour.
    pub cache_write_1h: u64,
    /// Of `output`, the reasoning tokens, where reported.
    pub reasoning: u64,
}

impl From<&TokenCounts> for Tokens {
    fn from(t: &TokenCounts) -> Tokens {
        Tokens {
            input: t.input,
            output: t.output,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            cache_write_1h: t.cache_write_1h,
            reasoning: t.reasoning,
        }
    }
}

impl Tokens {
    /// These sums in the usage vocabulary (uncached input, 5-minute and
    /// 1-hour writes apart).
    fn usage(&self, input_includes_cache: bool) -> UsageTokens {
        let input = if input_includes_cache {
            self.input
                .saturating_sub(self.cache_read)
                .saturating_sub(self.cache_write)
        } else {
            self.input
        };
        let one_hour = self.cache_write_1h.min(self.cache_write);
        UsageTokens {
            input,
            output: self.output,
            reasoning: self.reasoning.min(self.output),
            cache_read: self.cache_read,
            cache_write_5m: self.cache_write - one_hour,
            cache_write_1h: one_hour,
        }
    }
}

impl ModelPrice {
    /// Whether Anthropic's rules apply (1-hour writes at twice the input
    /// price, input reported without cached tokens): its provider says
    /// `anthropic`, or it names a Claude model (Bedrock, Vertex, resellers).
    fn is_anthropic(&self) -> bool {
        self.provider
            .as_deref()
            .is_some_and(|p| p.eq_ignore_ascii_case("anthropic"))
            || self.prefixes.iter().any(|p| p.contains("claude"))
    }

    /// The tier a call with a `prompt`-token prompt is billed at: the one
    /// with the highest threshold below it (Note \[Long-context tiers\]).
    pub fn tier_for(&self, prompt: u64) -> Option<&Tier> {
        self.tiers
            .iter()
            .filter(|t| prompt > t.above)
            .max_by_key(|t| t.above)
    }

    /// The cost of one call at these prices, its tier included (Note
    /// \[Long-context tiers\]), in US dollars.
    pub fn call_cost(&self, tokens: &UsageTokens) -> f64 {
        self.cost_at(tokens, self.tier_for(tokens.prompt()))
    }

    /// The cost of a session's summed `tokens` at the base prices (a sum
    /// has no per-call prompt to choose a tier by), in US dollars.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        self.cost_at(&tokens.usage(self.input_includes_cache), None)
    }

    fn cost_at(&self, t: &UsageTokens, tier: Option<&Tier>) -> f64 {
        let tiered = |f: fn(&Tier) -> Option<f64>| tier.and_then(f);
        let input = tiered(|x| x.input).unwrap_or(self.input);
        let output = tiered(|x| x.output).unwrap_or(self.output);
        let cache_read = tiered(|x| x.cache_read)
            .or(self.cache_read)
            .unwrap_or(input);
        let five_minutes = tiered(|x| x.cache_write)
            .or(self.cache_write)
            .unwrap_or(input);
        let one_hour = tiered(|x| x.cache_write_1h)
            .or(self.cache_write_1h)
            .unwrap_or(if self.is_anthropic() {
                2.0 * input
            } else {
                five_minutes
            });
        let reasoning = self.reasoning.unwrap_or(output);
        let reasoning_tokens = t.reasoning.min(t.output);
        let per = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
        per(t.input, input)
            + per(t.output - reasoning_tokens, output)
            + per(reasoning_tokens, reasoning)
            + per(t.cache_read, cache_read)
            + per(t.cache_write_5m, five_minutes)
            + per(t.cache_write_1h, one_hour)
    }

    fn from_builtin(b: &Builtin) -> ModelPrice {
        let mut m = ModelPrice {
            provider: Some(b.provider.to_owned()),
            prefixes: vec![b.key.to_ascii_lowercase()],
            input: b.input,
            output: b.output,
            cache_write: b.cache_write,
            cache_write_1h: b.cache_write_1h,
            cache_read: b.cache_read,
            reasoning: b.reasoning,
            input_includes_cache: false,
            tiers: b.tiers.to_vec(),
        };
        // Claude Code reports input without the cached tokens; Codex and
        // Gemini CLI with them (Note \[Usage vocabulary\]).
        m.input_includes_cache = !m.is_anthropic();
        m
    }

    /// Refuse a price that is negative or not a number.
    fn check(&self) -> Result<(), String> {
        let price = |name: &str, p: Option<f64>| match p {
            Some(p) if !(p.is_finite() && p >= 0.0) => {
                Err(format!("`{name}` must be a price of 0 or more, not {p}"))
            }
            _ => Ok(()),
        };
        price("input", Some(self.input))?;
        price("output", Some(self.output))?;
        price("cache_write", self.cache_write)?;
        price("cache_write_1h", self.cache_write_1h)?;
        price("cache_read", self.cache_read)?;
        price("reasoning", self.reasoning)?;
        for (i, t) in self.tiers.iter().enumerate() {
            let tier = |r: String| format!("tier {}: {r}", i + 1);
            price("input", t.input).map_err(tier)?;
            price("output", t.output).map_err(tier)?;
            price("cache_read", t.cache_read).map_err(tier)?;
            price("cache_write", t.cache_write).map_err(tier)?;
            price("cache_write_1h", t.cache_write_1h).map_err(tier)?;
        }
        Ok(())
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
    /// When the prices were taken (the built-in file's date; the user
    /// file's `updated` when it has one).
    pub updated: Option<String>,
    /// Where the built-in prices come from (`LiteLLM 1.110.2, MIT`);
    /// `None` for a table read from a user file alone.
    pub source: Option<String>,
    /// The built-in entries (`BUILTIN` order, looked up by name through
    /// `NAMES`), then the user's (matched by prefix).
    models: Vec<ModelPrice>,
    /// How many of `models` are built-in.
    builtin: usize,
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
    /// The built-in table: `LiteLLM`'s prices as pinned in
    /// `pricing/litellm.json`, compiled in (Note \[Price lookup\]).
    pub fn builtin() -> PriceTable {
        PriceTable {
            updated: Some(SOURCE_TAKEN.to_owned()),
            source: Some(format!("LiteLLM {SOURCE_VERSION}, MIT")),
            models: BUILTIN.iter().map(ModelPrice::from_builtin).collect(),
            builtin: BUILTIN.len(),
        }
    }

    /// Parse a user table (TOML: `updated`, and `[[model]]` entries with
    /// `match`, `input`, `output`, optional `cache_read`, `cache_write`,
    /// `cache_write_1h`, `reasoning`, `input_includes_cache`, `provider`,
    /// and `[[model.tier]]` with `above` and the same prices).
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
            m.check().map_err(entry)?;
            models.push(m);
        }
        Ok(PriceTable {
            updated: file.updated,
            source: None,
            models,
            builtin: 0,
        })
    }

    /// Add a user table: an entry whose first prefix equals an earlier
    /// user entry's first prefix replaces it; any other entry is added
    /// (built-in entries of `user`, if any, are not).
    /// User entries win over built-in ones ([`PriceTable::price`]). Its
    /// `updated` date wins when it has one.
    pub fn extend(&mut self, user: PriceTable) {
        // Only the user's entries: a built-in part of `user` is already in `self`.
        let added = user.models.into_iter().skip(user.builtin);
        for m in added {
            let first = m.prefixes.first().cloned();
            match self.models[self.builtin..]
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

    /// The entries: built-in ones in key order, then the user's in file order.
    pub fn models(&self) -> &[ModelPrice] {
        &self.models
    }

    /// The price of `model`: a user entry first, the one with the longest
    /// prefix of the name (lower case, after any `provider/` part) that
    /// [`names_model`] accepts, later entries winning ties; else the
    /// built-in entry the name, its alias or its undated name is (Note
    /// \[Price lookup\]).
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        let name = model.trim().to_ascii_lowercase();
        let bare = name.rsplit('/').next().unwrap_or(&name);
        let mut best: Option<(usize, &ModelPrice)> = None;
        for m in &self.models[self.builtin..] {
            for p in &m.prefixes {
                if names_model(bare, p) && best.is_none_or(|(len, _)| p.len() >= len) {
                    best = Some((p.len(), m));
                }
            }
        }
        if let Some((_, m)) = best {
            return Some(m);
        }
        if self.builtin == 0 || name.is_empty() {
            return None;
        }
        builtin_index(&name).and_then(|i| self.models.get(i))
    }

    /// The cost of one model call in the usage vocabulary, its
    /// long-context tier included (`None`: the model is not priced).
    pub fn cost_of(&self, model: &str, tokens: &UsageTokens) -> Option<f64> {
        Some(self.price(model)?.call_cost(tokens))
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

/// The `BUILTIN` index of the lower-case `name` (Note \[Price lookup\]).
fn builtin_index(name: &str) -> Option<usize> {
    let find = |n: &str| {
        NAMES
            .binary_search_by(|(k, _)| (*k).cmp(n))
            .ok()
            .map(|i| NAMES[i].1 as usize)
    };
    let bare = name.rsplit('/').next().unwrap_or(name);
    find(name).or_else(|| find(bare)).or_else(|| {
        let alias = model_alias(name);
        find(&alias).or_else(|| undated(&alias).and_then(find))
    })
}

/// Whether the table name `prefix` names `model`: the same name, or the
/// name followed by a release tail only — a date (`-20250514`,
/// `-2025-08-07`, `@20250514`), `-latest`, `-preview…`, `-exp…`, or a
/// further name part that is not a version number (`-codex`, `-mini`).
/// User entries are matched this way.
///
/// Note \[Model versions are not prefixes\]: `claude-opus-4` must not
/// price `claude-opus-4-6`, a newer model whose price may differ: a tail
/// that starts with a short number is another version, so the model is
/// reported as unpriced (never priced as its predecessor). A version the
/// table prices the same is listed by name (`claude-opus-4-1`). The
/// built-in table follows the same rule by matching no prefixes at all.
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
pub fn price_session(info: &mut SessionInfo, table: &PriceTable) {
    let estimate = table.estimate(
        info.tokens_by_model
            .iter()
            .map(|(model, t)| (model.as_str(), Tokens::from(t))),
    );
    info.cost_usd = estimate.cost_usd;
    info.cost_estimated = estimate.cost_usd.is_some();
    info.unpriced_models = estimate.unpriced;
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use sha2::Digest as _;

    use super::*;

    /// The pinned file, as the test reads it (the build script read the same).
    const LITELLM_JSON: &str = include_str!("pricing/litellm.json");
    const SOURCE_MD: &str = include_str!("pricing/SOURCE.md");
    const UPDATE_SCRIPT: &str = include_str!("../../../scripts/update-prices.sh");

    fn t(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            cache_write,
            ..Tokens::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A line `- {label} value` of SOURCE.md.
    fn source_line(label: &str) -> &'static str {
        SOURCE_MD
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("SOURCE.md has no {label}"))
            .trim()
    }

    #[test]
    fn the_builtin_table_is_the_pinned_file() {
        let file: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(LITELLM_JSON).expect("litellm.json parses");
        assert!(file.len() > 1000, "{}", file.len());
        let table = PriceTable::builtin();
        assert_eq!(table.models().len(), file.len());
        let per_million = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_f64);
        for (key, entry) in &file {
            let m = table.price(key).unwrap_or_else(|| panic!("{key} unpriced"));
            let want = per_million(entry.get("input_cost_per_token")).expect("input");
            // An exact key is its own entry (a key that differs only in case may pick the other).
            if m.prefixes[0] == *key {
                assert!((m.input - want * 1e6).abs() < 1e-6, "{key}: {}", m.input);
                let out = per_million(entry.get("output_cost_per_token")).expect("output");
                assert!((m.output - out * 1e6).abs() < 1e-6, "{key}: {}", m.output);
            }
        }
        // SOURCE.md describes this very file, from the version the script pins.
        let version = source_line("- Version:");
        let pinned = UPDATE_SCRIPT
            .lines()
            .find_map(|l| l.strip_prefix("version=\"${1:-"))
            .and_then(|l| l.strip_suffix("}\""))
            .expect("update-prices.sh pins a version");
        assert_eq!(version, pinned);
        let mut sha = String::new();
        for b in sha2::Sha256::digest(LITELLM_JSON.as_bytes()) {
            write!(sha, "{b:02x}").expect("write to a String");
        }
        assert_eq!(source_line("- litellm.json sha256:"), sha);
        assert!(source_line("- Licence:").starts_with("MIT"));
        assert_eq!(
            table.source.as_deref(),
            Some(&*format!("LiteLLM {version}, MIT"))
        );
        assert_eq!(table.updated.as_deref(), Some(source_line("- Taken:")));
    }

    #[test]
    fn names_are_looked_up_exactly_then_by_alias_then_undated() {
        let table = PriceTable::builtin();
        // (model, input price per million, or None: unpriced)
        let cases: [(&str, Option<f64>); 26] = [
            // exact keys
            ("claude-opus-5", Some(5.0)),
            ("claude-fable-5", Some(10.0)),
            ("gpt-5.3-codex", Some(1.75)),
            ("gpt-5-mini-2025-08-07", Some(0.25)),
            ("us.anthropic.claude-opus-5", Some(5.5)),
            // Bedrock-only models through their alias
            ("claude-opus-4-20250514", Some(15.0)),
            ("claude-sonnet-4-20250514", Some(3.0)),
            ("Claude-Sonnet-4-20250514", Some(3.0)),
            ("claude-opus-4-1-20250805", Some(15.0)),
            ("claude-opus-4-1@20250805", Some(15.0)),
            // region preference: global. over us. (a premium) and resellers
            ("openai.gpt-5.6-sol", Some(4.0)),
            ("zai.glm-5.3", Some(1.68)),
            // a provider/ path
            ("models/gemini-2.5-flash-lite", Some(0.10)),
            ("anthropic/claude-opus-5", Some(5.0)),
            ("bedrock/us.anthropic.claude-opus-5", Some(5.5)),
            // a dated name falls back to its undated one
            ("claude-opus-5-20260301", Some(5.0)),
            ("gpt-5.3-codex-2026-02-01", Some(1.75)),
            // another version is its own model, priced or not, never its predecessor
            ("claude-opus-4-6", Some(5.0)),
            ("claude-opus-4-9", None),
            ("gpt-5.7", None),
            ("claude-opus-5-20260301-extra", None),
            // unknown
            ("<synthetic>", None),
            ("llama3", None),
            ("ollama/llama3", Some(0.0)),
            ("", None),
            ("codex-auto-review", None),
        ];
        for (model, want) in cases {
            let got = table.price(model).map(|p| p.input);
            match (got, want) {
                (Some(g), Some(w)) => assert!(close(g, w), "{model}: {g} not {w}"),
                (g, w) => assert_eq!(g, w, "{model}"),
            }
        }
    }

    #[test]
    fn every_model_in_the_native_corpus_is_priced() {
        // `grep -ho '"model":"[^"]*"' shared/corpus/native/claude/*.jsonl`,
        // Codex's turn_context models and the Gemini sessions' model.
        let table = PriceTable::builtin();
        for model in [
            "claude-opus-4-20250514",
            "claude-sonnet-4-20250514",
            "claude-opus-4-1-20250805",
            "claude-opus-5",
            "claude-fable-5",
            "claude-opus-4-8",
            "claude-sonnet-5",
            "gpt-5.1",
            "gpt-5.2",
            "gpt-5.2-codex",
            "gpt-5.3-codex",
            "gpt-5.4",
            "gpt-5.5",
            "gpt-5.6-luna",
            "gpt-5.6-sol",
            "gemini-2.5-flash",
        ] {
            assert!(table.price(model).is_some(), "{model} unpriced");
        }
        // Claude Code's placeholder for messages no model wrote.
        assert!(table.price("<synthetic>").is_none());
    }

    #[test]
    fn a_call_is_priced_by_kind_and_tier() {
        let table = PriceTable::builtin();
        let call =
            |input, output, reasoning, cache_read, cache_write_5m, cache_write_1h| UsageTokens {
                input,
                output,
                reasoning,
                cache_read,
                cache_write_5m,
                cache_write_1h,
            };
        // (model, call, dollars)
        let cases = [
            // Opus 5: 1K in × $5 + 2K out × $25 + 100K read × $0.50
            // + 20K 5m writes × $6.25 + 10K 1h writes × $10.
            (
                "claude-opus-5",
                call(1_000, 2_000, 0, 100_000, 20_000, 10_000),
                0.33,
            ),
            // No 1-hour price listed for an Anthropic model: twice input ($30).
            ("claude-opus-4-20250514", call(0, 0, 0, 0, 0, 100_000), 3.0),
            // Codex: 10K in × $1.75 + 90K read × $0.175 + 5K out (3K reasoning) × $14.
            (
                "gpt-5.3-codex",
                call(10_000, 5_000, 3_000, 90_000, 0, 0),
                0.10325,
            ),
            // A listed reasoning price: 6K out × $0.20 + 4K reasoning × $0.50.
            (
                "dashscope/qwen-turbo",
                call(0, 10_000, 4_000, 0, 0, 0),
                0.0032,
            ),
            // Sonnet 4 above 200K (prompt 215K): every token at the tier:
            // 10K × $6 + 200K read × $0.60 + 5K write × $7.50 + 2K out × $22.50.
            (
                "claude-sonnet-4-20250514",
                call(10_000, 2_000, 0, 200_000, 5_000, 0),
                0.2625,
            ),
            // Just under (prompt exactly 200K): base prices
            // 10K × $3 + 185K × $0.30 + 5K × $3.75 + 2K × $15.
            (
                "claude-sonnet-4-20250514",
                call(10_000, 2_000, 0, 185_000, 5_000, 0),
                0.13425,
            ),
            // Gemini 2.5 Pro: 250K in × $2.50 + 1K out × $15; 200K × $1.25 + 1K × $10.
            ("gemini-2.5-pro", call(250_000, 1_000, 0, 0, 0, 0), 0.64),
            ("gemini-2.5-pro", call(200_000, 1_000, 0, 0, 0, 0), 0.26),
        ];
        for (model, tokens, want) in cases {
            let got = table.cost_of(model, &tokens).expect(model);
            assert!(close(got, want), "{model} {tokens:?}: {got} not {want}");
            // To the cent, as a report prints it.
            assert_eq!(format!("{got:.2}"), format!("{want:.2}"));
        }
        assert_eq!(
            table.cost_of("my-local-model", &call(1, 1, 0, 0, 0, 0)),
            None
        );
    }

    #[test]
    fn session_sums_price_cache_and_one_hour_writes() {
        let table = PriceTable::builtin();
        // Sonnet 4: 1M uncached in ($3) + 1M out ($15) + 1M read ($0.30) + 1M write ($3.75).
        let sonnet = table.price("claude-sonnet-4-20250514").expect("sonnet");
        assert!(!sonnet.input_includes_cache);
        assert!(close(
            sonnet.cost(&t(1_000_000, 1_000_000, 1_000_000, 1_000_000)),
            22.05
        ));
        // Half the writes for an hour: 500K × $3.75 + 500K × $6 (2 × input).
        let one_hour = Tokens {
            cache_write: 1_000_000,
            cache_write_1h: 500_000,
            ..Tokens::default()
        };
        assert!(close(sonnet.cost(&one_hour), 1.875 + 3.0));
        // gpt-5: 1M input of which 400K cached: 600K × 1.25 + 400K × 0.125 + 0 out.
        let gpt5 = table.price("gpt-5").expect("gpt-5");
        assert!(gpt5.input_includes_cache);
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
[[model]]
match = ["my-local-model"]
input = 0.0
output = 0.0
"#,
        )
        .expect("user table");
        let before = table.models().len();
        table.extend(user);
        // The third entry replaced the second (same first prefix).
        assert_eq!(table.models().len(), before + 2);
        assert_eq!(table.updated.as_deref(), Some("2026-11-01"));
        let sonnet = table.price("claude-sonnet-4-20250514").expect("sonnet");
        assert!(close(sonnet.input, 2.0));
        // No cache prices: cache tokens cost what input costs.
        assert!(close(sonnet.cost(&t(0, 0, 1_000_000, 0)), 2.0));
        // The user prefix does not reach another version; the built-in does.
        assert!(close(
            table.price("claude-sonnet-4-5").expect("4.5").input,
            3.0
        ));
        let est = table.estimate([("my-local-model", t(10, 10, 0, 0))]);
        assert_eq!(est.cost_usd, Some(0.0));
        assert!(est.unpriced.is_empty());
    }

    #[test]
    fn a_user_file_adds_a_tier_and_a_one_hour_price() {
        let mut table = PriceTable::builtin();
        table.extend(
            PriceTable::from_toml(
                r#"
[[model]]
provider = "local"
match = ["my-model"]
input = 1.0
output = 2.0
cache_write_1h = 4.0
reasoning = 3.0
[[model.tier]]
above = 100000
input = 2.0
cache_write_1h = 8.0
"#,
            )
            .expect("user table"),
        );
        let call = |input| UsageTokens {
            input,
            output: 1_000,
            reasoning: 500,
            cache_write_1h: 10_000,
            ..UsageTokens::default()
        };
        // Prompt 160K > 100K: 150K × $2 + 500 out × $2 + 500 reasoning × $3 + 10K 1h × $8.
        let above = table
            .cost_of("my-model-20261101", &call(150_000))
            .expect("priced");
        assert!(close(above, 0.3 + 0.001 + 0.0015 + 0.08), "{above}");
        // Prompt 60K: 50K × $1 + the same output + 10K 1h × $4.
        let below = table.cost_of("my-model", &call(50_000)).expect("priced");
        assert!(close(below, 0.05 + 0.001 + 0.0015 + 0.04), "{below}");
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
            (
                "[[model]]\nmatch = [\"x\"]\ninput = 1.0\noutput = 1.0\nreasoning = nan\n",
                "`reasoning` must be",
            ),
            (
                "[[model]]\nmatch = [\"x\"]\ninput = 1.0\noutput = 1.0\n\
                 [[model.tier]]\nabove = 1000\ncache_write_1h = -2.0\n",
                "model entry 1: tier 1: `cache_write_1h` must be",
            ),
            (
                "[[model]]\nmatch = [\"x\"]\ninput = 1.0\noutput = 1.0\n\
                 [[model.tier]]\ninput = 2.0\n",
                "price table:",
            ),
            (
                "[[model]]\nmatch = [\"x\"]\ninput = 1.0\noutput = 1.0\n\
                 [[model.tier]]\nabove = 1000\nprice = 2.0\n",
                "price table:",
            ),
        ];
        for (text, want) in cases {
            let err = PriceTable::from_toml(text).expect_err(text).to_string();
            assert!(err.contains(want), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn aliases_strip_what_resellers_and_bedrock_add() {
        let cases = [
            (
                "us.anthropic.claude-opus-4-20250514-v1:0",
                "claude-opus-4-20250514",
            ),
            ("global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
            ("us-gov.xai.grok-4.6", "xai.grok-4.6"),
            (
                "vertex_ai/claude-opus-4-1@20250805",
                "claude-opus-4-1-20250805",
            ),
            ("azure/eu/gpt-5.2", "gpt-5.2"),
            ("gpt-4-vision", "gpt-4-vision"),
            ("Claude-Opus-5", "claude-opus-5"),
        ];
        for (key, want) in cases {
            assert_eq!(model_alias(key), want, "{key}");
        }
        assert_eq!(undated("claude-opus-4-20250514"), Some("claude-opus-4"));
        assert_eq!(undated("gpt-5-mini-2025-08-07"), Some("gpt-5-mini"));
        assert_eq!(undated("gpt-5.3-codex"), None);
        assert_eq!(undated("-20250514"), None);
    }
}
