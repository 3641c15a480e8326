// Named webhooks: CRUD with the token shown once, readiness of the target at save time (400) and at
// trigger time (423, the invocation still recorded), the body as the run's input, and auth.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { registerAlerts } from "../../test/alerts.ts";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { createApprovedWorkflow, uniqueName } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness, type Method } from "../../test/harness.ts";

const PUBLIC_URL = "https://vigil.example.com";
const BASE = "/platform/api/v1/webhooks";
const TRIGGER = `${BASE}/trigger`;

type Created = { id: string; token: string; [field: string]: unknown };

function trigger(h: Harness, token: string, payload = "checkout is down", contentType = "text/plain") {
  return h.vigil.app.inject({
    method: "POST",
    url: `${TRIGGER}?apiKey=${encodeURIComponent(token)}`,
    headers: { "content-type": contentType },
    payload,
  });
}

async function expectStatus(response: { statusCode: number; body: string }, status: number) {
  expect(response.statusCode, response.body).toBe(status);
}

/** A builtin agent with an integration: ready to run unattended. */
async function readyAgent(h: Harness, auth: Auth, name = uniqueName("agent")): Promise<string> {
  const integration = uniqueName("grafana");
  await expectStatus(
    await call(h, auth, "POST", "/api/v1/integrations", { name: integration, type: "grafana" }),
    201,
  );
  await expectStatus(
    await call(h, auth, "POST", "/platform/api/v1/agents", {
      name,
      kind: "builtin",
      instructions: "looked at {{input.message}}",
      integrations: [integration],
    }),
    201,
  );
  return name;
}

async function approvedWorkflow(h: Harness, auth: Auth, body: { name: string; [field: string]: unknown }) {
  await createApprovedWorkflow(h, auth, body);
  return body.name;
}

/** Approves a new version of the workflow with the given stages. */
async function approveStages(h: Harness, auth: Auth, name: string, stages: object[]) {
  const draft = await call(h, auth, "POST", `/platform/api/v1/workflows/${name}/versions`);
  await expectStatus(draft, 201);
  const version = draft.json().draft_version;
  await expectStatus(
    await call(h, auth, "PUT", `/platform/api/v1/workflows/${name}/versions/${version}`, { stages }),
    200,
  );
  await expectStatus(
    await call(h, auth, "POST", `/platform/api/v1/workflows/${name}/versions/${version}/approve`),
    200,
  );
}

const transformStage = { id: "only", action_type: "json_transform", config: { expression: "1" } };

async function createWebhook(h: Harness, auth: Auth, body: object): Promise<Created> {
  const response = await call(h, auth, "POST", BASE, body);
  await expectStatus(response, 201);
  return response.json();
}

const withoutToken = ({ token, platform_webhook_url, trigger_url, ...rest }: Created) => {
  expect([token, platform_webhook_url, trigger_url]).toHaveLength(3);
  return rest;
};

type Extras = { target_type: string; target_name: string; resolution_hint: string };
/** The spec's extras carry all five keys, whatever the reason: null and 0 where they do not apply. */
const notReady = (errCode: string, msg: string, extras: Extras & Record<string, unknown>) => ({
  msg,
  errCode,
  extras: [{ unbound_stage_id: null, total_stages: 0, ...extras }],
});

const agentMissing = (name: string) =>
  notReady("TARGET_NOT_FOUND", `agent ${name} does not exist`, {
    target_type: "agent",
    target_name: name,
    resolution_hint: "create the agent or point the webhook at an existing one",
  });
const workflowMissing = (name: string) =>
  notReady("TARGET_NOT_FOUND", `workflow ${name} does not exist`, {
    target_type: "workflow",
    target_name: name,
    resolution_hint: "create the workflow or point the webhook at an existing one",
  });
const notApproved = (name: string) =>
  notReady("TARGET_NOT_FOUND", `workflow ${name} has no approved version`, {
    target_type: "workflow",
    target_name: name,
    resolution_hint: `approve a version: POST /platform/api/v1/workflows/${name}/versions/{version}/approve`,
  });
