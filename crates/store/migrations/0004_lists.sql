-- agentshape store: what the dashboard's lists need to stay fast at 100,000
-- sessions (issue 9): indexes in list order for every filter, a trigram
-- full-text index for the text search, and counters kept by triggers for
-- the overview (Notes [List indexes], [Text search] and [Overview cost] in
-- src/query.rs).

-- The list order itself: it replaces `sessions_started`.
CREATE INDEX sessions_order ON sessions(started_at, id);
DROP INDEX sessions_started;

-- One per equality filter, each in list order: it replaces `sessions_status`.
CREATE INDEX sessions_status_order ON sessions(status, started_at, id);
DROP INDEX sessions_status;
CREATE INDEX sessions_tier_order ON sessions(tier, started_at, id);
CREATE INDEX sessions_profile_order ON sessions(profile, started_at, id);
CREATE INDEX sessions_category_order ON sessions(error_category, started_at, id);
CREATE INDEX sessions_method_order ON sessions(extraction_method, started_at, id);

-- The events page by level, newest first.
CREATE INDEX events_level ON events(level, id);

-- Text search: substrings of 3 characters or more, any case, found through
-- trigrams. External content: the text stays in `sessions` only; the
-- triggers keep the index in step with every insert, update and delete.
-- (So no writer may use `INSERT OR REPLACE` on sessions: the rows it
-- deletes fire no delete trigger unless recursive triggers are on.)
CREATE VIRTUAL TABLE sessions_fts USING fts5(
    id, summary, error, agent, model, content = 'sessions', tokenize = 'trigram'
);
INSERT INTO sessions_fts(sessions_fts) VALUES ('rebuild');
CREATE TRIGGER sessions_fts_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(rowid, id, summary, error, agent, model)
    VALUES (new.rowid, new.id, new.summary, new.error, new.agent, new.model);
END;
CREATE TRIGGER sessions_fts_delete AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, id, summary, error, agent, model)
    VALUES ('delete', old.rowid, old.id, old.summary, old.error, old.agent, old.model);
END;
CREATE TRIGGER sessions_fts_update AFTER UPDATE OF id, summary, error, agent, model ON sessions BEGIN
    INSERT INTO sessions_fts(sessions_fts, rowid, id, summary, error, agent, model)
    VALUES ('delete', old.rowid, old.id, old.summary, old.error, old.agent, old.model);
    INSERT INTO sessions_fts(rowid, id, summary, error, agent, model)
    VALUES (new.rowid, new.id, new.summary, new.error, new.agent, new.model);
END;

-- The overview's counts: sessions by stored status and events by level,
-- kept by triggers so reading them costs the same at any size.
CREATE TABLE list_counts (
    what TEXT NOT NULL,   -- 'status' or 'level'
    key  TEXT NOT NULL,
    n    INTEGER NOT NULL,
    PRIMARY KEY (what, key)
) WITHOUT ROWID;
INSERT INTO list_counts SELECT 'status', status, COUNT(*) FROM sessions GROUP BY status;
INSERT INTO list_counts SELECT 'level', level, COUNT(*) FROM events GROUP BY level;

-- The overview's chart: sessions, cost and tokens per day of start.
CREATE TABLE session_days (
    day           TEXT PRIMARY KEY,   -- YYYY-MM-DD (UTC) of started_at
    sessions      INTEGER NOT NULL,
    cost_usd      REAL NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO session_days
    SELECT substr(started_at, 1, 10), COUNT(*), COALESCE(SUM(cost_usd), 0.0),
           SUM(input_tokens), SUM(output_tokens)
    FROM sessions GROUP BY 1;

CREATE TRIGGER list_counts_session_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO list_counts VALUES ('status', new.status, 1)
        ON CONFLICT (what, key) DO UPDATE SET n = n + 1;
    INSERT INTO session_days
        VALUES (substr(new.started_at, 1, 10), 1, COALESCE(new.cost_usd, 0.0),
                new.input_tokens, new.output_tokens)
        ON CONFLICT (day) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
END;
CREATE TRIGGER list_counts_session_delete AFTER DELETE ON sessions BEGIN
    UPDATE list_counts SET n = n - 1 WHERE what = 'status' AND key = old.status;
    UPDATE session_days SET sessions = sessions - 1,
            cost_usd = cost_usd - COALESCE(old.cost_usd, 0.0),
            input_tokens = input_tokens - old.input_tokens,
            output_tokens = output_tokens - old.output_tokens
        WHERE day = substr(old.started_at, 1, 10);
END;
CREATE TRIGGER list_counts_session_update
AFTER UPDATE OF status, started_at, cost_usd, input_tokens, output_tokens ON sessions BEGIN
    UPDATE list_counts SET n = n - 1 WHERE what = 'status' AND key = old.status;
    INSERT INTO list_counts VALUES ('status', new.status, 1)
        ON CONFLICT (what, key) DO UPDATE SET n = n + 1;
    UPDATE session_days SET sessions = sessions - 1,
            cost_usd = cost_usd - COALESCE(old.cost_usd, 0.0),
            input_tokens = input_tokens - old.input_tokens,
            output_tokens = output_tokens - old.output_tokens
        WHERE day = substr(old.started_at, 1, 10);
    INSERT INTO session_days
        VALUES (substr(new.started_at, 1, 10), 1, COALESCE(new.cost_usd, 0.0),
                new.input_tokens, new.output_tokens)
        ON CONFLICT (day) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
END;
CREATE TRIGGER list_counts_event_insert AFTER INSERT ON events BEGIN
    INSERT INTO list_counts VALUES ('level', new.level, 1)
        ON CONFLICT (what, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER list_counts_event_delete AFTER DELETE ON events BEGIN
    UPDATE list_counts SET n = n - 1 WHERE what = 'level' AND key = old.level;
END;
