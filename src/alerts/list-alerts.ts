// listAlerts and the two summaries of the alert console. The summaries always count active alerts,
// whatever list is shown, scoped by integration_names when given (spec, listAlerts rule 1).
import { and, asc, count, desc, eq, ilike, inArray, or, type SQL, sql } from "drizzle-orm";
import { inTenant, tenantOf } from "../core/auth/tenancy.ts";
import type { Ctx } from "../core/context.ts";
import { AppError } from "../core/errors.ts";
import { presentAlert } from "./present.ts";
import { alertPayloads, alerts } from "./tables.ts";

export interface ListAlertsInput {
  status: "active" | "resolved" | "ignored";
  attention?: string;
  source_type?: string;
  integration_names?: string;
  storm_id?: string;
  q?: string;
  signal_severity?: string;
  alert_role?: string;
  sort_by: "severity" | "impact";
  page: number;
  page_size: number;
}

/** `a,b` -> ["a", "b"]; an empty item is a client error, not a silent match-nothing. */
export function parseIntegrationNames(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const names = value.split(",").map((name) => name.trim());
  if (names.some((name) => name === "")) {
    throw new AppError(
      "VALIDATION_FAILED",
      "integration_names: must be a comma-separated list of non-empty names",
      {
        field: "integration_names",
        location: "querystring",
      },
    );
  }
  return names;
}

/** ILIKE pattern matching `text` literally: %, _ and \ are escaped. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function scopeConditions(ctx: Ctx, integrationNames: string[] | null): SQL[] {
  const conditions: SQL[] = [inTenant(alerts, tenantOf(ctx.actor))];
  if (integrationNames) conditions.push(inArray(alerts.integrationName, integrationNames));
  return conditions;
}

export async function listAlerts({ ctx, input }: { ctx: Ctx; input: ListAlertsInput }) {
  const integrationNames = parseIntegrationNames(input.integration_names);
  const scope = scopeConditions(ctx, integrationNames);
  const filters: SQL[] = [...scope];
  // A storm is an incident of active alerts: storm_id lists the active members.
  filters.push(eq(alerts.status, input.storm_id ? "active" : input.status));
  if (input.storm_id) filters.push(eq(alerts.stormId, input.storm_id));
  if (input.attention) filters.push(eq(alerts.attention, input.attention));
  if (input.source_type) filters.push(eq(alerts.sourceType, input.source_type));
  if (input.signal_severity) filters.push(eq(alerts.severity, input.signal_severity as never));
  if (input.alert_role) filters.push(eq(alerts.alertRole, input.alert_role));
  if (input.q) {
    const pattern = containsPattern(input.q);
    filters.push(or(ilike(alerts.title, pattern), ilike(alerts.description, pattern)) as SQL);
  }
  const where = and(...filters);
  // Ties always end on id, so pages never overlap or skip.
  const order =
    input.sort_by === "impact"
      ? [desc(alerts.impactScore), asc(alerts.displayPriority), desc(alerts.triggeredAt), asc(alerts.id)]
      : [asc(alerts.displayPriority), desc(alerts.triggeredAt), asc(alerts.id)];
  const [rows, [total], summary] = await Promise.all([
    ctx.db
      .select({ alert: alerts, rawPayload: alertPayloads.body })
      .from(alerts)
      .leftJoin(alertPayloads, eq(alertPayloads.id, alerts.rawPayloadId))
      .where(where)
      .orderBy(...order)
      .limit(input.page_size)
      .offset((input.page - 1) * input.page_size),
    ctx.db.select({ n: count() }).from(alerts).where(where),
    attentionSummary(ctx, scope),
  ]);
  const totalCount = total?.n ?? 0;
  return {
    alerts: rows.map((row) => presentAlert(row.alert, row.rawPayload)),
    page: input.page,
    page_size: input.page_size,
    total: totalCount,
    total_pages: Math.ceil(totalCount / input.page_size),
    summary,
  };
}

async function attentionSummary(ctx: Ctx, scope: SQL[]) {
  const [row] = await ctx.db
    .select({
      total: count(),
      needs_attention: count(sql`case when ${alerts.attention} = 'needs_attention' then 1 end`),
      needs_review: count(sql`case when ${alerts.attention} = 'needs_review' then 1 end`),
      false_positive: count(sql`case when ${alerts.attention} = 'false_positive' then 1 end`),
      others: count(sql`case when ${alerts.attention} = 'others' then 1 end`),
    })
    .from(alerts)
    .where(and(...scope, eq(alerts.status, "active")));
  return {
    total_active: row?.total ?? 0,
    needs_attention: row?.needs_attention ?? 0,
    others: row?.others ?? 0,
    needs_review: row?.needs_review ?? 0,
    false_positive: row?.false_positive ?? 0,
  };
}

export async function categorizationSummary({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { integration_names?: string };
}) {
  const scope = scopeConditions(ctx, parseIntegrationNames(input.integration_names));
  const [row] = await ctx.db
    .select({
      total: count(),
      not_started: count(sql`case when ${alerts.analysisStatus} = 'none' then 1 end`),
      in_progress: count(sql`case when ${alerts.analysisStatus} in ('queued', 'running') then 1 end`),
      completed: count(sql`case when ${alerts.analysisStatus} = 'completed' then 1 end`),
      failed: count(sql`case when ${alerts.analysisStatus} = 'failed' then 1 end`),
    })
    .from(alerts)
    .where(and(...scope, eq(alerts.status, "active")));
  const inProgress = row?.in_progress ?? 0;
  return {
    total_active: row?.total ?? 0,
    not_started: row?.not_started ?? 0,
    in_progress: inProgress,
    completed: row?.completed ?? 0,
    failed: row?.failed ?? 0,
    is_running: inProgress > 0,
  };
}