const noIntegrations = (name: string) =>
  notReady("NO_INTEGRATIONS", `agent ${name} has no integrations attached`, {
    target_type: "agent",
    target_name: name,
    resolution_hint: `attach at least one integration: PUT /platform/api/v1/agents/${name} with integrations`,
  });
const noStages = (name: string) =>
  notReady("WORKFLOW_HAS_NO_STAGES", `workflow ${name} has no stages`, {
    target_type: "workflow",
    target_name: name,
    total_stages: 0,
    resolution_hint: "add stages in a new version and approve it",
  });
const unbound = (name: string, stage: string, total: number) =>
  notReady(
    "WORKFLOW_HAS_UNBOUND_STAGE",
    `stage ${stage} of workflow ${name} has no agent_ref, parallel_agents or action_type bound to an existing agent or action`,
    {
      target_type: "workflow",
      target_name: name,
      unbound_stage_id: stage,
      total_stages: total,
      resolution_hint: `bind stage ${stage} to an agent or an action in a new version and approve it`,
    },
  );

/** The webhook's readiness as getWebhook shows it. */
const reasonOf = (error: { msg: string; errCode: string; extras: { resolution_hint: string }[] }) => ({
  errCode: error.errCode,
  msg: error.msg,
  resolution_hint: error.extras[0]?.resolution_hint,
});

const ownedWebhook =
  (suffix = "") =>
  async (h: Harness, owner: { auth: Auth }) => {
    const agent = await readyAgent(h, owner.auth);
    const created = await createWebhook(h, owner.auth, {
      name: uniqueName("hook"),
      target_type: "agent",
      target_name: agent,
    });
    return `${BASE}/${created.id}${suffix}`;
  };

