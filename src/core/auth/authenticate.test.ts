// Where a key acts: a key without the personal namespace (an org app's token) acts only in its orgs,
// and still may ask who it is without naming one (the console strips orgId from that call).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { call, describeEachEngine } from "../../../test/harness.ts";
import { createApiKey, keyPrefix } from "./keys.ts";

describeEachEngine("authenticate: a key limited to its org", (harness) => {
  it("answers GET /api/v1/me without orgId, naming its org, and refuses other routes without one", async () => {
    const h = harness();
    const orgId = await h.createOrg("ops");
    const created = await createApiKey(h.vigil.services.database.db, {
      userName: `user-${randomUUID()}`,
      name: "org only",
      scopes: ["apps_read"],
      orgIds: [orgId],
      personalNamespace: false,
    });
    const auth = { authorization: `Bearer ${created.key}` };

    const me = await call(h, auth, "GET", "/api/v1/me");
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toEqual({
      key_id: created.id,
      key_name: "org only",
      key_prefix: keyPrefix(created.key),
      scopes: ["apps_read"],
      orgs: [{ id: orgId, name: "ops" }],
      features: expect.any(Object),
    });
    expect((await call(h, auth, "GET", `/api/v1/me?orgId=${orgId}`)).json()).toEqual(me.json());
    // An org it may not act in is still 404, as everywhere.
    const foreign = randomUUID();
    const elsewhere = await call(h, auth, "GET", `/api/v1/me?orgId=${foreign}`);
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json()).toEqual({
      error: "organization not found",
      code: "NOT_FOUND",
      details: { orgId: foreign },
    });

    // Every other route acts in a namespace: without orgId, 403 naming it.
    const apps = await call(h, auth, "GET", "/api/v1/apps");
    expect(apps.statusCode).toBe(403);
    expect(apps.json()).toEqual({
      error:
        "this key acts only in its organization: send ?orgId=<organization id> (an app's mcp_url carries it)",
      code: "INSUFFICIENT_SCOPE",
      details: { field: "orgId", location: "querystring" },
    });
    expect((await call(h, auth, "GET", `/api/v1/apps?orgId=${orgId}`)).statusCode).toBe(200);
  });
});
