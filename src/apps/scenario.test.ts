// The SRE app's scenario end to end, in order, through real HTTP: install with integrations bound,
// an idempotent repeat, an assigned investigation workflow that the next investigation runs, the
// assignments cleared again, setup before and after binding a real Prometheus, a discovery run that
// learns services from it, and two MCP tools called with the app token over a listening server.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort, poll } from "../../test/alertmanager-process.ts";
import { amBody, deliverIds, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow, settledTrace } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness, listenOnLoopback } from "../../test/harness.ts";
import {
  type Exporter,
  type PrometheusProcess,
  requirePrometheus,
  startExporter,
  startPrometheus,
} from "../../test/prometheus-process.ts";

const METRICS = [
  "# TYPE http_requests_total counter",
  'http_requests_total{service="checkout",environment="production",destination_service="payments"} 12',
  'http_requests_total{service="payments",environment="production"} 7',
  "",
].join("\n");

let exporter: Exporter;
let prometheus: PrometheusProcess;
let closedPort: number;

beforeAll(async () => {
  const binary = requirePrometheus();
  exporter = await startExporter();
  exporter.setText(METRICS);
  [prometheus, closedPort] = await Promise.all([
    startPrometheus(binary, exporter.url, { job: "shop", labels: { cluster: "eu-1" } }),
    freePort(),
  ]);
  await prometheus.waitForSeries(["http_requests_total"]);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.close();
});

const put = (h: Harness, auth: Auth, body: object) => call(h, auth, "PUT", "/api/v1/apps/sre", body);

async function integration(h: Harness, auth: Auth, name: string, url: string) {
  const response = await call(h, auth, "POST", "/api/v1/integrations", { name, type: "prometheus", url });
  expect(response.statusCode, response.body).toBe(201);
}

