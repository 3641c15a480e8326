// Alert ingest, end to end for a group of deliveries (architecture.md, "Alert ingest"). The trigger
// hands over deliveries that arrived together (trigger.ts, group commit), so one transaction and a
// handful of statements serve them all:
//   1. parse each body with its registration's source parser (prepare, before the transaction)
//   2. read the stored alerts' keys and last event hashes, then read whole and lock the ones an
//      event changes (a repeat of an alert's last event reads and writes nothing more)
//   3. plan each event against the alert's current state (lifecycle.ts), deliveries in arrival order
//   4. storms (storms.ts): scope, impact outside a storm, and the mark for the storm correlator
//   5. write the bodies, all alerts, their history and the storm queue in one statement; queue
//      triage in one more
// Storm membership and roles are not decided here: the correlator does it right after the commit,
// off the sender's clock (storm-correlator.ts).
import { hash } from "node:crypto";
import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../core/context.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import {
  deferWrite,
  type Executor,
  executeNamed,
  executeNow,
  executePlannedOnce,
  type Tx,
  useGenericPlans,
} from "../../core/db/database.ts";
import { boundJsonArray } from "../../core/db/json-array.ts";
import { uuidv7 } from "../../core/ids.ts";
import type { EnqueueMany } from "../../core/queue/catalog.ts";
import {
  type BatchedTarget,
  storableJson,
  storableText,
  storableValue,
  type TargetResult,
  type WebhookTarget,
} from "../../webhooks/index.ts";
import type { ImpactOptions } from "../correlation/impact.ts";
import { markStorms, type StormQueueEntry } from "../correlation/storms.ts";
import { registrationOfWebhook } from "../registrations/registrations.ts";
import { PARSERS, readSnsHandshake } from "../sources/index.ts";
import type { AlertEvent, SourceType } from "../sources/types.ts";
import { alerts, tenantKey } from "../tables.ts";
import { classifyAlertsJob } from "../triage/classify-job.ts";
import { queueForTriage, type TriageSettings, triageJobs } from "../triage/triage.ts";
import { ALERT_SELECT_LIST, ALERT_UPDATE_LIST, recordFromRow, rowFromRecord } from "./alert-rows.ts";
import { AUTO_INVESTIGATE_JOB } from "./auto-investigate.ts";
import { confirmSnsSubscriptionJob } from "./confirm-sns.ts";
import {
  type AlertPlan,
  type AlertRow,
  type AlertScope,
  HISTORY_LIMIT,
  type IngestOutcome,
  planAlertChange,
} from "./lifecycle.ts";

export { HISTORY_LIMIT };

export interface IngestResult {
  id: string;
  external_uid: string;
  outcome: IngestOutcome;
}

export interface IngestBatch {
  scope: AlertScope;
  events: AlertEvent[];
  /** The events' hashes, given when the events are storable already (`storableEvents`). */
  hashes?: string[];
  receivedAt: Date;
  via: "push" | "pull";
  rawPayload: string | null;
  /**
   * Each event's own part of the body, when the body lists many alerts that share nothing (a
   * pulled /api/v2/alerts answer): an alert keeps its own item as its raw payload, not the list.
   */
  rawPayloads?: string[];
  invocationId: string | null;
  /** How new and re-fired alerts are classified; null: not at all. */
  triage: TriageSettings | null;
  /** Start an investigation for each alert this batch creates (the registration's auto_investigate). */
  autoInvestigate?: boolean;
}

export interface IngestOptions {
  /** Sends the triage jobs, in the transaction. */
  enqueueMany: EnqueueMany;
  impact?: ImpactOptions;
}

/**
 * Events as they are stored, every field made storable (storable.ts), with the hash of each that
 * tells a repeat: a retry of the same delivery compares equal to what the first one stored.
 */
export function storableEvents(events: AlertEvent[]): { events: AlertEvent[]; hashes: string[] } {
  const stored = events.map(storableJson);
  return {
    events: stored.map(({ value }) => value),
    hashes: stored.map(({ json }) => hash("sha256", json, "hex")),
  };
}

