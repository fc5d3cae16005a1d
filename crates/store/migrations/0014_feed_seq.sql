-- agentshape store: a retried feed write lands once. A run's feed queue
-- numbers its entries (`seq`, from 0, per session); a batch sent again
-- after the answer to its COMMIT was lost inserts only the entries whose
-- (session_id, seq) is not stored yet (Note [Feed writes land once] in
-- src/writes.rs). Rows written once by design (`started`, `ended`, an
-- import's lines, the hook's rows) keep seq NULL, which the partial index
-- leaves out. The same logical schema as postgres/0011_feed_seq.sql
-- (Note [One logical schema] in src/migrate.rs).
ALTER TABLE feed ADD COLUMN seq INTEGER;
CREATE UNIQUE INDEX feed_session_seq ON feed(session_id, seq) WHERE seq IS NOT NULL;
