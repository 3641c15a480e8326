// Installations of catalog apps per tenant, with the svc_app resource's PUT semantics: integrations
// replace the binding set; attached_workflows and workflow_assignments omitted = unchanged, [] =
// cleared; config replaces when present; enabled omitted = unmanaged. A PUT that changes nothing
// writes nothing (updated_at too), so an IaC apply is stable.
import { and, eq } from "drizzle-orm";
import { provisionWorkflow, workflowStates } from "../automation/index.ts";
import { apiKeys } from "../core/auth/tables.ts";
import { inTenant, type Tenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx, Ctx } from "../core/context.ts";
import { type Executor, withTransaction } from "../core/db/database.ts";
import { AppError, badRequest, notFound } from "../core/errors.ts";
import { createTtlCache } from "../core/ttl-cache.ts";
import { missingIntegrations } from "../integrations/index.ts";
import { issueAppToken, revokeAppToken, scopeLackedForAppToken } from "./app-token.ts";
import { CATALOG, type CatalogApp, catalogApp, type PurposeDefinition } from "./catalog.ts";
import type { AppInstallation, AppInstallationWrite } from "./schemas.ts";
import { appInstallations, type StoredAssignment } from "./tables.ts";

export type InstallationRow = typeof appInstallations.$inferSelect;

export function requireApp(appName: string): CatalogApp {
  const app = catalogApp(appName);
  if (!app) throw notFound("app", { app_name: appName });
  return app;
}

function mcpUrl(ctx: Ctx, app: CatalogApp, tenant: Tenant): string {
  if (!app.mcpPath) return "";
  return `${ctx.config.publicUrl}${app.mcpPath}${tenant.orgId ? `?orgId=${tenant.orgId}` : ""}`;
}

async function present(
  ctx: CallerCtx,
  app: CatalogApp,
  row: InstallationRow | null,
): Promise<AppInstallation> {
  const installation: AppInstallation = {
    app_name: app.slug,
    id: row?.id ?? "",
    configured: row !== null,
    status: row ? (row.enabled ? "active" : "disabled") : "not_installed",
    installed_at: row?.installedAt.toISOString() ?? "",
    updated_at: row?.updatedAt.toISOString() ?? "",
    app_version: app.appVersion,
    category: app.category,
    description: app.description,
    display_name: app.displayName,
    mcp_url: mcpUrl(ctx, app, tenantOf(ctx.actor)),
    remote_runners: [],
    workflow_purposes: app.purposes.map((item) => ({
      purpose: item.purpose,
      workflow_name: item.defaultWorkflow.name,
    })),
    integrations: row?.integrations ?? [],
    attached_workflows: row?.attachedWorkflows ?? [],
    workflow_assignments: row?.workflowAssignments ?? [],
    config: row?.config ?? {},
    enabled: row?.enabled ?? false,
  };
  // The token only to callers that could rotate it (null to others: there is one they may not see),
  // and only while it works: one revoked in /api/v1/keys is not shown as the app's credential until
  // a rotation issues another.
  if (row?.appTokenSealed) {
    if (scopeLackedForAppToken(ctx.actor.scopes)) installation.app_token = null;
    else if (await isLive(ctx.db, row)) installation.app_token = ctx.secrets.decrypt(row.appTokenSealed);
  }
  return installation;
}