/** Identity of an alert across tenants and registrations: the unique key of `alerts`. */
function alertKey(
  scope: { orgId: string | null; ownerId: string; sourceType: string; integrationName: string },
  uid: string,
): string {
  return JSON.stringify([scope.orgId, scope.ownerId, scope.sourceType, scope.integrationName, uid]);
}

/**
 * The key and last event hash of each stored alert of these deliveries, not locked: a repeat of the
 * last event writes nothing, so it needs no lock, and its verdict holds as if it came before any
 * change under way. The alerts an event changes are then read whole and locked (`loadAlerts`).
 */
export function alertKeysStatement(batches: Pick<IngestBatch, "scope" | "events">[]): {
  query: SQL;
  scopes: number;
} {
  // One branch per registration scope (usually one), each a lookup in alerts_key (tables.ts),
  // written so that no other index can serve it, whatever the statistics.
  const uidsByScope = new Map<string, { scope: AlertScope; uids: Set<string> }>();
  for (const { scope, events } of batches) {
    const key = alertKey(scope, "");
    const entry = uidsByScope.get(key) ?? { scope, uids: new Set<string>() };
    for (const event of events) entry.uids.add(event.external_uid);
    uidsByScope.set(key, entry);
  }
  const branches = [...uidsByScope.values()].map(
    ({ scope, uids }) => sql`select id from alerts
      where external_uid = any(${textArray([...uids])}::text[])
        and ${tenantKey(alerts)} = ${scope.orgId ?? scope.ownerId}
        and source_type = ${scope.sourceType} and integration_name = ${scope.integrationName}`,
  );
  const query = sql`
    select ${sql.raw(KEY_SELECT_LIST)} from alerts
    where id = any(array(${sql.join(branches, sql` union all `)}))`;
  return { query, scopes: branches.length };
}

/** What the key read returns of an alert: its key, and the hash that tells a repeat of its last event. */
const KEY_SELECT_LIST = "id, external_uid, org_id, owner_id, source_type, integration_name, last_event_hash";

/** Key reads of at most this many scopes run as named statements (their text is fixed by the number of scopes). */
const NAMED_KEYS_MAX_SCOPES = 4;

/** The deliveries' stored alerts, by alertKey: whole when an event may change them, else only their id. */
interface StoredAlerts {
  rows: Map<string, AlertRow>;
  /** Alerts every event of the group repeats (the hash they last stored): nothing to plan. */
  repeated: Map<string, string>;
}

