// The svc_app resource's server side: catalog, PUT semantics, DELETE, the app token, purposes, and
// the tie between alert-ingest registrations and the app's config row.
import { expect, it } from "vitest";
import { amBody, deliver, registerAlerts, registerTrigger, triggerPathOf } from "../../test/alerts.ts";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { readFixture } from "../../test/fixtures.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../test/harness.ts";
import { SCOPES, type Scope } from "../core/auth/scopes.ts";
import { tenantOf } from "../core/auth/tenancy.ts";
import { workflowForPurpose } from "./index.ts";
import { appInstallations } from "./tables.ts";

const ALL_BUT = (...left: Scope[]) => SCOPES.filter((scope) => !left.includes(scope));

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

async function createIntegration(h: Harness, auth: Auth, name: string, type = "prometheus") {
  const response = await call(h, auth, "POST", "/api/v1/integrations", {
    name,
    type,
    url: "http://127.0.0.1:9",
  });
  expect(response.statusCode, response.body).toBe(201);
}

/** An approved workflow `name` of the caller's tenant. */
async function approvedWorkflow(h: Harness, auth: Auth, name: string, inputs: object[] = []) {
  const created = await call(h, auth, "POST", "/platform/api/v1/workflows", {
    name,
    inputs,
    stages: [{ id: "s", action_type: "json_transform", config: { expression: "input" } }],
  });
  expect(created.statusCode, created.body).toBe(201);
  const approved = await call(h, auth, "POST", `/platform/api/v1/workflows/${name}/versions/1/approve`);
  expect(approved.statusCode, approved.body).toBe(200);
}

const NOT_CONFIGURED_HINT =
  "configure the sre app for this workspace: PUT /api/v1/apps/sre (the provider's svc_app resource)";

const put = (h: Harness, auth: Auth, body: object) => call(h, auth, "PUT", "/api/v1/apps/sre", body);

const firing = amBody([
  {
    status: "firing",
    fingerprint: "f00d",
    startsAt: "2026-01-01T00:00:00Z",
    labels: { alertname: "Down", service: "api" },
  },
]);

