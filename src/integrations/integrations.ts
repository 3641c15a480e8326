// Named connections of a tenant to the systems Vigil reads from (an Alertmanager to sync, a GitHub
// for agents). Credentials are sealed with the secret key and never leave the server.
import { and, asc, eq, inArray } from "drizzle-orm";
import { RE2JS } from "re2js";
import { inTenant, type Tenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { type Executor, withTransaction } from "../core/db/database.ts";
import { isUniqueViolation } from "../core/db/pg-errors.ts";
import { badRequest, conflict, notFound } from "../core/errors.ts";
import { hostAllowed } from "../core/http/allowed-hosts.ts";
import { carryDelete, carryRename } from "./renames.ts";
import type { Integration, IntegrationWrite } from "./schemas.ts";
import { integrations } from "./tables.ts";
import { splitUrlCredentials } from "./url-credentials.ts";

type Row = typeof integrations.$inferSelect;

function present(row: Row): Integration {
  // A row written before user info was moved out of the url may still hold it: never shown.
  const split = row.url === null ? null : splitUrlCredentials(row.url, row.type);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    url: split?.url ?? null,
    description: row.description,
    settings: row.settings,
    has_credentials: row.credentialsSealed !== null || Boolean(split?.credentials),
    org_id: row.orgId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A branch name git accepts (a conservative subset of git-check-ref-format). */
const BRANCH = /^(?!.*\.\.)(?!.*\/\/)(?!.*\.lock$)[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}(?<![./])$/;

/**
 * 400 naming the field: a url of a scheme the type does not take (only a git remote may be ssh:// or
 * file://), a host off INTEGRATION_ALLOWED_HOSTS when it is set, or settings the type does not know.
 */
function assertWritable(ctx: CallerCtx, input: IntegrationWrite): void {
  const { url, type } = input;
  const parsed = url && URL.canParse(url) ? new URL(url) : null;
  if (url && !parsed) throw badRequest("url", "must be an absolute URL");
  if (parsed && type !== "git" && parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw badRequest("url", `a ${type} integration needs an http(s) URL`);
  }
  const allowed = ctx.config.integrationAllowedHosts;
  // A file:// remote is on Vigil's own machine: allowed only when the list names localhost.
  if (parsed?.protocol === "file:" && !allowed.includes("localhost")) {
    throw badRequest("url", "a file:// remote needs localhost on INTEGRATION_ALLOWED_HOSTS");
  }
  if (parsed && parsed.protocol !== "file:" && allowed.length > 0 && !hostAllowed(parsed, allowed)) {
    throw badRequest("url", `host ${parsed.host || "(none)"} is not on INTEGRATION_ALLOWED_HOSTS`);
  }
  // Alertmanager's scheduled pull sync can be turned off (an integration kept for investigations
  // beside a push registration would otherwise list every alert a second time).
  const pullSync = input.settings?.pull_sync;
  if (type === "alertmanager" && pullSync !== undefined && pullSync !== "true" && pullSync !== "false") {
    throw badRequest("settings.pull_sync", "must be true or false");
  }
  // The receiver filter is Alertmanager's own (a Go regular expression, which RE2 reads alike): one
  // it cannot compile would fail every sync instead of this request.
  const receiver = input.settings?.receiver;
  if (type === "alertmanager" && receiver !== undefined) {
    const problem = receiverPatternError(receiver);
    if (problem) throw badRequest("settings.receiver", problem);
  }
  if (type === "git") {
    for (const [key, value] of Object.entries(input.settings ?? {})) {
      if (key !== "base_branch")
        throw badRequest(`settings.${key}`, "a git integration takes base_branch only");
      if (!BRANCH.test(value)) throw badRequest("settings.base_branch", `${value} is not a branch name`);
    }
  }
}

function receiverPatternError(receiver: string): string | null {
  if (receiver.trim() === "") return "must be a receiver name or a regular expression of receiver names";
  try {
    RE2JS.compile(receiver);
    return null;
  } catch (err) {
    return `is not a regular expression Alertmanager reads: ${(err as Error).message}`;
  }
}

/**
 * The write with the url's user info moved into `credentials` (url-credentials.ts), as if given
 * there; 400 naming url when `credentials` names the same ones too, or for an ssh:// password.
 */
function withUrlCredentials(write: IntegrationWrite): IntegrationWrite {
  if (!write.url) return write;
  const split = splitUrlCredentials(write.url, write.type);
  if (split.sshPassword) {
    throw badRequest("url", "an ssh:// remote signs in with a key: remove the password from the url");
  }
  if (!split.credentials) return write;
  const twice = Object.keys(split.credentials).filter((key) => write.credentials?.[key] !== undefined);
  if (twice.length > 0) {
    throw badRequest(
      "url",
      `carries user info, and credentials gives ${twice.join(" and ")} too: give them in one place`,
    );
  }
  return { ...write, url: split.url, credentials: { ...write.credentials, ...split.credentials } };
}

export async function createIntegration({ ctx, input: given }: { ctx: CallerCtx; input: IntegrationWrite }) {
  assertWritable(ctx, given);
  const input = withUrlCredentials(given);
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
        settings: input.settings ?? {},
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

/** The names of a tenant's integrations, for checks of what others name (agent readiness). */
export async function integrationNamesOf(db: Executor, tenant: Tenant): Promise<Set<string>> {
  const rows = await db
    .select({ name: integrations.name })
    .from(integrations)
    .where(inTenant(integrations, tenant));
  return new Set(rows.map((row) => row.name));
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
  assertWritable(ctx, input.changes);
  const changes = withUrlCredentials(input.changes);
  const tenant = tenantOf(ctx.actor);
  try {
    return await withTransaction(ctx.db, async (tx) => {
      const [row] = await tx
        .update(integrations)
        .set({
          name: changes.name,
          type: changes.type,
          url: changes.url ?? null,
          description: changes.description ?? "",
          ...(changes.settings !== undefined && { settings: changes.settings }),
          // Omitted credentials are kept; null clears them.
          ...(changes.credentials !== undefined && {
            credentialsSealed: changes.credentials
              ? ctx.secrets.encrypt(JSON.stringify(changes.credentials))
              : null,
          }),
          updatedAt: ctx.now(),
        })
        .where(and(inTenant(integrations, tenant), eq(integrations.name, input.name)))
        .returning();
      if (!row) throw notFound("integration", { name: input.name });
      if (row.name !== input.name) await carryRename(tx, tenant, input.name, row.name);
      return present(row);
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw conflict(`integration ${changes.name} already exists`, { name: changes.name });
    throw err;
  }
}

/** Deletes the integration, and its name from the references that drop it (app bindings) with it. */
export async function deleteIntegration({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const tenant = tenantOf(ctx.actor);
  await withTransaction(ctx.db, async (tx) => {
    const rows = await tx
      .delete(integrations)
      .where(and(inTenant(integrations, tenant), eq(integrations.name, input.name)))
      .returning({ id: integrations.id });
    if (rows.length === 0) throw notFound("integration", { name: input.name });
    await carryDelete(tx, { tenant, name: input.name, now: ctx.now() });
  });
}

/**
 * For other domains: the names among `names` that are not integrations of the tenant. `lock` holds
 * the integrations found FOR SHARE until ctx.db's transaction ends: a delete or rename of one waits
 * for it, and one in flight is waited for (its name then counts as missing).
 */
export async function missingIntegrations({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { names: string[]; lock?: boolean };
}) {
  const existing = input.lock
    ? await lockedNames(ctx.db, tenantOf(ctx.actor), input.names)
    : await integrationNamesOf(ctx.db, tenantOf(ctx.actor));
  return input.names.filter((name) => !existing.has(name));
}

async function lockedNames(db: Executor, tenant: Tenant, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await db
    .select({ name: integrations.name })
    .from(integrations)
    .where(and(inTenant(integrations, tenant), inArray(integrations.name, names)))
    .for("share");
  return new Set(rows.map((row) => row.name));
}
