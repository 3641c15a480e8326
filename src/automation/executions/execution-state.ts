// The state transitions of a run, shared by the start, the engine, cancellation and the sweeper.
// Every one is a conditional update taken with the execution row locked (SELECT ... FOR UPDATE), so
// concurrent stage completions of one run serialize, exactly one of them sends a joined stage, and
// nothing changes a run once it left `running`: a late worker's result is dropped.
import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Tx } from "../../core/db/database.ts";
import type { Stage, StructuredOutput } from "../schemas.ts";
import { executionNodes, executions } from "../tables.ts";
import { notifyExecutionEnd } from "./extensions.ts";
import { asText } from "./template.ts";

export type ExecutionRow = typeof executions.$inferSelect;
/** Sends the job that runs one stage (a port: the stage job itself calls the engine). */
export type EnqueueStage = (
  tx: Tx,
  data: { traceId: string; stageId: string },
  options: { priority: number },
) => Promise<string | null>;

/** A stage of a run someone waits for is taken before those of background runs. */
const stagePriority = (execution: { background: boolean }) => (execution.background ? 0 : 1);

export const stageKey = (stageId: string) => `stage:${stageId}`;

/** Thrown when the run stopped (cancelled, failed elsewhere, swept) while a step was under way. */
export class RunStoppedError extends Error {
  constructor(traceId: string) {
    super(`execution ${traceId} is no longer running`);
    this.name = "RunStoppedError";
  }
}

/** Locks the execution row; null when the run is no longer running. */
export async function lockRunningExecution(tx: Tx, traceId: string): Promise<ExecutionRow | null> {
  const [row] = await tx.select().from(executions).where(eq(executions.traceId, traceId)).for("update");
  return row && row.status === "running" ? row : null;
}

/** Sends the jobs of the stages whose dependencies all succeeded and that were never sent. */
export async function enqueueReadyStages(
  tx: Tx,
  execution: Pick<ExecutionRow, "traceId" | "stages" | "background">,
  enqueue: EnqueueStage,
  now: Date,
): Promise<string[]> {
  const nodes = await tx
    .select({
      stageId: executionNodes.stageId,
      status: executionNodes.status,
      enqueuedAt: executionNodes.enqueuedAt,
    })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, execution.traceId), eq(executionNodes.type, "stage")));
  const byStage = new Map(nodes.map((node) => [node.stageId, node]));
  const sent: string[] = [];
  for (const stage of execution.stages) {
    const node = byStage.get(stage.id);
    if (node?.status !== "pending" || node.enqueuedAt) continue;
    if (!(stage.depends_on ?? []).every((dependency) => byStage.get(dependency)?.status === "success"))
      continue;
    const [marked] = await tx
      .update(executionNodes)
      .set({ enqueuedAt: now })
      .where(
        and(
          eq(executionNodes.traceId, execution.traceId),
          eq(executionNodes.key, stageKey(stage.id)),
          isNull(executionNodes.enqueuedAt),
        ),
      )
      .returning({ id: executionNodes.id });
    if (!marked) continue;
    const jobId = await enqueue(
      tx,
      { traceId: execution.traceId, stageId: stage.id },
      { priority: stagePriority(execution) },
    );
    await tx.update(executionNodes).set({ jobId }).where(eq(executionNodes.id, marked.id));
    sent.push(stage.id);
  }
  return sent;
}

const SUMMARY_MAX_CHARS = 4000;

function outputText(output: unknown): string {
  if (output && typeof output === "object" && typeof (output as { text?: unknown }).text === "string") {
    return (output as { text: string }).text;
  }
  return asText(output);
}

/** Without a report: the output of the final stages (those nothing depends on) as text. */
export function defaultStructuredOutput(stages: Stage[], outputs: Map<string, unknown>): StructuredOutput {
  const needed = new Set(stages.flatMap((stage) => stage.depends_on ?? []));
  const summary = stages
    .filter((stage) => !needed.has(stage.id))
    .map((stage) => outputText(outputs.get(stage.id)))
    .filter(Boolean)
    .join("\n\n")
    .slice(0, SUMMARY_MAX_CHARS);
  return { summary, impact: "", recommendations: "", confidence: "" };
}

/** A run's stage nodes, in the order they finished (the first failure first), then in stage order. */
function stageNodesOf(tx: Tx, traceId: string) {
  return tx
    .select({
      stageId: executionNodes.stageId,
      status: executionNodes.status,
      output: executionNodes.output,
      error: executionNodes.error,
    })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.type, "stage")))
    .orderBy(asc(executionNodes.finishedAt), asc(executionNodes.stagePosition));
}

type StageNode = Awaited<ReturnType<typeof stageNodesOf>>[number];

