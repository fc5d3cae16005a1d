//! Stand-in provider HTTP servers for tests: a real HTTP/1.1 server (hyper) on
//! 127.0.0.1 with a random port, one per test, that checks each request
//! against the provider's documented request shape and answers with scripted,
//! documented response shapes.
//!
//! A request that breaks the documented shape is answered with HTTP 400 in
//! the provider's error shape and recorded in [`StandIn::violations`], so a
//! test can assert there were none.

// No unsafe code here; the workspace lint is `deny` only for one function of the runtime.
#![forbid(unsafe_code)]
// A stand-in for tests: a poisoned lock or a failed bind is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::missing_panics_doc,
    clippy::expect_used,
    clippy::panic
)]

pub mod otlp;
pub mod pg;
pub mod server;
pub mod sqlite;
pub mod webhook;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};

/// Which provider API the stand-in plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages.
    Anthropic,
    /// `OpenAI` Chat Completions.
    OpenaiChat,
    /// `OpenAI` Responses.
    OpenaiResponses,
    /// Gemini `generateContent`.
    Gemini,
    /// Ollama `/api/chat`.
    Ollama,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Scripted {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (`retry-after`, ...).
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Value,
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Path and query.
    pub path: String,
    /// Headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: Value,
}

impl Recorded {
    /// A header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Scripted>,
    requests: Vec<Recorded>,
    violations: Vec<String>,
}

/// A running stand-in server; stops when dropped.
pub struct StandIn {
    server: server::Server,
    state: Arc<Mutex<State>>,
}

impl StandIn {
    /// Start a stand-in for `api` answering with `script`, in order.
    pub fn start(api: Api, script: Vec<Scripted>) -> StandIn {
        let state = Arc::new(Mutex::new(State {
            script: script.into(),
            ..State::default()
        }));
        let st = state.clone();
        let server = server::Server::start(move |req| handle(api, st.clone(), req));
        StandIn { server, state }
    }

    /// The base URL to give the client (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Every departure from the documented request shape.
    pub fn violations(&self) -> Vec<String> {
        self.state.lock().unwrap().violations.clone()
    }
}

async fn handle(
    api: Api,
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let server::Received {
        method,
        path,
        headers,
        body,
    } = server::receive(req).await;
    let body: Value = serde_json::from_slice(&body.unwrap_or_default()).unwrap_or(Value::Null);
    let rec = Recorded {
        path,
        headers,
        body,
    };
    let mut problems = check(api, &rec);
    if method != hyper::Method::POST {
        problems.push(format!("method {method}, want POST"));
    }
    let mut st = state.lock().unwrap();
    st.requests.push(rec);
    let answer = if problems.is_empty() {
        st.script.pop_front().unwrap_or_else(|| {
            st.violations.push("script exhausted".to_owned());
            error_reply(api, 500, "stand-in script exhausted")
        })
    } else {
        let text = problems.join("; ");
        st.violations.extend(problems);
        error_reply(api, 400, &format!("stand-in: {text}"))
    };
    drop(st);
    let mut resp = Response::builder()
        .status(answer.status)
        .header("content-type", "application/json");
    for (n, v) in &answer.headers {
        resp = resp.header(n.as_str(), v.as_str());
    }
    Ok(resp
        .body(Full::new(Bytes::from(answer.body.to_string())))
        .unwrap())
}

