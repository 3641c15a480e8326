// The keys API: a caller manages the keys of its own user, and never beyond its own powers. A key
// creates keys with some of its own scopes and orgs, revokes only keys that hold no scope or org it
// lacks, and an org it creates is added to its own orgs (otherwise no key could ever act in it).
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { CallerCtx } from "../context.ts";
import { AppError, conflict, notFound } from "../errors.ts";
import { createApiKey, presentKey } from "./keys.ts";
import type { ApiKey, ApiKeyWrite, Org, OrgWrite } from "./keys-schemas.ts";
import { isScope } from "./scopes.ts";
import { apiKeys, orgs } from "./tables.ts";

type KeyRow = typeof apiKeys.$inferSelect;

async function callingKey(ctx: CallerCtx): Promise<KeyRow> {
  const [row] = await ctx.db.select().from(apiKeys).where(eq(apiKeys.id, ctx.actor.keyId));
  if (!row) throw new AppError("UNAUTHENTICATED", "unknown or revoked API key");
  return row;
}

const missingFrom = (wanted: readonly string[], held: readonly string[]) =>
  wanted.filter((item) => !held.includes(item));

export async function createKey({ ctx, input }: { ctx: CallerCtx; input: ApiKeyWrite }) {
  const caller = await callingKey(ctx);
  const scopes = [...new Set(input.scopes ?? caller.scopes.filter(isScope))];
  const lacking = missingFrom(scopes, caller.scopes);
  if (lacking.length > 0) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      `scopes: this API key cannot grant ${lacking.join(", ")}, which it does not hold`,
      { field: "scopes", scopes: lacking },
    );
  }
  const orgIds = [...new Set((input.org_ids ?? []).map((id) => id.toLowerCase()))];
  // Like an orgId the key may not act in: reported as missing, so nothing is learned about it.
  const [foreign] = missingFrom(orgIds, caller.orgIds);
  if (foreign) throw notFound("organization", { field: "org_ids", orgId: foreign });
  const created = await createApiKey(ctx.db, {
    userId: caller.userId,
    name: input.name ?? "",
    scopes,
    orgIds,
    // A key limited to its orgs makes keys limited to them too.
    personalNamespace: caller.personalNamespace,
  });
  return { ...presentKey(created.record), key: created.key };
}

export async function listKeys({ ctx }: { ctx: CallerCtx }): Promise<ApiKey[]> {
  const rows = await ctx.db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.userId, ctx.actor.userId))
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map(presentKey);
}

export async function revokeKey({ ctx, input }: { ctx: CallerCtx; input: { id: string } }): Promise<ApiKey> {
  const [target] = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, input.id), eq(apiKeys.userId, ctx.actor.userId)));
  if (!target) throw notFound("API key", { id: input.id });
  const caller = await callingKey(ctx);
  const scopes = missingFrom(target.scopes, caller.scopes);
  const orgIds = missingFrom(target.orgIds, caller.orgIds);
  if (scopes.length > 0 || orgIds.length > 0) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      "id: this API key cannot revoke a key that holds scopes or orgs it does not hold itself",
      { field: "id", scopes, org_ids: orgIds },
    );
  }
  const [revoked] = await ctx.db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.id, target.id), isNull(apiKeys.revokedAt)))
    .returning();
  if (!revoked) throw conflict(`API key ${target.id} is already revoked`, { id: target.id });
  return presentKey(revoked);
}

export async function createOrgForCaller({ ctx, input }: { ctx: CallerCtx; input: OrgWrite }): Promise<Org> {
  return ctx.db.transaction(async (tx) => {
    const [org] = await tx.insert(orgs).values({ name: input.name }).returning();
    if (!org) throw new Error("org could not be created");
    await tx
      .update(apiKeys)
      .set({ orgIds: sql`array_append(${apiKeys.orgIds}, ${org.id}::uuid)` })
      .where(eq(apiKeys.id, ctx.actor.keyId));
    return { id: org.id, name: org.name, created_at: org.createdAt.toISOString() };
  });
}
