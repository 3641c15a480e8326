ALTER TABLE "integrations" ADD COLUMN "settings" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "investigations" ADD COLUMN "remediation" jsonb;