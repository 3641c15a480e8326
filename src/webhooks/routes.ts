import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { contextOf } from "../core/context.ts";
import { givenTwice } from "../core/http/input-rules.ts";
import { anyRawBody, OrgQuery, Uuid } from "../core/http/schemas.ts";
import { decodeContent } from "./content-coding.ts";
import { namedWebhooksRoutes } from "./named-routes.ts";
import { getWebhookRun, listWebhookRuns } from "./runs.ts";
import { AlertOutcome, TriggerAccepted, WebhookRun, WebhookRunDetail, WebhookRunList } from "./schemas.ts";
import type { WebhookTargets } from "./targets.ts";
import { triggerWebhook, webhookOfToken } from "./trigger.ts";
import type { WebhookRow } from "./webhooks.ts";

const tags = ["webhooks"];
const jsonError = { $ref: "JsonError#" };
/** Each trigger request's Content-Type as sent (the route reads every body as bytes). */
const sentContentTypes = new WeakMap<FastifyRequest, string | undefined>();
const webhooksOfTriggers = new WeakMap<FastifyRequest, WebhookRow>();

/** The webhook token of a trigger: `apiKey` in the query, else `Authorization: Bearer <token>`. */
function tokenOf(request: FastifyRequest): string | null {
  const apiKey = (request.query as { apiKey?: unknown }).apiKey;
  // Read before the rule that refuses a repeated query parameter runs: the same rule, here.
  if (Array.isArray(apiKey)) throw givenTwice("apiKey", apiKey.length);
  if (typeof apiKey === "string" && apiKey) return apiKey;
  return /^Bearer +(\S+)$/i.exec(request.headers.authorization?.trim() ?? "")?.[1] ?? null;
}

