import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import {
  JSON_ERROR_REF as jsonError,
  OrgQuery,
  OrgOnlyQuery as Query,
  refOf,
} from "../../core/http/schemas.ts";
import { WorkflowName, WorkflowWrite } from "../schemas.ts";
import {
  approveWorkflowVersion,
  createWorkflow,
  createWorkflowVersion,
  deleteWorkflow,
  getWorkflow,
  listWorkflows,
  updateWorkflow,
  updateWorkflowVersion,
} from "./workflows.ts";

const WorkflowParams = Type.Object({ name: WorkflowName });
const VersionParams = Type.Object({ name: WorkflowName, version: Type.Integer({ minimum: 1 }) });
const IncludeDrafts = Type.Object({
  ...OrgQuery,
  includeDrafts: Type.Boolean({ default: true, description: "Include draft versions" }),
});
const read = { scope: "aios_automation_read" } as const;
const write = { scope: "aios_automation_write" } as const;

/** Workflows and their versions: create, list, read, update, delete, draft, approve. */
export async function workflowRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const workflowTags = ["workflows"];

  app.post(
    "/platform/api/v1/workflows",
    {
      config: write,
      schema: {
        operationId: "createWorkflow",
        tags: workflowTags,
        querystring: Query,
        body: refOf(WorkflowWrite),
        response: {
          201: Type.Ref("Workflow"),
          400: { ...jsonError, description: "Invalid workflow, or one of that name exists (field name)" },
        },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createWorkflow({ ctx: contextOf(request), input: request.body });
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
        body: refOf(WorkflowWrite),
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) =>
      updateWorkflow({
        ctx: contextOf(request),
        input: { name: request.params.name, write: request.body },
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
        body: refOf(WorkflowWrite),
        response: { 200: Type.Ref("Workflow") },
      },
    },
    async (request) =>
      updateWorkflowVersion({
        ctx: contextOf(request),
        input: { ...request.params, write: request.body },
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
}
