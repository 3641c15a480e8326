// Alert ingest, end to end for one delivery (architecture.md, "Alert ingest"):
//   1. parse the body with the registration's source parser
//   2. lock the alert keys of the delivery, read the stored alerts in one query
//   3. plan each event against the alert's current state (lifecycle.ts)
//   4. storms (storms.ts): scope, leaving and impact in memory; the write takes the scope locks
//   5. write all alerts in one upsert and their history in one insert
//   6. correlate the locked scopes: storm, role and impact of the alerts whose storm changed
// Everything runs in the trigger's transaction, so the 202 means it is all committed.
import { createHash, randomUUID } from "node:crypto";
import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../core/context.ts";
import type { Executor, Tx } from "../core/db/database.ts";
import type { Enqueue } from "../core/queue/catalog.ts";
import type { WebhookTarget } from "../webhooks/index.ts";
import { ALERT_SELECT_LIST, ALERT_UPDATE_LIST, recordFromRow, rowFromRecord } from "./alert-rows.ts";
import { classifyAlertsJob } from "./classify-job.ts";
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
import {
  correlateStorms,
  prepareStorms,
  type StormLock,
  type StormSnapshot,
  stormReadQuery,
} from "./storms.ts";
import { enqueueTriage, queueForTriage, type TriageSettings } from "./triage.ts";

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
  /** How new and re-fired alerts are classified, and how to send the job; null: not at all. */
  triage: { settings: TriageSettings; enqueue: Enqueue } | null;
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

/** A text[] literal. Safe here: uids are path-safe (alert-sources.md 1.2), so no quote or backslash. */
function textArray(values: string[]): string {
  return `{${values.map((value) => `"${value}"`).join(",")}}`;
}

// Concurrent deliveries of one alert: FOR UPDATE (in id order, so no deadlock) makes the second
// wait and then read the first one's result. Two deliveries that both create the same new alert
// collide on the unique key instead; the trigger retries the loser, which then finds the alert.
async function loadAlerts(tx: Tx, scope: AlertScope, uids: string[]): Promise<Map<string, AlertRow>> {
  const tenant = scope.orgId
    ? sql`org_id = ${scope.orgId}`
    : sql`org_id is null and owner_id = ${scope.ownerId}`;
  const { rows } = await tx.execute(
    sql`select ${sql.raw(ALERT_SELECT_LIST)} from alerts where ${tenant} and source_type = ${scope.sourceType}
        and integration_name = ${scope.integrationName} and external_uid = any(${textArray(uids)}::text[])
        order by id for update`,
  );
  return new Map(rows.map((record) => [String(record.external_uid), rowFromRecord(record)]));
}

/**
 * One statement for the delivery's body, its alerts and their history. When storms may change it
 * also takes the storm scopes' advisory locks and reads those scopes (storms.ts), saving two
 * round trips.
 */
async function writeAlerts(
  tx: Tx,
  payload: { id: string; body: string; receivedAt: Date } | null,
  rows: AlertRow[],
  history: HistoryRecord[],
  storms: { locks: StormLock[]; read: (heldKeys: SQL) => SQL } | null,
): Promise<StormSnapshot> {
  const locks = storms?.locks ?? [];
  const { rows: result } = await tx.execute(sql`
    with locks as (
      select l.key::text as key, case when l.wait then pg_advisory_xact_lock(l.key)::text = '' else pg_try_advisory_xact_lock(l.key) end as held
      from unnest(${`{${locks.map((lock) => lock.key).join(",")}}`}::bigint[], ${`{${locks.map((lock) => lock.wait).join(",")}}`}::boolean[])
        with ordinality as l(key, wait, n)
      order by l.n
    ), payload as (
      insert into alert_payloads (id, body, received_at)
      select ${payload?.id ?? null}::uuid, ${payload?.body ?? ""}, ${payload?.receivedAt.toISOString() ?? null}::timestamptz
      where ${payload !== null}
    ), upserted as (
      insert into alerts select * from jsonb_populate_recordset(null::alerts, ${JSON.stringify(rows.map(recordFromRow))}::jsonb)
      on conflict (id) do update set ${sql.raw(ALERT_UPDATE_LIST)}
    ), history as (
      insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
      select alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail
      from jsonb_populate_recordset(null::alert_events, ${JSON.stringify(history)}::jsonb)
    ), held as (
      select coalesce(json_agg(key), '[]') as keys from locks where held
    )
    select held.keys, ${storms ? sql`(${storms.read(sql`select key from locks where held`)})` : sql`null`} as alerts
    from held`);
  const first = result[0] ?? {};
  const keys = (typeof first.keys === "string" ? JSON.parse(first.keys) : (first.keys ?? [])) as string[];
  return { lockedKeys: new Set(keys), alerts: first.alerts ?? null };
}

