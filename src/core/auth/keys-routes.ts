// API keys and orgs over HTTP, so that a running Vigil can be administered without its data
// directory (the embedded database takes one process at a time). The rule is in key-admin.ts.
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../context.ts";
import { Uuid } from "../http/schemas.ts";
import { createKey, createOrgForCaller, listKeys, revokeKey } from "./key-admin.ts";
import { ApiKey, ApiKeyWrite, CreatedApiKey, Org, OrgWrite } from "./keys-schemas.ts";

const tags = ["keys"];
const IdParams = Type.Object({ id: Uuid("API key id") });
const errorResponse = (description: string) => ({ $ref: "ErrorResponse#", description });
const USER_LEVEL = " Keys belong to the calling key's user, not to an org: `orgId` selects nothing here.";

export async function keysRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  for (const schema of [ApiKeyWrite, ApiKey, CreatedApiKey, OrgWrite, Org]) app.addSchema(schema);

  app.post(
    "/api/v1/keys",
    {
      config: { scope: "api_keys_write" },
      schema: {
        operationId: "createApiKey",
        tags,
        description:
          "Creates a key for the calling key's user; the answer is the only time the key is shown. " +
          "No escalation: `scopes` must be scopes the calling key holds (403 INSUFFICIENT_SCOPE naming " +
          "them otherwise) and `org_ids` orgs it may act in (404 naming the first other one)." +
          USER_LEVEL,
        body: ApiKeyWrite,
        response: {
          201: CreatedApiKey,
          403: errorResponse("The key lacks api_keys_write, or a scope in `scopes`"),
          404: errorResponse("An org in `org_ids` the calling key may not act in"),
        },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createKey({ ctx: contextOf(request), input: request.body });
    },
  );

  app.get(
    "/api/v1/keys",
    {
      config: { scope: "api_keys_read" },
      schema: {
        operationId: "listApiKeys",
        tags,
        description: `The keys of the calling key's user, revoked ones included, oldest first; never the keys themselves.${USER_LEVEL}`,
        response: { 200: Type.Array(ApiKey) },
      },
    },
    async (request) => listKeys({ ctx: contextOf(request) }),
  );

  app.post(
    "/api/v1/keys/:id/revoke",
    {
      config: { scope: "api_keys_write" },
      schema: {
        operationId: "revokeApiKey",
        tags,
        description:
          "Revokes a key of the calling key's user (another user's key is 404); it stops working at once. " +
          "A key may revoke itself, but not a key holding a scope or org it lacks (403). The key stays " +
          "listed with its `revoked_at`." +
          USER_LEVEL,
        params: IdParams,
        response: {
          200: ApiKey,
          403: errorResponse("The key lacks api_keys_write, or the target holds more than the key"),
          404: errorResponse("No such key of the caller's user"),
          409: errorResponse("The key is already revoked"),
        },
      },
    },
    async (request) => revokeKey({ ctx: contextOf(request), input: request.params }),
  );

  app.post(
    "/api/v1/orgs",
    {
      config: { scope: "orgs_write" },
      schema: {
        operationId: "createOrg",
        tags: ["orgs"],
        description:
          "Creates an org and adds it to the calling key's orgs, so that the key may act in it " +
          "(`orgId`) and give it to the keys it creates (`org_ids`).",
        body: OrgWrite,
        response: { 201: Org },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createOrgForCaller({ ctx: contextOf(request), input: request.body });
    },
  );
}
