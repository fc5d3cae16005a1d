//! `--provider local`: a GGUF model run in-process by llama.cpp, sampled
//! under an llguidance grammar compiled from the request's schema.
//!
//! The grammar makes invalid output unlikely, not impossible to mishandle:
//! the reply still goes through `retry::ask`'s extract → validate → retry
//! like every provider's (seed 003: remote guarantees are not trusted, and
//! an in-process one is no different). With `constrained: false` the same
//! model samples freely and the schema goes into the prompt instead, which
//! measures what the constraint is worth on the same prompts.

pub mod closing;
pub mod engine;
pub mod grammar;

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentshape_core::decode::Format;
use agentshape_core::event::ResultEvent;
use agentshape_core::summary::{ResultInfo, SummaryBuilder, Usage};
use agentshape_core::{ErrorCategory, Event};
use serde_json::{Value, json};

use self::engine::{
    Engine, EngineError, Generation, SampleOptions, Sampled, Speaker, Stop, Timing,
};
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role};
use crate::hub::{Hub, HubBody};
use crate::partial::PartialTracker;

/// Where sampled text is published as it is produced (`--live`, ops sessions).
#[derive(Debug, Clone)]
pub struct Live {
    /// The hub.
    pub hub: Hub,
    /// The session the messages belong to.
    pub session_id: String,
}

/// The local provider: one loaded model, its sampling options, and the
/// timing summed over its calls.
#[derive(Debug)]
pub struct Local {
    engine: Arc<Engine>,
    model_name: String,
    opts: SampleOptions,
    constrained: bool,
    live: Option<Live>,
    timing: Mutex<Option<Timing>>,
}

/// Why a local provider could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The `--model` argument names no file (the message names `model fetch`).
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// The file did not load.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl Local {
    /// The provider for a `--model` argument (`None`: the default model):
    /// resolved through [`crate::model::resolve`], then loaded. The one
    /// constructor `ask` and `ops` tiers share.
    ///
    /// # Errors
    /// [`SetupError`] when the model is missing or does not load.
    pub fn open(
        spec: Option<&str>,
        opts: SampleOptions,
        constrained: bool,
    ) -> Result<Local, SetupError> {
        let path = crate::model::resolve(spec)?;
        let name = spec.unwrap_or(crate::model::DEFAULT_MODEL);
        Ok(Local::load(&path, name, opts, constrained)?)
    }

    /// Load (or reuse, Note [One model per process]) the model in `path`.
    ///
    /// # Errors
    /// [`EngineError`] when the backend or the model fails to load.
    pub fn load(
        path: &Path,
        model_name: &str,
        opts: SampleOptions,
        constrained: bool,
    ) -> Result<Local, EngineError> {
        Ok(Local {
            engine: Engine::load(path)?,
            model_name: model_name.to_owned(),
            opts,
            constrained,
            live: None,
            timing: Mutex::new(None),
        })
    }

    /// Publish sampled text to `live` as it is produced.
    #[must_use]
    pub fn with_live(mut self, live: Live) -> Local {
        self.live = Some(live);
        self
    }

    /// The engine (for its chat-template warning).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Timing summed over every call so far (`None` before the first).
    pub fn timing(&self) -> Option<Timing> {
        *self.timing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn turns(&self, req: &Request) -> Vec<(Speaker, String)> {
        let mut system = req.system.clone().unwrap_or_default();
        if !self.constrained {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&schema_instructions(&req.schema));
        }
        let mut turns = Vec::with_capacity(req.messages.len() + 1);
        if !system.is_empty() {
            turns.push((Speaker::System, system));
        }
        for m in &req.messages {
            let who = match m.role {
                Role::User => Speaker::User,
                Role::Assistant => Speaker::Assistant,
            };
            turns.push((who, m.content.clone()));
        }
        turns
    }
}

/// The schema as the text providers' prompts carry it (`--unconstrained`).
pub fn schema_instructions(schema: &Value) -> String {
    format!(
        "Reply with only a JSON value that matches this JSON Schema, and nothing else:\n{schema}"
    )
}

fn engine_error(e: &EngineError) -> ProviderError {
    ProviderError::Agent {
        provider: Kind::Local.as_str(),
        message: e.to_string(),
        category: ErrorCategory::Api,
    }
}

