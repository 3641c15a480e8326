// Alerts waiting for the storm correlator, written straight to the tables: tests of the correlator's
// reads and loop need hundreds of queued alerts of one tenant, faster than deliveries make them.
import { type SQL, sql } from "drizzle-orm";
import type { Executor } from "../src/core/db/database.ts";

export interface QueuedAlerts {
  ownerId: string;
  /** Alert n fires `n` seconds after `start`, for n from `first` to `last`. */
  start: number;
  first: number;
  last: number;
  /** Each alert's id and storm scope, as SQL over `n`. */
  id: SQL;
  scope: SQL;
}

/** Inserts active alerts of a personal tenant and queues each for the storm correlator. */
export async function insertQueuedAlerts(db: Executor, alerts: QueuedAlerts): Promise<void> {
  await db.execute(sql`
    insert into alerts (id, org_id, owner_id, source_type, integration_name, external_uid, title, description,
      source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
      created_at, updated_at, last_status_change_at, storm_scope, event_seq)
    select ${alerts.id}, null, ${alerts.ownerId}, 'alertmanager', 'prod', 'uid-' || n, 'NodeDown', '',
      'critical', 'Critical', 1, 'default', 'active', '{}'::jsonb, '[]'::jsonb,
      ${new Date(alerts.start).toISOString()}::timestamptz + n * interval '1 second', now(), now(), now(),
      ${alerts.scope}, 1
    from generate_series(${alerts.first}::int, ${alerts.last}::int) n`);
  await db.execute(sql`
    insert into alert_storm_queue (alert_id, seq, org_id, owner_id, storm_scope, triggered_at)
    select id, event_seq, org_id, owner_id, storm_scope, triggered_at from alerts
    where owner_id = ${alerts.ownerId}`);
}