interface HistoryRecord {
  alert_id: string;
  seq: number;
  at: Date;
  kind: string;
  actor: string;
  source_event: string;
  status_before: string | null;
  status_after: string;
  invocation_id: string | null;
  detail: Record<string, unknown>;
}

/** Applies a delivery's events in payload order; events of one alert see each other's effects. */
export async function applyAlertEvents(tx: Tx, batch: IngestBatch): Promise<IngestResult[]> {
  if (batch.events.length === 0) return [];
  const uids = [...new Set(batch.events.map((event) => event.external_uid))];
  const current = await loadAlerts(tx, batch.scope, uids);
  const stored = new Map([...current.values()].map((row) => [row.id, row]));

  const changed = new Map<string, AlertRow>();
  const planned: { row: AlertRow; outcome: IngestOutcome }[] = [];
  const history: HistoryRecord[] = [];
  const results: IngestResult[] = [];
  const payload =
    batch.rawPayload === null
      ? null
      : { id: randomUUID(), body: storable(batch.rawPayload), receivedAt: batch.receivedAt };
  for (const event of batch.events.map(storableEvent)) {
    const existing = current.get(event.external_uid) ?? null;
    const plan: AlertPlan = planAlertChange(existing, event, {
      scope: batch.scope,
      receivedAt: batch.receivedAt,
      via: batch.via,
      rawPayloadId: payload?.id ?? null,
      eventHash: eventHash(event),
    });
    if (plan.next && plan.history) {
      plan.next.eventSeq += 1;
      history.push({
        alert_id: plan.next.id,
        seq: plan.next.eventSeq,
        at: batch.receivedAt,
        kind: plan.history.kind,
        actor: "source",
        source_event: plan.history.sourceEvent,
        status_before: plan.history.statusBefore,
        status_after: plan.history.statusAfter,
        invocation_id: batch.invocationId,
        detail: plan.history.detail,
      });
      current.set(event.external_uid, plan.next);
      changed.set(plan.next.id, plan.next);
      planned.push({ row: plan.next, outcome: plan.outcome });
    }
    results.push({
      id: (plan.next ?? existing)?.id ?? "",
      external_uid: event.external_uid,
      outcome: plan.outcome,
    });
  }

  const buckets = batch.triage ? queueForTriage(planned, batch.triage.settings) : new Map<string, number>();
  if (changed.size > 0) {
    const rows = [...changed.values()];
    // The body is stored only when an alert points at it: a stale-only delivery keeps the old one.
    const referenced = rows.some((row) => row.rawPayloadId === payload?.id);
    const storms = prepareStorms(
      batch.scope,
      rows.map((row) => ({ before: stored.get(row.id) ?? null, after: row })),
    );
    const snapshot = await writeAlerts(
      tx,
      referenced ? payload : null,
      rows,
      history,
      storms && { locks: storms.locks, read: (heldKeys) => stormReadQuery(batch.scope, storms, heldKeys) },
    );
    if (storms) await correlateStorms(tx, batch.scope, storms, snapshot);
    await trimHistory(tx, rows);
  }
  if (batch.triage && buckets.size > 0) {
    const { enqueue } = batch.triage;
    await enqueueTriage(
      (data, options) => enqueue(tx, classifyAlertsJob, data, options),
      batch.scope,
      buckets,
    );
  }
  return results;
}

async function trimHistory(tx: Executor, rows: AlertRow[]): Promise<void> {
  const over = rows.filter((row) => row.eventSeq > HISTORY_LIMIT);
  if (over.length === 0) return;
  const bounds = JSON.stringify(over.map((row) => ({ alert_id: row.id, seq: row.eventSeq - HISTORY_LIMIT })));
  await tx.execute(sql`
    delete from alert_events e using jsonb_to_recordset(${bounds}::jsonb) as b(alert_id uuid, seq int)
    where e.alert_id = b.alert_id and e.seq <= b.seq`);
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
    triage: {
      settings: {
        mode: registration.classifyMode as TriageSettings["mode"],
        windowSeconds: registration.classifyBatchWindowSeconds,
        bucketBy: registration.classifyBucketBy as TriageSettings["bucketBy"],
        criticalBypass: registration.classifyCriticalBypass,
      },
      enqueue: services.queue.enqueue,
    },
  });
  return {
    status: "accepted",
    response: { events: parsed.events.length, alerts: results, note: parsed.note ?? null },
    note: parsed.note ?? null,
  };
};
