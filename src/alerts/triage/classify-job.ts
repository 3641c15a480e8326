// The classification job: claims the queued alerts of one bucket, classifies them together with the
// built-in classifier (builtin-classifier.ts) and stores the result; when the tenant assigns another
// workflow to triage, it starts that workflow per alert instead (triage-workflow.ts). Every state
// change is conditional, so a re-fire that queued an alert again meanwhile is not overwritten, and a
// failure after the last retry marks the alerts `failed` (they can be classified again on request).
import { Type } from "@sinclair/typebox";
import { type SQL, sql } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import { isEmbedded, useGenericPlans } from "../../core/db/database.ts";
import { Nullable } from "../../core/http/schemas.ts";
import { createLimit } from "../../core/limit.ts";
import { defineJob, type Enqueue } from "../../core/queue/catalog.ts";
import { type CorrelateOptions, correlateScopes, SCOPES_PER_ROUND } from "../correlation/storms.ts";
import { ALERT_SELECT_LIST, rowFromRecord } from "../ingest/alert-rows.ts";
import type { AlertRow } from "../ingest/lifecycle.ts";
import { CLASSIFY_STEP, runBuiltInClassifier } from "./builtin-classifier.ts";
import type { Classification } from "./classify.ts";
import { type Classified, storeClassifications } from "./store-classifications.ts";
import type { ClassifyJobData } from "./triage.ts";
import {
  fallbackOf,
  type TriageOutput,
  type TriageRunInput,
  type TriageWorkflowPort,
  triageWorkflowPort,
} from "./triage-workflow.ts";

const RETRY_LIMIT = 3;
const CORRELATE_WAIT_MS = 250;
/**
 * Alerts claimed, classified and stored per transaction. A batch window can gather thousands of
 * alerts in a few buckets; classified at once they held their rows' locks, and the embedded
 * database's one thread, for seconds (10,000 alerts: 3 s to claim and store, the deliveries
 * meanwhile unanswered).
 */
export const ALERTS_PER_ROUND = 500;
/**
 * With an LLM, each alert waits seconds for the model: a job classifies one round of this many, at
 * most 8 model calls at a time across the process's classification jobs (`modelCalls`), and hands
 * the rest of its buckets back to the queue. A worker is then free again within a round's few model
 * answers, for a critical alert that came meanwhile (it went behind a whole batch window, answered
 * one alert at a time: minutes), and no job runs long enough for the queue to expire it and start a
 * second attempt beside the first.
 */
export const LLM_ALERTS_PER_ROUND = 32;
/** Model calls of this process's classification at once, whichever jobs they serve. */
const modelCalls = createLimit(8);
/** Peers named with each alert: the classifier and a triage run see how many there are, and these. */
export const PEERS_LISTED = 20;

const tenantOf = (data: Pick<ClassifyJobData, "orgId" | "ownerId">) => inTenant({ alias: "alerts" }, data);

/** Some buckets of one tenant, classified together (each alert with the alerts of its own bucket). */
interface BucketsOf {
  orgId: string | null;
  ownerId: string;
  buckets: string[];
}

/**
 * The ids of the tenant's alerts waiting in these buckets (in `states`), found through the bucket
 * index alone and then kept to the tenant: the lookup names no other column an index could serve,
 * and `offset 0` keeps the tenant's condition out of it. With the tenant beside the lookup, the
 * planner chose the tenant's status index whenever its statistics lagged behind a burst of ingest
 * (every queued alert of the tenant read for each claim, 15 ms at 10,000 queued).
 */
const bucketIds = (data: BucketsOf, states = sql`('queued', 'running')`) =>
  sql`array(select id from (select id, org_id, owner_id, analysis_status from alerts
    where triage_bucket = any(${boundArray(data.buckets, "text")}) and analysis_status in ('queued', 'running')
    offset 0) alerts where ${tenantOf(data)} and analysis_status in ${states})`;

/**
 * Whether an alert still waits in the buckets (in `states`), read on the row a statement locked.
 * The ids of `bucketIds` were read before the lock: a job of the same bucket (a retry beside its
 * first attempt) may have classified the alert while this statement waited for its row, and
 * PostgreSQL then re-checks only the locking scan's own conditions on the row's new version, not
 * the array's. Projected beside the lock, not put in its WHERE: as a condition there, on a table
 * without statistics, the planner read the tenant's status index or the whole bucket index instead
 * of the primary key (and, in the UPDATE's WHERE, ran the locking subquery again per alert).
 */
const stillWaiting = (data: BucketsOf, states: SQL) =>
  sql`(analysis_status in ${states} and triage_bucket = any(${boundArray(data.buckets, "text")})
    and ${tenantOf(data)})`;

