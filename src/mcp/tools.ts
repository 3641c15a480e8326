// The MCP tools: one declaration each (name, scope, TypeBox input schema, handler calling a domain's
// index.ts). Inputs are checked against the same schemas as the HTTP API (listAlerts' filters are
// its query schema). Tools of investigations, sessions and Ask join this list the same way.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  getAlert,
  getAlertHistory,
  type ListAlertsInput,
  ListAlertsQuery,
  listAlerts,
} from "../alerts/index.ts";
import type { Scope } from "../core/auth/scopes.ts";
import type { CallerCtx } from "../core/context.ts";
import { AppError } from "../core/errors.ts";

export interface McpTool<S extends TSchema = TSchema> {
  name: string;
  description: string;
  scope: Scope;
  input: S;
  /** Answers JSON (an object, or JSON text a domain already rendered). */
  run(ctx: CallerCtx, input: Static<S>): Promise<unknown>;
}

const defineTool = <S extends TSchema>(tool: McpTool<S>) => tool as unknown as McpTool;

const AlertId = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 512, description: "Alert UUID or the source's external_uid" }),
  },
  { additionalProperties: false },
);

const { orgId: _workspace, ...listFilters } = ListAlertsQuery.properties;
/** listAlerts' query without orgId: the workspace is the MCP URL's orgId. */
const ListAlertsInputSchema = Type.Object(listFilters, { additionalProperties: false });

const STORM_PAGE_SIZE = 500;

export const MCP_TOOLS: McpTool[] = [
  defineTool({
    name: "list_alerts",
    description:
      "List the workspace's alerts with listAlerts' filters (status, attention, source_type, integration_names, storm_id, q, signal_severity, alert_role, sort_by, page, page_size) and the active summary",
    scope: "sre_alerts_read",
    input: ListAlertsInputSchema,
    run: (ctx, input) => listAlerts({ ctx, input: input as ListAlertsInput }),
  }),
  defineTool({
    name: "get_alert",
    description: "Read one alert by its UUID or its source's external_uid",
    scope: "sre_alerts_read",
    input: AlertId,
    run: (ctx, input) => getAlert({ ctx, input }),
  }),
  defineTool({
    name: "get_alert_history",
    description: "An alert's lifecycle history, oldest first",
    scope: "sre_alerts_read",
    input: AlertId,
    run: (ctx, input) => getAlertHistory({ ctx, input }),
  }),
  defineTool({
    name: "get_alert_storm",
    description:
      "The storm an alert belongs to: its storm_id and every active alert of the storm (severity first)",
    scope: "sre_alerts_read",
    input: AlertId,
    async run(ctx, input) {
      const alert = await getAlert({ ctx, input });
      if (!alert.storm_id) return { alert_id: alert.id, storm_id: null, alerts: [] };
      const list = JSON.parse(
        await listAlerts({
          ctx,
          input: {
            status: "active",
            storm_id: alert.storm_id,
            sort_by: "severity",
            page: 1,
            page_size: STORM_PAGE_SIZE,
          },
        }),
      ) as { alerts: unknown[]; total: number };
      return { alert_id: alert.id, storm_id: alert.storm_id, total: list.total, alerts: list.alerts };
    },
  }),
];

/** The input with the schema's defaults, or a 400-like error naming the first bad field. */
export function validInput(tool: McpTool, args: unknown): unknown {
  const value = Value.Default(tool.input, structuredClone(args ?? {}));
  const error = Value.Errors(tool.input, value).First();
  if (!error) return value;
  const field = error.path.replace(/^\//, "").replaceAll("/", ".") || "(input)";
  throw new AppError("VALIDATION_FAILED", `${field}: ${error.message}`, { field });
}