/// The documented request shape of `api`: path, auth header, and where the
/// schema and the conversation go.
fn check(api: Api, r: &Recorded) -> Vec<String> {
    let mut p = Vec::new();
    let b = &r.body;
    let mut need = |ok: bool, what: &str| {
        if !ok {
            p.push(what.to_owned());
        }
    };
    let is_obj = |v: &Value| v.is_object();
    let messages_ok = |v: &Value, roles: &[&str]| {
        v.as_array().is_some_and(|m| {
            !m.is_empty()
                && m.iter().all(|x| {
                    x["role"].as_str().is_some_and(|r| roles.contains(&r))
                        && x["content"].is_string()
                })
        })
    };
    match api {
        Api::Anthropic => {
            need(r.path == "/v1/messages", "path must be /v1/messages");
            need(
                r.header("x-api-key").is_some_and(|k| !k.is_empty()),
                "x-api-key header missing",
            );
            need(
                r.header("anthropic-version").is_some(),
                "anthropic-version header missing",
            );
            need(b["model"].is_string(), "model must be a string");
            need(b["max_tokens"].is_u64(), "max_tokens must be an integer");
            need(
                messages_ok(&b["messages"], &["user", "assistant"]),
                "messages must be [{role: user|assistant, content}]",
            );
            need(
                b["messages"][0]["role"] == "user",
                "the first message must be a user turn",
            );
            need(
                b["output_config"]["format"]["type"] == "json_schema",
                "output_config.format.type must be json_schema",
            );
            need(
                is_obj(&b["output_config"]["format"]["schema"]),
                "output_config.format.schema must be an object",
            );
        }
        Api::OpenaiChat => {
            need(
                r.path == "/chat/completions",
                "path must be /chat/completions",
            );
            need(
                r.header("authorization")
                    .is_some_and(|a| a.starts_with("Bearer ")),
                "Authorization: Bearer missing",
            );
            need(b["model"].is_string(), "model must be a string");
            need(
                messages_ok(&b["messages"], &["system", "user", "assistant"]),
                "messages must be [{role, content}]",
            );
            let rf = &b["response_format"];
            need(
                rf["type"] == "json_schema",
                "response_format.type must be json_schema",
            );
            need(
                rf["json_schema"]["name"].is_string(),
                "response_format.json_schema.name missing",
            );
            need(
                is_obj(&rf["json_schema"]["schema"]),
                "response_format.json_schema.schema must be an object",
            );
            need(
                rf["json_schema"]["strict"] == true,
                "response_format.json_schema.strict must be true",
            );
        }
        Api::OpenaiResponses => {
            need(r.path == "/responses", "path must be /responses");
            need(
                r.header("authorization")
                    .is_some_and(|a| a.starts_with("Bearer ")),
                "Authorization: Bearer missing",
            );
            need(b["model"].is_string(), "model must be a string");
            need(
                messages_ok(&b["input"], &["user", "assistant", "system", "developer"]),
                "input must be [{role, content}]",
            );
            let f = &b["text"]["format"];
            need(
                f["type"] == "json_schema",
                "text.format.type must be json_schema",
            );
            need(f["name"].is_string(), "text.format.name missing");
            need(is_obj(&f["schema"]), "text.format.schema must be an object");
        }
        Api::Gemini => {
            need(
                r.path.starts_with("/v1beta/models/") && r.path.ends_with(":generateContent"),
                "path must be /v1beta/models/{model}:generateContent",
            );
            need(!r.path.contains("key="), "the key must not be in the URL");
            need(
                r.header("x-goog-api-key").is_some_and(|k| !k.is_empty()),
                "x-goog-api-key header missing",
            );
            let ok = b["contents"].as_array().is_some_and(|c| {
                !c.is_empty()
                    && c.iter().all(|x| {
                        x["role"]
                            .as_str()
                            .is_some_and(|r| r == "user" || r == "model")
                            && x["parts"][0]["text"].is_string()
                    })
            });
            need(ok, "contents must be [{role: user|model, parts: [{text}]}]");
            let g = &b["generationConfig"];
            need(
                g["responseMimeType"] == "application/json",
                "generationConfig.responseMimeType must be application/json",
            );
            need(
                is_obj(&g["responseJsonSchema"]),
                "generationConfig.responseJsonSchema must be an object",
            );
        }
        Api::Ollama => {
            need(r.path == "/api/chat", "path must be /api/chat");
            need(b["model"].is_string(), "model must be a string");
            need(
                messages_ok(&b["messages"], &["system", "user", "assistant"]),
                "messages must be [{role, content}]",
            );
            need(is_obj(&b["format"]), "format must be the schema object");
            need(b["stream"] == false, "stream must be false");
        }
    }
    p
}

