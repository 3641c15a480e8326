// Reading what arrived: one alert by id or external_uid, and its history.
import { and, asc, desc, eq, ne, or } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { notFound } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import { webhookInvocations } from "../../webhooks/index.ts";
import type { AlertV1 } from "../schemas.ts";
import { alertEvents, alertPayloads, alerts } from "../tables.ts";
import { presentAlert, presentHistoryEvent } from "./present.ts";
import { rawPayloadColumns, rawPayloadText } from "./raw-payload.ts";

async function findAlertRow(ctx: CallerCtx, id: string) {
  const byUid = eq(alerts.externalUid, id);
  const [row] = await ctx.db
    .select({ alert: alerts, ...rawPayloadColumns })
    .from(alerts)
    .leftJoin(alertPayloads, eq(alertPayloads.id, alerts.rawPayloadId))
    .leftJoin(webhookInvocations, eq(webhookInvocations.id, alerts.rawPayloadId))
    .where(and(inTenant(alerts, tenantOf(ctx.actor)), isUuid(id) ? or(eq(alerts.id, id), byUid) : byUid))
    // The alert whose internal id it is comes first, whatever a source put in an external_uid; an
    // external_uid shared by two sources or integrations resolves to one still open (a deep link from
    // a firing alert wants it), then the most recent trigger, then the newest alert.
    .orderBy(
      ...(isUuid(id) ? [desc(eq(alerts.id, id))] : []),
      desc(ne(alerts.status, "resolved")),
      desc(alerts.triggeredAt),
      desc(alerts.id),
    )
    .limit(1);
  if (!row) throw notFound("alert", { id });
  return row;
}

export async function getAlert({ ctx, input }: { ctx: CallerCtx; input: { id: string } }): Promise<AlertV1> {
  const row = await findAlertRow(ctx, input.id);
  return presentAlert(row.alert, rawPayloadText(row));
}

export async function getAlertHistory({ ctx, input }: { ctx: CallerCtx; input: { id: string } }) {
  const { alert } = await findAlertRow(ctx, input.id);
  const events = await ctx.db
    .select()
    .from(alertEvents)
    .where(eq(alertEvents.alertId, alert.id))
    .orderBy(asc(alertEvents.seq));
  return { alert_id: alert.id, events: events.map(presentHistoryEvent) };
}
