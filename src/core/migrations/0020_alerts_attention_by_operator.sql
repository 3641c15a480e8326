-- Whether an analyst set the alert's attention in its current episode, kept on the row: read from the
-- history, it was lost once the history trim dropped the analyst's event in a long episode.
ALTER TABLE "alerts" ADD COLUMN "attention_by_operator" boolean DEFAULT false NOT NULL;--> statement-breakpoint
UPDATE "alerts" a SET "attention_by_operator" = true
WHERE EXISTS (
  SELECT 1 FROM "alert_events" e
  WHERE e.alert_id = a.id AND e.actor = 'operator' AND e.detail->'changes' ? 'attention'
    AND e.seq > coalesce((SELECT max(s.seq) FROM "alert_events" s WHERE s.alert_id = a.id
      AND s.kind IN ('created', 'refired', 'reclassify_requested')), 0)
);
