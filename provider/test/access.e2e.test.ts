// Both resources driven by the real OpenTofu under keys that cannot do everything: a key not
// allowed in the workspace and a wrong workspace_id are errors (never "deleted", which would drop
// the resources from state), and a read-only key refreshes without losing the secrets the service
// hides from it. Also which of the service's 404s count as "gone", and service_url pointing at
// something else than Vigil: a login page's 200 is an error that keeps state, Ctrl-C ends a plan
// waiting on a silent listener, and a service_url with a password is refused without showing it.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeOnOneEngine, type Harness, listenOnLoopback } from "../../test/harness.ts";
import { ApiError, apiDiagnostic, Client, isGone } from "../src/client.ts";
import { loginPage, silentListener } from "./stand-ins.ts";
import { buildDevProvider, createWorkspace, oneLine, providerBlock, type Workspace } from "./tofu.ts";

const RESOURCES = `
resource "svc_app" "sre" {
  app_name = "sre"
  enabled  = true
}

resource "svc_sre_alert_webhook" "am" {
  source = "alertmanager"
}

output "url" {
  value     = svc_sre_alert_webhook.am.trigger_url
  sensitive = true
}
`;

describeOnOneEngine("svc_app and svc_sre_alert_webhook under restricted keys", (harness) => {
  let h: Harness;
  let base = "";
  let org = "";
  let fullKey = "";
  let ws: Workspace;
  /** The configuration acting in `workspaceId` with `apiKey` (the workspace's own key by default). */
  const config = (options: { apiKey?: string; workspaceId?: string; serviceUrl?: string } = {}) =>
    providerBlock(options.workspaceId ?? org, options.serviceUrl ?? base).replace(
      'provider "svc" {',
      `provider "svc" {\n  api_key = "${options.apiKey ?? fullKey}"`,
    ) + RESOURCES;
  const secrets = async () => {
    const state = await ws.state();
    return {
      appToken: state["svc_app.sre"]?.app_token,
      triggerUrl: state["svc_sre_alert_webhook.am"]?.trigger_url,
      relativeUrl: state["svc_sre_alert_webhook.am"]?.platform_webhook_url,
    };
  };
  /** The answer of a failed request through the provider's client. */
  const failure = async (client: Client, path: string) => {
    const thrown = await client.request("GET", path).then(
      () => null,
      (caught: unknown) => caught,
    );
    if (!(thrown instanceof ApiError)) throw new Error(`${path} did not fail with an ApiError`);
    return thrown;
  };

  beforeAll(async () => {
    h = harness();
    base = await listenOnLoopback(h.vigil);
    org = await h.createOrg("platform");
    fullKey = (await h.createKey({ orgIds: [org] })).key;
    ws = createWorkspace({ providerDir: (await buildDevProvider()).dir });
    ws.write(config());
    // The app first, then the registration; no depends_on, so a refresh reads both side by side.
    await ws.ok("apply", "-auto-approve", "-no-color", "-target=svc_app.sre");
    await ws.ok("apply", "-auto-approve", "-no-color");
  });
  afterAll(() => ws?.remove());

  it("counts only a 404 of the app or the registration itself as gone, not one of the workspace", async () => {
    const own = new Client(base, org, fullKey);
    const unknownApp = await failure(own, "/api/v1/apps/no-such-app");
    expect(unknownApp.body).toEqual({
      error: "app not found",
      code: "NOT_FOUND",
      details: { app_name: "no-such-app" },
    });
    expect(isGone(unknownApp, ["app_name"])).toBe(true);
    const unknownRegistration = await failure(own, `/app/sre/api/v1/alerts/webhook/${randomUUID()}`);
    expect(unknownRegistration.body).toMatchObject({ error: "alert webhook not found", code: "NOT_FOUND" });
    expect(isGone(unknownRegistration, ["id", "app_name"])).toBe(true);

    const elsewhere = await h.createOrg("elsewhere");
    const stranger = new Client(base, org, (await h.createKey({ orgIds: [elsewhere] })).key);
    const refused = await failure(stranger, "/api/v1/apps/sre");
    expect(refused.body).toEqual({
      error: "organization not found",
      code: "NOT_FOUND",
      details: { orgId: org },
    });
    expect(isGone(refused, ["app_name"])).toBe(false);
    expect(isGone(await failure(stranger, "/app/sre/api/v1/alerts/webhook/x"), ["id", "app_name"])).toBe(
      false,
    );
    expect(apiDiagnostic(refused, "Cannot read", []).diagnostics[0]?.detail).toBe(
      `GET /api/v1/apps/sre answered 404: organization not found. Check workspace_id (or SVC_WORKSPACE_ID) and the API key: the workspace ${org} must exist and the key must be allowed to act in it.`,
    );
    // A route the service does not have is no proof that the object is gone either.
    const noRoute = await failure(own, "/api/v1/no-such-route");
    expect(noRoute.body?.code).toBe("ROUTE_NOT_FOUND");
    expect(isGone(noRoute, ["app_name", "id"])).toBe(false);
  });

  it("reports a key not allowed in the workspace as an error and keeps both resources in state", async () => {
    const before = await ws.state();
    const elsewhere = await h.createOrg("other");
    const stranger = (await h.createKey({ orgIds: [elsewhere] })).key;
    ws.write(config({ apiKey: stranger }));
    const plan = await ws.plan();
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    expect(plan.stdout).not.toContain("has been deleted");
    const message = oneLine(plan.stderr);
    expect(message).toContain("Cannot read the alert-ingest webhook");
    expect(message).toContain('Cannot read app "sre"');
    expect(message).toContain(
      `Check workspace_id (or SVC_WORKSPACE_ID) and the API key: the workspace ${org} must exist and the key must be allowed to act in it.`,
    );
    const refresh = await ws.tofu("apply", "-refresh-only", "-auto-approve", "-no-color");
    expect(refresh.code, refresh.stdout + refresh.stderr).toBe(1);
    expect(await ws.state()).toEqual(before);
    ws.write(config());
    expect((await ws.plan()).code).toBe(0);
  });

  it("reports a workspace_id the key may not act in as an error, not as deleted resources", async () => {
    const before = await ws.state();
    const wrong = randomUUID();
    ws.write(config({ workspaceId: wrong }));
    const refresh = await ws.tofu("apply", "-refresh-only", "-auto-approve", "-no-color");
    expect(refresh.code, refresh.stdout + refresh.stderr).toBe(1);
    expect(oneLine(refresh.stderr)).toContain(`the workspace ${wrong} must exist`);
    expect(await ws.state()).toEqual(before);
    ws.write(config());
    expect((await ws.plan()).code).toBe(0);
  });

  it("reports a login page answering at service_url as an error and keeps both resources in state", async () => {
    const before = await ws.state();
    const login = await loginPage();
    try {
      ws.write(config({ serviceUrl: login.url }));
      const plan = await ws.plan();
      expect(plan.code, plan.stdout + plan.stderr).toBe(1);
      expect(plan.stdout).not.toContain("has been deleted");
      const message = oneLine(plan.stderr);
      expect(message).toContain(`Unexpected answer from the service at ${login.url}`);
      expect(message).toContain("GET /api/v1/apps/sre answered 200 with text/html, not Vigil's JSON.");
      expect(message).toContain(
        "answered 200 with text/html, not Vigil's JSON. Is service_url the Vigil server, not a proxy or a login page in front of it?",
      );
      expect(message).not.toContain("is not a function");
      const refresh = await ws.tofu("apply", "-refresh-only", "-auto-approve", "-no-color");
      expect(refresh.code, refresh.stdout + refresh.stderr).toBe(1);
      expect(await ws.state()).toEqual(before);
    } finally {
      await login.close();
    }
    ws.write(config());
    expect((await ws.plan()).code).toBe(0);
  });

  it("ends a plan waiting on a silent service at Ctrl-C, saying the run was stopped, and keeps state", async () => {
    const before = await ws.state();
    const silent = await silentListener();
    try {
      ws.write(config({ serviceUrl: silent.url }));
      // OpenTofu sends StopProvider on Ctrl-C in plan (and while apply changes things; not while
      // apply plans, so there only the request timeout ends a read).
      const plan = ws.start("plan", "-no-color");
      await silent.received(1);
      plan.child.kill("SIGINT");
      // Without the stop, each read would wait for its request timeout (longer than this test's).
      const result = await plan.result;
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(oneLine(result.stderr)).toContain("The run was stopped");
      expect(await ws.state()).toEqual(before);
    } finally {
      await silent.close();
    }
    ws.write(config());
    expect((await ws.plan()).code).toBe(0);
  });

  it("refuses a service_url with a password on its line, never showing the password", async () => {
    const withPassword = `http://admin:s3cr3tpass@${base.replace("http://", "")}`;
    ws.write(config({ serviceUrl: withPassword }));
    const plan = await ws.plan();
    expect(plan.code, plan.stdout + plan.stderr).toBe(1);
    expect(oneLine(plan.stderr)).toContain(
      "service_url must not carry credentials; set api_key (or SVC_API_KEY) instead.",
    );
    expect(plan.stderr).toMatch(/on main\.tf line \d+, in provider "svc":/);
    // OpenTofu quotes the line of the configuration; nothing else shows the password.
    const quoted = `service_url  = "${withPassword}"`;
    expect(plan.stderr).toContain(quoted);
    expect((plan.stdout + plan.stderr).replaceAll(quoted, "")).not.toContain("s3cr3tpass");
    ws.write(config());
  });

  it("keeps the app token and the trigger URL in state when a read-only key refreshes", async () => {
    const before = await secrets();
    expect(String(before.appToken).length).toBeGreaterThan(10);
    expect(before.triggerUrl).toMatch(/apiKey=/);
    expect(before.triggerUrl).not.toContain("apiKey=hidden");
    const reader = (await h.createKey({ orgIds: [org], scopes: ["apps_read", "sre_alerts_read"] })).key;
    ws.write(config({ apiKey: reader }));
    // The service really hides both from this key.
    const readOnly = new Client(base, org, reader);
    const app = await readOnly.request<Record<string, unknown>>("GET", "/api/v1/apps/sre");
    expect(app.app_token).toBeNull();
    const [registration] = await readOnly.request<{ platform_webhook_url: string }[]>(
      "GET",
      "/app/sre/api/v1/alerts/webhook",
    );
    expect(registration?.platform_webhook_url).toContain("apiKey=hidden");

    const plan = await ws.plan();
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain("has changed");
    await ws.ok("apply", "-refresh-only", "-auto-approve", "-no-color");
    expect(await secrets()).toEqual(before);
    expect(await ws.ok("output", "-raw", "url")).toBe(before.triggerUrl);
    ws.write(config());
  });

  it("keeps the app token in state for a key with apps_write that lacks a scope the token holds", async () => {
    const before = await secrets();
    const scopes = ["apps_read", "apps_write", "sre_alerts_read", "sre_alerts_write"] as const;
    const writer = (await h.createKey({ orgIds: [org], scopes })).key;
    const app = await new Client(base, org, writer).request<Record<string, unknown>>(
      "GET",
      "/api/v1/apps/sre",
    );
    expect(app.app_token).toBeNull();
    ws.write(config({ apiKey: writer }));
    const refresh = await ws.ok("apply", "-refresh-only", "-auto-approve", "-no-color");
    // Hidden from this key, not revoked: no warning, and state keeps the token.
    expect(refresh).not.toContain("was revoked");
    expect(await secrets()).toEqual(before);
    ws.write(config());
  });
});
