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
import { correlateScope } from "../correlation/storms.ts";
import { ALERT_SELECT_LIST, rowFromRecord } from "../ingest/alert-rows.ts";
import type { AlertRow } from "../ingest/lifecycle.ts";
import { classifyAlert } from "./classify.ts";
import { refineClassification } from "./refine-classification.ts";
import type { ClassifyJobData } from "./triage.ts";

const RETRY_LIMIT = 3;
export const CLASSIFY_STEP = "sre_classify_alert_criticality";

const tenantOf = (data: Pick<ClassifyJobData, "orgId" | "ownerId">) => inTenant({ alias: "alerts" }, data);

interface BucketOf {
  orgId: string | null;
  ownerId: string;
  bucket: string;
}

async function claim(ctx: Ctx, data: BucketOf, attempt: number): Promise<AlertRow[]> {
  // A retry takes back the alerts its failed attempt left running.
  const states = attempt > 1 ? sql`('queued', 'running')` : sql`('queued')`;
  // Rows are locked in id order, as ingest locks them, so the two never deadlock.
  const { rows } = await ctx.db.execute(sql`
    update alerts set analysis_status = 'running'
    where id in (
      select id from alerts
      where ${tenantOf(data)} and triage_bucket = ${data.bucket} and analysis_status in ${states}
      order by id for update)
    returning ${sql.raw(ALERT_SELECT_LIST)}`);
  return rows.map(rowFromRecord);
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
async function correlateBucket(ctx: Ctx, data: BucketOf): Promise<void> {
  try {
    const { rows } = await ctx.db.execute(sql`
      select distinct storm_scope from alerts
      where ${tenantOf(data)} and triage_bucket = ${data.bucket} and storm_pending`);
    for (const row of rows) {
      const scope = row.storm_scope === null ? null : String(row.storm_scope);
      await correlateScope(
        ctx.db,
        { orgId: data.orgId, ownerId: data.ownerId, scope },
        { now: ctx.now(), impact: { environmentCriticality: ctx.config.environmentCriticality }, wait: true },
      );
    }
  } catch (err) {
    ctx.log.warn({ err, bucket: data.bucket }, "storm correlation before classification failed");
  }
}

async function classifyBucket(ctx: Ctx, data: BucketOf, attempt: number): Promise<void> {
  await correlateBucket(ctx, data);
  const claimed = await claim(ctx, data, attempt);
  if (claimed.length === 0) return;
  const history = await historyOf(
    ctx,
    claimed.map((row) => row.id),
  );
  const now = ctx.now();
  const criticality = environmentCriticality(ctx.config.environmentCriticality);
  for (const row of claimed) {
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
    await ctx.db.transaction(async (tx) => {
      const { rows } = await tx.execute(sql`
        update alerts set attention = ${result.attention}, attention_reason = ${result.attentionReason},
          short_summary = ${result.shortSummary}, initial_investigation = ${result.initialInvestigation},
          analysis_status = 'completed', triage_bucket = null, event_seq = event_seq + 1
        where id = ${row.id} and analysis_status = 'running' and triage_bucket = ${data.bucket}
        returning event_seq, status`);
      const [updated] = rows;
      if (!updated) return;
      await tx.execute(sql`
        insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
        values (${row.id}, ${Number(updated.event_seq)}, ${now.toISOString()}::timestamptz, 'classified', 'vigil', null,
          ${String(updated.status)}, ${String(updated.status)}, null,
          ${JSON.stringify({
            step: CLASSIFY_STEP,
            attention: result.attention,
            reason: result.attentionReason,
            ...(refined && { refined_by: refined.usage.model }),
          })}::jsonb)`);
    });
  }
}

async function markFailed(ctx: Ctx, data: BucketOf, reason: string): Promise<void> {
  await ctx.db.execute(sql`
    update alerts set analysis_status = 'failed'
    where id in (
      select id from alerts
      where ${tenantOf(data)} and triage_bucket = ${data.bucket} and analysis_status in ('queued', 'running')
      order by id for update)`);
  ctx.log.error({ bucket: data.bucket, reason }, "alert classification failed");
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
  handler: async ({ ctx, data, attempt }) => {
    for (const bucket of data.buckets) {
      const one = { orgId: data.orgId, ownerId: data.ownerId, bucket };
      try {
        await classifyBucket(ctx, one, attempt);
      } catch (err) {
        // A retry runs the whole job again; buckets already classified have nothing left to claim.
        if (attempt <= RETRY_LIMIT) throw err;
        await markFailed(ctx, one, err instanceof Error ? err.message : String(err));
      }
    }
  },
});
