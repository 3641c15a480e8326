import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { JSON_ERROR_REF as jsonError, OrgQuery, OrgOnlyQuery as Query } from "../../core/http/schemas.ts";
import { downloadSessionArtifact, listSessionArtifacts } from "./artifacts.ts";
import { terminateSession } from "./executions.ts";
import { getExecutionTrace, listExecutions, TRACE_NODE_LIMIT } from "./traces.ts";

const TraceParams = Type.Object({
  traceId: Type.String({ format: "uuid", description: "The execution's trace id" }),
});
const SessionParams = Type.Object({ session_id: Type.String({ maxLength: 100 }) });
const ArtifactParams = Type.Object({
  session_id: Type.String({ maxLength: 100 }),
  artifact_id: Type.String({
    minLength: 1,
    maxLength: 200,
    description: "The artifact's uuid, or its file name (case-insensitive)",
  }),
});
const ListExecutionsQuery = Type.Object({
  ...OrgQuery,
  session_id: Type.Optional(Type.String({ format: "uuid" })),
  agent_name: Type.Optional(
    Type.String({ maxLength: 100, description: "The agent, or the workflow for workflow runs" }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
const TerminateQuery = Type.Object({
  ...OrgQuery,
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
});
const read = { scope: "aios_automation_read" } as const;
const write = { scope: "aios_automation_write" } as const;

/** Executions and their traces, and the sessions they run in (artifacts, terminate). */
export async function executionRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const executionTags = ["executions"];
  const sessionTags = ["sessions"];

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
  app.post(
    "/platform/api/v1/sessions/:session_id/terminate",
    {
      config: write,
      schema: {
        operationId: "terminateSession",
        description:
          "Cancels the session's running executions; idempotent (0 when nothing runs). A step under way sees it within about a second and drops an http_request or model call still waiting",
        tags: sessionTags,
        params: SessionParams,
        querystring: TerminateQuery,
        response: { 200: Type.Ref("TerminateSessionResponse") },
      },
    },
    async (request) =>
      terminateSession({
        ctx: contextOf(request),
        input: { sessionId: request.params.session_id, reason: request.query.reason ?? null },
      }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id/artifacts",
    {
      config: read,
      schema: {
        operationId: "listSessionArtifacts",
        tags: sessionTags,
        params: SessionParams,
        querystring: Query,
        response: { 200: Type.Array(Type.Ref("ArtifactInfo")) },
      },
    },
    async (request) =>
      listSessionArtifacts({ ctx: contextOf(request), input: { sessionId: request.params.session_id } }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id/artifacts/:artifact_id/download",
    {
      config: read,
      schema: {
        operationId: "downloadSessionArtifact",
        tags: sessionTags,
        params: ArtifactParams,
        querystring: Query,
        response: {
          200: {
            description: "The artifact's bytes",
            content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
          },
          404: { ...jsonError, description: "Artifact not found" },
        },
      },
    },
    async (request, reply) => {
      const artifact = await downloadSessionArtifact({
        ctx: contextOf(request),
        input: { sessionId: request.params.session_id, artifactId: request.params.artifact_id },
      });
      return reply
        .type("application/octet-stream")
        .header("content-disposition", `attachment; filename="${artifact.name}"`)
        .send(artifact.content);
    },
  );
}
