import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import { OrgQuery } from "../core/http/schemas.ts";
import {
  createIntegration,
  deleteIntegration,
  getIntegration,
  listIntegrations,
  updateIntegration,
} from "./integrations.ts";
import { Integration, IntegrationName, IntegrationWrite } from "./schemas.ts";

const tags = ["integrations"];
const NameParams = Type.Object({ name: IntegrationName });
const Query = Type.Object(OrgQuery);

export async function integrationsRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(IntegrationWrite);
  app.addSchema(Integration);

  app.post(
    "/api/v1/integrations",
    {
      config: { scope: "integrations_write" },
      schema: {
        operationId: "createIntegration",
        tags,
        querystring: Query,
        body: IntegrationWrite,
        response: { 201: Integration, 409: { $ref: "ErrorResponse#" } },
      },
    },
    async (request, reply) => {
      reply.status(201);
      return createIntegration({ ctx: contextOf(request), input: request.body });
    },
  );

  app.get(
    "/api/v1/integrations",
    {
      config: { scope: "integrations_read" },
      schema: {
        operationId: "listIntegrations",
        tags,
        querystring: Query,
        response: { 200: Type.Array(Integration) },
      },
    },
    async (request) => listIntegrations({ ctx: contextOf(request) }),
  );

  app.get(
    "/api/v1/integrations/:name",
    {
      config: { scope: "integrations_read" },
      schema: {
        operationId: "getIntegration",
        tags,
        params: NameParams,
        querystring: Query,
        response: { 200: Integration },
      },
    },
    async (request) => getIntegration({ ctx: contextOf(request), input: request.params }),
  );

  app.put(
    "/api/v1/integrations/:name",
    {
      config: { scope: "integrations_write" },
      schema: {
        operationId: "updateIntegration",
        tags,
        params: NameParams,
        querystring: Query,
        body: IntegrationWrite,
        response: { 200: Integration, 409: { $ref: "ErrorResponse#" } },
      },
    },
    async (request) =>
      updateIntegration({
        ctx: contextOf(request),
        input: { name: request.params.name, changes: request.body },
      }),
  );

  app.delete(
    "/api/v1/integrations/:name",
    {
      config: { scope: "integrations_write" },
      schema: {
        operationId: "deleteIntegration",
        tags,
        params: NameParams,
        querystring: Query,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await deleteIntegration({ ctx: contextOf(request), input: request.params });
      return reply.status(204).send(null);
    },
  );
}
