CREATE TABLE "app_installations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"app_name" text NOT NULL,
	"enabled" boolean NOT NULL,
	"integrations" jsonb NOT NULL,
	"attached_workflows" jsonb NOT NULL,
	"workflow_assignments" jsonb NOT NULL,
	"config" jsonb NOT NULL,
	"app_token_sealed" text,
	"app_token_key_id" uuid,
	"installed_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "discovery_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"app_name" text NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"result" jsonb NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "app_installations_org_app" ON "app_installations" USING btree ("org_id","app_name") WHERE "app_installations"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "app_installations_personal_app" ON "app_installations" USING btree ("owner_id","app_name") WHERE "app_installations"."org_id" is null;--> statement-breakpoint
CREATE INDEX "discovery_runs_tenant_started" ON "discovery_runs" USING btree ("org_id","owner_id","started_at");--> statement-breakpoint
-- hand-written below
-- Tenants that registered alert webhooks before apps had installations keep receiving alerts: they
-- get the SRE app's config row (no bindings; the app token is issued by their next PUT).
INSERT INTO "app_installations" ("id", "org_id", "owner_id", "app_name", "enabled", "integrations", "attached_workflows", "workflow_assignments", "config", "installed_at", "updated_at")
SELECT gen_random_uuid(), w."org_id", min(w."owner_id"::text)::uuid, 'sre', true, '[]'::jsonb, '[]'::jsonb, '[]'::jsonb, '{}'::jsonb, now(), now()
FROM "alert_webhooks" w
WHERE w."app_name" = 'sre'
GROUP BY w."org_id", CASE WHEN w."org_id" IS NULL THEN w."owner_id" END;
