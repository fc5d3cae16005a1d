//! The in-process model: load a GGUF once, apply its chat template, and
//! sample under an llguidance mask, timing each part.
//!
//! Note [One model per process]: llama.cpp's backend may be initialised
//! once per process, and loading a model costs far more than a call, so
//! both live in process-wide caches: [`Engine::load`] returns the same
//! `Arc<Engine>` for the same file every time (retries, ops tiers). Each
//! call gets its own context (KV cache) sized to its prompt and token
//! limit; contexts are cheap next to the model.
//!
//! Note [Own sample loop]: the mask is applied here, not as a sampler in
//! llama.cpp's chain, so the time spent computing it and committing each
//! token is measured on its own (`grammar_ms`), and the token chosen is
//! consumed by the matcher exactly once.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::{Matcher, ParserFactory};
use serde::Serialize;

use super::closing;
use super::grammar::GrammarError;

/// Why the engine could not answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// llama.cpp's backend failed to start.
    #[error("llama.cpp backend: {0}")]
    Backend(String),
    /// The model file could not be loaded.
    #[error("cannot load model {path}: {message}")]
    Load {
        /// The file.
        path: String,
        /// llama.cpp's reason.
        message: String,
    },
    /// The prompt does not fit the model's context.
    #[error("prompt is {prompt} tokens, the model's context is {context}")]
    PromptTooLong {
        /// Prompt tokens.
        prompt: usize,
        /// The model's training context.
        context: u32,
    },
    /// The schema did not compile over the model's vocabulary.
    #[error(transparent)]
    Grammar(#[from] GrammarError),
    /// The matcher refused a token or failed mid-way.
    #[error("grammar failed while sampling: {0}")]
    Matcher(String),
    /// llama.cpp failed while evaluating tokens.
    #[error("llama.cpp: {0}")]
    Decode(String),
}

/// How to sample one reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleOptions {
    /// Most tokens sampled.
    pub max_tokens: u32,
    /// 0 (the default) samples greedily.
    pub temperature: f32,
    /// Seed of the random sampler (fixed by default, so runs repeat).
    pub seed: u32,
    /// CPU threads.
    pub threads: u32,
    /// Longest time for one reply, prompt included: sampling stops at the
    /// first token after it ([`Stop::Timeout`]), like an HTTP provider's
    /// request timeout. `None`: no limit.
    pub timeout: Option<std::time::Duration>,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            max_tokens: 1024,
            temperature: 0.0,
            seed: DEFAULT_SEED,
            threads: default_threads(),
            timeout: None,
        }
    }
}

/// The default seed of `--seed`.
pub const DEFAULT_SEED: u32 = 42;

/// The default of `--threads`: every core but one, at least one.
///
/// Note [Sampling threads]: llama.cpp's worker threads spin while they wait
/// for each other. With as many threads as cores, anything else running (the
/// live printer, a supervisor, the user's own build) preempts one of them and
/// every token waits for it: on a busy 2-core machine 2 threads sampled 60
/// times slower than 1. Leaving a core free costs little on a quiet machine
/// (a 135M model's forward pass is memory-bound) and removes that cliff.
pub fn default_threads() -> u32 {
    let cores = std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
        .unwrap_or(1);
    cores.saturating_sub(1).max(1)
}

/// What the sample loop passes on as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampled<'a> {
    /// New text: whole UTF-8 characters only.
    Text(&'a str),
    /// Sampling went back to close sooner (Note [Closing under the budget]):
    /// the answer so far is now `kept`, and what followed it is gone.
    Rewound {
        /// The text kept.
        kept: &'a str,
        /// Tokens dropped.
        dropped_tokens: u64,
    },
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model chose an end-of-generation token (under a grammar: only
    /// where the grammar accepts).
    Eos,
    /// The grammar admits no further token.
    Grammar,
    /// `max_tokens` (or the context's end) came first.
    MaxTokens,
    /// [`SampleOptions::timeout`] passed.
    Timeout,
}

/// Where the time went, for `ask --json`'s `timing` (milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timing {
    /// Loading the model (0 when it was already loaded in this process).
    pub load_ms: f64,
    /// Tokenizing and evaluating the prompt.
    pub prompt_ms: f64,
    /// The sample loop: evaluation, masking, choosing.
    pub sample_ms: f64,
    /// Inside the constraint: computing masks and committing tokens.
    pub grammar_ms: f64,
    /// Tokens sampled.
    pub tokens: u64,
    /// `tokens / sample_ms`.
    pub tokens_per_second: f64,
    /// Tokens of the answer sampled closing, the end token included when
    /// closing chose it (Note [Closing under the budget]): 0 when the
    /// answer ended on its own.
    pub closing_tokens: u64,
    /// Tokens sampled and then dropped to close sooner (Note [Closing under
    /// the budget]); counted in `tokens`, not in the answer.
    pub rewound_tokens: u64,
}

