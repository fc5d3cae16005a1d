-- agentshape store on Postgres, version 5: secrets masked before they are
-- written (issue 29). The same logical schema as SQLite's 0008_secrets.sql
-- (Note [One logical schema] in src/migrate.rs).

-- Secrets masked in the session's rows. NULL: written before masking
-- existed, or with masking off (`--no-mask`).
ALTER TABLE sessions ADD COLUMN secrets_masked BIGINT;

-- One row per secret masked: rule, keyed fingerprint, place; never the secret.
CREATE TABLE secrets_found (
    id          BIGSERIAL PRIMARY KEY,
    session_id  TEXT NOT NULL,
    rule        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    place       TEXT NOT NULL,
    feed_id     BIGINT,
    created_at  TEXT NOT NULL
);
CREATE INDEX secrets_found_session ON secrets_found(session_id);
CREATE INDEX secrets_found_created ON secrets_found(created_at);
