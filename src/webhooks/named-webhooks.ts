// Named webhooks: tokens that start an agent or a workflow, managed under /platform/api/v1/webhooks.
// The token is shown at creation and on rotation only. Alert-ingest webhooks share the table but
// belong to their registration API: here they do not exist (404, never listed).
// An enabled webhook must point at a target that is safe to run unattended (400); the trigger checks
// again (423), since a target that was ready can become unready.
import { createHash, randomUUID } from "node:crypto";
import { and, asc, count, eq, inArray, isNull, ne, type SQL, sql } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { type Executor, type Tx, withTransaction } from "../core/db/database.ts";
import { AppError, conflict, notFound } from "../core/errors.ts";
import type {
  NamedTargetType,
  Webhook,
  WebhookCreate,
  WebhookList,
  WebhookUpdate,
  WebhookWithToken,
} from "./schemas.ts";
import { webhooks } from "./tables.ts";
import type { TargetRefusal, WebhookTargets } from "./targets.ts";
import {
  createWebhook,
  forgetWebhook,
  rotateWebhookToken,
  triggerPathOf,
  type WebhookRow,
} from "./webhooks.ts";

// Any constant: the namespace of the advisory locks that serialise name checks per tenant.
const NAME_LOCK_NAMESPACE = 7_346_002;

/** The target types this app can start from a named webhook: those with a readiness check. */
function namedTypes(targets: WebhookTargets): string[] {
  return Object.entries(targets)
    .filter(([, target]) => target.readiness !== undefined)
    .map(([type]) => type);
}

async function readiness(
  db: Executor,
  targets: WebhookTargets,
  tenant: Tenant,
  target: { type: string; name: string },
): Promise<TargetRefusal[]> {
  const check = targets[target.type]?.readiness;
  if (!check) {
    throw new AppError("VALIDATION_FAILED", `target_type: ${target.type} is not available`, {
      field: "target_type",
    });
  }
  return check({ db, tenant, targetName: target.name });
}

/** 400 with the spec's JsonError when the target is not safe to run unattended. */
async function assertReady(
  db: Executor,
  targets: WebhookTargets,
  tenant: Tenant,
  target: { type: string; name: string },
): Promise<void> {
  const [reason] = await readiness(db, targets, tenant, target);
  if (reason) throw new AppError(reason.errCode, reason.msg, reason.extras, 400);
}

