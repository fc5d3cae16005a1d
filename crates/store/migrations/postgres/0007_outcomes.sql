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
-- and those of each blocked main-agent hook call (`hook_id` its id; a
-- session's last call is left out when read, by `last_hook_id`).
CREATE TABLE session_errors (
    session_id    TEXT NOT NULL,
    hook_id       BIGINT,
    instance_path TEXT,
    schema_path   TEXT,
    kind          TEXT,
    rule          TEXT,
    message       TEXT
);
CREATE INDEX session_errors_session ON session_errors(session_id);

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
    SELECT x.id, NULL, e.value ->> 'instance_path', e.value ->> 'schema_path', e.value ->> 'kind',
           e.value ->> 'rule', e.value ->> 'message'
    FROM (SELECT id, agentshape_jsonb(verdict) AS v FROM sessions
          WHERE verdict IS NOT NULL) x,
         jsonb_array_elements(CASE WHEN jsonb_typeof(x.v -> 'errors') = 'array'
                              THEN x.v -> 'errors' ELSE '[]'::jsonb END) AS e(value)
    WHERE (x.v ->> 'valid') = 'false';
INSERT INTO session_errors
    SELECT x.session_id, x.id, e.value ->> 'instance_path', e.value ->> 'schema_path', e.value ->> 'kind',
           e.value ->> 'rule', e.value ->> 'message'
    FROM (SELECT session_id, id, agentshape_jsonb(errors) AS v FROM hook_calls
          WHERE verdict = 'blocked' AND agent_id IS NULL AND errors IS NOT NULL) x,
         jsonb_array_elements(CASE WHEN jsonb_typeof(x.v) = 'array'
                              THEN x.v ELSE '[]'::jsonb END) AS e(value);

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
        RETURN NULL;
    END IF;
    v := agentshape_jsonb(NEW.verdict);
    IF (v ->> 'valid') = 'false' AND jsonb_typeof(v -> 'errors') = 'array' THEN
        INSERT INTO session_errors
            SELECT NEW.id, NULL, e.value ->> 'instance_path', e.value ->> 'schema_path', e.value ->> 'kind',
                   e.value ->> 'rule', e.value ->> 'message'
            FROM jsonb_array_elements(v -> 'errors') AS e(value);
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

-- After a main-agent hook call: its session's retries and last call, and
-- the errors of a blocked one.
CREATE FUNCTION agentshape_hook_outcome() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v JSONB;
BEGIN
    UPDATE sessions SET
        retries = retries + CASE WHEN NEW.verdict = 'blocked' THEN 1 ELSE 0 END,
        last_hook_id = GREATEST(COALESCE(last_hook_id, 0), NEW.id)
    WHERE id = NEW.session_id;
    IF NEW.verdict = 'blocked' AND NEW.errors IS NOT NULL THEN
        v := agentshape_jsonb(NEW.errors);
        IF jsonb_typeof(v) = 'array' THEN
            INSERT INTO session_errors
                SELECT NEW.session_id, NEW.id, e.value ->> 'instance_path', e.value ->> 'schema_path',
                       e.value ->> 'kind', e.value ->> 'rule', e.value ->> 'message'
                FROM jsonb_array_elements(v) AS e(value);
        END IF;
    END IF;
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