async function loadAlerts(tx: Tx, batches: HashedBatch[]): Promise<StoredAlerts> {
  // Sent now, so that in a pipelined transaction they leave with BEGIN. The named statements of
  // this transaction (this read, the write of a few alerts, the job and invocation inserts) run on
  // the plan made when they were prepared: left to choose, PostgreSQL planned the read again on
  // every execution (0.25 to 0.5 ms, against 0.05 ms to run it). On the embedded database only
  // once `alerts` has statistics, which its maintenance pass gathers (embedded-maintenance.ts): a
  // generic plan made on a new, empty table was kept as the table grew, and took 10.5 ms in the
  // ingest bench against 1.7 ms to parse, plan and run the read each time. With statistics it
  // takes a third of the unnamed read's time (0.2 against 0.8 ms, net of the transaction, at
  // 10,000 alerts).
  const { query, scopes } = alertKeysStatement(batches);
  const [, { rows }] = await Promise.all([
    useGenericPlans(tx),
    scopes <= NAMED_KEYS_MAX_SCOPES
      ? executePlannedOnce(tx, "alerts", `alerts.keys.${scopes}`, query)
      : executeNow(tx, query),
  ]);
  const keyed = new Map<string, { id: string; lastEventHash: string | null }>();
  for (const record of rows as unknown as KeyRecord[]) {
    const key = alertKey(
      {
        orgId: record.org_id,
        ownerId: record.owner_id,
        sourceType: record.source_type,
        integrationName: record.integration_name,
      },
      record.external_uid,
    );
    keyed.set(key, { id: record.id, lastEventHash: record.last_event_hash });
  }
  // Only alerts that an event may change are read whole and locked (a second round trip, when there
  // are any): parsing 50 columns of every repeated alert was a tenth of the process's time on
  // repeats, and locking it wrote to its page. Concurrent deliveries of one alert: FOR UPDATE (in
  // id order, so no deadlock) makes the second wait and then read the first one's result, which
  // the plan checks again (a repeat of it is a duplicate). Two deliveries that both create the same
  // new alert collide on the unique key instead; the trigger retries the loser, which then finds it.
  const changing = new Set<string>();
  for (const { keys, hashes } of batches) {
    for (let n = 0; n < keys.length; n++) {
      const stored = keyed.get(keys[n] as string);
      if (stored && stored.lastEventHash !== hashes[n]) changing.add(stored.id);
    }
  }
  const loaded: StoredAlerts = { rows: new Map(), repeated: new Map() };
  if (changing.size > 0) {
    const { rows: records } = await executeNamed(
      tx,
      "alerts.lock",
      sql`select ${sql.raw(ALERT_SELECT_LIST)} from alerts where id = any(${boundArray([...changing], "uuid")})
        order by id for update`,
    );
    for (const record of records) {
      const row = rowFromRecord(record);
      loaded.rows.set(alertKey(row, row.externalUid), row);
    }
  }
  for (const [key, { id }] of keyed) if (!changing.has(id)) loaded.repeated.set(key, id);
  return loaded;
}

interface KeyRecord {
  id: string;
  external_uid: string;
  org_id: string | null;
  owner_id: string;
  source_type: string;
  integration_name: string;
  last_event_hash: string | null;
}

/** A delivery with its events storable and hashed, and the alertKey of each. */
type HashedBatch = IngestBatch & { hashes: string[]; keys: string[] };

/** A text[] literal. Safe here: uids are path-safe (alert-sources.md 1.2), so no quote or backslash. */
function textArray(values: string[]): string {
  return `{${values.map((value) => `"${value}"`).join(",")}}`;
}

interface PayloadRecord {
  id: string;
  body: string;
  received_at: Date;
}

interface HistoryRecord {
  alert_id: string;
  seq: number;
  /** As text, written once per delivery instead of by Date's toJSON for each event (alert-rows.ts). */
  at: string;
  kind: string;
  actor: string;
  source_event: string;
  status_before: string | null;
  status_after: string;
  invocation_id: string | null;
  detail: Record<string, unknown>;
}

/**
 * One statement for the deliveries' bodies, their alerts and the alerts' history. New alerts are
 * inserted and stored ones updated, each by its id: an upsert would pay for a speculative insertion
 * (a probe of the key and a confirmation record) on every new alert, whose fresh id never conflicts.
 */
async function writeAlerts(
  tx: Tx,
  payloads: PayloadRecord[],
  rows: { created: AlertRow[]; updated: AlertRow[] },
  history: HistoryRecord[],
  stormQueue: StormQueueEntry[],
): Promise<void> {
  // Planning this statement costs more than running it for a few rows; for many rows a plan made
  // for their number is worth it (a generic plan of a large write measured slower). The rows travel
  // as json, not jsonb: json is read once, field by field, where jsonb first builds and key-sorts
  // the whole document (PostgreSQL spent 10.2 s of CPU on the 50-alert bench with jsonb, 7.0 with json).
  const query = sql`
    with payloads as (
      insert into alert_payloads (id, body, received_at)
      select id, body, received_at from json_populate_recordset(null::alert_payloads, ${boundJsonArray(payloads)})
    ), created as (
      insert into alerts select * from json_populate_recordset(null::alerts, ${boundJsonArray(rows.created.map(recordFromRow))})
    ), updated as (
      update alerts set ${sql.raw(ALERT_UPDATE_LIST)}
      from json_populate_recordset(null::alerts, ${boundJsonArray(rows.updated.map(recordFromRow))}) r
      where alerts.id = r.id
    ), queued as (
      insert into alert_storm_queue (alert_id, seq, org_id, owner_id, storm_scope, triggered_at)
      select alert_id, seq, org_id, owner_id, storm_scope, triggered_at
      from json_populate_recordset(null::alert_storm_queue, ${boundJsonArray(stormQueue)})
    )
    insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
    select alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail
    from json_populate_recordset(null::alert_events, ${boundJsonArray(history)})`;
  const count = rows.created.length + rows.updated.length;
  await deferWrite(tx, () =>
    count <= NAMED_WRITE_MAX_ROWS ? executeNamed(tx, "alerts.write", query) : tx.execute(query),
  );
}

