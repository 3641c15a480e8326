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
  let providerDir = "";
  let apiKey = "";
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
    providerDir = (await buildDevProvider()).dir;
    apiKey = key.key;
    ws = createWorkspace({ providerDir, env: { SVC_API_KEY: apiKey } });
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

    // A run that will be skipped waits for nothing: no polls of GET /api/setup and no warning, though
    // observability is not ready ("prom" has no URL to probe).
    expect((await api("GET", "/api/setup")).json().observability_ready).toBe(false);
    const skipping = `  integrations = ["prom"]
  enabled = true
  bootstrap_discovery = true
  discovery_setup_wait_attempts = 2
  discovery_skip_if_exists = true`;
    ws.write(config(skipping));
    const skipped = oneLine(await apply());
    expect(skipped).not.toContain("Observability is not ready");
    expect(await current()).toMatchObject({ discovery_run_id: "", discovery_run_status: "skipped" });
    expect((await ws.plan()).code).toBe(0);
  });

  it("changes a discovery tuning attribute alone in state only: no unknowns, no update, no run", async () => {
    const runs = async () => (await api("GET", "/app/sre/api/discovery/runs?limit=100")).json().length;
    const before = { state: await current(), remote: await remote(), runs: await runs() };
    ws.write(
      config(`  integrations = ["prom"]
  enabled = true
  bootstrap_discovery = true
  discovery_setup_wait_attempts = 3
  discovery_poll_timeout_seconds = 60
  discovery_skip_if_exists = true`),
    );
    const plan = await ws.plan();
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain("will be updated in-place");
    expect(plan.stdout).toMatch(/\+ discovery_poll_timeout_seconds\s+= 60/);
    expect(plan.stdout).toMatch(/~ discovery_setup_wait_attempts\s+= 2 -> 3/);
    expect(plan.stdout).not.toContain("known after apply");
    await apply();
    expect(await current()).toEqual({
      ...before.state,
      discovery_setup_wait_attempts: 3,
      discovery_poll_timeout_seconds: 60,
    });
    expect(await remote()).toEqual(before.remote);
    expect(await runs()).toBe(before.runs);
    expect((await ws.plan()).code).toBe(0);
  });

  it("empties a revoked app token in state, says how to get another, and records the rotated one", async () => {
    ws.write(
      `${config(`  integrations = ["prom"]`)}
output "token" {
  value     = svc_app.sre.app_token
  sensitive = true
}
`,
    );
    await apply();
    const issued = String((await current()).app_token);
    expect(issued.length).toBeGreaterThan(10);
    const keys = (await api("GET", "/api/v1/keys")).json() as {
      id: string;
      name: string;
      revoked_at: string | null;
    }[];
    const tokenKey = keys.find((key) => key.name === "app token: sre" && key.revoked_at === null);
    expect(tokenKey).toBeDefined();
    const revoked = await api("POST", `/api/v1/keys/${tokenKey?.id}/revoke`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await remote()).app_token).toBeUndefined();

    // What uses the token sees it go, and the plan says how to get another.
    const plan = await ws.plan();
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    const said = oneLine(plan.stdout + plan.stderr);
    expect(said).toContain('The app token of "sre" was revoked');
    expect(said).toContain(`POST /api/v1/apps/sre/token/rotate?orgId=${org} with a key holding apps_write`);
    expect(said).toMatch(/token\s*= \(sensitive value\)/);
    await ws.ok("apply", "-refresh-only", "-auto-approve", "-no-color");
    expect((await current()).app_token).toBe("");
    expect(await ws.ok("output", "-raw", "token")).toBe("");

    const rotated = await api("POST", "/api/v1/apps/sre/token/rotate");
    expect(rotated.statusCode, rotated.body).toBe(200);
    const refreshed = oneLine(await ws.ok("apply", "-refresh-only", "-auto-approve", "-no-color"));
    expect(refreshed).not.toContain("was revoked");
    expect((await current()).app_token).toBe(rotated.json().app_token);
    expect(await ws.ok("output", "-raw", "token")).toBe(rotated.json().app_token);
    expect((await ws.plan()).code).toBe(0);
  });

  it("points at workflow_assignments for two defaults of one purpose, and at app_name for an app the catalog lacks", async () => {
    ws.write(
      config(`  integrations = ["prom"]
  workflow_assignments = [
    { purpose = "${purpose}", workflow_name = "triage-v2", is_default = true },
    { purpose = "${purpose}", workflow_name = "other", is_default = true },
  ]`),
    );
    const twoDefaults = await ws.plan();
    expect(twoDefaults.code).toBe(1);
    expect(oneLine(twoDefaults.stderr)).toContain("Two default workflows for one purpose");
    expect(oneLine(twoDefaults.stderr)).toContain(
      `workflow_assignments[0] and workflow_assignments[1] both set is_default for purpose "${purpose}"`,
    );
    expect(twoDefaults.stderr).toMatch(/on main\.tf line \d+, in resource "svc_app" "sre":/);
    expect(twoDefaults.stderr).toContain("workflow_assignments = [");

    // On create the plan cannot know the catalog lacks the app; the apply's 404 names no field.
    const other = createWorkspace({ providerDir, env: { SVC_API_KEY: apiKey } });
    other.write(`${providerBlock(org, base)}\nresource "svc_app" "ghost" {\n  app_name = "no-such-app"\n}\n`);
    const created = await other.tofu("apply", "-auto-approve", "-no-color");
    other.remove();
    expect(created.code).toBe(1);
    expect(oneLine(created.stderr)).toContain('Cannot bind app "no-such-app"');
    expect(oneLine(created.stderr)).toContain(
      "Check app_name: GET /api/v1/apps lists the apps of the catalog.",
    );
    expect(created.stderr).toContain('app_name = "no-such-app"');
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
