// Named connections of a tenant to the systems Vigil reads from (an Alertmanager to sync, a GitHub
// for agents). Credentials are sealed with the secret key and never leave the server.
import { and, asc, eq } from "drizzle-orm";
import { inTenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { isUniqueViolation } from "../core/db/pg-errors.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { hostAllowed } from "../core/http/allowed-hosts.ts";
import type { Integration, IntegrationWrite } from "./schemas.ts";
import { integrations } from "./tables.ts";

type Row = typeof integrations.$inferSelect;

function present(row: Row): Integration {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    url: row.url,
    description: row.description,
    has_credentials: row.credentialsSealed !== null,
    org_id: row.orgId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** 400 when INTEGRATION_ALLOWED_HOSTS is set and the url's host is not on it. */
function assertUrlAllowed(ctx: CallerCtx, url: string | null | undefined): void {
  const allowed = ctx.config.integrationAllowedHosts;
  if (!url || allowed.length === 0) return;
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (parsed && !hostAllowed(parsed, allowed)) {
    throw badRequest("url", `host ${parsed.host} is not on INTEGRATION_ALLOWED_HOSTS`);
  }
}

export async function createIntegration({ ctx, input }: { ctx: CallerCtx; input: IntegrationWrite }) {
  assertUrlAllowed(ctx, input.url);
  const tenant = tenantOf(ctx.actor);
  try {
    const [row] = await ctx.db
      .insert(integrations)
      .values({
        orgId: tenant.orgId,
        ownerId: tenant.ownerId,
        name: input.name,
        type: input.type,
        url: input.url ?? null,
        description: input.description ?? "",
        credentialsSealed: input.credentials ? ctx.secrets.encrypt(JSON.stringify(input.credentials)) : null,
      })
      .returning();
    return present(row as Row);
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict(`integration ${input.name} already exists`, { name: input.name });
    throw err;
  }
}

export async function listIntegrations({ ctx }: { ctx: CallerCtx }) {
  const rows = await ctx.db
    .select()
    .from(integrations)
    .where(inTenant(integrations, tenantOf(ctx.actor)))
    .orderBy(asc(integrations.name));
  return rows.map(present);
}

export async function getIntegration({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const [row] = await ctx.db
    .select()
    .from(integrations)
    .where(and(inTenant(integrations, tenantOf(ctx.actor)), eq(integrations.name, input.name)));
  if (!row) throw notFound("integration", { name: input.name });
  return present(row);
}

export async function updateIntegration({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; changes: IntegrationWrite };
}) {
  const { changes } = input;
  assertUrlAllowed(ctx, changes.url);
  try {
    const [row] = await ctx.db
      .update(integrations)
      .set({
        name: changes.name,
        type: changes.type,
        url: changes.url ?? null,
        description: changes.description ?? "",
        // Omitted credentials are kept; null clears them.
        ...(changes.credentials !== undefined && {
          credentialsSealed: changes.credentials
            ? ctx.secrets.encrypt(JSON.stringify(changes.credentials))
            : null,
        }),
        updatedAt: ctx.now(),
      })
      .where(and(inTenant(integrations, tenantOf(ctx.actor)), eq(integrations.name, input.name)))
      .returning();
    if (!row) throw notFound("integration", { name: input.name });
    return present(row);
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict(`integration ${changes.name} already exists`, { name: changes.name });
    throw err;
  }
}

export async function deleteIntegration({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const rows = await ctx.db
    .delete(integrations)
    .where(and(inTenant(integrations, tenantOf(ctx.actor)), eq(integrations.name, input.name)))
    .returning({ id: integrations.id });
  if (rows.length === 0) throw notFound("integration", { name: input.name });
}

/** For other domains: the names among `names` that are not integrations of the tenant. */
export async function missingIntegrations({ ctx, input }: { ctx: CallerCtx; input: { names: string[] } }) {
  const existing = new Set((await listIntegrations({ ctx })).map((item) => item.name));
  return input.names.filter((name) => !existing.has(name));
}