/// An error body in `api`'s documented shape.
pub fn error_reply(api: Api, status: u16, message: &str) -> Scripted {
    let body = match api {
        Api::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                403 => "permission_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                400 => "invalid_request_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Api::OpenaiChat | Api::OpenaiResponses => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", "invalid_api_key"),
                429 => ("requests", "rate_limit_exceeded"),
                400 => ("invalid_request_error", "invalid_request"),
                _ => ("server_error", "server_error"),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        Api::Gemini => {
            let st = match status {
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                429 => "RESOURCE_EXHAUSTED",
                400 => "INVALID_ARGUMENT",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status, "message": message, "status": st}})
        }
        Api::Ollama => json!({"error": message}),
    };
    Scripted {
        status,
        headers: Vec::new(),
        body,
    }
}

/// How a successful (HTTP 200) answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Normally.
    Done,
    /// At the output token limit.
    MaxTokens,
    /// The model refused.
    Refusal,
}

/// A 200 answer in `api`'s documented shape holding `text`, with the given
/// usage and stop.
pub fn text_reply(
    api: Api,
    text: &str,
    stop: Stop,
    input_tokens: u64,
    output_tokens: u64,
) -> Scripted {
    let body = match api {
        Api::Anthropic => {
            let reason = match stop {
                Stop::Done => "end_turn",
                Stop::MaxTokens => "max_tokens",
                Stop::Refusal => "refusal",
            };
            let content = if text.is_empty() {
                json!([])
            } else {
                json!([{"type": "text", "text": text}])
            };
            json!({"id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin",
                   "content": content, "stop_reason": reason, "stop_sequence": null,
                   "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}})
        }
        Api::OpenaiChat => {
            let (reason, content, refusal) = match stop {
                Stop::Done => ("stop", json!(text), Value::Null),
                Stop::MaxTokens => ("length", json!(text), Value::Null),
                Stop::Refusal => ("stop", Value::Null, json!(text)),
            };
            json!({"id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": "gpt-standin",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal},
                                "finish_reason": reason}],
                   "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                             "total_tokens": input_tokens + output_tokens}})
        }
        Api::OpenaiResponses => {
            let part = match stop {
                Stop::Refusal => json!({"type": "refusal", "refusal": text}),
                _ => json!({"type": "output_text", "text": text, "annotations": []}),
            };
            let (status, incomplete) = match stop {
                Stop::MaxTokens => ("incomplete", json!({"reason": "max_output_tokens"})),
                _ => ("completed", Value::Null),
            };
            json!({"id": "resp_standin", "object": "response", "status": status, "model": "gpt-standin",
                   "incomplete_details": incomplete, "error": null,
                   "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [part]}],
                   "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                             "total_tokens": input_tokens + output_tokens}})
        }
        Api::Gemini => {
            let reason = match stop {
                Stop::Done => "STOP",
                Stop::MaxTokens => "MAX_TOKENS",
                Stop::Refusal => "SAFETY",
            };
            let parts = if text.is_empty() || stop == Stop::Refusal {
                json!([])
            } else {
                json!([{"text": text}])
            };
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": reason, "index": 0}],
                   "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": output_tokens,
                                     "totalTokenCount": input_tokens + output_tokens},
                   "modelVersion": "gemini-standin", "responseId": "standin"})
        }
        Api::Ollama => {
            let reason = match stop {
                Stop::MaxTokens => "length",
                _ => "stop",
            };
            json!({"model": "llama-standin", "created_at": "2026-01-01T00:00:00Z",
                   "message": {"role": "assistant", "content": text}, "done": true, "done_reason": reason,
                   "prompt_eval_count": input_tokens, "eval_count": output_tokens})
        }
    };
    Scripted {
        status: 200,
        headers: Vec::new(),
        body,
    }
}

/// A 429 in `api`'s shape with `retry-after: seconds`.
pub fn rate_limited(api: Api, seconds: u32) -> Scripted {
    let mut s = error_reply(api, 429, "rate limit exceeded, please slow down");
    s.headers
        .push(("retry-after".to_owned(), seconds.to_string()));
    s
}

