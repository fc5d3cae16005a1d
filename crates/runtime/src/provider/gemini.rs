//! Gemini `generateContent`: `POST {base}/v1beta/models/{model}:generateContent`
//! with `x-goog-api-key`; the schema goes in
//! `generationConfig.responseJsonSchema` with `responseMimeType:
//! application/json` (<https://ai.google.dev/gemini-api/docs/structured-output>).
//! The key is sent as a header, never in the URL.

use reqwest::header::HeaderName;
use serde_json::{Value, json};

use super::http::Http;
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role, Secret};

/// The Gemini client.
#[derive(Debug)]
pub struct Gemini {
    http: Http,
    base: String,
    key: Option<Secret>,
}

impl Gemini {
    pub(crate) fn new(http: Http, base: String, key: Option<Secret>) -> Self {
        Gemini { http, base, key }
    }
}

/// The request body for `req`.
pub fn body(req: &Request) -> Value {
    let contents: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            json!({
                "role": match m.role { Role::User => "user", Role::Assistant => "model" },
                "parts": [{"text": m.content}],
            })
        })
        .collect();
    let mut body = json!({
        "contents": contents,
        "generationConfig": {
            "responseMimeType": "application/json",
            "responseJsonSchema": req.schema,
            "maxOutputTokens": req.max_tokens,
        },
    });
    if let Some(system) = &req.system {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    body
}

impl Provider for Gemini {
    fn kind(&self) -> Kind {
        Kind::Gemini
    }

    fn body(&self, req: &Request) -> Value {
        body(req)
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(async move {
            let headers = super::http::key_headers(
                HeaderName::from_static("x-goog-api-key"),
                self.key.as_ref().map(|key| key.expose().to_owned()),
            );
            let url = format!("{}/v1beta/models/{}:generateContent", self.base, req.model);
            self.http.post(&url, headers, &body(req)).await
        })
    }
}
