// Pull sync of an Alertmanager integration: read its API's alert list and make Vigil agree with it.
//   1. record the run as `running` (committed at once, so it shows while the fetch is under way)
//   2. GET <url>/api/v2/alerts with the integration's credentials, under the outbound rules
//      (core/http/outbound.ts: allowed hosts and addresses, no redirects, a timeout, a size limit)
//   3. in one transaction: ingest every listed alert (via "pull"), resolve the alerts this sync had
//      seen that are no longer listed, and complete the run with its counts
// A failed fetch or an unreadable answer fails the run and changes no alert: an Alertmanager that
// cannot be reached says nothing about whether its alerts resolved.
import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { and, count, desc, eq, gt, lt, or, sql } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx, Ctx } from "../../core/context.ts";
import type { Db, Tx } from "../../core/db/database.ts";
import { AppError, notFound } from "../../core/errors.ts";
import { type OutboundError, outboundRequest } from "../../core/http/outbound.ts";
import { defineJob } from "../../core/queue/catalog.ts";
import {
  getIntegration,
  type IntegrationConnection,
  integrationHeaders,
  listIntegrationConnections,
  readIntegrationConnection,
} from "../../integrations/index.ts";
import { enabledWebhookIds } from "../../webhooks/index.ts";
import { applyAlertEvents, type IngestOptions, type IngestResult } from "../ingest/ingest.ts";
import type { AlertScope, IngestOutcome } from "../ingest/lifecycle.ts";
import { REGISTRATION_DEFAULTS } from "../schemas.ts";
import { alertmanagerApiEvents } from "../sources/alertmanager-api.ts";
import { decodeBody } from "../sources/normalize/index.ts";
import type { AlertEvent, SeverityBucket } from "../sources/types.ts";
import { alertSyncRuns, alertSyncSeen, alerts, alertWebhooks } from "../tables.ts";
import type { TriageSettings } from "../triage/triage.ts";
import type { AlertSyncRun, AlertSyncRunPage } from "./schemas.ts";

const FETCH_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The scheduled sync skips an integration synced (manually or not) this recently. */
const MIN_SYNC_INTERVAL_SECONDS = 45;
/**
 * A run still `running` after this long died with its process (its job expires after 5 minutes,
 * SYNC_EXPIRE_SECONDS); it is marked failed, and the integration is synced again. Until then the
 * scheduled sync skips the integration.
 */
const SYNC_EXPIRE_SECONDS = 5 * 60;
const INTERRUPTED_AFTER_SECONDS = SYNC_EXPIRE_SECONDS + 60;
const ERROR_MAX_CHARS = 2000;
const SYNCABLE_TYPE = "alertmanager";

type SyncTrigger = "manual" | "scheduled";

type RunRow = typeof alertSyncRuns.$inferSelect;

function present(row: RunRow): AlertSyncRun {
  return {
    id: row.id,
    integration_name: row.integrationName,
    trigger: row.trigger,
    status: row.status,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    counts: {
      fetched: row.fetched,
      created: row.created,
      updated: row.updated,
      resolved: row.resolved,
      unchanged: row.unchanged,
    },
    error: row.error,
  };
}

// ---- fetching ----

type FetchResult = { ok: true; body: string } | { ok: false; error: string };

/**
 * The list of every alert Alertmanager holds, muted ones included; with `receiver` (the
 * integration's settings.receiver, a regular expression) only the alerts routed to a matching
 * receiver, as Alertmanager filters them.
 */
function alertsUrl(base: string, receiver: string | undefined): URL {
  const url = new URL("api/v2/alerts", base.endsWith("/") ? base : `${base}/`);
  url.search = "active=true&silenced=true&inhibited=true";
  if (receiver !== undefined) url.searchParams.set("receiver", receiver);
  return url;
}

function requestOf(connection: IntegrationConnection): { url: URL; headers: Record<string, string> } {
  const url = alertsUrl(connection.url ?? "", connection.settings.receiver);
  return { url, headers: integrationHeaders(connection, url) };
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { message?: string; code?: string } })?.cause;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

