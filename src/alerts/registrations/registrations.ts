// Alert-ingest registrations (svc_sre_alert_webhook): one per (tenant, app, source, integration),
// each owning the platform webhook that monitoring systems post to.
import { and, asc, eq, type SQL } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { type Tx, withTransaction } from "../../core/db/database.ts";
import { isUniqueViolation } from "../../core/db/pg-errors.ts";
import { AppError, conflict, notFound } from "../../core/errors.ts";
import { createTtlCache } from "../../core/ttl-cache.ts";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  rotateWebhookToken,
  setWebhookEnabled,
  triggerPathOf,
  type WebhookRow,
} from "../../webhooks/index.ts";
import {
  type AlertWebhook,
  type AlertWebhookCreate,
  type AlertWebhookUpdate,
  REGISTRATION_DEFAULTS,
} from "../schemas.ts";
import type { SeverityBucket, SourceType } from "../sources/types.ts";
import { alertWebhooks } from "../tables.ts";

/** Catalog apps that ingest alerts. */
const ALERT_APPS = new Set(["sre"]);
export const ALERT_INGEST_TARGET = "alert_ingest";

export type RegistrationRow = typeof alertWebhooks.$inferSelect;

/**
 * Called in the transaction that creates a registration, so the app it belongs to is configured for
 * the tenant (a port: the apps domain, a higher layer, wires it in app.ts).
 */
export type RegistrationHook = (
  tx: Tx,
  input: { ctx: CallerCtx; tenant: Tenant; appName: string; now: Date },
) => Promise<void>;

function assertAlertApp(appName: string): void {
  if (!ALERT_APPS.has(appName)) throw notFound("app", { app_name: appName });
}

/**
 * A body may carry the resource's identifying attributes (a client sending the whole resource), but
 * the path already names the registration: a different value is a 400 naming the field.
 */
function assertSameIdentity(
  given: { app_name?: string; source?: string; integration?: string },
  registration: { app_name?: string; source?: string; integration?: string },
): void {
  for (const field of ["app_name", "source", "integration"] as const) {
    const value = given[field];
    const expected = registration[field];
    if (value !== undefined && expected !== undefined && value !== expected) {
      throw new AppError(
        "VALIDATION_FAILED",
        `${field}: must be "${expected}": it names the registration and cannot change`,
        {
          field,
          location: "body",
          rule: "const",
        },
      );
    }
  }
}

/** What a caller who may not change registrations reads in place of the token. */
export const HIDDEN_TOKEN = "hidden";

