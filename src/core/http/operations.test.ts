import { validate } from "@readme/openapi-parser";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { describeEachEngine, waitFor } from "../../../test/harness.ts";

describeEachEngine("operations", (harness) => {
  const inject = (url: string) => harness().vigil.app.inject({ method: "GET", url });

  it("GET /healthz answers while the process is up", async () => {
    const response = await inject("/healthz");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok" });
  });

  it("GET /readyz is ready with the schema current, and 503 naming a pending migration", async () => {
    const ready = await inject("/readyz");
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok" } });

    const { db } = harness().vigil.services.database;
    const [first] = (await db.execute(sql`select name from vigil_migrations order by name limit 1`)).rows;
    await db.execute(sql`delete from vigil_migrations where name = ${first?.name}`);
    try {
      const notReady = await inject("/readyz");
      expect(notReady.statusCode).toBe(503);
      expect(notReady.json()).toEqual({
        status: "not_ready",
        checks: { database: "ok", migrations: `pending: ${first?.name}` },
      });
    } finally {
      await db.execute(sql`insert into vigil_migrations (name) values (${first?.name})`);
    }
  });

  it("GET /metrics counts requests by route template and status", async () => {
    await inject("/api/v1/integrations/some-name");
    await inject("/healthz");
    const response = await inject("/metrics");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toContain("text/plain");
    const text = response.body;
    expect(text).toMatch(
      /vigil_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} [1-9]/,
    );
    expect(text).toMatch(
      /vigil_http_requests_total\{method="GET",route="\/api\/v1\/integrations\/:name",status_code="401"\} 1/,
    );
    expect(text).toContain(
      'vigil_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/healthz"',
    );
    expect(text).not.toContain("some-name");
  });

  it("GET /openapi.json is a valid OpenAPI 3.1 document with an operationId on every operation", async () => {
    const response = await inject("/openapi.json");
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(document));
    expect(result.valid ? [] : result.errors).toEqual([]);
    const operations = Object.entries(
      document.paths as Record<string, Record<string, { operationId?: string }>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, id: op.operationId })),
    );
    expect(operations.length).toBeGreaterThan(3);
    expect(operations.filter((op) => !op.id)).toEqual([]);
    expect(new Set(operations.map((op) => op.id)).size).toBe(operations.length);
    const create = document.paths["/api/v1/integrations"].post;
    expect(create.operationId).toBe("createIntegration");
    expect(Object.keys(create.responses).sort()).toEqual([
      "201",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "500",
      "503",
    ]);
    expect(create.security).toEqual([{ apiKey: [] }]);
  });

  it("GET /docs renders the interactive reference", async () => {
    const page = await inject("/docs/");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.body).toContain("swagger");
  });
});

// The backlogs an operator watches, read from the database at scrape time, on the operations
// listener of an API-role instance (whose jobs wait for workers elsewhere).
describeEachEngine(
  "operations: backlogs and the operations listener",
  (harness) => {
    const scrape = async () => {
      const operations = harness().vigil.operations;
      if (!operations) throw new Error("no operations listener");
      const response = await operations.inject({ method: "GET", url: "/metrics" });
      expect(response.statusCode).toBe(200);
      return response.body;
    };
    const value = (text: string, series: string) => {
      const line = text.split("\n").find((row) => row.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };

    it("serves the probes and metrics alone", async () => {
      const operations = harness().vigil.operations;
      expect((await operations?.inject({ url: "/healthz" }))?.json()).toEqual({ status: "ok" });
      expect((await operations?.inject({ url: "/readyz" }))?.statusCode).toBe(200);
      const api = await operations?.inject({ url: "/api/v1/integrations" });
      expect(api?.statusCode).toBe(404);
    });

    it("answers a malformed JSON body 400 INVALID_JSON, saying so once", async () => {
      const response = await harness().vigil.operations?.inject({
        method: "POST",
        url: "/metrics",
        headers: { "content-type": "application/json" },
        payload: "{x",
      });
      expect(response?.statusCode).toBe(400);
      expect(response?.json()).toEqual({
        error: "body is not valid JSON",
        code: "INVALID_JSON",
        details: {},
      });
    });

    it("reports the alerts waiting for storms and classification, and the jobs queued for workers", async () => {
      const h = harness();
      const before = await scrape();
      expect(value(before, "vigil_storm_queue_alerts")).toBe(0);
      expect(value(before, 'vigil_alerts_classification{state="queued"}')).toBe(0);
      expect(value(before, 'vigil_alerts_classification{state="running"}')).toBe(0);

      const { auth } = await h.createKey();
      const trigger = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "backlog",
        classify_mode: "immediate",
      });
      await deliverIds(
        h,
        trigger,
        amBody(
          ["a", "b", "c"].map((n) => ({
            status: "firing",
            fingerprint: `backlog-${n}`,
            startsAt: "2026-11-22T10:00:00Z",
            labels: { alertname: `Backlog${n}`, severity: "info", cluster: "prod-eu" },
          })),
        ),
      );
      const after = await scrape();
      expect(value(after, "vigil_storm_queue_alerts")).toBe(3);
      expect(value(after, 'vigil_alerts_classification{state="queued"}')).toBe(3);
      expect(value(after, 'vigil_jobs{job="alerts.classify",state="created"}')).toBeGreaterThanOrEqual(1);
    });
  },
  // Any port: the listener is built and injected into, never bound.
  { role: "api", operationsPort: 1 },
);

describeEachEngine("operations: job outcomes", (harness) => {
  it("counts the jobs the workers complete", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "outcomes",
      classify_mode: "immediate",
    });
    const [id] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: "outcome-1",
          startsAt: "2026-11-22T10:00:00Z",
          labels: { alertname: "Outcome" },
        },
      ]),
    );
    await waitFor(async () =>
      (await readAlert(h, auth, id as string)).analysis_status === "completed" ? true : undefined,
    );
    const metrics = await waitFor(async () => {
      const text = (await h.vigil.app.inject({ url: "/metrics" })).body;
      return /vigil_jobs_total\{job="alerts.classify",outcome="completed"\} [1-9]/.test(text)
        ? text
        : undefined;
    });
    expect(metrics).toContain("# TYPE vigil_jobs_total counter");
  });
});
