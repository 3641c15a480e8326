DROP INDEX "alerts_title_trgm";--> statement-breakpoint
DROP INDEX "alerts_description_trgm";--> statement-breakpoint
CREATE INDEX "alerts_active_search" ON "alerts" USING gin (("title" || E'\x1f' || "description") gin_trgm_ops) WHERE "alerts"."status" = 'active';--> statement-breakpoint
CREATE INDEX "alerts_inactive_search" ON "alerts" USING gin (("title" || E'\x1f' || "description") gin_trgm_ops) WHERE "alerts"."status" <> 'active';--> statement-breakpoint
-- Statistics of the new index expression: without them the planner misjudges q until autovacuum runs.
ANALYZE "alerts";