function present(ctx: CallerCtx, row: RegistrationRow, webhook: WebhookRow): AlertWebhook {
  // The token lets its holder inject alerts: only a caller who may change registrations reads it
  // (a wall screen's read-only key lists the registrations without it).
  const path = ctx.actor.scopes.includes("sre_alerts_write")
    ? triggerPathOf(webhook, ctx.secrets)
    : triggerPathOf(webhook, ctx.secrets).replace(/apiKey=[^&]*/, `apiKey=${HIDDEN_TOKEN}`);
  return {
    id: row.id,
    platform_webhook_id: row.id,
    platform_webhook_url: path,
    trigger_url: `${ctx.config.publicUrl}/platform${path}`,
    app_name: row.appName,
    source: row.source as SourceType,
    integration: row.integration,
    auto_investigate: row.autoInvestigate,
    classify_mode: row.classifyMode as AlertWebhook["classify_mode"],
    classify_batch_window_seconds: row.classifyBatchWindowSeconds,
    classify_bucket_by: row.classifyBucketBy as AlertWebhook["classify_bucket_by"],
    classify_critical_bypass: row.classifyCriticalBypass,
    severity_overrides: row.severityOverrides,
    sns_auto_confirm: row.snsAutoConfirm,
    enabled: webhook.enabled,
    org_id: row.orgId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function createAlertWebhook({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; body: AlertWebhookCreate; onRegistered?: RegistrationHook };
}): Promise<AlertWebhook> {
  assertAlertApp(input.appName);
  assertSameIdentity(input.body, { app_name: input.appName });
  const settings = { ...REGISTRATION_DEFAULTS, ...input.body };
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  const key = `${input.appName}/${settings.source}/${settings.integration}`;
  try {
    return await withTransaction(ctx.db, async (tx) => {
      await input.onRegistered?.(tx, { ctx, tenant, appName: input.appName, now });
      const webhook = await createWebhook(tx, ctx.secrets, {
        tenant,
        name: key,
        targetType: ALERT_INGEST_TARGET,
        targetName: key,
        enabled: settings.enabled,
        now,
      });
      const [row] = await tx
        .insert(alertWebhooks)
        .values({
          id: webhook.id,
          orgId: tenant.orgId,
          ownerId: tenant.ownerId,
          appName: input.appName,
          source: settings.source,
          integration: settings.integration,
          autoInvestigate: settings.auto_investigate,
          classifyMode: settings.classify_mode,
          classifyBatchWindowSeconds: settings.classify_batch_window_seconds,
          classifyBucketBy: settings.classify_bucket_by,
          classifyCriticalBypass: settings.classify_critical_bypass,
          severityOverrides: settings.severity_overrides as Record<string, SeverityBucket>,
          snsAutoConfirm: settings.sns_auto_confirm,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return present(ctx, row as RegistrationRow, webhook);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`an alert webhook for ${key} already exists`, {
        app_name: input.appName,
        source: settings.source,
        integration: settings.integration,
      });
    }
    throw err;
  }
}

async function findOwn(ctx: CallerCtx, appName: string, id: string) {
  assertAlertApp(appName);
  const tenant = tenantOf(ctx.actor);
  const [row] = await ctx.db
    .select()
    .from(alertWebhooks)
    .where(
      and(inTenant(alertWebhooks, tenant), eq(alertWebhooks.appName, appName), eq(alertWebhooks.id, id)),
    );
  const webhook = row ? await findWebhook(ctx.db, tenant, row.id) : null;
  if (!row || !webhook) throw notFound("alert webhook", { id });
  return { row, webhook };
}

export async function getAlertWebhook({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; id: string };
}) {
  const { row, webhook } = await findOwn(ctx, input.appName, input.id);
  return present(ctx, row, webhook);
}

/** The registration of an import id `{app_name}/{source}/{integration}` (integration "" = the default). */
export async function getAlertWebhookBySource({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; source: string; integration: string };
}): Promise<AlertWebhook> {
  const [found] = await listAlertWebhooks({ ctx, input });
  if (!found) {
    throw notFound("alert webhook", {
      app_name: input.appName,
      source: input.source,
      integration: input.integration,
    });
  }
  return found;
}

export async function listAlertWebhooks({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; source?: string; integration?: string };
}): Promise<AlertWebhook[]> {
  assertAlertApp(input.appName);
  const tenant = tenantOf(ctx.actor);
  const conditions: SQL[] = [inTenant(alertWebhooks, tenant), eq(alertWebhooks.appName, input.appName)];
  if (input.source !== undefined) conditions.push(eq(alertWebhooks.source, input.source));
  if (input.integration !== undefined) conditions.push(eq(alertWebhooks.integration, input.integration));
  const rows = await ctx.db
    .select()
    .from(alertWebhooks)
    .where(and(...conditions))
    .orderBy(asc(alertWebhooks.source), asc(alertWebhooks.integration));
  const result: AlertWebhook[] = [];
  for (const row of rows) {
    const webhook = await findWebhook(ctx.db, tenant, row.id);
    if (webhook) result.push(present(ctx, row, webhook));
  }
  return result;
}

// jsonb keeps object keys in its own order: compared as sorted entries, not as stored text.
const sameJson = (a: unknown, b: unknown) =>
  JSON.stringify(a && typeof a === "object" ? Object.entries(a).sort() : a) ===
  JSON.stringify(b && typeof b === "object" ? Object.entries(b).sort() : b);