async function fetchAlertList(
  connection: IntegrationConnection,
  config: Ctx["config"],
): Promise<FetchResult> {
  if (connection.credentialsError) return { ok: false, error: connection.credentialsError };
  let target: ReturnType<typeof requestOf>;
  try {
    target = requestOf(connection);
  } catch {
    return { ok: false, error: `the integration's url is not a valid URL` };
  }
  const where = `GET ${target.url.origin}${target.url.pathname}`;
  try {
    // The outbound rules: the allow-list is checked again here (it may have changed since the
    // integration was saved), and no redirect is followed (one could carry the credentials away).
    const response = await outboundRequest(
      {
        allowedHosts: config.integrationAllowedHosts.length > 0 ? config.integrationAllowedHosts : null,
        allowedHostsSetting: "INTEGRATION_ALLOWED_HOSTS",
        config,
      },
      {
        url: target.url,
        headers: target.headers,
        timeoutMs: FETCH_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        oversize: "fail",
      },
    );
    // Only the status: the body of an answer that is not the alert list stays out of the run's
    // error, which the tenant reads (the url may name something that is not an Alertmanager).
    if (response.status !== 200) return { ok: false, error: `${where} answered ${response.status}` };
    return { ok: true, body: response.body.toString("utf8") };
  } catch (err) {
    const error = err as OutboundError;
    if (error.kind === "refused" || error.kind === "invalid") return { ok: false, error: error.message };
    if (error.kind === "too_large") return { ok: false, error: `${where}: ${error.message}` };
    return { ok: false, error: `${where} failed: ${error.message}` };
  }
}

// ---- the run ----

async function startRun(
  db: Db,
  connection: IntegrationConnection,
  trigger: SyncTrigger,
  startedAt: Date,
): Promise<RunRow> {
  const [row] = await db
    .insert(alertSyncRuns)
    .values({
      id: randomUUID(),
      orgId: connection.orgId,
      ownerId: connection.ownerId,
      integrationName: connection.name,
      trigger,
      status: "running",
      startedAt,
    })
    .returning();
  return row as RunRow;
}

async function failRun(db: Db | Tx, run: RunRow, error: string, at: Date): Promise<RunRow> {
  const [row] = await db
    .update(alertSyncRuns)
    .set({ status: "failed", error: error.slice(0, ERROR_MAX_CHARS), finishedAt: at })
    .where(and(eq(alertSyncRuns.id, run.id), eq(alertSyncRuns.status, "running")))
    .returning();
  return row ?? run;
}

// Pulled alerts of an integration without a webhook registration are classified with these.
const DEFAULT_TRIAGE: TriageSettings = {
  mode: REGISTRATION_DEFAULTS.classify_mode,
  windowSeconds: REGISTRATION_DEFAULTS.classify_batch_window_seconds,
  bucketBy: REGISTRATION_DEFAULTS.classify_bucket_by,
  criticalBypass: REGISTRATION_DEFAULTS.classify_critical_bypass,
};

/**
 * Severity overrides and classification settings of the tenant's Alertmanager registration for the
 * same integration, if any: push and pull then normalize and classify alike.
 */
async function registrationSettingsOf(
  tx: Tx,
  tenant: Tenant,
  integrationName: string,
): Promise<{
  overrides: Record<string, SeverityBucket> | undefined;
  triage: TriageSettings;
  autoInvestigate: boolean;
}> {
  const [row] = await tx
    .select({
      overrides: alertWebhooks.severityOverrides,
      autoInvestigate: alertWebhooks.autoInvestigate,
      mode: alertWebhooks.classifyMode,
      windowSeconds: alertWebhooks.classifyBatchWindowSeconds,
      bucketBy: alertWebhooks.classifyBucketBy,
      criticalBypass: alertWebhooks.classifyCriticalBypass,
    })
    .from(alertWebhooks)
    .where(
      and(
        inTenant(alertWebhooks, tenant),
        eq(alertWebhooks.appName, "sre"),
        eq(alertWebhooks.source, SYNCABLE_TYPE),
        eq(alertWebhooks.integration, integrationName),
      ),
    );
  if (!row) return { overrides: undefined, triage: DEFAULT_TRIAGE, autoInvestigate: false };
  const { overrides, autoInvestigate, ...triage } = row;
  return { overrides, triage: triage as TriageSettings, autoInvestigate };
}

function ingestOptionsOf(ctx: Ctx): IngestOptions {
  return {
    enqueueMany: ctx.enqueueMany,
    impact: { environmentCriticality: ctx.config.environmentCriticality },
  };
}

