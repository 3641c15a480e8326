// The read side of runs: the trace DAG of one execution and the list of executions.
//
// Trace nodes: stages (depth 0), the agents or the action of each stage (1), agents' tool calls (2),
// ordered by depth, then position. DAG status: success, error, and running for pending and running
// nodes; a skipped node (its upstream failed, or the run was cancelled) shows as error, with the
// node's own `state` saying skipped. Edges: stage dependency, stage -> agent or action, agent -> tool.
// At most TRACE_NODE_LIMIT nodes are returned (stages first); `truncated` says when there were more.
import { and, asc, desc, eq, type SQL } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { notFound } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import type { ExecutionListItem, TraceDAGResponse } from "../schemas.ts";
import { executionNodes, executions } from "../tables.ts";
import type { ExecutionRow } from "./execution-state.ts";

export const TRACE_NODE_LIMIT = 500;
const FINAL_STATES = ["success", "error", "skipped"];

type DagStatus = "success" | "running" | "error";

function dagStatus(state: string): DagStatus {
  if (state === "success") return "success";
  if (state === "error" || state === "skipped") return "error";
  return "running";
}

function durationMs(row: ExecutionRow, now: Date): number {
  return Math.max(0, (row.finishedAt ?? now).getTime() - row.startedAt.getTime());
}

export async function getExecutionTrace({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { traceId: string };
}): Promise<TraceDAGResponse> {
  const [execution] = await ctx.db
    .select()
    .from(executions)
    .where(and(inTenant(executions, tenantOf(ctx.actor)), eq(executions.traceId, input.traceId)));
  if (!execution) throw notFound("execution", { trace_id: input.traceId });
  const rows = await ctx.db
    .select()
    .from(executionNodes)
    .where(eq(executionNodes.traceId, execution.traceId))
    .orderBy(
      asc(executionNodes.depth),
      asc(executionNodes.stagePosition),
      asc(executionNodes.position),
      asc(executionNodes.key),
    )
    .limit(TRACE_NODE_LIMIT + 1);
  const truncated = rows.length > TRACE_NODE_LIMIT;
  const nodes = rows.slice(0, TRACE_NODE_LIMIT);
  const shown = new Set(nodes.map((node) => node.key));
  const edges: { source: string; target: string }[] = [];
  for (const stage of execution.stages) {
    for (const dependency of stage.depends_on ?? []) {
      edges.push({ source: `stage:${dependency}`, target: `stage:${stage.id}` });
    }
  }
  for (const node of nodes) {
    if (node.parentKey) edges.push({ source: node.parentKey, target: node.key });
  }
  // The flag is set with the final status; the node check guards it (every node final, costs recorded).
  const settled = execution.settled && nodes.every((node) => FINAL_STATES.includes(node.status));
  return {
    truncated,
    structured_output: execution.structuredOutput ?? {
      summary: "",
      impact: "",
      recommendations: "",
      confidence: "",
    },
    execution: {
      trace_id: execution.traceId,
      run_id: execution.runId,
      agent_name: execution.agentName,
      status: execution.status as "running" | "completed" | "error",
      started_at: execution.startedAt.toISOString(),
      duration_ms: durationMs(execution, ctx.now()),
      total_cost: execution.totalCost,
      trace_settled: settled,
      target_type: execution.targetType as "agent" | "workflow",
      workflow_version: execution.workflowVersion,
      session_id: execution.sessionId,
      cancelled: execution.cancelled,
      error: execution.error,
    },
    nodes: nodes.map((node) => ({
      id: node.key,
      type: node.type,
      label: node.label,
      status: dagStatus(node.status),
      state: node.status,
      attempt: node.attempt,
      error: node.error,
      cost: node.cost,
    })),
    edges: edges.filter((edge) => shown.has(edge.source) && shown.has(edge.target)),
  };
}

export async function listExecutions({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { session_id?: string; agent_name?: string; limit: number; offset: number };
}): Promise<ExecutionListItem[]> {
  // The spec's session_id is a string: one that is no session's id (every id is a uuid) lists nothing.
  if (input.session_id && !isUuid(input.session_id)) return [];
  const conditions: SQL[] = [inTenant(executions, tenantOf(ctx.actor))];
  if (input.session_id) conditions.push(eq(executions.sessionId, input.session_id));
  if (input.agent_name) conditions.push(eq(executions.agentName, input.agent_name));
  const rows = await ctx.db
    .select()
    .from(executions)
    .where(and(...conditions))
    .orderBy(desc(executions.startedAt), desc(executions.traceId))
    .limit(input.limit)
    .offset(input.offset);
  const now = ctx.now();
  return rows.map((row) => ({
    trace_id: row.traceId,
    run_id: row.runId,
    session_id: row.sessionId,
    target_type: row.targetType,
    target_name: row.targetName,
    agent_name: row.agentName,
    workflow_version: row.workflowVersion,
    status: row.status,
    cancelled: row.cancelled,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    duration_ms: durationMs(row, now),
    total_cost: row.totalCost,
  }));
}
