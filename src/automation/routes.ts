import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import { OrgQuery } from "../core/http/schemas.ts";
import { deleteAgent, getAgent, listAgents, registerAgent, updateAgent } from "./agents/agents.ts";
import { downloadSessionArtifact, listSessionArtifacts } from "./executions/artifacts.ts";
import { terminateSession } from "./executions/executions.ts";
import { getExecutionTrace, listExecutions, TRACE_NODE_LIMIT } from "./executions/traces.ts";
import {
  AgentName,
  AgentStatus,
  ArtifactInfo,
  DAGEdge,
  DAGNode,
  ExecutionListItem,
  ExecutionMeta,
  Readiness,
  RegisterAgentRequest,
  StructuredOutput,
  TerminateSessionResponse,
  TraceDAGResponse,
  Workflow,
  WorkflowName,
  WorkflowVersion,
  WorkflowWrite,
} from "./schemas.ts";
import {
  approveWorkflowVersion,
  createWorkflow,
  createWorkflowVersion,
  deleteWorkflow,
  getWorkflow,
  listWorkflows,
  updateWorkflow,
  updateWorkflowVersion,
} from "./workflows/workflows.ts";

const jsonError = { $ref: "JsonError#" };
const Query = Type.Object(OrgQuery);
const AgentParams = Type.Object({ name: AgentName });
const WorkflowParams = Type.Object({ name: WorkflowName });
const VersionParams = Type.Object({ name: WorkflowName, version: Type.Integer({ minimum: 1 }) });
const IncludeDrafts = Type.Object({
  ...OrgQuery,
  includeDrafts: Type.Boolean({ default: true, description: "Include draft versions" }),
});
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

export async function automationRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  for (const schema of [
    Readiness,
    RegisterAgentRequest,
    AgentStatus,
    WorkflowWrite,
    WorkflowVersion,
    Workflow,
    StructuredOutput,
    ExecutionMeta,
    DAGNode,
    DAGEdge,
    TraceDAGResponse,
    ExecutionListItem,
    ArtifactInfo,
    TerminateSessionResponse,
  ]) {
    app.addSchema(schema);
  }
  const agentTags = ["agents"];
  const workflowTags = ["workflows"];
  const executionTags = ["executions"];
  const sessionTags = ["sessions"];

  app.post(
    "/platform/api/v1/agents",
    {
      config: write,
      schema: {
        operationId: "registerAgent",
        tags: agentTags,
        querystring: Query,
        body: Type.Ref("RegisterAgentRequest"),
        response: { 201: Type.Ref("AgentStatus"), 409: { ...jsonError, description: "Agent exists" } },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return registerAgent({ ctx: contextOf(request), input: request.body as RegisterAgentRequest });
    },
  );
  app.get(
    "/platform/api/v1/agents",
    {
      config: read,
      schema: {
        operationId: "listAgents",
        tags: agentTags,
        querystring: Query,
        response: { 200: Type.Array(Type.Ref("AgentStatus")) },
      },
    },
    async (request) => listAgents({ ctx: contextOf(request) }),
  );
  app.get(
    "/platform/api/v1/agents/:name",
    {
      config: read,
      schema: {
        operationId: "getAgent",
        tags: agentTags,
        params: AgentParams,
        querystring: Query,
        response: { 200: Type.Ref("AgentStatus") },
      },
    },
    async (request) => getAgent({ ctx: contextOf(request), input: request.params }),
  );
  app.put(
    "/platform/api/v1/agents/:name",
    {
      config: write,
      schema: {
        operationId: "updateAgent",
        tags: agentTags,
        params: AgentParams,
        querystring: Query,
        body: Type.Ref("RegisterAgentRequest"),
        response: { 200: Type.Ref("AgentStatus") },
      },
    },
    async (request) =>
      updateAgent({
        ctx: contextOf(request),
        input: { name: request.params.name, agent: request.body as RegisterAgentRequest },
      }),
  );
  app.delete(
    "/platform/api/v1/agents/:name",
    {
      config: write,
      schema: {
        operationId: "deleteAgent",
        tags: agentTags,
        params: AgentParams,
        querystring: Query,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await deleteAgent({ ctx: contextOf(request), input: request.params });
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/platform/api/v1/workflows",
    {
      config: write,
      schema: {
        operationId: "createWorkflow",
        tags: workflowTags,
        querystring: Query,
        body: Type.Ref("WorkflowWrite"),
        response: { 201: Type.Ref("Workflow"), 409: { ...jsonError, description: "Workflow exists" } },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createWorkflow({ ctx: contextOf(request), input: request.body as WorkflowWrite });
    },
  );
  app.get(
    "/platform/api/v1/workflows",
    {
      config: read,
      schema: {
        operationId: "listWorkflows",
        tags: workflowTags,
        querystring: IncludeDrafts,
        response: { 200: Type.Array(Type.Ref("Workflow")) },
      },
    },
    async (request) =>
      listWorkflows({ ctx: contextOf(request), input: { includeDrafts: request.query.includeDrafts } }),
  );
  app.get(
    "/platform/api/v1/workflows/:name",
    {
      config: read,
      schema: {
        operationId: "getWorkflow",
        tags: workflowTags,
        params: WorkflowParams,
        querystring: IncludeDrafts,
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) =>
      getWorkflow({
        ctx: contextOf(request),
        input: { name: request.params.name, includeDrafts: request.query.includeDrafts },
      }),
  );
  app.put(
    "/platform/api/v1/workflows/:name",
    {
      config: write,
      schema: {
        operationId: "updateWorkflow",
        description: "Updates the routing status, and the draft's content when the body carries content",
        tags: workflowTags,
        params: WorkflowParams,
        querystring: Query,
        body: Type.Ref("WorkflowWrite"),
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) =>
      updateWorkflow({
        ctx: contextOf(request),
        input: { name: request.params.name, write: request.body as WorkflowWrite },
      }),
  );
  app.delete(
    "/platform/api/v1/workflows/:name",
    {
      config: write,
      schema: {
        operationId: "deleteWorkflow",
        tags: workflowTags,
        params: WorkflowParams,
        querystring: Query,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await deleteWorkflow({ ctx: contextOf(request), input: request.params });
      return reply.status(204).send(null);
    },
  );
  app.post(
    "/platform/api/v1/workflows/:name/versions",
    {
      config: write,
      schema: {
        operationId: "createWorkflowVersion",
        tags: workflowTags,
        params: WorkflowParams,
        querystring: Query,
        response: { 201: Type.Ref("Workflow"), 409: { ...jsonError, description: "A draft already exists" } },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createWorkflowVersion({ ctx: contextOf(request), input: request.params });
    },
  );
  app.put(
    "/platform/api/v1/workflows/:name/versions/:version",
    {
      config: write,
      schema: {
        operationId: "updateWorkflowVersion",
        tags: workflowTags,
        params: VersionParams,
        querystring: Query,
        body: Type.Ref("WorkflowWrite"),
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) =>
      updateWorkflowVersion({
        ctx: contextOf(request),
        input: { ...request.params, write: request.body as WorkflowWrite },
      }),
  );
  app.post(
    "/platform/api/v1/workflows/:name/versions/:version/approve",
    {
      config: write,
      schema: {
        operationId: "approveWorkflowVersion",
        tags: workflowTags,
        params: VersionParams,
        querystring: Query,
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) => approveWorkflowVersion({ ctx: contextOf(request), input: request.params }),
  );

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
