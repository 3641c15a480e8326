// The console's server side: the page at every client route, assets, the API paths it must not
// shadow, and GET /api/v1/me. Served from a folder this test writes, so it needs no front-end build.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, describeEachEngine } from "../../test/harness.ts";
import { CONSOLE_ROUTES, consoleFileRoutes } from "./console-files.ts";

const PAGE = '<!doctype html><title>console</title><script type="module" src="/assets/app-1.js"></script>';
const root = mkdtempSync(join(tmpdir(), "vigil-console-"));
mkdirSync(join(root, "assets"));
writeFileSync(join(root, "index.html"), PAGE);
writeFileSync(join(root, "assets", "app-1.js"), "console.log('console')");

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A Vigil whose console files come from `root`, beside the one every app serves from dist/web. */
async function consoleFrom(app: FastifyInstance, folder: string) {
  const Fastify = (await import("fastify")).default;
  const served = Fastify();
  served.decorate("services", app.services);
  await served.register(consoleFileRoutes, { root: folder });
  await served.ready();
  return served;
}

describeEachEngine("web console", (harness) => {
  let served: FastifyInstance;
  beforeAll(async () => {
    served = await consoleFrom(harness().vigil.app, root);
  });
  afterAll(async () => served.close());

  it("answers the page, without a key, at every client route, deep links included", async () => {
    for (const url of [
      "/",
      "/signin",
      "/alerts",
      "/alerts/3f1c",
      "/alerts/a%2Fb",
      "/workflows/flow",
      "/agents/x",
    ]) {
      const response = await served.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/html/);
      expect(response.headers["cache-control"]).toBe("no-cache");
      expect(response.headers["content-security-policy"]).toContain("default-src 'self'");
      expect(response.body).toBe(PAGE);
    }
    expect(CONSOLE_ROUTES.length).toBeGreaterThan(5);
  });

  it("serves assets for good, and 404 for a missing one or a path outside the folder", async () => {
    const asset = await served.inject({ url: "/assets/app-1.js" });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toContain("immutable");
    expect(asset.body).toBe("console.log('console')");
    for (const url of ["/assets/missing.js", "/assets/../index.html", "/assets/%2e%2e/index.html"]) {
      expect((await served.inject({ url })).statusCode, url).toBe(404);
    }
  });

  it("says how to build the console when it is not built, and serves a build made later at once", async () => {
    const empty = mkdtempSync(join(tmpdir(), "vigil-console-empty-"));
    const bare = await consoleFrom(harness().vigil.app, empty);
    const response = await bare.inject({ url: "/alerts" });
    expect(response.statusCode).toBe(503);
    // The command that builds the console alone, and no restart asked for: none is needed.
    expect(response.body).toContain("<code>npm run build:web</code>");
    expect(response.body).toContain("without a restart");
    expect(response.body).not.toMatch(/and restart/);
    // A build made while this Vigil runs is served by the next request, as the note says.
    writeFileSync(join(empty, "index.html"), PAGE);
    const built = await bare.inject({ url: "/alerts" });
    expect(built.statusCode).toBe(200);
    expect(built.body).toBe(PAGE);
    await bare.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it("leaves the API, the reference, the probes and unknown paths to their own routes", async () => {
    const { app } = harness().vigil;
    const expected: [string, number, RegExp][] = [
      ["/api/v1/me", 401, /json/],
      ["/app/sre/api/v1/alerts", 401, /json/],
      ["/platform/api/v1/workflows", 401, /json/],
      ["/openapi.json", 200, /json/],
      ["/docs", 200, /html/],
      ["/healthz", 200, /json/],
      ["/readyz", 200, /json/],
      ["/metrics", 200, /text\/plain/],
      ["/no-such-page", 404, /json/],
      ["/alertsx", 404, /json/],
    ];
    // A browser that navigates to a path the console does not have gets the page (its own "not
    // available" screen) with 404; an API path stays the API's 404 even for a browser.
    const browser = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    // A screen's page takes one id: a path part more is no page of the console.
    for (const url of ["/no-such-page", "/alertsx", "/settings/profile", "/workflows/a/b", "/alerts/x/y"]) {
      const response = await served.inject({ url, headers: browser });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers["content-type"], url).toMatch(/^text\/html/);
      expect(response.body).toBe(PAGE);
    }
    for (const url of ["/api/v1/nope", "/app/sre/api/v1/nope", "/platform/api/v1/nope", "/assets/nope.js"]) {
      const response = await app.inject({ url, headers: browser });
      expect(response.statusCode, url).toBe(404);
      expect(JSON.stringify(response.json()), url).toContain("ROUTE_NOT_FOUND");
    }
    // The app itself serves the console from dist/web: the page when built, else how to build it.
    const page = await app.inject({ url: "/alerts" });
    expect([200, 503]).toContain(page.statusCode);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    for (const [url, status, type] of expected) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(status);
      expect(response.headers["content-type"], url).toMatch(type);
    }
  });

  it("GET /api/v1/me names the key, its scopes, its orgs by name and what this Vigil serves", async () => {
    const h = harness();
    const payments = await h.createOrg("payments");
    const billing = await h.createOrg("billing");
    const { id, auth } = await h.createKey({ scopes: ["sre_alerts_read"], orgIds: [payments, billing] });
    const response = await call(h, auth, "GET", "/api/v1/me");
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      key_id: id,
      key_name: expect.any(String),
      key_prefix: expect.stringMatching(/^vgl_/),
      scopes: ["sre_alerts_read"],
      orgs: [
        { id: billing, name: "billing" },
        { id: payments, name: "payments" },
      ],
      // This Vigil serves investigations, Ask and sessions: the console offers them.
      features: { investigate: true, investigations: true, ask: true, sessions: true },
    });
    expect((await call(h, auth, "GET", `/api/v1/me?orgId=${payments}`)).statusCode).toBe(200);
  });

  it("GET /api/v1/me: 401 without a key or with a revoked one, 404 for an org of another key, 400 for a bad orgId", async () => {
    const h = harness();
    const other = await h.createOrg("other");
    const { id, auth } = await h.createKey();
    expect((await h.vigil.app.inject({ url: "/api/v1/me" })).json()).toMatchObject({
      code: "UNAUTHENTICATED",
    });
    const foreign = await call(h, auth, "GET", `/api/v1/me?orgId=${other}`);
    expect(foreign.statusCode).toBe(404);
    const bad = await call(h, auth, "GET", "/api/v1/me?orgId=nope");
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "orgId" } });
    await h.revokeKey(id);
    expect((await call(h, auth, "GET", "/api/v1/me")).statusCode).toBe(401);
  });
});