/** Writes of at most this many alerts run as one named (planned once) statement. */
const NAMED_WRITE_MAX_ROWS = 16;

/**
 * Applies deliveries in order in one transaction: events of one alert, in one delivery or across
 * deliveries, see each other's effects. Returns each delivery's results.
 */
export async function applyAlertBatches(
  tx: Tx,
  batches: IngestBatch[],
  options: IngestOptions,
): Promise<IngestResult[][]> {
  if (batches.every((batch) => batch.events.length === 0)) return batches.map(() => []);
  // Pushed events were made storable in prepare; pulled ones (alert sync) come straight here.
  const hashed: HashedBatch[] = batches.map((batch) => {
    const storable = batch.hashes
      ? { events: batch.events, hashes: batch.hashes }
      : storableEvents(batch.events);
    const keys = storable.events.map((event) => alertKey(batch.scope, event.external_uid));
    return { ...batch, ...storable, keys };
  });
  const { rows: current, repeated } = await loadAlerts(tx, hashed);
  const stored = new Map([...current.values()].map((row) => [row.id, row]));

  const changed = new Map<string, AlertRow>();
  const history: HistoryRecord[] = [];
  const payloads: PayloadRecord[] = [];
  const triage: { scope: AlertScope; buckets: Map<string, number> }[] = [];
  const investigations: { data: { alertId: string; orgId: string | null; ownerId: string } }[] = [];
  const results: IngestResult[][] = [];
  for (const batch of hashed) {
    const planned: { row: AlertRow; outcome: IngestOutcome; before: AlertRow | null }[] = [];
    const delivery: IngestResult[] = [];
    // A pushed delivery's body is its invocation record's payload, written in this transaction
    // (trigger.ts): its alerts point at the invocation. Only a pulled answer is stored here.
    const payload =
      batch.rawPayload === null || batch.invocationId !== null
        ? null
        : { id: uuidv7(), body: storableText(batch.rawPayload), received_at: batch.receivedAt };
    const rawPayloadId = batch.rawPayload === null ? null : (batch.invocationId ?? payload?.id ?? null);
    const { events, hashes, keys } = batch;
    const receivedAt = batch.receivedAt.toISOString();
    for (let n = 0; n < events.length; n++) {
      const event = events[n] as AlertEvent;
      const key = keys[n] as string;
      const repeatOf = repeated.get(key);
      if (repeatOf !== undefined) {
        delivery.push({ id: repeatOf, external_uid: event.external_uid, outcome: "duplicate" });
        continue;
      }
      const existing = current.get(key) ?? null;
      const own = batch.rawPayloads?.[n];
      const ownPayload =
        own === undefined ? null : { id: uuidv7(), body: storableText(own), received_at: batch.receivedAt };
      const plan: AlertPlan = planAlertChange(existing, event, {
        scope: batch.scope,
        receivedAt: batch.receivedAt,
        via: batch.via,
        rawPayloadId: ownPayload?.id ?? rawPayloadId,
        eventHash: hashes[n] as string,
      });
      if (ownPayload && plan.next?.rawPayloadId === ownPayload.id) payloads.push(ownPayload);
      if (plan.next && plan.history) {
        plan.next.eventSeq += 1;
        history.push({
          alert_id: plan.next.id,
          seq: plan.next.eventSeq,
          at: receivedAt,
          kind: plan.history.kind,
          // A resolve Vigil inferred (a pull sync missed the alert) is Vigil's word, not the source's.
          actor: event.inferred ? "vigil" : "source",
          source_event: plan.history.sourceEvent,
          status_before: plan.history.statusBefore,
          status_after: plan.history.statusAfter,
          invocation_id: batch.invocationId,
          detail: plan.history.detail,
        });
      }
      if (plan.next) {
        current.set(key, plan.next);
        changed.set(plan.next.id, plan.next);
        planned.push({ row: plan.next, outcome: plan.outcome, before: existing });
      }
      delivery.push({
        id: (plan.next ?? existing)?.id ?? "",
        external_uid: event.external_uid,
        outcome: plan.outcome,
      });
    }
    // The body is stored only when an alert points at it: a stale-only delivery keeps the old one.
    if (payload && planned.some(({ row }) => row.rawPayloadId === payload.id)) payloads.push(payload);
    if (batch.triage) triage.push({ scope: batch.scope, buckets: queueForTriage(planned, batch.triage) });
    if (batch.autoInvestigate) {
      for (const { row, outcome } of planned) {
        // A source's test notification shows that it arrived; it is not investigated.
        if (outcome !== "created" || row.isTest) continue;
        investigations.push({
          data: { alertId: row.id, orgId: batch.scope.orgId, ownerId: batch.scope.ownerId },
        });
      }
    }
    results.push(delivery);
  }

  if (changed.size > 0) {
    const rows = [...changed.values()];
    const stormQueue = markStorms(
      rows.map((row) => ({ before: stored.get(row.id) ?? null, after: row })),
      options.impact,
    );
    await writeAlerts(
      tx,
      payloads,
      {
        created: rows.filter((row) => !stored.has(row.id)),
        updated: rows.filter((row) => stored.has(row.id)),
      },
      history,
      stormQueue,
    );
    await trimHistory(tx, rows);
  }
  // The group's buckets are queued together: one or two job rows per tenant, not per delivery.
  const jobs = triageJobs(triage);
  if (jobs.length > 0) await options.enqueueMany(tx, classifyAlertsJob, jobs);
  if (investigations.length > 0) await options.enqueueMany(tx, AUTO_INVESTIGATE_JOB, investigations);
  return results;
}

