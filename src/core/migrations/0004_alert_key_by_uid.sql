DROP INDEX "alerts_org_key";--> statement-breakpoint
DROP INDEX "alerts_personal_key";--> statement-breakpoint
DROP INDEX "alerts_external_uid";--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_key" ON "alerts" USING btree ("external_uid",coalesce("org_id", "owner_id"),"source_type","integration_name");