/** Starts an investigation of `alertId` and waits until it is final; returns it. */
async function investigated(h: Harness, auth: Auth, alertId: string, body?: object) {
  const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`, body);
  expect(started.statusCode, started.body).toBe(200);
  const id = started.json().investigation.id;
  return poll(
    `investigation ${id} to finish`,
    async () => {
      const read = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
      return ["completed", "failed", "cancelled"].includes(read.status) ? read : undefined;
    },
    () => "",
    60_000,
  );
}

describeEachEngine(
  "apps: the SRE app's scenario",
  (harness) => {
    it("installs, repeats, assigns and clears a workflow, reports setup, discovers and answers MCP", async () => {
      const h = harness();
      const { auth } = await h.createKey();

      // Install with an integration bound: one that does not answer, so setup is not ready yet.
      await integration(h, auth, "prom-old", `http://127.0.0.1:${closedPort}`);
      await integration(h, auth, "prom", prometheus.base);
      const install = { integrations: ["prom-old"], config: { team: "sre" } };
      const installed = await put(h, auth, install);
      expect(installed.statusCode, installed.body).toBe(200);
      const first = installed.json();
      expect(first).toMatchObject({
        configured: true,
        integrations: ["prom-old"],
        config: { team: "sre" },
        app_token: expect.stringMatching(/^vga_/),
      });

      // The same PUT again changes nothing, updated_at included.
      const repeated = await put(h, auth, install);
      expect(repeated.statusCode, repeated.body).toBe(200);
      expect(repeated.json()).toEqual(first);

      // An approved workflow of our own that takes the investigation's inputs and runs unattended.
      const workflow = "scenario-investigation";
      await createApprovedWorkflow(h, auth, {
        name: workflow,
        inputs: [
          { name: "investigation_id", required: true },
          { name: "alert_id", required: true },
        ],
        stages: [{ id: "summarise", action_type: "json_transform", config: { expression: "input" } }],
      });
      const assigned = await put(h, auth, {
        workflow_assignments: [{ purpose: "alert_investigation", workflow_name: workflow, is_default: true }],
      });
      expect(assigned.statusCode, assigned.body).toBe(200);
      expect(assigned.json().integrations).toEqual(["prom-old"]);
      expect(assigned.json().updated_at > first.updated_at).toBe(true);

      // An alert through a registration's trigger URL; its investigation runs our workflow.
      const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "prod" });
      const [alertId] = await deliverIds(
        h,
        trigger,
        amBody([
          {
            status: "firing",
            fingerprint: "5ce0a110000000001",
            startsAt: new Date().toISOString(),
            labels: { alertname: "HighErrorRate", service: "checkout", severity: "critical" },
          },
        ]),
      );
      if (!alertId) throw new Error("the alert was not ingested");
      const ours = await investigated(h, auth, alertId);
      expect(ours.status, JSON.stringify(ours)).toBe("completed");
      expect(ours.triage_metadata.workflow_name).toBe(workflow);
      const oursTrace = await settledTrace(h, auth, ours.guild_trace_id);
      expect(oursTrace.execution).toMatchObject({ status: "completed", target_type: "workflow" });
      expect(oursTrace.nodes.map((node: { id: string }) => node.id)).toContain("stage:summarise");
      const runs = (await call(h, auth, "GET", "/platform/api/v1/executions")).json();
      const listed = runs.find((run: { trace_id: string }) => run.trace_id === ours.guild_trace_id);
      expect(listed).toMatchObject({ target_type: "workflow", target_name: workflow });

      // Clear the assignments with []: the next investigation runs the default workflow again.
      const cleared = await put(h, auth, { workflow_assignments: [] });
      expect(cleared.statusCode, cleared.body).toBe(200);
      expect(cleared.json().workflow_assignments).toEqual([]);
      const fallback = await investigated(h, auth, alertId, { force_new: true });
      expect(fallback.id).not.toBe(ours.id);
      expect(fallback.status, JSON.stringify(fallback)).toBe("completed");
      expect(fallback.triage_metadata.workflow_name).toBe("sre-alert-investigation");
      const defaultTrace = await settledTrace(h, auth, fallback.guild_trace_id);
      expect(
        defaultTrace.nodes
          .filter((node: { type: string }) => node.type === "action")
          .map((node: { label: string }) => node.label)
          .sort(),
      ).toEqual([
        "sre.investigation_conclude",
        "sre.investigation_gather",
        "sre.investigation_prior_incidents",
        "sre.investigation_query_integrations",
      ]);

      // Setup before and after binding the Prometheus that answers.
      const before = (await call(h, auth, "GET", "/api/setup")).json();
      expect(before.observability_ready).toBe(false);
      expect(before.missing).toEqual([expect.stringContaining("integration prom-old is not reachable")]);
      expect((await put(h, auth, { integrations: ["prom-old", "prom"] })).statusCode).toBe(200);
      const after = (await call(h, auth, "GET", "/api/setup")).json();
      expect(after).toEqual({
        observability_ready: true,
        missing: [],
        integrations: [
          { name: "prom", type: "prometheus", bound: true, reachable: true },
          { name: "prom-old", type: "prometheus", bound: true, reachable: false },
        ],
      });

      // Discovery learns the services Prometheus sees.
      const started = await call(h, auth, "POST", "/app/sre/api/discovery/runs", {});
      expect(started.statusCode, started.body).toBe(201);
      const run = await poll(
        "the discovery run to finish",
        async () => {
          const read = (
            await call(h, auth, "GET", `/app/sre/api/discovery/runs/${started.json().id}`)
          ).json();
          return read.status === "running" ? undefined : read;
        },
        () => "",
        60_000,
      );
      expect(run.status, JSON.stringify(run)).toBe("succeeded");
      // The series' service labels, and the scrape target's job (no service label of its own).
      expect(run.result.services.map((service: { name: string }) => service.name).sort()).toEqual([
        "checkout",
        "payments",
        "shop",
      ]);
      expect(run.result.calls).toEqual([{ from: "checkout", to: "payments" }]);
      expect(run.result.clusters).toEqual(["eu-1"]);

      // Two MCP tools with the app token, over a listening server and the SDK's client.
      const base = await listenOnLoopback(h.vigil);
      const appToken = (await call(h, auth, "GET", "/api/v1/apps/sre")).json().app_token;
      expect(appToken).toBe(first.app_token);
      const client = new Client({ name: "vigil-scenario", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/app/sre/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${appToken}` } },
        }),
      );
      try {
        const textOf = (result: unknown) =>
          (result as { content: { text: string }[] }).content[0]?.text ?? "";
        const alerts = JSON.parse(
          textOf(await client.callTool({ name: "list_alerts", arguments: { q: "HighErrorRate" } })),
        );
        expect(alerts.alerts.map((alert: { id: string }) => alert.id)).toEqual([alertId]);
        const investigation = JSON.parse(
          textOf(await client.callTool({ name: "get_investigation", arguments: { id: fallback.id } })),
        );
        expect(investigation).toMatchObject({
          id: fallback.id,
          alert_id: alertId,
          status: "completed",
          triage_metadata: { workflow_name: "sre-alert-investigation" },
        });
      } finally {
        await client.close();
      }
    }, 180_000);
  },
  { integrationAllowedHosts: ["127.0.0.1"] },
);
