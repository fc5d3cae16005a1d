-- agentshape store: each session's validation outcome kept when it is
-- written (issue 31, validation analytics), so `agentshape stats` and the
-- overview read columns instead of parsing every verdict. The same logical
-- schema as postgres/0007_outcomes.sql (Note [One logical schema] in
-- src/migrate.rs); what the values mean is Note [Outcomes of a run] in
-- src/query/stats.rs, and Note [Kept outcomes] there says how they are kept.

-- `valid`, `invalid` or `none` (nothing structured found); NULL: no verdict.
ALTER TABLE sessions ADD COLUMN outcome TEXT;
-- 1 when the verdict lists a repair.
ALTER TABLE sessions ADD COLUMN repaired INTEGER NOT NULL DEFAULT 0;
-- The main agent's blocked hook calls (`Stop` sent back to the model).
ALTER TABLE sessions ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
-- The id of the main agent's last hook call (its errors are the verdict's).
ALTER TABLE sessions ADD COLUMN last_hook_id INTEGER;

-- Every error of a rejection: those of an invalid verdict (`hook_id` NULL)
-- and those of each blocked main-agent hook call (`hook_id` its id), with
-- its session's start and keys (NULL until the session row exists), the
-- error's path, kind (the failing keyword when none is stored) and, for an
-- invariant, its rule (its message when none is stored; '' otherwise).
-- `counted`: the session exists and this is not its last call's error (the
-- verdict holds those).
CREATE TABLE session_errors (
    session_id TEXT NOT NULL,
    hook_id    INTEGER,
    started_at TEXT,
    profile    TEXT,
    agent      TEXT,
    model      TEXT,
    path       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    rule       TEXT NOT NULL,
    counted    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX session_errors_session ON session_errors(session_id);
CREATE INDEX session_errors_started ON session_errors(started_at) WHERE counted = 1;
CREATE INDEX session_errors_cell ON session_errors(path, kind, rule, session_id)
    WHERE counted = 1;

-- The counted errors per day, keys, path, kind and rule, with the
-- greatest session id among them (Note [Kept outcomes]).
CREATE TABLE session_error_days (
    day     TEXT NOT NULL,
    profile TEXT NOT NULL,
    agent   TEXT NOT NULL,
    model   TEXT NOT NULL,
    path    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    rule    TEXT NOT NULL,
    n       INTEGER NOT NULL,
    example TEXT NOT NULL,
    PRIMARY KEY (day, profile, agent, model, path, kind, rule)
);

-- The percentiles' pass: the valid sessions of a window with what they
-- group by and measure, read from this index alone.
CREATE INDEX sessions_outcome ON sessions(outcome, started_at, profile, agent, model,
    input_tokens, output_tokens, cost_usd, duration_ms);

-- Backfill: every stored session and hook call.
UPDATE sessions SET
    outcome = CASE WHEN verdict IS NULL THEN NULL
                   WHEN json_valid(verdict) AND json_extract(verdict, '$.valid') = 1 THEN 'valid'
                   WHEN extraction_method IS NULL OR extraction_method IN ('none', 'handoff')
                        THEN 'none'
                   ELSE 'invalid' END,
    repaired = CASE WHEN verdict IS NOT NULL AND json_valid(verdict)
                         AND COALESCE(json_array_length(verdict, '$.repairs'), 0) > 0
                    THEN 1 ELSE 0 END,
    retries = (SELECT COUNT(*) FROM hook_calls h WHERE h.session_id = sessions.id
               AND h.verdict = 'blocked' AND h.agent_id IS NULL),
    last_hook_id = (SELECT MAX(h.id) FROM hook_calls h WHERE h.session_id = sessions.id
                    AND h.agent_id IS NULL);
INSERT INTO session_errors
    SELECT s.id, NULL, s.started_at, s.profile, s.agent, s.model,
               COALESCE(json_extract(e.value, '$.instance_path'), ''),
               COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END),
               CASE WHEN COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END) = 'invariant' THEN COALESCE(json_extract(e.value, '$.rule'), json_extract(e.value, '$.message'), '') ELSE '' END, 1
    FROM sessions s, json_each(s.verdict, '$.errors') e
    WHERE s.verdict IS NOT NULL AND json_valid(s.verdict)
      AND json_extract(s.verdict, '$.valid') = 0;
