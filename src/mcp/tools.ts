// The MCP tools: one declaration each (name, scope, TypeBox input schema, handler calling a domain's
// index.ts). Inputs are checked against the same schemas, by the same validator, as the HTTP API
// (listAlerts' filters are its query schema, list_investigations' and list_sessions' theirs, ask's a
// part of Ask's body).
// Each tool needs the scope of its HTTP route.
import { type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import {
  getAlert,
  getAlertHistory,
  type ListAlertsInput,
  ListAlertsQuery,
  listAlerts,
} from "../alerts/index.ts";
import {
  AskPlatformRequest,
  getExecutionTrace,
  ListSessionsQuery,
  listSessions,
  startAsk,
} from "../automation/index.ts";
import type { Scope } from "../core/auth/scopes.ts";
import type { CallerCtx } from "../core/context.ts";
import { toAppError } from "../core/http/error-handler.ts";
import { unstorableTextError } from "../core/http/input-rules.ts";
import { Uuid } from "../core/http/schemas.ts";
import { compileBodyValidator } from "../core/http/validation.ts";
import {
  getInvestigation,
  InvestigateAlertRequest,
  investigateAlert,
  ListInvestigationsQuery,
  listInvestigations,
} from "../investigations/index.ts";

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
    // As the HTTP route's path id: no external_uid is longer.
    id: Type.String({ minLength: 1, maxLength: 128, description: "Alert UUID or the source's external_uid" }),
  },
  { additionalProperties: false },
);

/** An HTTP query schema without orgId (the workspace is the MCP URL's orgId), closed to other fields. */
function withoutWorkspace<P extends TProperties>(query: TObject<P>) {
  const { orgId: _workspace, ...filters } = query.properties;
  return Type.Object(filters as Omit<P, "orgId">, { additionalProperties: false });
}

/** An assistant reads payloads one alert at a time (get_alert): a list of them can run to megabytes. */
const ListAlertsInputSchema = Type.Object(
  {
    ...withoutWorkspace(ListAlertsQuery).properties,
    include_raw_payload: Type.Boolean({
      default: false,
      description: "true adds each alert's raw_payload (each alert of a delivery repeats its whole body)",
    }),
  },
  { additionalProperties: false },
);
/** The longest raw_payload get_alert answers in full; a longer one is cut and says so. */
export const MCP_RAW_PAYLOAD_CHARS = 32_000;
const ListInvestigationsInput = withoutWorkspace(ListInvestigationsQuery);
const ListSessionsInput = withoutWorkspace(ListSessionsQuery);

const InvestigateAlertInput = Type.Object(
  { alert_id: Uuid("The alert to investigate"), ...InvestigateAlertRequest.properties },
  { additionalProperties: false },
);
const InvestigationId = Type.Object({ id: Uuid("Investigation UUID") }, { additionalProperties: false });

const { message, inputs, session_id, candidate_type } = AskPlatformRequest.properties;
/** Ask's body, the fields an assistant needs; the session records source_app "mcp". */
const AskInput = Type.Object(
  { message, inputs, session_id, candidate_type },
  { additionalProperties: false },
);

const STORM_PAGE_SIZE = 500;

