// POST /platform/api/v1/webhooks/trigger: resolve the token, hand the body to the target, and record
// the invocation with the payload in the same transaction as the target's writes. A body the target
// refuses is still recorded (status failed); if Vigil itself fails, the payload is kept as `error`.
import type { Logger } from "pino";
import { type Batcher, createBatcher } from "../core/batcher.ts";
import type { Services } from "../core/context.ts";
import { deferWrite, type Executor, executeNamed, sql } from "../core/db/database.ts";
import { boundJsonTexts } from "../core/db/json-array.ts";
import { isDatabaseUnavailable, retryOnConflict } from "../core/db/pg-errors.ts";
import { AppError } from "../core/errors.ts";
import { uuidv7 } from "../core/ids.ts";
import { isNamedTarget } from "./schemas.ts";
import { storableJson } from "./storable.ts";
import type { BatchedTarget, TargetResult, WebhookTargets } from "./targets.ts";
import { findWebhookByToken, type WebhookRow } from "./webhooks.ts";

// Headers worth keeping with the payload; credentials never are.
const DROPPED_HEADERS = new Set(["authorization", "cookie", "proxy-authorization", "x-api-key"]);

export interface TriggerRequest {
  /** The webhook its token names (webhookOfToken, called before the body is read). */
  webhook: WebhookRow;
  orgId: string | null;
  /** The body exactly as received. */
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

export interface TriggerAccepted {
  webhook_id: string;
  invocation_id: string;
  target_type: string;
  target_name: string;
  [key: string]: unknown;
}

function flattenHeaders(headers: TriggerRequest["headers"]): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name.toLowerCase())) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

/** The webhook a trigger's token names; 401 when the token is missing or names none. */
export async function webhookOfToken(services: Services, token: string | null): Promise<WebhookRow> {
  if (!token) {
    throw new AppError(
      "UNAUTHENTICATED",
      "missing webhook token: pass ?apiKey=<token> or Authorization: Bearer <token>",
    );
  }
  const webhook = await findWebhookByToken(services.database.db, token);
  if (!webhook) throw new AppError("UNAUTHENTICATED", "invalid webhook token");
  return webhook;
}

/** The request's webhook, unless it is deleted, disabled or of another org than asked for (404). */
function liveWebhook(request: TriggerRequest): WebhookRow {
  const { webhook } = request;
  if (
    webhook.deletedAt ||
    !webhook.enabled ||
    (request.orgId && request.orgId.toLowerCase() !== webhook.orgId)
  ) {
    throw new AppError("NOT_FOUND", "webhook not found or disabled", { webhook_id: webhook.id });
  }
  return webhook;
}

interface Invocation {
  id: string;
  receivedAt: Date;
  finishedAt: Date;
  body: Buffer;
  headers: Record<string, string>;
}

type Outcome = TargetResult | { status: "error"; message: string };

function invocationRow(webhook: WebhookRow, invocation: Invocation, result: Outcome) {
  const accepted = result.status === "accepted" ? result : null;
  // A refusal with its own code (target not ready) keeps the JsonError the caller got.
  const refused =
    result.status === "rejected" && result.errCode
      ? { msg: result.message, errCode: result.errCode, extras: result.extras ? [result.extras] : [] }
      : null;
  return {
    id: invocation.id,
    webhookId: webhook.id,
    orgId: webhook.orgId,
    ownerId: webhook.ownerId,
    receivedAt: invocation.receivedAt,
    finishedAt: invocation.finishedAt,
    status: result.status === "rejected" ? "failed" : result.status,
    contentType: invocation.headers["content-type"] ?? null,
    headers: invocation.headers,
    payload: invocation.body,
    payloadBytes: invocation.body.length,
    error: "message" in result ? result.message : null,
    note: accepted?.note ?? null,
    outcome: accepted?.response ?? refused,
    sessionId: accepted?.sessionId ?? null,
    traceId: accepted?.traceId ?? null,
    runId: accepted?.runId ?? null,
    // Only a webhook that can be pointed elsewhere needs its record to say where this one went.
    ...(isNamedTarget(webhook.targetType) && {
      targetType: webhook.targetType,
      targetName: webhook.targetName,
    }),
  };
}

/**
 * One statement for any number of invocations, whose text is fixed (planned once per connection):
 * the rows travel as one JSON parameter, and their bodies, which JSON cannot hold, as one bytes
 * parameter, each row naming where its body starts. Bodies as hex inside the JSON doubled them, and
 * PostgreSQL parsed every hex digit as JSON before decoding it.
 */
