CREATE TABLE "alert_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"alert_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"actor" text NOT NULL,
	"source_event" text,
	"status_before" text,
	"status_after" text NOT NULL,
	"invocation_id" uuid,
	"detail" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_payloads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"body" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_sync_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"integration_name" text NOT NULL,
	"trigger" text NOT NULL,
	"status" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"fetched" integer DEFAULT 0 NOT NULL,
	"created" integer DEFAULT 0 NOT NULL,
	"updated" integer DEFAULT 0 NOT NULL,
	"resolved" integer DEFAULT 0 NOT NULL,
	"unchanged" integer DEFAULT 0 NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "alert_sync_seen" (
	"alert_id" uuid PRIMARY KEY NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"last_run_id" uuid NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_webhooks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"app_name" text NOT NULL,
	"source" text NOT NULL,
	"integration" text NOT NULL,
	"auto_investigate" boolean NOT NULL,
	"classify_mode" text NOT NULL,
	"classify_batch_window_seconds" integer NOT NULL,
	"classify_bucket_by" text NOT NULL,
	"classify_critical_bypass" boolean NOT NULL,
	"severity_overrides" jsonb NOT NULL,
	"sns_auto_confirm" boolean NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"webhook_id" uuid,
	"source_type" text NOT NULL,
	"integration_name" text NOT NULL,
	"external_uid" text NOT NULL,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"source_severity" text NOT NULL,
	"severity" text NOT NULL,
	"display_priority" integer NOT NULL,
	"severity_mapping" text NOT NULL,
	"impact_score" integer DEFAULT 0 NOT NULL,
	"impact_explanation" text,
	"status" text NOT NULL,
	"ignored_by" text,
	"ignore_reason" text,
	"analysis_status" text DEFAULT 'none' NOT NULL,
	"triage_bucket" text,
	"attention" text DEFAULT 'needs_review' NOT NULL,
	"attention_reason" text,
	"short_summary" text,
	"initial_investigation" text,
	"triggered_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	"refire_count" integer DEFAULT 0 NOT NULL,
	"last_resolved_at" timestamp with time zone,
	"last_status_change_at" timestamp with time zone NOT NULL,
	"labels" jsonb NOT NULL,
	"links" jsonb NOT NULL,
	"is_test" boolean DEFAULT false NOT NULL,
	"alert_role" text DEFAULT 'unknown' NOT NULL,
	"storm_id" uuid,
	"storm_scope" text,
	"likely_upstream" text,
	"ingested_via" text,
	"raw_payload_id" uuid,
	"last_event_hash" text,
	"event_seq" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"kind" text NOT NULL,
	"instructions" text NOT NULL,
	"model" text,
	"integrations" jsonb NOT NULL,
	"tools" jsonb NOT NULL,
	"inputs" jsonb NOT NULL,
	"max_steps" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "execution_nodes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"trace_id" uuid NOT NULL,
	"key" text NOT NULL,
	"parent_key" text,
	"stage_id" text NOT NULL,
	"depth" integer NOT NULL,
	"stage_position" integer NOT NULL,
	"position" integer NOT NULL,
	"type" text NOT NULL,
	"label" text NOT NULL,
	"status" text NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"job_id" uuid,
	"enqueued_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"output" jsonb,
	"error" text,
	"model" text,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"cost" double precision DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "executions" (
	"trace_id" uuid PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"session_id" uuid NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"target_type" text NOT NULL,
	"target_name" text NOT NULL,
	"workflow_version" integer,
	"agent_name" text NOT NULL,
	"stages" jsonb NOT NULL,
	"status" text NOT NULL,
	"cancelled" boolean DEFAULT false NOT NULL,
	"cancel_reason" text,
	"input" jsonb,
	"structured_output" jsonb,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"settled" boolean DEFAULT false NOT NULL,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"total_cost" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "executions_run_id_unique" UNIQUE("run_id")
);
--> statement-breakpoint
CREATE TABLE "session_artifacts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"session_id" uuid NOT NULL,
	"trace_id" uuid,
	"name" text NOT NULL,
	"mime_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"content" "bytea" NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"title" text NOT NULL,
	"initiator" text NOT NULL,
	"source_app" text,
	"source_metadata" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflow_versions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"workflow_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"status" text NOT NULL,
	"description" text NOT NULL,
	"inputs" jsonb NOT NULL,
	"stages" jsonb NOT NULL,
	"routing_examples" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"approved_at" timestamp with time zone,
	"approved_by" uuid
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"name" text NOT NULL,
	"routing_status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"org_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "orgs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"url" text,
	"description" text DEFAULT '' NOT NULL,
	"credentials_sealed" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_invocations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"webhook_id" uuid NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"status" text NOT NULL,
	"content_type" text,
	"headers" jsonb NOT NULL,
	"payload" "bytea" NOT NULL,
	"payload_bytes" integer NOT NULL,
	"error" text,
	"note" text,
	"outcome" jsonb,
	"session_id" text,
	"trace_id" text,
	"run_id" text
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"name" text NOT NULL,
	"target_type" text NOT NULL,
	"target_name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"token_hash" text NOT NULL,
	"token_sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "webhooks_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_sync_seen" ADD CONSTRAINT "alert_sync_seen_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_nodes" ADD CONSTRAINT "execution_nodes_trace_id_executions_trace_id_fk" FOREIGN KEY ("trace_id") REFERENCES "public"."executions"("trace_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "executions" ADD CONSTRAINT "executions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "session_artifacts" ADD CONSTRAINT "session_artifacts_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_versions" ADD CONSTRAINT "workflow_versions_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_events_alert_seq" ON "alert_events" USING btree ("alert_id","seq");--> statement-breakpoint
CREATE INDEX "alert_sync_runs_integration" ON "alert_sync_runs" USING btree ("org_id","owner_id","integration_name","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "alert_webhooks_org_key" ON "alert_webhooks" USING btree ("org_id","app_name","source","integration") WHERE "alert_webhooks"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "alert_webhooks_personal_key" ON "alert_webhooks" USING btree ("owner_id","app_name","source","integration") WHERE "alert_webhooks"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_org_key" ON "alerts" USING btree ("org_id","source_type","integration_name","external_uid") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_personal_key" ON "alerts" USING btree ("owner_id","source_type","integration_name","external_uid") WHERE "alerts"."org_id" is null;--> statement-breakpoint
CREATE INDEX "alerts_org_by_severity" ON "alerts" USING btree ("org_id","status","display_priority","triggered_at" DESC NULLS FIRST,"id") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_by_severity" ON "alerts" USING btree ("owner_id","status","display_priority","triggered_at" DESC NULLS FIRST,"id") WHERE "alerts"."org_id" is null;--> statement-breakpoint
CREATE INDEX "alerts_org_by_impact" ON "alerts" USING btree ("org_id","status","impact_score" DESC NULLS FIRST,"display_priority","triggered_at" DESC NULLS FIRST,"id") WHERE "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_by_impact" ON "alerts" USING btree ("owner_id","status","impact_score" DESC NULLS FIRST,"display_priority","triggered_at" DESC NULLS FIRST,"id") WHERE "alerts"."org_id" is null;--> statement-breakpoint
CREATE INDEX "alerts_org_active" ON "alerts" USING btree ("org_id","integration_name","attention","analysis_status") WHERE "alerts"."status" = 'active' and "alerts"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "alerts_personal_active" ON "alerts" USING btree ("owner_id","integration_name","attention","analysis_status") WHERE "alerts"."status" = 'active' and "alerts"."org_id" is null;--> statement-breakpoint
CREATE INDEX "alerts_title_trgm" ON "alerts" USING gin ("title" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "alerts_description_trgm" ON "alerts" USING gin ("description" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "alerts_external_uid" ON "alerts" USING btree ("external_uid");--> statement-breakpoint
CREATE INDEX "alerts_triage_bucket" ON "alerts" USING btree ("triage_bucket") WHERE "alerts"."analysis_status" in ('queued', 'running');--> statement-breakpoint
CREATE INDEX "alerts_storm_scope" ON "alerts" USING btree ("storm_scope","storm_id","triggered_at") WHERE "alerts"."status" = 'active' and not "alerts"."is_test" and "alerts"."storm_scope" is not null;--> statement-breakpoint
CREATE INDEX "alerts_storm" ON "alerts" USING btree ("storm_id") WHERE "alerts"."storm_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "agents_org_name" ON "agents" USING btree ("org_id","name") WHERE "agents"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "agents_personal_name" ON "agents" USING btree ("owner_id","name") WHERE "agents"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "execution_nodes_key" ON "execution_nodes" USING btree ("trace_id","key");--> statement-breakpoint
CREATE INDEX "executions_tenant" ON "executions" USING btree ("org_id","owner_id","started_at");--> statement-breakpoint
CREATE INDEX "executions_session" ON "executions" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "executions_running" ON "executions" USING btree ("status") WHERE "executions"."status" = 'running';--> statement-breakpoint
CREATE INDEX "session_artifacts_session" ON "session_artifacts" USING btree ("session_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_tenant" ON "sessions" USING btree ("org_id","owner_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_versions_number" ON "workflow_versions" USING btree ("workflow_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_versions_one_draft" ON "workflow_versions" USING btree ("workflow_id") WHERE "workflow_versions"."status" = 'draft';--> statement-breakpoint
CREATE UNIQUE INDEX "workflows_org_name" ON "workflows" USING btree ("org_id","name") WHERE "workflows"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "workflows_personal_name" ON "workflows" USING btree ("owner_id","name") WHERE "workflows"."org_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "integrations_org_name" ON "integrations" USING btree ("org_id","name") WHERE "integrations"."org_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "integrations_personal_name" ON "integrations" USING btree ("owner_id","name") WHERE "integrations"."org_id" is null;--> statement-breakpoint
CREATE INDEX "webhook_invocations_webhook_received" ON "webhook_invocations" USING btree ("webhook_id","received_at");--> statement-breakpoint
CREATE INDEX "webhook_invocations_run" ON "webhook_invocations" USING btree ("run_id");