/** Changes what the body gives; updated_at moves only when something changes (an IaC apply is stable). */
export async function updateAlertWebhook({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; id: string; changes: AlertWebhookUpdate };
}): Promise<AlertWebhook> {
  const { row } = await findOwn(ctx, input.appName, input.id);
  const { changes } = input;
  assertSameIdentity(changes, { app_name: row.appName, source: row.source, integration: row.integration });
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  return withTransaction(ctx.db, async (tx) => {
    // Locked: whether this write changes anything is decided on the row it writes.
    const [current] = await tx.select().from(alertWebhooks).where(eq(alertWebhooks.id, row.id)).for("update");
    const webhook = await findWebhook(tx, tenant, row.id);
    if (!current || !webhook) throw notFound("alert webhook", { id: input.id });
    const next = {
      autoInvestigate: changes.auto_investigate ?? current.autoInvestigate,
      classifyMode: changes.classify_mode ?? current.classifyMode,
      classifyBatchWindowSeconds: changes.classify_batch_window_seconds ?? current.classifyBatchWindowSeconds,
      classifyBucketBy: changes.classify_bucket_by ?? current.classifyBucketBy,
      classifyCriticalBypass: changes.classify_critical_bypass ?? current.classifyCriticalBypass,
      severityOverrides:
        (changes.severity_overrides as Record<string, SeverityBucket> | undefined) ??
        current.severityOverrides,
      snsAutoConfirm: changes.sns_auto_confirm ?? current.snsAutoConfirm,
    };
    const enabling = changes.enabled !== undefined && changes.enabled !== webhook.enabled;
    const changed =
      enabling ||
      Object.entries(next).some(([key, value]) => !sameJson(value, current[key as keyof typeof next]));
    if (!changed) return present(ctx, current, webhook);
    const [updated] = await tx
      .update(alertWebhooks)
      .set({ ...next, updatedAt: now })
      .where(eq(alertWebhooks.id, row.id))
      .returning();
    if (enabling) await setWebhookEnabled(tx, row.id, changes.enabled as boolean, now);
    byWebhookId.deleteWhere((cached) => cached.id === row.id);
    const written = await findWebhook(tx, tenant, row.id);
    if (!updated || !written) throw notFound("alert webhook", { id: input.id });
    return present(ctx, updated, written);
  });
}

/** A new token, so a new trigger_url: the registration's updated_at moves with it. */
export async function rotateAlertWebhookToken({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; id: string };
}) {
  const { row } = await findOwn(ctx, input.appName, input.id);
  const now = ctx.now();
  return withTransaction(ctx.db, async (tx) => {
    const [updated] = await tx
      .update(alertWebhooks)
      .set({ updatedAt: now })
      .where(eq(alertWebhooks.id, row.id))
      .returning();
    const webhook = updated ? await rotateWebhookToken(tx, ctx.secrets, row.id, now) : null;
    if (!updated || !webhook) throw notFound("alert webhook", { id: input.id });
    return present(ctx, updated, webhook);
  });
}

export async function deleteAlertWebhook({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; id: string };
}) {
  const { row } = await findOwn(ctx, input.appName, input.id);
  await withTransaction(ctx.db, async (tx) => {
    // Conditional on the row still being there: of concurrent deletes, one deletes, the others 404.
    const removed = await tx
      .delete(alertWebhooks)
      .where(eq(alertWebhooks.id, row.id))
      .returning({ id: alertWebhooks.id });
    if (removed.length === 0) throw notFound("alert webhook", { id: input.id });
    byWebhookId.deleteWhere((cached) => cached.id === row.id);
    await deleteWebhook(tx, row.id, ctx.now());
  });
}

// Read on every delivery, changed rarely: cached for a few seconds, dropped here on every change.
const byWebhookId = createTtlCache<string, RegistrationRow>(5_000, 10_000);

/** The registration a trigger belongs to; null once it was deleted. */
export async function registrationOfWebhook(
  db: CallerCtx["db"],
  webhookId: string,
): Promise<RegistrationRow | null> {
  const cached = byWebhookId.get(webhookId);
  if (cached) return cached;
  const [row] = await db.select().from(alertWebhooks).where(eq(alertWebhooks.id, webhookId));
  if (row) byWebhookId.set(webhookId, row);
  return row ?? null;
}
