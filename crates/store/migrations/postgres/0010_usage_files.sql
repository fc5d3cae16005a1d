-- agentshape store on Postgres: the files a usage-only pass read (issue
-- 39), marked apart from the import's `native_files`. The same logical
-- schema as SQLite's 0013_usage_files.sql (Note [One logical schema] in
-- src/migrate.rs; what the mark means is written there).
CREATE TABLE usage_files (
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
