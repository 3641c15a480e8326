// Writes classifications, from the built-in classifier or a triage workflow, with their history
// events. Only alerts still running in the bucket that claimed them are written: a re-fire that
// queued one again meanwhile keeps its new state. An analyst's attention set during the alert's
// episode (after it was created, re-fired or sent to be classified again) stands: the
// classification writes its summary and write-up beside it.
import { sql } from "drizzle-orm";
import { boundArray } from "../../core/db/bound-array.ts";
import { type Executor, executePlannedOnce } from "../../core/db/database.ts";
import { boundJsonArray } from "../../core/db/json-array.ts";

export interface Classified {
  id: string;
  bucket: string;
  attention: string;
  reason: string | null;
  summary: string | null;
  investigation: string | null;
  /** The `classified` event's detail: which step or workflow decided, and why a fallback ran. */
  detail: Record<string, unknown>;
}

/**
 * One statement (one round trip, however many alerts); rows are locked in id order, as ingest locks
 * them. `locked`: the caller's transaction locked the alerts while they were still queued and
 * classified them before letting go, so queued ones are written too.
 */
export async function storeClassifications(
  db: Executor,
  classified: Classified[],
  now: Date,
  { locked = false } = {},
): Promise<void> {
  if (classified.length === 0) return;
  const claimed = locked ? sql`('queued', 'running')` : sql`('running')`;
  // The alerts are locked by id alone, through the primary key, and their status and bucket checked
  // on the locked rows. Found through the join with the input, a planner that took the queued
  // alerts to be few (the table not analyzed since a burst) read every queued and running alert
  // instead (5 ms to store one classification with 7,000 alerts queued in their batch window), or
  // the whole bucket index beside the ids (1 ms). An alert whose status changed meanwhile stays
  // locked to the end of the transaction, unwritten.
  const ids = boundArray(
    classified.map(({ id }) => id),
    "uuid",
  );
  // Planned once (its plan goes by the ids, whatever their values): planning it took 0.65 ms a
  // round in the all-roles bench, beside 4.3 ms to run it.
  await executePlannedOnce(
    db,
    "alerts",
    `alerts.classifications.store.${locked ? "locked" : "running"}`,
    sql`
    with input as (
      select * from json_to_recordset(${boundJsonArray(classified)})
        as r(id uuid, bucket text, attention text, reason text, summary text, investigation text, detail jsonb)
    ), locked as (
      select a.id, a.analysis_status, a.triage_bucket, a.attention_by_operator from alerts a
      where a.id = any(${ids}) order by a.id for update of a
    ), claimed as (
      select l.id from locked l join input i on i.id = l.id
      where l.analysis_status in ${claimed} and l.triage_bucket = i.bucket
    ), operated as (
      select l.id from locked l where l.attention_by_operator and l.id in (select id from claimed)
    ), updated as (
      update alerts a set
        attention = case when o.id is null then i.attention else a.attention end,
        attention_reason = case when o.id is null then i.reason else a.attention_reason end,
        short_summary = i.summary, initial_investigation = i.investigation, analysis_status = 'completed',
        triage_bucket = null, event_seq = a.event_seq + 1
      from input i left join operated o on o.id = i.id
      where a.id = i.id and a.id in (select id from claimed)
      returning a.id, a.event_seq, a.status,
        case when o.id is null then i.detail else i.detail || '{"operator_attention_kept": true}' end as detail
    )
    insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
    select id, event_seq, ${now.toISOString()}::timestamptz, 'classified', 'vigil', null, status, status, null, detail
    from updated`,
  );
}
