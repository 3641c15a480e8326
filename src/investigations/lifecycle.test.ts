// A workflow assigned to alert_investigation that completes without reporting through the
// callbacks: the investigation keeps the run's own summary, or says the workflow reported nothing.
import { expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow, uniqueName } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../test/harness.ts";
import { INVESTIGATION_PURPOSE, setInvestigationWorkflowChooser } from "./index.ts";

/** Investigates a new alert with an approved workflow whose one stage writes a report of `summary`. */
async function investigateWith(h: Harness, auth: Auth, summary: string) {
  const workflow = uniqueName("deep-dive");
  await createApprovedWorkflow(h, auth, {
    name: workflow,
    inputs: [
      { name: "investigation_id", required: true },
      { name: "alert_id", required: true },
    ],
    stages: [{ id: "report", action_type: "write_report", config: { summary } }],
  });
  const remove = setInvestigationWorkflowChooser(async (_db, _tenant, purpose) =>
    purpose === INVESTIGATION_PURPOSE ? workflow : null,
  );
  try {
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: uniqueName("am") });
    const [alertId] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: uniqueName("fp"),
          startsAt: new Date().toISOString(),
          labels: { alertname: "DeepDive", service: "payments" },
        },
      ]),
    );
    const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
    expect(started.statusCode, started.body).toBe(200);
    const id = started.json().investigation.id;
    const done = await waitFor(async () => {
      const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
      return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
    }, 60_000);
    return { workflow, alertId: alertId as string, done };
  } finally {
    remove();
  }
}

describeEachEngine("an assigned workflow that ends without reporting", (harness) => {
  it("keeps the run's structured_output summary as the result_summary", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { alertId, done } = await investigateWith(h, auth, "deep dive done for {{input.alert_id}}");
    expect(done.status).toBe("completed");
    expect(done.result_summary).toBe(`deep dive done for ${alertId}`);
    expect(done.structured_rca).toBeNull();
    expect((await readAlert(h, auth, alertId)).investigation).toMatchObject({
      status: "completed",
      result_summary: `deep dive done for ${alertId}`,
    });
  });

  it("says the workflow reported no conclusion when its run has no summary", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { workflow, done } = await investigateWith(h, auth, "");
    expect(done.status).toBe("completed");
    expect(done.result_summary).toBe(`The workflow ${workflow} ended without reporting a conclusion`);
  });
});
