CREATE TABLE "alert_storm_queue" (
	"alert_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"storm_scope" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "alert_storm_queue_scope" ON "alert_storm_queue" USING btree ("org_id","owner_id","storm_scope","alert_id","seq");--> statement-breakpoint
INSERT INTO "alert_storm_queue" ("alert_id", "seq", "org_id", "owner_id", "storm_scope")
	SELECT "id", "event_seq", "org_id", "owner_id", coalesce("storm_scope", '') FROM "alerts" WHERE "storm_pending";--> statement-breakpoint
DROP INDEX "alerts_storm_pending";--> statement-breakpoint
ALTER TABLE "alerts" DROP COLUMN "storm_pending";
