-- agentshape store: several supervisors on one store (issue 11 item 3).
-- Escalation claims: the cooldown's count-and-record in one step (Note
-- [Escalation claims] in src/lib.rs); leases: which supervisor runs a cycle
-- (Note [Supervisor leases] in the runtime's ops.rs). Same logical schema on
-- Postgres (postgres/0002_scale.sql).

-- One row per service per granted escalation, written before the child
-- session runs. It stops counting when it expires unused (no child session
-- was ever started) and is not counted twice once the child's own
-- `escalations` row exists.
CREATE TABLE escalation_claims (
    id         INTEGER PRIMARY KEY,
    parent_id  TEXT NOT NULL,
    child_id   TEXT NOT NULL,
    service    TEXT NOT NULL,
    tier       INTEGER NOT NULL,
    holder     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX escalation_claims_service ON escalation_claims(service, created_at);
CREATE INDEX escalations_child ON escalations(child_id, service);

-- A named lease: held by `holder` until `expires_at` unless renewed.
CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