INSERT INTO session_errors
    SELECT h.session_id, h.id, s.started_at, s.profile, s.agent, s.model,
               COALESCE(json_extract(e.value, '$.instance_path'), ''),
               COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END),
               CASE WHEN COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END) = 'invariant' THEN COALESCE(json_extract(e.value, '$.rule'), json_extract(e.value, '$.message'), '') ELSE '' END,
           COALESCE(s.id IS NOT NULL AND h.id < s.last_hook_id, 0)
    FROM hook_calls h LEFT JOIN sessions s ON s.id = h.session_id, json_each(h.errors) e
    WHERE h.verdict = 'blocked' AND h.agent_id IS NULL AND h.errors IS NOT NULL
      AND json_valid(h.errors);
INSERT INTO session_error_days
    SELECT substr(started_at, 1, 10), COALESCE(profile, ''), COALESCE(agent, ''),
           COALESCE(model, ''), path, kind, rule, COUNT(*), MAX(session_id)
    FROM session_errors WHERE counted = 1 GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- Kept from now on.
CREATE TRIGGER session_outcome_insert AFTER INSERT ON sessions BEGIN
    UPDATE sessions SET
        outcome = CASE WHEN new.verdict IS NULL THEN NULL
                       WHEN json_valid(new.verdict) AND json_extract(new.verdict, '$.valid') = 1
                            THEN 'valid'
                       WHEN new.extraction_method IS NULL
                            OR new.extraction_method IN ('none', 'handoff') THEN 'none'
                       ELSE 'invalid' END,
        repaired = CASE WHEN new.verdict IS NOT NULL AND json_valid(new.verdict)
                             AND COALESCE(json_array_length(new.verdict, '$.repairs'), 0) > 0
                        THEN 1 ELSE 0 END,
        retries = (SELECT COUNT(*) FROM hook_calls h WHERE h.session_id = new.id
                   AND h.verdict = 'blocked' AND h.agent_id IS NULL),
        last_hook_id = (SELECT MAX(h.id) FROM hook_calls h WHERE h.session_id = new.id
                        AND h.agent_id IS NULL)
    WHERE id = new.id;
    UPDATE session_errors SET started_at = new.started_at, profile = new.profile,
        agent = new.agent, model = new.model,
        counted = CASE WHEN hook_id IS NULL THEN 1 ELSE
            COALESCE(hook_id < (SELECT last_hook_id FROM sessions WHERE id = new.id), 0) END
    WHERE session_id = new.id;
    INSERT INTO session_errors
        SELECT new.id, NULL, new.started_at, new.profile, new.agent, new.model,
               COALESCE(json_extract(e.value, '$.instance_path'), ''),
               COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END),
               CASE WHEN COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END) = 'invariant' THEN COALESCE(json_extract(e.value, '$.rule'), json_extract(e.value, '$.message'), '') ELSE '' END, 1
        FROM json_each(CASE WHEN json_valid(new.verdict)
                            AND json_extract(new.verdict, '$.valid') = 0
                       THEN new.verdict END, '$.errors') e;
