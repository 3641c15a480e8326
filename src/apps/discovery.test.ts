// Discovery and setup against a real Prometheus (scraping a loopback exporter) and a real
// Alertmanager, both on free loopback ports.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type AlertmanagerProcess,
  freePort,
  poll,
  requireAlertmanager,
  startAlertmanager,
} from "../../test/alertmanager-process.ts";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../test/harness.ts";
import {
  type Exporter,
  type PrometheusProcess,
  requirePrometheus,
  startExporter,
  startPrometheus,
} from "../../test/prometheus-process.ts";
import { latestTopology } from "./index.ts";

const METRICS = [
  "# TYPE http_requests_total counter",
  'http_requests_total{service="checkout",environment="production",namespace="shop",destination_service="payments"} 12',
  'http_requests_total{service="payments",environment="production",namespace="shop"} 7',
  "# TYPE grpc_client_calls_total counter",
  'grpc_client_calls_total{source_workload="payments",destination_workload="ledger.shop.svc.cluster.local",environment="production"} 3',
  "",
].join("\n");

let exporter: Exporter;
let prometheus: PrometheusProcess;
let alertmanager: AlertmanagerProcess;
let closedPort: number;

beforeAll(async () => {
  const [promBinary, amBinary] = [requirePrometheus(), requireAlertmanager()];
  exporter = await startExporter();
  exporter.setText(METRICS);
  [prometheus, alertmanager, closedPort] = await Promise.all([
    startPrometheus(promBinary, exporter.url, { job: "shop-exporter", labels: { cluster: "eu-1" } }),
    startAlertmanager(amBinary),
    freePort(),
  ]);
  await alertmanager.postAlerts([
    {
      labels: {
        alertname: "SearchSlow",
        service: "search",
        env: "staging",
        cluster: "us-2",
        severity: "warning",
      },
    },
  ]);
  await alertmanager.silence({ service: "billing", env: "staging" });
  await alertmanager.waitForAlerts("the search alert", (alerts) => alerts.length === 1);
  await prometheus.waitForSeries(["http_requests_total", "grpc_client_calls_total"]);
}, 120_000);

afterAll(async () => {
  await Promise.all([prometheus?.stop(), alertmanager?.stop()]);
  await exporter?.close();
});

async function integration(h: Harness, auth: Auth, name: string, type: string, url: string) {
  const response = await call(h, auth, "POST", "/api/v1/integrations", { name, type, url });
  expect(response.statusCode, response.body).toBe(201);
}

async function finished(h: Harness, auth: Auth, id: string) {
  return poll(
    `discovery run ${id} to finish`,
    async () => {
      const run = (await call(h, auth, "GET", `/app/sre/api/discovery/runs/${id}`)).json();
      return run.status === "running" ? undefined : run;
    },
    () => "",
    60_000,
  );
}