/// The run summary of one generation, as core builds it for a text reply.
fn summary(model: &str, g: &Generation) -> agentshape_core::RunSummary {
    let stop_reason = match g.stop {
        Stop::Eos => "end_of_generation",
        Stop::Grammar => "grammar_complete",
        Stop::MaxTokens => "max_tokens",
        Stop::Timeout => "timeout",
    };
    let mut b = SummaryBuilder::new();
    b.push(Event::Init {
        session_id: None,
        model: Some(model.to_owned()),
        api_key_source: None,
        cwd: None,
    });
    b.push(Event::Message {
        id: None,
        stop_reason: Some(stop_reason.to_owned()),
        parent_tool_use_id: None,
    });
    if !g.text.is_empty() {
        b.push(Event::Text {
            text: g.text.clone(),
        });
    }
    let (error, category) = match g.stop {
        Stop::MaxTokens => (
            Some(format!(
                "max_tokens: output cut at the token limit ({} tokens)",
                g.completion_tokens
            )),
            Some(ErrorCategory::MaxTokens),
        ),
        Stop::Timeout => (
            Some(format!(
                "timeout: sampling stopped at the time limit ({} tokens, {:.0} ms)",
                g.completion_tokens,
                g.timing.prompt_ms + g.timing.sample_ms
            )),
            Some(ErrorCategory::Timeout),
        ),
        Stop::Eos | Stop::Grammar => (None, None),
    };
    b.push(Event::Result(Box::new(ResultEvent {
        info: ResultInfo {
            usage: Usage {
                input_tokens: g.prompt_tokens,
                output_tokens: g.completion_tokens,
            },
            text: Some(g.text.clone()),
            stop_reason: Some(stop_reason.to_owned()),
            duration_ms: Some(Duration::from_secs_f64(
                (g.timing.prompt_ms + g.timing.sample_ms).max(0.0) / 1000.0,
            ))
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            ..ResultInfo::default()
        },
        structured_output: None,
        structured_inexact: Vec::new(),
        session_id: None,
        error,
        category,
    })));
    b.finish(Format::Text)
}

impl Provider for Local {
    fn kind(&self) -> Kind {
        Kind::Local
    }

    fn body(&self, req: &Request) -> Value {
        let messages: Vec<Value> = self
            .turns(req)
            .into_iter()
            .map(|(s, c)| {
                let role = match s {
                    Speaker::System => "system",
                    Speaker::User => "user",
                    Speaker::Assistant => "assistant",
                };
                json!({"role": role, "content": c})
            })
            .collect();
        json!({
            "model": self.model_name,
            "file": self.engine.path().display().to_string(),
            "messages": messages,
            "grammar": if self.constrained { req.schema.clone() } else { Value::Null },
            "max_tokens": req.max_tokens,
            "temperature": self.opts.temperature,
            "seed": self.opts.seed,
            "threads": self.opts.threads,
        })
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        let engine = Arc::clone(&self.engine);
        let turns = self.turns(req);
        let schema = req.schema.clone();
        let constrained = self.constrained;
        let opts = SampleOptions {
            max_tokens: req.max_tokens,
            ..self.opts
        };
        let live = self.live.clone();
        let model = self.model_name.clone();
        Box::pin(async move {
            // Sampling is CPU-bound for seconds: off the async threads, so the
            // live printer and an ops supervisor keep running meanwhile.
            let job = tokio::task::spawn_blocking(move || {
                let matcher = if constrained {
                    Some(engine.matcher(&schema)?)
                } else {
                    None
                };
                let refs: Vec<(Speaker, &str)> =
                    turns.iter().map(|(s, c)| (*s, c.as_str())).collect();
                let prompt = engine.prompt(&refs);
                let mut tracker = live.as_ref().map(|_| PartialTracker::new(Some(&schema)));
                let mut publish = |sampled: Sampled<'_>| {
                    let (Some(live), Some(tracker)) = (&live, tracker.as_mut()) else {
                        return;
                    };
                    let text = match sampled {
                        Sampled::Text(text) => {
                            let event = Event::Partial {
                                index: None,
                                text: Some(text.to_owned()),
                                partial_json: None,
                            };
                            live.hub.publish(&live.session_id, HubBody::Event { event });
                            text
                        }
                        Sampled::Rewound {
                            kept,
                            dropped_tokens,
                        } => {
                            // See Note [Closing under the budget]: the partial
                            // object starts again from what was kept.
                            let message = format!(
                                "the answer did not fit --max-tokens: {dropped_tokens} tokens rolled back to close it sooner"
                            );
                            live.hub.publish(
                                &live.session_id,
                                HubBody::Event {
                                    event: Event::Warning { message },
                                },
                            );
                            *tracker = PartialTracker::new(Some(&schema));
                            kept
                        }
                    };
                    let event = Event::Partial {
                        index: None,
                        text: Some(text.to_owned()),
                        partial_json: None,
                    };
                    let snapshot = tracker.feed(&event);
                    if let Some(s) = snapshot {
                        live.hub.publish(
                            &live.session_id,
                            HubBody::Partial {
                                value: s.value,
                                fields: s.fields,
                            },
                        );
                    }
                };
                engine.generate(&prompt, matcher, &opts, &mut publish)
            });
            let generation = match job.await {
                Ok(Ok(g)) => g,
                Ok(Err(e)) => return Err(engine_error(&e)),
                Err(e) => {
                    return Err(ProviderError::Agent {
                        provider: Kind::Local.as_str(),
                        message: format!("the sampling thread failed: {e}"),
                        category: ErrorCategory::Api,
                    });
                }
            };
            {
                let mut t = self.timing.lock().unwrap_or_else(PoisonError::into_inner);
                *t = Some(t.map_or(generation.timing, |t| t.plus(generation.timing)));
            }
            Ok(Reply {
                status: None,
                retry_after: None,
                summary: summary(&model, &generation),
            })
        })
    }
}

#[cfg(test)]
mod tests;
