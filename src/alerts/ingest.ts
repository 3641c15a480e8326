// Alert ingest, end to end for one delivery (architecture.md, "Alert ingest"):
//   1. parse the body with the registration's source parser
//   2. lock the alert keys of the delivery, read the stored alerts in one query
//   3. plan each event against the alert's current state (lifecycle.ts)
//   4. write all alerts in one upsert and their history in one insert
// Everything runs in the trigger's transaction, so the 202 means it is all committed.
import { createHash } from "node:crypto";
import { and, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import type { Services } from "../core/context.ts";
import type { Executor, Tx } from "../core/db/database.ts";
import type { WebhookTarget } from "../webhooks/index.ts";
import { confirmSnsSubscriptionJob } from "./confirm-sns.ts";
import {
  type AlertPlan,
  type AlertRow,
  type AlertScope,
  type IngestOutcome,
  planAlertChange,
} from "./lifecycle.ts";
import { registrationOfWebhook } from "./registrations.ts";
import { PARSERS, readSnsHandshake } from "./sources/index.ts";
import type { AlertEvent, SourceType } from "./sources/types.ts";
import { alertEvents, alerts } from "./tables.ts";

/** Events kept per alert; older ones are trimmed. */
export const HISTORY_LIMIT = 200;

export interface IngestResult {
  id: string;
  external_uid: string;
  outcome: IngestOutcome;
}

export interface IngestBatch {
  scope: AlertScope;
  events: AlertEvent[];
  receivedAt: Date;
  via: "push" | "pull";
  rawPayload: string | null;
  invocationId: string | null;
}

function lockKey(scope: AlertScope, uid: string): string {
  const digest = createHash("sha256")
    .update([scope.orgId ?? "", scope.ownerId, scope.sourceType, scope.integrationName, uid].join("\u001f"))
    .digest();
  return digest.readBigInt64BE(0).toString();
}

// PostgreSQL text and jsonb cannot hold U+0000, and jsonb refuses unpaired surrogates, yet a JSON
// body carries both as escapes (`\u0000`, `\ud800`). They become U+FFFD, so the alert is stored
// rather than the whole delivery failing with a 500.
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must go
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function storable(text: string): string {
  return text.replace(UNSTORABLE, "\ufffd");
}

function storableEvent(event: AlertEvent): AlertEvent {
  return {
    ...event,
    ignore_reason: event.ignore_reason === null ? null : storable(event.ignore_reason),
    title: storable(event.title),
    description: storable(event.description),
    source_severity: storable(event.source_severity),
    labels: Object.fromEntries(
      Object.entries(event.labels).map(([key, value]) => [storable(key), storable(value)]),
    ),
    links: event.links.map((link) => ({ ...link, url: storable(link.url) })),
    source_event: storable(event.source_event),
    unmapped: event.unmapped.map((item) => ({ ...item, value: storable(item.value) })),
  };
}

function eventHash(event: AlertEvent): string {
  return createHash("sha256").update(JSON.stringify(event)).digest("hex");
}

const UPSERT_SET = Object.fromEntries(
  Object.entries(getTableColumns(alerts))
    .filter(([key]) => key !== "id")
    .map(([key, column]) => [key, sql.raw(`excluded."${column.name}"`)]),
);

async function loadAlerts(tx: Tx, scope: AlertScope, uids: string[]): Promise<Map<string, AlertRow>> {
  const tenant = scope.orgId
    ? eq(alerts.orgId, scope.orgId)
    : and(sql`${alerts.orgId} is null`, eq(alerts.ownerId, scope.ownerId));
  const rows = await tx
    .select()
    .from(alerts)
    .where(
      and(
        tenant,
        eq(alerts.sourceType, scope.sourceType),
        eq(alerts.integrationName, scope.integrationName),
        inArray(alerts.externalUid, uids),
      ),
    );
  return new Map(rows.map((row) => [row.externalUid, row]));
}

/** Applies a delivery's events in payload order; events of one alert see each other's effects. */
export async function applyAlertEvents(tx: Tx, batch: IngestBatch): Promise<IngestResult[]> {
  if (batch.events.length === 0) return [];
  const uids = [...new Set(batch.events.map((event) => event.external_uid))];
  // Concurrent deliveries of the same alert wait for each other; sorted to rule out deadlocks.
  const keys = [...new Set(uids.map((uid) => lockKey(batch.scope, uid)))].sort();
  await tx.execute(
    sql`select pg_advisory_xact_lock(k) from unnest(${`{${keys.join(",")}}`}::bigint[]) as k order by k`,
  );
  const current = await loadAlerts(tx, batch.scope, uids);

  const changed = new Map<string, AlertRow>();
  const history: (typeof alertEvents.$inferInsert)[] = [];
  const results: IngestResult[] = [];
  const rawPayload = batch.rawPayload === null ? null : storable(batch.rawPayload);
  for (const event of batch.events.map(storableEvent)) {
    const existing = current.get(event.external_uid) ?? null;
    const plan: AlertPlan = planAlertChange(existing, event, {
      scope: batch.scope,
      receivedAt: batch.receivedAt,
      via: batch.via,
      rawPayload,
      eventHash: eventHash(event),
    });
    if (plan.next && plan.history) {
      plan.next.eventSeq += 1;
      history.push({
        alertId: plan.next.id,
        seq: plan.next.eventSeq,
        at: batch.receivedAt,
        kind: plan.history.kind,
        actor: "source",
        sourceEvent: plan.history.sourceEvent,
        statusBefore: plan.history.statusBefore,
        statusAfter: plan.history.statusAfter,
        invocationId: batch.invocationId,
        detail: plan.history.detail,
      });
      current.set(event.external_uid, plan.next);
      changed.set(plan.next.id, plan.next);
    }
    results.push({
      id: (plan.next ?? existing)?.id ?? "",
      external_uid: event.external_uid,
      outcome: plan.outcome,
    });
  }

  if (changed.size > 0) {
    await tx
      .insert(alerts)
      .values([...changed.values()])
      .onConflictDoUpdate({ target: alerts.id, set: UPSERT_SET });
    await tx.insert(alertEvents).values(history);
    await trimHistory(tx, [...changed.values()]);
  }
  return results;
}

async function trimHistory(tx: Executor, rows: AlertRow[]): Promise<void> {
  const over = rows.filter((row) => row.eventSeq > HISTORY_LIMIT);
  for (const row of over) {
    await tx
      .delete(alertEvents)
      .where(
        and(eq(alertEvents.alertId, row.id), sql`${alertEvents.seq} <= ${row.eventSeq - HISTORY_LIMIT}`),
      );
  }
}

function countUnmapped(services: Services, sourceType: string, events: AlertEvent[]): void {
  const counter = services.metrics.counter(
    "vigil_ingest_unmapped_total",
    "Status or severity values a source sent that its table does not list",
    ["source_type", "field", "value"],
  );
  for (const event of events) {
    for (const item of event.unmapped) {
      counter.inc({ source_type: sourceType, field: item.field, value: item.value.slice(0, 64) });
    }
  }
}

/** The webhook target of alert-ingest registrations. */
export const alertIngestTarget: WebhookTarget = async ({
  tx,
  webhook,
  invocationId,
  body,
  headers,
  receivedAt,
  services,
}) => {
  const registration = await registrationOfWebhook(tx, webhook.id);
  if (!registration) return { status: "rejected", message: "this webhook has no alert-ingest registration" };
  const source = registration.source as SourceType;
  const parsed = PARSERS[source]({
    body,
    headers,
    options: { severityOverrides: registration.severityOverrides },
  });
  if (!parsed.ok) return { status: "rejected", message: `${source}: ${parsed.error}` };
  countUnmapped(services, source, parsed.events);
  if (source === "cloudwatch" && registration.snsAutoConfirm) {
    const handshake = readSnsHandshake({ body, headers });
    if (handshake?.confirmUrl) {
      await services.queue.enqueue(tx, confirmSnsSubscriptionJob, {
        subscribeUrl: handshake.confirmUrl,
        topicArn: handshake.topicArn,
        webhookId: webhook.id,
        invocationId,
      });
    }
  }
  const results = await applyAlertEvents(tx, {
    scope: {
      orgId: registration.orgId,
      ownerId: registration.ownerId,
      sourceType: source,
      integrationName: registration.integration,
      webhookId: webhook.id,
    },
    events: parsed.events,
    receivedAt,
    via: "push",
    rawPayload: body,
    invocationId,
  });
  return {
    status: "accepted",
    response: { events: parsed.events.length, alerts: results, note: parsed.note ?? null },
    note: parsed.note ?? null,
  };
};
