-- agentshape store on Postgres, version 7: each session's validation
-- outcome kept when it is written (issue 31, validation analytics). The
-- same logical schema as SQLite's 0010_outcomes.sql (Note [One logical
-- schema] in src/migrate.rs); Notes [Outcomes of a run] and [Kept
-- outcomes] in src/query/stats.rs.

-- `text::jsonb`, or NULL for text that is not JSON (never an error: a
-- trigger that raised would fail the session's write).
CREATE FUNCTION agentshape_jsonb(t TEXT) RETURNS JSONB
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN t::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END;
$$;

-- `valid`, `invalid` or `none` (nothing structured found); NULL: no verdict.
ALTER TABLE sessions ADD COLUMN outcome TEXT;
-- The verdict lists a repair.
ALTER TABLE sessions ADD COLUMN repaired BOOLEAN NOT NULL DEFAULT false;
-- The main agent's blocked hook calls (`Stop` sent back to the model).
ALTER TABLE sessions ADD COLUMN retries BIGINT NOT NULL DEFAULT 0;
-- The id of the main agent's last hook call (its errors are the verdict's).
ALTER TABLE sessions ADD COLUMN last_hook_id BIGINT;

-- Every error of a rejection: those of an invalid verdict (`hook_id` NULL)
-- and those of each blocked main-agent hook call (`hook_id` its id), with
-- its session's start and keys (NULL until the session row exists), the
-- error's path, kind (the failing keyword when none is stored) and, for an
-- invariant, its rule (its message when none is stored; '' otherwise).
-- `counted`: the session exists and this is not its last call's error (the
-- verdict holds those).
CREATE TABLE session_errors (
    session_id TEXT NOT NULL,
    hook_id    BIGINT,
    started_at TEXT,
    profile    TEXT,
    agent      TEXT,
    model      TEXT,
    path       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    rule       TEXT NOT NULL,
    counted    BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX session_errors_session ON session_errors(session_id);
CREATE INDEX session_errors_started ON session_errors(started_at) WHERE counted;
CREATE INDEX session_errors_cell ON session_errors(path, kind, rule, session_id) WHERE counted;

-- The counted errors per day, keys, path, kind and rule, with the
-- greatest session id among them, byte-wise (Note [Kept outcomes]).
CREATE TABLE session_error_days (
    day     TEXT NOT NULL,
    profile TEXT NOT NULL,
    agent   TEXT NOT NULL,
    model   TEXT NOT NULL,
    path    TEXT NOT NULL,
    kind    TEXT NOT NULL,
    rule    TEXT NOT NULL,
    n       BIGINT NOT NULL,
    example TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (day, profile, agent, model, path, kind, rule)
);

-- The path, kind and rule of each error of a JSON array (none for
-- anything else), as `query::stats` reads them.
CREATE FUNCTION agentshape_error_rows(errs JSONB)
RETURNS TABLE (path TEXT, kind TEXT, rule TEXT)
LANGUAGE sql IMMUTABLE AS $$
    SELECT COALESCE(e.value ->> 'instance_path', ''), k.kind,
           CASE WHEN k.kind = 'invariant'
                THEN COALESCE(e.value ->> 'rule', e.value ->> 'message', '') ELSE '' END
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(errs) = 'array' THEN errs
                              ELSE '[]'::jsonb END) AS e(value),
         LATERAL (SELECT regexp_replace(COALESCE(e.value ->> 'schema_path', ''), '^.*/', '')
                  AS last) l,
         LATERAL (SELECT COALESCE(e.value ->> 'kind',
                      CASE WHEN l.last = '' THEN 'schema'
                           ELSE replace(replace(l.last, '~1', '/'), '~0', '~') END) AS kind) k;
$$;

-- The percentiles' pass: the valid sessions of a window with what they
-- group by and measure, read from this index alone once the table is
-- vacuumed (autovacuum does it after many inserts).
CREATE INDEX sessions_outcome ON sessions(outcome, started_at)
    INCLUDE (profile, agent, model, input_tokens, output_tokens, cost_usd, duration_ms);