describeEachEngine(
  "named webhooks",
  (harness) => {
    describe("CRUD", () => {
      it("creates an agent webhook with its token shown once, then reads and lists it without", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const response = await call(h, auth, "POST", BASE, {
          name: "deploy-hook",
          target_type: "agent",
          target_name: agent,
          description: "called by the deploy pipeline",
        });
        await expectStatus(response, 201);
        const created = response.json();
        const path = `/api/v1/webhooks/trigger?apiKey=${encodeURIComponent(created.token)}`;
        expect(created).toEqual({
          id: expect.any(String),
          name: "deploy-hook",
          target_type: "agent",
          target_name: agent,
          description: "called by the deploy pipeline",
          enabled: true,
          ready: true,
          not_ready_reasons: [],
          org_id: null,
          created_at: expect.any(String),
          updated_at: created.created_at,
          token: expect.stringMatching(/^whk_[A-Za-z0-9_-]{32}$/),
          platform_webhook_url: path,
          trigger_url: `${PUBLIC_URL}/platform${path}`,
        });

        const got = await call(h, auth, "GET", `${BASE}/${created.id}`);
        await expectStatus(got, 200);
        expect(got.json()).toEqual(withoutToken(created));
        const list = await call(h, auth, "GET", BASE);
        await expectStatus(list, 200);
        expect(list.json()).toEqual({ webhooks: [withoutToken(created)], total: 1, limit: 20, offset: 0 });
        // The URL shown works.
        const accepted = await trigger(h, created.token);
        await expectStatus(accepted, 202);
      });

      it("creates a disabled workflow webhook, lists by name with filters and pages", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [transformStage],
        });
        const agent = await readyAgent(h, auth);
        const b = await createWebhook(h, auth, {
          name: "b-hook",
          target_type: "workflow",
          target_name: workflow,
          enabled: false,
        });
        expect(withoutToken(b)).toMatchObject({ target_type: "workflow", enabled: false, ready: true });
        const a = await createWebhook(h, auth, { name: "a-hook", target_type: "agent", target_name: agent });
        const c = await createWebhook(h, auth, { name: "c-hook", target_type: "agent", target_name: agent });
        const names = async (query: string) => {
          const response = await call(h, auth, "GET", `${BASE}${query}`);
          await expectStatus(response, 200);
          const body = response.json();
          return [body.total, body.webhooks.map((item: { name: string }) => item.name)];
        };
        expect(await names("")).toEqual([3, ["a-hook", "b-hook", "c-hook"]]);
        expect(await names("?limit=2")).toEqual([3, ["a-hook", "b-hook"]]);
        expect(await names("?limit=2&offset=2")).toEqual([3, ["c-hook"]]);
        expect(await names("?target_type=workflow")).toEqual([1, ["b-hook"]]);
        expect(await names(`?target_type=agent&target_name=${agent}`)).toEqual([2, ["a-hook", "c-hook"]]);
        expect(await names("?target_name=nothing")).toEqual([0, []]);
        // A disabled webhook is a known webhook: 404, not 401.
        const disabled = await trigger(h, b.token);
        expect(disabled.statusCode).toBe(404);
        expect(disabled.json()).toEqual({
          msg: "webhook not found or disabled",
          errCode: "NOT_FOUND",
          extras: [{ webhook_id: b.id }],
        });
        expect([a.id, c.id]).toHaveLength(2);
        // Another tenant sees none of them.
        const stranger = await h.createKey();
        expect((await call(h, stranger.auth, "GET", BASE)).json()).toEqual({
          webhooks: [],
          total: 0,
          limit: 20,
          offset: 0,
        });
      });

      it("answers 409 for a name a live webhook of the tenant has; a deleted one frees it", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const body = { name: "dup", target_type: "agent", target_name: agent };
        const first = await createWebhook(h, auth, body);
        const again = await call(h, auth, "POST", BASE, body);
        expect(again.statusCode).toBe(409);
        expect(again.json()).toEqual({
          msg: "webhook dup already exists",
          errCode: "CONFLICT",
          extras: [{ name: "dup", webhook_id: first.id }],
        });
        const other = await createWebhook(h, auth, { ...body, name: "other" });
        const rename = await call(h, auth, "PATCH", `${BASE}/${other.id}`, { name: "dup" });
        expect(rename.statusCode).toBe(409);
        expect(rename.json()).toMatchObject({ errCode: "CONFLICT" });
        // Renaming to its own name is no conflict.
        await expectStatus(await call(h, auth, "PATCH", `${BASE}/${first.id}`, { name: "dup" }), 200);

        // Another tenant may use the name.
        const stranger = await h.createKey();
        const theirs = await readyAgent(h, stranger.auth);
        await createWebhook(h, stranger.auth, { ...body, target_name: theirs });

        await expectStatus(await call(h, auth, "DELETE", `${BASE}/${first.id}`), 204);
        const reused = await createWebhook(h, auth, body);
        expect(reused.id).not.toBe(first.id);
      });

      it("creates names concurrently without duplicates", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const body = { name: "race", target_type: "agent", target_name: agent };
        const responses = await Promise.all([1, 2, 3, 4].map(() => call(h, auth, "POST", BASE, body)));
        expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409]);
      });

      it("updates the name, the target and the enabled flag, keeping the token", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [transformStage],
        });
        const created = await createWebhook(h, auth, {
          name: "hook",
          target_type: "agent",
          target_name: agent,
        });

        const before = await trigger(h, created.token, "{}", "application/json");
        await expectStatus(before, 202);

        const disabled = await call(h, auth, "PATCH", `${BASE}/${created.id}`, { enabled: false });
        await expectStatus(disabled, 200);
        expect(disabled.json()).toEqual({
          ...withoutToken(created),
          enabled: false,
          updated_at: expect.any(String),
        });
        expect((await trigger(h, created.token)).statusCode).toBe(404);

        const moved = await call(h, auth, "PATCH", `${BASE}/${created.id}`, {
          name: "renamed",
          target_type: "workflow",
          target_name: workflow,
          description: "now runs the release workflow",
          enabled: true,
        });
        await expectStatus(moved, 200);
        expect(moved.json()).toEqual({
          ...withoutToken(created),
          name: "renamed",
          target_type: "workflow",
          target_name: workflow,
          description: "now runs the release workflow",
          updated_at: expect.any(String),
        });
        expect((await call(h, auth, "GET", `${BASE}/${created.id}`)).json()).toEqual(moved.json());
        const accepted = await trigger(h, created.token, "{}", "application/json");
        await expectStatus(accepted, 202);
        expect(accepted.json()).toMatchObject({ target_type: "workflow", target_name: workflow });

        // Each run keeps the target its trigger went to.
        const runs = (await call(h, auth, "GET", `${BASE}/${created.id}/runs`)).json().runs;
        expect(
          runs.map((run: { target_type: string; target_name: string }) => [run.target_type, run.target_name]),
        ).toEqual([
          ["workflow", workflow],
          ["agent", agent],
        ]);
        const first = await call(h, auth, "GET", `${BASE}/${created.id}/runs/${before.json().invocation_id}`);
        expect(first.json()).toMatchObject({ target_type: "agent", target_name: agent });
      });

      it("rotates the token: the new one is shown once, the old one answers 401 at once", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const created = await createWebhook(h, auth, {
          name: "hook",
          target_type: "agent",
          target_name: agent,
        });
        await expectStatus(await trigger(h, created.token), 202);
        const rotated = await call(h, auth, "POST", `${BASE}/${created.id}/rotate-token`);
        await expectStatus(rotated, 200);
        const body = rotated.json();
        const path = `/api/v1/webhooks/trigger?apiKey=${encodeURIComponent(body.token)}`;
        expect(body).toEqual({
          ...withoutToken(created),
          updated_at: expect.any(String),
          token: expect.stringMatching(/^whk_/),
          platform_webhook_url: path,
          trigger_url: `${PUBLIC_URL}/platform${path}`,
        });
        expect(body.token).not.toBe(created.token);
        const old = await trigger(h, created.token);
        expect(old.statusCode).toBe(401);
        expect(old.json()).toEqual({ msg: "invalid webhook token", errCode: "UNAUTHENTICATED", extras: [] });
        await expectStatus(await trigger(h, body.token), 202);
      });

      it("deletes softly: the token then answers 404, the webhook and its runs are gone", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const created = await createWebhook(h, auth, {
          name: "hook",
          target_type: "agent",
          target_name: agent,
        });
        await expectStatus(await trigger(h, created.token), 202);
        const deleted = await call(h, auth, "DELETE", `${BASE}/${created.id}`);
        expect(deleted.statusCode).toBe(204);
        expect(deleted.body).toBe("");
        const gone = await trigger(h, created.token);
        expect(gone.statusCode).toBe(404);
        expect(gone.json()).toMatchObject({ errCode: "NOT_FOUND" });
        for (const [method, url] of [
          ["GET", `${BASE}/${created.id}`],
          ["PATCH", `${BASE}/${created.id}`],
          ["DELETE", `${BASE}/${created.id}`],
          ["POST", `${BASE}/${created.id}/rotate-token`],
          ["GET", `${BASE}/${created.id}/runs`],
        ] as const) {
          const response = await call(
            h,
            auth,
            method,
            url,
            method === "PATCH" ? { enabled: true } : undefined,
          );
          expect(response.statusCode, `${method} ${url}`).toBe(404);
          expect(response.json()).toMatchObject({ errCode: "NOT_FOUND" });
        }
        expect((await call(h, auth, "GET", BASE)).json().total).toBe(0);
      });

      it("answers 404 for unknown webhooks and for alert-ingest webhooks, which it never lists", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const registration = await registerAlerts(h, auth, { source: "alertmanager" });
        for (const id of [randomUUID(), registration.id]) {
          const expected = { msg: "webhook not found", errCode: "NOT_FOUND", extras: [{ webhook_id: id }] };
          for (const [method, url, payload] of [
            ["GET", `${BASE}/${id}`, undefined],
            ["PATCH", `${BASE}/${id}`, { enabled: false }],
            ["DELETE", `${BASE}/${id}`, undefined],
            ["POST", `${BASE}/${id}/rotate-token`, undefined],
          ] as const) {
            const response = await call(h, auth, method, url, payload);
            expect(response.statusCode, `${method} ${url}`).toBe(404);
            expect(response.json()).toEqual(expected);
          }
        }
        expect((await call(h, auth, "GET", BASE)).json().webhooks).toEqual([]);
        // The registration is untouched and still readable by its own API.
        const alertWebhook = await call(h, auth, "GET", `/app/sre/api/v1/alerts/webhook/${registration.id}`);
        await expectStatus(alertWebhook, 200);
        expect(alertWebhook.json()).toMatchObject({ id: registration.id, enabled: true });
      });

      it("answers 400 naming the field", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const created = await createWebhook(h, auth, {
          name: "hook",
          target_type: "agent",
          target_name: agent,
        });
        const cases: [Method, string, object | undefined, string, string][] = [
          ["POST", BASE, { target_type: "agent", target_name: agent }, "name: is required", "name"],
          ["POST", BASE, { name: "x", target_name: agent }, "target_type: is required", "target_type"],
          ["POST", BASE, { name: "x", target_type: "agent" }, "target_name: is required", "target_name"],
          [
            "POST",
            BASE,
            { name: "Bad Name", target_type: "agent", target_name: agent },
            "name: must be a lower-case slug: a-z, digits, _ and -, starting with a letter or digit, at most 63 characters",
            "name",
          ],
          [
            "POST",
            BASE,
            { name: "x", target_type: "alert_ingest", target_name: agent },
            "target_type: must be one of agent, workflow",
            "target_type",
          ],
          [
            "POST",
            BASE,
            { name: "x", target_type: "agent", target_name: agent, enabled: "yes" },
            "enabled: must be boolean",
            "enabled",
          ],
          [
            "POST",
            BASE,
            { name: "x", target_type: "agent", target_name: agent, token: "mine" },
            "token: is not a known field",
            "token",
          ],
          ["PATCH", `${BASE}/${created.id}`, {}, "body: must NOT have fewer than 1 properties", "body"],
          [
            "PATCH",
            `${BASE}/not-a-uuid`,
            { enabled: true },
            'webhook_id: must match format "uuid"',
            "webhook_id",
          ],
          ["GET", `${BASE}?limit=0`, undefined, "limit: must be >= 1", "limit"],
          ["GET", `${BASE}?limit=101`, undefined, "limit: must be <= 100", "limit"],
          [
            "GET",
            `${BASE}?target_type=alert_ingest`,
            undefined,
            "target_type: must be one of agent, workflow",
            "target_type",
          ],
        ];
        for (const [method, url, payload, msg, field] of cases) {
          const response = await call(h, auth, method, url, payload);
          expect(response.statusCode, `${method} ${url} ${JSON.stringify(payload)}`).toBe(400);
          expect(response.json()).toMatchObject({ msg, errCode: "VALIDATION_FAILED", extras: [{ field }] });
        }
      });
    });

    describe("readiness when saved (400)", () => {
      it("refuses each unready target with the spec's errCode and extras", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const lonely = uniqueName("lonely");
        await expectStatus(
          await call(h, auth, "POST", "/platform/api/v1/agents", { name: lonely, kind: "builtin" }),
          201,
        );
        const draft = uniqueName("draft");
        await expectStatus(
          await call(h, auth, "POST", "/platform/api/v1/workflows", {
            name: draft,
            stages: [transformStage],
          }),
          201,
        );
        const empty = await approvedWorkflow(h, auth, { name: uniqueName("empty"), stages: [] });
        const loose = await approvedWorkflow(h, auth, {
          name: uniqueName("loose"),
          stages: [transformStage, { id: "think" }],
        });
        const cases: [string, string, object][] = [
          ["agent", "ghost", agentMissing("ghost")],
          ["workflow", "ghost", workflowMissing("ghost")],
          ["workflow", draft, notApproved(draft)],
          ["agent", lonely, noIntegrations(lonely)],
          ["workflow", empty, noStages(empty)],
          ["workflow", loose, unbound(loose, "think", 2)],
        ];
        for (const [targetType, targetName, error] of cases) {
          const body = { name: uniqueName("hook"), target_type: targetType, target_name: targetName };
          const response = await call(h, auth, "POST", BASE, body);
          expect(response.statusCode, `${targetType} ${targetName}`).toBe(400);
          expect(response.json()).toEqual(error);
        }
        expect((await call(h, auth, "GET", BASE)).json().total).toBe(0);
      });

      it("saves a disabled webhook on an unready target, showing why, and refuses to enable it", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const lonely = uniqueName("lonely");
        await expectStatus(
          await call(h, auth, "POST", "/platform/api/v1/agents", { name: lonely, kind: "builtin" }),
          201,
        );
        const created = await createWebhook(h, auth, {
          name: "later",
          target_type: "agent",
          target_name: lonely,
          enabled: false,
        });
        expect(withoutToken(created)).toEqual({
          id: created.id,
          name: "later",
          description: "",
          target_type: "agent",
          target_name: lonely,
          enabled: false,
          ready: false,
          not_ready_reasons: [reasonOf(noIntegrations(lonely))],
          org_id: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        });
        const enable = await call(h, auth, "PATCH", `${BASE}/${created.id}`, { enabled: true });
        expect(enable.statusCode).toBe(400);
        expect(enable.json()).toEqual(noIntegrations(lonely));

        // Pointing an enabled webhook at an unready target is refused too; the webhook is unchanged.
        const ready = await readyAgent(h, auth);
        const other = await createWebhook(h, auth, { name: "now", target_type: "agent", target_name: ready });
        const move = await call(h, auth, "PATCH", `${BASE}/${other.id}`, { target_name: "ghost" });
        expect(move.statusCode).toBe(400);
        expect(move.json()).toEqual(agentMissing("ghost"));
        expect((await call(h, auth, "GET", `${BASE}/${other.id}`)).json()).toEqual(withoutToken(other));
        // A rename of a disabled webhook on an unready target is fine.
        const renamed = await call(h, auth, "PATCH", `${BASE}/${created.id}`, { name: "later-2" });
        await expectStatus(renamed, 200);
      });
    });

    describe("readiness when triggered (423)", () => {
      async function runsOf(h: Harness, auth: Auth, webhookId: string) {
        const response = await call(h, auth, "GET", `${BASE}/${webhookId}/runs`);
        await expectStatus(response, 200);
        return response.json().runs;
      }

      /** Triggers once while ready (202), breaks the target, then expects 423 with `error`, recorded. */
      async function becomesUnready(
        h: Harness,
        auth: Auth,
        target: { target_type: string; target_name: string },
        breakTarget: () => Promise<void>,
        error: { msg: string; errCode: string; extras: { resolution_hint: string }[] },
      ) {
        const created = await createWebhook(h, auth, { name: uniqueName("hook"), ...target });
        await expectStatus(await trigger(h, created.token), 202);
        await breakTarget();
        const refused = await trigger(h, created.token, "again");
        expect(refused.statusCode).toBe(423);
        expect(refused.json()).toEqual(error);

        const [latest, first] = await runsOf(h, auth, created.id);
        expect(first).toMatchObject({ status: "accepted", trace_id: expect.any(String) });
        const detail = await call(h, auth, "GET", `${BASE}/${created.id}/runs/${latest.invocation_id}`);
        await expectStatus(detail, 200);
        expect(detail.json()).toEqual({
          invocation_id: latest.invocation_id,
          webhook_id: created.id,
          ...target,
          status: "failed",
          received_at: expect.any(String),
          finished_at: expect.any(String),
          content_type: "text/plain",
          payload_bytes: 5,
          error: error.msg,
          note: null,
          session_id: null,
          trace_id: null,
          run_id: null,
          outcome: error,
          headers: expect.objectContaining({ "content-type": "text/plain" }),
          payload: "again",
          payload_encoding: "utf8",
        });
        const shown = await call(h, auth, "GET", `${BASE}/${created.id}`);
        expect(shown.json()).toMatchObject({
          enabled: true,
          ready: false,
          not_ready_reasons: [reasonOf(error)],
        });
      }

      it("TARGET_NOT_FOUND when the agent was deleted", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        await becomesUnready(
          h,
          auth,
          { target_type: "agent", target_name: agent },
          async () => {
            await expectStatus(await call(h, auth, "DELETE", `/platform/api/v1/agents/${agent}`), 204);
          },
          agentMissing(agent),
        );
      });

      it("TARGET_NOT_FOUND when the workflow was deleted", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [transformStage],
        });
        await becomesUnready(
          h,
          auth,
          { target_type: "workflow", target_name: workflow },
          async () => {
            await expectStatus(await call(h, auth, "DELETE", `/platform/api/v1/workflows/${workflow}`), 204);
          },
          workflowMissing(workflow),
        );
      });

      it("NO_INTEGRATIONS when the agent lost its integrations", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        await becomesUnready(
          h,
          auth,
          { target_type: "agent", target_name: agent },
          async () => {
            const update = await call(h, auth, "PUT", `/platform/api/v1/agents/${agent}`, {
              name: agent,
              kind: "builtin",
              integrations: [],
            });
            await expectStatus(update, 200);
          },
          noIntegrations(agent),
        );
      });

      it("NO_INTEGRATIONS when the agent's integration was deleted", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const [integration] = (await call(h, auth, "GET", `/platform/api/v1/agents/${agent}`)).json()
          .integrations as string[];
        await becomesUnready(
          h,
          auth,
          { target_type: "agent", target_name: agent },
          async () => {
            await expectStatus(await call(h, auth, "DELETE", `/api/v1/integrations/${integration}`), 204);
          },
          notReady(
            "NO_INTEGRATIONS",
            `agent ${agent} has no integrations attached that exist (${integration} deleted)`,
            {
              target_type: "agent",
              target_name: agent,
              resolution_hint: `attach at least one integration: PUT /platform/api/v1/agents/${agent} with integrations`,
            },
          ),
        );
      });

      it("WORKFLOW_HAS_NO_STAGES when the new approved version has no stages", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [transformStage],
        });
        await becomesUnready(
          h,
          auth,
          { target_type: "workflow", target_name: workflow },
          () => approveStages(h, auth, workflow, []),
          noStages(workflow),
        );
      });

      it("WORKFLOW_HAS_UNBOUND_STAGE when the new approved version has an unbound stage", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [transformStage],
        });
        await becomesUnready(
          h,
          auth,
          { target_type: "workflow", target_name: workflow },
          () => approveStages(h, auth, workflow, [transformStage, { id: "decide", depends_on: ["only"] }]),
          unbound(workflow, "decide", 2),
        );
      });

      it("WORKFLOW_HAS_UNBOUND_STAGE when a stage's agent was deleted", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          stages: [{ id: "look", agent_ref: agent }],
        });
        await becomesUnready(
          h,
          auth,
          { target_type: "workflow", target_name: workflow },
          async () => {
            await expectStatus(await call(h, auth, "DELETE", `/platform/api/v1/agents/${agent}`), 204);
          },
          unbound(workflow, "look", 1),
        );
      });
    });

    describe("the body as the run's input", () => {
      it("maps JSON objects to inputs and text to `message`; a body the inputs refuse is 202 with its run failed", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const workflow = await approvedWorkflow(h, auth, {
          name: uniqueName("wf"),
          inputs: [{ name: "service", required: true, pattern: "^[a-z-]+$" }],
          stages: [{ id: "echo", action_type: "json_transform", config: { expression: "input" } }],
        });
        const created = await createWebhook(h, auth, {
          name: "inputs",
          target_type: "workflow",
          target_name: workflow,
        });
        const identity = {
          webhook_id: created.id,
          invocation_id: expect.any(String),
          target_type: "workflow",
          target_name: workflow,
        };
        const ok = await trigger(h, created.token, '{"service":"checkout"}', "application/json");
        await expectStatus(ok, 202);
        expect(ok.json()).toEqual({
          ...identity,
          session_id: expect.any(String),
          trace_id: expect.any(String),
          run_id: expect.any(String),
          workflow_version: 1,
        });
        // The run's session holds the body as its first prompt, and a search finds it by it.
        const session = await call(h, auth, "GET", `/platform/api/v1/sessions/${ok.json().session_id}`);
        expect(session.json()).toMatchObject({
          title: "webhook inputs",
          first_prompt: '{"service":"checkout"}',
        });
        const found = await call(h, auth, "GET", "/platform/api/v1/sessions?q=checkout");
        expect(found.json().items.map((item: { id: string }) => item.id)).toContain(ok.json().session_id);
        // A message beside other inputs does not hide them from the prompt and its search.
        const body = '{"message":"disk alert","service":"zebra-svc"}';
        const described = await trigger(h, created.token, body, "application/json");
        await expectStatus(described, 202);
        const zebra = await call(h, auth, "GET", `/platform/api/v1/sessions/${described.json().session_id}`);
        expect(zebra.json()).toMatchObject({ first_prompt: body });
        const byService = await call(h, auth, "GET", "/platform/api/v1/sessions?q=zebra-svc");
        expect(byService.json().items.map((item: { id: string }) => item.id)).toEqual([
          described.json().session_id,
        ]);
        // Every trigger of a named webhook is answered 202 (the spec lists 401, 404 and 423 besides):
        // a body the target's inputs refuse starts nothing, and its run record says why.
        const refusals: [string, string, string][] = [
          ["checkout is down", "text/plain", "input.service: is required"],
          ["", "text/plain", "input.service: is required"],
          ['{"service":"Bad!"}', "application/json", "input.service: does not match ^[a-z-]+$"],
          // A list is not matched by how it prints ("checkout").
          ['{"service":["checkout"]}', "application/json", "input.service: must be text to match ^[a-z-]+$"],
          // JSON that is not an object is the text input message, as text is: service is missing.
          ['["checkout"]', "application/json", "input.service: is required"],
          ["{nope", "application/json", "input.service: is required"],
        ];
        for (const [payload, contentType, msg] of refusals) {
          const response = await trigger(h, created.token, payload, contentType);
          expect(response.statusCode, payload).toBe(202);
          expect(response.json()).toEqual(identity);
          const run = await call(
            h,
            auth,
            "GET",
            `${BASE}/${created.id}/runs/${response.json().invocation_id}`,
          );
          expect(run.json(), payload).toMatchObject({
            status: "failed",
            error: msg,
            trace_id: null,
            session_id: null,
          });
        }
        const runs = (await call(h, auth, "GET", `${BASE}/${created.id}/runs`)).json();
        expect(runs.total).toBe(8);
        expect(runs.runs.map((run: { status: string }) => run.status)).toEqual([
          "failed",
          "failed",
          "failed",
          "failed",
          "failed",
          "failed",
          "accepted",
          "accepted",
        ]);
        expect(runs.runs[5]).toMatchObject({
          error: "input.service: is required",
          trace_id: null,
          outcome: null,
        });
      });

      it("gives a text body's run a session whose first prompt is the text, found by a search for it", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const agent = await readyAgent(h, auth);
        const created = await createWebhook(h, auth, {
          name: "pager",
          target_type: "agent",
          target_name: agent,
        });
        const text = "disk full on db-7, please look";
        const accepted = await trigger(h, created.token, text, "text/plain");
        await expectStatus(accepted, 202);
        const session = await call(h, auth, "GET", `/platform/api/v1/sessions/${accepted.json().session_id}`);
        expect(session.json()).toMatchObject({ title: "webhook pager", first_prompt: text });
        const found = await call(h, auth, "GET", "/platform/api/v1/sessions?q=db-7");
        expect(found.json().items.map((item: { id: string }) => item.id)).toEqual([
          accepted.json().session_id,
        ]);
      });
    });

    itEnforcesAuth(harness, {
      method: "POST",
      scope: "aios_automation_write",
      url: BASE,
      body: { name: "matrix", target_type: "agent", target_name: "matrix" },
    });
    itEnforcesAuth(harness, { method: "GET", scope: "aios_automation_read", url: BASE });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedWebhook(),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "PATCH",
      scope: "aios_automation_write",
      url: ownedWebhook(),
      body: { enabled: false },
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "DELETE",
      scope: "aios_automation_write",
      url: ownedWebhook(),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "POST",
      scope: "aios_automation_write",
      url: ownedWebhook("/rotate-token"),
      ownedResource: true,
    });
  },
  { publicUrl: PUBLIC_URL },
);