// The alerts to resolve: seen by an earlier sync, not resolved, absent from this answer. One changed
// after this fetch started is left alone: a concurrent sync that fetched later (or a push) knows
// more about it than this answer does.
async function disappearedAlerts(
  tx: Tx,
  scope: AlertScope,
  listedUids: string[],
  fetchStartedAt: Date,
): Promise<{ externalUid: string; isTest: boolean }[]> {
  return tx
    .select({ externalUid: alerts.externalUid, isTest: alerts.isTest })
    .from(alerts)
    .innerJoin(alertSyncSeen, eq(alertSyncSeen.alertId, alerts.id))
    .where(
      and(
        inTenant(alerts, scope),
        eq(alerts.sourceType, scope.sourceType),
        eq(alerts.integrationName, scope.integrationName),
        sql`${alerts.status} <> 'resolved'`,
        sql`${alerts.updatedAt} <= ${fetchStartedAt.toISOString()}::timestamptz`,
        sql`${alerts.externalUid} not in (select json_array_elements_text(${JSON.stringify(listedUids)}::json))`,
      ),
    )
    .orderBy(alerts.externalUid);
}

// A resolve that changes nothing else: no title, labels or severity (the stored ones stay).
function resolveEvent(
  alert: { externalUid: string; isTest: boolean },
  at: Date,
  why = "absent from /api/v2/alerts",
): AlertEvent {
  return {
    external_uid: alert.externalUid,
    status: "resolved",
    ignore_reason: null,
    title: "",
    title_is_fallback: true,
    description: "",
    source_severity: "",
    severity: "info",
    display_priority: 5,
    severity_mapping: "missing",
    triggered_at: null,
    resolved_at: at.toISOString(),
    labels: {},
    links: [],
    is_test: alert.isTest,
    source_event: why,
    unmapped: [],
    inferred: true,
  };
}

async function markSeen(tx: Tx, results: IngestResult[], runId: string, at: Date): Promise<void> {
  const ids = [...new Set(results.map((result) => result.id).filter(Boolean))];
  if (ids.length === 0) return;
  await tx.execute(sql`
    insert into alert_sync_seen (alert_id, last_seen_at, last_run_id)
    select id::uuid, ${at.toISOString()}::timestamptz, ${runId}::uuid
    from json_array_elements_text(${JSON.stringify(ids)}::json) as listed(id)
    on conflict (alert_id) do update set last_seen_at = excluded.last_seen_at, last_run_id = excluded.last_run_id`);
}

const COUNTED_AS: Record<IngestOutcome, "created" | "updated" | "resolved" | "unchanged"> = {
  created: "created",
  updated: "updated",
  refired: "updated",
  ignored: "updated",
  resolved: "resolved",
  unchanged: "unchanged",
  duplicate: "unchanged",
  stale: "unchanged",
};

function isRetryable(err: unknown): boolean {
  const error = err as { code?: string; cause?: { code?: string } };
  const code = error?.code ?? error?.cause?.code;
  // Two syncs creating the same new alert collide on its unique key; the loser finds it on retry.
  return code === "23505" || code === "40P01";
}

