-- agentshape store on Postgres: a retried feed write lands once. The same
-- logical schema as SQLite's 0014_feed_seq.sql (Note [One logical schema]
-- in src/migrate.rs; what `seq` means is written there and in Note [Feed
-- writes land once] in src/writes.rs).
ALTER TABLE feed ADD COLUMN seq BIGINT;
CREATE UNIQUE INDEX feed_session_seq ON feed(session_id, seq) WHERE seq IS NOT NULL;
