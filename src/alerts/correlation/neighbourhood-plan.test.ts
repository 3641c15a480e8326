// The storm correlator's read of a round's neighbourhood (storms.ts, readNeighbourhood) finds storms,
// members and loose alerts through the storm indexes alone and reads each alert once: never through
// the tenant's indexes (which a planner with stale statistics chose during a burst, reading every
// active alert of the tenant), and never again by id after the storm index found it (a second
// lookup of every member, half of the read's time in the all-roles ingest bench).
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachEngine } from "../../../test/harness.ts";
import { indexesOfPlan } from "../../../test/plans.ts";
import { neighbourhoodQuery } from "./storms.ts";

describeEachEngine("storm neighbourhood read", (harness) => {
  it("reads storms, members and loose alerts through the storm indexes, each alert once", async () => {
    const { database } = harness().vigil.services;
    const now = Date.parse("2024-05-14T09:30:00.000Z");
    const ranges = [
      { scope: "cluster:prod-eu", lo: now - 600_000, hi: now + 600_000 },
      { scope: "cluster:prod-us", lo: now - 600_000, hi: now },
    ];
    const touched = ["01900000-0000-7000-8000-000000000001"];
    for (const tenant of [
      { orgId: "01900000-0000-7000-8000-0000000000aa", ownerId: "01900000-0000-7000-8000-0000000000bb" },
      { orgId: null, ownerId: "01900000-0000-7000-8000-0000000000bb" },
    ]) {
      const indexes = await database.transaction(async (tx) => {
        // A nearly empty table invites sequential scans; the choice between indexes is what counts.
        await tx.execute(sql`set local enable_seqscan = off`);
        const { rows } = await tx.execute(
          sql`explain (format json) ${neighbourhoodQuery(tenant, ranges, touched)}`,
        );
        return indexesOfPlan(rows);
      });
      expect(indexes.sort(), JSON.stringify(tenant)).toEqual(["alerts_storm", "alerts_storm_scope"]);
    }
  });
});