async function recordInvocations(
  db: Executor,
  records: { webhook: WebhookRow; invocation: Invocation; result: Outcome }[],
): Promise<void> {
  let payloadAt = 0;
  const rows = records.map(({ webhook, invocation, result }) => {
    // Headers, error, note and outcome carry the sender's text: what PostgreSQL cannot store is
    // cleaned here, or the record itself would fail and the delivery be lost. The payload is bytes.
    const { payload, ...row } = invocationRow(webhook, invocation, result);
    const json = storableJson({ ...row, payloadAt }).json;
    payloadAt += payload.length;
    return json;
  });
  const payloads = Buffer.concat(records.map(({ invocation }) => invocation.body));
  await deferWrite(db, () =>
    executeNamed(
      db,
      "webhook_invocations.insert",
      sql`insert into webhook_invocations (id, webhook_id, org_id, owner_id, received_at, finished_at,
        status, content_type, headers, payload, payload_bytes, error, note, outcome, session_id,
        trace_id, run_id, target_type, target_name)
      select id, "webhookId", "orgId", "ownerId", "receivedAt", "finishedAt", status, "contentType",
        headers, substring(${payloads}::bytea from "payloadAt" + 1 for "payloadBytes"), "payloadBytes",
        error, note, outcome, "sessionId", "traceId", "runId", "targetType", "targetName"
      from json_to_recordset(${boundJsonTexts(rows)}) as r(id uuid, "webhookId" uuid,
        "orgId" uuid, "ownerId" uuid, "receivedAt" timestamptz, "finishedAt" timestamptz,
        status text, "contentType" text, headers jsonb, "payloadAt" int, "payloadBytes" int,
        error text, note text, outcome jsonb, "sessionId" text, "traceId" text, "runId" text,
        "targetType" text, "targetName" text)`,
    ),
  );
}

// ---- group commit for batched targets (alert ingest) ----

interface Delivery {
  webhook: WebhookRow;
  invocation: Omit<Invocation, "finishedAt">;
  work: unknown;
  /** The delivery's own request logger (its request id). */
  log: Logger;
}

/**
 * Groups in flight per target at most: half the connections, the other half left for reads and job
 * workers (PGlite runs one transaction at a time anyway). The batcher only goes past one group when
 * a group fills up (by deliveries or by bytes) while another commits (batcher.ts).
 */
const groupsInFlight = (services: Services) => Math.max(1, Math.floor(services.database.connections / 2));
const MAX_DELIVERIES_PER_BATCH = 64;
/**
 * Body bytes that make a group full, as its number of deliveries does: a handful of 50-alert bodies
 * is as much write work as 64 single-alert ones, and worth a commit of its own on another connection
 * instead of waiting behind the running one.
 */
const MAX_BYTES_PER_BATCH = 128 * 1024;

const batchers = new WeakMap<Services, Map<BatchedTarget<unknown>, Batcher<Delivery, TargetResult>>>();

function batcherFor(services: Services, target: BatchedTarget<unknown>) {
  let byTarget = batchers.get(services);
  if (!byTarget) {
    byTarget = new Map();
    batchers.set(services, byTarget);
  }
  let batcher = byTarget.get(target);
  if (!batcher) {
    batcher = createBatcher({
      maxInFlight: groupsInFlight(services),
      maxItems: MAX_DELIVERIES_PER_BATCH,
      maxWeight: MAX_BYTES_PER_BATCH,
      weigh: (delivery) => delivery.invocation.body.length,
      run: (deliveries) => applyTogether(services, target, deliveries),
    });
    byTarget.set(target, batcher);
  }
  return batcher;
}

/**
 * One transaction for the target's work and the invocation records of every delivery. If it fails,
 * each delivery runs again alone, so one bad delivery cannot take the others down with it.
 */
