// Runs one stage of a run: the handler of `automation.run_stage`. A stage's job is sent when every
// stage it depends on succeeded; it claims the stage node for its attempt, runs the stage's action
// or agents (parallel_agents all at once, joined before the stage completes) and, in the
// transaction that completes the stage, sends the stages that became ready. A stage's failure skips
// the stages not started; the run ends when the stages under way have finished (failRunWhenDrained).
//
// Idempotency, keyed by (execution, stage, attempt): the claim is a conditional update
// (`pending`, or `running` with an older attempt), so a duplicate delivery of an attempt does nothing;
// a step already `success` from an earlier attempt is reused, so a retry reruns only what failed.
// Cancellation is checked before every step; completions are conditional, so a stopped run stays
// stopped.
import { randomUUID } from "node:crypto";
import { and, eq, lt, sql } from "drizzle-orm";
import { inTenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import { type Db, withTransaction } from "../../core/db/database.ts";
import { isDatabaseUnavailable, isRetryableConflict, sqlStateOf } from "../../core/db/pg-errors.ts";
import { costOf, type Usage } from "../../llm/index.ts";
import { storableText, storableValue } from "../../webhooks/index.ts";
import { runAgent } from "../agents/agent-runners.ts";
import { ACTION_TYPES, type ActionType, type Stage, type StructuredOutput } from "../schemas.ts";
import { type ArtifactDraft, storeArtifact } from "../sessions/artifacts.ts";
import { agents, executionNodes, executions } from "../tables.ts";
import { type ActionEnv, runAction, StepError } from "./actions.ts";
import {
  type EnqueueStage,
  type ExecutionRow,
  enqueueReadyStages,
  failRunWhenDrained,
  lockRunningExecution,
  RunStoppedError,
  settleAfterStage,
  stageKey,
} from "./execution-state.ts";
import { registeredAction } from "./extensions.ts";

interface StepResult {
  output: unknown;
  artifacts?: ArtifactDraft[];
  structuredOutput?: StructuredOutput | null;
  usage?: Usage | null;
}

interface NodeSpec {
  key: string;
  parentKey: string;
  stageId: string;
  stagePosition: number;
  depth: number;
  position: number;
  type: "agent" | "action" | "tool";
  label: string;
}

export type StageOutcome = "completed" | "failed" | "retrying" | "duplicate" | "stopped";

export async function runStage({
  ctx,
  enqueueStage,
  data,
  attempt,
  lastAttempt,
}: {
  ctx: Ctx;
  enqueueStage: EnqueueStage;
  data: { traceId: string; stageId: string };
  attempt: number;
  lastAttempt: boolean;
}): Promise<StageOutcome> {
  const key = stageKey(data.stageId);
  const now = ctx.now();
  // The claim: a duplicate delivery of this attempt, or one for a stopped run, finds nothing.
  const [claimed] = await ctx.db
    .update(executionNodes)
    .set({ status: "running", attempt, startedAt: sql`coalesce(${executionNodes.startedAt}, ${now})` })
    .where(
      and(
        eq(executionNodes.traceId, data.traceId),
        eq(executionNodes.key, key),
        sql`(${executionNodes.status} = 'pending' or (${executionNodes.status} = 'running' and ${executionNodes.attempt} < ${attempt}))`,
        sql`exists (select 1 from ${executions} where ${executions.traceId} = ${data.traceId} and ${executions.status} = 'running')`,
      ),
    )
    .returning({ id: executionNodes.id });
  if (!claimed) return "duplicate";
  const [execution] = await ctx.db.select().from(executions).where(eq(executions.traceId, data.traceId));
  if (!execution) return "stopped";
  const stage = execution.stages.find((candidate) => candidate.id === data.stageId);
  try {
    if (!stage) throw new StepError(`stage ${data.stageId} is not in the pinned plan`, false);
    const output = await executeStage(ctx, execution, stage, attempt);
    await finishStage(ctx, enqueueStage, execution, data.stageId, attempt, output);
    return "completed";
  } catch (err) {
    if (err instanceof RunStoppedError) return "stopped";
    const failure = err instanceof StepError ? err : unexpectedFailure(err);
    if (failure.retryable && !lastAttempt) {
      await ctx.db
        .update(executionNodes)
        .set({ error: storableText(`attempt ${attempt}: ${failure.message}`) })
        .where(
          and(
            eq(executionNodes.id, claimed.id),
            eq(executionNodes.status, "running"),
            eq(executionNodes.attempt, attempt),
          ),
        );
      throw failure;
    }
    await failStage(ctx, data.traceId, data.stageId, attempt, storableText(failure.message));
    return "failed";
  }
}

/**
 * A stage's error that no step classified. One from Vigil's own database is told by the database's
 * message alone (drizzle's quotes the query and every parameter: a step's whole output), and is
 * tried again only when the database may take the write later (unavailable, a conflict): running
 * the stage again repeats its calls (an HTTP POST, a paid model call) for nothing otherwise.
 */
export function unexpectedFailure(err: unknown): StepError {
  const state = sqlStateOf(err);
  const unavailable = isDatabaseUnavailable(err);
  if (state === undefined && !unavailable) return new StepError((err as Error).message ?? String(err), true);
  const transient = unavailable || isRetryableConflict(err) || state === "40001";
  // The driver's own error (the server's message, or a lost connection's) is the innermost cause.
  let reason = (err as Error).message;
  for (let cause = (err as Error).cause; cause instanceof Error; cause = cause.cause) reason = cause.message;
  return new StepError(`the step's result could not be recorded: ${reason}`, transient);
}

async function executeStage(ctx: Ctx, execution: ExecutionRow, stage: Stage, attempt: number) {
  const context = await runContext(ctx.db, execution);
  const key = stageKey(stage.id);
  const stageConfig = stage.config ?? {};
  if (stage.action_type) {
    const type = stage.action_type;
    const registered = registeredAction(type);
    return runStep(
      ctx,
      execution,
      {
        key: `${key}/action:${type}`,
        parentKey: key,
        stageId: stage.id,
        stagePosition: stagePositionOf(execution, stage),
        depth: 1,
        position: 0,
        type: "action",
        label: type,
      },
      attempt,
      (signal) =>
        registered
          ? registered({
              ctx,
              run: {
                traceId: execution.traceId,
                sessionId: execution.sessionId,
                tenant: { orgId: execution.orgId, ownerId: execution.ownerId },
              },
              settings: stageConfig,
              context,
              signal,
            })
          : runBuiltinAction(type, stageConfig, { config: ctx.config, context, signal }),
    );
  }
  const names = stage.agent_ref ? [stage.agent_ref] : (stage.parallel_agents ?? []);
  if (names.length === 0)
    throw new StepError(`stage ${stage.id} has no agent_ref, parallel_agents or action_type`, false);
  // Fan out: one node per agent, all at once; join: the stage completes when every agent succeeded.
  const results = await Promise.allSettled(
    names.map((name, index) => runAgentStep(ctx, execution, stage, name, index, attempt, context)),
  );
  const stopped = results.find(
    (result) => result.status === "rejected" && result.reason instanceof RunStoppedError,
  );
  const failed = stopped ?? results.find((result) => result.status === "rejected");
  if (failed?.status === "rejected") throw failed.reason;
  const outputs = results.map((result) => (result.status === "fulfilled" ? result.value : null));
  if (stage.agent_ref) return outputs[0];
  return Object.fromEntries(names.map((name, index) => [name, outputs[index]]));
}

/** A built-in action type; an unknown one (its domain not registered in this process) fails the step. */
function runBuiltinAction(type: string, settings: Record<string, unknown>, env: ActionEnv) {
  if (!(ACTION_TYPES as readonly string[]).includes(type)) {
    throw new StepError(`action type ${type} is not available in this Vigil`, false);
  }
  return runAction(type as ActionType, settings, env);
}

const stagePositionOf = (execution: ExecutionRow, stage: Stage) =>
  execution.stages.findIndex((candidate) => candidate.id === stage.id);

async function runAgentStep(
  ctx: Ctx,
  execution: ExecutionRow,
  stage: Stage,
  name: string,
  index: number,
  attempt: number,
  context: Record<string, unknown>,
) {
  const agentKey = `${stageKey(stage.id)}/agent:${name}`;
  const spec: NodeSpec = {
    key: agentKey,
    parentKey: stageKey(stage.id),
    stageId: stage.id,
    stagePosition: stagePositionOf(execution, stage),
    depth: 1,
    position: index,
    type: "agent",
    label: name,
  };
  return runStep(ctx, execution, spec, attempt, async (signal) => {
    const agent = await findExecutionAgent(ctx.db, execution, name);
    if (!agent) throw new StepError(`agent ${name} not found`, false);
    // A rerun agent records its own tool calls; those of an earlier attempt go.
    await ctx.db
      .delete(executionNodes)
      .where(
        and(
          eq(executionNodes.traceId, execution.traceId),
          eq(executionNodes.parentKey, agentKey),
          lt(executionNodes.attempt, attempt),
        ),
      );
    let calls = 0;
    const callTool = async (
      tool: string,
      settings: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ) => {
      calls += 1;
      if (!(ACTION_TYPES as readonly string[]).includes(tool) || !agent.tools.includes(tool)) {
        throw new StepError(`agent ${name} may not call tool ${tool}`, false);
      }
      if (calls > agent.maxSteps)
        throw new StepError(`agent ${name} made more than ${agent.maxSteps} tool calls`, false);
      const toolSpec: NodeSpec = {
        key: `${agentKey}/tool:${calls}:${tool}`,
        parentKey: agentKey,
        stageId: stage.id,
        stagePosition: spec.stagePosition,
        depth: 2,
        position: calls,
        type: "tool",
        label: tool,
      };
      return runStep(ctx, execution, toolSpec, attempt, (signal) =>
        runAction(tool as ActionType, settings, {
          config: ctx.config,
          context: { ...context, ...extra },
          signal,
        }),
      );
    };
    const result = await runAgent({
      agent,
      context,
      stageConfig: stage.config ?? {},
      callTool,
      config: ctx.config,
      log: ctx.log,
      signal,
    });
    return { output: result.output, usage: result.usage ?? null };
  });
}

/** The agents of the run's tenant (agents are not versioned: a run uses them as they are now). */
async function findExecutionAgent(db: Db, execution: ExecutionRow, name: string) {
  const [row] = await db
    .select()
    .from(agents)
    .where(and(inTenant(agents, execution), eq(agents.name, name)));
  return row ?? null;
}

/** { input, stages: { <id>: { output } }, execution }: what templates and JSONata see. */
async function runContext(db: Db, execution: ExecutionRow): Promise<Record<string, unknown>> {
  const done = await db
    .select({ stageId: executionNodes.stageId, output: executionNodes.output })
    .from(executionNodes)
    .where(
      and(
        eq(executionNodes.traceId, execution.traceId),
        eq(executionNodes.type, "stage"),
        eq(executionNodes.status, "success"),
      ),
    );
  return {
    input: execution.input ?? null,
    stages: Object.fromEntries(done.map((node) => [node.stageId, { output: node.output }])),
    execution: {
      trace_id: execution.traceId,
      run_id: execution.runId,
      session_id: execution.sessionId,
      target_type: execution.targetType,
      target_name: execution.targetName,
    },
  };
}

async function isRunning(db: Db, traceId: string): Promise<boolean> {
  const [row] = await db
    .select({ status: executions.status })
    .from(executions)
    .where(eq(executions.traceId, traceId));
  return row?.status === "running";
}

async function ensureRunning(db: Db, traceId: string): Promise<void> {
  if (!(await isRunning(db, traceId))) throw new RunStoppedError(traceId);
}

/** How often a step under way checks that its run still runs (cancellation may come from any instance). */
const STOP_CHECK_MS = 1_000;

/**
 * A signal that aborts when the run stops while a step is under way, so that a cancelled run's HTTP
 * call is dropped at once rather than held to its timeout. `end` stops watching.
 */
function watchForStop(db: Db, traceId: string): { signal: AbortSignal; end(): void } {
  const controller = new AbortController();
  const timer = setInterval(() => {
    isRunning(db, traceId).then(
      (running) => {
        if (!running) controller.abort(new RunStoppedError(traceId));
      },
      // A failed check is no reason to stop; the next one decides.
      () => {},
    );
  }, STOP_CHECK_MS);
  timer.unref();
  return { signal: controller.signal, end: () => clearInterval(timer) };
}

/** One step (agent, action or tool call): reused when it already succeeded, else run and recorded. */
async function runStep(
  ctx: Ctx,
  execution: ExecutionRow,
  spec: NodeSpec,
  attempt: number,
  work: (signal: AbortSignal) => Promise<StepResult>,
): Promise<unknown> {
  const traceId = execution.traceId;
  const [existing] = await ctx.db
    .select({ status: executionNodes.status, output: executionNodes.output })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.key, spec.key)));
  if (existing?.status === "success") return existing.output;
  // Cancellation takes effect here, between steps.
  await ensureRunning(ctx.db, traceId);
  const startedAt = ctx.now();
  const restart = { status: "running", attempt, startedAt, finishedAt: null, error: null, output: null };
  await ctx.db
    .insert(executionNodes)
    .values({ id: randomUUID(), traceId, ...spec, ...restart })
    .onConflictDoUpdate({
      target: [executionNodes.traceId, executionNodes.key],
      set: restart,
      setWhere: sql`${executionNodes.status} in ('pending', 'running', 'error') and ${executionNodes.attempt} <= ${attempt}`,
    });
  let result: StepResult;
  const stop = watchForStop(ctx.db, traceId);
  try {
    // A model's answer or an HTTP body may hold text PostgreSQL cannot store (U+0000): made
    // storable here, as alert data is, rather than failing the step's record after its work is done.
    result = storableValue(await work(stop.signal));
  } catch (caught) {
    // Whatever the aborted work threw, the cause is the stopped run (its nodes are already marked).
    const err = stop.signal.aborted ? new RunStoppedError(traceId) : caught;
    if (!(err instanceof RunStoppedError)) await failStep(ctx, execution, spec.key, attempt, err as Error);
    throw err;
  } finally {
    stop.end();
  }
  await completeStep(ctx, execution, spec.key, attempt, result);
  return result.output;
}

