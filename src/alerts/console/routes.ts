import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf, readContextOf } from "../../core/context.ts";
import {
  ERROR_RESPONSE_REF as errorResponse,
  OrgQuery,
  OrgOnlyQuery as Query,
  refOf,
  Uuid,
} from "../../core/http/schemas.ts";
import {
  ALERT_ROLES,
  ALERT_STATUSES,
  AlertCategorizationSummary,
  AlertPatch,
  ATTENTIONS,
  ListAlertsResponse,
  SEVERITY_BUCKETS,
} from "../schemas.ts";
import { reclassifyAlert, triageAlert } from "../triage/triage-alert.ts";
import { categorizationSummary, type ListAlertsInput, listAlerts } from "./list-alerts.ts";
import { getAlert, getAlertHistory } from "./read-alerts.ts";

const literalsOf = (values: readonly string[]) => Type.Union(values.map((value) => Type.Literal(value)));
const IntegrationNames = Type.Optional(
  Type.String({
    maxLength: 4000,
    description:
      "Comma-separated integration names; scopes both the list and the summary; empty items are 400",
  }),
);

/** listAlerts' filters; the MCP server validates its list tool's input with the same schema. */
export const ListAlertsQuery = Type.Object({
  ...OrgQuery,
  status: Type.Union(
    ALERT_STATUSES.map((value) => Type.Literal(value)),
    { default: "active", description: "Which list: active (default), ignored or resolved" },
  ),
  attention: Type.Optional(literalsOf(ATTENTIONS)),
  source_type: Type.Optional(Type.String({ maxLength: 64 })),
  integration_names: IntegrationNames,
  storm_id: Type.Optional(Uuid("All active alerts of this storm")),
  q: Type.Optional(
    Type.String({
      maxLength: 500,
      description: "Case-insensitive search over title and description",
    }),
  ),
  signal_severity: Type.Optional(literalsOf(SEVERITY_BUCKETS)),
  alert_role: Type.Optional(literalsOf(ALERT_ROLES)),
  sort_by: Type.Union([Type.Literal("severity"), Type.Literal("impact")], {
    default: "severity",
    description:
      "severity: display_priority; impact: impact_score, then severity; ties by trigger time and id",
  }),
  page: Type.Integer({ minimum: 1, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 500, default: 20 }),
  include_raw_payload: Type.Boolean({
    default: true,
    description:
      "false leaves raw_payload out of each alert: the alerts of one delivery share its body, so a page of a storm can repeat a large body many times",
  }),
});

/** The alert console: lists, the summary, one alert, its history, triage changes. */
export async function consoleRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const alertTags = ["alerts"];
  app.get(
    "/app/sre/api/v1/alerts",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "listAlerts",
        tags: alertTags,
        querystring: ListAlertsQuery,
        response: {
          200: refOf(ListAlertsResponse),
        },
      },
    },
    // Already JSON (list-alerts.ts): sent as it is, not through the response schema's serializer.
    async (request, reply) =>
      reply
        .type("application/json; charset=utf-8")
        // The typed reply expects the object; this is that object's JSON text.
        .send(
          (await listAlerts({
            ctx: readContextOf(request),
            input: request.query as ListAlertsInput,
          })) as never,
        ),
  );

  app.get(
    "/app/sre/api/v1/alerts/categorization/summary",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "getAlertCategorizationSummary",
        summary: "Progress of automatic analysis over active alerts",
        tags: alertTags,
        querystring: Type.Object({ ...OrgQuery, integration_names: IntegrationNames }),
        response: {
          200: refOf(AlertCategorizationSummary),
        },
      },
    },
    async (request) => categorizationSummary({ ctx: readContextOf(request), input: request.query }),
  );

  app.patch(
    "/app/sre/api/v1/alerts/:id",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "updateAlert",
        summary: "Ignore an alert (with a reason) or set it back to active; set an analyst's attention",
        tags: alertTags,
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 128, description: "UUID or external_uid" }),
        }),
        querystring: Query,
        body: refOf(AlertPatch),
        response: { 200: Type.Ref("AlertV1"), 409: errorResponse },
      },
    },
    async (request) =>
      triageAlert({
        ctx: contextOf(request),
        input: { id: request.params.id, patch: request.body },
      }),
  );

  app.get(
    "/app/sre/api/v1/alerts/:id",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "getAlertV1",
        tags: alertTags,
        params: Type.Object({
          id: Type.String({
            minLength: 1,
            maxLength: 128,
            description: "Internal alert UUID or source external_uid",
          }),
        }),
        querystring: Query,
        response: { 200: Type.Ref("AlertV1") },
      },
    },
    async (request) => getAlert({ ctx: contextOf(request), input: { id: request.params.id } }),
  );

  app.post(
    "/app/sre/api/v1/alerts/:id/classify",
    {
      config: { scope: "sre_alerts_write" },
      schema: {
        operationId: "reclassifyAlert",
        summary: "Queue the alert for automatic classification again (after a failure, or on request)",
        tags: alertTags,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Query,
        response: { 202: Type.Ref("AlertV1") },
      },
    },
    async (request, reply) => {
      reply.status(202);
      return reclassifyAlert({ ctx: contextOf(request), input: { id: request.params.id } });
    },
  );

  app.get(
    "/app/sre/api/v1/alerts/:id/history",
    {
      config: { scope: "sre_alerts_read" },
      schema: {
        operationId: "getAlertHistory",
        summary: "The alert's bounded event history, oldest first",
        tags: alertTags,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Query,
        response: {
          200: Type.Object({ alert_id: Uuid(), events: Type.Array(Type.Ref("AlertHistoryEvent")) }),
        },
      },
    },
    async (request) => getAlertHistory({ ctx: contextOf(request), input: { id: request.params.id } }),
  );
}
