// CRUD of named webhooks (agent and workflow targets). Alert-ingest webhooks are managed by
// POST /app/{app_name}/api/v1/alerts/webhook and answer 404 here.
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import { OrgQuery, Uuid } from "../core/http/schemas.ts";
import {
  createNamedWebhook,
  deleteNamedWebhook,
  getNamedWebhook,
  listNamedWebhooks,
  rotateNamedWebhookToken,
  updateNamedWebhook,
} from "./named-webhooks.ts";
import {
  NAMED_TARGET_TYPES,
  Webhook,
  WebhookCreate,
  WebhookList,
  WebhookUpdate,
  WebhookWithToken,
} from "./schemas.ts";
import type { WebhookTargets } from "./targets.ts";

const tags = ["webhooks"];
const jsonError = { $ref: "JsonError#" };
const read = { scope: "aios_automation_read" } as const;
const write = { scope: "aios_automation_write" } as const;
const Query = Type.Object(OrgQuery);
const Params = Type.Object({ webhook_id: Uuid("The webhook id") });
const notFound = {
  ...jsonError,
  description: "Unknown, deleted, another tenant's, or an alert-ingest webhook (managed by its registration)",
};
const notReady = {
  ...jsonError,
  description:
    "Invalid input naming the field, or (enabled webhooks) a target not safe to run unattended: errCode " +
    "TARGET_NOT_FOUND, NO_INTEGRATIONS, WORKFLOW_HAS_NO_STAGES or WORKFLOW_HAS_UNBOUND_STAGE with extras " +
    "[{target_type, target_name, unbound_stage_id (null unless a stage is unbound), total_stages (0 for agents and missing targets), resolution_hint}]",
};

export async function namedWebhooksRoutes(instance: FastifyInstance, options: { targets: WebhookTargets }) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  for (const schema of [WebhookCreate, WebhookUpdate, Webhook, WebhookWithToken, WebhookList]) {
    app.addSchema(schema);
  }
  const { targets } = options;

  app.post(
    "/platform/api/v1/webhooks",
    {
      config: write,
      schema: {
        operationId: "createWebhook",
        tags,
        description:
          "Creates a webhook that starts an agent or a workflow. The token is shown only in this answer.",
        querystring: Query,
        body: Type.Ref("WebhookCreate"),
        response: {
          201: Type.Ref("WebhookWithToken"),
          400: notReady,
          409: { ...jsonError, description: "A live webhook of the tenant has this name" },
        },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createNamedWebhook({ ctx: contextOf(request), targets, input: request.body as WebhookCreate });
    },
  );

  app.get(
    "/platform/api/v1/webhooks",
    {
      config: read,
      schema: {
        operationId: "listWebhooks",
        tags,
        description:
          "Named webhooks of the tenant by name, without tokens; alert-ingest webhooks are not listed.",
        querystring: Type.Object({
          ...OrgQuery,
          target_type: Type.Optional(Type.Union(NAMED_TARGET_TYPES.map((type) => Type.Literal(type)))),
          target_name: Type.Optional(Type.String({ maxLength: 63 })),
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
        }),
        response: { 200: Type.Ref("WebhookListResponse") },
      },
    },
    async (request) =>
      listNamedWebhooks({
        ctx: contextOf(request),
        targets,
        input: {
          limit: request.query.limit,
          offset: request.query.offset,
          targetType: request.query.target_type,
          targetName: request.query.target_name,
        },
      }),
  );

  app.get(
    "/platform/api/v1/webhooks/:webhook_id",
    {
      config: read,
      schema: {
        operationId: "getWebhook",
        tags,
        description: "The webhook and its target's readiness; never its token.",
        params: Params,
        querystring: Query,
        response: { 200: Type.Ref("Webhook"), 404: notFound },
      },
    },
    async (request) =>
      getNamedWebhook({ ctx: contextOf(request), targets, input: { webhookId: request.params.webhook_id } }),
  );

  app.patch(
    "/platform/api/v1/webhooks/:webhook_id",
    {
      config: write,
      schema: {
        operationId: "updateWebhook",
        tags,
        description: "Changes the name, the target or the enabled flag; the token stays.",
        params: Params,
        querystring: Query,
        body: Type.Ref("WebhookUpdate"),
        response: {
          200: Type.Ref("Webhook"),
          400: notReady,
          404: notFound,
          409: { ...jsonError, description: "A live webhook of the tenant has this name" },
        },
      },
    },
    async (request) =>
      updateNamedWebhook({
        ctx: contextOf(request),
        targets,
        input: { webhookId: request.params.webhook_id, changes: request.body as WebhookUpdate },
      }),
  );

  app.delete(
    "/platform/api/v1/webhooks/:webhook_id",
    {
      config: write,
      schema: {
        operationId: "deleteWebhook",
        tags,
        description: "Soft delete: its token then answers 404 on trigger, and its runs endpoints answer 404.",
        params: Params,
        querystring: Query,
        response: { 204: Type.Null(), 404: notFound },
      },
    },
    async (request, reply) => {
      await deleteNamedWebhook({
        ctx: contextOf(request),
        targets,
        input: { webhookId: request.params.webhook_id },
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/platform/api/v1/webhooks/:webhook_id/rotate-token",
    {
      config: write,
      schema: {
        operationId: "rotateWebhookToken",
        tags,
        description: "A new token, shown only in this answer; the old one answers 401 at once.",
        params: Params,
        querystring: Query,
        response: { 200: Type.Ref("WebhookWithToken"), 404: notFound },
      },
    },
    async (request) =>
      rotateNamedWebhookToken({
        ctx: contextOf(request),
        targets,
        input: { webhookId: request.params.webhook_id },
      }),
  );
}