impl Timing {
    /// `self` plus `other` (over the calls of one ask).
    #[must_use]
    pub fn plus(self, other: Timing) -> Timing {
        let sample_ms = self.sample_ms + other.sample_ms;
        let tokens = self.tokens + other.tokens;
        Timing {
            load_ms: self.load_ms + other.load_ms,
            prompt_ms: self.prompt_ms + other.prompt_ms,
            sample_ms,
            grammar_ms: self.grammar_ms + other.grammar_ms,
            tokens,
            tokens_per_second: per_second(tokens, sample_ms),
            closing_tokens: self.closing_tokens + other.closing_tokens,
            rewound_tokens: self.rewound_tokens + other.rewound_tokens,
        }
    }
}

fn per_second(tokens: u64, ms: f64) -> f64 {
    if ms > 0.0 {
        (tokens as f64) * 1000.0 / ms
    } else {
        0.0
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One sampled reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The text (invalid UTF-8 from a split token replaced, never dropped silently).
    pub text: String,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Sampled tokens (the end token not counted).
    pub completion_tokens: u64,
    /// Why it stopped.
    pub stop: Stop,
    /// Where the time went.
    pub timing: Timing,
}

/// A speaker in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The system prompt.
    System,
    /// The caller.
    User,
    /// The model.
    Assistant,
}

impl Speaker {
    fn as_str(self) -> &'static str {
        match self {
            Speaker::System => "system",
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        }
    }
}

/// A loaded model.
pub struct Engine {
    model: LlamaModel,
    factory: ParserFactory,
    template: Option<LlamaChatTemplate>,
    path: PathBuf,
    load_ms: f64,
    /// Whether `load_ms` was already reported (only the first call pays it).
    load_reported: Mutex<bool>,
    /// [`closing::rank`] of every token id outside and inside a string,
    /// made on first use.
    ranks: OnceLock<[Vec<u8>; 2]>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.path)
            .field("chat_template", &self.template.is_some())
            .finish_non_exhaustive()
    }
}

fn backend() -> Result<&'static LlamaBackend, EngineError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            // llama.cpp logs every tensor it loads on stderr; our stderr is the user's.
            b.void_logs();
            Ok(b)
        })
        .as_ref()
        .map_err(|e| EngineError::Backend(e.clone()))
}

impl Engine {
    /// The model in `path`, loaded once per process (Note [One model per process]).
    ///
    /// # Errors
    /// [`EngineError::Backend`] or [`EngineError::Load`].
    pub fn load(path: &Path) -> Result<Arc<Engine>, EngineError> {
        static ENGINES: OnceLock<Mutex<HashMap<PathBuf, Arc<Engine>>>> = OnceLock::new();
        let key = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        let cache = ENGINES.get_or_init(Mutex::default);
        // Held while loading: two tiers naming one model load it once.
        let mut engines = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(e) = engines.get(&key) {
            return Ok(Arc::clone(e));
        }
        let engine = Arc::new(Engine::load_uncached(&key)?);
        engines.insert(key, Arc::clone(&engine));
        Ok(engine)
    }

