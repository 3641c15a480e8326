-- Extensions the foundation's indexes need; written by hand, not by drizzle-kit, and named to sort
-- (and so apply, src/core/db/migrate.ts) before 0000_foundation.sql. pg_trgm: the trigram indexes
-- of `q` (alerts_title_trgm, alerts_description_trgm); PGlite loads it in src/core/db/database.ts.
-- Regenerating the foundation must keep this file: rm only 0000_foundation.sql and meta/.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
