-- Runs Vigil starts by itself (automatic investigations, triage runs) are marked, so that their
-- stages wait behind those of runs someone waits for. Runs already started count as waited for.
ALTER TABLE "executions" ADD COLUMN "background" boolean DEFAULT false NOT NULL;