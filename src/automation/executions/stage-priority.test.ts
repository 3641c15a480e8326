// Runs someone waits for go first: the stage jobs of a background run (an automatic investigation, a
// triage run) are queued behind those of runs started through the API, Ask or a webhook. On an API
// instance, whose jobs wait for workers elsewhere, the queued jobs are read as sent.
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { registerAgent, startAs, uniqueName } from "../../../test/automation-runs.ts";
import { describeEachEngine } from "../../../test/harness.ts";

describeEachEngine(
  "stage priority",
  (harness) => {
    it("queues a background run's stages behind those of a run someone waits for", async () => {
      const h = harness();
      const owner = await h.createKey();
      const agent = uniqueName("prioritised");
      await registerAgent(h, owner.auth, { name: agent, description: "Answers questions" });
      const target = { type: "agent" as const, name: agent };
      const waited = await startAs(h, owner, { target });
      const background = await startAs(h, owner, { target, background: true });
      const { rows } = await h.vigil.services.database.db.execute(sql`
        select data->>'traceId' as trace, priority from pgboss.job
        where name = 'automation.run_stage' and data->>'traceId' in (${waited.traceId}, ${background.traceId})`);
      const priorityOf = new Map(rows.map((row) => [String(row.trace), Number(row.priority)]));
      expect(priorityOf.get(waited.traceId)).toBe(1);
      expect(priorityOf.get(background.traceId)).toBe(0);
    });
  },
  { role: "api" },
);
