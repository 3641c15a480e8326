// A run's first stage starts when the run is sent: the stage queue's workers are woken by the commit
// that sends it, not by their next poll. Here they poll once an hour, so a run that waited for the
// poll would not finish within the test.
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  createApprovedWorkflow,
  type Loopback,
  settledTrace,
  startAs,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine } from "../../../test/harness.ts";

let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
});

describeEachEngine(
  "a run's stage workers, woken when the run is sent",
  (harness) => {
    it("runs each new run at once, without waiting for the workers' next poll", async () => {
      const h = harness();
      const owner = await h.createKey();
      const name = uniqueName("wake");
      await createApprovedWorkflow(h, owner.auth, {
        name,
        stages: [{ id: "call", action_type: "http_request", config: { url: `${loopback.url}/ok` } }],
      });
      const before = loopback.hits.get("/ok") ?? 0;
      // Two runs one after the other: the workers' first fetch, at start, cannot have found either.
      for (let n = 1; n <= 2; n++) {
        const started = await startAs(h, owner, { target: { type: "workflow", name } });
        const trace = await settledTrace(h, owner.auth, started.traceId);
        expect(trace.execution.status).toBe("completed");
      }
      expect((loopback.hits.get("/ok") ?? 0) - before).toBe(2);
    });
  },
  {},
  { pollingIntervalSeconds: 3600 },
);
