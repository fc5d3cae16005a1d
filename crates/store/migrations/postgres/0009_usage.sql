-- agentshape store on Postgres: what each model call of a native session
-- used (issue 39), for usage reports by the call's own time. The same
-- logical schema as SQLite's 0012_usage.sql (Note [One logical schema] in
-- src/migrate.rs; the key's meaning is written there).
CREATE TABLE usage_calls (
    key                   TEXT PRIMARY KEY,
    session_id            TEXT NOT NULL,
    at_ms                 BIGINT NOT NULL,
    model                 TEXT NOT NULL,
    sidechain             BOOLEAN NOT NULL,
    input_tokens          BIGINT NOT NULL,
    output_tokens         BIGINT NOT NULL,
    reasoning_tokens      BIGINT NOT NULL,
    cache_read_tokens     BIGINT NOT NULL,
    cache_write_5m_tokens BIGINT NOT NULL,
    cache_write_1h_tokens BIGINT NOT NULL
);
CREATE INDEX usage_calls_at ON usage_calls(at_ms);
CREATE INDEX usage_calls_session ON usage_calls(session_id);
