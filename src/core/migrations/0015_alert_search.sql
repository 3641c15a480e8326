-- What `q` searches moves from two indexes of "alerts" to a table of its own (alerts/tables.ts,
-- alertSearch): as an index of "alerts", every change of an alert wrote its trigrams again.
CREATE TABLE "alert_search" (
	"alert_id" uuid PRIMARY KEY NOT NULL,
	"active" boolean NOT NULL,
	"text" text NOT NULL
);
--> statement-breakpoint
INSERT INTO "alert_search" ("alert_id", "active", "text")
	SELECT "id", "status" = 'active', "title" || E'\x1f' || "description" FROM "alerts";--> statement-breakpoint
DROP INDEX "alerts_active_search";--> statement-breakpoint
DROP INDEX "alerts_inactive_search";--> statement-breakpoint
DROP STATISTICS IF EXISTS "alerts_search_text";--> statement-breakpoint
CREATE INDEX "alert_search_active" ON "alert_search" USING gin ("text" gin_trgm_ops) WHERE "alert_search"."active";--> statement-breakpoint
CREATE INDEX "alert_search_inactive" ON "alert_search" USING gin ("text" gin_trgm_ops) WHERE not "alert_search"."active";--> statement-breakpoint
-- Written by hand (drizzle-kit has no triggers). The table follows "alerts" through triggers, so that
-- every writer of alerts keeps it right: one row per alert, written when an alert is inserted or
-- deleted, or when its title, description or whether it is active changes. An update that sets none
-- of those columns (a classification, a storm placement) fires nothing at all.
CREATE FUNCTION "alert_search_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO "alert_search" ("alert_id", "active", "text")
		SELECT "id", "status" = 'active', "title" || E'\x1f' || "description" FROM "inserted";
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "alerts_search_insert" AFTER INSERT ON "alerts"
	REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "alert_search_insert"();--> statement-breakpoint
CREATE FUNCTION "alert_search_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE "alert_search" SET "active" = NEW."status" = 'active', "text" = NEW."title" || E'\x1f' || NEW."description"
		WHERE "alert_id" = NEW."id";
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "alerts_search_update" AFTER UPDATE OF "title", "description", "status" ON "alerts" FOR EACH ROW
	WHEN (OLD."title" IS DISTINCT FROM NEW."title" OR OLD."description" IS DISTINCT FROM NEW."description"
		OR (OLD."status" = 'active') IS DISTINCT FROM (NEW."status" = 'active'))
	EXECUTE FUNCTION "alert_search_update"();--> statement-breakpoint
CREATE FUNCTION "alert_search_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM "alert_search" WHERE "alert_id" IN (SELECT "id" FROM "deleted");
	RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "alerts_search_delete" AFTER DELETE ON "alerts"
	REFERENCING OLD TABLE AS "deleted" FOR EACH STATEMENT EXECUTE FUNCTION "alert_search_delete"();--> statement-breakpoint
-- An upgraded database gets the new table's statistics now; an empty one is left alone (0003).
DO $$ BEGIN IF EXISTS (SELECT 1 FROM "alert_search") THEN ANALYZE "alert_search"; END IF; END $$;
