-- agentshape store, version 1: the Claude Ops tables of seed 000.
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    parent_id         TEXT REFERENCES sessions(id),
    tier              INTEGER NOT NULL DEFAULT 1,
    profile           TEXT,
    agent             TEXT,
    model             TEXT,
    status            TEXT NOT NULL,
    exit_code         INTEGER,
    started_at        TEXT NOT NULL,
    ended_at          TEXT,
    cost_usd          REAL,
    duration_ms       INTEGER,
    num_turns         INTEGER,
    input_tokens      INTEGER NOT NULL DEFAULT 0,
    output_tokens     INTEGER NOT NULL DEFAULT 0,
    extraction_method TEXT,
    error             TEXT,
    error_category    TEXT,
    summary           TEXT,
    escalation        TEXT,
    raw_log_path      TEXT
);
CREATE INDEX sessions_started ON sessions(started_at);
CREATE INDEX sessions_parent ON sessions(parent_id);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    level      TEXT NOT NULL CHECK (level IN ('info', 'warning', 'critical')),
    service    TEXT,
    message    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX events_session ON events(session_id);

CREATE TABLE memories (
    id          INTEGER PRIMARY KEY,
    service     TEXT,
    category    TEXT NOT NULL,
    observation TEXT NOT NULL,
    confidence  REAL NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    session_id  TEXT REFERENCES sessions(id),
    tier        INTEGER
);
CREATE INDEX memories_key ON memories(category, service, active);

CREATE TABLE services_checked (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    name       TEXT NOT NULL,
    status     TEXT NOT NULL,
    detail     TEXT
);
CREATE INDEX services_checked_session ON services_checked(session_id);

-- One row per service an escalation was made for (the cooldown policy counts these).
CREATE TABLE escalations (
    id         INTEGER PRIMARY KEY,
    parent_id  TEXT NOT NULL REFERENCES sessions(id),
    child_id   TEXT NOT NULL REFERENCES sessions(id),
    service    TEXT NOT NULL,
    tier       INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX escalations_service ON escalations(service, created_at);