describeEachEngine(
  "apps: discovery and setup",
  (harness) => {
    it("reports setup before and after binding, learns services, environments, clusters and calls, and skips when asked", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const before = await call(h, auth, "GET", "/api/setup");
      expect(before.statusCode).toBe(200);
      expect(before.json()).toEqual({
        observability_ready: false,
        missing: [
          "the sre app is not configured: PUT /api/v1/apps/sre",
          "no prometheus or alertmanager integration: create one with POST /api/v1/integrations (type prometheus or alertmanager, with its url)",
        ],
        integrations: [],
      });
      const notConfigured = await call(h, auth, "POST", "/app/sre/api/discovery/runs", {});
      expect(notConfigured.statusCode).toBe(409);
      expect(notConfigured.json()).toMatchObject({ code: "CONFLICT", details: { app_name: "sre" } });

      await integration(h, auth, "prom", "prometheus", prometheus.base);
      await integration(h, auth, "am", "alertmanager", alertmanager.base);
      await integration(h, auth, "gone", "prometheus", `http://127.0.0.1:${closedPort}`);
      expect((await call(h, auth, "PUT", "/api/v1/apps/sre", {})).statusCode).toBe(200);
      const unbound = (await call(h, auth, "GET", "/api/setup")).json();
      expect(unbound).toEqual({
        observability_ready: false,
        missing: [
          "no prometheus or alertmanager integration is bound to the app: PUT /api/v1/apps/sre with integrations (one of am, gone, prom)",
        ],
        integrations: [
          { name: "am", type: "alertmanager", bound: false, reachable: null },
          { name: "gone", type: "prometheus", bound: false, reachable: null },
          { name: "prom", type: "prometheus", bound: false, reachable: null },
        ],
      });

      expect(
        (await call(h, auth, "PUT", "/api/v1/apps/sre", { integrations: ["prom", "am", "gone"] })).statusCode,
      ).toBe(200);
      const ready = (await call(h, auth, "GET", "/api/setup")).json();
      expect(ready).toEqual({
        observability_ready: true,
        missing: [],
        integrations: [
          { name: "am", type: "alertmanager", bound: true, reachable: true },
          { name: "gone", type: "prometheus", bound: true, reachable: false },
          { name: "prom", type: "prometheus", bound: true, reachable: true },
        ],
      });

      const started = await call(h, auth, "POST", "/app/sre/api/discovery/runs", {});
      expect(started.statusCode, started.body).toBe(201);
      expect(started.json()).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: "running",
        error: null,
        started_at: expect.any(String),
        finished_at: null,
        result: {},
      });
      const run = await finished(h, auth, started.json().id);
      expect(run.status, JSON.stringify(run)).toBe("succeeded");
      expect(run.error).toBeNull();
      const { result } = run;
      expect(result.services).toEqual(
        expect.arrayContaining([
          {
            name: "checkout",
            environments: ["production"],
            clusters: ["eu-1"],
            namespaces: ["shop"],
            seen_in: ["prom"],
          },
          {
            name: "payments",
            environments: ["production"],
            clusters: ["eu-1"],
            namespaces: ["shop"],
            seen_in: ["prom"],
          },
          expect.objectContaining({ name: "ledger", environments: ["production"], seen_in: ["prom"] }),
          { name: "search", environments: ["staging"], clusters: ["us-2"], namespaces: [], seen_in: ["am"] },
          { name: "billing", environments: ["staging"], clusters: [], namespaces: [], seen_in: ["am"] },
        ]),
      );
      expect(result.environments).toEqual(expect.arrayContaining(["production", "staging"]));
      expect(result.clusters).toEqual(expect.arrayContaining(["eu-1", "us-2"]));
      expect(result.calls).toEqual(
        expect.arrayContaining([
          { from: "checkout", to: "payments" },
          { from: "payments", to: "ledger" },
        ]),
      );
      expect(result.integrations).toEqual([
        {
          name: "prom",
          type: "prometheus",
          ok: true,
          error: null,
          counts: { targets: 1, series: expect.any(Number) },
        },
        { name: "am", type: "alertmanager", ok: true, error: null, counts: { alerts: 1, silences: 1 } },
        {
          name: "gone",
          type: "prometheus",
          ok: false,
          error: expect.stringContaining("gone (prometheus)"),
          counts: {},
        },
      ]);
      expect(result.integrations[0].counts.series).toBeGreaterThanOrEqual(3);
      const user = (
        await h.vigil.services.database.db.execute(
          (
            await import("drizzle-orm")
          )
            .sql`select user_id from api_keys where key_hash = encode(sha256(convert_to(${auth.authorization.slice(7)}, 'utf8')), 'hex')`,
        )
      ).rows[0]?.user_id as string;
      expect(await latestTopology(h.vigil.services.database.db, { orgId: null, ownerId: user })).toEqual(
        result,
      );

      const skipped = await call(h, auth, "POST", "/app/sre/api/discovery/runs", { skip_if_exists: true });
      expect(skipped.statusCode).toBe(200);
      expect(skipped.json()).toMatchObject({
        status: "skipped",
        error: null,
        result: {},
        finished_at: expect.any(String),
      });
      const list = (await call(h, auth, "GET", "/app/sre/api/discovery/runs")).json();
      expect(list.map((item: { id: string }) => item.id)).toEqual([skipped.json().id, run.id]);
      expect((await call(h, auth, "GET", `/app/sre/api/discovery/runs/${skipped.json().id}`)).json()).toEqual(
        skipped.json(),
      );
      expect((await call(h, auth, "GET", "/app/sre/api/discovery/runs?limit=1")).json()).toHaveLength(1);
    });

    it("fails a run with why when no bound integration answers, and keeps runs per tenant", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      await integration(h, auth, "gone", "prometheus", `http://127.0.0.1:${closedPort}`);
      expect((await call(h, auth, "PUT", "/api/v1/apps/sre", { integrations: ["gone"] })).statusCode).toBe(
        200,
      );
      const setup = (await call(h, auth, "GET", "/api/setup")).json();
      expect(setup.observability_ready).toBe(false);
      expect(setup.missing).toEqual([
        expect.stringMatching(/^integration gone is not reachable: gone \(prometheus\): /),
      ]);
      const started = await call(h, auth, "POST", "/app/sre/api/discovery/runs");
      expect(started.statusCode, started.body).toBe(201);
      const run = await finished(h, auth, started.json().id);
      expect(run).toMatchObject({
        status: "failed",
        error: expect.stringMatching(/^gone \(prometheus\): /),
        finished_at: expect.any(String),
      });

      expect((await call(h, auth, "PUT", "/api/v1/apps/sre", { integrations: [] })).statusCode).toBe(200);
      const none = await finished(
        h,
        auth,
        (await call(h, auth, "POST", "/app/sre/api/discovery/runs", {})).json().id,
      );
      expect(none).toMatchObject({
        status: "failed",
        error:
          "no prometheus or alertmanager integration is bound to the app: PUT /api/v1/apps/sre with integrations",
      });

      // A run its process left running (started an hour ago) reads as failed, so pollers see an end.
      const { sql } = await import("drizzle-orm");
      await h.vigil.services.database.db.execute(
        sql`update discovery_runs set status = 'running', finished_at = null, started_at = now() - interval '1 hour' where id = ${none.id}`,
      );
      expect((await call(h, auth, "GET", `/app/sre/api/discovery/runs/${none.id}`)).json()).toMatchObject({
        status: "failed",
        error: "the run was interrupted (its process stopped)",
      });

      const stranger = await h.createKey();
      const foreign = await call(h, stranger.auth, "GET", `/app/sre/api/discovery/runs/${run.id}`);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual({
        error: "discovery run not found",
        code: "NOT_FOUND",
        details: { id: run.id },
      });
      expect((await call(h, stranger.auth, "GET", "/app/sre/api/discovery/runs")).json()).toEqual([]);
      const bad = await call(h, auth, "POST", "/app/sre/api/discovery/runs", { skip_if_exists: "yes" });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "skip_if_exists" } });
      expect((await call(h, auth, "GET", "/app/sre/api/discovery/runs/not-a-uuid")).statusCode).toBe(400);
    });

    itEnforcesAuth(harness, {
      method: "POST",
      scope: "apps_write",
      url: "/app/sre/api/discovery/runs",
      body: {},
    });
    itEnforcesAuth(harness, { method: "GET", scope: "apps_read", url: "/app/sre/api/discovery/runs" });

    it("probes the bound integrations together: setup answers in the time of the slowest, not their sum", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      // Two Prometheus stand-ins that answer only once both were asked: probed one after the
      // other, the first waits out its 3 s probe timeout and reads as unreachable.
      const waiting: ServerResponse[] = [];
      const servers = await Promise.all(
        [0, 1].map(async () => {
          const server = createServer((_request, response) => {
            waiting.push(response);
            if (waiting.length < 2) return;
            for (const held of waiting.splice(0)) {
              held.writeHead(200, { "content-type": "application/json" });
              held.end(JSON.stringify({ status: "success", data: { version: "2.45.0" } }));
            }
          });
          await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
          return server;
        }),
      );
      try {
        for (const [n, server] of servers.entries()) {
          const { port } = server.address() as AddressInfo;
          await integration(h, auth, `together-${n}`, "prometheus", `http://127.0.0.1:${port}`);
        }
        const bind = { integrations: ["together-0", "together-1"] };
        expect((await call(h, auth, "PUT", "/api/v1/apps/sre", bind)).statusCode).toBe(200);
        const setup = (await call(h, auth, "GET", "/api/setup")).json();
        expect(setup.integrations).toEqual([
          { name: "together-0", type: "prometheus", bound: true, reachable: true },
          { name: "together-1", type: "prometheus", bound: true, reachable: true },
        ]);
      } finally {
        for (const server of servers) server.close();
      }
    });
  },
  { integrationAllowedHosts: ["127.0.0.1"] },
);
