-- agentshape store on Postgres, version 4: the dashboard over native
-- sessions (issue 28, item 4). The same logical schema as SQLite's
-- 0007_search.sql (Note [One logical schema] in src/migrate.rs); Notes
-- [Transcript search] and [Overview cost] in src/query.rs.

-- The text of a feed row a person reads as the conversation: the `text` of
-- a `text` or `user_text` event, the `name` of a `tool_use`; NULL for any
-- other row and for a body that is not JSON (never an error: an index
-- expression that raised would fail the feed's inserts).
CREATE FUNCTION agentshape_feed_text(kind TEXT, body TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    ev JSONB;
BEGIN
    IF kind <> 'event' THEN
        RETURN NULL;
    END IF;
    BEGIN
        ev := body::jsonb -> 'event';
    EXCEPTION WHEN others THEN
        RETURN NULL;
    END;
    RETURN CASE ev ->> 'type'
        WHEN 'text' THEN ev ->> 'text'
        WHEN 'user_text' THEN ev ->> 'text'
        WHEN 'tool_use' THEN ev ->> 'name'
        ELSE NULL END;
END;
$$;

-- Transcript search: Postgres's own full-text search (the `simple`
-- configuration: words lowercased, no stemming, no stop words), a GIN
-- index on the expression the search asks.
CREATE INDEX feed_search ON feed
    USING GIN (to_tsvector('simple', agentshape_feed_text(kind, body)));

-- The most expensive sessions, walked down this index.
CREATE INDEX sessions_cost ON sessions(cost_usd, id);
