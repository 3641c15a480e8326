import { expect, it } from "vitest";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../../test/harness.ts";

const register = (h: Harness, auth: Auth, body: object, query = "") =>
  call(h, auth, "POST", `/platform/api/v1/agents${query}`, body);

async function createIntegration(h: Harness, auth: Auth, name: string, query = "") {
  const response = await call(h, auth, "POST", `/api/v1/integrations${query}`, { name, type: "grafana" });
  expect(response.statusCode).toBe(201);
}

const noIntegrations = (name: string) => ({
  errCode: "NO_INTEGRATIONS",
  msg: `agent ${name} has no integrations attached`,
  resolution_hint: `attach at least one integration: PUT /platform/api/v1/agents/${name} with integrations`,
});

const ownedUrl = async (h: Harness, owner: { auth: Auth }) => {
  const name = `agent-${Math.random().toString(36).slice(2, 8)}`;
  const response = await register(h, owner.auth, { name, kind: "llm" });
  expect(response.statusCode).toBe(201);
  return `/platform/api/v1/agents/${name}`;
};

describeEachEngine("agents", (harness) => {
  it("registers an agent with the defaults filled in, not ready without integrations", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const response = await register(h, auth, { name: "triage", kind: "llm" });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      name: "triage",
      description: "",
      kind: "llm",
      instructions: "",
      model: null,
      integrations: [],
      tools: [],
      inputs: [],
      max_steps: 8,
      ready: false,
      not_ready_reasons: [noIntegrations("triage")],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(response.json().created_at).toBe(response.json().updated_at);
  });

  it("registers a ready agent when it has an integration, and returns every field it was given", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createIntegration(h, auth, "prod-grafana");
    const body = {
      name: "collector",
      description: "gathers evidence",
      kind: "builtin",
      instructions: "look at the dashboards",
      model: "gpt-test",
      integrations: ["prod-grafana"],
      tools: ["http_request", "write_report"],
      inputs: [
        { name: "service", description: "affected service", required: true, pattern: "^[a-z-]+$" },
        { name: "window", default: "15m" },
      ],
      max_steps: 3,
    };
    const response = await register(h, auth, body);
    expect(response.statusCode).toBe(201);
    const created = response.json();
    expect(created).toEqual({
      ...body,
      inputs: [
        { name: "service", description: "affected service", required: true, pattern: "^[a-z-]+$" },
        { name: "window", default: "15m", required: false },
      ],
      ready: true,
      not_ready_reasons: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const read = await call(h, auth, "GET", "/platform/api/v1/agents/collector");
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
  });

  it("is not ready once every integration it names was deleted", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createIntegration(h, auth, "grafana-old");
    await createIntegration(h, auth, "grafana-spare");
    const registered = await register(h, auth, {
      name: "watcher",
      kind: "llm",
      integrations: ["grafana-old"],
    });
    expect(registered.json().ready, registered.body).toBe(true);
    const deleted = await call(h, auth, "DELETE", "/api/v1/integrations/grafana-old");
    expect(deleted.statusCode, deleted.body).toBe(204);
    const read = (await call(h, auth, "GET", "/platform/api/v1/agents/watcher")).json();
    expect(read).toMatchObject({
      ready: false,
      not_ready_reasons: [
        {
          errCode: "NO_INTEGRATIONS",
          msg: "agent watcher has no integrations attached that exist (grafana-old deleted)",
        },
      ],
    });
    const listed = (await call(h, auth, "GET", "/platform/api/v1/agents")).json();
    expect(listed.find((agent: { name: string }) => agent.name === "watcher").ready).toBe(false);
    // One existing integration among them is enough.
    const updated = await call(h, auth, "PUT", "/platform/api/v1/agents/watcher", {
      name: "watcher",
      kind: "llm",
      integrations: ["grafana-spare"],
    });
    expect(updated.json().ready).toBe(true);
  });

  it("answers 409 for a second agent of the same name in one tenant, not across tenants", async () => {
    const h = harness();
    const orgId = await h.createOrg("payments");
    const alice = await h.createKey({ orgIds: [orgId] });
    const bob = await h.createKey({ orgIds: [orgId] });
    expect((await register(h, alice.auth, { name: "dup", kind: "llm" })).statusCode).toBe(201);

    const second = await register(h, alice.auth, { name: "dup", kind: "builtin" });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({
      msg: "agent dup already exists",
      errCode: "CONFLICT",
      extras: [{ name: "dup" }],
    });
    const unchanged = await call(h, alice.auth, "GET", "/platform/api/v1/agents/dup");
    expect(unchanged.json().kind).toBe("llm");

    // The org namespace and another user's personal namespace are other tenants.
    expect((await register(h, alice.auth, { name: "dup", kind: "llm" }, `?orgId=${orgId}`)).statusCode).toBe(
      201,
    );
    expect((await register(h, bob.auth, { name: "dup", kind: "llm" })).statusCode).toBe(201);
    const inOrg = await register(h, bob.auth, { name: "dup", kind: "llm" }, `?orgId=${orgId}`);
    expect(inOrg.statusCode).toBe(409);
    expect(inOrg.json().errCode).toBe("CONFLICT");
  });

  it("answers 400 naming the integrations that do not exist in the tenant", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const { auth } = await h.createKey({ orgIds: [orgId] });
    await createIntegration(h, auth, "grafana-a");
    await createIntegration(h, auth, "grafana-org", `?orgId=${orgId}`);

    const response = await register(h, auth, {
      name: "collector",
      kind: "llm",
      integrations: ["grafana-a", "ghost", "grafana-org"],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      msg: "integrations: ghost, grafana-org not found in this tenant",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "integrations", missing: ["ghost", "grafana-org"] }],
    });

    // A personal integration does not exist in the org.
    const inOrg = await register(
      h,
      auth,
      { name: "collector", kind: "llm", integrations: ["grafana-a"] },
      `?orgId=${orgId}`,
    );
    expect(inOrg.statusCode).toBe(400);
    expect(inOrg.json().extras).toEqual([{ field: "integrations", missing: ["grafana-a"] }]);

    const list = await call(h, auth, "GET", "/platform/api/v1/agents");
    expect(list.json()).toEqual([]);
  });

  it("answers 400 for an unknown tool", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const response = await register(h, auth, { name: "a", kind: "llm", tools: ["http_request", "rm_rf"] });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      msg: "tools: unknown rm_rf; known: http_request, json_transform, write_report",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "tools" }],
    });
  });

  it("rejects invalid input with 400 naming the field", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const cases: [object, string][] = [
      [{ kind: "llm" }, "name"],
      [{ name: "Bad Name", kind: "llm" }, "name"],
      [{ name: "-leading", kind: "llm" }, "name"],
      [{ name: "ok" }, "kind"],
      [{ name: "ok", kind: "shell" }, "kind"],
      [{ name: "ok", kind: "llm", extra: 1 }, "extra"],
      [{ name: "ok", kind: "llm", description: 5 }, "description"],
      [{ name: "ok", kind: "llm", integrations: "grafana" }, "integrations"],
      [{ name: "ok", kind: "llm", tools: [1] }, "tools.0"],
      [{ name: "ok", kind: "llm", max_steps: "8" }, "max_steps"],
      [{ name: "ok", kind: "llm", max_steps: 0 }, "max_steps"],
      [{ name: "ok", kind: "llm", max_steps: 51 }, "max_steps"],
      [{ name: "ok", kind: "llm", max_steps: 2.5 }, "max_steps"],
      [{ name: "ok", kind: "llm", inputs: [{ name: "x" }, { name: "x" }] }, "inputs.1.name"],
      [{ name: "ok", kind: "llm", inputs: [{ name: "x", pattern: "([a-z" }] }, "inputs.0.pattern"],
      [
        { name: "ok", kind: "llm", inputs: [{ name: "x", pattern: "^\\d+$", default: "abc" }] },
        "inputs.0.default",
      ],
      [{ name: "ok", kind: "llm", inputs: [{ name: "1bad" }] }, "inputs.0.name"],
      [{ name: "ok", kind: "llm", inputs: [{ name: "x", secret: true }] }, "inputs.0.secret"],
    ];
    for (const [body, field] of cases) {
      const response = await register(h, auth, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json(), JSON.stringify(body)).toMatchObject({
        errCode: "VALIDATION_FAILED",
        extras: [expect.objectContaining({ field })],
      });
      expect(response.json().msg).toMatch(new RegExp(`^${field.replace(/\./g, "\\.")}: `));
    }
    const list = await call(h, auth, "GET", "/platform/api/v1/agents");
    expect(list.json()).toEqual([]);
  });

  it("replaces an agent on update", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createIntegration(h, auth, "grafana");
    const created = (
      await register(h, auth, {
        name: "collector",
        kind: "llm",
        description: "first",
        instructions: "be brief",
        integrations: ["grafana"],
        tools: ["json_transform"],
        max_steps: 4,
      })
    ).json();
    expect(created.ready).toBe(true);

    const updated = await call(h, auth, "PUT", "/platform/api/v1/agents/collector", {
      name: "collector",
      kind: "builtin",
      model: "small",
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toEqual({
      name: "collector",
      description: "",
      kind: "builtin",
      instructions: "",
      model: "small",
      integrations: [],
      tools: [],
      inputs: [],
      max_steps: 8,
      ready: false,
      not_ready_reasons: [noIntegrations("collector")],
      created_at: created.created_at,
      updated_at: expect.any(String),
    });
    expect(Date.parse(updated.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

    const read = await call(h, auth, "GET", "/platform/api/v1/agents/collector");
    expect(read.json()).toEqual(updated.json());

    const invalid = await call(h, auth, "PUT", "/platform/api/v1/agents/collector", {
      name: "collector",
      kind: "llm",
      integrations: ["ghost"],
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().extras).toEqual([{ field: "integrations", missing: ["ghost"] }]);
    expect((await call(h, auth, "GET", "/platform/api/v1/agents/collector")).json()).toEqual(updated.json());
  });

  it("answers 404 when updating an unknown agent, and 400 when the body renames it", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const unknown = await call(h, auth, "PUT", "/platform/api/v1/agents/ghost", {
      name: "ghost",
      kind: "llm",
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      msg: "agent not found",
      errCode: "NOT_FOUND",
      extras: [{ name: "ghost" }],
    });

    expect((await register(h, auth, { name: "first", kind: "llm" })).statusCode).toBe(201);
    const renamed = await call(h, auth, "PUT", "/platform/api/v1/agents/first", {
      name: "second",
      kind: "llm",
    });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json()).toEqual({
      msg: "name: must equal the agent name in the path",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "name" }],
    });
    const names = (await call(h, auth, "GET", "/platform/api/v1/agents"))
      .json()
      .map((a: { name: string }) => a.name);
    expect(names).toEqual(["first"]);

    const badBody = await call(h, auth, "PUT", "/platform/api/v1/agents/first", {
      name: "first",
      kind: "llm",
      max_steps: 99,
    });
    expect(badBody.statusCode).toBe(400);
    expect(badBody.json().extras).toEqual([expect.objectContaining({ field: "max_steps" })]);
  });

  it("gets, lists only the tenant's agents by name, and deletes", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const alice = await h.createKey({ orgIds: [orgId] });
    const bob = await h.createKey();
    for (const name of ["zeta", "alpha"]) {
      expect((await register(h, alice.auth, { name, kind: "llm" })).statusCode).toBe(201);
    }
    expect(
      (await register(h, alice.auth, { name: "org-agent", kind: "llm" }, `?orgId=${orgId}`)).statusCode,
    ).toBe(201);
    expect((await register(h, bob.auth, { name: "bobs", kind: "llm" })).statusCode).toBe(201);

    const list = await call(h, alice.auth, "GET", "/platform/api/v1/agents");
    expect(list.statusCode).toBe(200);
    const alpha = (await call(h, alice.auth, "GET", "/platform/api/v1/agents/alpha")).json();
    const zeta = (await call(h, alice.auth, "GET", "/platform/api/v1/agents/zeta")).json();
    expect(list.json()).toEqual([alpha, zeta]);
    expect(alpha).toMatchObject({ name: "alpha", kind: "llm", ready: false });

    const inOrg = await call(h, alice.auth, "GET", `/platform/api/v1/agents?orgId=${orgId}`);
    expect(inOrg.json().map((a: { name: string }) => a.name)).toEqual(["org-agent"]);
    const bobs = await call(h, bob.auth, "GET", "/platform/api/v1/agents");
    expect(bobs.json().map((a: { name: string }) => a.name)).toEqual(["bobs"]);

    const strangers = await call(h, bob.auth, "GET", "/platform/api/v1/agents/alpha");
    expect(strangers.statusCode).toBe(404);

    const removed = await call(h, alice.auth, "DELETE", "/platform/api/v1/agents/alpha");
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe("");
    const gone = await call(h, alice.auth, "GET", "/platform/api/v1/agents/alpha");
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({
      msg: "agent not found",
      errCode: "NOT_FOUND",
      extras: [{ name: "alpha" }],
    });
    const again = await call(h, alice.auth, "DELETE", "/platform/api/v1/agents/alpha");
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({
      msg: "agent not found",
      errCode: "NOT_FOUND",
      extras: [{ name: "alpha" }],
    });
    expect((await call(h, alice.auth, "GET", "/platform/api/v1/agents")).json()).toEqual([zeta]);

    // The name is free again.
    expect((await register(h, alice.auth, { name: "alpha", kind: "builtin" })).statusCode).toBe(201);
  });

  itEnforcesAuth(harness, {
    method: "POST",
    scope: "aios_automation_write",
    url: "/platform/api/v1/agents",
    body: { name: "matrix", kind: "llm" },
  });
  itEnforcesAuth(harness, { method: "GET", scope: "aios_automation_read", url: "/platform/api/v1/agents" });
  itEnforcesAuth(harness, {
    method: "GET",
    scope: "aios_automation_read",
    url: ownedUrl,
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "PUT",
    scope: "aios_automation_write",
    url: async (h, owner) => {
      expect((await register(h, owner.auth, { name: "matrix", kind: "llm" })).statusCode).toBe(201);
      return "/platform/api/v1/agents/matrix";
    },
    body: { name: "matrix", kind: "builtin" },
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "DELETE",
    scope: "aios_automation_write",
    url: ownedUrl,
    ownedResource: true,
  });
});
