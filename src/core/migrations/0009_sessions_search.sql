CREATE TABLE "session_messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"session_id" uuid NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"trace_id" uuid,
	"data" jsonb,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "first_prompt" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "prompt_key" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "responder_type" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "responder_name" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "pending" jsonb;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "search_text" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "session_messages" ADD CONSTRAINT "session_messages_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "session_messages_session" ON "session_messages" USING btree ("session_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_activity_personal" ON "sessions" USING btree ("owner_id","updated_at","id") WHERE "sessions"."org_id" is null;--> statement-breakpoint
CREATE INDEX "sessions_activity_org" ON "sessions" USING btree ("org_id","updated_at","id") WHERE "sessions"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "sessions_prompt_key" ON "sessions" USING btree ("owner_id","prompt_key");--> statement-breakpoint
CREATE INDEX "sessions_search" ON "sessions" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
-- hand-written below
-- Sessions written before this migration: their prompt, responder and search text from what they hold.
UPDATE "sessions" s SET
  "first_prompt" = s."title",
  "responder_type" = (SELECT e."target_type" FROM "executions" e WHERE e."session_id" = s."id" ORDER BY e."started_at" DESC LIMIT 1),
  "responder_name" = (SELECT e."target_name" FROM "executions" e WHERE e."session_id" = s."id" ORDER BY e."started_at" DESC LIMIT 1);--> statement-breakpoint
UPDATE "sessions" s SET "search_text" = lower(concat_ws(' ', s."id"::text, s."title", s."first_prompt", s."initiator", s."source_app", s."responder_name",
  (SELECT string_agg(m.key || ' ' || m.value, ' ') FROM jsonb_each_text(s."source_metadata") m),
  (SELECT string_agg(DISTINCT e."agent_name", ' ') FROM "executions" e WHERE e."session_id" = s."id")));
