// What the storm correlator's neighbourhood read (storms.ts, neighbourhoodQuery) answers about the
// storms near a range: every storm of the tenant with a live member in the range, however many
// share the scope, each with its size and first and last trigger times; no other tenant's storm
// under the same scope name, and no storm whose members are all outside the range. Its plan, kept
// for the connection's life, is never compiled to machine code: the walk over each range's storms
// has a large estimated cost, over PostgreSQL's JIT threshold, and compiling took 40 ms a read.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { useGenericPlans } from "../../core/db/database.ts";
import { migrate } from "../../core/db/migrate.ts";
import { neighbourhoodQuery } from "./storms.ts";

const OWNER = "0f0c5a4e-31b1-4d5e-9a40-0d3c1c2b7a10";
const OTHER_OWNER = "6a7d2e1b-8c44-4f3e-a1d2-5b9e0c4f7d21";
const T = Date.parse("2024-05-14T09:00:00.000Z");
const MINUTE = 60_000;
const storm = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;

/** Members per storm: its owner, and each member's trigger time in minutes after T. */
const STORMS = [
  { id: storm(1), owner: OWNER, minutes: [0, 1, 2] },
  { id: storm(2), owner: OWNER, minutes: [3, 4] },
  { id: storm(3), owner: OTHER_OWNER, minutes: [1, 2] },
  { id: storm(4), owner: OWNER, minutes: [30, 31] },
];

for (const engine of ENGINES) {
  describe(`the storm neighbourhood read's storms [${engine}]`, () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await createTestDatabase(engine);
      await migrate(test.database.db);
      let uid = 0;
      for (const { id, owner, minutes } of STORMS) {
        for (const minute of minutes) {
          uid += 1;
          await test.database.db.execute(sql`
            insert into alerts (id, org_id, owner_id, source_type, integration_name, external_uid, title, description,
              source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
              created_at, updated_at, last_status_change_at, storm_scope, storm_id, event_seq)
            values (gen_random_uuid(), null, ${owner}, 'alertmanager', 'prod', ${`uid-${uid}`}, 'NodeDown', '',
              'critical', 'Critical', 1, 'default', 'active', '{}'::jsonb, '[]'::jsonb,
              ${new Date(T + minute * MINUTE).toISOString()}::timestamptz, now(), now(), now(), 'cluster:prod',
              ${id}::uuid, 1)`);
        }
      }
    });
    afterAll(() => test?.drop());

    it("answers every storm of the tenant near the range, with its size and span", async () => {
      const ranges = [{ scope: "cluster:prod", lo: T - 10 * MINUTE, hi: T + 10 * MINUTE }];
      const { rows } = await test.database.db.execute(
        neighbourhoodQuery({ orgId: null, ownerId: OWNER }, ranges, []),
      );
      const raw = rows[0]?.storms;
      const storms = (typeof raw === "string" ? JSON.parse(raw) : raw) as {
        id: string;
        size: number;
        first: string;
        last: string;
      }[];
      expect(
        storms
          .map(({ id, size, first, last }) => ({
            id,
            size,
            first: new Date(first).getTime(),
            last: new Date(last).getTime(),
          }))
          .sort((a, b) => a.id.localeCompare(b.id)),
      ).toEqual([
        { id: storm(1), size: 3, first: T, last: T + 2 * MINUTE },
        { id: storm(2), size: 2, first: T + 3 * MINUTE, last: T + 4 * MINUTE },
      ]);
    });

    it("runs without JIT compilation in the correlator's transaction", async () => {
      const ranges = Array.from({ length: 50 }, (_, n) => ({
        scope: `cluster:prod-${n}`,
        lo: T - 10 * MINUTE,
        hi: T + 10 * MINUTE,
      }));
      const explained = await test.database.transaction(async (tx) => {
        await useGenericPlans(tx);
        const { rows } = await tx.execute(
          sql`explain (analyze, format json) ${neighbourhoodQuery({ orgId: null, ownerId: OWNER }, ranges, [])}`,
        );
        return JSON.stringify(rows);
      });
      expect(explained).toContain("Execution Time");
      expect(explained).not.toContain("JIT");
    });
  });
}
