-- A resolve a pull sync inferred from an alert's absence is marked, so that a later listing of the
-- same episode undoes it. Alerts resolved before keep their resolve as final, as before.
ALTER TABLE "alerts" ADD COLUMN "resolve_inferred" boolean DEFAULT false NOT NULL;
