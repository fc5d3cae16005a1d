-- agentshape store on Postgres, version 3: the sessions agents wrote
-- themselves (issue 28): Claude Code, Codex and Gemini CLI session files
-- imported and watched (`agentshape import`, `watch`, `serve --watch`). The
-- same logical schema as SQLite's 0006_native.sql (Note [One logical schema] in src/migrate.rs).

-- What a native session says about itself beyond a run's columns.
ALTER TABLE sessions ADD COLUMN project TEXT;
ALTER TABLE sessions ADD COLUMN git_branch TEXT;
ALTER TABLE sessions ADD COLUMN agent_version TEXT;
ALTER TABLE sessions ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
-- True when cost_usd was computed from usage and the price table, not reported.
ALTER TABLE sessions ADD COLUMN cost_estimated BOOLEAN NOT NULL DEFAULT false;
-- The agent's own session file it was imported from.
ALTER TABLE sessions ADD COLUMN source_path TEXT;

-- The list's agent and project filters, each in list order (as SQLite's).
CREATE INDEX sessions_agent_order ON sessions(agent, started_at, id);
CREATE INDEX sessions_project_order ON sessions(project, started_at, id);

-- Tool calls and errors per tool and session ("tool errors by tool").
CREATE TABLE session_tools (
    session_id TEXT NOT NULL REFERENCES sessions(id) DEFERRABLE,
    tool       TEXT NOT NULL,
    calls      BIGINT NOT NULL,
    errors     BIGINT NOT NULL,
    PRIMARY KEY (session_id, tool)
);
CREATE INDEX session_tools_tool ON session_tools(tool);

-- One row per imported session file: how far it was read (Note [Import
-- marks] in src/lib.rs). `byte_offset` always sits just after a newline.
CREATE TABLE native_files (
    path        TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    dev         BIGINT NOT NULL,
    inode       BIGINT NOT NULL,
    size        BIGINT NOT NULL,
    byte_offset BIGINT NOT NULL,
    mtime_ms    BIGINT NOT NULL,
    lines       BIGINT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX native_files_session ON native_files(session_id);

-- Small facts about the store itself (the secrets mask key, issue 29).
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The feed now holds imported transcripts (tool results kept): lz4
-- compresses them about twice as fast as the default pglz (measured: 100 MB
-- of session files imported in 1.4 s instead of 2.6 s) for about a fifth
-- more disk. A server built without lz4 keeps its default. Physical only.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE feed ALTER COLUMN body SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
    NULL;
END
$$;