async function applyAlertList(
  ctx: Ctx,
  connection: IntegrationConnection,
  run: RunRow,
  body: string,
  fetchStartedAt: Date,
): Promise<RunRow> {
  const tenant: Tenant = { orgId: connection.orgId, ownerId: connection.ownerId };
  const scope: AlertScope = {
    ...tenant,
    sourceType: SYNCABLE_TYPE,
    integrationName: connection.name,
    webhookId: null,
  };
  const ingestOptions = ingestOptionsOf(ctx);
  // Decoded once: each alert keeps its own item of the list, and a retry parses the same list.
  const decoded = decodeBody(body, {});
  const list = decoded.ok ? decoded.value : null;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.db.transaction(async (tx) => {
        const receivedAt = ctx.now();
        const settings = await registrationSettingsOf(tx, tenant, connection.name);
        const severityOverrides = settings.overrides;
        const parsed = decoded.ok ? alertmanagerApiEvents(list, { severityOverrides }) : decoded;
        if (!parsed.ok)
          return failRun(tx, run, `the answer is not an alert list: ${parsed.error}`, receivedAt);
        const listed = await applyAlertEvents(
          tx,
          {
            scope,
            events: parsed.events,
            receivedAt,
            via: "pull",
            // Each alert keeps its own item of the list: the whole answer, repeated on every alert
            // it lists, made a page of 500 pulled alerts hundreds of megabytes.
            rawPayload: null,
            rawPayloads: (list as unknown[]).map((item) => JSON.stringify(item)),
            invocationId: null,
            triage: settings.triage,
            autoInvestigate: settings.autoInvestigate,
          },
          ingestOptions,
        );
        const listedUids = parsed.events.map((event) => event.external_uid);
        const gone = await disappearedAlerts(tx, scope, listedUids, fetchStartedAt);
        const resolved = await applyAlertEvents(
          tx,
          {
            scope,
            events: gone.map((alert) => resolveEvent(alert, receivedAt)),
            receivedAt,
            via: "pull",
            rawPayload: null,
            invocationId: null,
            triage: null,
          },
          ingestOptions,
        );
        await markSeen(tx, listed, run.id, receivedAt);
        const counts = { fetched: parsed.events.length, created: 0, updated: 0, resolved: 0, unchanged: 0 };
        for (const result of [...listed, ...resolved]) counts[COUNTED_AS[result.outcome]] += 1;
        const [row] = await tx
          .update(alertSyncRuns)
          .set({ status: "completed", finishedAt: receivedAt, ...counts })
          .where(and(eq(alertSyncRuns.id, run.id), eq(alertSyncRuns.status, "running")))
          .returning();
        return row ?? run;
      });
    } catch (err) {
      if (attempt < 3 && isRetryable(err)) continue;
      throw err;
    }
  }
}

async function runSync(
  ctx: Ctx,
  connection: IntegrationConnection,
  trigger: SyncTrigger,
): Promise<AlertSyncRun> {
  const fetchStartedAt = ctx.now();
  const run = await startRun(ctx.db, connection, trigger, fetchStartedAt);
  const fetched = await fetchAlertList(connection, ctx.config);
  if (!fetched.ok) {
    ctx.log.warn({ integration: connection.name, runId: run.id, error: fetched.error }, "alert sync failed");
    return present(await failRun(ctx.db, run, fetched.error, ctx.now()));
  }
  try {
    return present(await applyAlertList(ctx, connection, run, fetched.body, fetchStartedAt));
  } catch (err) {
    // Unexpected (the database): the run says so, and the caller sees the exception.
    await failRun(ctx.db, run, `storing the alerts failed: ${describeFetchError(err)}`, ctx.now()).catch(
      () => {},
    );
    throw err;
  }
}

function assertSyncable(connection: IntegrationConnection): void {
  if (connection.type !== SYNCABLE_TYPE) {
    throw new AppError(
      "BAD_REQUEST",
      `integration ${connection.name} is of type ${connection.type}; only alertmanager integrations can be synced`,
      { name: connection.name, type: connection.type },
    );
  }
  if (!connection.url) {
    throw new AppError("BAD_REQUEST", `integration ${connection.name} has no url to sync from`, {
      name: connection.name,
    });
  }
  // Its pulled alerts are resolved as orphans each minute: a one-off sync would open them for a
  // minute and resolve them again.
  if (!pullSyncOn(connection)) {
    throw new AppError(
      "BAD_REQUEST",
      `integration ${connection.name} has pull sync off; set settings.pull_sync to "true" to sync it`,
      { name: connection.name, field: "settings.pull_sync" },
    );
  }
}

const pullSyncOn = (connection: IntegrationConnection) => connection.settings.pull_sync !== "false";

/**
 * Syncs one integration of `tenant` now. Unknown integration: 404; not an Alertmanager or without a
 * url: 400. Otherwise the run, completed or failed (a failed fetch is a value, not an exception).
 */
async function syncIntegration({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { tenant: Tenant; integrationName: string; trigger: SyncTrigger };
}): Promise<AlertSyncRun> {
  const connection = await readIntegrationConnection(ctx.db, ctx.secrets, {
    tenant: input.tenant,
    name: input.integrationName,
  });
  if (!connection) throw notFound("integration", { name: input.integrationName });
  assertSyncable(connection);
  return runSync(ctx, connection, input.trigger);
}

