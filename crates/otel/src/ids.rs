//! Trace and span ids derived from the session id.
//!
//! Note \[Derived ids\]: a session may be exported several times and by
//! several processes: live by `run` (or by each `hook` call of a Claude
//! Code session), then again by `export otlp` from the store. Ids drawn at
//! random would scatter one session over many traces and duplicate its
//! spans. So the trace id is a hash of the session id, and each span id a
//! hash of the session id, the span's kind and its key (the tool call's id,
//! the attempt number, the hook call's time): the same span exported twice
//! has the same id, and backends that de-duplicate by span id show it once;
//! a hook's spans and a later export of the whole session share one trace.
//! SHA-256 is used for its spread, not for secrecy; a zero id (invalid in
//! OTLP) cannot come out of it in practice, but is mapped to 1 anyway.

use opentelemetry::trace::{SpanId, TraceId};
use sha2::{Digest, Sha256};

fn digest(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"agentshape-otel\0");
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    h.finalize().into()
}

/// The trace id of session `session`.
pub fn trace_id(session: &str) -> TraceId {
    let d = digest(&["trace", session]);
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    if b == [0; 16] {
        b[15] = 1;
    }
    TraceId::from_bytes(b)
}

/// The id of the span of kind `kind` and key `key` in session `session`.
pub fn span_id(session: &str, kind: &str, key: &str) -> SpanId {
    let d = digest(&["span", session, kind, key]);
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    if b == [0; 8] {
        b[7] = 1;
    }
    SpanId::from_bytes(b)
}

/// The id of a session's root (`invoke_agent`) span.
pub fn root_span_id(session: &str) -> SpanId {
    span_id(session, "root", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_session_gives_the_same_ids_and_others_differ() {
        assert_eq!(trace_id("s1"), trace_id("s1"));
        assert_ne!(trace_id("s1"), trace_id("s2"));
        assert_eq!(span_id("s1", "tool", "a"), span_id("s1", "tool", "a"));
        assert_ne!(span_id("s1", "tool", "a"), span_id("s1", "tool", "b"));
        assert_ne!(span_id("s1", "tool", "a"), span_id("s2", "tool", "a"));
        assert_ne!(root_span_id("s1"), span_id("s1", "tool", ""));
        // Parts are separated: ("ab","c") is not ("a","bc").
        assert_ne!(span_id("s", "ab", "c"), span_id("s", "a", "bc"));
        assert_ne!(trace_id("x"), TraceId::INVALID);
    }
}
