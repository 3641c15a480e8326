// The keys and orgs API: a key manages its own user's keys, never beyond its own scopes and orgs.
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { call, describeEachEngine } from "../../../test/harness.ts";
import { appOfKey, createApiKey, ensureBootstrapKey, generateApiKey, hashSecret, keyPrefix } from "./keys.ts";
import { SCOPES, type Scope } from "./scopes.ts";
import { apiKeys } from "./tables.ts";

const ALL_BUT = (...left: Scope[]) => SCOPES.filter((scope) => !left.includes(scope));

describe("keyPrefix", () => {
  it("shows `vgl_` and 4 characters of a generated key, and at most 1 in 8 of a chosen one", () => {
    const generated = generateApiKey();
    expect(keyPrefix(generated)).toBe(generated.slice(0, 8));
    expect(keyPrefix("0123456789abcdef")).toBe("01");
    expect(keyPrefix("x".repeat(31))).toBe("xxx");
    expect(keyPrefix("y".repeat(32))).toBe("yyyy");
    expect(keyPrefix(`vgl_${"z".repeat(60)}`)).toBe("vgl_");
  });
});

describeEachEngine("keys API", (harness) => {
  itEnforcesAuth(harness, { method: "POST", url: "/api/v1/keys", scope: "api_keys_write", body: {} });
  itEnforcesAuth(harness, { method: "GET", url: "/api/v1/keys", scope: "api_keys_read" });
  itEnforcesAuth(harness, {
    method: "POST",
    url: async (_h, owner) => `/api/v1/keys/${owner.id}/revoke`,
    scope: "api_keys_write",
  });
  itEnforcesAuth(harness, { method: "POST", url: "/api/v1/orgs", scope: "orgs_write", body: { name: "o" } });

  it("creates a key shown once, that works with exactly its scopes, and lists it without the key", async () => {
    const h = harness();
    const caller = await h.createKey();
    const created = await call(h, caller.auth, "POST", "/api/v1/keys", {
      name: "ci",
      scopes: ["integrations_read", "api_keys_read", "integrations_read"],
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "ci",
      prefix: body.key.slice(0, 8),
      scopes: ["integrations_read", "api_keys_read"],
      org_ids: [],
      created_at: expect.any(String),
      revoked_at: null,
      key: expect.stringMatching(/^vgl_[A-Za-z0-9_-]{43}$/),
    });
    const auth = { authorization: `Bearer ${body.key}` };
    expect((await call(h, auth, "GET", "/api/v1/integrations")).statusCode).toBe(200);
    const write = await call(h, auth, "POST", "/api/v1/integrations", { name: "x", type: "grafana" });
    expect(write.statusCode).toBe(403);

    const listed = await call(h, auth, "GET", "/api/v1/keys");
    expect(listed.statusCode).toBe(200);
    const { key, ...shown } = body;
    expect(listed.json()).toEqual([
      expect.objectContaining({ id: caller.id, revoked_at: null, scopes: [...SCOPES] }),
      shown,
    ]);
    expect(listed.body).not.toContain(key);
    expect(listed.body).not.toContain(hashSecret(key));
  });

  it("grants the calling key's own scopes and no org when the body names none", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const caller = await h.createKey({ scopes: ["api_keys_write", "apps_read"], orgIds: [orgId] });
    const created = await call(h, caller.auth, "POST", "/api/v1/keys", {});
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: "", scopes: ["api_keys_write", "apps_read"], org_ids: [] });
  });

  it("never grants a scope or an org the calling key lacks", async () => {
    const h = harness();
    const [mine, other] = [await h.createOrg("mine"), await h.createOrg("other")];
    const caller = await h.createKey({ scopes: ["api_keys_write", "integrations_read"], orgIds: [mine] });
    const escalate = await call(h, caller.auth, "POST", "/api/v1/keys", {
      scopes: ["integrations_read", "integrations_write", "orgs_write"],
    });
    expect(escalate.statusCode).toBe(403);
    expect(escalate.json()).toEqual({
      error: "scopes: this API key cannot grant integrations_write, orgs_write, which it does not hold",
      code: "INSUFFICIENT_SCOPE",
      details: { field: "scopes", scopes: ["integrations_write", "orgs_write"] },
    });
    const foreignOrg = await call(h, caller.auth, "POST", "/api/v1/keys", { org_ids: [mine, other] });
    expect(foreignOrg.statusCode).toBe(404);
    expect(foreignOrg.json()).toEqual({
      error: "organization not found",
      code: "NOT_FOUND",
      details: { field: "org_ids", orgId: other },
    });
    const allowed = await call(h, caller.auth, "POST", "/api/v1/keys", {
      scopes: ["integrations_read"],
      org_ids: [mine.toUpperCase()],
    });
    expect(allowed.statusCode).toBe(201);
    expect(allowed.json()).toMatchObject({ scopes: ["integrations_read"], org_ids: [mine] });
    const inOrg = await call(
      h,
      { authorization: `Bearer ${allowed.json().key}` },
      "GET",
      `/api/v1/integrations?orgId=${mine}`,
    );
    expect(inOrg.statusCode).toBe(200);
  });

  it("makes a key limited to its orgs only from a key limited to them", async () => {
    const h = harness();
    const org = await h.createOrg("limited");
    const limited = await createApiKey(h.vigil.services.database.db, {
      userName: "org-only",
      scopes: ["api_keys_write", "integrations_read"],
      orgIds: [org],
      personalNamespace: false,
    });
    const auth = { authorization: `Bearer ${limited.key}` };
    const made = await call(h, auth, "POST", `/api/v1/keys?orgId=${org}`, { org_ids: [org] });
    expect(made.statusCode, made.body).toBe(201);
    const madeAuth = { authorization: `Bearer ${made.json().key}` };
    expect((await call(h, madeAuth, "GET", `/api/v1/integrations?orgId=${org}`)).statusCode).toBe(200);
    const personal = await call(h, madeAuth, "GET", "/api/v1/integrations");
    expect(personal.statusCode).toBe(403);
    expect(personal.json()).toMatchObject({ code: "INSUFFICIENT_SCOPE", details: { field: "orgId" } });
  });

  it("tells a malformed Authorization header from a well-formed one that holds no key", async () => {
    const h = harness();
    const answer = async (authorization: string) => {
      const response = await call(h, { authorization }, "GET", "/api/v1/keys");
      return [response.statusCode, response.json().error];
    };
    for (const header of ["Basic dXNlcjpwdw==", "Bearer", "Bearer two words"]) {
      expect(await answer(header), header).toEqual([
        401,
        "malformed Authorization header: send Bearer <API key>",
      ]);
    }
    for (const header of ["Bearer short", "Bearer vgl_not-a-key-vigil-issued-0123456789"]) {
      expect(await answer(header), header).toEqual([401, "unknown or revoked API key"]);
    }
  });

  it("answers 400 naming the field for a bad body or id", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const cases: [object, string, string | RegExp][] = [
      [{ scopes: ["everything"] }, "scopes.0", /^scopes\.0: must be .*one of/],
      [{ scopes: [] }, "scopes", "scopes: must NOT have fewer than 1 items"],
      [{ org_ids: ["not-a-uuid"] }, "org_ids.0", 'org_ids.0: must match format "uuid"'],
      [{ name: "n".repeat(201) }, "name", "name: must NOT have more than 200 characters"],
      [{ user: "someone-else" }, "user", "user: is not a known field"],
    ];
    for (const [payload, field, error] of cases) {
      const response = await call(h, auth, "POST", "/api/v1/keys", payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json()).toMatchObject({
        error: typeof error === "string" ? error : expect.stringMatching(error),
        code: "VALIDATION_FAILED",
        details: { field },
      });
    }
    const badId = await call(h, auth, "POST", "/api/v1/keys/123/revoke");
    expect(badId.statusCode).toBe(400);
    expect(badId.json()).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { field: "id", location: "params" },
    });
    const badOrg = await call(h, auth, "POST", "/api/v1/orgs", { name: "" });
    expect(badOrg.statusCode).toBe(400);
    expect(badOrg.json()).toMatchObject({ details: { field: "name" } });
  });

  it("lists and revokes only the caller's user's keys; another user's key is 404", async () => {
    const h = harness();
    const alice = await h.createKey({ userName: "alice" });
    const alicesOther = await h.createKey({ userName: "alice", scopes: ["apps_read"] });
    const bob = await h.createKey({ userName: "bob" });

    const bobsList = await call(h, bob.auth, "GET", "/api/v1/keys");
    expect(bobsList.json().map((key: { id: string }) => key.id)).toEqual([bob.id]);
    const stolen = await call(h, bob.auth, "POST", `/api/v1/keys/${alicesOther.id}/revoke`);
    expect(stolen.statusCode).toBe(404);
    expect(stolen.json()).toEqual({
      error: "API key not found",
      code: "NOT_FOUND",
      details: { id: alicesOther.id },
    });

    const revoked = await call(h, alice.auth, "POST", `/api/v1/keys/${alicesOther.id}/revoke`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toMatchObject({ id: alicesOther.id, revoked_at: expect.any(String) });
    expect((await call(h, alicesOther.auth, "GET", "/api/v1/integrations")).statusCode).toBe(401);
    const again = await call(h, alice.auth, "POST", `/api/v1/keys/${alicesOther.id}/revoke`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: "CONFLICT", details: { id: alicesOther.id } });

    // Listed by creation time, then id: two keys made in the same millisecond come in id order.
    const alicesList = (await call(h, alice.auth, "GET", "/api/v1/keys")).json();
    expect(
      alicesList.map((key: { id: string; revoked_at: string | null }) => [key.id, key.revoked_at !== null]),
    ).toEqual(
      expect.arrayContaining([
        [alice.id, false],
        [alicesOther.id, true],
      ]),
    );
    expect(alicesList).toHaveLength(2);
  });

  it("revokes neither a key holding more than the caller nor a key of another org, but revokes itself", async () => {
    const h = harness();
    const orgId = await h.createOrg();
    const strong = await h.createKey({ userName: "carol" });
    const inOrg = await h.createKey({ userName: "carol", scopes: ["apps_read"], orgIds: [orgId] });
    const weak = await h.createKey({ userName: "carol", scopes: ["api_keys_write", "apps_read"] });

    const up = await call(h, weak.auth, "POST", `/api/v1/keys/${strong.id}/revoke`);
    expect(up.statusCode).toBe(403);
    expect(up.json()).toMatchObject({
      code: "INSUFFICIENT_SCOPE",
      details: { field: "id", scopes: ALL_BUT("api_keys_write", "apps_read"), org_ids: [] },
    });
    const across = await call(h, weak.auth, "POST", `/api/v1/keys/${inOrg.id}/revoke`);
    expect(across.statusCode).toBe(403);
    expect(across.json()).toMatchObject({ details: { field: "id", scopes: [], org_ids: [orgId] } });

    const self = await call(h, weak.auth, "POST", `/api/v1/keys/${weak.id}/revoke`);
    expect(self.statusCode).toBe(200);
    expect((await call(h, weak.auth, "GET", "/api/v1/keys")).statusCode).toBe(401);
    expect((await call(h, strong.auth, "POST", `/api/v1/keys/${inOrg.id}/revoke`)).statusCode).toBe(403);
  });

  it("creates an org the calling key may then act in and give to the keys it creates", async () => {
    const h = harness();
    const caller = await h.createKey({ userName: "dave" });
    const created = await call(h, caller.auth, "POST", "/api/v1/orgs", { name: "payments" });
    expect(created.statusCode).toBe(201);
    const org = created.json();
    expect(org).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "payments",
      created_at: expect.any(String),
    });

    expect((await call(h, caller.auth, "GET", `/api/v1/integrations?orgId=${org.id}`)).statusCode).toBe(200);
    const key = await call(h, caller.auth, "POST", "/api/v1/keys", {
      org_ids: [org.id],
      scopes: ["integrations_read"],
    });
    expect(key.statusCode).toBe(201);
    const auth = { authorization: `Bearer ${key.json().key}` };
    expect((await call(h, auth, "GET", `/api/v1/integrations?orgId=${org.id}`)).statusCode).toBe(200);

    // Another key of the same user does not gain the org.
    const sibling = await h.createKey({ userName: "dave" });
    const outside = await call(h, sibling.auth, "GET", `/api/v1/integrations?orgId=${org.id}`);
    expect(outside.statusCode).toBe(404);
  });

  it("stores at most 2 characters of a 16-character BOOTSTRAP_API_KEY, and shortens an older 8", async () => {
    const h = harness();
    const { db } = h.vigil.services.database;
    const chosen = "bootstrap-0123ab";
    await ensureBootstrapKey(db, chosen);
    const prefixOf = async () =>
      (
        await db
          .select({ prefix: apiKeys.prefix })
          .from(apiKeys)
          .where(eq(apiKeys.keyHash, hashSecret(chosen)))
      )[0]?.prefix;
    expect(await prefixOf()).toBe("bo");
    await db
      .update(apiKeys)
      .set({ prefix: chosen.slice(0, 8) })
      .where(eq(apiKeys.keyHash, hashSecret(chosen)));
    await ensureBootstrapKey(db, chosen);
    expect(await prefixOf()).toBe("bo");
    const listed = await call(h, { authorization: `Bearer ${chosen}` }, "GET", "/api/v1/keys");
    expect(listed.json()).toContainEqual(expect.objectContaining({ name: "bootstrap", prefix: "bo" }));
  });

  it("keeps a revoked BOOTSTRAP_API_KEY revoked when it is made sure of again (a restart)", async () => {
    const h = harness();
    const { db } = h.vigil.services.database;
    const chosen = "bootstrap-revoked-0123";
    expect(await ensureBootstrapKey(db, chosen)).toEqual({ revoked: false });
    const auth = { authorization: `Bearer ${chosen}` };
    const me = await call(h, auth, "GET", "/api/v1/me");
    expect(me.statusCode).toBe(200);
    const id = me.json().key_id as string;
    expect((await call(h, auth, "POST", `/api/v1/keys/${id}/revoke`)).statusCode).toBe(200);
    expect(await ensureBootstrapKey(db, chosen)).toEqual({ revoked: true });
    expect((await call(h, auth, "GET", "/api/v1/me")).statusCode).toBe(401);
  });

  it("documents the routes in the OpenAPI document", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    expect(document.paths["/api/v1/keys"].post.operationId).toBe("createApiKey");
    expect(document.paths["/api/v1/keys"].post.description).toContain("No escalation");
    expect(Object.keys(document.paths["/api/v1/keys/{id}/revoke"].post.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "500",
      "503",
    ]);
    expect(document.paths["/api/v1/orgs"].post.operationId).toBe("createOrg");
  });
});

describe("appOfKey", () => {
  it("names the app of a token Vigil issued, and no app for a person's key named like one", () => {
    expect(appOfKey({ name: "app token: sre", prefix: "vga_AbCd" })).toBe("sre");
    expect(appOfKey({ name: "app token: sre", prefix: "vgl_AbCd" })).toBeNull();
    expect(appOfKey({ name: "ci", prefix: "vga_AbCd" })).toBeNull();
  });
});