export async function webhooksRoutes(instance: FastifyInstance, options: { targets: WebhookTargets }) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  for (const schema of [AlertOutcome, TriggerAccepted, WebhookRun, WebhookRunList, WebhookRunDetail]) {
    app.addSchema(schema);
  }
  await app.register(namedWebhooksRoutes, { targets: options.targets });

  // The spec's polling rule names the run record without the platform prefix
  // (/api/v1/webhooks/{webhook_id}/runs/{invocation_id}): both paths serve it, the API document
  // shows the platform one.
  for (const [prefix, hide] of [
    ["/platform/api/v1", false],
    ["/api/v1", true],
  ] as const) {
    app.get(
      `${prefix}/webhooks/:webhook_id/runs`,
      {
        config: { scope: "aios_automation_read" },
        schema: {
          operationId: "listWebhookRuns",
          hide,
          tags,
          params: Type.Object({ webhook_id: Uuid() }),
          querystring: Type.Object({
            ...OrgQuery,
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
            offset: Type.Integer({ minimum: 0, default: 0 }),
          }),
          response: { 200: Type.Ref("WebhookRunListResponse") },
        },
      },
      async (request) =>
        listWebhookRuns({
          ctx: contextOf(request),
          input: {
            webhookId: request.params.webhook_id,
            limit: request.query.limit,
            offset: request.query.offset,
          },
        }),
    );

    app.get(
      `${prefix}/webhooks/:webhook_id/runs/:run_id`,
      {
        config: { scope: "aios_automation_read" },
        schema: {
          operationId: "getWebhookRun",
          hide,
          tags,
          params: Type.Object({
            webhook_id: Uuid(),
            run_id: Type.String({
              minLength: 1,
              maxLength: 200,
              description: "Invocation id or execution run id",
            }),
          }),
          querystring: Type.Object(OrgQuery),
          response: { 200: Type.Ref("WebhookRunDetail") },
        },
      },
      async (request) =>
        getWebhookRun({
          ctx: contextOf(request),
          input: { webhookId: request.params.webhook_id, runId: request.params.run_id },
        }),
    );
  }

  // The trigger takes any content type (SNS posts text/plain) and keeps the body as received.
  await app.register(async (trigger) => {
    trigger.removeAllContentTypeParsers();
    // Fastify answers 415 for a Content-Type it cannot parse (`foo`, `a/b/c`) before the handler
    // runs: such a sender got 415 without its token being read, and the delivery went unrecorded.
    // The body is read as bytes whatever the header says; the header is kept as sent for the record.
    trigger.addHook("onRequest", async (request) => {
      sentContentTypes.set(request, request.headers["content-type"]);
      request.headers["content-type"] = "application/octet-stream";
    });
    // The token is checked before the body is read: a sender without one is answered 401 at once,
    // and cannot hold a connection open by sending its body slowly.
    trigger.addHook("preParsing", async (request) => {
      webhooksOfTriggers.set(request, await webhookOfToken(trigger.services, tokenOf(request)));
    });
    const limitBytes = trigger.services.config.webhookBodyLimitBytes;
    trigger.addContentTypeParser(
      "*",
      { parseAs: "buffer", bodyLimit: limitBytes },
      async (request: FastifyRequest, body: Buffer) => {
        const content = await decodeContent(body, request.headers["content-encoding"], limitBytes);
        // The record holds the decoded body, so it no longer names the coding it arrived in.
        if (content.decoded) delete request.headers["content-encoding"];
        return content.body;
      },
    );
    trigger.withTypeProvider<TypeBoxTypeProvider>().post(
      "/platform/api/v1/webhooks/trigger",
      {
        config: { public: true },
        bodyLimit: trigger.services.config.webhookBodyLimitBytes,
        schema: {
          operationId: "triggerWebhook",
          tags,
          description:
            "Public: authenticated by the webhook token in `apiKey` or `Authorization: Bearer <WEBHOOK_TOKEN>`, " +
            "never by an API key. Any content type; the body is recorded exactly as received, after undoing a " +
            "Content-Encoding of gzip, deflate or br (the limit applies before and after decoding). " +
            "Agent and workflow targets: the run starts in the same transaction as the invocation record; " +
            "a JSON object body (application/json or +json) becomes the run's inputs, any other body the input " +
            "`message` (text as received, a JSON string's value, other JSON as its text); an empty body gives " +
            "no inputs. The 202 then carries session_id, trace_id and run_id, which getWebhookRun also shows. " +
            "When the target's own input rules (required inputs, patterns) refuse the body, no run starts: " +
            "the 202 carries the identity alone and getWebhookRun shows status failed with the reason in error.",
          security: [{ WebhookToken: [] }],
          consumes: ["application/json", "text/plain", "application/x-www-form-urlencoded", "*/*"],
          // Any bytes, or none: the body is recorded as received and read by the target.
          body: anyRawBody(
            "Optional, any content type: the monitoring source's payload (alert ingest), or an agent's or workflow's inputs",
          ),
          querystring: Type.Object({
            ...OrgQuery,
            apiKey: Type.Optional(Type.String({ description: "Webhook token" })),
          }),
          response: {
            202: Type.Ref("WebhookTriggerAccepted"),
            400: {
              ...jsonError,
              description:
                "Alert ingest could not read the body (errCode INVALID_PAYLOAD); the invocation is recorded as failed",
            },
            401: { ...jsonError, description: "Missing or invalid webhook token" },
            404: { ...jsonError, description: "Webhook deleted or disabled" },
            413: { ...jsonError, description: "Body over WEBHOOK_BODY_LIMIT_BYTES" },
            423: {
              ...jsonError,
              description:
                "Target not ready (it was when the webhook was saved): errCode TARGET_NOT_FOUND, NO_INTEGRATIONS, " +
                "WORKFLOW_HAS_NO_STAGES or WORKFLOW_HAS_UNBOUND_STAGE, extras as on createWebhook's 400; " +
                "APP_NOT_CONFIGURED for alert ingest to a workspace whose SRE app is not configured (the same extras, " +
                "with unbound_stage_id null, total_stages 0 and a resolution_hint); " +
                "the invocation is recorded as failed with the error",
            },
            500: {
              ...jsonError,
              description: "Unexpected error; the invocation is recorded with status error and its payload",
            },
            503: {
              ...jsonError,
              description:
                "The database cannot be reached, refuses Vigil's connections or is at its connection limit, or Vigil is shutting down: nothing was stored; send the delivery again (Retry-After)",
            },
          },
        },
      },
      async (request, reply) => {
        const accepted = await triggerWebhook({
          services: request.server.services,
          targets: options.targets,
          request: {
            webhook: webhooksOfTriggers.get(request) as WebhookRow,
            orgId: request.query.orgId ?? null,
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            headers: { ...request.headers, "content-type": sentContentTypes.get(request) },
          },
          log: request.log as unknown as Logger,
        });
        return reply.status(202).send(accepted);
      },
    );
  });
}
