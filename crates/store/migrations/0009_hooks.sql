-- agentshape store: the calls of `agentshape hook` (issue 30), Claude Code's
-- Stop, SubagentStop and PostToolUse hooks. The same logical schema as
-- postgres/0006_hooks.sql (Note [One logical schema] in src/migrate.rs).

-- One row per hook call. `session_id` is Claude Code's session id, the id
-- `agentshape import` stores the session under, so a session's page shows
-- its hook calls whichever of the two wrote first (no foreign key: a
-- PostToolUse call may come before any session row exists).
CREATE TABLE hook_calls (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id       TEXT NOT NULL,
    -- SubagentStop: the sub-agent's id and type; NULL for the main agent.
    agent_id         TEXT,
    agent_type       TEXT,
    -- `Stop`, `SubagentStop` or `PostToolUse`.
    event            TEXT NOT NULL,
    -- `valid`, `blocked`, `gave_up`, `allowed` or `captured`.
    verdict          TEXT NOT NULL,
    -- The extraction method tried (`structured`, `fenced`, ..., `none`).
    method           TEXT,
    -- JSON array of violations {instance_path, schema_path, message}.
    errors           TEXT,
    -- Blocks in a row in this chain, this call included (0 when allowed).
    blocks           INTEGER NOT NULL,
    stop_hook_active INTEGER NOT NULL DEFAULT 0,
    -- The profile name or path, or the schema path, used.
    profile          TEXT,
    -- The block reason given to the model.
    reason           TEXT,
    -- The text validated (cut by the caller).
    message          TEXT,
    -- Why the hook allowed without checking (bad input, no profile, ...).
    warning          TEXT,
    created_at       TEXT NOT NULL
);
-- A session's calls in order, and the chain of its last ones (Store::hook_chain).
CREATE INDEX hook_calls_session ON hook_calls(session_id, id);
-- A sub-agent's calls, for its own page (`agent-<id>`).
CREATE INDEX hook_calls_agent ON hook_calls(agent_id, id) WHERE agent_id IS NOT NULL;
