-- agentshape store: indexes for the dashboard's lists (issue 9), so every
-- filter of the sessions list answers its first and its deep pages from an
-- index walked in list order, whatever the number of sessions (Note
-- [Keyset pages] and Note [List indexes] in src/query.rs).

-- The list order itself (started_at, id), covering the per-day cost and
-- token sums of the overview: it replaces `sessions_started`.
CREATE INDEX sessions_order ON sessions(started_at, id, cost_usd, input_tokens, output_tokens);
DROP INDEX sessions_started;

-- One per equality filter, each in list order: it replaces `sessions_status`.
CREATE INDEX sessions_status_order ON sessions(status, started_at, id);
DROP INDEX sessions_status;
CREATE INDEX sessions_tier_order ON sessions(tier, started_at, id);
CREATE INDEX sessions_profile_order ON sessions(profile, started_at, id);
CREATE INDEX sessions_category_order ON sessions(error_category, started_at, id);
CREATE INDEX sessions_method_order ON sessions(extraction_method, started_at, id);

-- The events page by level, newest first, and the overview's counts by level.
CREATE INDEX events_level ON events(level, id);
