import { expect, it } from "vitest";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { createApprovedWorkflow, registerAgent } from "../../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../../test/harness.ts";

const BASE = "/platform/api/v1/workflows";

const create = (h: Harness, auth: Auth, body: object, query = "") =>
  call(h, auth, "POST", `${BASE}${query}`, body);
const get = (h: Harness, auth: Auth, name: string, query = "") =>
  call(h, auth, "GET", `${BASE}/${name}${query}`);
const newVersion = (h: Harness, auth: Auth, name: string) =>
  call(h, auth, "POST", `${BASE}/${name}/versions`);
const updateVersion = (h: Harness, auth: Auth, name: string, version: number, body: object) =>
  call(h, auth, "PUT", `${BASE}/${name}/versions/${version}`, body);
const approve = (h: Harness, auth: Auth, name: string, version: number) =>
  call(h, auth, "POST", `${BASE}/${name}/versions/${version}/approve`);

const notApproved = (name: string) => ({
  errCode: "TARGET_NOT_FOUND",
  msg: `workflow ${name} has no approved version`,
  resolution_hint: `approve a version: POST /platform/api/v1/workflows/${name}/versions/{version}/approve`,
});

const unboundStage = (name: string, stageId: string) => ({
  errCode: "WORKFLOW_HAS_UNBOUND_STAGE",
  msg: `stage ${stageId} of workflow ${name} has no agent_ref, parallel_agents or action_type bound to an existing agent or action`,
  resolution_hint: `bind stage ${stageId} to an agent or an action in a new version and approve it`,
});

const version = (fields: object) => ({
  description: "",
  inputs: [],
  stages: [],
  routing_examples: [],
  created_at: expect.any(String),
  updated_at: expect.any(String),
  approved_at: null,
  ...fields,
});

const ownedUrl =
  (suffix = "") =>
  async (h: Harness, owner: { auth: Auth }) => {
    const name = `wf-${Math.random().toString(36).slice(2, 8)}`;
    const response = await create(h, owner.auth, { name });
    expect(response.statusCode).toBe(201);
    return `${BASE}/${name}${suffix}`;
  };

