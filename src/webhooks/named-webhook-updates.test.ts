// A PATCH of a named webhook changes only the fields it gives: read in sequence, and on PostgreSQL
// when it waits on another update of the same webhook (a disable undone by a description edit let
// the token start runs again).
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApprovedWorkflow, uniqueName } from "../../test/automation-runs.ts";
import {
  type Auth,
  call,
  describeEachEngine,
  ENGINES,
  type Harness,
  startHarness,
} from "../../test/harness.ts";
import { sendWhileHeld } from "../../test/lock-wait.ts";
import { webhooks } from "./tables.ts";

const BASE = "/platform/api/v1/webhooks";

/** An enabled webhook on a ready workflow, described "first"; its body as created, token left out. */
async function createWorkflowWebhook(h: Harness, auth: Auth) {
  const workflow = uniqueName("wf");
  await createApprovedWorkflow(h, auth, {
    name: workflow,
    stages: [{ id: "only", action_type: "json_transform", config: { expression: "1" } }],
  });
  const response = await call(h, auth, "POST", BASE, {
    name: uniqueName("hook"),
    target_type: "workflow",
    target_name: workflow,
    description: "first",
  });
  expect(response.statusCode, response.body).toBe(201);
  const { token, platform_webhook_url, trigger_url, ...webhook } = response.json();
  expect([platform_webhook_url, trigger_url]).toHaveLength(2);
  return { webhook, token: token as string };
}

function trigger(h: Harness, token: string) {
  return h.vigil.app.inject({
    method: "POST",
    url: `${BASE}/trigger?apiKey=${encodeURIComponent(token)}`,
    headers: { "content-type": "text/plain" },
    payload: "checkout is down",
  });
}

async function patch(h: Harness, auth: Auth, id: string, body: object) {
  const response = await call(h, auth, "PATCH", `${BASE}/${id}`, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describeEachEngine("named webhook updates", (harness) => {
  it("changes only the fields a PATCH gives", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { webhook, token } = await createWorkflowWebhook(h, auth);
    const updatedAt = expect.any(String);

    expect(await patch(h, auth, webhook.id, { enabled: false })).toEqual({
      ...webhook,
      enabled: false,
      updated_at: updatedAt,
    });
    const described = await patch(h, auth, webhook.id, { description: "second" });
    expect(described).toEqual({ ...webhook, enabled: false, description: "second", updated_at: updatedAt });
    expect(await patch(h, auth, webhook.id, { name: "renamed" })).toEqual({
      ...described,
      name: "renamed",
      updated_at: updatedAt,
    });
    expect((await trigger(h, token)).statusCode).toBe(404);
  });
});

// On PostgreSQL, where two updates of one webhook run at once: the second waits for the first's
// transaction to commit, then writes its field onto what the first wrote.
if (ENGINES.includes("postgres")) {
  describe("named webhook updates at once [postgres]", () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      h = await startHarness("postgres");
    });
    afterAll(async () => {
      await h?.stop();
    });

    it("keeps a disable that commits while a description edit waits, and the token stays refused", async () => {
      const { auth } = await h.createKey();
      const { webhook, token } = await createWorkflowWebhook(h, auth);
      // The disable's write, held open.
      const answer = await sendWhileHeld(
        h.vigil.services.database,
        (tx) =>
          tx
            .update(webhooks)
            .set({ enabled: false, updatedAt: new Date() })
            .where(eq(webhooks.id, webhook.id)),
        () => call(h, auth, "PATCH", `${BASE}/${webhook.id}`, { description: "second" }),
      );
      expect(answer.statusCode, answer.body).toBe(200);
      const expected = { ...webhook, enabled: false, description: "second", updated_at: expect.any(String) };
      expect(answer.json()).toEqual(expected);
      expect((await call(h, auth, "GET", `${BASE}/${webhook.id}`)).json()).toEqual(expected);
      expect((await trigger(h, token)).statusCode).toBe(404);
    });
  });
}
