// pg-boss on the same database as everything else. Enqueue takes the caller's executor, so a job
// sent inside a transaction exists if and only if that transaction commits.
import { createHash } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { Value } from "@sinclair/typebox/value";
import { type SQL, sql } from "drizzle-orm";
import { type ConstructorOptions, fromDrizzle, type JobResult, type JobWithMetadata, PgBoss } from "pg-boss";
import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { Ctx } from "../context.ts";
import { type Database, defersWrites, deferWrite, type Executor, executeNamed } from "../db/database.ts";
import { outageLog } from "../db/outage-log.ts";
import type { Metrics } from "../http/metrics.ts";
import type { Secrets } from "../secrets.ts";
import type { Enqueue, EnqueueMany, JobDefinition, JobSchedule } from "./catalog.ts";

export interface Queue {
  enqueue: Enqueue;
  enqueueMany: EnqueueMany;
  /** Starts polling for the registered jobs (not done on api-only instances). */
  work(): Promise<void>;
  /** Lets running jobs finish for up to `timeoutMs` (default SHUTDOWN_TIMEOUT_MS), then stops. */
  stop(timeoutMs?: number): Promise<void>;
  boss: PgBoss;
}

export interface QueueOptions {
  database: Database;
  config: Config;
  log: Logger;
  jobs: JobDefinition[];
  /** Recurring jobs; each must be one of `jobs`. */
  schedules?: JobSchedule[];
  secrets: Secrets;
  pollingIntervalSeconds?: number;
  now?: () => Date;
  /** Where the jobs' counts and backlog are reported (core/http/metrics.ts). */
  metrics?: Metrics;
}

