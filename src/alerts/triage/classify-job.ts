// The classification job: claims the queued alerts of one bucket, classifies them together with the
// built-in classifier (classify.ts) and stores the result. Every state change is conditional, so a
// re-fire that queued an alert again meanwhile is not overwritten, and a failure after the last
// retry marks the alerts `failed` (they can be classified again on request).
import { Type } from "@sinclair/typebox";
import { sql } from "drizzle-orm";
import { inTenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import { Nullable } from "../../core/http/schemas.ts";
import { defineJob } from "../../core/queue/catalog.ts";
import { environmentCriticality, readEnvironment } from "../correlation/impact.ts";
import { correlateScopes, SCOPES_PER_ROUND } from "../correlation/storms.ts";
import { ALERT_SELECT_LIST, rowFromRecord } from "../ingest/alert-rows.ts";
import type { AlertRow } from "../ingest/lifecycle.ts";
import { classifyAlert } from "./classify.ts";
import { refineClassification } from "./refine-classification.ts";
import type { ClassifyJobData } from "./triage.ts";

const RETRY_LIMIT = 3;
const CORRELATE_WAIT_MS = 250;
export const CLASSIFY_STEP = "sre_classify_alert_criticality";

const tenantOf = (data: Pick<ClassifyJobData, "orgId" | "ownerId">) => inTenant({ alias: "alerts" }, data);

/** Some buckets of one tenant, classified together (each alert with the alerts of its own bucket). */
interface BucketsOf {
  orgId: string | null;
  ownerId: string;
  buckets: string[];
}

const bucketList = (buckets: string[]) =>
  sql`(select json_array_elements_text(${JSON.stringify(buckets)}::json))`;

async function claim(
  ctx: Ctx,
  data: BucketsOf,
  attempt: number,
): Promise<{ row: AlertRow; bucket: string }[]> {
  // A retry takes back the alerts its failed attempt left running.
  const states = attempt > 1 ? sql`('queued', 'running')` : sql`('queued')`;
  // Rows are locked in id order, as ingest locks them, so the two never deadlock.
  const { rows } = await ctx.db.execute(sql`
    update alerts set analysis_status = 'running'
    where id in (
      select id from alerts
      where ${tenantOf(data)} and triage_bucket in ${bucketList(data.buckets)} and analysis_status in ${states}
      order by id for update)
    returning ${sql.raw(ALERT_SELECT_LIST)}, triage_bucket as claimed_bucket`);
  return rows.map((record) => ({ row: rowFromRecord(record), bucket: String(record.claimed_bucket) }));
}

async function historyOf(ctx: Ctx, ids: string[]) {
  const { rows } = await ctx.db.execute(sql`
    select alert_id, kind, at from alert_events
    where alert_id in (select json_array_elements_text(${JSON.stringify(ids)}::json)::uuid) and actor = 'source'
    order by alert_id, seq`);
  const byAlert = new Map<string, { kind: string; at: Date }[]>();
  for (const row of rows) {
    const list = byAlert.get(String(row.alert_id)) ?? [];
    list.push({ kind: String(row.kind), at: row.at instanceof Date ? row.at : new Date(String(row.at)) });
    byAlert.set(String(row.alert_id), list);
  }
  return byAlert;
}

/**
 * Storm role is one of the classifier's signals: the scopes of the bucket's alerts that wait for
 * the correlator are correlated first. If that fails, the alerts are still classified (the
 * correlator loop places them later).
 */
async function correlateBuckets(ctx: Ctx, data: BucketsOf): Promise<void> {
  try {
    const { rows } = await ctx.db.execute(sql`
      select distinct storm_scope from alerts
      where ${tenantOf(data)} and triage_bucket in ${bucketList(data.buckets)} and storm_pending`);
    const scopes = rows.map((row) => (row.storm_scope === null ? null : String(row.storm_scope)));
    for (let start = 0; start < scopes.length; start += SCOPES_PER_ROUND) {
      await correlateScopes(
        ctx.db,
        { orgId: data.orgId, ownerId: data.ownerId },
        scopes.slice(start, start + SCOPES_PER_ROUND),
        {
          now: ctx.now(),
          impact: { environmentCriticality: ctx.config.environmentCriticality },
          wait: true,
          // The correlator loop may hold a storm's scope for long rounds while the storm grows: the
          // alerts are classified without waiting longer (the loop places them, and that is shown).
          waitMs: CORRELATE_WAIT_MS,
        },
      );
    }
  } catch (err) {
    ctx.log.warn({ err, buckets: data.buckets }, "storm correlation before classification failed");
  }
}

/** Claims, classifies and stores the queued alerts of the buckets, in a fixed number of round trips. */
async function classifyBuckets(ctx: Ctx, data: BucketsOf, attempt: number): Promise<void> {
  await correlateBuckets(ctx, data);
  const claimedAll = await claim(ctx, data, attempt);
  if (claimedAll.length === 0) return;
  const history = await historyOf(
    ctx,
    claimedAll.map(({ row }) => row.id),
  );
  const now = ctx.now();
  const criticality = environmentCriticality(ctx.config.environmentCriticality);
  const results: Classified[] = [];
  for (const { row, bucket: bucketKey } of claimedAll) {
    const claimed = claimedAll.filter((other) => other.bucket === bucketKey).map((other) => other.row);
    const environment = readEnvironment(row.labels, row.sourceType, criticality);
    const bucket = claimed
      .filter((other) => other.id !== row.id)
      .map((other) => ({ id: other.id, title: other.title, severity: other.severity }));
    const deterministic = classifyAlert({
      alert: row,
      environment,
      history: history.get(row.id) ?? [],
      bucket,
      now,
    });
    // With an LLM configured it may correct the label; any failure leaves the deterministic result.
    const refined = ctx.config.llm
      ? await refineClassification(
          ctx.config.llm,
          {
            alert: {
              title: row.title,
              description: row.description.slice(0, 2000),
              severity: row.severity,
              source_type: row.sourceType,
              labels: row.labels,
              environment: environment.reason,
              alert_role: row.alertRole,
              likely_upstream: row.likelyUpstream,
              refire_count: row.refireCount,
              classified_with: bucket.map((other) => other.title),
            },
            classification: deterministic,
          },
          { log: ctx.log },
        )
      : null;
    const result = refined ? { ...deterministic, ...refined } : deterministic;
    results.push({
      id: row.id,
      bucket: bucketKey,
      attention: result.attention,
      reason: result.attentionReason,
      summary: result.shortSummary,
      investigation: result.initialInvestigation,
      detail: {
        step: CLASSIFY_STEP,
        attention: result.attention,
        reason: result.attentionReason,
        ...(refined && { refined_by: refined.usage.model }),
      },
    });
    // With an LLM each alert takes seconds: each is shown as soon as it is classified.
    if (ctx.config.llm) await store(ctx, results.splice(0), now);
  }
  await store(ctx, results, now);
}

interface Classified {
  id: string;
  bucket: string;
  attention: string;
  reason: string | null;
  summary: string | null;
  investigation: string | null;
  detail: Record<string, unknown>;
}

/**
 * Stores the classifications and their history events in one statement (one round trip, however
 * many alerts). Only alerts still running in this bucket are written: a re-fire that queued one
 * again meanwhile keeps its new state. Rows are locked in id order, as ingest locks them.
 */
async function store(ctx: Ctx, classified: Classified[], now: Date): Promise<void> {
  if (classified.length === 0) return;
  await ctx.db.execute(sql`
    with input as (
      select * from json_to_recordset(${JSON.stringify(classified)}::json)
        as r(id uuid, bucket text, attention text, reason text, summary text, investigation text, detail jsonb)
    ), locked as (
      select a.id from alerts a join input i on i.id = a.id
      where a.analysis_status = 'running' and a.triage_bucket = i.bucket
      order by a.id for update of a
    ), updated as (
      update alerts a set attention = i.attention, attention_reason = i.reason, short_summary = i.summary,
        initial_investigation = i.investigation, analysis_status = 'completed', triage_bucket = null,
        event_seq = a.event_seq + 1
      from input i
      where a.id = i.id and a.id in (select id from locked)
      returning a.id, a.event_seq, a.status, i.detail
    )
    insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
    select id, event_seq, ${now.toISOString()}::timestamptz, 'classified', 'vigil', null, status, status, null, detail
    from updated`);
}

async function markFailed(ctx: Ctx, data: BucketsOf, reason: string): Promise<void> {
  await ctx.db.execute(sql`
    update alerts set analysis_status = 'failed'
    where id in (
      select id from alerts
      where ${tenantOf(data)} and triage_bucket in ${bucketList(data.buckets)} and analysis_status in ('queued', 'running')
      order by id for update)`);
  ctx.log.error({ buckets: data.buckets, reason }, "alert classification failed");
}

export const classifyAlertsJob = defineJob({
  name: "alerts.classify",
  schema: Type.Object({
    orgId: Nullable(Type.String()),
    ownerId: Type.String(),
    buckets: Type.Array(Type.String(), { minItems: 1 }),
  }),
  retryLimit: RETRY_LIMIT,
  retryDelaySeconds: 5,
  // Immediate classification is a job per delivery: woken at commit, fetched many at a time.
  notify: true,
  batchSize: 20,
  concurrency: 4,
  handler: async ({ ctx, data, attempt }) => {
    try {
      await classifyBuckets(ctx, data, attempt);
    } catch (err) {
      // A retry runs the whole job again; alerts already classified have nothing left to claim.
      if (attempt <= RETRY_LIMIT) throw err;
      await markFailed(ctx, data, err instanceof Error ? err.message : String(err));
    }
  },
  // The jobs of one fetch, first attempts only, merged per tenant: one claim, one history read and
  // one write for all their buckets instead of one each per delivery.
  handleMany: async ({ ctx, items }) => {
    const byTenant = new Map<string, BucketsOf>();
    for (const { data } of items) {
      const key = `${data.orgId}|${data.ownerId}`;
      const merged = byTenant.get(key) ?? { orgId: data.orgId, ownerId: data.ownerId, buckets: [] };
      merged.buckets.push(...data.buckets);
      byTenant.set(key, merged);
    }
    for (const data of byTenant.values()) await classifyBuckets(ctx, data, 1);
  },
});