/** The other alerts of an alert's bucket in its round: how many, and the first PEERS_LISTED. */
interface Peers {
  size: number;
  listed: { id: string; title: string; severity: AlertRow["severity"] }[];
}

type Claimed = { row: AlertRow; bucket: string; peers: Peers };

/** A round of a job: its attempt, and the last alert id the job's earlier rounds locked. */
type Round = { attempt: number; after: string | null; limit: number };

/**
 * How far a round went: the alerts it locked, taken or not (one classified or queued again
 * elsewhere while it waited is passed over), and the last of them, where the next round starts.
 */
type Reach = { locked: number; last: string | null };

/** Each alert's peers, in one pass over the round (listing every peer with every alert grew as n²). */
function withPeers(rows: { row: AlertRow; bucket: string }[]): Claimed[] {
  const byBucket = new Map<string, AlertRow[]>();
  for (const { row, bucket } of rows) {
    const members = byBucket.get(bucket) ?? [];
    members.push(row);
    byBucket.set(bucket, members);
  }
  return rows.map(({ row, bucket }) => {
    const members = byBucket.get(bucket) ?? [];
    const listed = members
      .slice(0, PEERS_LISTED + 1)
      .filter((other) => other.id !== row.id)
      .slice(0, PEERS_LISTED)
      .map((other) => ({ id: other.id, title: other.title, severity: other.severity }));
    return { row, bucket, peers: { size: members.length - 1, listed } };
  });
}

/**
 * Locks the next ALERTS_PER_ROUND queued alerts of the buckets (ids past `after`) and takes those
 * still waiting once locked. `mark`: they become `running` (committed, so others see the work is
 * taken while it runs long); otherwise they are only locked in the transaction of `ctx.db`, which
 * stores their classification before it ends.
 */
async function claim(
  ctx: Ctx,
  data: BucketsOf,
  round: Round & { mark: boolean },
): Promise<Reach & { claimed: Claimed[] }> {
  // A retry takes back the alerts its failed attempt left running.
  const states = round.attempt > 1 ? sql`('queued', 'running')` : sql`('queued')`;
  // Rows are locked in id order, as ingest locks them, so the two never deadlock. Rounds go on in
  // id order: an alert a round left running (a triage run's) is not claimed again by the next.
  const past = round.after === null ? sql`` : sql`and id > ${round.after}`;
  const locking = (columns: SQL) => sql`select ${columns}, ${stillWaiting(data, states)} as taken
    from alerts where id = any(${bucketIds(data, states)}) ${past} order by id limit ${round.limit} for update`;
  // One row per locked alert, in id order, with the alert's columns as taken (the locked version).
  const { rows } = round.mark
    ? await ctx.db.execute(sql`
        with locked as (${locking(sql`id as locked_id`)}), marked as (
          update alerts set analysis_status = 'running' from locked where id = locked_id and taken
          returning ${sql.raw(ALERT_SELECT_LIST)}, triage_bucket as claimed_bucket
        )
        select locked_id, taken, marked.* from locked left join marked on marked.id = locked_id
        order by locked_id`)
    : await ctx.db.execute(
        locking(sql`id as locked_id, ${sql.raw(ALERT_SELECT_LIST)}, triage_bucket as claimed_bucket`),
      );
  const taken = rows.filter((record) => record.taken === true);
  return {
    locked: rows.length,
    last: rows.length === 0 ? null : String(rows[rows.length - 1]?.locked_id),
    claimed: withPeers(
      taken.map((record) => ({ row: rowFromRecord(record), bucket: String(record.claimed_bucket) })),
    ),
  };
}

/**
 * Storm role is one of the classifier's signals: the scopes of the bucket's alerts that wait for
 * the correlator are correlated first. If that fails, the alerts are still classified (the
 * correlator loop places them later).
 */
async function correlateBuckets(ctx: Ctx, data: BucketsOf): Promise<void> {
  try {
    const { rows } = await ctx.db.execute(sql`
      select distinct storm_scope from alert_storm_queue q
      where ${inTenant({ alias: "q" }, data)} and q.alert_id = any(${bucketIds(data)})`);
    const scopes = rows.map((row) => (row.storm_scope === "" ? null : String(row.storm_scope)));
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
          reclassify: reclassifyAfterRoleChange(ctx.enqueue),
        },
      );
    }
  } catch (err) {
    ctx.log.warn({ err, buckets: data.buckets }, "storm correlation before classification failed");
  }
}

/**
 * Claims, classifies and stores the queued alerts of the buckets, ALERTS_PER_ROUND at a time, each
 * round in a fixed number of round trips.
 */
