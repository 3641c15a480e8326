-- The correlator picks a round's queue entries in trigger order before reading their alerts. Entries
-- queued before take their alert's trigger time; an entry whose alert is gone could never be read.
ALTER TABLE "alert_storm_queue" ADD COLUMN "triggered_at" timestamp with time zone;--> statement-breakpoint
UPDATE "alert_storm_queue" q SET "triggered_at" = a."triggered_at" FROM "alerts" a WHERE a."id" = q."alert_id";--> statement-breakpoint
DELETE FROM "alert_storm_queue" WHERE "triggered_at" IS NULL;--> statement-breakpoint
ALTER TABLE "alert_storm_queue" ALTER COLUMN "triggered_at" SET NOT NULL;