/** One delivery (or one pull) in the caller's transaction. */
export async function applyAlertEvents(
  tx: Tx,
  batch: IngestBatch,
  options: IngestOptions,
): Promise<IngestResult[]> {
  const [results] = await applyAlertBatches(tx, [batch], options);
  return results ?? [];
}

async function trimHistory(tx: Executor, rows: AlertRow[]): Promise<void> {
  const over = rows.filter((row) => row.eventSeq > HISTORY_LIMIT);
  if (over.length === 0) return;
  const bounds = JSON.stringify(over.map((row) => ({ alert_id: row.id, seq: row.eventSeq - HISTORY_LIMIT })));
  await deferWrite(tx, () =>
    tx.execute(sql`
    delete from alert_events e using json_to_recordset(${bounds}::json) as b(alert_id uuid, seq int)
    where e.alert_id = b.alert_id and e.seq <= b.seq`),
  );
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

/** A delivery parsed and ready to apply. */
interface IngestWork {
  batch: IngestBatch;
  response: Record<string, unknown>;
  note: string | null;
  snsConfirm: {
    subscribeUrl: string;
    topicArn: string | null;
    webhookId: string;
    invocationId: string;
  } | null;
}

function ingestOptions(services: Services): IngestOptions {
  return {
    enqueueMany: services.queue.enqueueMany,
    impact: { environmentCriticality: services.config.environmentCriticality },
  };
}

const batched: BatchedTarget<IngestWork> = {
  async prepare({ db, webhook, invocationId, body, headers, receivedAt, services }) {
    const registration = await registrationOfWebhook(db, webhook.id);
    if (!registration)
      return { status: "rejected", message: "this webhook has no alert-ingest registration" };
    const source = registration.source as SourceType;
    // What the parser read from the body (events, note, refusal) is cleaned once, here, so the answer,
    // the invocation record, the alerts and the job data all hold the same storable text.
    const parsed = PARSERS[source]({
      body,
      headers,
      options: { severityOverrides: registration.severityOverrides },
    });
    if (!parsed.ok) return { status: "rejected", message: `${source}: ${storableText(parsed.error)}` };
    const { events, hashes } = storableEvents(parsed.events);
    countUnmapped(services, source, events);
    // Only an SNS handshake is an event-less cloudwatch body with a note; read it again for its URL.
    const handshake =
      source === "cloudwatch" && parsed.note !== undefined
        ? storableValue(readSnsHandshake({ body, headers }))
        : null;
    const confirmable = registration.snsAutoConfirm ? (handshake?.confirmUrl ?? null) : null;
    const note =
      handshake?.type === "SubscriptionConfirmation"
        ? `${parsed.note}; ${confirmationNote(registration.snsAutoConfirm, confirmable)}`
        : parsed.note;
    return {
      status: "prepared",
      work: {
        batch: {
          scope: {
            orgId: registration.orgId,
            ownerId: registration.ownerId,
            sourceType: source,
            integrationName: registration.integration,
            webhookId: webhook.id,
          },
          events,
          hashes,
          receivedAt,
          via: "push",
          rawPayload: body,
          invocationId,
          triage: {
            mode: registration.classifyMode as TriageSettings["mode"],
            windowSeconds: registration.classifyBatchWindowSeconds,
            bucketBy: registration.classifyBucketBy as TriageSettings["bucketBy"],
            criticalBypass: registration.classifyCriticalBypass,
          },
          autoInvestigate: registration.autoInvestigate,
        },
        response: { events: events.length },
        note: note === undefined ? null : storableText(note),
        snsConfirm: confirmable
          ? {
              subscribeUrl: confirmable,
              topicArn: handshake?.topicArn ?? null,
              webhookId: webhook.id,
              invocationId,
            }
          : null,
      },
    };
  },
  async apply(tx, works, services): Promise<TargetResult[]> {
    const options = ingestOptions(services);
    const confirms = works.flatMap((work) => (work.snsConfirm ? [{ data: work.snsConfirm }] : []));
    if (confirms.length > 0) await options.enqueueMany(tx, confirmSnsSubscriptionJob, confirms);
    const results = await applyAlertBatches(
      tx,
      works.map((work) => work.batch),
      options,
    );
    return works.map((work, n) => ({
      status: "accepted",
      response: { ...work.response, alerts: results[n] ?? [], note: work.note },
      note: work.note,
    }));
  },
};

/** The webhook target of alert-ingest registrations: deliveries arriving together share a transaction. */
export const alertIngestTarget: WebhookTarget = Object.assign(
  async (input: Parameters<WebhookTarget>[0]): Promise<TargetResult> => {
    const prepared = await batched.prepare({ ...input, db: input.tx });
    if (prepared.status === "rejected") return prepared;
    const [result] = await batched.apply(input.tx, [prepared.work], input.services);
    return result as TargetResult;
  },
  { batch: batched as BatchedTarget<unknown> },
);

/** What becomes of an SNS subscription the delivery asks to confirm, for its invocation's note. */
function confirmationNote(autoConfirm: boolean, subscribeUrl: string | null): string {
  if (!autoConfirm) return "auto-confirm is off: open its SubscribeURL to confirm the subscription";
  if (subscribeUrl) return "confirming the subscription";
  return "not confirmed: its SubscribeURL is not an https URL of an sns.<region>.amazonaws.com host";
}