async function classifyBuckets(ctx: Ctx, data: BucketsOf, attempt: number): Promise<void> {
  await correlateBuckets(ctx, data);
  const tenant = { orgId: data.orgId, ownerId: data.ownerId };
  const port = triageWorkflowPort();
  const workflow = port ? await port.choose(ctx.db, tenant) : null;
  const byModel = ctx.config.llm !== null && !(port && workflow);
  const limit = byModel ? LLM_ALERTS_PER_ROUND : ALERTS_PER_ROUND;
  let after: string | null = null;
  for (;;) {
    const round: Round = { attempt, after, limit };
    const reach: Reach = await paced(ctx, () =>
      port && workflow ? startTriageRuns(ctx, data, round, port, workflow) : classifyRound(ctx, data, round),
    );
    if (reach.locked < limit) return;
    // Behind whatever waits in the queue now, critical alerts first (triage.ts).
    if (byModel) {
      await ctx.enqueue(ctx.db, classifyAlertsJob, data);
      return;
    }
    after = reach.last;
  }
}

const MAX_PAUSE_MS = 1000;
/** Per embedded database: when its last classification round's pause ends. */
const embeddedTurns = new WeakMap<object, Promise<void>>();

/**
 * Runs a round. On the embedded database, one thread runs every statement, the deliveries' too, and
 * a delivery's few statements each waited for a whole round when rounds followed one another: under
 * a flood, with a batch window's backlog to classify, deliveries were answered at 50 to 75 alerts/s
 * for 20 s at a time. There, rounds run one at a time, and each is followed by a pause as long as it
 * took (at most MAX_PAUSE_MS), so a backlog takes at most half of the thread; on PostgreSQL they run
 * as they come. Rounds with an LLM are left alone: they spend their time waiting for its answers.
 */
async function paced<T>(ctx: Ctx, round: () => Promise<T>): Promise<T> {
  if (ctx.config.llm || !isEmbedded(ctx.db)) return round();
  const previous = embeddedTurns.get(ctx.db) ?? Promise.resolve();
  let release = () => {};
  embeddedTurns.set(
    ctx.db,
    new Promise((resolve) => {
      release = resolve;
    }),
  );
  await previous;
  const started = performance.now();
  try {
    return await round();
  } finally {
    setTimeout(release, Math.min(MAX_PAUSE_MS, performance.now() - started)).unref();
  }
}

/** One round of the built-in classifier. */
async function classifyRound(ctx: Ctx, data: BucketsOf, round: Round): Promise<Reach> {
  // With an LLM each alert takes seconds: the alerts are marked running and each is shown as soon
  // as it is classified.
  if (ctx.config.llm) {
    const { claimed, ...reach } = await claim(ctx, data, { ...round, mark: true });
    // Every call ends before the round does, a failed one too: a retry must not find them running.
    const settled = await Promise.allSettled(
      claimed.map((alert) =>
        modelCalls(async () => {
          await storeClassifications(ctx.db, [await classifyBuiltIn(ctx, alert)], ctx.now());
        }),
      ),
    );
    const failure = settled.find((result) => result.status === "rejected");
    if (failure) throw failure.reason;
    return reach;
  }
  // The built-in classifier alone takes microseconds: the alerts are locked, classified and stored
  // in one transaction, queued to completed with no `running` in between. Every change of an alert
  // writes a new version of its row and of each of its index entries, so the mark would cost about
  // as much as the classification's own write.
  return ctx.db.transaction(async (tx) => {
    await useGenericPlans(tx);
    const txCtx = { ...ctx, db: tx };
    const { claimed, ...reach } = await claim(txCtx, data, { ...round, mark: false });
    const results: Classified[] = [];
    for (const alert of claimed) results.push(await classifyBuiltIn(txCtx, alert));
    await storeClassifications(tx, results, ctx.now(), { locked: true });
    return reach;
  });
}

async function classifyBuiltIn(ctx: Ctx, alert: Claimed): Promise<Classified> {
  const { row, peers } = alert;
  const result = await runBuiltInClassifier(ctx, {
    row,
    bucket: peers.listed,
    bucketSize: peers.size,
    now: ctx.now(),
    refine: true,
  });
  return {
    id: row.id,
    bucket: alert.bucket,
    attention: result.attention,
    reason: result.attentionReason,
    summary: result.shortSummary,
    investigation: result.initialInvestigation,
    detail: {
      step: CLASSIFY_STEP,
      attention: result.attention,
      reason: result.attentionReason,
      ...(result.refinedBy && { refined_by: result.refinedBy }),
    },
  };
}

/**
 * The tenant's triage workflow classifies: one run per claimed alert, each ending in its
 * classification.
 */