async function applyTogether(
  services: Services,
  target: BatchedTarget<unknown>,
  deliveries: Delivery[],
): Promise<PromiseSettledResult<TargetResult>[]> {
  try {
    const results = await retryOnConflict(() =>
      services.database.transaction(async (tx) => {
        const results = await target.apply(
          tx,
          deliveries.map((delivery) => delivery.work),
          services,
        );
        const finishedAt = services.now();
        await recordInvocations(
          tx,
          deliveries.map((delivery, n) => ({
            webhook: delivery.webhook,
            invocation: { ...delivery.invocation, finishedAt },
            result: results[n] ?? { status: "error", message: "no result" },
          })),
        );
        return results;
      }),
    );
    return results.map((value) => ({ status: "fulfilled", value }));
  } catch (err) {
    // Without the database each delivery alone would fail alike, one connection wait after another:
    // the group is answered at once (503), and its senders deliver again.
    if (deliveries.length === 1 || isDatabaseUnavailable(err)) {
      for (const delivery of deliveries) {
        await failedInvocation(services, delivery.webhook, delivery.invocation, err, delivery.log);
      }
      return deliveries.map(() => ({ status: "rejected", reason: err }));
    }
    const settled: PromiseSettledResult<TargetResult>[] = [];
    for (const delivery of deliveries) settled.push(...(await applyTogether(services, target, [delivery])));
    return settled;
  }
}

/**
 * Vigil failed, not the sender: keep the payload so the delivery can be replayed. Without the
 * database there is nowhere to keep it: the sender is answered 503 and delivers it again.
 */
async function failedInvocation(
  services: Services,
  webhook: WebhookRow,
  invocation: Omit<Invocation, "finishedAt">,
  err: unknown,
  log: Logger,
): Promise<void> {
  if (isDatabaseUnavailable(err)) {
    log.warn(
      { err, webhook_id: webhook.id, invocation_id: invocation.id, target_type: webhook.targetType },
      "webhook target failed: database unavailable",
    );
    return;
  }
  log.error(
    { err, webhook_id: webhook.id, invocation_id: invocation.id, target_type: webhook.targetType },
    "webhook target failed",
  );
  await recordInvocations(services.database.db, [
    {
      webhook,
      invocation: { ...invocation, finishedAt: services.now() },
      result: { status: "error", message: "internal error while processing the webhook" },
    },
  ]);
}

export async function triggerWebhook({
  services,
  targets,
  request,
  log,
}: {
  services: Services;
  targets: WebhookTargets;
  request: TriggerRequest;
  log: Logger;
}): Promise<TriggerAccepted> {
  const webhook = liveWebhook(request);
  const target = targets[webhook.targetType];
  if (!target) throw new AppError("NOT_FOUND", `webhook target ${webhook.targetType} is not available`);
  const headers = flattenHeaders(request.headers);
  // Time-ordered (UUIDv7): deliveries that share a millisecond of received_at are still listed
  // newest first, because the list breaks ties by id.
  const invocation = { id: uuidv7(), receivedAt: services.now(), body: request.body, headers };
  const identity = {
    webhook_id: webhook.id,
    invocation_id: invocation.id,
    target_type: webhook.targetType,
    target_name: webhook.targetName,
  };
  const input = {
    webhook,
    invocationId: invocation.id,
    body: request.body.toString("utf8"),
    headers,
    receivedAt: invocation.receivedAt,
    services,
    log,
  };
  let result: TargetResult;
  if (target.batch) {
    const prepared = await target.batch
      .prepare({ ...input, db: services.database.db })
      .catch(async (err: unknown) => {
        await failedInvocation(services, webhook, invocation, err, log);
        throw err;
      });
    if (prepared.status === "rejected") {
      result = prepared;
      await recordInvocations(services.database.db, [
        { webhook, invocation: { ...invocation, finishedAt: services.now() }, result },
      ]);
    } else {
      result = await batcherFor(services, target.batch).submit({
        webhook,
        invocation,
        work: prepared.work,
        log,
      });
    }
  } else {
    try {
      result = await retryOnConflict(() =>
        services.database.transaction(async (tx) => {
          const outcome = await target({ ...input, tx });
          await recordInvocations(tx, [
            { webhook, invocation: { ...invocation, finishedAt: services.now() }, result: outcome },
          ]);
          return outcome;
        }),
      );
    } catch (err) {
      await failedInvocation(services, webhook, invocation, err, log);
      throw err;
    }
  }
  if (result.status === "rejected") {
    throw new AppError(
      result.errCode ?? "INVALID_PAYLOAD",
      result.message,
      result.extras ?? identity,
      result.httpStatus,
    );
  }
  // Taken but nothing started: the identity alone; the run record holds the reason.
  if (result.status === "failed") return identity;
  return {
    ...identity,
    ...(result.sessionId ? { session_id: result.sessionId } : {}),
    ...(result.traceId ? { trace_id: result.traceId } : {}),
    ...result.response,
  };
}
