-- An org app's token acts only in the app's workspace: it could also read and write its installing
-- user's personal namespace (a request without orgId).
ALTER TABLE "api_keys" ADD COLUMN "personal_namespace" boolean DEFAULT true NOT NULL;--> statement-breakpoint
UPDATE "api_keys" SET "personal_namespace" = false
  WHERE "id" IN (SELECT "app_token_key_id" FROM "app_installations" WHERE "org_id" IS NOT NULL);