/// What a [`Hostile`] server answers to one request: the shapes a broken
/// proxy or a malicious base URL can send, written as raw HTTP/1.1 bytes so
/// nothing in between tidies them up.
#[derive(Debug, Clone)]
pub enum Answer {
    /// `status` with `Location: location` and an empty body; a `location`
    /// starting with `/` is a same-origin redirect, and `{path}` in it is
    /// replaced by the request's path.
    Redirect {
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// Where to.
        location: String,
    },
    /// `status` with `body`, as `Content-Length` says.
    Raw {
        /// HTTP status.
        status: u16,
        /// The exact body bytes (need not be JSON or UTF-8).
        body: Vec<u8>,
    },
    /// A 200 that claims `Content-Length: claimed`, sends `body` (shorter)
    /// and closes the connection.
    Truncated {
        /// The length announced.
        claimed: usize,
        /// What is actually sent.
        body: Vec<u8>,
    },
    /// A 200 with a chunked body that never ends: `{"x":"` then 64 KiB
    /// chunks of `a`, until the client hangs up or `limit` bytes were sent
    /// (a hang guard for the test, not part of the behaviour under test).
    Endless {
        /// Stop after this many bytes.
        limit: u64,
    },
}

/// A raw HTTP/1.1 server on 127.0.0.1 answering with scripted [`Answer`]s
/// (the last one repeats) and recording every request's path and headers.
pub struct Hostile {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    sent: Arc<std::sync::atomic::AtomicU64>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hostile {
    /// Start a server answering with `script`, in order, the last repeated.
    pub fn start(script: Vec<Answer>) -> Hostile {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        assert!(!script.is_empty(), "a hostile server needs an answer");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (reqs, total, halt) = (requests.clone(), sent.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let script = Arc::new(Mutex::new(VecDeque::from(script)));
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let (script, reqs, total) = (script.clone(), reqs.clone(), total.clone());
                std::thread::spawn(move || serve_raw(stream, &script, &reqs, &total));
            }
        });
        Hostile {
            addr,
            requests,
            sent,
            stop,
            thread: Some(thread),
        }
    }

    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received, in order (the body is not kept).
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Body bytes written so far, over every connection.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = std::net::TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Read one request (headers, then `Content-Length` bytes), record it, and
/// write the next scripted answer.
fn serve_raw(
    mut stream: std::net::TcpStream,
    script: &Mutex<VecDeque<Answer>>,
    reqs: &Mutex<Vec<Recorded>>,
    total: &std::sync::atomic::AtomicU64,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::Ordering;
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let len = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        reqs.lock().unwrap().push(Recorded {
            path: path.clone(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        let answer = {
            let mut s = script.lock().unwrap();
            if s.len() > 1 {
                s.pop_front().unwrap()
            } else {
                s.front().cloned().unwrap()
            }
        };
        let keep_open = match answer {
            Answer::Redirect { status, location } => {
                let location = location.replace("{path}", &path);
                let head = format!(
                    "HTTP/1.1 {status} Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
                );
                stream.write_all(head.as_bytes()).is_ok()
            }
            Answer::Raw { status, body } => {
                let head = format!(
                    "HTTP/1.1 {status} Answer\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                );
                let ok =
                    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(&body).is_ok();
                total.fetch_add(body.len() as u64, Ordering::SeqCst);
                ok
            }
            Answer::Truncated { claimed, body } => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {claimed}\r\n\r\n"
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
                total.fetch_add(body.len() as u64, Ordering::SeqCst);
                false
            }
            Answer::Endless { limit } => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n6\r\n{\"x\":\"\r\n";
                let chunk = format!("10000\r\n{}\r\n", "a".repeat(0x10000));
                let mut ok = stream.write_all(head.as_bytes()).is_ok();
                let mut sent = 0u64;
                while ok && sent < limit {
                    ok = stream.write_all(chunk.as_bytes()).is_ok();
                    sent += 0x10000;
                    total.fetch_add(0x10000, Ordering::SeqCst);
                }
                false
            }
        };
        let _ = stream.flush();
        if !keep_open {
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}