    fn load_uncached(path: &Path) -> Result<Engine, EngineError> {
        let started = Instant::now();
        let backend = backend()?;
        let load_err = |message: String| EngineError::Load {
            path: path.display().to_string(),
            message,
        };
        if !path.is_file() {
            return Err(load_err("no such file".into()));
        }
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| load_err(e.to_string()))?;
        let env = LlamaSampler::llguidance_tok_env(&model);
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| load_err(e.to_string()))?;
        factory.quiet();
        let template = model.chat_template(None).ok();
        Ok(Engine {
            model,
            factory,
            template,
            path: path.to_owned(),
            load_ms: ms(started.elapsed()),
            load_reported: Mutex::new(false),
            ranks: OnceLock::new(),
        })
    }

    /// [`closing::rank`] by token id (Note [Closing under the budget]).
    fn ranks(&self, in_string: bool) -> &[u8] {
        let [outside, inside] = self.ranks.get_or_init(|| {
            let vocab = self.model.vocab();
            let n = u32::try_from(self.model.n_vocab()).unwrap_or(0);
            let mut piece = Vec::new();
            let (mut outside, mut inside) = (Vec::new(), Vec::new());
            for id in 0..n {
                let token = LlamaToken(i32::try_from(id).unwrap_or(i32::MAX));
                piece.clear();
                vocab.token_to_piece_into(token, &mut piece, false, None);
                let eog = vocab.is_eog(token);
                outside.push(closing::rank(&piece, eog, false));
                inside.push(closing::rank(&piece, eog, true));
            }
            [outside, inside]
        });
        if in_string { inside } else { outside }
    }

    /// Whether the GGUF carries a chat template (without one the prompt is
    /// plain text: `system`, a blank line, `user`).
    pub fn has_chat_template(&self) -> bool {
        self.template.is_some()
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model's training context, in tokens.
    pub fn context(&self) -> u32 {
        self.model.n_ctx_train()
    }

    /// The prompt text for `turns`: the model's chat template with the
    /// assistant's turn opened, or, when it has none or it fails, the turns'
    /// contents separated by blank lines.
    pub fn prompt(&self, turns: &[(Speaker, &str)]) -> String {
        if let Some(t) = &self.template {
            let chat: Result<Vec<_>, _> = turns
                .iter()
                .map(|(s, c)| LlamaChatMessage::new(s.as_str().to_owned(), (*c).to_owned()))
                .collect();
            if let Ok(Ok(text)) = chat.map(|c| self.model.apply_chat_template(t, &c, true)) {
                return text;
            }
        }
        let mut out = String::new();
        for (_, c) in turns {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(c);
        }
        out.push_str("\n\n");
        out
    }

    /// A matcher for `schema` over this model's vocabulary.
    ///
    /// # Errors
    /// [`EngineError::Grammar`] when the schema does not compile.
    pub fn matcher(&self, schema: &serde_json::Value) -> Result<Matcher, EngineError> {
        Ok(super::grammar::matcher(&self.factory, schema)?)
    }

    /// Sample a reply to `prompt`, under `matcher` when given; `on_text`
    /// receives the text as it is sampled (whole UTF-8 characters only).
    ///
    /// # Errors
    /// [`EngineError::PromptTooLong`], [`EngineError::Decode`],
    /// [`EngineError::Matcher`].
    pub fn generate(
        &self,
        prompt: &str,
        mut matcher: Option<Matcher>,
        opts: &SampleOptions,
        on_text: &mut dyn FnMut(Sampled<'_>),
    ) -> Result<Generation, EngineError> {
        let started = Instant::now();
        let deadline = opts.timeout.and_then(|t| started.checked_add(t));
        let close_at = opts
            .timeout
            .and_then(|t| started.checked_add(closing::time_reserve_starts(t)));
        let mut timing = Timing::default();
        {
            let mut reported = self
                .load_reported
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !*reported {
                timing.load_ms = self.load_ms;
                *reported = true;
            }
        }
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), vocab.should_add_bos(), true);
        let context = self.model.n_ctx_train().max(1);
        if tokens.is_empty() || tokens.len() >= context as usize {
            return Err(EngineError::PromptTooLong {
                prompt: tokens.len(),
                context,
            });
        }
        let prompt_len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let n_ctx = prompt_len
            .saturating_add(opts.max_tokens.max(1))
            .saturating_add(1)
            .min(context);
        let threads = i32::try_from(opts.threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let mut ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| EngineError::Decode(e.to_string()))?;
        let mut batch = LlamaBatch::new(tokens.len().max(1), 1);
        let last = tokens.len() - 1;
        for (i, t) in tokens.iter().enumerate() {
            let pos = i32::try_from(i).unwrap_or(i32::MAX);
            batch
                .add(*t, pos, &[0], i == last)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| EngineError::Decode(e.to_string()))?;
        timing.prompt_ms = ms(started.elapsed());

        let sampling = Instant::now();
        let mut grammar = Duration::ZERO;
        let mut chain = if opts.temperature > 0.0 {
            LlamaSampler::chain_simple([
                LlamaSampler::temp(opts.temperature),
                LlamaSampler::dist(opts.seed),
            ])
        } else {
            LlamaSampler::greedy()
        };
        let mut text = Utf8Stream::default();
        let mut logits_at = batch.n_tokens() - 1;
        let prompt_pos = i32::try_from(tokens.len()).unwrap_or(i32::MAX);
        let mut pos = prompt_pos;
        let room = n_ctx.saturating_sub(prompt_len);
        let limit = u64::from(opts.max_tokens.min(room));
        // The answer so far: each token, its text, and whether it was
        // sampled closing (Note [Closing under the budget]).
        let mut kept: Vec<(LlamaToken, Vec<u8>, bool)> = Vec::new();
        let mut attempt = 0;
        let mut closing_from = closing::close_from(limit, attempt).unwrap_or(0);
        let mut sampled_total = 0u64;
        let mut rewound = 0u64;
        let mut lexer = closing::Lexer::default();
        let mut ended_closing = false;
        let mut one = LlamaBatch::new(1, 1);
        let stop = loop {
            let n = kept.len() as u64;
            if n >= limit {
                // See Note [Closing under the budget]: cut before the grammar
                // ended; go back and start closing sooner, while a try is left.
                let Some(from) = matcher
                    .is_some()
                    .then(|| closing::close_from(limit, attempt + 1))
                    .flatten()
                else {
                    break Stop::MaxTokens;
                };
                attempt += 1;
                closing_from = from;
                let keep = usize::try_from(from).unwrap_or(usize::MAX).min(kept.len());
                let dropped = kept.len() - keep;
                if let Some(m) = matcher.as_mut() {
                    m.rollback(dropped)
                        .map_err(|e| EngineError::Matcher(e.to_string()))?;
                }
                kept.truncate(keep);
                rewound += dropped as u64;
                // Evaluate the last kept token (or the prompt's last) again
                // for the logits of the next one.
                let at = prompt_pos
                    .saturating_add(i32::try_from(keep).unwrap_or(i32::MAX))
                    .saturating_sub(1);
                let redo = kept.last().map_or(tokens[last], |(t, _, _)| *t);
                ctx.clear_kv_cache_seq(Some(0), Some(u32::try_from(at).unwrap_or(0)), None)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
                one.clear();
                one.add(redo, at, &[0], true)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
                ctx.decode(&mut one)
                    .map_err(|e| EngineError::Decode(e.to_string()))?;
                logits_at = 0;
                pos = at.saturating_add(1);
                text = Utf8Stream::default();
                lexer = closing::Lexer::default();
                for (_, piece, _) in &kept {
                    text.push(piece);
                    lexer.feed(piece);
                }
                on_text(Sampled::Rewound {
                    kept: &text.text,
                    dropped_tokens: dropped as u64,
                });
                continue;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break Stop::Timeout;
            }
            let mut candidates = ctx.token_data_array_ith(logits_at);
            let mut closing_now = false;
            if let Some(m) = matcher.as_mut() {
                let t = Instant::now();
                let mask = m
                    .compute_mask_or_eos()
                    .map_err(|e| EngineError::Matcher(e.to_string()))?;
                for d in &mut candidates.data {
                    if !mask.is_allowed(token_id(d.id())) {
                        d.set_logit(f32::NEG_INFINITY);
                    }
                }
                if n >= closing_from || close_at.is_some_and(|c| Instant::now() >= c) {
                    // Note [Closing under the budget].
                    closing_now = true;
                    keep_closest(&mut candidates.data, self.ranks(lexer.in_string()));
                }
                grammar += t.elapsed();
            }
            candidates.apply_sampler(&mut chain);
            let Some(token) = candidates.selected_token() else {
                return Err(EngineError::Decode("the sampler chose no token".into()));
            };
            if vocab.is_eog(token) {
                // The end token is not part of the answer, but choosing it
                // may have been closing's doing.
                ended_closing = closing_now;
                break Stop::Eos;
            }
            if let Some(m) = matcher.as_mut() {
                let t = Instant::now();
                m.consume_token(token_id(token))
                    .map_err(|e| EngineError::Matcher(e.to_string()))?;
                grammar += t.elapsed();
            }
            sampled_total += 1;
            let piece = vocab.token_to_piece(token, false, None);
            lexer.feed(&piece);
            if let Some(s) = text.push(&piece) {
                on_text(Sampled::Text(&s));
            }
            kept.push((token, piece, closing_now));
            if matcher.as_ref().is_some_and(Matcher::is_stopped) {
                break Stop::Grammar;
            }
            one.clear();
            one.add(token, pos, &[0], true)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            pos = pos.saturating_add(1);
            ctx.decode(&mut one)
                .map_err(|e| EngineError::Decode(e.to_string()))?;
            logits_at = 0;
        };
        if let Some(s) = text.finish() {
            on_text(Sampled::Text(&s));
        }
        let completion = kept.len() as u64;
        timing.sample_ms = ms(sampling.elapsed());
        timing.grammar_ms = ms(grammar);
        timing.tokens = sampled_total;
        timing.tokens_per_second = per_second(sampled_total, timing.sample_ms);
        timing.closing_tokens =
            kept.iter().filter(|(_, _, c)| *c).count() as u64 + u64::from(ended_closing);
        timing.rewound_tokens = rewound;
        Ok(Generation {
            text: text.text,
            prompt_tokens: tokens.len() as u64,
            completion_tokens: completion,
            stop,
            timing,
        })
    }
}

