-- agentshape store, version 3: what the session page shows without re-reading the log.
-- `output`: the extracted value as compact JSON; `verdict`: JSON
-- {"valid", "errors": [violations], "repairs", "coercions"}. NULL for a
-- running session and for sessions written before this version.
ALTER TABLE sessions ADD COLUMN output TEXT;
ALTER TABLE sessions ADD COLUMN verdict TEXT;