export async function startQueue(options: QueueOptions): Promise<Queue> {
  const { database, config, log, jobs } = options;
  // A queue with `notify` wakes its workers when a job commits: on PostgreSQL through one listening
  // connection, on PGlite within the process. A queue whose jobs never wait may then poll only as a
  // slow backstop (notifyPollingSeconds): the 20 sync workers polling every 2 s cost an idle
  // embedded Vigil 9.7% of a core, against 6.7% with a 30 s backstop (JobDefinition.notify).
  const boss = createBoss(database, {}, true);
  // pg-boss reports no round that went through, so an outage is only said again each minute.
  const outage = outageLog(log, "job queue");
  boss.on("error", (err) => {
    if (!outage.unavailable(err)) log.error({ err }, "job queue error");
  });
  await boss.start();
  const byName = new Map(jobs.map((job) => [job.name, job]));
  await createQueues(boss, jobs, database.engine);
  await applySchedules(boss, byName, options.schedules ?? []);
  const enqueue: Enqueue = async (executor, job, data, sendOptions = {}) => {
    if (!byName.has(job.name)) throw new Error(`job ${job.name} is not in the catalog`);
    if (!Value.Check(job.schema, data)) throw new Error(`job ${job.name}: payload does not match its schema`);
    return boss.send(job.name, data as object, {
      db: fromDrizzle(executor, sql),
      startAfter: sendOptions.startAfterSeconds,
      singletonKey: sendOptions.singletonKey,
      singletonSeconds: sendOptions.singletonSeconds,
      // pg-boss refuses a priority key without an integer.
      ...(sendOptions.priority !== undefined && { priority: sendOptions.priority }),
    });
  };
  const enqueueMany: EnqueueMany = async (executor, job, items) => {
    if (items.length === 0) return;
    if (!byName.has(job.name)) throw new Error(`job ${job.name} is not in the catalog`);
    for (const { data } of items) {
      if (!Value.Check(job.schema, data))
        throw new Error(`job ${job.name}: payload does not match its schema`);
    }
    // insert() takes the queue's retry settings like send(); startAfter in seconds, as in send().
    await boss.insert(
      job.name,
      items.map(({ data, options = {} }) => ({
        data: data as object,
        startAfter: options.startAfterSeconds,
        singletonKey: options.singletonKey,
        singletonSeconds: options.singletonSeconds,
        ...(options.priority !== undefined && { priority: options.priority }),
      })),
      { db: insertOnly(executor) },
    );
  };
  const settled = options.metrics?.counter(
    "vigil_jobs_total",
    "Job runs by job and outcome: completed, or failed (retried until the job's retry limit)",
    ["job", "outcome"],
  );
  options.metrics?.gauge(
    "vigil_jobs",
    "Jobs not yet done, by job and state: created (waiting, or deferred to its start time), retry (to run again after a failure), active (running)",
    ["job", "state"],
    async () => {
      const { rows } = await database.db.execute(sql`
        select name, state::text as state, count(*)::int as n from pgboss.job
        where state in ('created', 'retry', 'active') group by name, state`);
      return rows.map((row) => ({
        labels: { job: String(row.name), state: String(row.state) },
        value: Number(row.n),
      }));
    },
  );
  const ctx: Ctx = {
    db: database.db,
    log,
    config,
    secrets: options.secrets,
    now: options.now ?? (() => new Date()),
    enqueue,
    enqueueMany,
  };

  return {
    boss,
    enqueue,
    enqueueMany,
    async work() {
      const polling = options.pollingIntervalSeconds ?? 2;
      for (const job of jobs) {
        const batchSize = job.batchSize ?? 1;
        const handle = batchHandler(job, ctx, log);
        // One registration per worker, so each knows its own id. A fetch that came back full means
        // more may be waiting: that worker fetches again at once instead of after its interval (one
        // job per interval cannot keep up with a job per delivery, and on a queue with a slow
        // backstop a worker would otherwise sit idle behind a backlog until the next job is sent). A fetch that came back short is spaced from the next by the job's
        // minFetchIntervalMs, held here, before its results go back to pg-boss.
        for (let i = 0; i < (job.concurrency ?? 1); i++) {
          let workerId = "";
          workerId = await boss.work(
            job.name,
            {
              pollingIntervalSeconds: polling,
              // Read by pg-boss only while the queue's notifications are on.
              notifyPollingIntervalSeconds: Math.max(job.notifyPollingSeconds ?? polling, polling),
              batchSize,
              includeMetadata: true,
              perJobResults: true,
            },
            async (items) => {
              const fetchedAt = performance.now();
              try {
                const results = await handle(items);
                for (const { status } of results) settled?.inc({ job: job.name, outcome: status });
                return results;
              } finally {
                if (items.length >= batchSize && workerId) boss.notifyWorker(workerId);
                else {
                  const wait = (job.minFetchIntervalMs ?? 0) - (performance.now() - fetchedAt);
                  if (wait > 0) await delay(wait);
                }
              }
            },
          );
        }
      }
    },
    async stop(timeoutMs = config.shutdownTimeoutMs) {
      await boss.stop({ graceful: true, timeout: Math.max(100, timeoutMs), close: true });
    },
  };
}

/**
 * Runs the jobs of one fetch: the first attempts together through `handleMany` when the job has it
 * and there are several, the others one after another through `handler`, each settling on its own.
 */
function batchHandler(job: JobDefinition, ctx: Ctx, log: Logger) {
  const failed = (id: string, err: unknown): JobResult => {
    const error = err instanceof Error ? err : new Error(String(err));
    return {
      id,
      status: "failed",
      output: { name: error.name, message: error.message, stack: error.stack },
    };
  };
  return async (items: JobWithMetadata<unknown>[]): Promise<JobResult[]> => {
    const results: JobResult[] = [];
    const valid = items.filter((item) => {
      if (Value.Check(job.schema, item.data)) return true;
      log.error({ job: job.name, id: item.id }, "job payload does not match its schema");
      results.push({ id: item.id, status: "completed" });
      return false;
    });
    const first = job.handleMany ? valid.filter((item) => item.retryCount === 0) : [];
    if (first.length > 1 && job.handleMany) {
      try {
        await job.handleMany({ ctx, items: first.map((item) => ({ data: item.data })) });
        for (const item of first) results.push({ id: item.id, status: "completed" });
      } catch (err) {
        for (const item of first) results.push(failed(item.id, err));
      }
    }
    const alone = first.length > 1 ? valid.filter((item) => item.retryCount > 0) : valid;
    // One after another: each job settles on its own (a failure retries that job alone).
    for (const item of alone) {
      try {
        await job.handler({ ctx, data: item.data, attempt: item.retryCount + 1 });
        results.push({ id: item.id, status: "completed" });
      } catch (err) {
        results.push(failed(item.id, err));
      }
    }
    return results;
  };
}

