// A job is declared once: name (`domain.verb`), payload schema, handler and retry policy.
// Domains export their definitions; the queue registers whatever the app hands it.
import type { Static, TSchema } from "@sinclair/typebox";
import type { Ctx } from "../context.ts";
import type { Executor } from "../db/database.ts";

export interface SendOptions {
  startAfterSeconds?: number;
  singletonKey?: string;
  singletonSeconds?: number;
  /** Workers take the job of highest priority first (default 0), then the oldest. */
  priority?: number;
}

export type Enqueue = <D extends JobDefinition>(
  executor: Executor,
  job: D,
  data: D extends JobDefinition<infer S> ? Static<S> : never,
  options?: SendOptions,
) => Promise<string | null>;

/** Sends many jobs of one kind in one statement (no ids returned). */
export type EnqueueMany = <D extends JobDefinition>(
  executor: Executor,
  job: D,
  items: { data: D extends JobDefinition<infer S> ? Static<S> : never; options?: SendOptions }[],
) => Promise<void>;

export interface JobDefinition<S extends TSchema = TSchema> {
  name: string;
  schema: S;
  // Method syntax keeps a catalog of differently typed jobs assignable to JobDefinition[].
  handler(args: { ctx: Ctx; data: Static<S>; attempt: number }): Promise<void>;
  /**
   * The first attempts of one fetch (batchSize > 1) handled together, when that is cheaper than one
   * by one. If it throws, every one of them fails and is retried alone through `handler`.
   */
  handleMany?(args: { ctx: Ctx; items: { data: Static<S> }[] }): Promise<void>;
  /** Retries after the first attempt. */
  retryLimit: number;
  retryDelaySeconds: number;
  retryBackoff: boolean;
  expireInSeconds: number;
  /**
   * "exclusive": at most one job per singletonKey queued or running (a job sent while one is
   * waiting or running is dropped). Default: any number.
   */
  policy?: "exclusive";
  /** Jobs of this kind one instance runs at once (default 1): as many workers, each fetching on its own. */
  concurrency?: number;
  /**
   * Jobs fetched at once (default 1), run one after another; while fetches come back full (one job
   * is a full fetch at the default) the worker fetches again without waiting for its polling interval.
   */
  batchSize?: number;
  /**
   * A worker whose fetch came back short fetches again no sooner than this long after it (default 0:
   * as soon as it is woken). Under a flood, with a job sent per delivery and `notify` waking the
   * workers at each, the jobs sent meanwhile then wait a moment and come in one fetch, handled
   * together by `handleMany`, instead of a fetch and a round each. The first job after a quiet spell
   * is still fetched at once. Only with batchSize above 1: a fetch of one job is always full.
   */
  minFetchIntervalMs?: number;
  /**
   * Wake the workers when a job is sent (LISTEN/NOTIFY) instead of at their next poll: `true` on
   * both engines, `"postgres"` on PostgreSQL only. There the workers run beside ingest on other
   * cores; on the embedded database one thread does both, and rounds woken at every commit cost
   * more than the polled rounds they replaced (classification: 1.7 times the database time).
   */
  notify?: boolean | "postgres";
  /**
   * With `notify`, how often the workers still poll: by default as often as without it, since a job
   * sent to start later (a batch window) or retried comes due without waking anyone. A queue whose
   * jobs never wait sets a slow backstop here; never more often than the instance's own interval.
   */
  notifyPollingSeconds?: number;
}

export function defineJob<S extends TSchema>(
  definition: Omit<
    JobDefinition<S>,
    "retryLimit" | "retryDelaySeconds" | "retryBackoff" | "expireInSeconds"
  > &
    Partial<JobDefinition<S>>,
): JobDefinition<S> {
  return { retryLimit: 3, retryDelaySeconds: 5, retryBackoff: true, expireInSeconds: 15 * 60, ...definition };
}

/** A job the queue sends on a recurring cron expression (UTC), created or updated at start. */
export interface JobSchedule {
  job: JobDefinition;
  cron: string;
  data: object;
}

export function defineSchedule<S extends TSchema>(
  job: JobDefinition<S>,
  cron: string,
  data: Static<S>,
): JobSchedule {
  return { job: job as unknown as JobDefinition, cron, data: data as object };
}