-- Backfill: every stored session and hook call.
UPDATE sessions s SET
    outcome = CASE WHEN s.verdict IS NULL THEN NULL
                   WHEN (x.v ->> 'valid') = 'true' THEN 'valid'
                   WHEN s.extraction_method IS NULL OR s.extraction_method IN ('none', 'handoff')
                        THEN 'none'
                   ELSE 'invalid' END,
    repaired = s.verdict IS NOT NULL
               AND COALESCE(x.v -> 'repairs', '[]'::jsonb) NOT IN ('[]'::jsonb, 'null'::jsonb),
    retries = (SELECT COUNT(*) FROM hook_calls h WHERE h.session_id = s.id
               AND h.verdict = 'blocked' AND h.agent_id IS NULL),
    last_hook_id = (SELECT MAX(h.id) FROM hook_calls h WHERE h.session_id = s.id
                    AND h.agent_id IS NULL)
FROM (SELECT id, agentshape_jsonb(verdict) AS v FROM sessions) x
WHERE x.id = s.id;
INSERT INTO session_errors
    SELECT s.id, NULL, s.started_at, s.profile, s.agent, s.model, r.path, r.kind, r.rule, true
    FROM sessions s, agentshape_error_rows(agentshape_jsonb(s.verdict) -> 'errors') r
    WHERE s.verdict IS NOT NULL AND (agentshape_jsonb(s.verdict) ->> 'valid') = 'false';
INSERT INTO session_errors
    SELECT h.session_id, h.id, s.started_at, s.profile, s.agent, s.model, r.path, r.kind,
           r.rule, COALESCE(s.id IS NOT NULL AND h.id < s.last_hook_id, false)
    FROM hook_calls h LEFT JOIN sessions s ON s.id = h.session_id,
         agentshape_error_rows(agentshape_jsonb(h.errors)) r
    WHERE h.verdict = 'blocked' AND h.agent_id IS NULL AND h.errors IS NOT NULL;
INSERT INTO session_error_days
    SELECT substr(started_at, 1, 10), COALESCE(profile, ''), COALESCE(agent, ''),
           COALESCE(model, ''), path, kind, rule, COUNT(*), MAX(session_id COLLATE "C")
    FROM session_errors WHERE counted GROUP BY 1, 2, 3, 4, 5, 6, 7;

-- Kept from now on. Before a session row is written: its outcome and
-- repair flag (and, when new, its hook calls so far: a hook may write
-- first).
CREATE FUNCTION agentshape_session_outcome() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v JSONB := agentshape_jsonb(NEW.verdict);
BEGIN
    NEW.outcome := CASE WHEN NEW.verdict IS NULL THEN NULL
                        WHEN (v ->> 'valid') = 'true' THEN 'valid'
                        WHEN NEW.extraction_method IS NULL
                             OR NEW.extraction_method IN ('none', 'handoff') THEN 'none'
                        ELSE 'invalid' END;
    NEW.repaired := NEW.verdict IS NOT NULL
        AND COALESCE(v -> 'repairs', '[]'::jsonb) NOT IN ('[]'::jsonb, 'null'::jsonb);
    IF TG_OP = 'INSERT' THEN
        SELECT COUNT(*) FILTER (WHERE h.verdict = 'blocked'), MAX(h.id)
            INTO NEW.retries, NEW.last_hook_id
            FROM hook_calls h WHERE h.session_id = NEW.id AND h.agent_id IS NULL;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER session_outcome_insert BEFORE INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION agentshape_session_outcome();
CREATE TRIGGER session_outcome_update BEFORE UPDATE OF verdict, extraction_method ON sessions
    FOR EACH ROW WHEN (NEW.verdict IS DISTINCT FROM OLD.verdict
                       OR NEW.extraction_method IS DISTINCT FROM OLD.extraction_method)
    EXECUTE FUNCTION agentshape_session_outcome();

-- After a session row is written (an upsert that updated fires no insert
-- trigger after): the errors of its verdict.
CREATE FUNCTION agentshape_session_errors() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v JSONB;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM session_errors WHERE session_id = OLD.id AND hook_id IS NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        UPDATE session_errors SET counted = false, started_at = NULL, profile = NULL,
            agent = NULL, model = NULL
        WHERE session_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        -- The errors of hook calls written before the row.
        UPDATE session_errors SET started_at = NEW.started_at, profile = NEW.profile,
            agent = NEW.agent, model = NEW.model,
            counted = COALESCE(hook_id < NEW.last_hook_id, false)
        WHERE session_id = NEW.id;
    END IF;
    v := agentshape_jsonb(NEW.verdict);
    IF (v ->> 'valid') = 'false' THEN
        INSERT INTO session_errors
            SELECT NEW.id, NULL, NEW.started_at, NEW.profile, NEW.agent, NEW.model,
                   r.path, r.kind, r.rule, true
            FROM agentshape_error_rows(v -> 'errors') r;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER session_errors_insert AFTER INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION agentshape_session_errors();
