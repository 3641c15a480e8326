// The published builds, installed by `tofu init` from a filesystem mirror made here (offline):
// 0.1.27 offers both resources and applies against a listening Vigil, 0.1.26 offers svc_app only and
// a configuration using svc_sre_alert_webhook with it fails with a clear message. The schema that
// `tofu providers schema -json` shows is checked against the spec's attribute tables.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeOnOneEngine, listenOnLoopback } from "../../test/harness.ts";
import { publishToMirror } from "../scripts/mirror.ts";
import { createWorkspace, oneLine, providerBlock, type Workspace } from "./tofu.ts";

const mirror = mkdtempSync(join(tmpdir(), "svc-mirror-"));
const mirrorReady = publishToMirror(mirror);
afterAll(() => rmSync(mirror, { recursive: true, force: true }));

const WORKSPACE = "6f1c1f8e-8a57-4a39-9d7b-6f0d5d1f2a10";

// The spec's tables: type, mode and sensitivity of every attribute.
type Expected = { type: unknown; mode: "required" | "optional" | "computed"; sensitive?: boolean };
const str = "string";
const SVC_APP: Record<string, Expected> = {
  app_name: { type: str, mode: "required" },
  integrations: { type: ["list", str], mode: "optional" },
  attached_workflows: { type: ["list", str], mode: "optional" },
  workflow_assignments: { type: "nested list", mode: "optional" },
  bootstrap_discovery: { type: "bool", mode: "optional" },
  config: { type: ["map", str], mode: "optional" },
  discovery_poll_timeout_seconds: { type: "number", mode: "optional" },
  discovery_setup_wait_attempts: { type: "number", mode: "optional" },
  discovery_skip_if_exists: { type: "bool", mode: "optional" },
  enabled: { type: "bool", mode: "optional" },
  app_token: { type: str, mode: "computed", sensitive: true },
  app_version: { type: str, mode: "computed" },
  category: { type: str, mode: "computed" },
  configured: { type: "bool", mode: "computed" },
  description: { type: str, mode: "computed" },
  discovery_run_id: { type: str, mode: "computed" },
  discovery_run_status: { type: str, mode: "computed" },
  display_name: { type: str, mode: "computed" },
  id: { type: str, mode: "computed" },
  installed_at: { type: str, mode: "computed" },
  mcp_url: { type: str, mode: "computed" },
  remote_runners: { type: ["list", str], mode: "computed" },
  status: { type: str, mode: "computed" },
  updated_at: { type: str, mode: "computed" },
  workflow_purposes: { type: ["list", ["object", { purpose: str, workflow_name: str }]], mode: "computed" },
};
const WORKFLOW_ASSIGNMENT: Record<string, Expected> = {
  purpose: { type: str, mode: "required" },
  workflow_name: { type: str, mode: "required" },
  is_default: { type: "bool", mode: "optional" },
};
const SVC_SRE_ALERT_WEBHOOK: Record<string, Expected> = {
  source: { type: str, mode: "required" },
  app_name: { type: str, mode: "optional" },
  auto_investigate: { type: "bool", mode: "optional" },
  classify_mode: { type: str, mode: "optional" },
  classify_batch_window_seconds: { type: "number", mode: "optional" },
  classify_bucket_by: { type: str, mode: "optional" },
  classify_critical_bypass: { type: "bool", mode: "optional" },
  integration: { type: str, mode: "optional" },
  platform_webhook_id: { type: str, mode: "computed" },
  platform_webhook_url: { type: str, mode: "computed", sensitive: true },
  id: { type: str, mode: "computed" },
  trigger_url: { type: str, mode: "computed", sensitive: true },
};
/** Optional attributes that take a default when left out are shown as optional and computed. */
const WITH_DEFAULT = new Set([
  "app_name",
  "auto_investigate",
  "classify_mode",
  "classify_batch_window_seconds",
  "classify_bucket_by",
  "classify_critical_bypass",
  "integration",
]);

interface ShownAttribute {
  type?: unknown;
  nested_type?: { nesting_mode: string; attributes: Record<string, ShownAttribute> };
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  description?: string;
}

