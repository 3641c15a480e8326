// The automation jobs. `automation.run_stage` runs one stage of a run (see engine.ts);
// `automation.watch_execution` is each run's watchdog: sent with the run, it sweeps that run every
// WATCH_INTERVAL_SECONDS and re-arms itself while the run is still running, so a run whose stage
// job expired or failed without the engine seeing it is closed, and nothing stays running forever.
import { Type } from "@sinclair/typebox";
import { eq } from "drizzle-orm";
import { defineJob } from "../../core/queue/catalog.ts";
import { executions } from "../tables.ts";
import { runStage } from "./engine.ts";
import { RUN_STAGE_JOB, sweepExecutions } from "./sweeper.ts";

export const WATCH_INTERVAL_SECONDS = 60;
/**
 * Stages one process runs at once. A stage mostly waits (for a model, Prometheus, an HTTP call), so
 * one at a time let a single slow model answer hold every webhook run, Ask and investigation behind
 * it; a stage holds no transaction while it waits, so they overlap on either engine.
 */
export const RUN_STAGE_CONCURRENCY = 8;

const RunStagePayload = Type.Object({
  traceId: Type.String(),
  stageId: Type.String(),
});

export interface RunStagePolicy {
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
}

/** The stage job; tests build one with a faster retry policy under the same name. */
export function createRunStageJob(policy: RunStagePolicy = {}) {
  const retryLimit = policy.retryLimit ?? 3;
  return defineJob({
    name: RUN_STAGE_JOB,
    schema: RunStagePayload,
    retryLimit,
    retryDelaySeconds: policy.retryDelaySeconds ?? 5,
    retryBackoff: policy.retryBackoff ?? true,
    expireInSeconds: policy.expireInSeconds ?? 15 * 60,
    // A run's first stage starts when the run is sent, not at the worker's next poll (on average
    // 1.2 s later with the 2 s interval, on both engines).
    notify: true,
    concurrency: RUN_STAGE_CONCURRENCY,
    handler: async ({ ctx, data, attempt }) => {
      await runStage({
        ctx,
        enqueueStage: (tx, payload, options) => ctx.enqueue(tx, runStageJob, payload, options),
        data,
        attempt,
        lastAttempt: attempt > retryLimit,
      });
    },
  });
}

export const runStageJob = createRunStageJob();

export const watchExecutionJob = defineJob({
  name: "automation.watch_execution",
  schema: Type.Object({ traceId: Type.String() }),
  retryLimit: 10,
  retryDelaySeconds: 30,
  handler: async ({ ctx, data }) => {
    await sweepExecutions({ db: ctx.db, now: ctx.now, traceId: data.traceId });
    const [row] = await ctx.db
      .select({ status: executions.status })
      .from(executions)
      .where(eq(executions.traceId, data.traceId));
    if (row?.status !== "running") return;
    await ctx.enqueue(ctx.db, watchExecutionJob, data, { startAfterSeconds: WATCH_INTERVAL_SECONDS });
  },
});

export const AUTOMATION_EXECUTION_JOBS = [runStageJob, watchExecutionJob];
