// The shared authentication and tenancy matrix. Every protected endpoint opts in with one call:
//   itEnforcesAuth(harness, { method: "GET", scope: "integrations_read", url: async (h, owner) => ... })
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SCOPES, type Scope } from "../src/core/auth/scopes.ts";
import type { Harness } from "./harness.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Owner = Awaited<ReturnType<Harness["createKey"]>>;

export interface ProtectedRoute {
  method: Method;
  scope: Scope;
  /** The URL to call. A function may first create the resource as `owner`. */
  url: string | ((harness: Harness, owner: Owner) => Promise<string>);
  body?: unknown;
  /** The URL names one resource of the owner's: any other tenant must get 404. */
  ownedResource?: boolean;
}

function withQuery(url: string, query: string): string {
  return url + (url.includes("?") ? "&" : "?") + query;
}

function expectError(
  url: string,
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  code: string,
) {
  expect(response.statusCode).toBe(status);
  if (status === 401) expect(response.headers["www-authenticate"]).toMatch(/^Bearer realm="vigil"/);
  const body = response.json() as Record<string, unknown>;
  if (url.startsWith("/platform/")) expect(body).toMatchObject({ errCode: code, msg: expect.any(String) });
  else expect(body).toMatchObject({ code, error: expect.any(String) });
}

export function itEnforcesAuth(harness: () => Harness, route: ProtectedRoute): void {
  const label = typeof route.url === "string" ? route.url : "(resource url)";
  describe(`auth matrix: ${route.method} ${label}`, () => {
    async function call(headers: Record<string, string>, query?: string) {
      const h = harness();
      const owner = await h.createKey();
      const raw = typeof route.url === "string" ? route.url : await route.url(h, owner);
      const url = query ? withQuery(raw, query) : raw;
      const response = await h.vigil.app.inject({
        method: route.method,
        url,
        headers,
        payload: route.body as never,
      });
      return { url, response };
    }

    it("401 without a key", async () => {
      const { url, response } = await call({});
      expectError(url, response, 401, "UNAUTHENTICATED");
    });

    it("401 with a malformed Authorization header", async () => {
      for (const authorization of ["Bearer", "Basic dXNlcjpwYXNz", "Bearer two words", "Bearer short"]) {
        const { url, response } = await call({ authorization });
        expectError(url, response, 401, "UNAUTHENTICATED");
      }
    });

    it("401 with an unknown key", async () => {
      const { url, response } = await call({ authorization: `Bearer vgl_${randomUUID()}` });
      expectError(url, response, 401, "UNAUTHENTICATED");
    });

    it("401 with a revoked key", async () => {
      const key = await harness().createKey();
      await harness().revokeKey(key.id);
      const { url, response } = await call(key.auth);
      expectError(url, response, 401, "UNAUTHENTICATED");
    });

    it(`403 without the scope ${route.scope}`, async () => {
      const key = await harness().createKey({ scopes: SCOPES.filter((scope) => scope !== route.scope) });
      const { url, response } = await call(key.auth);
      expectError(url, response, 403, "INSUFFICIENT_SCOPE");
    });

    it("404 for an org the key may not act in", async () => {
      const key = await harness().createKey();
      const { url, response } = await call(key.auth, `orgId=${randomUUID()}`);
      expectError(url, response, 404, "NOT_FOUND");
    });

    it("400 for an orgId that is not a uuid", async () => {
      const key = await harness().createKey();
      const { url, response } = await call(key.auth, "orgId=not-a-uuid");
      expectError(url, response, 400, "VALIDATION_FAILED");
    });

    if (route.ownedResource) {
      it("404 for another tenant's resource", async () => {
        const stranger = await harness().createKey();
        const { url, response } = await call(stranger.auth);
        expectError(url, response, 404, "NOT_FOUND");
      });

      it("404 for a personal resource read from inside an org", async () => {
        const h = harness();
        const orgId = await h.createOrg();
        const owner = await h.createKey({ orgIds: [orgId] });
        const raw = typeof route.url === "string" ? route.url : await route.url(h, owner);
        const url = withQuery(raw, `orgId=${orgId}`);
        const response = await h.vigil.app.inject({
          method: route.method,
          url,
          headers: owner.auth,
          payload: route.body as never,
        });
        expectError(url, response, 404, "NOT_FOUND");
      });
    }
  });
}
