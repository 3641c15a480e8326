DROP INDEX "alerts_org_status_count";--> statement-breakpoint
DROP INDEX "alerts_personal_status_count";--> statement-breakpoint
CREATE INDEX "alerts_org_status_by_attention" ON "alerts" USING btree ("org_id","status","attention","integration_name","analysis_status") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_status_by_attention" ON "alerts" USING btree ("owner_id","status","attention","integration_name","analysis_status") WHERE "alerts"."org_id" is null;