function tenantKey(orgId: string | null, ownerId: string, name: string): string {
  return orgId ? `org/${orgId}/${name}` : `user/${ownerId}/${name}`;
}

/** How many integrations one instance syncs at once: a silent one holds a slot for FETCH_TIMEOUT_MS. */
const SYNC_CONCURRENCY = 20;

/**
 * The sync of one integration, as the scheduled sync queues it: a job of its own, so that one
 * integration that never answers costs its own timeout and no other integration's sync. At most one
 * per integration is queued or running (the singleton key); the next minute's pass is the retry.
 */
export const syncIntegrationJob = defineJob({
  name: "alerts.sync_integration",
  schema: Type.Object({
    orgId: Type.Union([Type.String(), Type.Null()]),
    ownerId: Type.String(),
    name: Type.String(),
  }),
  retryLimit: 0,
  // The fetch gives up after FETCH_TIMEOUT_MS; storing a long list on a busy database takes longer.
  expireInSeconds: SYNC_EXPIRE_SECONDS,
  policy: "exclusive",
  concurrency: SYNC_CONCURRENCY,
  // Woken when the scheduled pass commits: its 20 workers need not poll every 2 s between passes.
  // Each takes the next waiting job as soon as it finishes one, so a pass runs 20 syncs at a time.
  notify: true,
  notifyPollingSeconds: 30,
  handler: async ({ ctx, data }) => {
    const connection = await readIntegrationConnection(ctx.db, ctx.secrets, {
      tenant: { orgId: data.orgId, ownerId: data.ownerId },
      name: data.name,
    });
    // Deleted, or changed into something that cannot be synced, since the job was queued.
    if (!connection || connection.type !== SYNCABLE_TYPE || !connection.url || !pullSyncOn(connection))
      return;
    const run = await runSync(ctx, connection, "scheduled");
    ctx.log.info({ integration: data.name, runId: run.id, status: run.status }, "scheduled alert sync done");
  },
});

/**
 * The scheduled sync: queues the sync of every Alertmanager integration with a url, of every tenant,
 * except those synced in the last `minIntervalSeconds` or with a run still under way, and marks the
 * runs that died with their process as failed. Returns the integrations that were due; one whose
 * sync is already waiting or running in the queue is not queued twice.
 */
export async function syncDueIntegrations({
  ctx,
  input = {},
}: {
  ctx: Ctx;
  input?: { minIntervalSeconds?: number };
}): Promise<{ orgId: string | null; ownerId: string; name: string }[]> {
  const now = ctx.now();
  const interrupted = new Date(now.getTime() - INTERRUPTED_AFTER_SECONDS * 1000);
  await ctx.db
    .update(alertSyncRuns)
    .set({ status: "failed", error: "interrupted: the run never finished", finishedAt: now })
    .where(and(eq(alertSyncRuns.status, "running"), lt(alertSyncRuns.startedAt, interrupted)));

  const recentSince = new Date(
    now.getTime() - (input.minIntervalSeconds ?? MIN_SYNC_INTERVAL_SECONDS) * 1000,
  );
  const recent = await ctx.db
    .selectDistinct({
      orgId: alertSyncRuns.orgId,
      ownerId: alertSyncRuns.ownerId,
      name: alertSyncRuns.integrationName,
    })
    .from(alertSyncRuns)
    .where(or(gt(alertSyncRuns.startedAt, recentSince), eq(alertSyncRuns.status, "running")));
  const skip = new Set(recent.map((row) => tenantKey(row.orgId, row.ownerId, row.name)));

  const connections = (await listIntegrationConnections(ctx.db, ctx.secrets, { type: SYNCABLE_TYPE })).filter(
    pullSyncOn,
  );
  await resolveOrphanedPulls(ctx, connections);
  const due = connections
    .filter((connection) => !skip.has(tenantKey(connection.orgId, connection.ownerId, connection.name)))
    .map((connection) => ({ orgId: connection.orgId, ownerId: connection.ownerId, name: connection.name }));
  await ctx.enqueueMany(
    ctx.db,
    syncIntegrationJob,
    due.map((data) => ({ data, options: { singletonKey: tenantKey(data.orgId, data.ownerId, data.name) } })),
  );
  return due;
}

