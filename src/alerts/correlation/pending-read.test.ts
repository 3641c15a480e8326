// The storm correlator's read of a round's queued alerts (storms.ts, pendingQuery): under a backlog
// it picks the round's entries in the queue, earliest trigger time first, and reads only their
// alerts; it read every queued alert of the scopes to keep the first PENDING_BATCH of them.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { rowsReadOf } from "../../../test/plans.ts";
import { insertQueuedAlerts } from "../../../test/queued-alerts.ts";
import { migrate } from "../../core/db/migrate.ts";
import { pendingQuery } from "./storms.ts";

const OWNER = "e8b7059f-2900-4675-9add-f93cd707f5aa";
const QUEUED = 600;
const ROUND = 500;
const START = Date.parse("2024-05-14T09:00:00.000Z");

for (const engine of ENGINES) {
  describe(`the correlator's pending read [${engine}]`, () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await createTestDatabase(engine);
      await migrate(test.database.db);
      const { db } = test.database;
      // Alert n fired at START + n s, with ids in the opposite order (the last created fired
      // first), all queued in one scope, and one in another scope of the tenant.
      await insertQueuedAlerts(db, {
        ownerId: OWNER,
        start: START,
        first: 0,
        last: QUEUED,
        id: sql`('00000000-0000-4000-8000-' || lpad(to_hex(${QUEUED + 1} - n), 12, '0'))::uuid`,
        scope: sql`case when n = 0 then 'cluster:other' else 'cluster:prod-1' end`,
      });
    });
    afterAll(() => test?.drop());

    it("answers a round's worth of the scopes' queued alerts, earliest trigger time first", async () => {
      const { rows } = await test.database.db.execute(
        pendingQuery({ orgId: null, ownerId: OWNER }, ["cluster:prod-1"]),
      );
      const times = rows.map((row) => new Date(String(row.triggered_at)).getTime());
      expect(rows).toHaveLength(ROUND);
      expect(times).toEqual(Array.from({ length: ROUND }, (_, n) => START + (n + 1) * 1000));
    });

    it("reads the alerts of that round only, however long the queue", async () => {
      const read = await test.database.transaction(async (tx) => {
        // The choice between reading every queued alert and reading a round's is what counts.
        await tx.execute(sql`set local enable_seqscan = off`);
        const { rows } = await tx.execute(
          sql`explain (analyze, format json) ${pendingQuery({ orgId: null, ownerId: OWNER }, ["cluster:prod-1"])}`,
        );
        return rowsReadOf(rows, "alerts");
      });
      expect(read).toBe(ROUND);
    });
  });
}
