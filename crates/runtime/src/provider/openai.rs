//! `OpenAI`: Chat Completions (`POST {base}/chat/completions`, schema in
//! `response_format = {type: "json_schema", json_schema: {name, schema,
//! strict: true}}`) and the Responses API (`POST {base}/responses`, schema in
//! `text.format = {type: "json_schema", name, schema, strict: true}`), both
//! with `Authorization: Bearer <key>`
//! (<https://platform.openai.com/docs/guides/structured-outputs>).

use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

use super::http::Http;
use super::{BoxFuture, Kind, Provider, ProviderError, Reply, Request, Role, Secret};

/// The `OpenAI` client (Chat Completions or Responses).
#[derive(Debug)]
pub struct OpenAi {
    http: Http,
    base: String,
    key: Option<Secret>,
    responses: bool,
}

impl OpenAi {
    pub(crate) fn new(http: Http, base: String, key: Option<Secret>, responses: bool) -> Self {
        OpenAi {
            http,
            base,
            key,
            responses,
        }
    }
}

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The Chat Completions body for `req`.
pub fn chat_body(req: &Request) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(
        req.messages
            .iter()
            .map(|m| json!({"role": role(m.role), "content": m.content})),
    );
    let mut body = json!({
        "model": req.model,
        "messages": messages,
        "max_completion_tokens": req.max_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": req.schema_name, "schema": req.schema, "strict": true},
        },
    });
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description,
                    "parameters": t.input_schema, "strict": true,
                }})
            })
            .collect();
    }
    body
}

/// The Responses API body for `req`.
pub fn responses_body(req: &Request) -> Value {
    let input: Vec<Value> = req
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": m.content}))
        .collect();
    let mut body = json!({
        "model": req.model,
        "input": input,
        "max_output_tokens": req.max_tokens,
        "text": {"format": {
            "type": "json_schema", "name": req.schema_name, "schema": req.schema, "strict": true,
        }},
    });
    if let Some(system) = &req.system {
        body["instructions"] = Value::String(system.clone());
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.input_schema, "strict": true})
            })
            .collect();
    }
    body
}

impl Provider for OpenAi {
    fn kind(&self) -> Kind {
        if self.responses {
            Kind::OpenaiResponses
        } else {
            Kind::OpenaiChat
        }
    }

    fn body(&self, req: &Request) -> Value {
        if self.responses {
            responses_body(req)
        } else {
            chat_body(req)
        }
    }

    fn call<'a>(&'a self, req: &'a Request) -> BoxFuture<'a, Result<Reply, ProviderError>> {
        Box::pin(async move {
            let headers = super::http::key_headers(
                AUTHORIZATION,
                self.key
                    .as_ref()
                    .map(|key| format!("Bearer {}", key.expose())),
            );
            let path = if self.responses {
                "responses"
            } else {
                "chat/completions"
            };
            let url = format!("{}/{path}", self.base);
            self.http.post(&url, headers, &self.body(req)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> Request {
        crate::provider::sample_request("gpt-4o-mini", json!({"type": "object"}))
    }

    #[test]
    fn chat_tools_are_strict_functions() {
        assert_eq!(
            chat_body(&req())["tools"],
            json!([{"type": "function", "function": {
                "name": "lookup", "description": "Look a service up",
                "parameters": {"type": "object"}, "strict": true,
            }}])
        );
    }

    #[test]
    fn responses_tools_are_strict_functions() {
        assert_eq!(
            responses_body(&req())["tools"],
            json!([{"type": "function", "name": "lookup", "description": "Look a service up",
                    "parameters": {"type": "object"}, "strict": true}])
        );
    }
}
