// Pull sync of an Alertmanager integration: a manual sync, and the history of its runs (manual and
// scheduled). The sync runs within the request, bounded by the fetch timeout, and answers the run.
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { OrgQuery } from "../../core/http/schemas.ts";
import { IntegrationName } from "../../integrations/index.ts";
import { listAlertSyncRuns, syncIntegrationAlerts } from "./pull-sync.ts";
import { AlertSyncRun, AlertSyncRunPage } from "./schemas.ts";

const errorResponse = { $ref: "ErrorResponse#" };
const tags = ["alert sync"];
const NameParams = Type.Object({ name: IntegrationName });

export async function alertSyncRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(AlertSyncRun);
  app.addSchema(AlertSyncRunPage);

  app.post(
    "/app/sre/api/v1/integrations/:name/sync",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "syncIntegrationAlerts",
        summary: "Sync an Alertmanager integration's active alerts now",
        description:
          "Fetches the integration's /api/v2/alerts, ingests the alerts with ingested_via=pull and " +
          "resolves the ones that disappeared. Answers the run: completed, or failed with its error " +
          '(a failed run changes no alert). 400 when the integration is not an alertmanager, has no url or has pull sync off (settings.pull_sync "false").',
        tags,
        params: NameParams,
        querystring: Type.Object(OrgQuery),
        response: { 200: AlertSyncRun, 400: errorResponse, 404: errorResponse },
      },
    },
    async (request) => syncIntegrationAlerts({ ctx: contextOf(request), input: request.params }),
  );

  app.get(
    "/app/sre/api/v1/integrations/:name/sync-runs",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "listAlertSyncRuns",
        summary: "List an integration's sync runs, newest first",
        tags,
        params: NameParams,
        querystring: Type.Object({
          ...OrgQuery,
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
        }),
        response: { 200: AlertSyncRunPage, 404: errorResponse },
      },
    },
    async (request) =>
      listAlertSyncRuns({
        ctx: contextOf(request),
        input: {
          integrationName: request.params.name,
          limit: request.query.limit,
          offset: request.query.offset,
        },
      }),
  );
}
