-- agentshape store: alerts (issue 31). The same logical schema as
-- postgres/0008_alerts.sql (Note [One logical schema] in src/migrate.rs);
-- what the keys and states mean is in src/alerts.rs.

-- One row per firing of a rule. `dedup_key` is unique per rule (Note
-- [Firing keys] in core's alerts::decide): a firing inserted twice (two
-- evaluators, a restart) is one row. `event_at` is when its event
-- happened, the cooldown's mark (Note [Cooldown]). Text columns are masked
-- at the store door like every other.
CREATE TABLE alert_firings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    rule       TEXT NOT NULL,
    dedup_key  TEXT NOT NULL,
    -- The condition (`when`): rejection_rate, session_failed, ...
    condition  TEXT NOT NULL,
    -- The session it is about, if one.
    session_id TEXT,
    -- One line saying what happened.
    summary    TEXT NOT NULL,
    -- What was measured, as JSON.
    details    TEXT NOT NULL,
    event_at   TEXT NOT NULL,
    fired_at   TEXT NOT NULL,
    UNIQUE (rule, dedup_key)
);
-- The cooldown's mark: a rule's latest event.
CREATE INDEX alert_firings_rule ON alert_firings(rule, event_at);
-- `alerts list --since`.
CREATE INDEX alert_firings_fired ON alert_firings(fired_at);

-- One row per firing and destination: its delivery. `destination` is the
-- rule's id for it (`webhook`, `webhook#2`, `command`, `log`), `target`
-- what it is as it may be shown (a webhook's scheme://host/path, never its
-- credentials; a command's program). `state`: pending, delivered, failed.
CREATE TABLE alert_deliveries (
    firing_id    INTEGER NOT NULL REFERENCES alert_firings(id) ON DELETE CASCADE,
    destination  TEXT NOT NULL,
    target       TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    -- When the next attempt is due (pending).
    next_at      TEXT NOT NULL,
    delivered_at TEXT,
    PRIMARY KEY (firing_id, destination)
);
-- What the delivery loop picks up.
CREATE INDEX alert_deliveries_due ON alert_deliveries(next_at) WHERE state = 'pending';

-- The conditions' facts: failed sessions by end, services checked by name.
CREATE INDEX sessions_failed ON sessions(ended_at) WHERE error_category IS NOT NULL;
CREATE INDEX services_checked_name ON services_checked(name, session_id);