function createBoss(database: Database, extra: Partial<ConstructorOptions> = {}, listen = false): PgBoss {
  return database.jobConnectionString
    ? new PgBoss({
        connectionString: database.jobConnectionString,
        schema: "pgboss",
        max: 5,
        useListenNotify: listen,
        ...extra,
      })
    : new PgBoss({
        db: database.jobStore,
        backend: "pglite",
        schema: "pgboss",
        useListenNotify: listen,
        ...extra,
      });
}

const JOB_HEARTBEAT_SECONDS = 30;

/** Upserts a queue per job: creating one creates its tables, so it costs DDL the first time only. */
async function createQueues(boss: PgBoss, jobs: JobDefinition[], engine: Database["engine"]): Promise<void> {
  for (const job of jobs) {
    const settings = {
      retryLimit: job.retryLimit,
      retryDelay: job.retryDelaySeconds,
      retryBackoff: job.retryBackoff,
      expireInSeconds: job.expireInSeconds,
      // A running job's worker confirms it every JOB_HEARTBEAT_SECONDS / 2: the job of a process that
      // died (kill -9, a lost machine) is retried about a minute later, instead of at its expiry
      // (15 minutes for most jobs), which left its alerts `running` and its run unfinished.
      heartbeatSeconds: JOB_HEARTBEAT_SECONDS,
      notify: job.notify === true || (job.notify === "postgres" && engine === "postgres"),
    };
    await boss.createQueue(job.name, { ...settings, ...(job.policy ? { policy: job.policy } : {}) });
    // createQueue leaves an existing queue as it was (one made by an earlier release, or the
    // embedded database's template): the job's current settings are applied to it here.
    await boss.updateQueue(job.name, settings);
  }
}

/**
 * Creates or upgrades the job queue's tables (pg-boss's schema, its own scheduling queue, and a
 * queue per job) and stops: `vigil migrate` runs it, so a server starting on a migrated database
 * finds them made.
 */
export async function installJobSchema(database: Database, jobs: JobDefinition[]): Promise<void> {
  // Scheduling on: pg-boss creates the queue its scheduler sends through when that starts.
  const boss = createBoss(database, { supervise: false });
  let failure: unknown = null;
  boss.on("error", (err) => {
    failure ??= err;
  });
  await boss.start();
  try {
    await createQueues(boss, jobs, database.engine);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
  if (failure) throw failure;
}

/**
 * pg-boss's statements on the caller's executor, for insert(): it reads no rows back (no returnId),
 * so inside a pipelined transaction the insert is sent and its answer awaited at COMMIT. It runs
 * under a name made from its text (one text per queue), so the database plans the insert once per
 * connection instead of for every group of deliveries.
 */
function insertOnly(executor: Executor) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const name = statementName(text);
      const named = fromDrizzle({ execute: (query: SQL) => executeNamed(executor, name, query) }, sql);
      if (!defersWrites(executor)) return named.executeSql(text, values);
      await deferWrite(executor, () => named.executeSql(text, values));
      return { rows: [] };
    },
  };
}

const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `pgboss.insert.${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

// pg-boss keeps schedules in its own table, and every instance's cron monitor sends their jobs (one
// per occurrence across instances). Schedules are upserted at start, and one no longer in the list
// is removed, so the table always matches the code that runs.
async function applySchedules(
  boss: PgBoss,
  jobs: Map<string, JobDefinition>,
  schedules: JobSchedule[],
): Promise<void> {
  for (const schedule of schedules) {
    if (!jobs.has(schedule.job.name))
      throw new Error(`scheduled job ${schedule.job.name} is not in the catalog`);
    await boss.schedule(schedule.job.name, schedule.cron, schedule.data, { tz: "UTC" });
  }
  const wanted = new Set(schedules.map((schedule) => schedule.job.name));
  for (const existing of await boss.getSchedules()) {
    if (!wanted.has(existing.name)) await boss.unschedule(existing.name, existing.key);
  }
}
