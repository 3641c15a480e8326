import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow, createHandOffWorkflow, settledTrace } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../test/harness.ts";
import { INVESTIGATION_PURPOSE, setInvestigationWorkflowChooser } from "./index.ts";
import { expressionOf } from "./investigator/gather.ts";
import { maskedTokens, textSimilarity } from "./investigator/prior-incidents.ts";

let sequence = 0;
const uid = (prefix: string) => `${prefix}-${process.pid}-${++sequence}`;

async function ingest(
  h: Harness,
  auth: Auth,
  labels: Record<string, string>,
  options: { auto?: boolean; summary?: string } = {},
) {
  const trigger = await registerTrigger(h, auth, {
    source: "alertmanager",
    integration: uid("am"),
    auto_investigate: options.auto ?? false,
  });
  const [id] = await deliverIds(
    h,
    trigger,
    amBody([
      {
        status: "firing",
        fingerprint: uid("fp"),
        startsAt: new Date().toISOString(),
        labels,
        summary: options.summary,
      },
    ]),
  );
  return { id: id as string, trigger };
}

const investigate = (h: Harness, auth: Auth, id: string, body?: object) =>
  call(h, auth, "POST", `/app/sre/api/v1/alerts/${id}/investigate`, body);

async function finished(h: Harness, auth: Auth, id: string) {
  return waitFor(async () => {
    const response = await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`);
    const body = response.json();
    return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
  }, 60_000);
}

describeEachEngine("investigations", (harness) => {
  it("investigate creates one and launches its run; a repeat returns it unchanged; force_new forks", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { id: alertId } = await ingest(h, auth, {
      alertname: "HighLatency",
      service: "checkout",
      severity: "critical",
    });
    const first = await investigate(h, auth, alertId);
    expect(first.statusCode, first.body).toBe(200);
    const ref = first.json().investigation;
    expect(ref).toEqual({
      id: expect.any(String),
      status: "queued",
      verdict: null,
      result_summary: null,
      started_at: expect.any(String),
      finished_at: null,
    });
    const again = await investigate(h, auth, alertId, {});
    expect(again.json().investigation.id).toBe(ref.id);

    const done = await finished(h, auth, ref.id);
    expect(done.status).toBe("completed");
    expect(done.alert_id).toBe(alertId);
    expect(done.parent_investigation_id).toBeNull();
    expect(done.finished_at).not.toBeNull();
    // No Prometheus integration: the verdict says which integration would have answered.
    expect(done.structured_rca.plain_summary.verdict).toBe("not_enough_information");
    expect(done.structured_rca.plain_summary.what_to_do).toContain("prometheus integration");
    expect(done.hypotheses.length).toBeGreaterThan(0);
    expect(done.hypotheses.at(-1).status).toBe("rejected");
    expect(done.triage_metadata).toMatchObject({
      trigger: "manual",
      workflow_name: "sre-alert-investigation",
      investigator: "deterministic",
    });

    // Its run: one node per investigator step, readable with getExecutionTrace; the report in the session.
    const trace = await settledTrace(h, auth, done.guild_trace_id);
    expect(trace.execution.status).toBe("completed");
    const actions = trace.nodes
      .filter((node: { type: string }) => node.type === "action")
      .map((node: { label: string }) => node.label);
    expect(actions.sort()).toEqual([
      "sre.investigation_conclude",
      "sre.investigation_gather",
      "sre.investigation_prior_incidents",
      "sre.investigation_query_integrations",
    ]);
    const artifacts = await call(
      h,
      auth,
      "GET",
      `/platform/api/v1/sessions/${done.guild_session_id}/artifacts`,
    );
    expect(artifacts.json().map((artifact: { name: string }) => artifact.name)).toEqual(["report.md"]);

    // The alert shows it, in a read and in the list.
    const alert = await readAlert(h, auth, alertId);
    expect(alert.investigation).toMatchObject({
      id: ref.id,
      status: "completed",
      verdict: "not_enough_information",
    });
    const list = await call(h, auth, "GET", "/app/sre/api/v1/alerts");
    const listed = list.json().alerts.find((item: { id: string }) => item.id === alertId);
    expect(listed.investigation).toEqual(alert.investigation);

    const forked = await investigate(h, auth, alertId, { force_new: true, operator_message: "again please" });
    const forkedRef = forked.json().investigation;
    expect(forkedRef.id).not.toBe(ref.id);
    const forkedDone = await finished(h, auth, forkedRef.id);
    expect(forkedDone.parent_investigation_id).toBe(ref.id);
    expect(forkedDone.triage_metadata.operator_message).toBe("again please");
    expect((await readAlert(h, auth, alertId)).investigation.id).toBe(forkedRef.id);
  });

  it("100 concurrent investigate calls on one alert create exactly one investigation", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { id: alertId } = await ingest(h, auth, { alertname: "Concurrent", service: "api" });
    const answers = await Promise.all(Array.from({ length: 100 }, () => investigate(h, auth, alertId)));
    expect(
      answers.map((answer) => answer.statusCode),
      answers[0]?.body,
    ).toEqual(Array(100).fill(200));
    expect(new Set(answers.map((answer) => answer.json().investigation.id)).size).toBe(1);
    const list = await call(h, auth, "GET", `/app/sre/api/v1/investigations?alert_id=${alertId}`);
    expect(list.json().total).toBe(1);
  });

  it("concurrent force_new calls fork a chain: each starts after the one it forks from", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { id: alertId } = await ingest(h, auth, { alertname: "Forks", service: "api" });
    expect((await investigate(h, auth, alertId)).statusCode).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => investigate(h, auth, alertId, { force_new: true })),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(12).fill(200));
    const list = await call(
      h,
      auth,
      "GET",
      `/app/sre/api/v1/investigations?alert_id=${alertId}&page_size=50`,
    );
    const items: { id: string; started_at: string }[] = list.json().investigations;
    expect(items).toHaveLength(13);
    // Newest first, and each one's parent is the one listed after it.
    for (const [index, item] of items.entries()) {
      const row = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${item.id}`)).json();
      expect(row.parent_investigation_id).toBe(items[index + 1]?.id ?? null);
      if (index + 1 < items.length) {
        expect(Date.parse(item.started_at)).toBeGreaterThan(Date.parse(items[index + 1]?.started_at ?? ""));
      }
    }
  });

  it("runs the default workflow again when a tenant deleted it", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { id: alertId } = await ingest(h, auth, { alertname: "Deleted", service: "api" });
    const first = (await investigate(h, auth, alertId)).json().investigation;
    expect((await finished(h, auth, first.id)).status).toBe("completed");
    const deleted = await call(h, auth, "DELETE", "/platform/api/v1/workflows/sre-alert-investigation");
    expect(deleted.statusCode, deleted.body).toBe(204);
    const again = await investigate(h, auth, alertId, { force_new: true });
    expect(again.statusCode, again.body).toBe(200);
    const done = await finished(h, auth, again.json().investigation.id);
    expect(done.status).toBe("completed");
    expect(done.triage_metadata).toMatchObject({
      workflow_name: "sre-alert-investigation",
      workflow_fallback: null,
    });
  });

  it("404 for an unknown or another tenant's alert and investigation; 400 for a bad body", async () => {
    const h = harness();
    const owner = await h.createKey();
    const stranger = await h.createKey();
    const { id: alertId } = await ingest(h, owner.auth, { alertname: "Private" });
    expect((await investigate(h, stranger.auth, alertId)).statusCode).toBe(404);
    expect((await investigate(h, owner.auth, "00000000-0000-4000-8000-000000000000")).statusCode).toBe(404);
    const bad = await investigate(h, owner.auth, alertId, { force_new: "yes" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("force_new");
    const unknown = await investigate(h, owner.auth, alertId, { surprise: 1 });
    expect(unknown.statusCode).toBe(400);
    const mine = (await investigate(h, owner.auth, alertId)).json().investigation.id;
    expect((await call(h, stranger.auth, "GET", `/app/sre/api/v1/investigations/${mine}`)).statusCode).toBe(
      404,
    );
    const strangerList = await call(h, stranger.auth, "GET", "/app/sre/api/v1/investigations");
    expect(strangerList.json()).toEqual({ investigations: [], page: 1, page_size: 20, total: 0 });
    for (const query of ["page=0", "page_size=0", "page_size=201", "status=done", "alert_id=nope"]) {
      const response = await call(h, owner.auth, "GET", `/app/sre/api/v1/investigations?${query}`);
      expect(response.statusCode, query).toBe(400);
    }
  });

  it("lists newest first with filters, pages and the total of the filtered set", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const ids: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      const { id: alertId } = await ingest(h, auth, { alertname: `List${n}` });
      ids.push((await investigate(h, auth, alertId)).json().investigation.id);
    }
    for (const id of ids) await finished(h, auth, id);
    const page = await call(h, auth, "GET", "/app/sre/api/v1/investigations?page=1&page_size=2");
    expect(page.json().total).toBe(3);
    expect(page.json().investigations.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[1]]);
    const second = await call(h, auth, "GET", "/app/sre/api/v1/investigations?page=2&page_size=2");
    expect(second.json().investigations.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
    const completed = await call(h, auth, "GET", "/app/sre/api/v1/investigations?status=completed");
    expect(completed.json().total).toBe(3);
    const queued = await call(h, auth, "GET", "/app/sre/api/v1/investigations?status=queued");
    expect(queued.json().total).toBe(0);
  });

  it("auto_investigate starts one for each new alert, none for a repeat or an update", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const labels = { alertname: "AutoStart", service: "billing" };
    const fingerprint = uid("auto");
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: uid("am"),
      auto_investigate: true,
    });
    const body = (description?: string) =>
      amBody([{ status: "firing", fingerprint, startsAt: "2026-01-01T00:00:00Z", labels, description }]);
    const [alertId] = await deliverIds(h, trigger, body());
    await deliverIds(h, trigger, body());
    await deliverIds(h, trigger, body("changed"));
    const ref = await waitFor(
      async () => (await readAlert(h, auth, alertId as string)).investigation ?? undefined,
    );
    const done = await finished(h, auth, ref.id);
    expect(done.triage_metadata.trigger).toBe("auto_investigate");
    const list = await call(h, auth, "GET", `/app/sre/api/v1/investigations?alert_id=${alertId}`);
    expect(list.json().total).toBe(1);

    const off = await ingest(h, auth, { alertname: "NoAuto" });
    expect((await readAlert(h, auth, off.id)).investigation).toBeNull();
  });

  it("prior incidents: same series first, then same service, never another tenant's", async () => {
    const h = harness();
    const owner = await h.createKey();
    const stranger = await h.createKey();
    await ingest(h, stranger.auth, { alertname: "DiskFull", service: "storage", instance: "db-1" });
    await ingest(h, owner.auth, { alertname: "DiskFull", service: "storage", instance: "db-1" });
    await ingest(h, owner.auth, { alertname: "SlowQueries", service: "storage" });
    const { id: alertId } = await ingest(h, owner.auth, {
      alertname: "DiskFull",
      service: "storage",
      instance: "db-1",
    });
    const ref = (await investigate(h, owner.auth, alertId)).json().investigation;
    const done = await finished(h, owner.auth, ref.id);
    expect(done.prior_incidents.map((item: { match: string }) => item.match)).toEqual([
      "same_series",
      "same_service",
    ]);
    expect(done.prior_incidents[0].why_matched).toContain("DiskFull");
    expect(done.prior_incidents[0].resolution).toBe("still active");
  });
});