describeEachEngine("apps: catalog and installations", (harness) => {
  it("carries an integration's rename to the app's bindings and to the agents that attach it, in the tenant only", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const stranger = await h.createKey();
    for (const who of [auth, stranger.auth]) {
      await createIntegration(h, who, "prom");
      await createIntegration(h, who, "logs");
      const agent = await call(h, who, "POST", "/platform/api/v1/agents", {
        name: "checker",
        kind: "builtin",
        integrations: ["logs", "prom"],
      });
      expect(agent.statusCode, agent.body).toBe(201);
    }
    expect((await put(h, auth, { integrations: ["prom", "logs"] })).statusCode).toBe(200);

    const renamed = await call(h, auth, "PUT", "/api/v1/integrations/prom", {
      name: "prometheus-prod",
      type: "prometheus",
      url: "http://127.0.0.1:9",
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json().integrations).toEqual([
      "prometheus-prod",
      "logs",
    ]);
    expect((await call(h, auth, "GET", "/platform/api/v1/agents/checker")).json()).toMatchObject({
      integrations: ["logs", "prometheus-prod"],
      ready: true,
    });
    // Another tenant's integration of the old name is another integration: its agent is untouched.
    expect(
      (await call(h, stranger.auth, "GET", "/platform/api/v1/agents/checker")).json().integrations,
    ).toEqual(["logs", "prom"]);
    // A rename to a taken name changes nothing anywhere.
    const taken = await call(h, auth, "PUT", "/api/v1/integrations/logs", {
      name: "prometheus-prod",
      type: "prometheus",
      url: "http://127.0.0.1:9",
    });
    expect(taken.statusCode).toBe(409);
    expect((await call(h, auth, "GET", "/platform/api/v1/agents/checker")).json().integrations).toEqual([
      "logs",
      "prometheus-prod",
    ]);
  });

  it("lists the catalog with the sre app not installed, and 404 for an unknown app", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const list = await call(h, auth, "GET", "/api/v1/apps");
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([
      {
        app_name: "sre",
        id: "",
        configured: false,
        status: "not_installed",
        installed_at: "",
        updated_at: "",
        app_version: "0.1.0",
        category: "Operations",
        description: expect.stringContaining("Alert ingest"),
        display_name: "SRE",
        mcp_url: `${h.vigil.services.config.publicUrl}/app/sre/mcp`,
        remote_runners: [],
        workflow_purposes: [
          { purpose: "alert_triage", workflow_name: "sre-alert-triage" },
          { purpose: "alert_investigation", workflow_name: "sre-alert-investigation" },
        ],
        integrations: [],
        attached_workflows: [],
        workflow_assignments: [],
        config: {},
        enabled: false,
      },
    ]);
    const one = await call(h, auth, "GET", "/api/v1/apps/sre");
    expect(one.json()).toEqual(list.json()[0]);
    const unknown = await call(h, auth, "GET", "/api/v1/apps/nope");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      error: "app not found",
      code: "NOT_FOUND",
      details: { app_name: "nope" },
    });
    expect((await put(h, auth, {})).statusCode).toBe(200);
    expect((await call(h, auth, "PUT", "/api/v1/apps/nope", {})).statusCode).toBe(404);
    expect((await call(h, auth, "DELETE", "/api/v1/apps/nope")).statusCode).toBe(404);
  });

  it("installs on the first PUT with every computed attribute, provisions the purpose workflows, and a second PUT changes nothing", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const { auth } = await h.createKey({ orgIds: [orgId] });
    const q = `?orgId=${orgId}`;
    await createIntegration(h, auth, "prom", "prometheus");
    await h.vigil.app.inject({
      method: "POST",
      url: `/api/v1/integrations${q}`,
      headers: auth,
      payload: { name: "prom", type: "prometheus" },
    });
    const body = { integrations: ["prom"], config: { team: "sre", region: "eu" }, enabled: true };
    const first = await call(h, auth, "PUT", `/api/v1/apps/sre${q}`, body);
    expect(first.statusCode, first.body).toBe(200);
    const installed = first.json();
    expect(installed).toEqual({
      app_name: "sre",
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      configured: true,
      status: "active",
      installed_at: expect.any(String),
      updated_at: installed.installed_at,
      app_version: "0.1.0",
      category: "Operations",
      description: expect.any(String),
      display_name: "SRE",
      mcp_url: `${h.vigil.services.config.publicUrl}/app/sre/mcp?orgId=${orgId}`,
      remote_runners: [],
      workflow_purposes: [
        { purpose: "alert_triage", workflow_name: "sre-alert-triage" },
        { purpose: "alert_investigation", workflow_name: "sre-alert-investigation" },
      ],
      integrations: ["prom"],
      attached_workflows: [],
      workflow_assignments: [],
      config: { team: "sre", region: "eu" },
      enabled: true,
      app_token: expect.stringMatching(/^vga_[A-Za-z0-9_-]{43}$/),
    });
    for (const name of ["sre-alert-triage", "sre-alert-investigation"]) {
      const workflow = await call(h, auth, "GET", `/platform/api/v1/workflows/${name}${q}`);
      expect(workflow.statusCode, name).toBe(200);
      expect(workflow.json()).toMatchObject({ approved_version: 1, ready: true });
    }
    // The whole resource as the body: app_name may come along when it is the path's.
    const again = await call(h, auth, "PUT", `/api/v1/apps/sre${q}`, {
      ...body,
      app_name: "sre",
      config: { region: "eu", team: "sre" },
    });
    expect(again.json()).toEqual(installed);
    // Omitted fields are left alone.
    const empty = await call(h, auth, "PUT", `/api/v1/apps/sre${q}`, {});
    expect(empty.json()).toEqual(installed);
    const read = await call(h, auth, "GET", `/api/v1/apps/sre${q}`);
    expect(read.json()).toEqual(installed);
    // Not in the personal namespace.
    expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json()).toMatchObject({ configured: false });
  });

  it("replaces integrations and config, clears assignments with [], leaves omitted ones, and manages enabled only when given", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createIntegration(h, auth, "prom");
    await createIntegration(h, auth, "am", "alertmanager");
    await approvedWorkflow(h, auth, "deep-dive");
    await approvedWorkflow(h, auth, "quick-look");
    const assignments = [
      { purpose: "alert_investigation", workflow_name: "deep-dive", is_default: true },
      { purpose: "alert_investigation", workflow_name: "quick-look" },
    ];
    const first = await put(h, auth, {
      integrations: ["prom", "am"],
      attached_workflows: ["quick-look"],
      workflow_assignments: assignments,
      config: { a: "1" },
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      integrations: ["prom", "am"],
      attached_workflows: ["quick-look"],
      workflow_assignments: [assignments[0], { ...assignments[1], is_default: false }],
      config: { a: "1" },
      enabled: true,
    });
    const tenant = tenantOf({
      userId: (await userOf(h, auth)) as string,
      keyId: "",
      scopes: [],
      orgId: null,
    });
    const db = h.vigil.services.database.db;
    expect(await workflowForPurpose(db, { tenant, purpose: "alert_investigation" })).toEqual({
      workflowName: "deep-dive",
      via: "assigned_default",
    });
    expect(
      await workflowForPurpose(db, { tenant, purpose: "alert_investigation", workflowName: "quick-look" }),
    ).toEqual({
      workflowName: "quick-look",
      via: "named",
    });
    expect(
      await workflowForPurpose(db, { tenant, purpose: "alert_investigation", workflowName: "unassigned" }),
    ).toBeNull();
    expect(await workflowForPurpose(db, { tenant, purpose: "alert_triage" })).toEqual({
      workflowName: "sre-alert-triage",
      via: "app_default",
    });

    await new Promise((resolve) => setTimeout(resolve, 5)); // updated_at must be able to move
    const second = await put(h, auth, {
      integrations: ["am"],
      workflow_assignments: [],
      config: { b: "2" },
      enabled: false,
    });
    expect(second.json()).toMatchObject({
      integrations: ["am"],
      attached_workflows: ["quick-look"],
      workflow_assignments: [],
      config: { b: "2" },
      enabled: false,
      status: "disabled",
    });
    expect(second.json().updated_at).not.toBe(first.json().updated_at);
    expect(await workflowForPurpose(db, { tenant, purpose: "alert_investigation" })).toEqual({
      workflowName: "sre-alert-investigation",
      via: "app_default",
    });
    const third = await put(h, auth, { attached_workflows: [] });
    expect(third.json()).toMatchObject({
      integrations: ["am"],
      attached_workflows: [],
      enabled: false,
      config: { b: "2" },
    });
  });

  it("answers 400 naming the bad item and changes nothing", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createIntegration(h, auth, "prom");
    await approvedWorkflow(h, auth, "ok-flow");
    await approvedWorkflow(h, auth, "ticket-flow", [
      { name: "alert_id", required: true },
      { name: "ticket", required: true },
      { name: "note", required: false },
    ]);
    const draft = await call(h, auth, "POST", "/platform/api/v1/workflows", {
      name: "draft-flow",
      stages: [{ id: "s", action_type: "json_transform", config: { expression: "input" } }],
    });
    expect(draft.statusCode).toBe(201);
    const cases: [object, string, string][] = [
      [
        { integrations: ["prom", "ghost"] },
        "integrations.1",
        "integrations.1: integration ghost does not exist",
      ],
      [
        { attached_workflows: ["nope"] },
        "attached_workflows.0",
        "attached_workflows.0: workflow nope does not exist",
      ],
      [
        { workflow_assignments: [{ purpose: "alert_paging", workflow_name: "ok-flow" }] },
        "workflow_assignments.0.purpose",
        "workflow_assignments.0.purpose: alert_paging is not a purpose of app sre (one of alert_triage, alert_investigation)",
      ],
      [
        { workflow_assignments: [{ purpose: "alert_triage", workflow_name: "draft-flow" }] },
        "workflow_assignments.0.workflow_name",
        "workflow_assignments.0.workflow_name: workflow draft-flow does not exist or has no approved version",
      ],
      [
        {
          workflow_assignments: [
            { purpose: "alert_triage", workflow_name: "ok-flow", is_default: true },
            { purpose: "alert_triage", workflow_name: "sre-alert-triage", is_default: true },
          ],
        },
        "workflow_assignments.1.is_default",
        "workflow_assignments.1.is_default: purpose alert_triage has more than one default workflow",
      ],
      [
        { workflow_assignments: [{ purpose: "alert_investigation", workflow_name: "ticket-flow" }] },
        "workflow_assignments.0.workflow_name",
        "workflow_assignments.0.workflow_name: workflow ticket-flow requires ticket, which alert_investigation does not give (it gives investigation_id, alert_id)",
      ],
      [{ integrations: "prom" }, "integrations", "integrations: must be array"],
      [{ config: { k: 1 } }, "config.k", "config.k: must be string"],
      [{ config: { "": "x" } }, "config.", "config.: is not an allowed key: a key holds 1 to 128 characters"],
      [
        { config: { ["k".repeat(129)]: "x" } },
        `config.${"k".repeat(129)}`,
        `config.${"k".repeat(129)}: is not an allowed key: a key holds 1 to 128 characters`,
      ],
      [{ enabled: true, surprise: 1 }, "surprise", "surprise: is not a known field"],
      [{ app_name: "other" }, "app_name", 'app_name: must be "sre", the app of the path'],
      [
        { workflow_assignments: [{ purpose: "alert_triage" }] },
        "workflow_assignments.0.workflow_name",
        "workflow_assignments.0.workflow_name: is required",
      ],
    ];
    // The default workflows exist from the first (valid) install below, so sre-alert-triage is approved.
    expect((await put(h, auth, {})).statusCode).toBe(200);
    const before = (await call(h, auth, "GET", "/api/v1/apps/sre")).json();
    for (const [body, field, error] of cases) {
      const response = await put(h, auth, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json(), JSON.stringify(body)).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { field },
      });
      expect(response.json().error).toBe(error);
    }
    expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json()).toEqual(before);
  });

  it("brings an app token issued with an earlier scope set to the tools' scopes (its migration)", async () => {
    const h = harness();
    const admin = await h.createKey();
    const installed = (await put(h, admin.auth, {})).json();
    const { sql } = await import("drizzle-orm");
    const db = h.vigil.services.database.db;
    const scopesOf = async () =>
      (
        await db.execute(
          sql`select k.scopes from api_keys k join app_installations i on i.app_token_key_id = k.id where i.id = ${installed.id}`,
        )
      ).rows[0]?.scopes;
    const issued = await scopesOf();
    await db.execute(sql`update api_keys set scopes = array['sre_alerts_read', 'apps_read']::text[]
      where id = (select app_token_key_id from app_installations where id = ${installed.id})`);
    const { readdirSync, readFileSync } = await import("node:fs");
    const migrations = new URL("../core/migrations/", import.meta.url);
    const file = readdirSync(migrations).find((name) => name.endsWith("_app_token_scopes.sql"));
    await db.execute(sql.raw(readFileSync(new URL(String(file), migrations), "utf8")));
    expect(await scopesOf()).toEqual(issued);
    expect(issued).toContain("aios_automation_write");
  });

  it("an org app's token acts in the org only, not in its installing user's personal namespace (also for tokens issued before)", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const admin = await h.createKey({ orgIds: [orgId] });
    // The installing user's own alert, in the personal namespace.
    const personal = await registerTrigger(h, admin.auth, { source: "alertmanager", integration: "own" });
    expect((await deliver(h, personal, firing)).statusCode).toBe(202);
    const installed = (await call(h, admin.auth, "PUT", `/api/v1/apps/sre?orgId=${orgId}`, {})).json();
    const tokenAuth = { authorization: `Bearer ${installed.app_token}` };
    const inOrg = await call(h, tokenAuth, "GET", `/app/sre/api/v1/alerts?orgId=${orgId}`);
    expect(inOrg.statusCode, inOrg.body).toBe(200);
    const refusedPaths = ["/app/sre/api/v1/alerts", "/platform/api/v1/sessions", "/app/sre/mcp"];
    const expectRefused = async () => {
      for (const path of refusedPaths) {
        const response = await call(h, tokenAuth, path.endsWith("mcp") ? "POST" : "GET", path, {});
        expect(response.statusCode, path).toBe(403);
        // The platform area answers its own error shape (JsonError), the others ErrorResponse.
        expect(response.body, path).toMatch(/"INSUFFICIENT_SCOPE".*"field":"orgId"/);
      }
    };
    await expectRefused();
    // Who it is needs no namespace: GET /api/v1/me names the token and its org (the console's sign-in).
    const me = await call(h, tokenAuth, "GET", "/api/v1/me");
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ key_name: "app token: sre", orgs: [{ id: orgId, name: "org" }] });
    // A personal installation's token keeps its personal namespace.
    const own = (await put(h, admin.auth, {})).json();
    const ownAuth = { authorization: `Bearer ${own.app_token}` };
    const ownList = await call(h, ownAuth, "GET", "/app/sre/api/v1/alerts");
    expect(ownList.statusCode, ownList.body).toBe(200);
    expect(ownList.json().alerts).toHaveLength(1);
    // A token issued before the rule: the migration limits it.
    const { sql } = await import("drizzle-orm");
    const db = h.vigil.services.database.db;
    await db.execute(sql`update api_keys set personal_namespace = true`);
    expect((await call(h, tokenAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);
    const { readdirSync, readFileSync } = await import("node:fs");
    const migrations = new URL("../core/migrations/", import.meta.url);
    const file = readdirSync(migrations).find((name) => name.endsWith("_api_keys_personal_namespace.sql"));
    const [, update] = readFileSync(new URL(String(file), migrations), "utf8").split(
      "--> statement-breakpoint",
    );
    await db.execute(sql.raw(String(update)));
    await expectRefused();
    expect((await call(h, ownAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);
    expect((await call(h, admin.auth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);
  });

  it("shows the app token only to apps_write callers; the token has the app's scopes only; rotation and DELETE end it", async () => {
    const h = harness();
    const admin = await h.createKey();
    const reader = await h.createKey({ scopes: ["apps_read"], userName: undefined });
    const installed = (await put(h, admin.auth, {})).json();
    const token = installed.app_token as string;
    const tokenAuth = { authorization: `Bearer ${token}` };
    // The reader is another user: its personal namespace has no installation, and no token either way.
    expect((await call(h, reader.auth, "GET", "/api/v1/apps/sre")).json()).not.toHaveProperty("app_token");
    // Works where the app's tools need it (alerts, investigations, runs), not beyond.
    expect((await call(h, tokenAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);
    expect((await call(h, tokenAuth, "GET", "/api/v1/apps/sre")).statusCode).toBe(403);
    expect((await call(h, tokenAuth, "GET", "/api/v1/integrations")).statusCode).toBe(403);
    expect((await put(h, tokenAuth, {})).statusCode).toBe(403);
    expect((await call(h, tokenAuth, "POST", "/api/v1/keys", {})).statusCode).toBe(403);
    // Sealed at rest.
    const { rows } = await h.vigil.services.database.db.execute(
      (await import("drizzle-orm"))
        .sql`select app_token_sealed from app_installations where id = ${installed.id}`,
    );
    const sealed = String(rows[0]?.app_token_sealed);
    expect(sealed).not.toContain(token);
    expect(h.vigil.services.secrets.decrypt(sealed)).toBe(token);

    const rotated = await call(h, admin.auth, "POST", "/api/v1/apps/sre/token/rotate");
    expect(rotated.statusCode).toBe(200);
    const next = rotated.json().app_token as string;
    expect(next).not.toBe(token);
    expect(rotated.json()).toEqual({ ...installed, app_token: next });
    expect((await call(h, tokenAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(401);
    const nextAuth = { authorization: `Bearer ${next}` };
    expect((await call(h, nextAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);

    // Revoked among the keys, it is no longer shown as the app's credential; a rotation issues another.
    const keys = (await call(h, admin.auth, "GET", "/api/v1/keys")).json() as {
      id: string;
      name: string;
      revoked_at: string | null;
    }[];
    const appKey = keys.find((key) => key.name === "app token: sre" && key.revoked_at === null);
    expect((await call(h, admin.auth, "POST", `/api/v1/keys/${appKey?.id}/revoke`)).statusCode).toBe(200);
    expect((await call(h, nextAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(401);
    const afterRevoke = (await call(h, admin.auth, "GET", "/api/v1/apps/sre")).json();
    expect(afterRevoke).toMatchObject({ configured: true, status: "active" });
    expect(afterRevoke).not.toHaveProperty("app_token");
    const reissued = (await call(h, admin.auth, "POST", "/api/v1/apps/sre/token/rotate")).json();
    expect(reissued.app_token).toMatch(/^vga_/);
    const reissuedAuth = { authorization: `Bearer ${reissued.app_token}` };
    expect((await call(h, reissuedAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(200);

    expect((await call(h, admin.auth, "DELETE", "/api/v1/apps/sre")).statusCode).toBe(204);
    expect((await call(h, admin.auth, "DELETE", "/api/v1/apps/sre")).statusCode).toBe(204);
    expect((await call(h, reissuedAuth, "GET", "/app/sre/api/v1/alerts")).statusCode).toBe(401);
    expect((await call(h, admin.auth, "GET", "/api/v1/apps/sre")).json()).toMatchObject({
      configured: false,
      id: "",
      status: "not_installed",
      integrations: [],
      config: {},
    });
    expect((await call(h, admin.auth, "POST", "/api/v1/apps/sre/token/rotate")).statusCode).toBe(404);
  });

  it("shows and rotates the app token only for a key holding every scope of the token: null and 403 otherwise", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const q = `?orgId=${orgId}`;
    const admin = await h.createKey({ orgIds: [orgId] });
    // apps_write without one of the token's scopes, and a reader: the same org, other users.
    const writer = await h.createKey({ orgIds: [orgId], scopes: ALL_BUT("aios_automation_write") });
    const reader = await h.createKey({ orgIds: [orgId], scopes: ["apps_read"] });

    const put = await call(h, writer.auth, "PUT", `/api/v1/apps/sre${q}`, { config: { team: "sre" } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ configured: true, config: { team: "sre" }, app_token: null });
    const shown = (await call(h, admin.auth, "GET", `/api/v1/apps/sre${q}`)).json();
    expect(shown.app_token).toMatch(/^vga_/);
    for (const caller of [writer, reader]) {
      const read = await call(h, caller.auth, "GET", `/api/v1/apps/sre${q}`);
      expect(read.json()).toEqual({ ...shown, app_token: null });
      expect((await call(h, caller.auth, "GET", `/api/v1/apps${q}`)).json()).toEqual([
        { ...shown, app_token: null },
      ]);
    }

    const rotated = await call(h, writer.auth, "POST", `/api/v1/apps/sre/token/rotate${q}`);
    expect(rotated.statusCode).toBe(403);
    expect(rotated.json()).toEqual({
      error:
        "this API key lacks the scope aios_automation_write, which the app token holds: only a key holding all of the token's scopes may rotate it",
      code: "INSUFFICIENT_SCOPE",
      details: { scope: "aios_automation_write" },
    });
    // Nothing was rotated: the token works and is the one shown.
    const tokenAuth = { authorization: `Bearer ${shown.app_token}` };
    expect((await call(h, tokenAuth, "GET", `/app/sre/api/v1/alerts${q}`)).statusCode).toBe(200);
    expect((await call(h, admin.auth, "GET", `/api/v1/apps/sre${q}`)).json()).toEqual(shown);
    // Refused before the installation is looked for: a workspace without one answers the same 403.
    const elsewhere = await call(h, writer.auth, "POST", "/api/v1/apps/sre/token/rotate");
    expect(elsewhere.statusCode).toBe(403);
    expect((await call(h, admin.auth, "POST", `/api/v1/apps/sre/token/rotate${q}`)).statusCode).toBe(200);
  });

  it("takes an install another instance committed at the next delivery, after refusing one", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const { auth } = await h.createKey({ orgIds: [orgId] });
    const q = `?orgId=${orgId}`;
    const registration = await registerAlerts(h, auth, { source: "alertmanager", integration: "prod" }, q);
    expect((await call(h, auth, "DELETE", `/api/v1/apps/sre${q}`)).statusCode).toBe(204);
    expect((await deliver(h, triggerPathOf(registration), firing)).statusCode).toBe(423);
    // Another instance's install: its row committed, this instance's cache told nothing.
    const now = new Date();
    const ownerId = await userOf(h, auth);
    await h.vigil.services.database.transaction(async (tx) => {
      await tx.insert(appInstallations).values({
        id: crypto.randomUUID(),
        orgId,
        ownerId,
        appName: "sre",
        enabled: true,
        integrations: [],
        attachedWorkflows: [],
        workflowAssignments: [],
        config: {},
        installedAt: now,
        updatedAt: now,
      });
    });
    const accepted = await deliver(h, triggerPathOf(registration), firing);
    expect(accepted.statusCode, accepted.body).toBe(202);
  });

  it("a registration configures the app; without the config row ingest is refused with 423 (target not ready), recorded; by-source reads the import id", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json()).toMatchObject({ configured: false });
    const registration = await registerAlerts(h, auth, { source: "alertmanager", integration: "prod" });
    expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json()).toMatchObject({
      configured: true,
      status: "active",
    });
    const accepted = await deliver(h, triggerPathOf(registration), firing);
    expect(accepted.statusCode, accepted.body).toBe(202);

    expect((await call(h, auth, "DELETE", "/api/v1/apps/sre")).statusCode).toBe(204);
    const refused = await deliver(h, triggerPathOf(registration), firing);
    expect(refused.statusCode).toBe(423);
    expect(refused.json()).toEqual({
      msg: "the sre app is not configured for this workspace: configure it with PUT /api/v1/apps/sre",
      errCode: "APP_NOT_CONFIGURED",
      extras: [
        {
          webhook_id: registration.id,
          invocation_id: expect.any(String),
          target_type: "alert_ingest",
          target_name: "sre/alertmanager/prod",
          unbound_stage_id: null,
          total_stages: 0,
          resolution_hint: NOT_CONFIGURED_HINT,
        },
      ],
    });
    const run = await call(
      h,
      auth,
      "GET",
      `/platform/api/v1/webhooks/${registration.id}/runs/${refused.json().extras[0].invocation_id}`,
    );
    expect(run.statusCode).toBe(200);
    expect(run.json()).toMatchObject({
      status: "failed",
      error: "the sre app is not configured for this workspace: configure it with PUT /api/v1/apps/sre",
      outcome: { ...refused.json(), msg: run.json().error },
    });

    expect((await put(h, auth, {})).statusCode).toBe(200);
    expect((await deliver(h, triggerPathOf(registration), firing)).statusCode).toBe(202);

    const bySource = await call(
      h,
      auth,
      "GET",
      "/app/sre/api/v1/alerts/webhook/by-source/alertmanager?integration=prod",
    );
    expect(bySource.statusCode, bySource.body).toBe(200);
    expect(bySource.json()).toEqual(
      (await call(h, auth, "GET", `/app/sre/api/v1/alerts/webhook/${registration.id}`)).json(),
    );
    const defaultIntegration = await registerAlerts(h, auth, { source: "grafana" });
    const byDefault = await call(h, auth, "GET", "/app/sre/api/v1/alerts/webhook/by-source/grafana");
    expect(byDefault.json()).toMatchObject({ id: defaultIntegration.id, integration: "" });
    const none = await call(
      h,
      auth,
      "GET",
      "/app/sre/api/v1/alerts/webhook/by-source/grafana?integration=other",
    );
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({
      error: "alert webhook not found",
      code: "NOT_FOUND",
      details: { app_name: "sre", source: "grafana", integration: "other" },
    });
    const badSource = await call(h, auth, "GET", "/app/sre/api/v1/alerts/webhook/by-source/nagios");
    expect(badSource.statusCode).toBe(400);
    expect(badSource.json()).toMatchObject({ details: { field: "source" } });
  });

  it("a delivery refused for the app's missing configuration answers and records the whole readiness extras entry", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const registration = await registerAlerts(h, auth, { source: "grafana" });
    expect((await call(h, auth, "DELETE", "/api/v1/apps/sre")).statusCode).toBe(204);

    const body = readFixture("grafana", "docs-firing-2-alerts.json");
    const refused = await deliver(h, triggerPathOf(registration), body);
    expect(refused.statusCode, refused.body).toBe(423);
    const invocationId = refused.json().extras[0]?.invocation_id;
    const extras = {
      webhook_id: registration.id,
      invocation_id: invocationId,
      target_type: "alert_ingest",
      target_name: "sre/grafana/",
      unbound_stage_id: null,
      total_stages: 0,
      resolution_hint: NOT_CONFIGURED_HINT,
    };
    const error = "the sre app is not configured for this workspace: configure it with PUT /api/v1/apps/sre";
    expect(refused.json()).toEqual({ msg: error, errCode: "APP_NOT_CONFIGURED", extras: [extras] });

    const run = await call(
      h,
      auth,
      "GET",
      `/platform/api/v1/webhooks/${registration.id}/runs/${invocationId}`,
    );
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toEqual({
      invocation_id: invocationId,
      webhook_id: registration.id,
      target_type: "alert_ingest",
      target_name: "sre/grafana/",
      status: "failed",
      received_at: expect.any(String),
      finished_at: expect.any(String),
      content_type: "application/json",
      payload_bytes: Buffer.byteLength(body),
      error,
      note: null,
      session_id: null,
      trace_id: null,
      run_id: null,
      outcome: { msg: error, errCode: "APP_NOT_CONFIGURED", extras: [extras] },
      headers: expect.objectContaining({ "content-type": "application/json" }),
      payload: body,
      payload_encoding: "utf8",
    });
    const runs = await call(h, auth, "GET", `/platform/api/v1/webhooks/${registration.id}/runs`);
    expect(runs.json().runs).toEqual([
      expect.objectContaining({ invocation_id: invocationId, status: "failed", outcome: run.json().outcome }),
    ]);
    // Nothing of the refused delivery was ingested.
    expect((await call(h, auth, "GET", "/app/sre/api/v1/alerts")).json().total).toBe(0);

    // The hint's call makes deliveries flow again.
    expect((await put(h, auth, {})).statusCode).toBe(200);
    expect((await deliver(h, triggerPathOf(registration), body)).statusCode).toBe(202);
  });

  itEnforcesAuth(harness, { method: "GET", scope: "apps_read", url: "/api/v1/apps" });
  itEnforcesAuth(harness, { method: "GET", scope: "apps_read", url: "/api/v1/apps/sre" });
  itEnforcesAuth(harness, { method: "PUT", scope: "apps_write", url: "/api/v1/apps/sre", body: {} });
  itEnforcesAuth(harness, { method: "DELETE", scope: "apps_write", url: "/api/v1/apps/sre" });
  itEnforcesAuth(harness, { method: "POST", scope: "apps_write", url: "/api/v1/apps/sre/token/rotate" });
  itEnforcesAuth(harness, { method: "GET", scope: "apps_read", url: "/api/setup" });
  itEnforcesAuth(harness, {
    method: "GET",
    scope: "sre_alerts_read",
    url: async (h, owner) => {
      const source = "datadog";
      await registerAlerts(h, owner.auth, { source, integration: unique("i") });
      return `/app/sre/api/v1/alerts/webhook/by-source/${source}`;
    },
  });
});

// The clock Vigil reads, moved by the test: a binding's updated_at is compared without waiting.
const clock = { now: Date.parse("2026-03-01T12:00:00.000Z") };
const stamp = () => new Date(clock.now).toISOString();

describeEachEngine(
  "apps: deletes carried into the bindings",
  (harness) => {
    it("takes a deleted integration or workflow out of the tenant's bindings in the delete, and keeps it out", async () => {
      const h = harness();
      const orgId = await h.createOrg();
      const { auth } = await h.createKey({ orgIds: [orgId] });
      const q = `?orgId=${orgId}`;
      const app = `/api/v1/apps/sre${q}`;
      // The same names in the caller's personal namespace: another tenant, its binding untouched.
      const body = {
        integrations: ["prom", "am"],
        attached_workflows: ["extra", "deep"],
        workflow_assignments: [{ purpose: "alert_investigation", workflow_name: "deep", is_default: true }],
      };
      for (const at of [q, ""]) {
        for (const name of ["prom", "am"]) {
          const made = await call(h, auth, "POST", `/api/v1/integrations${at}`, { name, type: "prometheus" });
          expect(made.statusCode, made.body).toBe(201);
        }
        for (const name of ["extra", "deep"]) {
          const made = await call(h, auth, "POST", `/platform/api/v1/workflows${at}`, {
            name,
            stages: [{ id: "s", action_type: "json_transform", config: { expression: "input" } }],
          });
          expect(made.statusCode, made.body).toBe(201);
          const approve = `/platform/api/v1/workflows/${name}/versions/1/approve${at}`;
          expect((await call(h, auth, "POST", approve)).statusCode).toBe(200);
        }
        const bound = await call(h, auth, "PUT", `/api/v1/apps/sre${at}`, body);
        expect(bound.statusCode, bound.body).toBe(200);
      }
      const personal = (await call(h, auth, "GET", "/api/v1/apps/sre")).json();
      const installed = (await call(h, auth, "GET", app)).json();
      const org = { orgId, ownerId: "" };
      const investigation = () =>
        workflowForPurpose(h.vigil.services.database.db, { tenant: org, purpose: "alert_investigation" });
      expect(await investigation()).toEqual({ workflowName: "deep", via: "assigned_default" });

      clock.now += 60_000;
      const removed = await call(h, auth, "DELETE", `/api/v1/integrations/am${q}`);
      expect(removed.statusCode).toBe(204);
      const withoutAm = (await call(h, auth, "GET", app)).json();
      expect(withoutAm).toEqual({ ...installed, integrations: ["prom"], updated_at: stamp() });
      // The binding as read is a valid write, and changes nothing.
      const { integrations, attached_workflows, workflow_assignments, config, enabled } = withoutAm;
      const rewritten = await call(h, auth, "PUT", app, {
        integrations,
        attached_workflows,
        workflow_assignments,
        config,
        enabled,
      });
      expect(rewritten.statusCode, rewritten.body).toBe(200);
      expect(rewritten.json()).toEqual(withoutAm);
      // A new integration of the deleted one's name is not bound by the old binding.
      const again = await call(h, auth, "POST", `/api/v1/integrations${q}`, {
        name: "am",
        type: "prometheus",
      });
      expect(again.statusCode).toBe(201);
      expect((await call(h, auth, "GET", app)).json().integrations).toEqual(["prom"]);

      clock.now += 60_000;
      expect((await call(h, auth, "DELETE", `/platform/api/v1/workflows/deep${q}`)).statusCode).toBe(204);
      expect((await call(h, auth, "GET", app)).json()).toEqual({
        ...withoutAm,
        attached_workflows: ["extra"],
        workflow_assignments: [],
        updated_at: stamp(),
      });
      // Investigations run the app's own workflow again, as the binding says.
      expect(await investigation()).toEqual({ workflowName: "sre-alert-investigation", via: "app_default" });

      clock.now += 60_000;
      expect((await call(h, auth, "DELETE", `/platform/api/v1/workflows/extra${q}`)).statusCode).toBe(204);
      expect((await call(h, auth, "GET", app)).json()).toMatchObject({
        attached_workflows: [],
        updated_at: stamp(),
      });
      expect((await call(h, auth, "GET", "/api/v1/apps/sre")).json()).toEqual(personal);
    });
  },
  {},
  { now: () => new Date(clock.now) },
);

async function userOf(h: Harness, auth: Auth): Promise<string> {
  const keys = await call(h, auth, "GET", "/api/v1/keys");
  const { rows } = await h.vigil.services.database.db.execute(
    (await import("drizzle-orm")).sql`select user_id from api_keys where id = ${keys.json()[0].id}`,
  );
  return String(rows[0]?.user_id);
}
