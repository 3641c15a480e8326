-- Deliveries without a run (alert ingest, nearly all of them) no longer write an entry in the run-id index.
DROP INDEX "webhook_invocations_run";--> statement-breakpoint
CREATE INDEX "webhook_invocations_run" ON "webhook_invocations" USING btree ("run_id") WHERE "webhook_invocations"."run_id" is not null;