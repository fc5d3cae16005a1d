-- agentshape store: secrets masked before they are written (issue 29).
-- The same logical schema as postgres/0005_secrets.sql (Note [One logical
-- schema] in src/migrate.rs).

-- Secrets masked in the session's rows. NULL: the session was written
-- before masking existed, or with masking off (`--no-mask`), so its rows may
-- hold raw secrets (`agentshape secrets mask` masks them and sets it).
ALTER TABLE sessions ADD COLUMN secrets_masked INTEGER;

-- One row per secret masked: which rule, its keyed fingerprint and where
-- (`summary`, `output`, `feed`, ...); never the secret.
CREATE TABLE secrets_found (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    rule        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    place       TEXT NOT NULL,
    feed_id     INTEGER,
    created_at  TEXT NOT NULL
);
CREATE INDEX secrets_found_session ON secrets_found(session_id);
CREATE INDEX secrets_found_created ON secrets_found(created_at);