export const MCP_TOOLS: McpTool[] = [
  defineTool({
    name: "list_alerts",
    description:
      "List the workspace's alerts with listAlerts' filters (status, attention, source_type, integration_names, storm_id, q, signal_severity, alert_role, sort_by, page, page_size) and the active summary",
    scope: "sre_alerts_read",
    input: ListAlertsInputSchema,
    run: (ctx, input) =>
      listAlerts({
        ctx,
        input: { ...(input as ListAlertsInput), include_raw_payload: input.include_raw_payload === true },
      }),
  }),
  defineTool({
    name: "get_alert",
    description: `Read one alert by its UUID or its source's external_uid; a raw_payload over ${MCP_RAW_PAYLOAD_CHARS.toLocaleString("en")} characters is cut there (raw_payload_truncated: true, the full body from GET /app/sre/api/v1/alerts/{id})`,
    scope: "sre_alerts_read",
    input: AlertId,
    async run(ctx, input) {
      const alert = await getAlert({ ctx, input });
      const payload = alert.raw_payload;
      if (typeof payload !== "string" || payload.length <= MCP_RAW_PAYLOAD_CHARS) return alert;
      return { ...alert, raw_payload: payload.slice(0, MCP_RAW_PAYLOAD_CHARS), raw_payload_truncated: true };
    },
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
      if (!alert.storm_id) return { alert_id: alert.id, storm_id: null, total: 0, alerts: [] };
      const list = JSON.parse(
        await listAlerts({
          ctx,
          input: {
            status: "active",
            storm_id: alert.storm_id,
            sort_by: "severity",
            page: 1,
            page_size: STORM_PAGE_SIZE,
            include_raw_payload: false,
          },
        }),
      ) as { alerts: unknown[]; total: number };
      return { alert_id: alert.id, storm_id: alert.storm_id, total: list.total, alerts: list.alerts };
    },
  }),
  defineTool({
    name: "investigate_alert",
    description:
      "Start the alert's investigation (investigateAlert): the first call creates it and launches its run; a repeat returns the newest unchanged; force_new forks a new one. Answers its reference; poll get_investigation",
    scope: "sre_investigations_write",
    input: InvestigateAlertInput,
    run: (ctx, { alert_id, ...request }) => investigateAlert({ ctx, input: { alertId: alert_id, request } }),
  }),
  defineTool({
    name: "get_investigation",
    description:
      "Read one investigation: status (queued, running, then completed, failed or cancelled), evidence, hypotheses, RCA",
    scope: "sre_investigations_read",
    input: InvestigationId,
    run: (ctx, input) => getInvestigation({ ctx, input }),
  }),
  defineTool({
    name: "list_investigations",
    description: "List the workspace's investigations, newest first, with listInvestigations' filters",
    scope: "sre_investigations_read",
    input: ListInvestigationsInput,
    run: (ctx, input) => listInvestigations({ ctx, input }),
  }),
  defineTool({
    name: "list_sessions",
    description:
      "List the caller's sessions (runs of investigations, Ask and webhooks), most recent activity first, with listSessions' filters",
    scope: "aios_automation_read",
    input: ListSessionsInput,
    run: (ctx, input) => listSessions({ ctx, input }),
  }),
  defineTool({
    name: "ask",
    description:
      "Ask (startAskPlatform): route a message to a workflow or agent and start it. decision inputs_required: answer with inputs in the same session_id. Poll get_execution with its trace_id",
    scope: "aios_automation_write",
    input: AskInput,
    run: (ctx, input) => startAsk({ ctx, input: { ...input, source_app: "mcp" } }),
  }),
  defineTool({
    name: "get_execution",
    description:
      "A run's trace (getExecutionTrace): its status, stages and outputs. Poll until execution.status is completed or error and trace_settled is true",
    scope: "aios_automation_read",
    input: Type.Object(
      { trace_id: Uuid("The trace_id Ask or a webhook trigger answered") },
      { additionalProperties: false },
    ),
    run: (ctx, input) => getExecutionTrace({ ctx, input: { traceId: input.trace_id } }),
  }),
];

// Checked as the HTTP API checks a JSON body (compileBodyValidator): TypeBox's own checker counts a
// length in UTF-16 units, and refused an emoji message the route accepts.
const inputChecks = new Map(MCP_TOOLS.map((tool) => [tool, compileBodyValidator(tool.input)]));

/** The input with the schema's defaults, or the HTTP API's 400 naming the first bad field. */
export function validInput(tool: McpTool, args: unknown): unknown {
  const unstorable = unstorableTextError(args, "arguments");
  if (unstorable) throw unstorable;
  const value = structuredClone(args ?? {});
  const check = inputChecks.get(tool) ?? compileBodyValidator(tool.input);
  if (check(value)) return value;
  const failure = { validation: check.errors ?? [], validationContext: "arguments" };
  throw toAppError(Object.assign(new Error("invalid arguments"), failure));
}

/**
 * The input schema a client is shown: a field with a default is optional to the caller (validInput
 * fills it in), so it is not listed as required. TypeBox lists it, as it does every field not
 * marked Optional.
 */
export function advertisedInput(tool: McpTool): { type: "object"; [key: string]: unknown } {
  const schema = JSON.parse(JSON.stringify(tool.input)) as {
    type: "object";
    properties?: Record<string, { default?: unknown }>;
    required?: string[];
  };
  const required = schema.required?.filter((name) => schema.properties?.[name]?.default === undefined);
  if (required?.length) schema.required = required;
  else delete schema.required;
  return schema;
}
