// svc_sre_alert_webhook driven by the real OpenTofu against a listening Vigil (dev_overrides):
// create with defaults, no diff after apply, an alert posted to the trigger_url the apply produced,
// update in place, plan-time validation, replacement (refused at plan time when another registration
// holds the new identity), drift (changed and deleted remotely), import by both ID forms, destroy.
import { afterAll, beforeAll, expect, it } from "vitest";
import { readFixture } from "../../test/fixtures.ts";
import { type Auth, describeOnOneEngine, type Harness, listenOnLoopback } from "../../test/harness.ts";
import { buildDevProvider, createWorkspace, oneLine, providerBlock, type Workspace } from "./tofu.ts";

const ADDRESS = "svc_sre_alert_webhook.am";

describeOnOneEngine("svc_sre_alert_webhook with OpenTofu", (harness) => {
  let h: Harness;
  let base = "";
  let org = "";
  let auth: Auth;
  let ws: Workspace;
  let providerDir = "";
  let apiKey = "";
  const config = (body: string) =>
    `${providerBlock(org, base)}\nresource "svc_sre_alert_webhook" "am" {\n${body}\n}\n`;
  const api = (method: "GET" | "PUT" | "DELETE", path: string, payload?: object) =>
    h.vigil.app.inject({
      method,
      url: `/app/sre/api/v1/alerts/webhook${path}${path.includes("?") ? "&" : "?"}orgId=${org}`,
      headers: auth,
      payload,
    });
  const current = async () => (await ws.state())[ADDRESS] as Record<string, unknown>;

  beforeAll(async () => {
    h = harness();
    base = await listenOnLoopback(h.vigil);
    org = await h.createOrg("platform");
    const key = await h.createKey({ orgIds: [org] });
    auth = key.auth;
    apiKey = key.key;
    providerDir = (await buildDevProvider()).dir;
    ws = createWorkspace({ providerDir, env: { SVC_API_KEY: apiKey } });
  });
  afterAll(() => ws?.remove());

  it("creates a registration with the defaults, and plans no change after apply", async () => {
    ws.write(config(`  source = "alertmanager"`));
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/\+ id\s+= \(known after apply\)/);
    expect(plan.stdout).toMatch(/\+ trigger_url\s+= \(sensitive value\)/);
    expect(plan.stdout).toMatch(/\+ classify_mode\s+= "batch"/);
    await ws.ok("apply", "-auto-approve", "-no-color");
    const state = await current();
    expect(state).toMatchObject({
      source: "alertmanager",
      app_name: "sre",
      integration: "",
      classify_mode: "batch",
      classify_bucket_by: "storm_scope",
      classify_batch_window_seconds: 60,
      auto_investigate: false,
      classify_critical_bypass: true,
    });
    expect(state.platform_webhook_id).toBe(state.id);
    expect(state.trigger_url).toBe(`${base}/platform${state.platform_webhook_url}`);
    const remote = await api("GET", `/${state.id}`);
    expect(remote.statusCode).toBe(200);
    expect(remote.json()).toMatchObject({ source: "alertmanager", classify_mode: "batch", org_id: org });
    const again = await ws.plan();
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain("No changes");
  });

  it("hides the trigger URL in plans and output as sensitive", async () => {
    const shown = JSON.parse(await ws.ok("show", "-json"));
    const resource = shown.values.root_module.resources.find(
      (r: { address: string }) => r.address === ADDRESS,
    );
    expect(resource.sensitive_values).toMatchObject({ trigger_url: true, platform_webhook_url: true });
    const text = await ws.ok("show", "-no-color");
    expect(text).not.toContain("apiKey=");
  });

  it("takes an Alertmanager alert posted to the trigger_url from the apply state into listAlerts", async () => {
    const { trigger_url: triggerUrl } = await current();
    const response = await fetch(String(triggerUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: readFixture("alertmanager", "firing-single-critical.json"),
    });
    expect(response.status).toBe(202);
    const listed = await h.vigil.app.inject({ url: `/app/sre/api/v1/alerts?orgId=${org}`, headers: auth });
    expect(listed.statusCode).toBe(200);
    const titles = listed.json().alerts.map((alert: { title: string; source_type: string }) => alert);
    expect(titles).toEqual([expect.objectContaining({ source_type: "alertmanager" })]);
    expect(titles[0].title).toContain("KubePodCrashLooping");
  });

  it("updates settings in place, keeping the registration", async () => {
    const before = await current();
    ws.write(
      config(`  source = "alertmanager"
  classify_mode = "immediate"
  classify_batch_window_seconds = 120
  classify_bucket_by = "service"
  auto_investigate = true
  classify_critical_bypass = false`),
    );
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("will be updated in-place");
    await ws.ok("apply", "-auto-approve", "-no-color");
    const after = await current();
    expect(after.id).toBe(before.id);
    expect((await api("GET", `/${after.id}`)).json()).toMatchObject({
      classify_mode: "immediate",
      classify_batch_window_seconds: 120,
      classify_bucket_by: "service",
      auto_investigate: true,
      classify_critical_bypass: false,
    });
    expect((await ws.plan()).code).toBe(0);
  });

  it("rejects a batch window outside 15..300 at plan time, on the attribute's line", async () => {
    ws.write(config(`  source = "alertmanager"\n  classify_batch_window_seconds = 10`));
    const plan = await ws.plan();
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain("Invalid classify_batch_window_seconds");
    expect(oneLine(plan.stderr)).toContain("from 15 to 300");
    expect(plan.stderr).toMatch(/on main\.tf line \d+, in resource "svc_sre_alert_webhook" "am":/);
    expect(plan.stderr).toContain("classify_batch_window_seconds = 10");
    // Numbers a float64 cannot hold exactly reach the provider as msgpack strings: still checked.
    for (const written of ["400.0000000000000000001", "60.00000000000000000000001", "1e400"]) {
      ws.write(config(`  source = "alertmanager"\n  classify_batch_window_seconds = ${written}`));
      const inexact = await ws.plan();
      expect(inexact.code, `${written}: ${inexact.stdout}${inexact.stderr}`).toBe(1);
      expect(oneLine(inexact.stderr)).toContain(
        "classify_batch_window_seconds must be a whole number of seconds from 15 to 300",
      );
      expect(inexact.stderr).toContain(`classify_batch_window_seconds = ${written}`);
    }
    ws.write(config(`  source = "alertmanager"\n  classify_mode = "sometimes"`));
    const badMode = await ws.plan();
    expect(badMode.code).toBe(1);
    expect(oneLine(badMode.stderr)).toContain("classify_mode must be one of batch, immediate");
    // A source no parser reads: the service refuses it, and the error points at the source line.
    // (in a workspace of its own, so the registration above stays as it is)
    const other = createWorkspace({ providerDir, env: { SVC_API_KEY: apiKey } });
    other.write(config(`  source = "nagios"`));
    const badSource = await other.tofu("apply", "-auto-approve", "-no-color");
    other.remove();
    expect(badSource.code).toBe(1);
    expect(oneLine(badSource.stderr)).toContain("Cannot create the alert-ingest webhook");
    expect(badSource.stderr).toContain('source = "nagios"');
  });

  it("sets omitted settings back to their defaults", async () => {
    ws.write(config(`  source = "alertmanager"`));
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/classify_mode\s+= "immediate" -> "batch"/);
    await ws.ok("apply", "-auto-approve", "-no-color");
    expect(await current()).toMatchObject({ classify_mode: "batch", classify_batch_window_seconds: 60 });
  });

  it("replaces the registration when its integration changes", async () => {
    const before = await current();
    ws.write(config(`  source = "alertmanager"\n  integration = "prod"`));
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("must be replaced");
    expect(plan.stdout).toContain("forces replacement");
    await ws.ok("apply", "-auto-approve", "-no-color");
    const after = await current();
    expect(after.id).not.toBe(before.id);
    expect(after.integration).toBe("prod");
    expect((await api("GET", `/${before.id}`)).statusCode).toBe(404);
    expect((await ws.plan()).code).toBe(0);
  });

  it("refuses at plan time a replacement the service would refuse, before the registration is deleted", async () => {
    const before = await current();
    const refused = async (body: string, summary: string, detail: string) => {
      ws.write(config(body));
      const apply = await ws.tofu("apply", "-auto-approve", "-no-color");
      expect(apply.code, apply.stdout).toBe(1);
      // OpenTofu wraps long details across lines.
      const said = apply.stderr.replace(/\s+/g, " ");
      expect(said).toContain(summary);
      expect(said).toContain(detail);
      expect(apply.stdout).not.toContain("Destroying");
      expect((await api("GET", `/${before.id}`)).statusCode).toBe(200);
    };
    await refused(
      `  source = "alertmanger"\n  integration = "prod"`,
      "Invalid source",
      "source: must be one of",
    );
    await refused(
      `  source = "alertmanager"\n  integration = "prod"\n  app_name = "ops"`,
      "Unknown app",
      'The catalog has no app "ops"',
    );
    await refused(
      `  source = "alertmanager"\n  integration = ".."`,
      "Invalid integration",
      'not "." or ".."',
    );
    ws.write(config(`  source = "alertmanager"\n  integration = "prod"`));
    expect((await ws.plan()).code).toBe(0);
  });

  it("refuses at plan time a replacement whose new source and integration another registration holds", async () => {
    const before = await current();
    const made = await h.vigil.app.inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/webhook?orgId=${org}`,
      headers: auth,
      payload: { source: "alertmanager", integration: "staging" },
    });
    expect(made.statusCode, made.body).toBe(201);
    const taken = made.json().id;
    ws.write(config(`  source = "alertmanager"\n  integration = "staging"`));
    const apply = await ws.tofu("apply", "-auto-approve", "-no-color");
    expect(apply.code, apply.stdout).toBe(1);
    const said = oneLine(apply.stderr);
    expect(said).toContain("Another registration holds this source and integration");
    expect(said).toContain(
      `App "sre" already has registration ${taken} for source "alertmanager" and integration "staging"`,
    );
    expect(said).toContain("Nothing was changed");
    expect(said).toContain("tofu import <address> sre/alertmanager/staging");
    expect(said).toContain(`DELETE /app/sre/api/v1/alerts/webhook/${taken}`);
    // On the line of the attribute that changed.
    expect(apply.stderr).toContain('integration = "staging"');
    expect(apply.stdout).not.toContain("Destroying");
    expect((await api("GET", `/${before.id}`)).statusCode).toBe(200);
    expect((await api("GET", `/${taken}`)).statusCode).toBe(200);
    expect(await current()).toEqual(before);
    expect((await api("DELETE", `/${taken}`)).statusCode).toBe(204);
    ws.write(config(`  source = "alertmanager"\n  integration = "prod"`));
    expect((await ws.plan()).code).toBe(0);
  });

  it("detects a setting changed on the service and plans it back", async () => {
    const { id } = await current();
    expect((await api("PUT", `/${id}`, { classify_mode: "immediate" })).statusCode).toBe(200);
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/classify_mode\s+= "immediate" -> "batch"/);
    await ws.ok("apply", "-auto-approve", "-no-color");
    expect((await api("GET", `/${id}`)).json().classify_mode).toBe("batch");
  });

  it("plans a registration deleted on the service for creation again", async () => {
    const { id } = await current();
    expect((await api("DELETE", `/${id}`)).statusCode).toBe(204);
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("will be created");
    await ws.ok("apply", "-auto-approve", "-no-color");
    const again = await current();
    expect(again.id).not.toBe(id);
    expect((await api("GET", `/${again.id}`)).statusCode).toBe(200);
  });

  it("imports by {app_name}/{source}/{integration} and by {app_name}/{source}", async () => {
    const { id } = await current();
    await ws.ok("state", "rm", ADDRESS);
    await ws.ok("import", "-no-color", ADDRESS, "sre/alertmanager/prod");
    const imported = await current();
    expect(imported).toMatchObject({ id, integration: "prod", source: "alertmanager", app_name: "sre" });
    expect(imported.trigger_url).toBe(`${base}/platform${imported.platform_webhook_url}`);
    expect((await ws.plan()).code).toBe(0);

    // The default integration: a registration made outside OpenTofu, imported by two segments.
    const made = await h.vigil.app.inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/webhook?orgId=${org}`,
      headers: auth,
      payload: { source: "grafana", classify_mode: "immediate" },
    });
    expect(made.statusCode).toBe(201);
    ws.write(
      `${config(`  source = "alertmanager"\n  integration = "prod"`)}
resource "svc_sre_alert_webhook" "grafana" {
  source        = "grafana"
  classify_mode = "immediate"
}
`,
    );
    await ws.ok("import", "-no-color", "svc_sre_alert_webhook.grafana", "sre/grafana");
    const grafana = (await ws.state())["svc_sre_alert_webhook.grafana"];
    expect(grafana).toMatchObject({ id: made.json().id, integration: "", classify_mode: "immediate" });
    expect((await ws.plan()).code).toBe(0);
  });

  it("explains an import ID that finds nothing or is malformed", async () => {
    ws.write(
      `${config(`  source = "alertmanager"\n  integration = "prod"`)}
resource "svc_sre_alert_webhook" "datadog" {
  source = "datadog"
}
`,
    );
    const missing = await ws.tofu("import", "-no-color", "svc_sre_alert_webhook.datadog", "sre/datadog/none");
    expect(missing.code).toBe(1);
    expect(oneLine(missing.stderr)).toContain('no registration for source "datadog" and integration "none"');
    const malformed = await ws.tofu("import", "-no-color", "svc_sre_alert_webhook.datadog", "datadog");
    expect(malformed.code).toBe(1);
    expect(oneLine(malformed.stderr)).toContain(
      'Expected "{app_name}/{source}/{integration}" or "{app_name}/{source}"',
    );
  });

  it("reports provider setting problems on the setting, and a rejected API key with a hint", async () => {
    const resource = `\nresource "svc_sre_alert_webhook" "am" {\n  source = "alertmanager"\n  integration = "prod"\n}\n`;
    ws.write(providerBlock("not-a-uuid", base) + resource);
    const badWorkspace = await ws.plan();
    expect(badWorkspace.code).toBe(1);
    expect(oneLine(badWorkspace.stderr)).toContain('workspace_id must be a workspace UUID, got "not-a-uuid"');
    expect(badWorkspace.stderr).toMatch(/on main\.tf line \d+, in provider "svc":/);

    ws.write(providerBlock(org, base).replace(/ {2}service_url .*\n/, "") + resource);
    const noUrl = await ws.plan();
    expect(noUrl.code).toBe(1);
    expect(oneLine(noUrl.stderr)).toContain("Missing provider setting service_url");

    ws.write(
      providerBlock(org, base).replace('provider "svc" {', 'provider "svc" {\n  api_key = "wrong-key"') +
        resource,
    );
    const badKey = await ws.plan();
    expect(badKey.code).toBe(1);
    expect(oneLine(badKey.stderr)).toContain("answered 401");
    expect(oneLine(badKey.stderr)).toContain("Check the api_key setting");
    ws.write(
      `${config(`  source = "alertmanager"\n  integration = "prod"`)}
resource "svc_sre_alert_webhook" "grafana" {
  source        = "grafana"
  classify_mode = "immediate"
}
`,
    );
    expect((await ws.plan()).code).toBe(0);
  });

  it("destroys the registrations", async () => {
    const { id } = await current();
    await ws.ok("destroy", "-auto-approve", "-no-color");
    expect((await api("GET", `/${id}`)).statusCode).toBe(404);
    const left = await api("GET", "");
    expect(left.json()).toEqual([]);
  });
});
