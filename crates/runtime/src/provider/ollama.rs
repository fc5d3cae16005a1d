//! Ollama `/api/chat`: `POST {base}/api/chat` with `format: <schema>` and
//! `stream: false` (<https://ollama.com/blog/structured-outputs>); no key.
//! Ollama gives no constrained-decoding guarantee across models, which is why
//! validation and retry matter most here (seed 002, phase 5).

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::http::Http;
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role};

/// The Ollama client.
#[derive(Debug)]
pub struct Ollama {
    http: Http,
    base: String,
}

impl Ollama {
    pub(crate) fn new(http: Http, base: String) -> Self {
        Ollama { http, base }
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
            self.http.post(&url, HeaderMap::new(), &body(req)).await
        })
    }
}