async function startTriageRuns(
  ctx: Ctx,
  data: BucketsOf,
  round: Round,
  port: TriageWorkflowPort,
  workflow: string,
): Promise<Reach> {
  const { claimed, ...reach } = await claim(ctx, data, { ...round, mark: true });
  if (claimed.length === 0) return reach;
  const tenant = { orgId: data.orgId, ownerId: data.ownerId };
  const now = ctx.now();
  const results: Classified[] = [];
  for (const alert of claimed) {
    const fallback = await startTriageRun(ctx, port, {
      tenant,
      workflow,
      row: alert.row,
      bucketKey: alert.bucket,
      peers: alert.peers,
      now,
    });
    if (fallback) results.push(fallback);
  }
  await storeClassifications(ctx.db, results, now);
  return reach;
}

const asOutput = (result: Classification): TriageOutput => ({
  attention: result.attention,
  reason: result.attentionReason,
  short_summary: result.shortSummary,
  initial_investigation: result.initialInvestigation,
});

/**
 * Starts the tenant's triage workflow for one claimed alert; the run's end classifies it. Answers
 * the built-in result to store at once when the run cannot start.
 */
async function startTriageRun(
  ctx: Ctx,
  port: TriageWorkflowPort,
  input: {
    tenant: Tenant;
    workflow: string;
    row: AlertRow;
    bucketKey: string;
    peers: Peers;
    now: Date;
  },
): Promise<Classified | null> {
  const { row } = input;
  const builtIn = asOutput(
    await runBuiltInClassifier(ctx, {
      row,
      bucket: input.peers.listed,
      bucketSize: input.peers.size,
      now: input.now,
      refine: false,
    }),
  );
  const runInput: TriageRunInput = {
    alert_id: row.id,
    alert: {
      id: row.id,
      title: row.title,
      description: row.description.slice(0, 2000),
      source_type: row.sourceType,
      source_severity: row.sourceSeverity,
      signal_severity: row.severity,
      labels: row.labels,
      alert_role: row.alertRole,
      likely_upstream: row.likelyUpstream,
      storm_id: row.stormId,
      refire_count: row.refireCount,
      impact_score: row.impactScore,
    },
    bucket: input.peers.listed,
    bucket_size: input.peers.size,
    classification: builtIn,
  };
  try {
    await port.start(ctx, input.tenant, {
      workflow: input.workflow,
      bucket: input.bucketKey,
      input: runInput,
    });
    return null;
  } catch (err) {
    const why = `the run could not start: ${err instanceof Error ? err.message : String(err)}`;
    ctx.log.warn({ alertId: row.id, workflow: input.workflow, why }, "triage workflow did not start");
    return fallbackOf(
      { alertId: row.id, bucket: input.bucketKey, workflow: input.workflow, traceId: null },
      builtIn,
      why,
    );
  }
}

async function markFailed(ctx: Ctx, data: BucketsOf, reason: string): Promise<void> {
  // As in claim(): an alert classified, or queued in another bucket, while this waited for its row
  // keeps its state.
  const states = sql`('queued', 'running')`;
  await ctx.db.execute(sql`
    with locked as (
      select id as locked_id, ${stillWaiting(data, states)} as failing
      from alerts where id = any(${bucketIds(data, states)}) order by id for update
    )
    update alerts set analysis_status = 'failed' from locked where id = locked_id and failing`);
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
  // Immediate classification is a job per delivery: woken at commit on PostgreSQL, fetched many at a
  // time; the embedded database polls it, to classify in fewer, larger rounds.
  notify: "postgres",
  // Under a flood, a worker woken at every commit fetched one job a round, and every round paid its
  // correlation, claim and write for a few alerts: spaced 200 ms apart, a round merges what came
  // meanwhile (all roles in one process, one-alert deliveries: 1,565 to 1,907 alerts/s in six runs
  // against 1,099 to 1,194 in three, PostgreSQL's CPU per alert about halved; bench/README.md). A
  // critical alert is classified at once when the queue is quiet, within 200 ms more under a flood.
  // A batch window's job comes due without a wake-up: the workers' next poll finds it, within 2 s
  // of its window's end (notifyPollingSeconds' default).
  minFetchIntervalMs: 200,
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
/**
 * For the storm correlator: classifies again, each alone, the classified alerts whose storm role a
 * round changed (CorrelateOptions.reclassify), as classify-again does.
 */
export function reclassifyAfterRoleChange(enqueue: Enqueue): NonNullable<CorrelateOptions["reclassify"]> {
  return async (tx, tenant, ids) => {
    await enqueue(tx, classifyAlertsJob, {
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      buckets: ids.map((id) => `alert:${id}`),
    });
  };
}
