import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { JSON_ERROR_REF as jsonError, OrgQuery, OrgOnlyQuery as Query } from "../../core/http/schemas.ts";
import { getExecutionTrace, listExecutions, TRACE_NODE_LIMIT } from "./traces.ts";

const TraceParams = Type.Object({
  traceId: Type.String({ format: "uuid", description: "The execution's trace id" }),
});
const ListExecutionsQuery = Type.Object({
  ...OrgQuery,
  session_id: Type.Optional(
    Type.String({ maxLength: 100, description: "A session's id; any other value matches nothing" }),
  ),
  agent_name: Type.Optional(
    Type.String({ maxLength: 100, description: "The agent, or the workflow for workflow runs" }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
const read = { scope: "aios_automation_read" } as const;

/** Executions and their traces. */
export async function executionRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const executionTags = ["executions"];

  app.get(
    "/platform/api/v1/executions",
    {
      config: read,
      schema: {
        operationId: "listExecutions",
        description: "The caller's executions, newest first",
        tags: executionTags,
        querystring: ListExecutionsQuery,
        response: { 200: Type.Array(Type.Ref("ExecutionListItem")) },
      },
    },
    async (request) => listExecutions({ ctx: contextOf(request), input: request.query }),
  );
  app.get(
    "/platform/api/v1/executions/:traceId",
    {
      config: read,
      schema: {
        operationId: "getExecutionTrace",
        description:
          "Poll until execution.status is completed or error and trace_settled is true. " +
          `At most ${TRACE_NODE_LIMIT} nodes; truncated says when the DAG had more.`,
        tags: executionTags,
        params: TraceParams,
        querystring: Query,
        response: {
          200: Type.Ref("TraceDAGResponse"),
          400: { ...jsonError, description: "Invalid trace id" },
        },
      },
    },
    async (request) =>
      getExecutionTrace({ ctx: contextOf(request), input: { traceId: request.params.traceId } }),
  );
}
