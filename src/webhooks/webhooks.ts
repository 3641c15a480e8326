// Platform webhooks: a token, a target, an enabled flag. Other domains create them for their own
// targets (alert ingest creates one per registration) and resolve triggers through them.
import { randomBytes, randomUUID } from "node:crypto";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { hashSecret } from "../core/auth/keys.ts";
import { inTenant, type Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";
import type { Secrets } from "../core/secrets.ts";
import { createTtlCache } from "../core/ttl-cache.ts";
import { webhooks } from "./tables.ts";

export type WebhookRow = typeof webhooks.$inferSelect;

export const TRIGGER_PATH = "/api/v1/webhooks/trigger";

function generateToken(): string {
  return `whk_${randomBytes(24).toString("base64url")}`;
}

export interface NewWebhook {
  tenant: Tenant;
  name: string;
  targetType: string;
  targetName: string;
  description?: string;
  enabled?: boolean;
  id?: string;
  now: Date;
}

export async function createWebhook(db: Executor, secrets: Secrets, input: NewWebhook) {
  const token = generateToken();
  const [row] = await db
    .insert(webhooks)
    .values({
      id: input.id ?? randomUUID(),
      orgId: input.tenant.orgId,
      ownerId: input.tenant.ownerId,
      name: input.name,
      targetType: input.targetType,
      targetName: input.targetName,
      description: input.description ?? "",
      enabled: input.enabled ?? true,
      tokenHash: hashSecret(token),
      tokenSealed: secrets.encrypt(token),
      createdAt: input.now,
      updatedAt: input.now,
    })
    .returning();
  if (!row) throw new Error("webhook could not be created");
  return row;
}

/** The relative trigger path with its token, as the spec's `platform_webhook_url`. */
export function triggerPathOf(row: WebhookRow, secrets: Secrets): string {
  return `${TRIGGER_PATH}?apiKey=${encodeURIComponent(secrets.decrypt(row.tokenSealed))}`;
}

// Every delivery resolves its token and the row rarely changes: it is cached for a few seconds.
// Changes made here drop the entry at once; unknown tokens are never cached.
const byTokenHash = createTtlCache<string, WebhookRow>(5_000, 10_000);

export async function findWebhookByToken(db: Executor, token: string): Promise<WebhookRow | null> {
  const tokenHash = hashSecret(token);
  const cached = byTokenHash.get(tokenHash);
  if (cached) return cached;
  const [row] = await db.select().from(webhooks).where(eq(webhooks.tokenHash, tokenHash));
  if (row) byTokenHash.set(tokenHash, row);
  return row ?? null;
}

/** Drops a webhook from the token cache; call after changing its row. */
export function forgetWebhook(id: string): void {
  byTokenHash.deleteWhere((row) => row.id === id);
}

/** Those of `ids` that are live webhooks and enabled: their triggers take deliveries. */
export async function enabledWebhookIds(db: Executor, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(and(inArray(webhooks.id, ids), eq(webhooks.enabled, true), isNull(webhooks.deletedAt)));
  return new Set(rows.map((row) => row.id));
}

export async function findWebhook(db: Executor, tenant: Tenant, id: string): Promise<WebhookRow | null> {
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(inTenant(webhooks, tenant), eq(webhooks.id, id), isNull(webhooks.deletedAt)));
  return row ?? null;
}

export async function setWebhookEnabled(
  db: Executor,
  id: string,
  enabled: boolean,
  now: Date,
): Promise<void> {
  await db.update(webhooks).set({ enabled, updatedAt: now }).where(eq(webhooks.id, id));
  forgetWebhook(id);
}

export async function rotateWebhookToken(db: Executor, secrets: Secrets, id: string, now: Date) {
  const token = generateToken();
  const [row] = await db
    .update(webhooks)
    .set({ tokenHash: hashSecret(token), tokenSealed: secrets.encrypt(token), updatedAt: now })
    .where(and(eq(webhooks.id, id), isNull(webhooks.deletedAt)))
    .returning();
  forgetWebhook(id);
  return row ?? null;
}

/** Soft delete: the token keeps answering 404 (a known webhook that is gone), not 401. */
export async function deleteWebhook(db: Executor, id: string, now: Date): Promise<void> {
  await db
    .update(webhooks)
    .set({ deletedAt: now, enabled: false, updatedAt: now })
    .where(and(eq(webhooks.id, id), isNull(webhooks.deletedAt)));
  forgetWebhook(id);
}
