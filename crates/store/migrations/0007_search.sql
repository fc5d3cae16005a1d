-- agentshape store: the dashboard over native sessions (issue 28, item 4):
-- full-text search over transcripts, the overview's cost and tokens per
-- day per agent and per project, tool errors by tool, the most expensive
-- sessions. The same logical schema as postgres/0004_search.sql (Note
-- [One logical schema] in src/migrate.rs); Notes [Transcript search] and
-- [Overview cost] in src/query.rs.

-- Transcript search: the text of every feed row a person reads as the
-- conversation (user and assistant text, the names of the tools called),
-- indexed by trigrams like `sessions_fts`. The rowid is the feed row's id.
-- Kept by the triggers below; a body that is not JSON is not indexed (and
-- never fails the insert: json_extract would raise on it).
CREATE VIRTUAL TABLE feed_fts USING fts5(text, tokenize = 'trigram');
INSERT INTO feed_fts(rowid, text)
    SELECT id, CASE json_extract(body, '$.event.type')
                 WHEN 'tool_use' THEN json_extract(body, '$.event.name')
                 ELSE json_extract(body, '$.event.text') END
    FROM feed
    WHERE kind = 'event' AND json_valid(body)
      AND json_extract(body, '$.event.type') IN ('text', 'user_text', 'tool_use');
CREATE TRIGGER feed_fts_insert AFTER INSERT ON feed
WHEN new.kind = 'event' AND json_valid(new.body)
     AND json_extract(new.body, '$.event.type') IN ('text', 'user_text', 'tool_use')
BEGIN
    INSERT INTO feed_fts(rowid, text)
    VALUES (new.id, CASE json_extract(new.body, '$.event.type')
                      WHEN 'tool_use' THEN json_extract(new.body, '$.event.name')
                      ELSE json_extract(new.body, '$.event.text') END);
END;
CREATE TRIGGER feed_fts_delete AFTER DELETE ON feed BEGIN
    DELETE FROM feed_fts WHERE rowid = old.id;
END;

-- The most expensive sessions, walked down this index.
CREATE INDEX sessions_cost ON sessions(cost_usd, id);

-- The overview's per-agent and per-project charts: sessions, cost and
-- tokens per day of start and agent (what = 'agent') or project (what =
-- 'project'); a session without one counts under ''. Kept by triggers as
-- `session_days` is.
CREATE TABLE session_days_by (
    day           TEXT NOT NULL,
    what          TEXT NOT NULL,
    key           TEXT NOT NULL,
    sessions      INTEGER NOT NULL,
    cost_usd      REAL NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    PRIMARY KEY (day, what, key)
) WITHOUT ROWID;
INSERT INTO session_days_by
    SELECT substr(started_at, 1, 10), 'agent', COALESCE(agent, ''), COUNT(*),
           COALESCE(SUM(cost_usd), 0.0), SUM(input_tokens), SUM(output_tokens)
    FROM sessions GROUP BY 1, 3;
INSERT INTO session_days_by
    SELECT substr(started_at, 1, 10), 'project', COALESCE(project, ''), COUNT(*),
           COALESCE(SUM(cost_usd), 0.0), SUM(input_tokens), SUM(output_tokens)
    FROM sessions GROUP BY 1, 3;

CREATE TRIGGER session_days_by_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO session_days_by
        VALUES (substr(new.started_at, 1, 10), 'agent', COALESCE(new.agent, ''), 1,
                COALESCE(new.cost_usd, 0.0), new.input_tokens, new.output_tokens)
        ON CONFLICT (day, what, key) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
    INSERT INTO session_days_by
        VALUES (substr(new.started_at, 1, 10), 'project', COALESCE(new.project, ''), 1,
                COALESCE(new.cost_usd, 0.0), new.input_tokens, new.output_tokens)
        ON CONFLICT (day, what, key) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
END;
CREATE TRIGGER session_days_by_delete AFTER DELETE ON sessions BEGIN
    UPDATE session_days_by SET sessions = sessions - 1,
            cost_usd = cost_usd - COALESCE(old.cost_usd, 0.0),
            input_tokens = input_tokens - old.input_tokens,
            output_tokens = output_tokens - old.output_tokens
        WHERE day = substr(old.started_at, 1, 10)
          AND ((what = 'agent' AND key = COALESCE(old.agent, ''))
               OR (what = 'project' AND key = COALESCE(old.project, '')));
END;
CREATE TRIGGER session_days_by_update
AFTER UPDATE OF started_at, cost_usd, input_tokens, output_tokens, agent, project ON sessions BEGIN
    UPDATE session_days_by SET sessions = sessions - 1,
            cost_usd = cost_usd - COALESCE(old.cost_usd, 0.0),
            input_tokens = input_tokens - old.input_tokens,
            output_tokens = output_tokens - old.output_tokens
        WHERE day = substr(old.started_at, 1, 10)
          AND ((what = 'agent' AND key = COALESCE(old.agent, ''))
               OR (what = 'project' AND key = COALESCE(old.project, '')));
    INSERT INTO session_days_by
        VALUES (substr(new.started_at, 1, 10), 'agent', COALESCE(new.agent, ''), 1,
                COALESCE(new.cost_usd, 0.0), new.input_tokens, new.output_tokens)
        ON CONFLICT (day, what, key) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
    INSERT INTO session_days_by
        VALUES (substr(new.started_at, 1, 10), 'project', COALESCE(new.project, ''), 1,
                COALESCE(new.cost_usd, 0.0), new.input_tokens, new.output_tokens)
        ON CONFLICT (day, what, key) DO UPDATE SET sessions = sessions + 1,
            cost_usd = cost_usd + excluded.cost_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens;
END;

-- Tool calls and errors per tool over every session, kept by triggers on
-- `session_tools` (whose rows an import replaces: delete, then insert).
CREATE TABLE tool_totals (
    tool   TEXT PRIMARY KEY,
    calls  INTEGER NOT NULL,
    errors INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO tool_totals SELECT tool, SUM(calls), SUM(errors) FROM session_tools GROUP BY tool;
CREATE TRIGGER tool_totals_insert AFTER INSERT ON session_tools BEGIN
    INSERT INTO tool_totals VALUES (new.tool, new.calls, new.errors)
        ON CONFLICT (tool) DO UPDATE SET calls = calls + excluded.calls,
            errors = errors + excluded.errors;
END;
CREATE TRIGGER tool_totals_delete AFTER DELETE ON session_tools BEGIN
    UPDATE tool_totals SET calls = calls - old.calls, errors = errors - old.errors
        WHERE tool = old.tool;
END;
CREATE TRIGGER tool_totals_update AFTER UPDATE ON session_tools BEGIN
    UPDATE tool_totals SET calls = calls - old.calls, errors = errors - old.errors
        WHERE tool = old.tool;
    INSERT INTO tool_totals VALUES (new.tool, new.calls, new.errors)
        ON CONFLICT (tool) DO UPDATE SET calls = calls + excluded.calls,
            errors = errors + excluded.errors;
END;
