-- agentshape store: the files a usage-only pass read (issue 39), marked
-- apart from the import's `native_files`. `agentshape usage` over files not
-- imported yet stores their sessions' rows and model calls (`usage_calls`)
-- at decoding speed, without their transcripts; a file marked here is read
-- again only when it changed. A later `agentshape import` still reads the
-- file whole (it has no `native_files` mark), stores its transcript under
-- the same session id, and drops this mark. The same logical schema as
-- postgres/0010_usage_files.sql (Note [One logical schema] in
-- src/migrate.rs); the columns are `native_files`' (`byte_offset` and
-- `lines`: what the pass read).
CREATE TABLE usage_files (
    path        TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    dev         INTEGER NOT NULL,
    inode       INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    mtime_ms    INTEGER NOT NULL,
    lines       INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
);
