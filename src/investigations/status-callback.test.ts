// sre_update_investigation_status takes hypotheses in the spec's InvestigationHypothesis shape: only
// `statement` is required; `confidence` (0 to 1) and `status` may be null or left out. The
// investigation runs a workflow that hands off to an external agent (a server that never answers),
// so only the agent's callbacks move it.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../test/alerts.ts";
import { createHandOffWorkflow } from "../../test/automation-runs.ts";
import { call, describeEachEngine } from "../../test/harness.ts";
import { INVESTIGATION_PURPOSE, setInvestigationWorkflowChooser } from "./index.ts";

const held: ServerResponse[] = [];
const agent = createServer((_req, res) => {
  held.push(res);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  for (const res of held) res.destroy();
  agent.closeAllConnections();
  await new Promise((resolve) => agent.close(resolve));
});

describeEachEngine(
  "investigation status callback",
  (harness) => {
    it("accepts hypotheses with only the spec's required statement, and ranks them", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const workflow = `hand-off-${h.engine}`;
      await createHandOffWorkflow(
        h,
        auth,
        workflow,
        `http://127.0.0.1:${(agent.address() as AddressInfo).port}/investigate`,
      );
      const remove = setInvestigationWorkflowChooser(async (_db, _tenant, purpose) =>
        purpose === INVESTIGATION_PURPOSE ? workflow : null,
      );
      try {
        const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "agent" });
        const [alertId] = await deliverIds(
          h,
          trigger,
          amBody([
            {
              status: "firing",
              fingerprint: "agent-1",
              startsAt: "2026-11-22T10:00:00Z",
              labels: { alertname: "Q" },
            },
          ]),
        );
        const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
        const id = started.json().investigation.id;
        const update = (body: object) =>
          call(h, auth, "POST", `/app/sre/api/v1/investigations/${id}/status`, body);

        const tooSure = await update({
          status: "running",
          hypotheses: [{ statement: "x", confidence: 1.5 }],
        });
        expect(tooSure.statusCode).toBe(400);
        expect(tooSure.json().details.field).toBe("hypotheses.0.confidence");
        const noStatement = await update({ status: "running", hypotheses: [{ confidence: 0.5 }] });
        expect(noStatement.statusCode).toBe(400);
        expect(noStatement.json().details.field).toBe("hypotheses.0.statement");

        const response = await update({
          status: "completed",
          result_summary: "The queue consumer stalled",
          hypotheses: [
            { statement: "A deploy changed the consumer" },
            { statement: "The queue consumer stalled", confidence: 0.8, status: "confirmed" },
            { statement: "The broker lost a node", confidence: null, status: "rejected" },
          ],
        });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json().hypotheses).toEqual([
          { statement: "The queue consumer stalled", confidence: 0.8, status: "confirmed", rationale: null },
          { statement: "A deploy changed the consumer", confidence: null, status: null, rationale: null },
          { statement: "The broker lost a node", confidence: null, status: "rejected", rationale: null },
        ]);
        const read = await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`);
        expect(read.json().hypotheses).toEqual(response.json().hypotheses);
      } finally {
        remove();
      }
    });
  },
  { integrationAllowedHosts: ["127.0.0.1"], automationHttpAllowedHosts: ["127.0.0.1"] },
);
