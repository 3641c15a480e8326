// Migration 0020 on alerts an analyst already triaged: the flag is read from each alert's history
// once, so an analyst's attention of the current episode stands, and one of an earlier episode, or
// one given way to a classify-again request, does not.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ENGINES } from "../../../test/harness.ts";
import { beforeMigration } from "../../../test/migrations.ts";

const MIGRATION = "0020_alerts_attention_by_operator.sql";
const OWNER = "e8b7059f-2900-4675-9add-f93cd707f5aa";

for (const engine of ENGINES) {
  describe(`migration ${MIGRATION} [${engine}]`, () => {
    it("marks the alerts whose attention an analyst set in their current episode", () =>
      beforeMigration(engine, MIGRATION, async (db, apply) => {
        // Event kinds in order, each [kind, actor, whether it changed attention]; the expected flag.
        const histories: [string, [string, string, boolean][], boolean][] = [
          [
            "00000000-0000-4000-8000-000000000001",
            [
              ["created", "vigil", false],
              ["triaged", "operator", true],
            ],
            true,
          ],
          [
            "00000000-0000-4000-8000-000000000002",
            [
              ["created", "vigil", false],
              ["triaged", "operator", true],
              ["refired", "vigil", false],
            ],
            false,
          ],
          [
            "00000000-0000-4000-8000-000000000003",
            [
              ["created", "vigil", false],
              ["triaged", "operator", true],
              ["reclassify_requested", "operator", false],
            ],
            false,
          ],
          [
            "00000000-0000-4000-8000-000000000004",
            [
              ["created", "vigil", false],
              ["ignored", "operator", false],
            ],
            false,
          ],
        ];
        for (const [id, events] of histories) {
          await db.execute(sql`
            insert into alerts (id, org_id, owner_id, source_type, integration_name, external_uid, title, description,
              source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
              created_at, updated_at, last_status_change_at, event_seq)
            values (${id}, null, ${OWNER}, 'alertmanager', 'prod', ${id}, 'DiskFull', '', 'critical',
              'Critical', 1, 'default', 'active', '{}'::jsonb, '[]'::jsonb, now(), now(), now(), now(), ${events.length})`);
          for (const [n, [kind, actor, attention]] of events.entries()) {
            const detail = attention
              ? { changes: { attention: "others" } }
              : { changes: { status: "ignored" } };
            await db.execute(sql`
              insert into alert_events (alert_id, seq, at, kind, actor, status_before, status_after, detail)
              values (${id}, ${n + 1}, now(), ${kind}, ${actor}, 'active', 'active', ${JSON.stringify(detail)}::jsonb)`);
          }
        }

        await apply();

        const { rows } = await db.execute(sql`select id, attention_by_operator from alerts order by id`);
        expect(rows).toEqual(histories.map(([id, , flag]) => ({ id, attention_by_operator: flag })));
      }));
  });
}
