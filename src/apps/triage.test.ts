// Triage follows the SRE app's assignment for `alert_triage`, through real HTTP: the built-in
// classifier while the app's default holds, an assigned workflow's output once one is assigned (its
// run's trace kept), the built-in result with the reason when the workflow's output is invalid or
// its run fails, and the built-in classifier again after the assignments are cleared with [].
import { beforeAll, expect, it } from "vitest";
import { poll } from "../../test/alertmanager-process.ts";
import { amBody, deliverIds, readAlert, readHistory, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow, readTrace } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../test/harness.ts";

const CLASSIFY_STEP = "sre_classify_alert_criticality";

describeEachEngine("apps: triage by the assigned workflow", (harness) => {
  let auth: Auth;
  let trigger = "";
  let fingerprint = 0;

  /** Fires one alert (its own cluster, so no storm joins alerts across cases); waits until classified. */
  async function classified(h: Harness, labels: Record<string, string>) {
    fingerprint += 1;
    const [id] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: fingerprint.toString(16).padStart(16, "0"),
          startsAt: new Date().toISOString(),
          labels: {
            alertname: "QueueBacklog",
            severity: "info",
            env: "production",
            ...labels,
            cluster: `c${fingerprint}`,
          },
        },
      ]),
    );
    const alert = await poll(`alert ${id} to be classified`, async () => {
      const read = await readAlert(h, auth, id as string);
      return read.analysis_status === "completed" ? read : undefined;
    });
    const { events } = await readHistory(h, auth, alert.id);
    const event = events.find((item) => item.kind === "classified");
    return { alert, detail: event?.detail as Record<string, unknown> };
  }

  const assign = async (h: Harness, assignments: object[]) => {
    const response = await call(h, auth, "PUT", "/api/v1/apps/sre", { workflow_assignments: assignments });
    expect(response.statusCode, response.body).toBe(200);
  };
  const triageBy = (workflow_name: string) => [{ purpose: "alert_triage", workflow_name, is_default: true }];

  beforeAll(async () => {
    const h = harness();
    ({ auth } = await h.createKey());
    trigger = await registerTrigger(h, auth, { source: "alertmanager", classify_mode: "immediate" });
    const transform = (name: string, expression: string) =>
      createApprovedWorkflow(h, auth, {
        name,
        description: `triage: ${name}`,
        stages: [{ id: "decide", action_type: "json_transform", config: { expression } }],
      });
    await transform(
      "triage-by-team",
      `{
        "attention": input.alert.labels.team = "payments" ? "needs_attention" : "others",
        "reason": "owned by team " & input.alert.labels.team,
        "short_summary": "Paged by team: " & input.alert.title
      }`,
    );
    await transform("triage-bad-output", `{ "attention": "urgent", "reason": "made up" }`);
    await transform("triage-broken", `$error("the triage backend is down")`);
    // The built-in step on the engine, then a rule over its answer.
    await createApprovedWorkflow(h, auth, {
      name: "triage-escalate-payments",
      description: "the built-in classifier, escalated for the payments team",
      inputs: [{ name: "alert_id", required: true }],
      stages: [
        { id: "classify", action_type: "sre.classify_alert_criticality" },
        {
          id: "escalate",
          action_type: "json_transform",
          depends_on: ["classify"],
          config: {
            expression: `$merge([stages.classify.output, input.alert.labels.team = "payments"
              ? { "attention": "needs_attention", "reason": "payments escalation over: " & stages.classify.output.reason }
              : {}])`,
          },
        },
      ],
    });
  });

  it("runs the built-in classifier while the app's default workflow holds", async () => {
    const h = harness();
    const installed = (await call(h, auth, "GET", "/api/v1/apps/sre")).json();
    expect(installed.workflow_purposes).toContainEqual(
      expect.objectContaining({ purpose: "alert_triage", workflow_name: "sre-alert-triage" }),
    );
    const workflow = (await call(h, auth, "GET", "/platform/api/v1/workflows/sre-alert-triage")).json();
    expect(JSON.stringify(workflow)).toContain('"action_type":"sre.classify_alert_criticality"');
    const { alert, detail } = await classified(h, { team: "payments" });
    expect(alert.attention).not.toBe("needs_attention");
    expect(detail).toEqual({
      step: CLASSIFY_STEP,
      attention: alert.attention,
      reason: alert.attention_reason,
    });
    // Assigning the default by name keeps the fast path too.
    await assign(h, triageBy("sre-alert-triage"));
    expect((await classified(h, { team: "payments" })).detail).not.toHaveProperty("trace_id");
  });

  it("applies the assigned workflow's output, and its run's trace is kept", async () => {
    const h = harness();
    await assign(h, triageBy("triage-by-team"));
    const { alert, detail } = await classified(h, { team: "payments" });
    expect(alert).toMatchObject({
      attention: "needs_attention",
      attention_reason: "owned by team payments",
      short_summary: `Paged by team: ${alert.title}`,
    });
    expect(detail).toMatchObject({
      step: "workflow",
      workflow: "triage-by-team",
      attention: "needs_attention",
    });
    const trace = await readTrace(h, auth, detail.trace_id as string);
    expect(trace.execution).toMatchObject({ status: "completed", agent_name: "triage-by-team" });
    const other = await classified(h, { team: "search" });
    expect(other.alert).toMatchObject({ attention: "others", attention_reason: "owned by team search" });
  });

  it("runs the built-in classifier as a step of an assigned workflow", async () => {
    const h = harness();
    await assign(h, triageBy("triage-escalate-payments"));
    const { alert, detail } = await classified(h, { team: "payments" });
    expect(detail).toMatchObject({ step: "workflow", workflow: "triage-escalate-payments" });
    expect(alert.attention).toBe("needs_attention");
    expect(alert.attention_reason).toMatch(/^payments escalation over: .+/);
    const trace = await readTrace(h, auth, detail.trace_id as string);
    expect(trace.execution.status).toBe("completed");
  });

  it("falls back to the built-in classifier when the output is invalid or the run fails, saying why", async () => {
    const h = harness();
    const builtIn = await classified(h, {});
    await assign(h, triageBy("triage-bad-output"));
    const invalid = await classified(h, {});
    expect(invalid.alert.attention).toBe(builtIn.alert.attention);
    expect(invalid.alert.attention_reason).toBe(builtIn.alert.attention_reason);
    expect(invalid.detail).toMatchObject({
      step: CLASSIFY_STEP,
      workflow: "triage-bad-output",
      fallback: expect.stringMatching(/^invalid output: attention: /),
    });
    expect((await readTrace(h, auth, invalid.detail.trace_id as string)).execution.status).toBe("completed");

    await assign(h, triageBy("triage-broken"));
    const failed = await classified(h, {});
    expect(failed.alert.attention_reason).toBe(builtIn.alert.attention_reason);
    expect(failed.detail).toMatchObject({
      step: CLASSIFY_STEP,
      workflow: "triage-broken",
      fallback: expect.stringMatching(/^the run failed: .*the triage backend is down/),
    });
    expect((await readTrace(h, auth, failed.detail.trace_id as string)).execution.status).toBe("error");
  });

  it("runs the built-in classifier again once the assignments are cleared with []", async () => {
    const h = harness();
    await assign(h, triageBy("triage-by-team"));
    expect((await classified(h, { team: "payments" })).alert.attention).toBe("needs_attention");
    await assign(h, []);
    const { alert, detail } = await classified(h, { team: "payments" });
    expect(alert.attention).not.toBe("needs_attention");
    expect(detail).toEqual({
      step: CLASSIFY_STEP,
      attention: alert.attention,
      reason: alert.attention_reason,
    });
  });
});
