CREATE TABLE "investigation_evidence" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"investigation_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"source" text NOT NULL,
	"tool_name" text,
	"verified" boolean NOT NULL,
	"captured_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "investigations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid,
	"owner_id" uuid NOT NULL,
	"alert_id" uuid NOT NULL,
	"status" text NOT NULL,
	"trace_id" uuid NOT NULL,
	"session_id" uuid,
	"workflow_name" text NOT NULL,
	"parent_investigation_id" uuid,
	"result_summary" text,
	"structured_rca" jsonb,
	"hypotheses" jsonb NOT NULL,
	"prior_incidents" jsonb NOT NULL,
	"triage_metadata" jsonb,
	"remediation_requested" boolean DEFAULT false NOT NULL,
	"operator_message" text,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "investigations_trace_id_unique" UNIQUE("trace_id")
);
--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "investigation" jsonb;--> statement-breakpoint
ALTER TABLE "investigation_evidence" ADD CONSTRAINT "investigation_evidence_investigation_id_investigations_id_fk" FOREIGN KEY ("investigation_id") REFERENCES "public"."investigations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "investigation_evidence_investigation" ON "investigation_evidence" USING btree ("investigation_id","seq");--> statement-breakpoint
CREATE INDEX "investigations_org_started" ON "investigations" USING btree ("org_id","started_at" DESC NULLS LAST,"id") WHERE "investigations"."org_id" is not null;--> statement-breakpoint
CREATE INDEX "investigations_personal_started" ON "investigations" USING btree ("owner_id","started_at" DESC NULLS LAST,"id") WHERE "investigations"."org_id" is null;--> statement-breakpoint
CREATE INDEX "investigations_alert" ON "investigations" USING btree ("alert_id","started_at");