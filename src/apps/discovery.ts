// Discovery runs: what the tenant's bound Prometheus and Alertmanager integrations say about its
// services, environments, clusters and calls between services.
//   1. start: a `running` row and the job, in one transaction (or a `skipped` row with skip_if_exists
//      when the tenant already has a run)
//   2. the job reads every bound integration (Prometheus: /api/v1/targets and series labels;
//      Alertmanager: /api/v2/alerts and /api/v2/silences), learns from the label sets, and completes
//      the run: succeeded (with what failed per integration, if anything) or failed with why
import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { and, desc, eq, lt, sql } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx, Ctx } from "../core/context.ts";
import { withTransaction } from "../core/db/database.ts";
import { AppError, notFound } from "../core/errors.ts";
import { defineJob } from "../core/queue/catalog.ts";
import { readIntegrationConnection } from "../integrations/index.ts";
import { readInstallation } from "./installations.ts";
import { TopologyBuilder } from "./learn-topology.ts";
import { fetchJson } from "./observability.ts";
import type { DiscoveryRun, DiscoveryRunStart } from "./schemas.ts";
import { type DiscoveryResult, discoveryRuns } from "./tables.ts";

const APP = "sre";
const FETCH_TIMEOUT_MS = 15_000;
/** Series read per Prometheus: enough to learn a topology, bounded so one run stays small. */
const SERIES_LIMIT = 20_000;
const ERROR_MAX_CHARS = 2000;
/** A run still `running` after this long died with its process (the job's own limit is 15 minutes). */
const INTERRUPTED_AFTER_MS = 30 * 60_000;

type RunRow = typeof discoveryRuns.$inferSelect;

function present(row: RunRow): DiscoveryRun {
  return {
    id: row.id,
    status: row.status as DiscoveryRun["status"],
    error: row.error,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    result: row.result,
  };
}