/// Keep only the allowed candidates (finite logit) of the highest
/// [`closing::rank`]; the others get a logit of minus infinity.
fn keep_closest(data: &mut [llama_cpp_2::token::data::LlamaTokenData], ranks: &[u8]) {
    let rank = |d: &llama_cpp_2::token::data::LlamaTokenData| {
        usize::try_from(d.id().0)
            .ok()
            .and_then(|i| ranks.get(i).copied())
            .unwrap_or(0)
    };
    let best = data
        .iter()
        .filter(|d| d.logit().is_finite())
        .map(rank)
        .max()
        .unwrap_or(0);
    for d in data.iter_mut() {
        if d.logit().is_finite() && rank(d) < best {
            d.set_logit(f32::NEG_INFINITY);
        }
    }
}

/// llama.cpp's token id as llguidance's (ids are never negative).
fn token_id(t: LlamaToken) -> u32 {
    u32::try_from(t.0).unwrap_or(u32::MAX)
}

/// Token pieces to text: a token may end inside a UTF-8 character, so bytes
/// wait until the character is whole; bytes that can never form one become
/// U+FFFD (kept visible, not dropped).
#[derive(Debug, Default)]
struct Utf8Stream {
    pending: Vec<u8>,
    text: String,
}

impl Utf8Stream {
    /// Add bytes; returns the new complete text, if any.
    fn push(&mut self, bytes: &[u8]) -> Option<String> {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    break;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(&self.pending[..good]));
                    let Some(bad) = e.error_len() else {
                        self.pending.drain(..good);
                        break;
                    };
                    out.push('\u{FFFD}');
                    self.pending.drain(..good + bad);
                }
            }
        }
        self.text.push_str(&out);
        (!out.is_empty()).then_some(out)
    }

    /// The bytes left at the end (an unfinished character).
    fn finish(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        self.text.push_str(&rest);
        Some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_is_passed_on_whole_characters_only() {
        let mut s = Utf8Stream::default();
        let e = "é".as_bytes();
        assert_eq!(s.push(b"a"), Some("a".into()));
        assert_eq!(s.push(&e[..1]), None);
        assert_eq!(s.push(&e[1..]), Some("é".into()));
        assert_eq!(s.push(&[0xff, b'b']), Some("\u{FFFD}b".into()));
        assert_eq!(s.push(&e[..1]), None);
        assert_eq!(s.finish(), Some("\u{FFFD}".into()));
        assert_eq!(s.text, "aé\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn timings_add_up() {
        let a = Timing {
            sample_ms: 1000.0,
            tokens: 10,
            closing_tokens: 3,
            ..Timing::default()
        };
        let b = a.plus(a);
        assert_eq!(b.tokens, 20);
        assert_eq!(b.closing_tokens, 6);
        assert!((b.tokens_per_second - 10.0).abs() < 1e-9);
    }
}