CREATE TRIGGER session_errors_update AFTER UPDATE OF verdict ON sessions
    FOR EACH ROW WHEN (NEW.verdict IS DISTINCT FROM OLD.verdict)
    EXECUTE FUNCTION agentshape_session_errors();
CREATE TRIGGER session_errors_delete AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION agentshape_session_errors();

-- A session's start or keys changed: its errors follow.
CREATE FUNCTION agentshape_session_error_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE session_errors SET started_at = NEW.started_at, profile = NEW.profile,
        agent = NEW.agent, model = NEW.model
    WHERE session_id = NEW.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER session_errors_keys AFTER UPDATE OF started_at, profile, agent, model ON sessions
    FOR EACH ROW WHEN ((OLD.started_at, OLD.profile, OLD.agent, OLD.model)
                       IS DISTINCT FROM (NEW.started_at, NEW.profile, NEW.agent, NEW.model))
    EXECUTE FUNCTION agentshape_session_error_keys();

-- After a main-agent hook call: its session's retries and last call, and
-- the errors of a blocked one.
CREATE FUNCTION agentshape_hook_outcome() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions SET
        retries = retries + CASE WHEN NEW.verdict = 'blocked' THEN 1 ELSE 0 END,
        last_hook_id = GREATEST(COALESCE(last_hook_id, 0), NEW.id)
    WHERE id = NEW.session_id;
    IF NEW.verdict = 'blocked' AND NEW.errors IS NOT NULL THEN
        INSERT INTO session_errors
            SELECT NEW.session_id, NEW.id, s.started_at, s.profile, s.agent, s.model,
                   r.path, r.kind, r.rule, false
            FROM agentshape_error_rows(agentshape_jsonb(NEW.errors)) r
                 LEFT JOIN sessions s ON s.id = NEW.session_id;
    END IF;
    -- The errors of the calls before this one now count.
    UPDATE session_errors SET counted = true
    WHERE session_id = NEW.session_id AND hook_id < NEW.id AND NOT counted
      AND EXISTS (SELECT 1 FROM sessions WHERE id = NEW.session_id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER session_outcome_hook AFTER INSERT ON hook_calls
    FOR EACH ROW WHEN (NEW.agent_id IS NULL)
    EXECUTE FUNCTION agentshape_hook_outcome();

-- The outcomes counted per day and everything the stats group or split
-- by, so a window of whole days reads these few rows instead of its
-- sessions (Note [Kept outcomes]). `cat` is `unchecked`, `first`,
-- `retried`, `invalid` or `none`; a missing key is ''. Every change is a
-- signed delta (an upsert).
CREATE TABLE session_outcome_days (
    day      TEXT NOT NULL,
    profile  TEXT NOT NULL,
    agent    TEXT NOT NULL,
    model    TEXT NOT NULL,
    method   TEXT NOT NULL,
    cat      TEXT NOT NULL,
    runs     BIGINT NOT NULL,
    retries  BIGINT NOT NULL,
    repaired BIGINT NOT NULL,
    PRIMARY KEY (day, profile, agent, model, method, cat)
);
INSERT INTO session_outcome_days
    SELECT substr(started_at, 1, 10), COALESCE(profile, ''), COALESCE(agent, ''),
           COALESCE(model, ''), COALESCE(extraction_method, ''),
           CASE WHEN outcome IS NULL THEN 'unchecked'
                WHEN outcome = 'valid' THEN CASE WHEN retries > 0 THEN 'retried' ELSE 'first' END
                ELSE outcome END AS cat,
           COUNT(*), SUM(retries), SUM(CASE WHEN repaired THEN 1 ELSE 0 END)
    FROM sessions GROUP BY 1, 2, 3, 4, 5, 6;

-- Adds `sign` times a session row's counts.
CREATE FUNCTION agentshape_outcome_days(r sessions, sign BIGINT) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO session_outcome_days VALUES (substr(r.started_at, 1, 10),
        COALESCE(r.profile, ''), COALESCE(r.agent, ''), COALESCE(r.model, ''),
        COALESCE(r.extraction_method, ''),
        CASE WHEN r.outcome IS NULL THEN 'unchecked'
             WHEN r.outcome = 'valid' THEN CASE WHEN r.retries > 0 THEN 'retried' ELSE 'first' END
             ELSE r.outcome END,
        sign, sign * r.retries, sign * CASE WHEN r.repaired THEN 1 ELSE 0 END)
    ON CONFLICT (day, profile, agent, model, method, cat) DO UPDATE SET
        runs = session_outcome_days.runs + excluded.runs,
        retries = session_outcome_days.retries + excluded.retries,
        repaired = session_outcome_days.repaired + excluded.repaired;
$$;
CREATE FUNCTION agentshape_outcome_days_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM agentshape_outcome_days(OLD, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM agentshape_outcome_days(NEW, 1);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER outcome_days_insert AFTER INSERT OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION agentshape_outcome_days_change();
-- `verdict` is listed for the outcome the BEFORE trigger derives from it.
CREATE TRIGGER outcome_days_update
    AFTER UPDATE OF started_at, profile, agent, model, extraction_method, verdict, outcome,
        retries, repaired
    ON sessions FOR EACH ROW
    WHEN ((substr(OLD.started_at, 1, 10), OLD.profile, OLD.agent, OLD.model,
           OLD.extraction_method, OLD.outcome, OLD.retries, OLD.repaired)
          IS DISTINCT FROM
          (substr(NEW.started_at, 1, 10), NEW.profile, NEW.agent, NEW.model,
           NEW.extraction_method, NEW.outcome, NEW.retries, NEW.repaired))
    EXECUTE FUNCTION agentshape_outcome_days_change();

-- The per-day error counters follow the counted errors (signed deltas; a
-- removed example is looked up again).
CREATE FUNCTION agentshape_error_days_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.counted THEN
        INSERT INTO session_error_days VALUES (substr(OLD.started_at, 1, 10),
            COALESCE(OLD.profile, ''), COALESCE(OLD.agent, ''), COALESCE(OLD.model, ''),
            OLD.path, OLD.kind, OLD.rule, -1, '')
        ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET
            n = session_error_days.n - 1;
        UPDATE session_error_days d SET example = COALESCE((SELECT MAX(e.session_id COLLATE "C")
                FROM session_errors e
                WHERE e.counted AND e.path = OLD.path AND e.kind = OLD.kind
                  AND e.rule = OLD.rule
                  AND substr(e.started_at, 1, 10) = substr(OLD.started_at, 1, 10)
                  AND COALESCE(e.profile, '') = COALESCE(OLD.profile, '')
                  AND COALESCE(e.agent, '') = COALESCE(OLD.agent, '')
                  AND COALESCE(e.model, '') = COALESCE(OLD.model, '')), '')
        WHERE d.day = substr(OLD.started_at, 1, 10) AND d.profile = COALESCE(OLD.profile, '')
          AND d.agent = COALESCE(OLD.agent, '') AND d.model = COALESCE(OLD.model, '')
          AND d.path = OLD.path AND d.kind = OLD.kind AND d.rule = OLD.rule
          AND d.example = OLD.session_id;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.counted THEN
        INSERT INTO session_error_days VALUES (substr(NEW.started_at, 1, 10),
            COALESCE(NEW.profile, ''), COALESCE(NEW.agent, ''), COALESCE(NEW.model, ''),
            NEW.path, NEW.kind, NEW.rule, 1, NEW.session_id)
        ON CONFLICT (day, profile, agent, model, path, kind, rule) DO UPDATE SET
            n = session_error_days.n + 1,
            example = GREATEST(session_error_days.example, excluded.example);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER error_days_change AFTER INSERT OR DELETE ON session_errors
    FOR EACH ROW EXECUTE FUNCTION agentshape_error_days_change();
CREATE TRIGGER error_days_update
    AFTER UPDATE OF counted, started_at, profile, agent, model ON session_errors
    FOR EACH ROW EXECUTE FUNCTION agentshape_error_days_change();
