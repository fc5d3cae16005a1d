//! Anthropic Messages API: `POST {base}/v1/messages` with `x-api-key` and
//! `anthropic-version: 2023-06-01`; the schema goes in
//! `output_config.format = {type: "json_schema", schema}` and tools are sent
//! with `strict: true`
//! (<https://platform.claude.com/docs/en/build-with-claude/structured-outputs>).

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Value, json};

use super::http::Http;
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role, Secret};

/// The API version header value.
pub const VERSION: &str = "2023-06-01";

/// The Anthropic client.
#[derive(Debug)]
pub struct Anthropic {
    http: Http,
    base: String,
    key: Option<Secret>,
}

impl Anthropic {
    pub(crate) fn new(http: Http, base: String, key: Option<Secret>) -> Self {
        Anthropic { http, base, key }
    }
}

/// The request body for `req`.
pub fn body(req: &Request) -> Value {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            json!({
                "role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
                "content": m.content,
            })
        })
        .collect();
    let mut body = json!({
        "model": req.model,
        "max_tokens": req.max_tokens,
        "messages": messages,
        "output_config": {"format": {"type": "json_schema", "schema": req.schema}},
    });
    if let Some(system) = &req.system {
        body["system"] = Value::String(system.clone());
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                    "strict": true,
                })
            })
            .collect();
    }
    body
}

impl Provider for Anthropic {
    fn kind(&self) -> Kind {
        Kind::Anthropic
    }

    fn body(&self, req: &Request) -> Value {
        body(req)
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(async move {
            let mut headers = super::http::key_headers(
                HeaderName::from_static("x-api-key"),
                self.key.as_ref().map(|key| key.expose().to_owned()),
            );
            headers.insert("anthropic-version", HeaderValue::from_static(VERSION));
            let url = format!("{}/v1/messages", self.base);
            self.http.post(&url, headers, &body(req)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn tools_are_sent_strict_beside_the_output_format() {
        let req = crate::provider::sample_request(
            "claude-sonnet-4-5",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}),
        );
        let body = body(&req);
        assert_eq!(
            body["tools"],
            json!([{
                "name": "lookup",
                "description": "Look a service up",
                "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false},
                "strict": true,
            }])
        );
        assert_eq!(
            body["output_config"],
            json!({"format": {"type": "json_schema", "schema": {"type": "object"}}})
        );
        let none = Request {
            tools: Vec::new(),
            ..req
        };
        assert!(super::body(&none).get("tools").is_none());
    }
}
