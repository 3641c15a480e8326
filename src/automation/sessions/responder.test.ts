// A session's responder: the target of its latest run, or the installed app that opened it (its
// app token) while it has none. source_app is an audit label any caller sets: it names no responder.
import { expect, it } from "vitest";
import { createApprovedWorkflow } from "../../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, type Harness } from "../../../test/harness.ts";

const ASK = "/platform/api/v1/platform/ask/start";

async function ask(h: Harness, auth: Auth, body: object): Promise<string> {
  const response = await call(h, auth, "POST", ASK, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().session_id;
}

/** The session as its list item (found by id through q) and its detail show it. */
async function shown(h: Harness, auth: Auth, sessionId: string) {
  const detail = await call(h, auth, "GET", `/platform/api/v1/sessions/${sessionId}`);
  expect(detail.statusCode, detail.body).toBe(200);
  const list = await call(h, auth, "GET", `/platform/api/v1/sessions?q=${sessionId}`);
  expect(list.statusCode, list.body).toBe(200);
  expect(list.json().items).toHaveLength(1);
  return { item: list.json().items[0], detail: detail.json() };
}

async function listed(h: Harness, auth: Auth, query: string): Promise<string[]> {
  const response = await call(h, auth, "GET", `/platform/api/v1/sessions?${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().items.map((item: { id: string }) => item.id);
}

describeEachEngine("session responder", (harness) => {
  it("is null for a user's session without a run, whatever its source_app; the app for one its token opened", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const labelled = await ask(h, auth, { message: "zzqx flurble", source_app: "chatops" });
    const unlabelled = await ask(h, auth, { message: "zzqx flurble" });
    for (const id of [labelled, unlabelled]) {
      const { item, detail } = await shown(h, auth, id);
      expect(item).toMatchObject({ id, initiator: expect.stringMatching(/^user:/), execution_count: 0 });
      expect(item.responder).toBeNull();
      expect(detail.responder).toBeNull();
    }
    expect((await shown(h, auth, labelled)).item.source_app).toBe("chatops");

    const installed = await call(h, auth, "PUT", "/api/v1/apps/sre", {});
    expect(installed.statusCode, installed.body).toBe(200);
    const appAuth = { authorization: `Bearer ${installed.json().app_token}` };
    // The app's token labels its Ask with another source_app: the responder is still the app.
    const opened = await ask(h, appAuth, { message: "zzqx flurble", source_app: "chatops" });
    const byApp = await shown(h, auth, opened);
    expect(byApp.item).toMatchObject({ initiator: "app:sre", source_app: "chatops", execution_count: 0 });
    expect(byApp.item.responder).toEqual({ type: "app", name: "sre" });
    expect(byApp.detail.responder).toEqual({ type: "app", name: "sre" });
    expect(await shown(h, appAuth, opened)).toEqual(byApp);

    // q matches the app's name (its initiator) and the source app's, as documented.
    expect(await listed(h, auth, "q=sre")).toEqual([opened]);
    // Sorted: sessions opened within one clock tick may list in either order.
    const labelledPair = [opened, labelled].sort();
    expect((await listed(h, auth, "q=chatops")).sort()).toEqual(labelledPair);
    expect((await listed(h, auth, "source_app=chatops")).sort()).toEqual(labelledPair);
  });

  it("is the latest run's target once a run started, for a user and for the app", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await createApprovedWorkflow(h, auth, {
      name: "echo-input",
      stages: [{ id: "s", action_type: "json_transform", config: { expression: "input" } }],
    });
    const installed = await call(h, auth, "PUT", "/api/v1/apps/sre", {});
    const appAuth = { authorization: `Bearer ${installed.json().app_token}` };
    const pinned = { entity_refs: [{ name: "echo-input", type: "workflow" }], source_app: "chatops" };
    for (const who of [auth, appAuth]) {
      const id = await ask(h, who, { message: "zzqx flurble", ...pinned });
      const { item, detail } = await shown(h, auth, id);
      expect(item.execution_count).toBe(1);
      expect(item.responder).toEqual({ type: "workflow", name: "echo-input" });
      expect(detail.responder).toEqual({ type: "workflow", name: "echo-input" });
    }
    expect(await listed(h, auth, "q=echo-input")).toHaveLength(2);
  });
});
