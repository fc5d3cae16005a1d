-- agentshape store: what each model call of a native session used (issue
-- 39), for usage reports by the call's own time. The same logical schema as
-- postgres/0009_usage.sql (Note [One logical schema] in src/migrate.rs).
--
-- `key` names the call across files: `msg:<message id>:<request id>` for a
-- Claude Code message, which a resumed session repeats in its new file (the
-- first session stored keeps it, so every total counts it once); a call
-- only its file can name is `<session id>#<n>`.
CREATE TABLE usage_calls (
    key                   TEXT PRIMARY KEY,
    session_id            TEXT NOT NULL,
    at_ms                 INTEGER NOT NULL,
    model                 TEXT NOT NULL,
    sidechain             INTEGER NOT NULL,
    input_tokens          INTEGER NOT NULL,
    output_tokens         INTEGER NOT NULL,
    reasoning_tokens      INTEGER NOT NULL,
    cache_read_tokens     INTEGER NOT NULL,
    cache_write_5m_tokens INTEGER NOT NULL,
    cache_write_1h_tokens INTEGER NOT NULL
);
CREATE INDEX usage_calls_at ON usage_calls(at_ms);
CREATE INDEX usage_calls_session ON usage_calls(session_id);