/**
 * The model usage a step adds to its node and its run. A node adds up its attempts: the calls that
 * answered in an attempt that failed were paid for, and a retry's calls come on top of them.
 */
const nodeUsage = (usage: Usage) => ({
  model: usage.model,
  promptTokens: sql`${executionNodes.promptTokens} + ${usage.promptTokens}`,
  completionTokens: sql`${executionNodes.completionTokens} + ${usage.completionTokens}`,
  cost: sql`${executionNodes.cost} + ${costOf(usage)}`,
});

const runUsage = (usage: Usage) => ({
  promptTokens: sql`${executions.promptTokens} + ${usage.promptTokens}`,
  completionTokens: sql`${executions.completionTokens} + ${usage.completionTokens}`,
  totalCost: sql`${executions.totalCost} + ${costOf(usage)}`,
});

/** The node of a step while this attempt of it runs: a stopped run or a later attempt matches none. */
const runningAttempt = (traceId: string, key: string, attempt: number) =>
  and(
    eq(executionNodes.traceId, traceId),
    eq(executionNodes.key, key),
    eq(executionNodes.status, "running"),
    eq(executionNodes.attempt, attempt),
  );

/** A step's failure, and the model calls it paid for all the same (its StepError's usage). */
async function failStep(ctx: Ctx, execution: ExecutionRow, key: string, attempt: number, err: Error) {
  const usage = err instanceof StepError ? err.usage : null;
  await withTransaction(ctx.db, async (tx) => {
    const [failed] = await tx
      .update(executionNodes)
      .set({
        status: "error",
        error: storableText(err.message),
        finishedAt: ctx.now(),
        ...(usage ? nodeUsage(usage) : {}),
      })
      .where(runningAttempt(execution.traceId, key, attempt))
      .returning({ id: executionNodes.id });
    if (failed && usage) {
      await tx.update(executions).set(runUsage(usage)).where(eq(executions.traceId, execution.traceId));
    }
  });
}

