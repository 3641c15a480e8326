// POST /platform/api/v1/webhooks/trigger: resolve the token, hand the body to the target, and record
// the invocation with the payload in the same transaction as the target's writes. A body the target
// refuses is still recorded (status failed); if Vigil itself fails, the payload is kept as `error`.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Services } from "../core/context.ts";
import type { Executor } from "../core/db/database.ts";
import { AppError } from "../core/errors.ts";
import { webhookInvocations } from "./tables.ts";
import type { TargetResult, WebhookTargets } from "./targets.ts";
import { findWebhookByToken, type WebhookRow } from "./webhooks.ts";

// Headers worth keeping with the payload; credentials never are.
const DROPPED_HEADERS = new Set(["authorization", "cookie", "proxy-authorization", "x-api-key"]);

export interface TriggerRequest {
  token: string | null;
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

// Invocation ids are time-ordered (UUIDv7 with a 12-bit sequence): deliveries that share a
// millisecond of received_at are still listed newest first, because the list breaks ties by id.
let lastIdMs = 0;
let idSequence = 0;

function invocationId(): string {
  const nowMs = Date.now();
  if (nowMs > lastIdMs) {
    lastIdMs = nowMs;
    idSequence = 0;
  } else if (++idSequence > 0xfff) {
    lastIdMs += 1;
    idSequence = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastIdMs, 0, 6);
  bytes.writeUInt16BE(0x7000 | idSequence, 6);
  bytes.writeUInt8(0x80 | (bytes.readUInt8(8) & 0x3f), 8);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Unique violation and deadlock: two deliveries raced for the same new row. The loser runs again.
const RETRYABLE = new Set(["23505", "40P01"]);
const ATTEMPTS = 3;

function sqlState(err: unknown): string | undefined {
  const error = err as { code?: string; cause?: { code?: string } };
  return error?.cause?.code ?? error?.code;
}

async function retryOnConflict<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? "")) throw err;
    }
  }
}

function flattenHeaders(headers: TriggerRequest["headers"]): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || DROPPED_HEADERS.has(name.toLowerCase())) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

async function resolveWebhook(services: Services, request: TriggerRequest): Promise<WebhookRow> {
  if (!request.token) {
    throw new AppError(
      "UNAUTHENTICATED",
      "missing webhook token: pass ?apiKey=<token> or Authorization: Bearer <token>",
    );
  }
  const webhook = await findWebhookByToken(services.database.db, request.token);
  if (!webhook) throw new AppError("UNAUTHENTICATED", "invalid webhook token");
  if (webhook.deletedAt || !webhook.enabled || (request.orgId && request.orgId !== webhook.orgId)) {
    throw new AppError("NOT_FOUND", "webhook not found or disabled", { webhook_id: webhook.id });
  }
  return webhook;
}

async function recordInvocation(
  db: Executor,
  webhook: WebhookRow,
  invocation: {
    id: string;
    receivedAt: Date;
    finishedAt: Date;
    body: Buffer;
    headers: Record<string, string>;
  },
  result: TargetResult | { status: "error"; message: string },
) {
  const accepted = result.status === "accepted" ? result : null;
  // A refusal with its own code (target not ready) keeps the JsonError the caller got.
  const refused =
    result.status === "rejected" && result.errCode
      ? { msg: result.message, errCode: result.errCode, extras: result.extras ? [result.extras] : [] }
      : null;
  await db.insert(webhookInvocations).values({
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
  });
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
  const webhook = await resolveWebhook(services, request);
  const target = targets[webhook.targetType];
  if (!target) throw new AppError("NOT_FOUND", `webhook target ${webhook.targetType} is not available`);
  const headers = flattenHeaders(request.headers);
  const invocation = { id: invocationId(), receivedAt: services.now(), body: request.body, headers };
  const identity = {
    webhook_id: webhook.id,
    invocation_id: invocation.id,
    target_type: webhook.targetType,
    target_name: webhook.targetName,
  };
  let result: TargetResult;
  try {
    result = await retryOnConflict(() =>
      services.database.db.transaction(async (tx) => {
        const outcome = await target({
          tx,
          webhook,
          invocationId: invocation.id,
          body: request.body.toString("utf8"),
          headers,
          receivedAt: invocation.receivedAt,
          services,
          log,
        });
        await recordInvocation(tx, webhook, { ...invocation, finishedAt: services.now() }, outcome);
        return outcome;
      }),
    );
  } catch (err) {
    // Vigil failed, not the sender: keep the payload so the delivery can be replayed.
    log.error({ err, ...identity }, "webhook target failed");
    await recordInvocation(
      services.database.db,
      webhook,
      { ...invocation, finishedAt: services.now() },
      {
        status: "error",
        message: "internal error while processing the webhook",
      },
    );
    throw err;
  }
  if (result.status === "rejected") {
    throw new AppError(
      result.errCode ?? "INVALID_PAYLOAD",
      result.message,
      result.extras ?? identity,
      result.httpStatus,
    );
  }
  return {
    ...identity,
    ...(result.sessionId ? { session_id: result.sessionId } : {}),
    ...(result.traceId ? { trace_id: result.traceId } : {}),
    ...result.response,
  };
}