async function isLive(db: Executor, row: InstallationRow): Promise<boolean> {
  if (!row.appTokenKeyId) return true;
  const [key] = await db
    .select({ revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .where(eq(apiKeys.id, row.appTokenKeyId));
  return key !== undefined && key.revokedAt === null;
}

async function findInstallation(db: Executor, tenant: Tenant, appName: string, lock = false) {
  const query = db
    .select()
    .from(appInstallations)
    .where(and(inTenant(appInstallations, tenant), eq(appInstallations.appName, appName)));
  const [row] = lock ? await query.for("update") : await query;
  return row ?? null;
}

// Ingest asks on every delivery whether its tenant has the app. Only a yes is cached (a few seconds,
// dropped here on every install and uninstall): a no is asked of the database again, so an install
// shows to the next delivery on every replica, even one read between the install's forget and its
// COMMIT. Another replica's uninstall shows within the TTL.
const configuredCache = createTtlCache<string, { key: string }>(5_000, 10_000);
const cacheKey = (tenant: Tenant, appName: string) =>
  `${tenant.orgId ? `org:${tenant.orgId}` : `user:${tenant.ownerId}`}/${appName}`;
const forget = (tenant: Tenant, appName: string) => {
  const key = cacheKey(tenant, appName);
  configuredCache.deleteWhere((entry) => entry.key === key);
};

/** Whether the tenant has a config row for the app (alert ingest refuses deliveries otherwise). */
export async function isAppConfigured(db: Executor, tenant: Tenant, appName: string): Promise<boolean> {
  const key = cacheKey(tenant, appName);
  if (configuredCache.get(key)) return true;
  const configured = (await findInstallation(db, tenant, appName)) !== null;
  if (configured) configuredCache.set(key, { key });
  return configured;
}

/**
 * Installs the app for the tenant when it is not yet: the config row with no bindings, its default
 * workflows (approved) and its token. Returns the row, new or existing. Runs in the caller's transaction.
 */
export async function ensureAppInstalled(
  tx: Executor,
  ctx: Pick<Ctx, "secrets">,
  input: { tenant: Tenant; appName: string; now: Date },
): Promise<InstallationRow> {
  const app = requireApp(input.appName);
  const { tenant, now } = input;
  for (const purpose of app.purposes) {
    await provisionWorkflow(tx, tenant, purpose.defaultWorkflow, now);
  }
  const [inserted] = await tx
    .insert(appInstallations)
    .values({
      id: crypto.randomUUID(),
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      appName: app.slug,
      enabled: true,
      integrations: [],
      attachedWorkflows: [],
      workflowAssignments: [],
      config: {},
      installedAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  forget(tenant, app.slug);
  if (!inserted) {
    const existing = await findInstallation(tx, tenant, app.slug, true);
    if (!existing) throw new Error(`installation of ${app.slug} vanished while being installed`);
    return existing;
  }
  const token = await issueAppToken(tx, ctx.secrets, { tenant, appName: app.slug });
  const [withToken] = await tx
    .update(appInstallations)
    .set({ appTokenSealed: token.sealed, appTokenKeyId: token.keyId })
    .where(eq(appInstallations.id, inserted.id))
    .returning();
  return withToken as InstallationRow;
}

export async function listApps({ ctx }: { ctx: CallerCtx }): Promise<AppInstallation[]> {
  const tenant = tenantOf(ctx.actor);
  const result: AppInstallation[] = [];
  for (const app of CATALOG) {
    result.push(await present(ctx, app, await findInstallation(ctx.db, tenant, app.slug)));
  }
  return result;
}

export async function getApp({ ctx, input }: { ctx: CallerCtx; input: { appName: string } }) {
  const app = requireApp(input.appName);
  return present(ctx, app, await findInstallation(ctx.db, tenantOf(ctx.actor), app.slug));
}

/**
 * 400 naming the first item of the body the tenant or the app cannot take. The integrations and
 * workflows it names are held FOR SHARE until ctx.db's transaction ends (see putApp).
 */
async function validateWrite(ctx: CallerCtx, app: CatalogApp, body: AppInstallationWrite): Promise<void> {
  const tenant = tenantOf(ctx.actor);
  if (body.app_name !== undefined && body.app_name !== app.slug) {
    throw badRequest("app_name", `must be "${app.slug}", the app of the path`);
  }
  if (body.integrations) {
    const missing = new Set(
      await missingIntegrations({ ctx, input: { names: body.integrations, lock: true } }),
    );
    const index = body.integrations.findIndex((name) => missing.has(name));
    if (index >= 0) {
      throw badRequest(`integrations.${index}`, `integration ${body.integrations[index]} does not exist`);
    }
  }
  for (const [key, values] of Object.entries(app.settings)) {
    const value = body.config?.[key];
    if (value !== undefined && !values.includes(value)) {
      throw badRequest(`config.${key}`, `${value} is not one of ${values.join(", ")}`);
    }
  }
  const assignments = body.workflow_assignments ?? [];
  const states = await workflowStates(ctx.db, {
    tenant,
    names: [...(body.attached_workflows ?? []), ...assignments.map((item) => item.workflow_name)],
    lock: true,
  });
  (body.attached_workflows ?? []).forEach((name, index) => {
    if (!states.existing.has(name))
      throw badRequest(`attached_workflows.${index}`, `workflow ${name} does not exist`);
  });
  const declared = new Map(app.purposes.map((item) => [item.purpose, item]));
  const seen = new Set<string>();
  const defaults = new Set<string>();
  assignments.forEach((item, index) => {
    const at = `workflow_assignments.${index}`;
    const purpose = declared.get(item.purpose);
    if (!purpose) {
      throw badRequest(
        `${at}.purpose`,
        `${item.purpose} is not a purpose of app ${app.slug} (one of ${[...declared.keys()].join(", ")})`,
      );
    }
    if (!states.approved.has(item.workflow_name)) {
      throw badRequest(
        `${at}.workflow_name`,
        `workflow ${item.workflow_name} does not exist or has no approved version`,
      );
    }
    const unsupplied = unsuppliedInputs(states.requiredInputs.get(item.workflow_name), purpose);
    if (unsupplied.length > 0) {
      throw badRequest(
        `${at}.workflow_name`,
        `workflow ${item.workflow_name} requires ${unsupplied.join(", ")}, which ${item.purpose} does not give (it gives ${purpose.runInputs.join(", ")})`,
      );
    }
    const pair = `${item.purpose}\n${item.workflow_name}`;
    if (seen.has(pair)) throw badRequest(at, `${item.workflow_name} is assigned to ${item.purpose} twice`);
    seen.add(pair);
    if (item.is_default) {
      if (defaults.has(item.purpose)) {
        throw badRequest(`${at}.is_default`, `purpose ${item.purpose} has more than one default workflow`);
      }
      defaults.add(item.purpose);
    }
  });
}

/** Required inputs of a workflow that runs for `purpose` which the purpose's runs do not give. */
function unsuppliedInputs(required: string[] | undefined, purpose: PurposeDefinition): string[] {
  return (required ?? []).filter((name) => !purpose.runInputs.includes(name));
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export async function putApp({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { appName: string; body: AppInstallationWrite };
}): Promise<AppInstallation> {
  const app = requireApp(input.appName);
  const { body } = input;
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  const row = await withTransaction(ctx.db, async (tx) => {
    // The names are checked and held before the installation row is locked, the order a delete of
    // one takes them in (its own row, then dropFromBindings): a delete in flight ends first and the
    // name is refused, or waits for this PUT to commit and then takes the name out of the binding.
    await validateWrite({ ...ctx, db: tx }, app, body);
    const current = await ensureAppInstalled(tx, ctx, { tenant, appName: app.slug, now });
    const next = {
      integrations: body.integrations ?? current.integrations,
      attachedWorkflows: body.attached_workflows ?? current.attachedWorkflows,
      workflowAssignments:
        body.workflow_assignments?.map(
          (item): StoredAssignment => ({
            purpose: item.purpose,
            workflow_name: item.workflow_name,
            is_default: item.is_default ?? false,
          }),
        ) ?? current.workflowAssignments,
      config: body.config ?? current.config,
      enabled: body.enabled ?? current.enabled,
    };
    const unchanged =
      sameJson(next.integrations, current.integrations) &&
      sameJson(next.attachedWorkflows, current.attachedWorkflows) &&
      sameJson(
        next.workflowAssignments.map(assignmentTuple),
        current.workflowAssignments.map(assignmentTuple),
      ) &&
      sameJson(sortedEntries(next.config), sortedEntries(current.config)) &&
      next.enabled === current.enabled;
    // An installation from before app tokens (or one whose token was lost) gets one now.
    const token = current.appTokenSealed
      ? null
      : await issueAppToken(tx, ctx.secrets, { tenant, appName: app.slug });
    if (unchanged && !token) return current;
    const [updated] = await tx
      .update(appInstallations)
      .set({
        ...(unchanged ? {} : { ...next, updatedAt: now }),
        ...(token ? { appTokenSealed: token.sealed, appTokenKeyId: token.keyId } : {}),
      })
      .where(eq(appInstallations.id, current.id))
      .returning();
    return updated as InstallationRow;
  });
  return present(ctx, app, row);
}

// jsonb keeps object keys in its own order: compared as tuples, not as stored text.
const assignmentTuple = (item: StoredAssignment) => [item.purpose, item.workflow_name, item.is_default];

const sortedEntries = (record: Record<string, string>) =>
  Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Removes the tenant's bindings, assignments, config and app token. Idempotent. */
export async function deleteApp({ ctx, input }: { ctx: CallerCtx; input: { appName: string } }) {
  const app = requireApp(input.appName);
  const tenant = tenantOf(ctx.actor);
  await withTransaction(ctx.db, async (tx) => {
    const removed = await tx
      .delete(appInstallations)
      .where(and(inTenant(appInstallations, tenant), eq(appInstallations.appName, app.slug)))
      .returning({ keyId: appInstallations.appTokenKeyId });
    for (const row of removed) await revokeAppToken(tx, row.keyId);
  });
  forget(tenant, app.slug);
}

/**
 * A new app token; the previous one stops working at once. 403 for a caller lacking a scope of the
 * token, 404 when the app is not configured.
 */
export async function rotateAppToken({ ctx, input }: { ctx: CallerCtx; input: { appName: string } }) {
  const app = requireApp(input.appName);
  const lacked = scopeLackedForAppToken(ctx.actor.scopes);
  if (lacked) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      `this API key lacks the scope ${lacked}, which the app token holds: only a key holding all of the token's scopes may rotate it`,
      { scope: lacked },
    );
  }
  const tenant = tenantOf(ctx.actor);
  const row = await withTransaction(ctx.db, async (tx) => {
    const current = await findInstallation(tx, tenant, app.slug, true);
    if (!current) throw notFound("app installation", { app_name: app.slug });
    await revokeAppToken(tx, current.appTokenKeyId);
    const token = await issueAppToken(tx, ctx.secrets, { tenant, appName: app.slug });
    const [updated] = await tx
      .update(appInstallations)
      .set({ appTokenSealed: token.sealed, appTokenKeyId: token.keyId })
      .where(eq(appInstallations.id, current.id))
      .returning();
    return updated as InstallationRow;
  });
  return present(ctx, app, row);
}

/**
 * Takes a deleted integration or workflow out of the tenant's bindings (integrations, attached
 * workflows, workflow assignments), in the delete's transaction: a name left behind would make the
 * binding unwritable as read (400 on its own integrations), bind a later namesake silently, and
 * leave a purpose assigned to a workflow that no longer runs. A binding that changes gets a new
 * updated_at.
 */
export async function dropFromBindings(
  tx: Executor,
  input: { tenant: Tenant; now: Date; integration?: string; workflow?: string },
): Promise<void> {
  const rows = await tx
    .select()
    .from(appInstallations)
    .where(inTenant(appInstallations, input.tenant))
    .for("update");
  for (const row of rows) {
    const next = {
      integrations: row.integrations.filter((name) => name !== input.integration),
      attachedWorkflows: row.attachedWorkflows.filter((name) => name !== input.workflow),
      workflowAssignments: row.workflowAssignments.filter((item) => item.workflow_name !== input.workflow),
    };
    const changed =
      next.integrations.length !== row.integrations.length ||
      next.attachedWorkflows.length !== row.attachedWorkflows.length ||
      next.workflowAssignments.length !== row.workflowAssignments.length;
    if (changed) {
      await tx
        .update(appInstallations)
        .set({ ...next, updatedAt: input.now })
        .where(eq(appInstallations.id, row.id));
    }
  }
}

/** The installation of `appName` in the tenant, for domains of the app (discovery, setup). */
export const readInstallation = (db: Executor, tenant: Tenant, appName: string) =>
  findInstallation(db, tenant, appName);
