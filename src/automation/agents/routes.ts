import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { JSON_ERROR_REF as jsonError, OrgOnlyQuery as Query, refOf } from "../../core/http/schemas.ts";
import { AgentName, RegisterAgentRequest } from "../schemas.ts";
import { deleteAgent, getAgent, listAgents, registerAgent, updateAgent } from "./agents.ts";

const AgentParams = Type.Object({ name: AgentName });
const read = { scope: "aios_automation_read" } as const;
const write = { scope: "aios_automation_write" } as const;

/** Agents: register, list, read, update, delete. */
export async function agentRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const agentTags = ["agents"];

  app.post(
    "/platform/api/v1/agents",
    {
      config: write,
      schema: {
        operationId: "registerAgent",
        tags: agentTags,
        querystring: Query,
        body: refOf(RegisterAgentRequest),
        response: { 201: Type.Ref("AgentStatus"), 409: { ...jsonError, description: "Agent exists" } },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return registerAgent({ ctx: contextOf(request), input: request.body });
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
        body: refOf(RegisterAgentRequest),
        response: { 200: Type.Ref("AgentStatus") },
      },
    },
    async (request) =>
      updateAgent({
        ctx: contextOf(request),
        input: { name: request.params.name, agent: request.body },
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
}
