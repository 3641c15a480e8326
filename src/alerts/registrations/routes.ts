import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import {
  ERROR_RESPONSE_REF as errorResponse,
  OrgQuery,
  OrgOnlyQuery as Query,
  refOf,
  Uuid,
} from "../../core/http/schemas.ts";
import { AlertWebhookCreate, AlertWebhookUpdate, IntegrationSegment, SourceName } from "../schemas.ts";
import {
  createAlertWebhook,
  deleteAlertWebhook,
  getAlertWebhook,
  getAlertWebhookBySource,
  listAlertWebhooks,
  type RegistrationHook,
  rotateAlertWebhookToken,
  updateAlertWebhook,
} from "./registrations.ts";

const AppParams = Type.Object({
  app_name: Type.String({ maxLength: 64, description: "Catalog app; `sre`" }),
});
const RegistrationParams = Type.Object({ app_name: AppParams.properties.app_name, id: Uuid() });

export interface RegistrationOptions {
  /** Makes sure the registration's app is configured for the tenant (wired by app.ts). */
  onRegistered?: RegistrationHook;
}

/** Alert-ingest registrations: the server side of `svc_sre_alert_webhook`. */
export async function registrationRoutes(instance: FastifyInstance, options: RegistrationOptions = {}) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const registrationTags = ["alert webhooks"];
  app.post(
    "/app/:app_name/api/v1/alerts/webhook",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "createAlertWebhook",
        summary: "Register an alert-ingest webhook",
        tags: registrationTags,
        params: AppParams,
        querystring: Query,
        body: refOf(AlertWebhookCreate),
        response: { 201: Type.Ref("AlertWebhook"), 409: errorResponse },
      },
    },
    async (request, reply) => {
      const body = request.body;
      reply.status(201);
      return createAlertWebhook({
        ctx: contextOf(request),
        input: { appName: request.params.app_name, body, onRegistered: options.onRegistered },
      });
    },
  );

  const listRegistrationsSchema = {
    operationId: "listAlertWebhooks",
    summary: "List alert-ingest webhooks; filter by source and integration to resolve an import id",
    tags: registrationTags,
    params: AppParams,
    querystring: Type.Object({
      ...OrgQuery,
      source: Type.Optional(SourceName),
      integration: Type.Optional(IntegrationSegment),
    }),
    response: { 200: Type.Array(Type.Ref("AlertWebhook")) },
  };
  app.get(
    "/app/:app_name/api/v1/alerts/webhook",
    { config: { scope: "sre_alerts_read" }, schema: listRegistrationsSchema },
    async (request) =>
      listAlertWebhooks({
        ctx: contextOf(request),
        input: {
          appName: request.params.app_name,
          source: request.query.source,
          integration: request.query.integration,
        },
      }),
  );
  // The router prefers the static `sre` segment, so getAlertV1 (/app/sre/api/v1/alerts/:id) would
  // answer this list for app `sre` with id "webhook". The same list under the static path wins.
  app.get(
    "/app/sre/api/v1/alerts/webhook",
    {
      config: { scope: "sre_alerts_read" },
      schema: { ...listRegistrationsSchema, params: Type.Object({}), hide: true },
    },
    async (request) =>
      listAlertWebhooks({
        ctx: contextOf(request),
        input: { appName: "sre", source: request.query.source, integration: request.query.integration },
      }),
  );

  app.get(
    "/app/:app_name/api/v1/alerts/webhook/:id",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "getAlertWebhook",
        tags: registrationTags,
        params: RegistrationParams,
        querystring: Query,
        response: { 200: Type.Ref("AlertWebhook") },
      },
    },
    async (request) =>
      getAlertWebhook({
        ctx: contextOf(request),
        input: { appName: request.params.app_name, id: request.params.id },
      }),
  );

  app.get(
    "/app/:app_name/api/v1/alerts/webhook/by-source/:source",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "getAlertWebhookBySource",
        summary: "Read a registration by its import id {app_name}/{source}/{integration}",
        description:
          "The provider's import path: integration omitted or empty is the default integration. 404 when none",
        tags: registrationTags,
        params: Type.Object({ app_name: AppParams.properties.app_name, source: SourceName }),
        querystring: Type.Object({ ...OrgQuery, integration: Type.Optional(IntegrationSegment) }),
        response: { 200: Type.Ref("AlertWebhook"), 404: errorResponse },
      },
    },
    async (request) =>
      getAlertWebhookBySource({
        ctx: contextOf(request),
        input: {
          appName: request.params.app_name,
          source: request.params.source,
          integration: request.query.integration ?? "",
        },
      }),
  );

  app.put(
    "/app/:app_name/api/v1/alerts/webhook/:id",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "updateAlertWebhook",
        tags: registrationTags,
        params: RegistrationParams,
        querystring: Query,
        body: refOf(AlertWebhookUpdate),
        response: { 200: Type.Ref("AlertWebhook") },
      },
    },
    async (request) =>
      updateAlertWebhook({
        ctx: contextOf(request),
        input: {
          appName: request.params.app_name,
          id: request.params.id,
          changes: request.body,
        },
      }),
  );

  app.post(
    "/app/:app_name/api/v1/alerts/webhook/:id/rotate-token",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "rotateAlertWebhookToken",
        summary: "Issue a new webhook token; the old trigger URL stops working at once",
        tags: registrationTags,
        params: RegistrationParams,
        querystring: Query,
        response: { 200: Type.Ref("AlertWebhook") },
      },
    },
    async (request) =>
      rotateAlertWebhookToken({
        ctx: contextOf(request),
        input: { appName: request.params.app_name, id: request.params.id },
      }),
  );

  app.delete(
    "/app/:app_name/api/v1/alerts/webhook/:id",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "deleteAlertWebhook",
        tags: registrationTags,
        params: RegistrationParams,
        querystring: Query,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await deleteAlertWebhook({
        ctx: contextOf(request),
        input: { appName: request.params.app_name, id: request.params.id },
      });
      return reply.status(204).send(null);
    },
  );
}
