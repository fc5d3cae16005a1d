//! Ollama `/api/chat`: `POST {base}/api/chat` with `format: <schema>` and
//! `stream: false` (<https://ollama.com/blog/structured-outputs>); a key,
//! when `OLLAMA_API_KEY` is set, goes in `Authorization: Bearer <key>`
//! (ollama.com, or a proxy in front of a local server).
//! Ollama gives no constrained-decoding guarantee across models, which is why
//! validation and retry matter most here (seed 002, phase 5).

use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

use super::http::Http;
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role, Secret};

/// The Ollama client.
#[derive(Debug)]
pub struct Ollama {
    http: Http,
    base: String,
    key: Option<Secret>,
}

impl Ollama {
    pub(crate) fn new(http: Http, base: String, key: Option<Secret>) -> Self {
        Ollama { http, base, key }
    }
}

/// The request body for `req`.
pub fn body(req: &Request) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(req.messages.iter().map(|m| {
        json!({
            "role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
            "content": m.content,
        })
    }));
    json!({
        "model": req.model,
        "messages": messages,
        "format": req.schema,
        "stream": false,
        "options": {"num_predict": req.max_tokens},
    })
}

impl Provider for Ollama {
    fn kind(&self) -> Kind {
        Kind::Ollama
    }

    fn body(&self, req: &Request) -> Value {
        body(req)
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(async move {
            let url = format!("{}/api/chat", self.base);
            let headers = super::http::key_headers(
                AUTHORIZATION,
                self.key
                    .as_ref()
                    .map(|key| format!("Bearer {}", key.expose())),
            );
            self.http.post(&url, headers, &body(req)).await
        })
    }
}
