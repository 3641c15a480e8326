import { validate } from "@readme/openapi-parser";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachEngine } from "../../../test/harness.ts";

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