END;
CREATE TRIGGER session_outcome_update AFTER UPDATE OF verdict, extraction_method ON sessions
WHEN new.verdict IS NOT old.verdict OR new.extraction_method IS NOT old.extraction_method
BEGIN
    UPDATE sessions SET
        outcome = CASE WHEN new.verdict IS NULL THEN NULL
                       WHEN json_valid(new.verdict) AND json_extract(new.verdict, '$.valid') = 1
                            THEN 'valid'
                       WHEN new.extraction_method IS NULL
                            OR new.extraction_method IN ('none', 'handoff') THEN 'none'
                       ELSE 'invalid' END,
        repaired = CASE WHEN new.verdict IS NOT NULL AND json_valid(new.verdict)
                             AND COALESCE(json_array_length(new.verdict, '$.repairs'), 0) > 0
                        THEN 1 ELSE 0 END
    WHERE id = new.id;
    DELETE FROM session_errors WHERE session_id = new.id AND hook_id IS NULL;
    INSERT INTO session_errors
        SELECT new.id, NULL, new.started_at, new.profile, new.agent, new.model,
               COALESCE(json_extract(e.value, '$.instance_path'), ''),
               COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END),
               CASE WHEN COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END) = 'invariant' THEN COALESCE(json_extract(e.value, '$.rule'), json_extract(e.value, '$.message'), '') ELSE '' END, 1
        FROM json_each(CASE WHEN json_valid(new.verdict)
                            AND json_extract(new.verdict, '$.valid') = 0
                       THEN new.verdict END, '$.errors') e;
END;
CREATE TRIGGER session_outcome_delete AFTER DELETE ON sessions BEGIN
    DELETE FROM session_errors WHERE session_id = old.id AND hook_id IS NULL;
    UPDATE session_errors SET counted = 0, started_at = NULL, profile = NULL, agent = NULL,
        model = NULL
    WHERE session_id = old.id;
END;
CREATE TRIGGER session_errors_keys AFTER UPDATE OF started_at, profile, agent, model ON sessions
WHEN old.started_at IS NOT new.started_at OR old.profile IS NOT new.profile
     OR old.agent IS NOT new.agent OR old.model IS NOT new.model
BEGIN
    UPDATE session_errors SET started_at = new.started_at, profile = new.profile,
        agent = new.agent, model = new.model
    WHERE session_id = new.id;
END;
CREATE TRIGGER session_outcome_hook AFTER INSERT ON hook_calls
WHEN new.agent_id IS NULL
BEGIN
    UPDATE sessions SET
        retries = retries + (new.verdict = 'blocked'),
        last_hook_id = max(COALESCE(last_hook_id, 0), new.id)
    WHERE id = new.session_id;
    INSERT INTO session_errors
        SELECT new.session_id, new.id, s.started_at, s.profile, s.agent, s.model,
               COALESCE(json_extract(e.value, '$.instance_path'), ''),
               COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END),
               CASE WHEN COALESCE(json_extract(e.value, '$.kind'), CASE WHEN replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), '') = '' THEN 'schema' ELSE replace(replace(replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), rtrim(COALESCE(json_extract(e.value, '$.schema_path'), ''), replace(COALESCE(json_extract(e.value, '$.schema_path'), ''), '/', '')), ''), '~1', '/'), '~0', '~') END) = 'invariant' THEN COALESCE(json_extract(e.value, '$.rule'), json_extract(e.value, '$.message'), '') ELSE '' END, 0
        FROM json_each(CASE WHEN new.verdict = 'blocked' AND json_valid(new.errors)
                       THEN new.errors END) e
             LEFT JOIN sessions s ON s.id = new.session_id;
    UPDATE session_errors SET counted = 1
    WHERE session_id = new.session_id AND hook_id < new.id AND counted = 0
      AND EXISTS (SELECT 1 FROM sessions WHERE id = new.session_id);
END;

