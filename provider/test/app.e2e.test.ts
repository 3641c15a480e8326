// svc_app driven by the real OpenTofu against a listening Vigil, written to the apps contract
// (GET/PUT/DELETE /api/v1/apps/{app}, the discovery runs and GET /api/setup).
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type Auth,
  call,
  describeOnOneEngine,
  type Harness,
  listenOnLoopback,
  type Method,
} from "../../test/harness.ts";
import { buildDevProvider, createWorkspace, oneLine, providerBlock, type Workspace } from "./tofu.ts";

const ADDRESS = "svc_app.sre";
const UUID = /^[0-9a-f-]{36}$/;

describeOnOneEngine("svc_app with OpenTofu", (harness) => {
  let h: Harness;
  let base = "";
  let org = "";
  let auth: Auth;
  let ws: Workspace;
  let purpose = "";
  const api = (method: Method, path: string, payload?: object) =>
    call(h, auth, method, `${path}${path.includes("?") ? "&" : "?"}orgId=${org}`, payload);
  const remote = async () => {
    const response = await api("GET", "/api/v1/apps/sre");
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const config = (body: string) =>
    `${providerBlock(org, base)}\nresource "svc_app" "sre" {\n  app_name = "sre"\n${body}\n}\n`;
  const current = async () => (await ws.state())[ADDRESS] as Record<string, unknown>;
  const apply = () => ws.ok("apply", "-auto-approve", "-no-color");

  beforeAll(async () => {
    h = harness();
    base = await listenOnLoopback(h.vigil);
    org = await h.createOrg("platform");
    const key = await h.createKey({ orgIds: [org] });
    auth = key.auth;
    for (const [name, type] of [
      ["prom", "prometheus"],
      ["grafana-main", "grafana"],
    ]) {
      const made = await api("POST", "/api/v1/integrations", { name, type });
      expect(made.statusCode, made.body).toBe(201);
    }
    const workflow = await api("POST", "/platform/api/v1/workflows", { name: "triage-v2" });
    expect(workflow.statusCode, workflow.body).toBe(201);
    const approved = await api("POST", "/platform/api/v1/workflows/triage-v2/versions/1/approve");
    expect(approved.statusCode, approved.body).toBe(200);
    purpose = (await remote()).workflow_purposes[0].purpose;
    const provider = await buildDevProvider();
    ws = createWorkspace({ providerDir: provider.dir, env: { SVC_API_KEY: key.key } });
  });
  afterAll(() => ws?.remove());

  it("binds the app, fills the computed attributes and plans no change after apply", async () => {
    ws.write(config(`  integrations = ["prom"]\n  config = { region = "eu" }`));
    await apply();
    const state = await current();
    expect(state).toMatchObject({
      configured: true,
      status: "active",
      integrations: ["prom"],
      config: { region: "eu" },
    });
    expect(state.id).toMatch(UUID);
    expect(String(state.app_token).length).toBeGreaterThan(10);
    expect(state.discovery_run_id).toBe("");
    expect(await remote()).toMatchObject({
      configured: true,
      integrations: ["prom"],
      config: { region: "eu" },
    });
    const shown = JSON.parse(await ws.ok("show", "-json"));
    expect(shown.values.root_module.resources[0].sensitive_values.app_token).toBe(true);
    expect((await ws.plan()).code).toBe(0);
  });

  it("updates bindings, workflows and assignments in place", async () => {
    const { id } = await current();
    ws.write(
      config(`  integrations = ["prom", "grafana-main"]
  config = { region = "eu" }
  attached_workflows = ["triage-v2"]
  workflow_assignments = [{ purpose = "${purpose}", workflow_name = "triage-v2", is_default = true }]`),
    );
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain("will be updated in-place");
    await apply();
    expect((await current()).id).toBe(id);
    expect(await remote()).toMatchObject({
      integrations: expect.arrayContaining(["prom", "grafana-main"]),
      attached_workflows: ["triage-v2"],
      workflow_assignments: [{ purpose, workflow_name: "triage-v2", is_default: true }],
    });
    expect((await ws.plan()).code).toBe(0);
  });

  it("leaves omitted attributes unchanged on the service and clears them with an empty list", async () => {
    ws.write(config(`  integrations = ["prom", "grafana-main"]`));
    await apply();
    expect(await remote()).toMatchObject({ attached_workflows: ["triage-v2"], config: { region: "eu" } });
    expect((await remote()).workflow_assignments).toHaveLength(1);
    ws.write(
      config(
        `  integrations = ["prom", "grafana-main"]\n  attached_workflows = []\n  workflow_assignments = []`,
      ),
    );
    await apply();
    expect(await remote()).toMatchObject({ attached_workflows: [], workflow_assignments: [] });
    ws.write(config(`  integrations = ["prom", "grafana-main"]\n  config = { team = "sre" }`));
    await apply();
    expect((await remote()).config).toEqual({ team: "sre" }); // replaced, not merged
    expect((await ws.plan()).code).toBe(0);
  });

  it("leaves enabled unmanaged until it is set", async () => {
    expect((await api("PUT", "/api/v1/apps/sre", { enabled: false })).statusCode).toBe(200);
    expect((await ws.plan()).code).toBe(0);
    ws.write(
      config(`  integrations = ["prom", "grafana-main"]\n  config = { team = "sre" }\n  enabled = true`),
    );
    await apply();
    expect(await remote()).toMatchObject({ enabled: true, status: "active" });
  });

  it("detects bindings changed on the service and an app unbound on the service", async () => {
    expect((await api("PUT", "/api/v1/apps/sre", { integrations: ["prom"] })).statusCode).toBe(200);
    const plan = await ws.plan();
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ "grafana-main"');
    await apply();
    expect((await remote()).integrations).toEqual(expect.arrayContaining(["prom", "grafana-main"]));

    expect((await api("DELETE", "/api/v1/apps/sre")).statusCode).toBe(204);
    const gone = await ws.plan();
    expect(gone.code).toBe(2);
    expect(gone.stdout).toContain("will be created");
    await apply();
    expect((await remote()).configured).toBe(true);
  });

  it("names the attribute when the service rejects a binding", async () => {
    ws.write(config(`  integrations = ["prom", "no-such-integration"]`));
    const failed = await ws.tofu("apply", "-auto-approve", "-no-color");
    expect(failed.code).toBe(1);
    expect(oneLine(failed.stderr)).toContain("no-such-integration");
    expect(oneLine(failed.stderr)).toMatch(/on main\.tf line \d+, in resource "svc_app" "sre"/);
  });

  it("rejects discovery settings that are not whole numbers in range at plan time, on their lines", async () => {
    // 99999999999999999999999 and 1.000000000000000000001 are no float64: OpenTofu sends them as strings.
    for (const [name, written] of [
      ["discovery_poll_timeout_seconds", "0.5"],
      ["discovery_poll_timeout_seconds", "99999999999999999999999"],
      ["discovery_setup_wait_attempts", "1.000000000000000000001"],
    ] as const) {
      ws.write(config(`  integrations = ["prom"]\n  bootstrap_discovery = true\n  ${name} = ${written}`));
      const plan = await ws.plan();
      expect(plan.code, `${name} = ${written}: ${plan.stdout}${plan.stderr}`).toBe(1);
      expect(oneLine(plan.stderr)).toContain(`Invalid ${name}`);
      expect(oneLine(plan.stderr)).toMatch(new RegExp(`${name} must be a whole number (of seconds )?from`));
      expect(plan.stderr).toContain(`${name} = ${written}`);
    }
  });

  it("runs discovery after binding, then skips it when a run exists", async () => {
    const setup = await api("GET", "/api/setup");
    expect(setup.statusCode, setup.body).toBe(200);
    ws.write(
      config(`  integrations = ["prom", "grafana-main"]
  enabled = true
  bootstrap_discovery = true
  discovery_setup_wait_attempts = 2
  discovery_poll_timeout_seconds = 120`),
    );
    const output = oneLine(await apply());
    // Two polls of GET /api/setup: when observability is not ready, discovery starts anyway with a warning.
    if (setup.json().observability_ready === false) expect(output).toContain("Observability is not ready");
    const state = await current();
    expect(state.discovery_run_id).toMatch(UUID);
    expect(["succeeded", "failed"]).toContain(state.discovery_run_status);
    const run = await api("GET", `/app/sre/api/discovery/runs/${state.discovery_run_id}`);
    expect(run.json().status).toBe(state.discovery_run_status);

    ws.write(
      config(`  integrations = ["prom"]
  enabled = true
  bootstrap_discovery = true
  discovery_skip_if_exists = true`),
    );
    await apply();
    expect(await current()).toMatchObject({ discovery_run_id: "", discovery_run_status: "skipped" });
    expect((await ws.plan()).code).toBe(0);
  });

  it("refuses at plan time to replace the binding with an app the catalog lacks, before unbinding", async () => {
    ws.write(config(`  integrations = ["prom"]`).replace('app_name = "sre"', 'app_name = "another-app"'));
    const apply = await ws.tofu("apply", "-auto-approve", "-no-color");
    expect(apply.code, apply.stdout).toBe(1);
    expect(apply.stderr).toContain("Unknown app");
    expect(apply.stderr).toContain('The catalog has no app "another-app"');
    expect(apply.stdout).not.toContain("Destroying");
    expect((await ws.state())[ADDRESS]).toMatchObject({ app_name: "sre", configured: true });
  });

  it("imports by app name", async () => {
    ws.write(
      config(
        `  integrations = ["prom"]\n  attached_workflows = []\n  workflow_assignments = []\n  config = { team = "sre" }\n  enabled = true`,
      ),
    );
    await ws.ok("state", "rm", ADDRESS);
    await ws.ok("import", "-no-color", ADDRESS, "sre");
    expect(await current()).toMatchObject({ app_name: "sre", configured: true, integrations: ["prom"] });
    expect((await ws.plan()).code).toBe(0);
    const unknown = await ws.tofu("import", "-no-color", "svc_app.other", "no-such-app");
    expect(unknown.code).toBe(1);
  });

  it("unbinds the app on destroy", async () => {
    await ws.ok("destroy", "-auto-approve", "-no-color");
    expect((await remote()).configured).toBe(false);
  });
});
