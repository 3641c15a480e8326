import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { call, describeEachEngine, type Harness } from "../../test/harness.ts";

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

// A Prometheus stand-in on loopback that records the Authorization header of each call.
let server: Server;
let port = 0;
const authorizations: (string | undefined)[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ status: "success", data: { version: "2.53.0" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describeEachEngine(
  "integrations: user info in the url",
  (harness) => {
    const sealedCredentials = async (h: Harness, name: string) => {
      const { rows } = await h.vigil.services.database.db.execute(
        sql`select credentials_sealed from integrations where name = ${name}`,
      );
      return JSON.parse(h.vigil.services.secrets.decrypt(String(rows[0]?.credentials_sealed)));
    };
    /** Every read that shows the tenant's integrations or their use: none may show `secret`. */
    const readsOf = async (h: Harness, auth: { authorization: string }, name: string) => {
      const reads = await Promise.all(
        [`/api/v1/integrations/${name}`, "/api/v1/integrations", "/api/v1/apps/sre", "/api/setup"].map(
          (url) => call(h, auth, "GET", url),
        ),
      );
      for (const read of reads) expect(read.statusCode, read.body).toBe(200);
      return reads.map((read) => read.body);
    };

    it("takes user info out of the url into the sealed credentials: no read shows the password, calls still send it", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const base = `http://127.0.0.1:${port}`;
      const created = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "icr",
        type: "prometheus",
        url: `http://u%40corp:p4ss%2Fw0rd@127.0.0.1:${port}`,
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({ url: base, has_credentials: true });
      expect(await sealedCredentials(h, "icr")).toEqual({ username: "u@corp", password: "p4ss/w0rd" });
      expect((await call(h, auth, "PUT", "/api/v1/apps/sre", { integrations: ["icr"] })).statusCode).toBe(
        200,
      );

      authorizations.length = 0;
      const reads = await readsOf(h, auth, "icr");
      expect(JSON.parse(reads[0] as string)).toEqual(created.json());
      for (const body of [created.body, ...reads]) expect(body).not.toMatch(/p4ss/);
      // The setup probe reached the stand-in with the credentials as basic auth.
      expect(JSON.parse(reads[3] as string).integrations).toEqual([
        { name: "icr", type: "prometheus", bound: true, reachable: true },
      ]);
      expect(authorizations).toEqual([basic("u@corp", "p4ss/w0rd")]);

      // An update's user info replaces the credentials, as credentials given in the body would.
      const updated = await call(h, auth, "PUT", "/api/v1/integrations/icr", {
        name: "icr",
        type: "prometheus",
        url: `http://v:n3w@127.0.0.1:${port}/prom/`,
      });
      expect(updated.json()).toMatchObject({ url: `${base}/prom/`, has_credentials: true });
      expect(updated.body).not.toContain("n3w");
      expect(await sealedCredentials(h, "icr")).toEqual({ username: "v", password: "n3w" });

      // Given in the url and in credentials both: which one is meant is unclear.
      for (const credentials of [{ password: "x" }, { username: "u" }]) {
        const both = await call(h, auth, "POST", "/api/v1/integrations", {
          name: "both",
          type: "prometheus",
          url: "https://u:p@x.example.com",
          credentials,
        });
        expect(both.statusCode).toBe(400);
        expect(both.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "url" } });
        expect(both.json().error).toMatch(/^url: /);
      }
      // Credentials of another name go along: a token (sent as a bearer token, before basic auth).
      const withToken = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "tok",
        type: "prometheus",
        url: "https://u:p@x.example.com",
        credentials: { token: "t" },
      });
      expect(withToken.json()).toMatchObject({ url: "https://x.example.com", has_credentials: true });
      expect(await sealedCredentials(h, "tok")).toEqual({ token: "t", username: "u", password: "p" });
    });

    it("reads an integration stored with user info in its url without it, and still calls with it", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "legacy",
        type: "prometheus",
        url: `http://127.0.0.1:${port}`,
      });
      expect(created.statusCode).toBe(201);
      // As a row written before user info was moved out of the url.
      await h.vigil.services.database.db.execute(
        sql`update integrations set url = ${`http://old:l3gacy@127.0.0.1:${port}`} where name = 'legacy'`,
      );
      expect((await call(h, auth, "PUT", "/api/v1/apps/sre", { integrations: ["legacy"] })).statusCode).toBe(
        200,
      );
      authorizations.length = 0;
      const reads = await readsOf(h, auth, "legacy");
      for (const body of reads) expect(body).not.toMatch(/l3gacy|old:/);
      expect(JSON.parse(reads[0] as string)).toEqual({ ...created.json(), has_credentials: true });
      expect(authorizations).toEqual([basic("old", "l3gacy")]);
    });

    it("keeps a git remote's credentials for git: the password as its token, an ssh login in the url", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const https = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "repo",
        type: "git",
        url: "https://bot:ghp_s3cret@127.0.0.1/org/repo.git",
      });
      expect(https.json()).toMatchObject({ url: "https://127.0.0.1/org/repo.git", has_credentials: true });
      expect(await sealedCredentials(h, "repo")).toEqual({ username: "bot", token: "ghp_s3cret" });

      const ssh = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "ssh-repo",
        type: "git",
        url: "ssh://git@127.0.0.1/org/repo.git",
      });
      expect(ssh.json()).toMatchObject({ url: "ssh://git@127.0.0.1/org/repo.git", has_credentials: false });
      const sshPassword = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "ssh-pw",
        type: "git",
        url: "ssh://git:pw@127.0.0.1/org/repo.git",
      });
      expect(sshPassword.statusCode).toBe(400);
      expect(sshPassword.json()).toMatchObject({ details: { field: "url" } });
      expect(sshPassword.json().error).toBe(
        "url: an ssh:// remote signs in with a key: remove the password from the url",
      );
    });
  },
  { integrationAllowedHosts: ["127.0.0.1", "x.example.com"] },
);