-- The outcomes counted per day and everything the stats group or split
-- by, so a window of whole days reads these few rows instead of its
-- sessions (Note [Kept outcomes]). `cat` is `unchecked`, `first`,
-- `retried`, `invalid` or `none`; a missing key is ''. Every change is a
-- signed delta (an upsert), whatever order the triggers fire in.
CREATE TABLE session_outcome_days (
    day      TEXT NOT NULL,
    profile  TEXT NOT NULL,
    agent    TEXT NOT NULL,
    model    TEXT NOT NULL,
    method   TEXT NOT NULL,
    cat      TEXT NOT NULL,
    runs     INTEGER NOT NULL,
    retries  INTEGER NOT NULL,
    repaired INTEGER NOT NULL,
    PRIMARY KEY (day, profile, agent, model, method, cat)
);
INSERT INTO session_outcome_days
    SELECT substr(started_at, 1, 10), COALESCE(profile, ''), COALESCE(agent, ''),
           COALESCE(model, ''), COALESCE(extraction_method, ''),
           CASE WHEN outcome IS NULL THEN 'unchecked'
                WHEN outcome = 'valid' THEN CASE WHEN retries > 0 THEN 'retried' ELSE 'first' END
                ELSE outcome END AS cat,
           COUNT(*), SUM(retries), SUM(repaired)
    FROM sessions GROUP BY 1, 2, 3, 4, 5, 6;
CREATE TRIGGER outcome_days_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO session_outcome_days VALUES (substr(new.started_at, 1, 10),
        COALESCE(new.profile, ''), COALESCE(new.agent, ''), COALESCE(new.model, ''),
        COALESCE(new.extraction_method, ''),
        CASE WHEN new.outcome IS NULL THEN 'unchecked'
             WHEN new.outcome = 'valid' THEN CASE WHEN new.retries > 0 THEN 'retried' ELSE 'first' END
             ELSE new.outcome END,
        1, new.retries, new.repaired)
    ON CONFLICT (day, profile, agent, model, method, cat) DO UPDATE SET
        runs = runs + excluded.runs, retries = retries + excluded.retries,
        repaired = repaired + excluded.repaired;
END;
CREATE TRIGGER outcome_days_delete AFTER DELETE ON sessions BEGIN
    INSERT INTO session_outcome_days VALUES (substr(old.started_at, 1, 10),
        COALESCE(old.profile, ''), COALESCE(old.agent, ''), COALESCE(old.model, ''),
        COALESCE(old.extraction_method, ''),
        CASE WHEN old.outcome IS NULL THEN 'unchecked'
             WHEN old.outcome = 'valid' THEN CASE WHEN old.retries > 0 THEN 'retried' ELSE 'first' END
             ELSE old.outcome END,
        -1, -old.retries, -old.repaired)
    ON CONFLICT (day, profile, agent, model, method, cat) DO UPDATE SET
        runs = runs + excluded.runs, retries = retries + excluded.retries,
        repaired = repaired + excluded.repaired;
END;
CREATE TRIGGER outcome_days_update
AFTER UPDATE OF started_at, profile, agent, model, extraction_method, outcome, retries, repaired
ON sessions
WHEN substr(old.started_at, 1, 10) IS NOT substr(new.started_at, 1, 10)
     OR old.profile IS NOT new.profile OR old.agent IS NOT new.agent
     OR old.model IS NOT new.model OR old.extraction_method IS NOT new.extraction_method
     OR old.outcome IS NOT new.outcome OR old.retries IS NOT new.retries
     OR old.repaired IS NOT new.repaired
BEGIN
    INSERT INTO session_outcome_days VALUES (substr(old.started_at, 1, 10),
        COALESCE(old.profile, ''), COALESCE(old.agent, ''), COALESCE(old.model, ''),
        COALESCE(old.extraction_method, ''),
        CASE WHEN old.outcome IS NULL THEN 'unchecked'
             WHEN old.outcome = 'valid' THEN CASE WHEN old.retries > 0 THEN 'retried' ELSE 'first' END
             ELSE old.outcome END,
        -1, -old.retries, -old.repaired)
    ON CONFLICT (day, profile, agent, model, method, cat) DO UPDATE SET
        runs = runs + excluded.runs, retries = retries + excluded.retries,
        repaired = repaired + excluded.repaired;
    INSERT INTO session_outcome_days VALUES (substr(new.started_at, 1, 10),
        COALESCE(new.profile, ''), COALESCE(new.agent, ''), COALESCE(new.model, ''),
        COALESCE(new.extraction_method, ''),
        CASE WHEN new.outcome IS NULL THEN 'unchecked'
             WHEN new.outcome = 'valid' THEN CASE WHEN new.retries > 0 THEN 'retried' ELSE 'first' END
             ELSE new.outcome END,
        1, new.retries, new.repaired)
    ON CONFLICT (day, profile, agent, model, method, cat) DO UPDATE SET
        runs = runs + excluded.runs, retries = retries + excluded.retries,
        repaired = repaired + excluded.repaired;
