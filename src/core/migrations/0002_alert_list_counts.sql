DROP INDEX "alerts_org_active";--> statement-breakpoint
DROP INDEX "alerts_personal_active";--> statement-breakpoint
CREATE INDEX "alerts_org_status_count" ON "alerts" USING btree ("org_id","status","integration_name","attention","analysis_status") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_status_count" ON "alerts" USING btree ("owner_id","status","integration_name","attention","analysis_status") WHERE "alerts"."org_id" is null;--> statement-breakpoint
CREATE INDEX "alerts_org_filter_count" ON "alerts" USING btree ("org_id","status","display_priority","alert_role","source_type","attention","integration_name") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_filter_count" ON "alerts" USING btree ("owner_id","status","display_priority","alert_role","source_type","attention","integration_name") WHERE "alerts"."org_id" is null;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_attention_known" CHECK ("alerts"."attention" in ('needs_attention', 'needs_review', 'false_positive', 'others'));--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_analysis_status_known" CHECK ("alerts"."analysis_status" in ('none', 'queued', 'running', 'completed', 'failed'));--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_display_priority_of_severity" CHECK (("alerts"."severity", "alerts"."display_priority") in (('Critical', 1), ('High', 2), ('Medium', 3), ('Low', 4), ('info', 5)));