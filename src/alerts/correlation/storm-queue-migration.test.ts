// Migration 0014 on a database that has alerts waiting for the correlator: each alert flagged
// storm_pending becomes a queue entry (its event_seq, tenant and scope), and no other does.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ENGINES } from "../../../test/harness.ts";
import { beforeMigration } from "../../../test/migrations.ts";

const QUEUE_MIGRATION = "0014_storm_queue.sql";

for (const engine of ENGINES) {
  describe(`migration ${QUEUE_MIGRATION} [${engine}]`, () => {
    it("queues the alerts flagged storm_pending, with their seq, tenant and scope", () =>
      beforeMigration(engine, QUEUE_MIGRATION, async (db, apply) => {
        const owner = "e8b7059f-2900-4675-9add-f93cd707f5aa";
        const org = "0d8c2a52-93a5-4c1f-8f0e-6f1b7bb8a0c4";
        const alert = (
          id: string,
          orgId: string | null,
          scope: string | null,
          pending: boolean,
          seq: number,
        ) => sql`
          insert into alerts (id, org_id, owner_id, source_type, integration_name, external_uid, title, description,
            source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
            created_at, updated_at, last_status_change_at, storm_scope, storm_pending, event_seq)
          values (${id}, ${orgId}, ${owner}, 'alertmanager', 'prod', ${id}, 'NodeDown', '', 'critical', 'Critical', 1,
            'default', 'active', '{}'::jsonb, '[]'::jsonb, now(), now(), now(), now(), ${scope}, ${pending}, ${seq})`;
        const personal = "00000000-0000-4000-8000-000000000001";
        const inOrg = "00000000-0000-4000-8000-000000000002";
        const unscoped = "00000000-0000-4000-8000-000000000003";
        const settled = "00000000-0000-4000-8000-000000000004";
        await db.execute(alert(personal, null, "cluster:prod-1", true, 3));
        await db.execute(alert(inOrg, org, "service:api@production", true, 7));
        await db.execute(alert(unscoped, null, null, true, 1));
        await db.execute(alert(settled, null, "cluster:prod-1", false, 2));

        await apply();

        const { rows } = await db.execute(sql`
          select alert_id, seq, org_id, owner_id, storm_scope from alert_storm_queue order by alert_id`);
        expect(rows).toEqual([
          { alert_id: personal, seq: 3, org_id: null, owner_id: owner, storm_scope: "cluster:prod-1" },
          { alert_id: inOrg, seq: 7, org_id: org, owner_id: owner, storm_scope: "service:api@production" },
          { alert_id: unscoped, seq: 1, org_id: null, owner_id: owner, storm_scope: "" },
        ]);
        const { rows: columns } = await db.execute(sql`
          select column_name from information_schema.columns where table_name = 'alerts' and column_name = 'storm_pending'`);
        expect(columns).toEqual([]);
      }));
  });
}
