-- agentshape store, version 2: sessions visible from their start, and the live feed.
-- A `running` row is written when a run starts; its heartbeat says it is alive.
ALTER TABLE sessions ADD COLUMN heartbeat_at TEXT;
CREATE INDEX sessions_status ON sessions(status);

-- Append-only feed for the live dashboard (DESIGN.md "Live feed contract"):
-- the id is the SSE event id; AUTOINCREMENT so an id is never reused.
CREATE TABLE feed (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX feed_session ON feed(session_id, id);