describeEachEngine("workflows", (harness) => {
  it("creates version 1 as a draft and answers 201 with the whole workflow", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const body = {
      name: "triage",
      description: "first look at an alert",
      inputs: [
        { name: "service", description: "affected service", required: true, pattern: "^[a-z-]+$" },
        { name: "window", pattern: "^\\d+m$", default: "15m" },
      ],
      stages: [
        { id: "report", name: "Write the report", action_type: "write_report", config: { title: "t" } },
      ],
      routing_examples: ["triage the checkout alert"],
    };
    const response = await create(h, auth, body);
    expect(response.statusCode).toBe(201);
    const created = response.json();
    expect(created).toEqual({
      name: "triage",
      routing_status: "active",
      latest_version: 1,
      approved_version: null,
      draft_version: 1,
      ready: false,
      not_ready_reasons: [notApproved("triage")],
      versions: [
        version({
          version: 1,
          status: "draft",
          description: body.description,
          inputs: [body.inputs[0], { ...body.inputs[1], required: false }],
          stages: body.stages,
          routing_examples: body.routing_examples,
        }),
      ],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const read = await get(h, auth, "triage");
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);

    const minimal = await create(h, auth, { name: "minimal", routing_status: "inactive" });
    expect(minimal.statusCode).toBe(201);
    expect(minimal.json()).toEqual({
      name: "minimal",
      routing_status: "inactive",
      latest_version: 1,
      approved_version: null,
      draft_version: 1,
      ready: false,
      not_ready_reasons: [notApproved("minimal")],
      versions: [version({ version: 1, status: "draft" })],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it("answers 400 naming name for a second workflow of the same name in one tenant, not across tenants", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const alice = await h.createKey({ orgIds: [orgId] });
    const bob = await h.createKey();
    expect((await create(h, alice.auth, { name: "dup", description: "one" })).statusCode).toBe(201);
    const second = await create(h, alice.auth, { name: "dup", description: "two" });
    expect(second.statusCode).toBe(400);
    expect(second.json()).toEqual({
      msg: "name: workflow dup already exists",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "name" }],
    });
    const unchanged = (await get(h, alice.auth, "dup")).json();
    expect(unchanged.versions).toEqual([version({ version: 1, status: "draft", description: "one" })]);

    expect((await create(h, alice.auth, { name: "dup" }, `?orgId=${orgId}`)).statusCode).toBe(201);
    expect((await create(h, bob.auth, { name: "dup" })).statusCode).toBe(201);
  });

  it("follows the spec's version state table", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const v1Content = {
      description: "v1",
      inputs: [{ name: "service", required: true }],
      stages: [{ id: "report", action_type: "write_report" }],
      routing_examples: ["write a report"],
    };
    expect((await create(h, auth, { name: "flow", ...v1Content })).statusCode).toBe(201);

    // A draft exists: no second one.
    const duplicateDraft = await newVersion(h, auth, "flow");
    expect(duplicateDraft.statusCode).toBe(409);
    expect(duplicateDraft.json()).toEqual({
      msg: "workflow flow already has a draft (version 1)",
      errCode: "DRAFT_EXISTS",
      extras: [{ name: "flow", draft_version: 1 }],
    });

    // draft -> approved.
    const approved = await approve(h, auth, "flow", 1);
    expect(approved.statusCode).toBe(200);
    const v1 = version({ version: 1, status: "approved", ...v1Content, approved_at: expect.any(String) });
    expect(approved.json()).toEqual({
      name: "flow",
      routing_status: "active",
      latest_version: 1,
      approved_version: 1,
      draft_version: null,
      ready: true,
      not_ready_reasons: [],
      versions: [v1],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const approvedV1 = approved.json().versions[0];

    const again = await approve(h, auth, "flow", 1);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({
      msg: "version 1 is already approved",
      errCode: "ALREADY_APPROVED",
      extras: [{ name: "flow", version: 1 }],
    });

    // An approved version never changes.
    const changeApproved = await updateVersion(h, auth, "flow", 1, { description: "sneaky" });
    expect(changeApproved.statusCode).toBe(400);
    expect(changeApproved.json()).toEqual({
      msg: "version 1 is approved and cannot change",
      errCode: "NOT_A_DRAFT",
      extras: [{ name: "flow", version: 1 }],
    });
    const noDraft = await call(h, auth, "PUT", `${BASE}/flow`, { description: "sneaky" });
    expect(noDraft.statusCode).toBe(400);
    expect(noDraft.json()).toEqual({
      msg: "workflow flow has no draft: create a version first",
      errCode: "NOT_A_DRAFT",
      extras: [{ name: "flow" }],
    });
    expect((await get(h, auth, "flow")).json()).toEqual(approved.json());

    // A new draft copies the latest version.
    const created = await newVersion(h, auth, "flow");
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      ...approved.json(),
      latest_version: 2,
      draft_version: 2,
      versions: [version({ version: 2, status: "draft", ...v1Content }), approvedV1],
      updated_at: expect.any(String),
    });

    // updateWorkflowVersion changes the draft only.
    const v2Content = {
      description: "v2",
      inputs: [{ name: "service", required: false, pattern: "^[a-z]+$", default: "web" }],
      stages: [
        { id: "fetch", action_type: "http_request", config: { url: "https://status.example" } },
        { id: "report", action_type: "write_report", depends_on: ["fetch"] },
      ],
      routing_examples: ["check status"],
    };
    const updated = await updateVersion(h, auth, "flow", 2, v2Content);
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toEqual({
      ...created.json(),
      versions: [version({ version: 2, status: "draft", ...v2Content }), approvedV1],
      updated_at: expect.any(String),
    });

    // updateWorkflow with content updates the draft; fields it does not carry stay.
    const viaWorkflow = await call(h, auth, "PUT", `${BASE}/flow`, { description: "v2, reworded" });
    expect(viaWorkflow.statusCode).toBe(200);
    const v2 = version({ version: 2, status: "draft", ...v2Content, description: "v2, reworded" });
    expect(viaWorkflow.json()).toEqual({
      ...updated.json(),
      versions: [v2, approvedV1],
      updated_at: expect.any(String),
    });

    // updateWorkflow with only routing_status changes the routing status and leaves the draft alone.
    const rerouted = await call(h, auth, "PUT", `${BASE}/flow`, { routing_status: "inactive" });
    expect(rerouted.statusCode).toBe(200);
    expect(rerouted.json()).toEqual({
      ...viaWorkflow.json(),
      routing_status: "inactive",
      versions: [v2, approvedV1],
      updated_at: expect.any(String),
    });

    // includeDrafts=false hides the draft; the default shows it.
    const withoutDrafts = await get(h, auth, "flow", "?includeDrafts=false");
    expect(withoutDrafts.statusCode).toBe(200);
    expect(withoutDrafts.json()).toEqual({ ...rerouted.json(), versions: [approvedV1] });
    expect((await get(h, auth, "flow", "?includeDrafts=true")).json()).toEqual(rerouted.json());
    expect((await get(h, auth, "flow")).json()).toEqual(rerouted.json());

    // Approving version 2 makes it the one runs use; version 1 stays as it was.
    const approved2 = await approve(h, auth, "flow", 2);
    expect(approved2.statusCode).toBe(200);
    expect(approved2.json()).toMatchObject({
      routing_status: "inactive",
      latest_version: 2,
      approved_version: 2,
      draft_version: null,
      ready: true,
      versions: [{ ...v2, status: "approved", approved_at: expect.any(String) }, approvedV1],
    });
    const changeV2 = await updateVersion(h, auth, "flow", 2, { description: "late" });
    expect(changeV2.statusCode).toBe(400);
    expect(changeV2.json().errCode).toBe("NOT_A_DRAFT");

    const v3 = await newVersion(h, auth, "flow");
    expect(v3.statusCode).toBe(201);
    expect(v3.json().versions[0]).toEqual(
      version({ version: 3, status: "draft", ...v2Content, description: "v2, reworded" }),
    );
  });

  it("answers 404 for unknown workflows and versions", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const missing = { msg: "workflow not found", errCode: "NOT_FOUND", extras: [{ name: "ghost" }] };
    const responses = [
      await get(h, auth, "ghost"),
      await call(h, auth, "PUT", `${BASE}/ghost`, { routing_status: "inactive" }),
      await call(h, auth, "DELETE", `${BASE}/ghost`),
      await newVersion(h, auth, "ghost"),
      await updateVersion(h, auth, "ghost", 1, { description: "x" }),
      await approve(h, auth, "ghost", 1),
    ];
    for (const response of responses) {
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual(missing);
    }

    expect((await create(h, auth, { name: "real" })).statusCode).toBe(201);
    const missingVersion = {
      msg: "workflow version not found",
      errCode: "NOT_FOUND",
      extras: [{ name: "real", version: 7 }],
    };
    for (const response of [
      await updateVersion(h, auth, "real", 7, { description: "x" }),
      await approve(h, auth, "real", 7),
    ]) {
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual(missingVersion);
    }

    const badVersion = await approve(h, auth, "real", 0);
    expect(badVersion.statusCode).toBe(400);
    expect(badVersion.json()).toMatchObject({ errCode: "VALIDATION_FAILED", extras: [{ field: "version" }] });
  });

  it("answers 400 when the body names another workflow", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    expect((await create(h, auth, { name: "one" })).statusCode).toBe(201);
    const expected = {
      msg: "name: must equal the workflow name in the path",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "name" }],
    };
    for (const response of [
      await call(h, auth, "PUT", `${BASE}/one`, { name: "two", description: "x" }),
      await updateVersion(h, auth, "one", 1, { name: "two", description: "x" }),
    ]) {
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(expected);
    }
    const missingName = await create(h, auth, { description: "nameless" });
    expect(missingName.statusCode).toBe(400);
    expect(missingName.json()).toEqual({
      msg: "name: is required",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "name" }],
    });
    expect((await get(h, auth, "one")).json().versions[0].description).toBe("");
  });

  it("validates stages and inputs with 400 naming the field, on create and on update", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await registerAgent(h, auth, { name: "known" });
    const action = { action_type: "json_transform" };
    const cases: [object, string][] = [
      [
        {
          stages: [
            { id: "a", ...action },
            { id: "a", ...action },
          ],
        },
        "stages.1.id",
      ],
      [{ stages: [{ id: "a", agent_ref: "known", action_type: "write_report" }] }, "stages.0"],
      [{ stages: [{ id: "a", agent_ref: "known", parallel_agents: ["known"] }] }, "stages.0"],
      [{ stages: [{ id: "a", ...action, depends_on: ["nope"] }] }, "stages.0.depends_on"],
      [{ stages: [{ id: "a", ...action, depends_on: ["a"] }] }, "stages.0.depends_on"],
      [
        {
          stages: [
            { id: "a", ...action, depends_on: ["c"] },
            { id: "b", ...action, depends_on: ["a"] },
            { id: "c", ...action, depends_on: ["b"] },
          ],
        },
        "stages",
      ],
      [{ stages: [{ id: "a", agent_ref: "missing" }] }, "stages.0.agent_ref"],
      [{ stages: [{ id: "a", parallel_agents: ["known", "missing"] }] }, "stages.0.parallel_agents"],
      [{ stages: [{ id: "a", action_type: "shell" }] }, "stages.0.action_type"],
      [{ stages: [{ id: "a", agent_ref: "Not A Slug" }] }, "stages.0.agent_ref"],
      [{ stages: [{ id: "bad id" }] }, "stages.0.id"],
      [{ stages: [{ name: "no id" }] }, "stages.0.id"],
      [{ stages: [{ id: "a", binding: "x" }] }, "stages.0.binding"],
      [{ inputs: [{ name: "x", pattern: "([" }] }, "inputs.0.pattern"],
      // Patterns run on RE2, which has neither look-around nor back-references.
      [{ inputs: [{ name: "x", pattern: "^(?!prod)[a-z]+$" }] }, "inputs.0.pattern"],
      [{ inputs: [{ name: "x", pattern: "^(a)\\1$" }] }, "inputs.0.pattern"],
      [{ inputs: [{ name: "x", pattern: "^\\d+$", default: "ten" }] }, "inputs.0.default"],
      [{ inputs: [{ name: "x" }, { name: "x" }] }, "inputs.1.name"],
      [{ routing_status: "paused" }, "routing_status"],
      [{ routing_examples: [""] }, "routing_examples.0"],
    ];
    expect((await create(h, auth, { name: "target" })).statusCode).toBe(201);
    const before = (await get(h, auth, "target")).json();
    for (const [content, field] of cases) {
      const label = JSON.stringify(content);
      for (const response of [
        await create(h, auth, { name: "invalid", ...content }),
        await updateVersion(h, auth, "target", 1, content),
        await call(h, auth, "PUT", `${BASE}/target`, content),
      ]) {
        expect(response.statusCode, label).toBe(400);
        expect(response.json(), label).toMatchObject({
          errCode: "VALIDATION_FAILED",
          extras: [expect.objectContaining({ field })],
        });
        expect(response.json().msg, label).toMatch(new RegExp(`^${field.replace(/\./g, "\\.")}: `));
      }
    }
    expect((await get(h, auth, "invalid")).statusCode).toBe(404);
    expect((await get(h, auth, "target")).json()).toEqual(before);

    // The stage checks that need a body: the cycle names its path.
    const cycle = await create(h, auth, { name: "invalid", ...cases[5]?.[0] });
    expect(cycle.json().msg).toBe("stages: dependency cycle: a -> c -> b -> a");

    // A stage with no binding is allowed to be saved.
    const unbound = await create(h, auth, { name: "unbound", stages: [{ id: "todo" }] });
    expect(unbound.statusCode).toBe(201);
    expect(unbound.json().versions[0].stages).toEqual([{ id: "todo" }]);
  });

  it("reports an approved workflow with no stages as not ready", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const approved = await createApprovedWorkflow(h, auth, { name: "empty" });
    expect(approved).toMatchObject({ approved_version: 1, ready: false });
    expect(approved.not_ready_reasons).toEqual([
      {
        errCode: "WORKFLOW_HAS_NO_STAGES",
        msg: "workflow empty has no stages",
        resolution_hint: "add stages in a new version and approve it",
      },
    ]);
  });

  it("reports an approved workflow with an unbound stage as not ready, naming the stage", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const approved = await createApprovedWorkflow(h, auth, {
      name: "half",
      stages: [
        { id: "fetch", action_type: "http_request" },
        { id: "decide", depends_on: ["fetch"] },
      ],
    });
    expect(approved).toMatchObject({ approved_version: 1, ready: false });
    expect(approved.not_ready_reasons).toEqual([unboundStage("half", "decide")]);

    // A bound draft does not make it ready: runs use the approved version.
    expect((await newVersion(h, auth, "half")).statusCode).toBe(201);
    const bound = await updateVersion(h, auth, "half", 2, {
      stages: [
        { id: "fetch", action_type: "http_request" },
        { id: "decide", action_type: "json_transform" },
      ],
    });
    expect(bound.json()).toMatchObject({ ready: false, not_ready_reasons: [unboundStage("half", "decide")] });
    const fixed = await approve(h, auth, "half", 2);
    expect(fixed.json()).toMatchObject({ approved_version: 2, ready: true, not_ready_reasons: [] });
  });

  it("is ready with three stages, a parallel one and an action, and unready once an agent it uses is deleted", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    for (const name of ["logs", "metrics", "summarizer"]) await registerAgent(h, auth, { name });
    const stages = [
      { id: "gather", parallel_agents: ["logs", "metrics"] },
      { id: "summarize", agent_ref: "summarizer", depends_on: ["gather"] },
      {
        id: "report",
        action_type: "write_report",
        depends_on: ["summarize"],
        config: { format: "markdown" },
      },
    ];
    const approved = await createApprovedWorkflow(h, auth, { name: "incident", stages });
    expect(approved).toEqual({
      name: "incident",
      routing_status: "active",
      latest_version: 1,
      approved_version: 1,
      draft_version: null,
      ready: true,
      not_ready_reasons: [],
      versions: [version({ version: 1, status: "approved", stages, approved_at: expect.any(String) })],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    expect((await call(h, auth, "DELETE", "/platform/api/v1/agents/metrics")).statusCode).toBe(204);
    const afterParallel = (await get(h, auth, "incident")).json();
    expect(afterParallel).toMatchObject({ ready: false, approved_version: 1 });
    expect(afterParallel.not_ready_reasons).toEqual([unboundStage("incident", "gather")]);

    expect((await call(h, auth, "DELETE", "/platform/api/v1/agents/summarizer")).statusCode).toBe(204);
    expect((await get(h, auth, "incident")).json().not_ready_reasons).toEqual([
      unboundStage("incident", "gather"),
      unboundStage("incident", "summarize"),
    ]);

    // Registering the agents again restores readiness.
    await registerAgent(h, auth, { name: "metrics" });
    await registerAgent(h, auth, { name: "summarizer" });
    expect((await get(h, auth, "incident")).json()).toMatchObject({ ready: true, not_ready_reasons: [] });
  });

  it("resolves stage agents within the tenant", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const { auth } = await h.createKey({ orgIds: [orgId] });
    await registerAgent(h, auth, { name: "personal-agent" });
    const inOrg = await create(
      h,
      auth,
      { name: "org-flow", stages: [{ id: "a", agent_ref: "personal-agent" }] },
      `?orgId=${orgId}`,
    );
    expect(inOrg.statusCode).toBe(400);
    expect(inOrg.json()).toEqual({
      msg: "stages.0.agent_ref: agent personal-agent not found",
      errCode: "VALIDATION_FAILED",
      extras: [{ field: "stages.0.agent_ref" }],
    });
  });

  it("answers one of concurrent DELETEs 204 and the others 404", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    expect((await create(h, auth, { name: "raced" })).statusCode).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => call(h, auth, "DELETE", `${BASE}/raced`)),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, ...Array(7).fill(404)]);
    expect((await get(h, auth, "raced")).statusCode).toBe(404);
  });

  it("lists only the tenant's workflows by name, and deletes", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const alice = await h.createKey({ orgIds: [orgId] });
    const bob = await h.createKey();
    expect((await create(h, alice.auth, { name: "zeta" })).statusCode).toBe(201);
    await createApprovedWorkflow(h, alice.auth, {
      name: "alpha",
      stages: [{ id: "r", action_type: "write_report" }],
    });
    expect((await newVersion(h, alice.auth, "alpha")).statusCode).toBe(201);
    expect((await create(h, alice.auth, { name: "org-flow" }, `?orgId=${orgId}`)).statusCode).toBe(201);
    expect((await create(h, bob.auth, { name: "bobs" })).statusCode).toBe(201);

    const list = await call(h, alice.auth, "GET", BASE);
    expect(list.statusCode).toBe(200);
    const alpha = (await get(h, alice.auth, "alpha")).json();
    const zeta = (await get(h, alice.auth, "zeta")).json();
    expect(alpha.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(list.json()).toEqual([alpha, zeta]);

    const approvedOnly = await call(h, alice.auth, "GET", `${BASE}?includeDrafts=false`);
    expect(approvedOnly.json()).toEqual([
      { ...alpha, versions: [alpha.versions[1]] },
      { ...zeta, versions: [] },
    ]);

    const inOrg = await call(h, alice.auth, "GET", `${BASE}?orgId=${orgId}`);
    expect(inOrg.json().map((w: { name: string }) => w.name)).toEqual(["org-flow"]);
    const bobs = await call(h, bob.auth, "GET", BASE);
    expect(bobs.json().map((w: { name: string }) => w.name)).toEqual(["bobs"]);
    expect((await get(h, bob.auth, "alpha")).statusCode).toBe(404);

    const removed = await call(h, alice.auth, "DELETE", `${BASE}/alpha`);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe("");
    const gone = await get(h, alice.auth, "alpha");
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({
      msg: "workflow not found",
      errCode: "NOT_FOUND",
      extras: [{ name: "alpha" }],
    });
    expect((await call(h, alice.auth, "DELETE", `${BASE}/alpha`)).statusCode).toBe(404);
    expect((await call(h, alice.auth, "GET", BASE)).json()).toEqual([zeta]);

    // The name is free again and starts over at version 1.
    const recreated = await create(h, alice.auth, { name: "alpha" });
    expect(recreated.statusCode).toBe(201);
    expect(recreated.json()).toMatchObject({ latest_version: 1, draft_version: 1, approved_version: null });
  });

  itEnforcesAuth(harness, {
    method: "POST",
    scope: "aios_automation_write",
    url: BASE,
    body: { name: "matrix" },
  });
  itEnforcesAuth(harness, { method: "GET", scope: "aios_automation_read", url: BASE });
  itEnforcesAuth(harness, {
    method: "GET",
    scope: "aios_automation_read",
    url: ownedUrl(),
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "PUT",
    scope: "aios_automation_write",
    url: ownedUrl(),
    body: { routing_status: "inactive" },
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "DELETE",
    scope: "aios_automation_write",
    url: ownedUrl(),
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "POST",
    scope: "aios_automation_write",
    url: ownedUrl("/versions"),
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "PUT",
    scope: "aios_automation_write",
    url: ownedUrl("/versions/1"),
    body: { description: "changed" },
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "POST",
    scope: "aios_automation_write",
    url: ownedUrl("/versions/1/approve"),
    ownedResource: true,
  });
});
