import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import {
  ERROR_RESPONSE_REF as errorResponse,
  OrgQuery,
  optionalBody,
  OrgOnlyQuery as Query,
  refOf,
  Uuid,
} from "../core/http/schemas.ts";
import { getDiscoveryRun, listDiscoveryRuns, startDiscoveryRun } from "./discovery.ts";
import { deleteApp, getApp, listApps, putApp, rotateAppToken } from "./installations.ts";
import {
  AppInstallation,
  AppInstallationWrite,
  DiscoveryRun,
  DiscoveryRunStart,
  SetupStatus,
} from "./schemas.ts";
import { readSetup } from "./setup.ts";

const AppParams = Type.Object({
  appName: Type.String({ maxLength: 64, description: "Catalog slug, e.g. sre" }),
});

/** The catalog, installations (svc_app), discovery and setup. */
export async function appRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  for (const schema of [
    AppInstallation,
    AppInstallationWrite,
    DiscoveryRun,
    DiscoveryRunStart,
    SetupStatus,
  ]) {
    app.addSchema(schema);
  }
  const tags = ["apps"];
  const installation = Type.Ref("AppInstallation");

  app.get(
    "/api/v1/apps",
    {
      config: { scope: "apps_read" },
      schema: {
        operationId: "listApps",
        summary: "The app catalog, each app with its installation state in the workspace",
        tags,
        querystring: Query,
        response: { 200: Type.Array(installation) },
      },
    },
    async (request) => listApps({ ctx: contextOf(request) }),
  );

  app.get(
    "/api/v1/apps/:appName",
    {
      config: { scope: "apps_read" },
      schema: {
        operationId: "getApp",
        summary: "One app with its installation state (the import path of svc_app)",
        tags,
        params: AppParams,
        querystring: Query,
        response: { 200: installation, 404: errorResponse },
      },
    },
    async (request) => getApp({ ctx: contextOf(request), input: { appName: request.params.appName } }),
  );

  app.put(
    "/api/v1/apps/:appName",
    {
      config: { scope: "apps_write" },
      schema: {
        operationId: "putApp",
        summary: "Configure the app: integration bindings, workflows, assignments, config, enabled",
        description:
          "Installs the app for the workspace when it is not yet (default workflows provisioned, app token issued). integrations replaces the whole binding set; attached_workflows and workflow_assignments: omitted unchanged, [] clears; config replaces when present; enabled omitted is unchanged. The same PUT twice changes nothing, updated_at included. 400 names the offending item.",
        tags,
        params: AppParams,
        querystring: Query,
        body: refOf(AppInstallationWrite),
        response: { 200: installation, 404: errorResponse },
      },
    },
    async (request) =>
      putApp({ ctx: contextOf(request), input: { appName: request.params.appName, body: request.body } }),
  );

  app.delete(
    "/api/v1/apps/:appName",
    {
      config: { scope: "apps_write" },
      schema: {
        operationId: "deleteApp",
        summary: "Remove the app's bindings, assignments, config and token from the workspace; idempotent",
        description:
          "After this, alert deliveries of the workspace's registrations are refused (423 APP_NOT_CONFIGURED, recorded) until the app is configured again. Provisioned workflows stay.",
        tags,
        params: AppParams,
        querystring: Query,
        response: { 204: Type.Null(), 404: errorResponse },
      },
    },
    async (request, reply) => {
      await deleteApp({ ctx: contextOf(request), input: { appName: request.params.appName } });
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/api/v1/apps/:appName/token/rotate",
    {
      config: { scope: "apps_write" },
      schema: {
        operationId: "rotateAppToken",
        summary: "Issue a new app token; the previous one stops working at once",
        description:
          "Only for a key holding apps_write and every scope of the app token (sre_alerts_read, sre_investigations_read, sre_investigations_write, aios_automation_read, aios_automation_write): 403 INSUFFICIENT_SCOPE naming the first one it lacks otherwise. 404 when the app is not configured.",
        tags,
        params: AppParams,
        querystring: Query,
        response: {
          200: installation,
          403: { ...errorResponse, description: "The key lacks apps_write or a scope of the app token" },
          404: errorResponse,
        },
      },
    },
    async (request) =>
      rotateAppToken({ ctx: contextOf(request), input: { appName: request.params.appName } }),
  );

  app.post(
    "/app/sre/api/discovery/runs",
    {
      config: { scope: "apps_write" },
      ...optionalBody,
      schema: {
        operationId: "startDiscoveryRun",
        summary: "Start a discovery run over the app's bound integrations",
        description:
          "201 with the running run; with skip_if_exists and an earlier run of the workspace, 200 with a stored run of status skipped. 409 when the app is not configured.",
        tags,
        querystring: Query,
        body: refOf(DiscoveryRunStart),
        response: { 200: Type.Ref("DiscoveryRun"), 201: Type.Ref("DiscoveryRun"), 409: errorResponse },
      },
    },
    async (request, reply) => {
      const { created, run } = await startDiscoveryRun({ ctx: contextOf(request), input: request.body });
      reply.status(created ? 201 : 200);
      return run;
    },
  );

  app.get(
    "/app/sre/api/discovery/runs",
    {
      config: { scope: "apps_read" },
      schema: {
        operationId: "listDiscoveryRuns",
        summary: "Discovery runs of the workspace, newest first",
        tags,
        querystring: Type.Object({
          ...OrgQuery,
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
        }),
        response: { 200: Type.Array(Type.Ref("DiscoveryRun")) },
      },
    },
    async (request) => listDiscoveryRuns({ ctx: contextOf(request), input: { limit: request.query.limit } }),
  );

  app.get(
    "/app/sre/api/discovery/runs/:id",
    {
      config: { scope: "apps_read" },
      schema: {
        operationId: "getDiscoveryRun",
        tags,
        params: Type.Object({ id: Uuid() }),
        querystring: Query,
        response: { 200: Type.Ref("DiscoveryRun"), 404: errorResponse },
      },
    },
    async (request) => getDiscoveryRun({ ctx: contextOf(request), input: { id: request.params.id } }),
  );

  app.get(
    "/api/setup",
    {
      config: { scope: "apps_read" },
      schema: {
        operationId: "getSetup",
        summary: "Whether observability is ready for the SRE app, and what is missing",
        description:
          "observability_ready: at least one bound prometheus or alertmanager integration answers its API (probed with a 3 s timeout). Polled by the IaC provider every 2 seconds before discovery.",
        tags,
        querystring: Query,
        response: { 200: Type.Ref("SetupStatus") },
      },
    },
    async (request) => readSetup({ ctx: contextOf(request) }),
  );
}