async function completeStep(
  ctx: Ctx,
  execution: ExecutionRow,
  key: string,
  attempt: number,
  result: StepResult,
): Promise<void> {
  const usage = result.usage ?? null;
  const now = ctx.now();
  await withTransaction(ctx.db, async (tx) => {
    if (!(await lockRunningExecution(tx, execution.traceId))) throw new RunStoppedError(execution.traceId);
    const [done] = await tx
      .update(executionNodes)
      .set({
        status: "success",
        output: result.output ?? null,
        finishedAt: now,
        ...(usage ? nodeUsage(usage) : {}),
      })
      .where(runningAttempt(execution.traceId, key, attempt))
      .returning({ id: executionNodes.id });
    if (!done) throw new RunStoppedError(execution.traceId);
    for (const artifact of result.artifacts ?? []) {
      await storeArtifact(tx, { sessionId: execution.sessionId, traceId: execution.traceId }, artifact, now);
    }
    if (result.structuredOutput || usage) {
      await tx
        .update(executions)
        .set({
          ...(result.structuredOutput ? { structuredOutput: result.structuredOutput } : {}),
          ...(usage ? runUsage(usage) : {}),
        })
        .where(eq(executions.traceId, execution.traceId));
    }
  });
}

async function finishStage(
  ctx: Ctx,
  enqueueStage: EnqueueStage,
  execution: ExecutionRow,
  stageId: string,
  attempt: number,
  output: unknown,
): Promise<void> {
  const now = ctx.now();
  await withTransaction(ctx.db, async (tx) => {
    const running = await lockRunningExecution(tx, execution.traceId);
    if (!running) return;
    const [done] = await tx
      .update(executionNodes)
      .set({ status: "success", output: output ?? null, finishedAt: now, error: null })
      .where(
        and(
          eq(executionNodes.traceId, execution.traceId),
          eq(executionNodes.key, stageKey(stageId)),
          eq(executionNodes.status, "running"),
          eq(executionNodes.attempt, attempt),
        ),
      )
      .returning({ id: executionNodes.id });
    if (!done) return;
    await enqueueReadyStages(tx, running, enqueueStage, now);
    // The last stage, or the last still running after another failed, ends the run.
    await settleAfterStage(tx, running, now);
  });
}

async function failStage(
  ctx: Ctx,
  traceId: string,
  stageId: string,
  attempt: number,
  message: string,
): Promise<void> {
  const now = ctx.now();
  await withTransaction(ctx.db, async (tx) => {
    if (!(await lockRunningExecution(tx, traceId))) return;
    const [failed] = await tx
      .update(executionNodes)
      .set({ status: "error", error: message, finishedAt: now })
      .where(
        and(
          eq(executionNodes.traceId, traceId),
          eq(executionNodes.key, stageKey(stageId)),
          eq(executionNodes.status, "running"),
          eq(executionNodes.attempt, attempt),
        ),
      )
      .returning({ id: executionNodes.id });
    if (!failed) return;
    await failRunWhenDrained(tx, traceId, stageId, now);
  });
}
