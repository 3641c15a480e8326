// Reading what arrived: one alert by id or external_uid, its history, and a first list.
// (The full list with its filters and summary belongs to the alert console.)
import { and, asc, count, desc, eq, or, type SQL } from "drizzle-orm";
import { inTenant, tenantOf } from "../core/auth/tenancy.ts";
import type { Ctx } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import { presentAlert, presentHistoryEvent } from "./present.ts";
import type { AlertV1 } from "./schemas.ts";
import { alertEvents, alertPayloads, alerts } from "./tables.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function findAlertRow(ctx: Ctx, id: string) {
  const byUid = eq(alerts.externalUid, id);
  const [row] = await ctx.db
    .select({ alert: alerts, rawPayload: alertPayloads.body })
    .from(alerts)
    .leftJoin(alertPayloads, eq(alertPayloads.id, alerts.rawPayloadId))
    .where(and(inTenant(alerts, tenantOf(ctx.actor)), UUID.test(id) ? or(eq(alerts.id, id), byUid) : byUid))
    // An external_uid shared by two sources resolves to the most recent trigger.
    .orderBy(desc(alerts.triggeredAt))
    .limit(1);
  if (!row) throw notFound("alert", { id });
  return row;
}

export async function getAlert({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<AlertV1> {
  const row = await findAlertRow(ctx, input.id);
  return presentAlert(row.alert, row.rawPayload);
}

export async function getAlertHistory({ ctx, input }: { ctx: Ctx; input: { id: string } }) {
  const { alert } = await findAlertRow(ctx, input.id);
  const events = await ctx.db
    .select()
    .from(alertEvents)
    .where(eq(alertEvents.alertId, alert.id))
    .orderBy(asc(alertEvents.seq));
  return { alert_id: alert.id, events: events.map(presentHistoryEvent) };
}

export async function listAlerts({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { status: string; page: number; pageSize: number };
}) {
  const tenant = inTenant(alerts, tenantOf(ctx.actor));
  const where: SQL = and(tenant, eq(alerts.status, input.status)) as SQL;
  const [rows, [total], summaryRows] = await Promise.all([
    ctx.db
      .select({ alert: alerts, rawPayload: alertPayloads.body })
      .from(alerts)
      .leftJoin(alertPayloads, eq(alertPayloads.id, alerts.rawPayloadId))
      .where(where)
      .orderBy(asc(alerts.displayPriority), desc(alerts.triggeredAt), asc(alerts.id))
      .limit(input.pageSize)
      .offset((input.page - 1) * input.pageSize),
    ctx.db.select({ n: count() }).from(alerts).where(where),
    ctx.db
      .select({ attention: alerts.attention, n: count() })
      .from(alerts)
      .where(and(tenant, eq(alerts.status, "active")))
      .groupBy(alerts.attention),
  ]);
  const counts = Object.fromEntries(summaryRows.map((row) => [row.attention, row.n]));
  const totalCount = total?.n ?? 0;
  return {
    alerts: rows.map((row) => presentAlert(row.alert, row.rawPayload)),
    page: input.page,
    page_size: input.pageSize,
    total: totalCount,
    total_pages: Math.ceil(totalCount / input.pageSize),
    summary: {
      total_active: summaryRows.reduce((sum, row) => sum + row.n, 0),
      needs_attention: counts.needs_attention ?? 0,
      needs_review: counts.needs_review ?? 0,
      false_positive: counts.false_positive ?? 0,
      others: counts.others ?? 0,
    },
  };
}
