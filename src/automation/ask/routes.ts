import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { JSON_ERROR_REF as jsonError, OrgOnlyQuery as Query, refOf } from "../../core/http/schemas.ts";
import { startAsk } from "./ask.ts";
import { AskPlatformRequest } from "./schemas.ts";

/** Ask: route a natural-language message to an agent or workflow and start it. */
export async function askRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    "/platform/api/v1/platform/ask/start",
    {
      config: { scope: "aios_automation_write" },
      schema: {
        operationId: "startAskPlatform",
        description:
          "Routes the message to an approved, routing-active workflow or a ready agent (or the pinned one) and starts it; " +
          "returns at once. Poll getExecutionTrace with trace_id. Nothing starts when the match is ambiguous or weak " +
          "(without a fallback agent) or a required input is missing (inputs_required; answer in the same session_id)",
        tags: ["ask"],
        querystring: Query,
        body: refOf(AskPlatformRequest),
        response: {
          200: Type.Ref("AskStartResponse"),
          400: { ...jsonError, description: "Missing or invalid message, or another invalid field (named)" },
          404: { ...jsonError, description: "session_id is not a session of the caller" },
        },
      },
    },
    async (request) => startAsk({ ctx: contextOf(request), input: request.body }),
  );
}
