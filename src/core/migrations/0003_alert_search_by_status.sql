DROP INDEX "alerts_title_trgm";--> statement-breakpoint
DROP INDEX "alerts_description_trgm";--> statement-breakpoint
CREATE INDEX "alerts_active_search" ON "alerts" USING gin (("title" || E'\x1f' || "description") gin_trgm_ops) WHERE "alerts"."status" = 'active';--> statement-breakpoint
CREATE INDEX "alerts_inactive_search" ON "alerts" USING gin (("title" || E'\x1f' || "description") gin_trgm_ops) WHERE "alerts"."status" <> 'active';--> statement-breakpoint
-- Written by hand (drizzle-kit has no statistics objects): the planner's estimate of how many alerts
-- a q matches. A partial index's expression gets no statistics of its own, and without them a common
-- word was taken for a rare one (22 rows expected, 22,000 found): the page was then read through the
-- trigram index and sorted (180 ms) instead of read in sort order through the filter (2 ms).
CREATE STATISTICS "alerts_search_text" ON (("title" || E'\x1f' || "description")) FROM "alerts";--> statement-breakpoint
-- An upgraded database gets them now, not at the next autovacuum. An empty table is left alone:
-- analyzed while empty, it stalled ingest for seconds at a time once alerts arrived (measured).
DO $$ BEGIN IF EXISTS (SELECT 1 FROM "alerts") THEN ANALYZE "alerts"; END IF; END $$;