async function present(
  ctx: CallerCtx,
  targets: WebhookTargets,
  row: WebhookRow,
  db: Executor = ctx.db,
): Promise<Webhook> {
  const reasons = await readiness(
    db,
    targets,
    { orgId: row.orgId, ownerId: row.ownerId },
    {
      type: row.targetType,
      name: row.targetName,
    },
  );
  return {
    id: row.id,
    name: row.name,
    target_type: row.targetType,
    target_name: row.targetName,
    description: row.description,
    enabled: row.enabled,
    ready: reasons.length === 0,
    not_ready_reasons: reasons.map((reason) => ({
      errCode: reason.errCode,
      msg: reason.msg,
      resolution_hint: String(reason.extras.resolution_hint ?? ""),
    })),
    org_id: row.orgId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function presentWithToken(
  ctx: CallerCtx,
  targets: WebhookTargets,
  row: WebhookRow,
  db: Executor = ctx.db,
): Promise<WebhookWithToken> {
  const path = triggerPathOf(row, ctx.secrets);
  return {
    ...(await present(ctx, targets, row, db)),
    token: ctx.secrets.decrypt(row.tokenSealed),
    platform_webhook_url: path,
    trigger_url: `${ctx.config.publicUrl}/platform${path}`,
  };
}

/** The caller's live named webhooks. */
function ownedNamed(targets: WebhookTargets, tenant: Tenant): SQL {
  return and(
    inTenant(webhooks, tenant),
    isNull(webhooks.deletedAt),
    inArray(webhooks.targetType, namedTypes(targets)),
  ) as SQL;
}

async function findNamed(
  db: Executor,
  targets: WebhookTargets,
  tenant: Tenant,
  id: string,
  { lock = false } = {},
) {
  const query = db
    .select()
    .from(webhooks)
    .where(and(ownedNamed(targets, tenant), eq(webhooks.id, id)));
  const [row] = lock ? await query.for("update") : await query;
  if (!row) throw notFound("webhook", { webhook_id: id });
  return row;
}

/**
 * Names are unique among a tenant's live webhooks. The table has no such index (alert-ingest
 * webhooks share it, and deleted rows keep their name), so the check runs under a per-tenant
 * advisory lock: two creates of one name cannot both pass it.
 */
async function assertNameFree(tx: Tx, tenant: Tenant, name: string, exceptId?: string): Promise<void> {
  const digest = createHash("sha256")
    .update(`${tenant.orgId ?? ""}/${tenant.ownerId}`)
    .digest();
  await tx.execute(
    sql`select pg_advisory_xact_lock(${NAME_LOCK_NAMESPACE}::int4, ${digest.readInt32BE(0)}::int4)`,
  );
  const [taken] = await tx
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(
      and(
        inTenant(webhooks, tenant),
        isNull(webhooks.deletedAt),
        eq(webhooks.name, name),
        exceptId ? ne(webhooks.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (taken) throw conflict(`webhook ${name} already exists`, { name, webhook_id: taken.id });
}

export async function createNamedWebhook({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: WebhookCreate;
}): Promise<WebhookWithToken> {
  const tenant = tenantOf(ctx.actor);
  const enabled = input.enabled ?? true;
  const target = { type: input.target_type, name: input.target_name };
  if (enabled) await assertReady(ctx.db, targets, tenant, target);
  return withTransaction(ctx.db, async (tx) => {
    await assertNameFree(tx, tenant, input.name);
    const row = await createWebhook(tx, ctx.secrets, {
      tenant,
      id: randomUUID(),
      name: input.name,
      targetType: input.target_type,
      targetName: input.target_name,
      description: input.description ?? "",
      enabled,
      now: ctx.now(),
    });
    return presentWithToken(ctx, targets, row, tx);
  });
}

export async function listNamedWebhooks({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: { limit: number; offset: number; targetType?: NamedTargetType; targetName?: string };
}): Promise<WebhookList> {
  const where = and(
    ownedNamed(targets, tenantOf(ctx.actor)),
    input.targetType ? eq(webhooks.targetType, input.targetType) : undefined,
    input.targetName ? eq(webhooks.targetName, input.targetName) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    ctx.db
      .select()
      .from(webhooks)
      .where(where)
      .orderBy(asc(webhooks.name))
      .limit(input.limit)
      .offset(input.offset),
    ctx.db.select({ n: count() }).from(webhooks).where(where),
  ]);
  return {
    webhooks: await Promise.all(rows.map((row) => present(ctx, targets, row))),
    total: total?.n ?? 0,
    limit: input.limit,
    offset: input.offset,
  };
}

export async function getNamedWebhook({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: { webhookId: string };
}): Promise<Webhook> {
  const row = await findNamed(ctx.db, targets, tenantOf(ctx.actor), input.webhookId);
  return present(ctx, targets, row);
}

export async function updateNamedWebhook({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: { webhookId: string; changes: WebhookUpdate };
}): Promise<Webhook> {
  const tenant = tenantOf(ctx.actor);
  const { changes } = input;
  const row = await withTransaction(ctx.db, async (tx) => {
    // Locked: a concurrent update waits, then merges its fields onto what this one wrote, so
    // neither brings back a field the other changed (a disable undone by a description edit).
    const current = await findNamed(tx, targets, tenant, input.webhookId, { lock: true });
    const next = {
      name: changes.name ?? current.name,
      targetType: changes.target_type ?? current.targetType,
      targetName: changes.target_name ?? current.targetName,
      description: changes.description ?? current.description,
      enabled: changes.enabled ?? current.enabled,
    };
    // Saving an enabled webhook vouches for its target; disabling one never needs a ready target.
    if (next.enabled)
      await assertReady(tx, targets, tenant, { type: next.targetType, name: next.targetName });
    if (next.name !== current.name) await assertNameFree(tx, tenant, next.name, current.id);
    const [updated] = await tx
      .update(webhooks)
      .set({ ...next, updatedAt: ctx.now() })
      .where(eq(webhooks.id, current.id))
      .returning();
    if (!updated) throw notFound("webhook", { webhook_id: input.webhookId });
    return updated;
  });
  forgetWebhook(row.id);
  return present(ctx, targets, row);
}

/** Soft delete: the token then answers 404 (a webhook that is gone), not 401. */
export async function deleteNamedWebhook({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: { webhookId: string };
}): Promise<void> {
  const now = ctx.now();
  const rows = await ctx.db
    .update(webhooks)
    .set({ deletedAt: now, enabled: false, updatedAt: now })
    .where(and(ownedNamed(targets, tenantOf(ctx.actor)), eq(webhooks.id, input.webhookId)))
    .returning({ id: webhooks.id });
  if (rows.length === 0) throw notFound("webhook", { webhook_id: input.webhookId });
  forgetWebhook(input.webhookId);
}

/** A new token; the old one answers 401 at once. */
export async function rotateNamedWebhookToken({
  ctx,
  targets,
  input,
}: {
  ctx: CallerCtx;
  targets: WebhookTargets;
  input: { webhookId: string };
}): Promise<WebhookWithToken> {
  const current = await findNamed(ctx.db, targets, tenantOf(ctx.actor), input.webhookId);
  const row = await rotateWebhookToken(ctx.db, ctx.secrets, current.id, ctx.now());
  if (!row) throw notFound("webhook", { webhook_id: input.webhookId });
  return presentWithToken(ctx, targets, row);
}