function expectMatchesTable(
  shown: Record<string, ShownAttribute>,
  table: Record<string, Expected>,
  defaults = new Set<string>(),
) {
  expect(Object.keys(shown).sort()).toEqual(Object.keys(table).sort());
  for (const [name, expected] of Object.entries(table)) {
    const attribute = shown[name] as ShownAttribute;
    const where = `attribute ${name}`;
    if (expected.type === "nested list") expect(attribute.nested_type?.nesting_mode, where).toBe("list");
    else expect(attribute.type, where).toEqual(expected.type);
    expect(Boolean(attribute.required), where).toBe(expected.mode === "required");
    expect(Boolean(attribute.optional), where).toBe(expected.mode === "optional");
    expect(Boolean(attribute.computed), where).toBe(expected.mode === "computed" || defaults.has(name));
    expect(Boolean(attribute.sensitive), where).toBe(expected.sensitive ?? false);
    expect(attribute.description, where).toBeTruthy();
  }
}

describe("provider versions from a filesystem mirror", () => {
  const workspaces: Workspace[] = [];
  afterAll(() => {
    for (const ws of workspaces) ws.remove();
  });
  const initialized = async (config: string) => {
    await mirrorReady;
    const ws = createWorkspace({ mirror });
    workspaces.push(ws);
    ws.write(config);
    await ws.ok("init", "-no-color");
    return ws;
  };

  it("rejects svc_sre_alert_webhook with version 0.1.26, which offers svc_app only", async () => {
    const ws = await initialized(`${providerBlock(WORKSPACE, "http://127.0.0.1:9", "0.1.26")}
resource "svc_sre_alert_webhook" "am" {
  source = "alertmanager"
}
`);
    const plan = await ws.plan();
    expect(plan.code).toBe(1);
    expect(oneLine(plan.stderr)).toContain(
      'The provider vigil/svc does not support resource type "svc_sre_alert_webhook"',
    );
    const schema = JSON.parse(await ws.ok("providers", "schema", "-json"));
    expect(Object.keys(schema.provider_schemas["registry.opentofu.org/vigil/svc"].resource_schemas)).toEqual([
      "svc_app",
    ]);
  });

  it("shows the spec's attributes, modes and sensitive values in `tofu providers schema -json` (0.1.27)", async () => {
    const ws = await initialized(providerBlock(WORKSPACE, "http://127.0.0.1:9", "0.1.27"));
    const schema = JSON.parse(await ws.ok("providers", "schema", "-json"));
    const provider = schema.provider_schemas["registry.opentofu.org/vigil/svc"];
    const app = provider.resource_schemas.svc_app.block.attributes;
    expectMatchesTable(app, SVC_APP);
    expectMatchesTable(app.workflow_assignments.nested_type.attributes, WORKFLOW_ASSIGNMENT);
    expectMatchesTable(
      provider.resource_schemas.svc_sre_alert_webhook.block.attributes,
      SVC_SRE_ALERT_WEBHOOK,
      WITH_DEFAULT,
    );
    expectMatchesTable(provider.provider.block.attributes, {
      workspace_id: { type: str, mode: "optional" },
      service_url: { type: str, mode: "optional" },
      api_key: { type: str, mode: "optional", sensitive: true },
    });
  });
});

describeOnOneEngine("the 0.1.27 build installed by tofu init", (harness) => {
  let ws: Workspace;
  afterAll(() => ws?.remove());
  beforeAll(async () => {
    await mirrorReady;
  });

  it("picks the newest published version for ~> 0.1.26 and applies svc_sre_alert_webhook", async () => {
    const h = harness();
    const base = await listenOnLoopback(h.vigil);
    const org = await h.createOrg("platform");
    const key = await h.createKey({ orgIds: [org] });
    ws = createWorkspace({ mirror, env: { SVC_API_KEY: key.key } });
    ws.write(`${providerBlock(org, base, "~> 0.1.26")}
resource "svc_sre_alert_webhook" "am" {
  source = "alertmanager"
}
`);
    const init = await ws.ok("init", "-no-color");
    expect(init).toContain("Installed vigil/svc v0.1.27");
    await ws.ok("apply", "-auto-approve", "-no-color");
    const { id } = (await ws.state())["svc_sre_alert_webhook.am"] as { id: string };
    const remote = await h.vigil.app.inject({
      url: `/app/sre/api/v1/alerts/webhook/${id}?orgId=${org}`,
      headers: key.auth,
    });
    expect(remote.statusCode).toBe(200);
    expect((await ws.plan()).code).toBe(0);
  });
});