END;

-- The per-day error counters follow the counted errors (signed deltas; a
-- removed example is looked up again).
CREATE TRIGGER error_days_insert AFTER INSERT ON session_errors WHEN new.counted = 1 BEGIN
    INSERT INTO session_error_days VALUES (substr(new.started_at, 1, 10),
        COALESCE(new.profile, ''), COALESCE(new.agent, ''), COALESCE(new.model, ''),
        new.path, new.kind, new.rule, 1, new.session_id)
    ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET n = n + 1,
        example = max(example, excluded.example);
END;
CREATE TRIGGER error_days_delete AFTER DELETE ON session_errors WHEN old.counted = 1 BEGIN
    INSERT INTO session_error_days VALUES (substr(old.started_at, 1, 10),
        COALESCE(old.profile, ''), COALESCE(old.agent, ''), COALESCE(old.model, ''),
        old.path, old.kind, old.rule, -1, '')
    ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET n = n - 1;
    UPDATE session_error_days SET example = COALESCE((SELECT MAX(e.session_id)
            FROM session_errors e
            WHERE e.counted = 1 AND e.path = old.path AND e.kind = old.kind
              AND e.rule = old.rule AND substr(e.started_at, 1, 10) = substr(old.started_at, 1, 10)
              AND COALESCE(e.profile, '') = COALESCE(old.profile, '')
              AND COALESCE(e.agent, '') = COALESCE(old.agent, '')
              AND COALESCE(e.model, '') = COALESCE(old.model, '')), '')
        WHERE day = substr(old.started_at, 1, 10) AND profile = COALESCE(old.profile, '')
          AND agent = COALESCE(old.agent, '') AND model = COALESCE(old.model, '')
          AND path = old.path AND kind = old.kind AND rule = old.rule
          AND example = old.session_id;
END;
CREATE TRIGGER error_days_update_old
AFTER UPDATE OF counted, started_at, profile, agent, model ON session_errors
WHEN old.counted = 1 BEGIN
    INSERT INTO session_error_days VALUES (substr(old.started_at, 1, 10),
        COALESCE(old.profile, ''), COALESCE(old.agent, ''), COALESCE(old.model, ''),
        old.path, old.kind, old.rule, -1, '')
    ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET n = n - 1;
    UPDATE session_error_days SET example = COALESCE((SELECT MAX(e.session_id)
            FROM session_errors e
            WHERE e.counted = 1 AND e.path = old.path AND e.kind = old.kind
              AND e.rule = old.rule AND substr(e.started_at, 1, 10) = substr(old.started_at, 1, 10)
              AND COALESCE(e.profile, '') = COALESCE(old.profile, '')
              AND COALESCE(e.agent, '') = COALESCE(old.agent, '')
              AND COALESCE(e.model, '') = COALESCE(old.model, '')), '')
        WHERE day = substr(old.started_at, 1, 10) AND profile = COALESCE(old.profile, '')
          AND agent = COALESCE(old.agent, '') AND model = COALESCE(old.model, '')
          AND path = old.path AND kind = old.kind AND rule = old.rule
          AND example = old.session_id;
END;
CREATE TRIGGER error_days_update_new
AFTER UPDATE OF counted, started_at, profile, agent, model ON session_errors
WHEN new.counted = 1 BEGIN
    INSERT INTO session_error_days VALUES (substr(new.started_at, 1, 10),
        COALESCE(new.profile, ''), COALESCE(new.agent, ''), COALESCE(new.model, ''),
        new.path, new.kind, new.rule, 1, new.session_id)
    ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET n = n + 1,
        example = max(example, excluded.example);
END;
