// Migration 0017 on a database with a backlog for the storm correlator: each queue entry takes its
// alert's trigger time, an entry whose alert is gone (it could never be read) is removed, and the
// column is required from then on.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ENGINES } from "../../../test/harness.ts";
import { beforeMigration } from "../../../test/migrations.ts";

const MIGRATION = "0017_storm_queue_triggered_at.sql";

for (const engine of ENGINES) {
  describe(`migration ${MIGRATION} [${engine}]`, () => {
    it("gives each queue entry its alert's trigger time and drops the entries of alerts gone", () =>
      beforeMigration(engine, MIGRATION, async (db, apply) => {
        const owner = "e8b7059f-2900-4675-9add-f93cd707f5aa";
        const queued = "00000000-0000-4000-8000-000000000001";
        const gone = "00000000-0000-4000-8000-000000000002";
        await db.execute(sql`
          insert into alerts (id, org_id, owner_id, source_type, integration_name, external_uid, title, description,
            source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
            created_at, updated_at, last_status_change_at, storm_scope, event_seq)
          values (${queued}, null, ${owner}, 'alertmanager', 'prod', 'node-down', 'NodeDown', '', 'critical',
            'Critical', 1, 'default', 'active', '{}'::jsonb, '[]'::jsonb, '2024-05-14T09:30:00Z', now(), now(), now(),
            'cluster:prod-1', 2)`);
        await db.execute(sql`
          insert into alert_storm_queue (alert_id, seq, org_id, owner_id, storm_scope)
          values (${queued}, 2, null, ${owner}, 'cluster:prod-1'), (${gone}, 1, null, ${owner}, 'cluster:prod-1')`);

        await apply();

        const { rows } = await db.execute(sql`
          select alert_id, seq, extract(epoch from triggered_at)::int as triggered from alert_storm_queue`);
        expect(rows).toEqual([
          { alert_id: queued, seq: 2, triggered: Date.parse("2024-05-14T09:30:00Z") / 1000 },
        ]);
        await expect(
          db.execute(sql`
            insert into alert_storm_queue (alert_id, seq, org_id, owner_id, storm_scope)
            values (${queued}, 3, null, ${owner}, 'cluster:prod-1')`),
        ).rejects.toThrow();
      }));
  });
}