export async function startDiscoveryRun({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: DiscoveryRunStart;
}): Promise<{ created: boolean; run: DiscoveryRun }> {
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  return withTransaction(ctx.db, async (tx) => {
    if (!(await readInstallation(tx, tenant, APP))) {
      throw new AppError(
        "CONFLICT",
        `the ${APP} app is not configured for this workspace: PUT /api/v1/apps/${APP} first`,
        {
          app_name: APP,
        },
      );
    }
    // Serializes starts of one tenant, so two skip_if_exists callers cannot both start a run.
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext(${`discovery:${tenant.orgId ?? tenant.ownerId}`}))`,
    );
    const [earlier] = await tx
      .select({ id: discoveryRuns.id })
      .from(discoveryRuns)
      .where(and(inTenant(discoveryRuns, tenant), eq(discoveryRuns.appName, APP)))
      .limit(1);
    const skip = input.skip_if_exists === true && earlier !== undefined;
    const [row] = await tx
      .insert(discoveryRuns)
      .values({
        id: randomUUID(),
        orgId: tenant.orgId,
        ownerId: tenant.ownerId,
        appName: APP,
        status: skip ? "skipped" : "running",
        error: null,
        result: {},
        startedAt: now,
        finishedAt: skip ? now : null,
      })
      .returning();
    const run = row as RunRow;
    if (!skip) await ctx.enqueue(tx, discoverJob, { runId: run.id });
    return { created: !skip, run: present(run) };
  });
}

/** Runs of the tenant left `running` by a process that died are failed, so pollers see an end. */
async function failInterruptedRuns(ctx: CallerCtx): Promise<void> {
  const before = new Date(ctx.now().getTime() - INTERRUPTED_AFTER_MS);
  await ctx.db
    .update(discoveryRuns)
    .set({ status: "failed", error: "the run was interrupted (its process stopped)", finishedAt: ctx.now() })
    .where(
      and(
        inTenant(discoveryRuns, tenantOf(ctx.actor)),
        eq(discoveryRuns.status, "running"),
        lt(discoveryRuns.startedAt, before),
      ),
    );
}

export async function getDiscoveryRun({ ctx, input }: { ctx: CallerCtx; input: { id: string } }) {
  await failInterruptedRuns(ctx);
  const [row] = await ctx.db
    .select()
    .from(discoveryRuns)
    .where(and(inTenant(discoveryRuns, tenantOf(ctx.actor)), eq(discoveryRuns.id, input.id)));
  if (!row) throw notFound("discovery run", { id: input.id });
  return present(row);
}

export async function listDiscoveryRuns({ ctx, input }: { ctx: CallerCtx; input: { limit: number } }) {
  await failInterruptedRuns(ctx);
  const rows = await ctx.db
    .select()
    .from(discoveryRuns)
    .where(inTenant(discoveryRuns, tenantOf(ctx.actor)))
    .orderBy(desc(discoveryRuns.startedAt), desc(discoveryRuns.id))
    .limit(input.limit);
  return rows.map(present);
}

/** What the latest succeeded run learned for the tenant; null before any (for impact, storms, investigations). */
export async function latestTopology(db: Ctx["db"], tenant: Tenant): Promise<DiscoveryResult | null> {
  const [row] = await db
    .select({ result: discoveryRuns.result })
    .from(discoveryRuns)
    .where(and(inTenant(discoveryRuns, tenant), eq(discoveryRuns.status, "succeeded")))
    .orderBy(desc(discoveryRuns.finishedAt))
    .limit(1);
  return (row?.result as DiscoveryResult | undefined) ?? null;
}

type Labels = Record<string, string>;
type Counts = Record<string, number>;

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const labelsOf = (value: unknown): Labels => {
  const labels: Labels = {};
  if (value && typeof value === "object") {
    for (const [name, text] of Object.entries(value)) if (typeof text === "string") labels[name] = text;
  }
  return labels;
};

type Connection = NonNullable<Awaited<ReturnType<typeof readIntegrationConnection>>>;

async function readPrometheus(
  ctx: Ctx,
  connection: Connection,
  learn: (labels: Labels) => void,
): Promise<{ error: string | null; counts: Counts }> {
  const targets = await fetchJson(ctx, connection, "/api/v1/targets?state=active", FETCH_TIMEOUT_MS);
  if (!targets.ok) return { error: targets.error, counts: {} };
  const active = asArray((targets.json as { data?: { activeTargets?: unknown } }).data?.activeTargets);
  for (const target of active) learn(labelsOf((target as { labels?: unknown }).labels));
  // Series of the last hour; `limit` is honoured by Prometheus 2.51 and later, older ones answer all.
  const start = Math.floor(Date.now() / 1000) - 3600;
  const query = `/api/v1/series?match[]=${encodeURIComponent('{__name__=~".+"}')}&start=${start}&limit=${SERIES_LIMIT}`;
  const series = await fetchJson(ctx, connection, query, FETCH_TIMEOUT_MS);
  if (!series.ok) return { error: series.error, counts: { targets: active.length } };
  const list = asArray((series.json as { data?: unknown }).data).slice(0, SERIES_LIMIT);
  for (const item of list) learn(labelsOf(item));
  return { error: null, counts: { targets: active.length, series: list.length } };
}

async function readAlertmanager(
  ctx: Ctx,
  connection: Connection,
  learn: (labels: Labels) => void,
): Promise<{ error: string | null; counts: Counts }> {
  const alerts = await fetchJson(
    ctx,
    connection,
    "/api/v2/alerts?active=true&silenced=true&inhibited=true",
    FETCH_TIMEOUT_MS,
  );
  if (!alerts.ok) return { error: alerts.error, counts: {} };
  const alertList = asArray(alerts.json);
  for (const alert of alertList) learn(labelsOf((alert as { labels?: unknown }).labels));
  const silences = await fetchJson(ctx, connection, "/api/v2/silences", FETCH_TIMEOUT_MS);
  if (!silences.ok) return { error: silences.error, counts: { alerts: alertList.length } };
  const silenceList = asArray(silences.json);
  for (const silence of silenceList) {
    // Equality matchers name what the silence covers: a service, its environment, its cluster.
    const matchers = asArray((silence as { matchers?: unknown }).matchers);
    const labels: Labels = {};
    for (const matcher of matchers) {
      const { name, value, isRegex, isEqual } = matcher as {
        name?: unknown;
        value?: unknown;
        isRegex?: unknown;
        isEqual?: unknown;
      };
      if (typeof name === "string" && typeof value === "string" && isRegex !== true && isEqual !== false)
        labels[name] = value;
    }
    learn(labels);
  }
  return { error: null, counts: { alerts: alertList.length, silences: silenceList.length } };
}

async function discover(
  ctx: Ctx,
  tenant: Tenant,
): Promise<{ result: DiscoveryResult; error: string | null }> {
  const installation = await readInstallation(ctx.db, tenant, APP);
  const builder = new TopologyBuilder();
  const integrations: DiscoveryResult["integrations"] = [];
  for (const name of installation?.integrations ?? []) {
    const connection = await readIntegrationConnection(ctx.db, ctx.secrets, { tenant, name });
    if (!connection) {
      integrations.push({
        name,
        type: "",
        ok: false,
        error: `integration ${name} no longer exists`,
        counts: {},
      });
      continue;
    }
    const reader =
      connection.type === "prometheus"
        ? readPrometheus
        : connection.type === "alertmanager"
          ? readAlertmanager
          : null;
    if (!reader) continue;
    const outcome = await reader(ctx, connection, (labels) => builder.add(labels, name));
    integrations.push({
      name,
      type: connection.type,
      ok: outcome.error === null,
      error: outcome.error,
      counts: outcome.counts,
    });
  }
  const result = builder.result(integrations);
  if (integrations.length === 0) {
    return {
      result,
      error:
        "no prometheus or alertmanager integration is bound to the app: PUT /api/v1/apps/sre with integrations",
    };
  }
  if (integrations.every((item) => !item.ok)) {
    return {
      result,
      error: integrations
        .map((item) => item.error)
        .join("; ")
        .slice(0, ERROR_MAX_CHARS),
    };
  }
  return { result, error: null };
}

export const discoverJob = defineJob({
  name: "apps.discover",
  schema: Type.Object({ runId: Type.String({ minLength: 36, maxLength: 36 }) }),
  retryLimit: 0,
  // The run starts when it is asked for, not at the worker's next poll.
  notify: true,
  async handler({ ctx, data }) {
    const [run] = await ctx.db.select().from(discoveryRuns).where(eq(discoveryRuns.id, data.runId));
    if (run?.status !== "running") return;
    const tenant = { orgId: run.orgId, ownerId: run.ownerId };
    let outcome: { result: DiscoveryResult | Record<string, never>; error: string | null };
    try {
      outcome = await discover(ctx, tenant);
    } catch (err) {
      ctx.log.error({ err, runId: run.id }, "discovery run failed");
      outcome = {
        result: {},
        error: `discovery stopped on an unexpected error: ${(err as Error).message}`.slice(
          0,
          ERROR_MAX_CHARS,
        ),
      };
    }
    await ctx.db
      .update(discoveryRuns)
      .set({
        status: outcome.error ? "failed" : "succeeded",
        error: outcome.error,
        result: outcome.result,
        finishedAt: ctx.now(),
      })
      .where(and(eq(discoveryRuns.id, run.id), eq(discoveryRuns.status, "running")));
  },
});
