// The storm correlator loop under a backlog (storm-correlator.ts): a round places at most
// PENDING_BATCH queued alerts per call, and one round per tick let a flood outrun it; a round that
// leaves a backlog is followed by another in the same tick, so the queue drains without waiting.
import { sql } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase, waitFor } from "../../../test/harness.ts";
import { insertQueuedAlerts } from "../../../test/queued-alerts.ts";
import { migrate } from "../../core/db/migrate.ts";
import { startStormCorrelator } from "./storm-correlator.ts";
import { PENDING_BATCH } from "./storms.ts";

const OWNER = "3c1f6d0a-5b7e-4c2d-9e8f-1a2b3c4d5e6f";
const QUEUED = PENDING_BATCH * 2 + 200;
const START = Date.parse("2024-05-14T09:00:00.000Z");
/** Longer than the test: only the loop's first tick can drain the queue. */
const ONE_HOUR_MS = 3_600_000;

for (const engine of ENGINES) {
  describe(`the storm correlator loop with a backlog [${engine}]`, () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await createTestDatabase(engine);
      await migrate(test.database.db);
      // One scope's alerts, a second apart, all waiting for the correlator.
      await insertQueuedAlerts(test.database.db, {
        ownerId: OWNER,
        start: START,
        first: 1,
        last: QUEUED,
        id: sql`gen_random_uuid()`,
        scope: sql`'cluster:prod-1'`,
      });
    });
    afterAll(() => test?.drop());

    it("drains more than a round's batch in its first tick", async () => {
      const { db } = test.database;
      const queued = async () =>
        Number((await db.execute(sql`select count(*)::int as n from alert_storm_queue`)).rows[0]?.n);
      expect(await queued()).toBe(QUEUED);
      const loop = startStormCorrelator(db, {
        now: () => new Date(START + 3_600_000),
        log: pino({ level: "silent" }),
        intervalMs: ONE_HOUR_MS,
      });
      try {
        await waitFor(async () => ((await queued()) === 0 ? true : undefined), 30_000);
      } finally {
        await loop.stop();
      }
      expect(await queued()).toBe(0);
    });
  });
}