/**
 * Alerts a pull sync brought in whose integration no longer syncs (deleted, renamed, its url or its
 * pull sync taken away) would otherwise stay active for good: no sync lists them again, and no
 * push updates them unless a registration of the same integration name exists. They are resolved
 * as absent, so an integration that syncs them again (recreated under the name) reopens them.
 */
async function resolveOrphanedPulls(ctx: Ctx, syncing: IntegrationConnection[]): Promise<void> {
  const active = await ctx.db
    .selectDistinct({ orgId: alerts.orgId, ownerId: alerts.ownerId, name: alerts.integrationName })
    .from(alerts)
    .innerJoin(alertSyncSeen, eq(alertSyncSeen.alertId, alerts.id))
    .where(and(eq(alerts.sourceType, SYNCABLE_TYPE), sql`${alerts.status} <> 'resolved'`));
  if (active.length === 0) return;
  const registrations = await ctx.db
    .select({
      id: alertWebhooks.id,
      orgId: alertWebhooks.orgId,
      ownerId: alertWebhooks.ownerId,
      name: alertWebhooks.integration,
    })
    .from(alertWebhooks)
    .where(eq(alertWebhooks.source, SYNCABLE_TYPE));
  // A disabled registration's trigger answers 404: it keeps nothing current.
  const enabled = await enabledWebhookIds(
    ctx.db,
    registrations.map((registration) => registration.id),
  );
  const pushed = registrations.filter((registration) => enabled.has(registration.id));
  const kept = new Set(
    [...syncing, ...pushed].map((scope) => tenantKey(scope.orgId, scope.ownerId, scope.name)),
  );
  for (const orphan of active.filter(
    (scope) => !kept.has(tenantKey(scope.orgId, scope.ownerId, scope.name)),
  )) {
    const scope: AlertScope = {
      ...orphan,
      sourceType: SYNCABLE_TYPE,
      integrationName: orphan.name,
      webhookId: null,
    };
    const resolved = await ctx.db.transaction(async (tx) => {
      const at = ctx.now();
      const gone = await disappearedAlerts(tx, scope, [], at);
      await applyAlertEvents(
        tx,
        {
          scope,
          events: gone.map((alert) => resolveEvent(alert, at, `integration ${orphan.name} no longer syncs`)),
          receivedAt: at,
          via: "pull",
          rawPayload: null,
          invocationId: null,
          triage: null,
        },
        ingestOptionsOf(ctx),
      );
      return gone.length;
    });
    ctx.log.info(
      { orgId: orphan.orgId, ownerId: orphan.ownerId, integration: orphan.name, resolved },
      "resolved pulled alerts whose integration no longer syncs",
    );
  }
}

export const syncIntegrationsJob = defineJob({
  name: "alerts.sync_integrations",
  schema: Type.Object({}),
  // The next minute's run is the retry.
  retryLimit: 0,
  expireInSeconds: 60,
  handler: async ({ ctx }) => {
    const queued = await syncDueIntegrations({ ctx });
    if (queued.length > 0) ctx.log.info({ queued: queued.length }, "scheduled alert syncs queued");
  },
});

/** The integration's sync runs, newest first. Unknown integration: 404. */
export async function listAlertSyncRuns({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { integrationName: string; limit: number; offset: number };
}): Promise<AlertSyncRunPage> {
  const tenant = tenantOf(ctx.actor);
  await getIntegration({ ctx, input: { name: input.integrationName } });
  const where = and(
    inTenant(alertSyncRuns, tenant),
    eq(alertSyncRuns.integrationName, input.integrationName),
  );
  const [rows, [total]] = await Promise.all([
    ctx.db
      .select()
      .from(alertSyncRuns)
      .where(where)
      .orderBy(desc(alertSyncRuns.startedAt), desc(alertSyncRuns.id))
      .limit(input.limit)
      .offset(input.offset),
    ctx.db.select({ value: count() }).from(alertSyncRuns).where(where),
  ]);
  return { runs: rows.map(present), total: total?.value ?? 0, limit: input.limit, offset: input.offset };
}

/** The manual sync of the caller's integration `name` (syncIntegrationAlerts). */
export async function syncIntegrationAlerts({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  return syncIntegration({
    ctx,
    input: { tenant: tenantOf(ctx.actor), integrationName: input.name, trigger: "manual" },
  });
}
