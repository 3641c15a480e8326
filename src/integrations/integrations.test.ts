import { expect, it } from "vitest";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { describeEachEngine, type Harness } from "../../test/harness.ts";

async function create(h: Harness, auth: { authorization: string }, body: object, query = "") {
  return h.vigil.app.inject({
    method: "POST",
    url: `/api/v1/integrations${query}`,
    headers: auth,
    payload: body,
  });
}

const ownedUrl = async (h: Harness, owner: { auth: { authorization: string } }) => {
  const name = `am-${Math.random().toString(36).slice(2, 8)}`;
  const response = await create(h, owner.auth, { name, type: "alertmanager" });
  expect(response.statusCode).toBe(201);
  return `/api/v1/integrations/${name}`;
};

describeEachEngine("integrations", (harness) => {
  it("creates, reads, lists, updates and deletes an integration without ever returning credentials", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const created = await create(h, auth, {
      name: "prod-alertmanager",
      type: "alertmanager",
      url: "http://alertmanager.example:9093",
      description: "production cluster",
      credentials: { token: "s3cret" },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "prod-alertmanager",
      type: "alertmanager",
      url: "http://alertmanager.example:9093",
      description: "production cluster",
      settings: {},
      has_credentials: true,
      org_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(created.body).not.toContain("s3cret");

    const read = await h.vigil.app.inject({ url: "/api/v1/integrations/prod-alertmanager", headers: auth });
    expect(read.json()).toEqual(body);

    const updated = await h.vigil.app.inject({
      method: "PUT",
      url: "/api/v1/integrations/prod-alertmanager",
      headers: auth,
      payload: {
        name: "prod-alertmanager",
        type: "alertmanager",
        url: "https://am.example",
        credentials: null,
      },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({
      url: "https://am.example",
      has_credentials: false,
      description: "",
    });

    const list = await h.vigil.app.inject({ url: "/api/v1/integrations", headers: auth });
    expect(list.json().map((item: { name: string }) => item.name)).toEqual(["prod-alertmanager"]);

    const removed = await h.vigil.app.inject({
      method: "DELETE",
      url: "/api/v1/integrations/prod-alertmanager",
      headers: auth,
    });
    expect(removed.statusCode).toBe(204);
    const gone = await h.vigil.app.inject({ url: "/api/v1/integrations/prod-alertmanager", headers: auth });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({
      error: "integration not found",
      code: "NOT_FOUND",
      details: { name: "prod-alertmanager" },
    });
  });

  it("keeps the credentials sealed at rest", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    await create(h, auth, { name: "gh", type: "github", credentials: { token: "ghp_plaintext" } });
    const { rows } = await h.vigil.services.database.db.execute(
      // biome-ignore lint/suspicious/noExplicitAny: raw SQL in a test
      (await import("drizzle-orm")).sql`select credentials_sealed from integrations where name = 'gh'` as any,
    );
    const sealed = String(rows[0]?.credentials_sealed);
    expect(sealed).not.toContain("ghp_plaintext");
    expect(JSON.parse(h.vigil.services.secrets.decrypt(sealed))).toEqual({ token: "ghp_plaintext" });
  });

  it("answers 409 for a second integration with the same name in one tenant", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    expect((await create(h, auth, { name: "dup", type: "grafana" })).statusCode).toBe(201);
    const second = await create(h, auth, { name: "dup", type: "grafana" });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({
      error: "integration dup already exists",
      code: "CONFLICT",
      details: { name: "dup" },
    });
  });

  it("keeps org and personal namespaces apart, and lets two tenants use one name", async () => {
    const h = harness();
    const orgId = await h.createOrg("payments");
    const alice = await h.createKey({ orgIds: [orgId] });
    const bob = await h.createKey({ orgIds: [orgId] });
    expect(
      (await create(h, alice.auth, { name: "shared", type: "grafana" }, `?orgId=${orgId}`)).statusCode,
    ).toBe(201);
    expect((await create(h, alice.auth, { name: "shared", type: "grafana" })).statusCode).toBe(201);
    const inOrg = await h.vigil.app.inject({ url: `/api/v1/integrations?orgId=${orgId}`, headers: bob.auth });
    expect(inOrg.json()).toEqual([expect.objectContaining({ name: "shared", org_id: orgId })]);
    const bobPersonal = await h.vigil.app.inject({ url: "/api/v1/integrations", headers: bob.auth });
    expect(bobPersonal.json()).toEqual([]);
  });

  it("rejects invalid input with 400 naming the field", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const cases: [object, string][] = [
      [{ type: "grafana" }, "name"],
      [{ name: "Bad Name", type: "grafana" }, "name"],
      [{ name: "ok", type: "grafana", url: "ftp://x" }, "url"],
      [{ name: "ok", type: "grafana", extra: 1 }, "extra"],
      [{ name: "ok", type: "grafana", credentials: { token: 5 } }, "credentials.token"],
    ];
    for (const [body, field] of cases) {
      const response = await create(h, auth, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      expect(response.json().error).toContain(field);
    }
  });

  itEnforcesAuth(harness, { method: "GET", scope: "integrations_read", url: ownedUrl, ownedResource: true });
  itEnforcesAuth(harness, { method: "GET", scope: "integrations_read", url: "/api/v1/integrations" });
  itEnforcesAuth(harness, {
    method: "DELETE",
    scope: "integrations_write",
    url: ownedUrl,
    ownedResource: true,
  });
  itEnforcesAuth(harness, {
    method: "POST",
    scope: "integrations_write",
    url: "/api/v1/integrations",
    body: { name: "x", type: "grafana" },
  });
});

describeEachEngine(
  "integrations under INTEGRATION_ALLOWED_HOSTS",
  (harness) => {
    it("accepts a url whose host is on the list and refuses any other with 400 naming url", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      for (const url of ["http://alertmanager.internal:9093", "https://10.0.0.5:9443/am", undefined]) {
        const name = `ok-${Math.random().toString(36).slice(2, 8)}`;
        const response = await create(h, auth, { name, type: "alertmanager", ...(url ? { url } : {}) });
        expect(response.statusCode, url).toBe(201);
      }
      for (const url of [
        "http://alertmanager.internal:8080",
        "http://169.254.169.254/latest/meta-data",
        "http://alertmanager.internal.evil.example:9093",
      ]) {
        const response = await create(h, auth, { name: "refused", type: "alertmanager", url });
        expect(response.statusCode, url).toBe(400);
        expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "url" } });
        expect(response.json().error).toBe(
          `url: host ${new URL(url).host} is not on INTEGRATION_ALLOWED_HOSTS`,
        );
      }
      expect(
        (await h.vigil.app.inject({ url: "/api/v1/integrations/refused", headers: auth })).statusCode,
      ).toBe(404);
    });

    it("refuses an update to a host off the list and keeps the stored url", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = "http://alertmanager.internal:9093";
      expect((await create(h, auth, { name: "am", type: "alertmanager", url })).statusCode).toBe(201);
      const moved = await h.vigil.app.inject({
        method: "PUT",
        url: "/api/v1/integrations/am",
        headers: auth,
        payload: { name: "am", type: "alertmanager", url: "http://metadata.google.internal/" },
      });
      expect(moved.statusCode).toBe(400);
      expect(moved.json()).toMatchObject({ details: { field: "url" } });
      const stored = await h.vigil.app.inject({ url: "/api/v1/integrations/am", headers: auth });
      expect(stored.json()).toMatchObject({ url });
    });
  },
  { integrationAllowedHosts: ["alertmanager.internal:9093", "10.0.0.5"] },
);
