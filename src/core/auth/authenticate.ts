// Resolves `Authorization: Bearer <API key>` and `orgId` into the request's actor, and enforces the
// route's scope. Routes opt out with `config: { public: true }`; every other route needs a key.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Db } from "../db/database.ts";
import { AppError } from "../errors.ts";
import { givenTwice } from "../http/input-rules.ts";
import { isUuid } from "../ids.ts";
import { appOfKey, findActiveKey, KEY_SHAPE } from "./keys.ts";
import type { Scope } from "./scopes.ts";
import type { Actor } from "./tenancy.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a key needs for this route. */
    scope?: Scope;
    /** No API key: health checks, docs, the webhook trigger (which takes its own token). */
    public?: boolean;
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw new AppError("UNAUTHENTICATED", "missing Authorization header: send Bearer <API key>");
  const match = /^Bearer +(\S+)$/i.exec(header.trim());
  if (!match?.[1]) {
    throw new AppError("UNAUTHENTICATED", "malformed Authorization header: send Bearer <API key>");
  }
  // A well-formed header whose token is no key Vigil issued is refused like any unknown key.
  if (!KEY_SHAPE.test(match[1])) throw new AppError("UNAUTHENTICATED", "unknown or revoked API key");
  return match[1];
}

/** The route that names the calling key (web/caller.ts). */
const CALLER_ROUTE = "/api/v1/me";

function requestedOrg(request: FastifyRequest): string | null {
  const value = (request.query as Record<string, unknown> | undefined)?.orgId;
  if (value === undefined || value === "") return null;
  // Authentication runs before the input rules, which would say the same of any parameter.
  if (Array.isArray(value)) throw givenTwice("orgId", value.length);
  if (typeof value !== "string" || !isUuid(value)) {
    throw new AppError("VALIDATION_FAILED", "orgId: must be a uuid", {
      field: "orgId",
      location: "querystring",
    });
  }
  return value.toLowerCase();
}

export async function authenticate(
  db: Db,
  request: FastifyRequest,
  scope: Scope | undefined,
): Promise<Actor> {
  const key = await findActiveKey(db, bearerToken(request));
  if (!key) throw new AppError("UNAUTHENTICATED", "unknown or revoked API key");
  if (scope && !key.scopes.includes(scope)) {
    throw new AppError("INSUFFICIENT_SCOPE", `this API key lacks the scope ${scope}`, { scope });
  }
  const orgId = requestedOrg(request);
  // An org the key may not act in is reported like a missing one: callers learn nothing about it.
  if (orgId && !key.orgIds.includes(orgId))
    throw new AppError("NOT_FOUND", "organization not found", { orgId });
  // An org app's token: its workspace is the org, never its installing user's own namespace. Who
  // the key is (GET /api/v1/me: its scopes and orgs, read by the console at sign-in) is no data of a
  // namespace, and is answered without one.
  if (!orgId && !key.personalNamespace && request.routeOptions.url !== CALLER_ROUTE) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      "this key acts only in its organization: send ?orgId=<organization id> (an app's mcp_url carries it)",
      { field: "orgId", location: "querystring" },
    );
  }
  return { userId: key.userId, keyId: key.keyId, scopes: key.scopes, orgId, app: appOfKey(key) };
}

export function registerAuthentication(app: FastifyInstance, db: Db): void {
  app.decorateRequest("actor", null);
  app.addHook("onRequest", async (request) => {
    const config = request.routeOptions.config;
    // Unknown routes have no config: let the not-found handler answer 404.
    if (!request.routeOptions.url || config.public) return;
    request.actor = await authenticate(db, request, config.scope);
  });
}

/** The authenticated caller of a route that is not public. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new AppError("UNAUTHENTICATED", "authentication required");
  return request.actor;
}
