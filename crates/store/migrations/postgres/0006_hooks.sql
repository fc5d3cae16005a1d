-- agentshape store on Postgres, version 6: the calls of `agentshape hook`
-- (issue 30). The same logical schema as SQLite's 0009_hooks.sql (Note [One
-- logical schema] in src/migrate.rs).

-- One row per hook call, linked to Claude Code's session id (no foreign
-- key: a call may come before any session row exists).
CREATE TABLE hook_calls (
    id               BIGSERIAL PRIMARY KEY,
    session_id       TEXT NOT NULL,
    -- SubagentStop: the sub-agent's id and type; NULL for the main agent.
    agent_id         TEXT,
    agent_type       TEXT,
    -- `Stop`, `SubagentStop` or `PostToolUse`.
    event            TEXT NOT NULL,
    -- `valid`, `blocked`, `gave_up`, `allowed` or `captured`.
    verdict          TEXT NOT NULL,
    method           TEXT,
    -- JSON array of violations {instance_path, schema_path, message}.
    errors           TEXT,
    blocks           BIGINT NOT NULL,
    stop_hook_active BOOLEAN NOT NULL DEFAULT false,
    profile          TEXT,
    reason           TEXT,
    message          TEXT,
    warning          TEXT,
    created_at       TEXT NOT NULL
);
CREATE INDEX hook_calls_session ON hook_calls(session_id, id);
CREATE INDEX hook_calls_agent ON hook_calls(agent_id, id) WHERE agent_id IS NOT NULL;
