-- The app token holds exactly the scopes of the app's MCP tools: tokens issued before gain
-- aios_automation_write (Ask) and lose the scopes no tool uses.
UPDATE "api_keys" SET "scopes" = ARRAY['sre_alerts_read', 'sre_investigations_read', 'sre_investigations_write', 'aios_automation_read', 'aios_automation_write']::text[]
WHERE "id" IN (SELECT "app_token_key_id" FROM "app_installations" WHERE "app_token_key_id" IS NOT NULL);