describeEachEngine(
  "investigations cancelled",
  (harness) => {
    it("terminateSession on its session cancels the run and the investigation ends cancelled", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      // A Prometheus that never answers holds the run in its query step.
      const held: ServerResponse[] = [];
      const server = createServer((_req, res) => {
        held.push(res);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const integration = await call(h, auth, "POST", "/api/v1/integrations", {
          name: "slow-prom",
          type: "prometheus",
          url: base,
        });
        expect(integration.statusCode, integration.body).toBe(201);
        const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: uid("am") });
        const [alertId] = await deliverIds(
          h,
          trigger,
          amBody(
            [
              {
                status: "firing",
                fingerprint: uid("fp"),
                startsAt: new Date().toISOString(),
                labels: { alertname: "Held" },
              },
            ],
            { generatorURL: `${base}/graph?g0.expr=up+%3E+0` },
          ),
        );
        const ref = (await investigate(h, auth, alertId as string)).json().investigation;
        const row = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json();
        await waitFor(async () => (held.length > 0 ? true : undefined), 60_000);
        expect((await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json().status).toBe(
          "running",
        );
        const terminated = await call(
          h,
          auth,
          "POST",
          `/platform/api/v1/sessions/${row.guild_session_id}/terminate`,
        );
        expect(terminated.json()).toEqual({ cancelled_workflows: 1 });
        const done = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json();
        expect(done.status).toBe("cancelled");
        expect(done.finished_at).not.toBeNull();
        // Why it ended without a conclusion, where a caller reads the outcome.
        expect(done.result_summary).toMatch(/^Investigation cancelled\b/);
        expect((await readAlert(h, auth, alertId as string)).investigation.status).toBe("cancelled");
        const trace = await settledTrace(h, auth, row.guild_trace_id);
        expect(trace.execution.status).toBe("error");
      } finally {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it("runs the workflow assigned to alert_investigation; an external agent reports through the callbacks", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const held: ServerResponse[] = [];
      const server = createServer((_req, res) => {
        held.push(res);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const workflow = uid("external-investigation");
      // The agent works elsewhere; the run waits on it.
      await createHandOffWorkflow(h, auth, workflow, `${base}/investigate/{{input.alert_id}}`);
      const remove = setInvestigationWorkflowChooser(async (_db, _tenant, purpose) =>
        purpose === INVESTIGATION_PURPOSE ? workflow : null,
      );
      try {
        const { id: alertId } = await ingest(h, auth, { alertname: "External", service: "payments" });
        const ref = (await investigate(h, auth, alertId)).json().investigation;
        const row = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json();
        expect(row.triage_metadata.workflow_name).toBe(workflow);
        await waitFor(async () => (held.length > 0 ? true : undefined), 60_000);
        const base_ = `/app/sre/api/v1/investigations/${ref.id}`;
        expect((await call(h, auth, "POST", `${base_}/status`, { status: "running" })).json().status).toBe(
          "running",
        );
        const cited = await call(h, auth, "POST", `${base_}/evidence`, {
          evidence: [
            {
              kind: "runbook",
              title: "Payments runbook",
              url: "https://wiki.example.org/payments",
              source: "runbook",
            },
          ],
        });
        expect(cited.json().evidence).toEqual([
          expect.objectContaining({
            kind: "runbook",
            verified: false,
            tool_name: null,
            description: "The runbook the alert's source links to",
          }),
        ]);
        const concluded = await call(h, auth, "POST", `${base_}/status`, {
          status: "completed",
          result_summary: "The payments database ran out of connections.",
          hypotheses: [
            {
              statement: "A deploy changed the pool size",
              confidence: 0.2,
              status: "rejected",
              rationale: "no deploy",
            },
            {
              statement: "Connection pool exhausted",
              confidence: 0.9,
              status: "confirmed",
              rationale: "pool at 100%",
            },
          ],
          plain_summary: {
            verdict: "real_problem",
            what_broke: "Payments could not reach its database.",
            what_to_do: "Raise the pool size of payments-db.",
            how_we_got_here: ["Read the alert", "Read the pool metrics"],
          },
        });
        expect(concluded.statusCode, concluded.body).toBe(200);
        const done = concluded.json();
        expect(done.status).toBe("completed");
        expect(done.hypotheses.map((item: { statement: string }) => item.statement)).toEqual([
          "Connection pool exhausted",
          "A deploy changed the pool size",
        ]);
        expect(done.structured_rca).toMatchObject({
          summary: "The payments database ran out of connections.",
          root_cause: "Connection pool exhausted",
          confidence: 0.9,
          remediation: ["Raise the pool size of payments-db."],
          plain_summary: { verdict: "real_problem" },
        });
        expect(done.triage_metadata.investigator).toMatch(/^user:/);
        expect((await readAlert(h, auth, alertId)).investigation).toMatchObject({
          status: "completed",
          verdict: "real_problem",
          result_summary: "The payments database ran out of connections.",
        });
        const bad = await call(h, auth, "POST", `${base_}/status`, {
          status: "completed",
          hypotheses: [{ statement: "x", confidence: 2, status: "open", rationale: null }],
        });
        expect(bad.statusCode).toBe(400);
        // Terminating its session now stops the run; the concluded investigation stays completed.
        const terminated = await call(
          h,
          auth,
          "POST",
          `/platform/api/v1/sessions/${row.guild_session_id}/terminate`,
        );
        expect(terminated.json()).toEqual({ cancelled_workflows: 1 });
        expect((await call(h, auth, "GET", base_)).json().status).toBe("completed");
        // Once the assigned workflow is gone (or needs an input an investigation does not give),
        // the default runs and the investigation says why.
        const deleted = await call(h, auth, "DELETE", `/platform/api/v1/workflows/${workflow}`);
        expect(deleted.statusCode, deleted.body).toBe(204);
        const fallback = await investigate(h, auth, alertId, { force_new: true });
        expect(fallback.statusCode, fallback.body).toBe(200);
        const fellBack = await finished(h, auth, fallback.json().investigation.id);
        expect(fellBack.status).toBe("completed");
        expect(fellBack.triage_metadata.workflow_name).toBe("sre-alert-investigation");
        expect(fellBack.triage_metadata.workflow_fallback).toBe(
          `workflow ${workflow} does not exist or has no approved version`,
        );
        await createApprovedWorkflow(h, auth, {
          name: workflow,
          inputs: [
            { name: "investigation_id", required: true },
            { name: "ticket", required: true },
          ],
          stages: [{ id: "hand_off", action_type: "http_request", config: { url: `${base}/x` } }],
        });
        const needsInput = await investigate(h, auth, alertId, { force_new: true });
        expect(needsInput.statusCode, needsInput.body).toBe(200);
        const row2 = (
          await call(h, auth, "GET", `/app/sre/api/v1/investigations/${needsInput.json().investigation.id}`)
        ).json();
        expect(row2.triage_metadata.workflow_fallback).toBe(
          `workflow ${workflow} requires ticket, which an investigation does not give`,
        );
      } finally {
        remove();
        for (const res of held) res.destroy();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  },
  { integrationAllowedHosts: ["127.0.0.1"], automationHttpAllowedHosts: ["127.0.0.1"] },
);

describe("investigator helpers", () => {
  it("reads the expression and threshold from a generatorURL", () => {
    expect(
      expressionOf([
        { kind: "source", url: "http://prom:9090/graph?g0.expr=rate(errors%5B5m%5D)+%3E+0.5&g0.tab=1" },
      ]),
    ).toEqual({ expr: "rate(errors[5m]) > 0.5", lhs: "rate(errors[5m])", op: ">", threshold: 0.5 });
    expect(expressionOf([{ kind: "source", url: "http://prom:9090/graph?g0.expr=up" }])).toEqual({
      expr: "up",
      lhs: null,
      op: null,
      threshold: null,
    });
    expect(expressionOf([{ kind: "runbook", url: "https://wiki/x" }])).toBeNull();
  });

  it("masks volatile tokens before comparing texts", () => {
    const a = maskedTokens("Pod api-7d9f8c6b5-x2x9z restarted 5 times on 10.0.0.12");
    const b = maskedTokens("Pod api-5c4b3a2d1-k8k7q restarted 12 times on 10.0.3.4");
    expect(textSimilarity(a, b)).toBe(1);
    expect(textSimilarity(a, maskedTokens("Disk full on host db-1"))).toBeLessThan(0.5);
  });
});
