-- A webhook that targets an agent or a workflow can be pointed elsewhere: each record keeps the
-- target its trigger went to. Earlier records keep showing the webhook's target, as before.
ALTER TABLE "webhook_invocations" ADD COLUMN "target_type" text;--> statement-breakpoint
ALTER TABLE "webhook_invocations" ADD COLUMN "target_name" text;
