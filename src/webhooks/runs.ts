// Invocation history of a webhook: newest first without payloads, or one run with its payload.
import { and, count, desc, eq, or } from "drizzle-orm";
import { tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { notFound } from "../core/errors.ts";
import { isUuid } from "../core/ids.ts";
import type { WebhookRun, WebhookRunDetail, WebhookRunList } from "./schemas.ts";
import { webhookInvocations } from "./tables.ts";
import { findWebhook, type WebhookRow } from "./webhooks.ts";

type InvocationRow = typeof webhookInvocations.$inferSelect;

function present(row: InvocationRow, webhook: WebhookRow): WebhookRun {
  return {
    invocation_id: row.id,
    webhook_id: row.webhookId,
    // The target this trigger went to; records from before it was kept show the webhook's.
    target_type: row.targetType ?? webhook.targetType,
    target_name: row.targetName ?? webhook.targetName,
    status: row.status as WebhookRun["status"],
    received_at: row.receivedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    content_type: row.contentType,
    payload_bytes: row.payloadBytes,
    error: row.error,
    note: row.note,
    session_id: row.sessionId,
    trace_id: row.traceId,
    run_id: row.runId,
    outcome: row.outcome,
  };
}

async function ownWebhook(ctx: CallerCtx, webhookId: string): Promise<WebhookRow> {
  const webhook = await findWebhook(ctx.db, tenantOf(ctx.actor), webhookId);
  if (!webhook) throw notFound("webhook", { webhook_id: webhookId });
  return webhook;
}

export async function listWebhookRuns({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { webhookId: string; limit: number; offset: number };
}): Promise<WebhookRunList> {
  const webhook = await ownWebhook(ctx, input.webhookId);
  const where = eq(webhookInvocations.webhookId, webhook.id);
  const [rows, [total]] = await Promise.all([
    ctx.db
      .select()
      .from(webhookInvocations)
      .where(where)
      .orderBy(desc(webhookInvocations.receivedAt), desc(webhookInvocations.id))
      .limit(input.limit)
      .offset(input.offset),
    ctx.db.select({ n: count() }).from(webhookInvocations).where(where),
  ]);
  return {
    runs: rows.map((row) => present(row, webhook)),
    total: total?.n ?? 0,
    limit: input.limit,
    offset: input.offset,
  };
}

export async function getWebhookRun({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { webhookId: string; runId: string };
}): Promise<WebhookRunDetail> {
  const webhook = await ownWebhook(ctx, input.webhookId);
  // run_id is the invocation id, or the id of the execution the invocation started. Both are uuids,
  // read in any case like every other id; the execution's is kept as text, in lower case.
  const byId = isUuid(input.runId);
  const byRun = eq(webhookInvocations.runId, byId ? input.runId.toLowerCase() : input.runId);
  const [row] = await ctx.db
    .select()
    .from(webhookInvocations)
    .where(
      and(
        eq(webhookInvocations.webhookId, webhook.id),
        byId ? or(eq(webhookInvocations.id, input.runId), byRun) : byRun,
      ),
    )
    .limit(1);
  if (!row) throw notFound("webhook run", { webhook_id: input.webhookId, run_id: input.runId });
  return { ...present(row, webhook), headers: row.headers, ...payloadOf(row.payload) };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body as text when it is UTF-8; otherwise its bytes in base64, so nothing is lost in the answer. */
function payloadOf(body: Buffer): Pick<WebhookRunDetail, "payload" | "payload_encoding"> {
  try {
    return { payload: utf8.decode(body), payload_encoding: "utf8" };
  } catch {
    return { payload: body.toString("base64"), payload_encoding: "base64" };
  }
}
