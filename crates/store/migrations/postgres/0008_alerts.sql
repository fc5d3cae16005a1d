-- agentshape store: alerts (issue 31). The same logical schema as
-- ../0011_alerts.sql (Note [One logical schema] in src/migrate.rs); what
-- the keys and states mean is in src/alerts.rs.

-- One row per firing of a rule; `dedup_key` unique per rule.
CREATE TABLE alert_firings (
    id         BIGSERIAL PRIMARY KEY,
    rule       TEXT NOT NULL,
    dedup_key  TEXT NOT NULL,
    condition  TEXT NOT NULL,
    session_id TEXT,
    summary    TEXT NOT NULL,
    details    TEXT NOT NULL,
    event_at   TEXT NOT NULL,
    fired_at   TEXT NOT NULL,
    UNIQUE (rule, dedup_key)
);
CREATE INDEX alert_firings_rule ON alert_firings(rule, event_at);
CREATE INDEX alert_firings_fired ON alert_firings(fired_at);

-- One row per firing and destination: its delivery.
CREATE TABLE alert_deliveries (
    firing_id    BIGINT NOT NULL REFERENCES alert_firings(id) ON DELETE CASCADE DEFERRABLE,
    destination  TEXT NOT NULL,
    target       TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    last_error   TEXT,
    next_at      TEXT NOT NULL,
    delivered_at TEXT,
    PRIMARY KEY (firing_id, destination)
);
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_at) WHERE state = 'pending';

-- The conditions' facts: failed sessions by end, services checked by
-- name, a profile's sessions by start (SQLite has the last already).
CREATE INDEX sessions_failed ON sessions(ended_at) WHERE error_category IS NOT NULL;
CREATE INDEX services_checked_name ON services_checked(name, session_id);
CREATE INDEX sessions_profile_started ON sessions(profile, started_at);