/**
 * After a stage succeeded, under the execution lock: the run completes when every stage has, or,
 * when another stage failed, ends in error once none runs any more (closeIfDrained). One read of
 * the stage nodes decides both.
 */
export async function settleAfterStage(tx: Tx, execution: ExecutionRow, now: Date): Promise<void> {
  const stageNodes = await stageNodesOf(tx, execution.traceId);
  if (!(await completeIfDone(tx, execution, stageNodes, now)))
    await closeIfDrained(tx, execution.traceId, stageNodes, now);
}

/** Completes the run when every stage succeeded. */
async function completeIfDone(
  tx: Tx,
  execution: ExecutionRow,
  stageNodes: StageNode[],
  now: Date,
): Promise<boolean> {
  if (stageNodes.some((node) => node.status !== "success")) return false;
  const outputs = new Map(stageNodes.map((node) => [node.stageId, node.output]));
  const rows = await tx
    .update(executions)
    .set({
      status: "completed",
      finishedAt: now,
      settled: true,
      structuredOutput: sql`coalesce(${executions.structuredOutput}, ${JSON.stringify(
        defaultStructuredOutput(execution.stages, outputs),
      )}::jsonb)`,
    })
    .where(and(eq(executions.traceId, execution.traceId), eq(executions.status, "running")))
    .returning({ traceId: executions.traceId });
  if (rows.length === 0) return false;
  await notifyExecutionEnd(tx, {
    traceId: execution.traceId,
    sessionId: execution.sessionId,
    status: "completed",
    cancelled: false,
    error: null,
    now,
  });
  return true;
}

/**
 * After a stage failed, under the execution lock: the stages not started are skipped, and the run
 * ends (error, naming the first stage that failed) once no stage is running. A stage already under
 * way when another failed runs to its end and keeps its own result: its work (an HTTP call) is done
 * either way, and a trace saying it failed while its action succeeded would be false. The run stays
 * `running` meanwhile, so cancellation and the watchdog still reach it, and it settles exactly once.
 */
export async function failRunWhenDrained(tx: Tx, traceId: string, stageId: string, now: Date) {
  await tx
    .update(executionNodes)
    .set({ status: "skipped", error: `skipped: stage ${stageId} failed`, finishedAt: now })
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.status, "pending")));
  return closeIfDrained(tx, traceId, await stageNodesOf(tx, traceId), now);
}

/** Closes a run one of whose stages failed when none runs any more; the caller holds the lock. */
async function closeIfDrained(tx: Tx, traceId: string, stageNodes: StageNode[], now: Date): Promise<boolean> {
  if (stageNodes.some((node) => node.status === "running" || node.status === "pending")) return false;
  const first = stageNodes.find((node) => node.status === "error");
  if (!first) return false;
  return closeExecution(tx, traceId, {
    error: `stage ${first.stageId} failed: ${first.error}`,
    skipReason: `skipped: stage ${first.stageId} failed`,
    stopReason: `stopped: stage ${first.stageId} failed`,
    now,
  });
}

export interface Closing {
  error: string;
  /** Written on nodes that never started. */
  skipReason: string;
  /**
   * Written on nodes still running (a cancelled or swept run): their late result, if any, is
   * dropped. A failed stage closes its run only once nothing runs (closeIfDrained).
   */
  stopReason: string;
  cancelled?: boolean;
  cancelReason?: string | null;
  now: Date;
}

/** Ends a running execution as `error`; every node not final becomes skipped or error. */
export async function closeExecution(tx: Tx, traceId: string, closing: Closing): Promise<boolean> {
  const rows = await tx
    .update(executions)
    .set({
      status: "error",
      error: closing.error,
      cancelled: closing.cancelled ?? false,
      cancelReason: closing.cancelReason ?? null,
      finishedAt: closing.now,
      settled: true,
      structuredOutput: sql`coalesce(${executions.structuredOutput}, ${JSON.stringify({
        summary: closing.error,
        impact: "",
        recommendations: "",
        confidence: "",
      })}::jsonb)`,
    })
    .where(and(eq(executions.traceId, traceId), eq(executions.status, "running")))
    .returning({ traceId: executions.traceId, sessionId: executions.sessionId });
  const [closed] = rows;
  if (!closed) return false;
  await tx
    .update(executionNodes)
    .set({ status: "skipped", error: closing.skipReason, finishedAt: closing.now })
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.status, "pending")));
  await tx
    .update(executionNodes)
    .set({ status: "error", error: closing.stopReason, finishedAt: closing.now })
    .where(and(eq(executionNodes.traceId, traceId), inArray(executionNodes.status, ["running"])));
  await notifyExecutionEnd(tx, {
    traceId,
    sessionId: closed.sessionId,
    status: "error",
    cancelled: closing.cancelled ?? false,
    error: closing.error,
    now: closing.now,
  });
  return true;
}
