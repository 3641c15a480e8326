-- Sessions are found by their first prompt's hash: a prompt of 2,700 characters or more made an
-- index entry larger than a B-tree page allows, and its session could not be created.
DROP INDEX "sessions_prompt_key";--> statement-breakpoint
CREATE INDEX "sessions_prompt_key" ON "sessions" USING btree ("owner_id",md5("prompt_key"));
