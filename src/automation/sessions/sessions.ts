// Reading sessions: the searchable list, one session in full (messages, runs, artifacts, computed
// values, costs and a generated summary).
import { and, asc, desc, eq, isNotNull, type SQL, sql } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import type { Executor } from "../../core/db/database.ts";
import { badRequest } from "../../core/errors.ts";
import { executionNodes, executions, sessionMessages, sessions } from "../tables.ts";
import { artifactsOf } from "./artifacts.ts";
import type { Session, SessionListItem, SessionListResponse } from "./schemas.ts";
import { messageOrder, ownedSession } from "./session-rows.ts";

/** At most this many words of `q` (each must occur); more is 400, not a search that ignores some. */
const MAX_QUERY_TERMS = 8;
const SUMMARY_RESULT_MAX_CHARS = 2000;

type SessionRow = typeof sessions.$inferSelect;

const escapeLike = (term: string) => term.replace(/[\\%_]/g, (char) => `\\${char}`);

/** Words of q, lower-cased; each must occur in the session's search text. */
export function queryTerms(q: string): string[] {
  const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (terms.length > MAX_QUERY_TERMS) {
    throw badRequest(
      "q",
      `at most ${MAX_QUERY_TERMS} words, each of which must occur (${terms.length} given)`,
    );
  }
  return terms;
}

/** The initiator an installed app's token records (initiatorOf): `app:<name>`. */
const APP_INITIATOR = "app:";

/**
 * The latest run's target; without a run, the installed app that opened the session (its token's
 * initiator). Not source_app: any caller may set that audit label, so it names no installed app.
 */
function responderOf(row: Pick<SessionRow, "responderType" | "responderName" | "initiator">) {
  if (row.responderType && row.responderName) return { type: row.responderType, name: row.responderName };
  if (row.initiator.startsWith(APP_INITIATOR) && row.initiator.length > APP_INITIATOR.length) {
    return { type: "app", name: row.initiator.slice(APP_INITIATOR.length) };
  }
  return null;
}

/** A session's runs, for the rows of a page only: one aggregate over its executions (executions_session). */
const runStats = (db: Executor) =>
  db
    .select({
      executionCount: sql<number>`count(*)`.mapWith(Number).as("execution_count"),
      runningCount: sql<number>`count(*) filter (where ${executions.status} = 'running')`
        .mapWith(Number)
        .as("running_count"),
      totalCost: sql<number>`coalesce(sum(${executions.totalCost}), 0)`.mapWith(Number).as("total_cost"),
    })
    .from(executions)
    .where(eq(executions.sessionId, sessions.id))
    .as("run_stats");

function presentItem(row: SessionRowWithStats): SessionListItem {
  return {
    id: row.id,
    title: row.title,
    first_prompt: row.firstPrompt,
    initiator: row.initiator,
    source_app: row.sourceApp,
    source_metadata: row.sourceMetadata,
    responder: responderOf(row),
    status:
      row.runningCount > 0
        ? ("running" as const)
        : row.pending
          ? ("waiting_for_input" as const)
          : ("idle" as const),
    created_at: row.createdAt.toISOString(),
    last_activity_at: row.updatedAt.toISOString(),
    execution_count: row.executionCount,
    total_cost: row.totalCost,
  };
}

type SessionRowWithStats = SessionRow & { executionCount: number; runningCount: number; totalCost: number };

export async function listSessions({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { q?: string; source_app?: string; limit: number; offset: number };
}): Promise<SessionListResponse> {
  const conditions: SQL[] = [inTenant(sessions, tenantOf(ctx.actor))];
  for (const term of queryTerms(input.q ?? "")) {
    conditions.push(sql`${sessions.searchText} like ${`%${escapeLike(term)}%`}`);
  }
  if (input.source_app !== undefined) conditions.push(eq(sessions.sourceApp, input.source_app));
  // The page first, in activity order (the activity index, filtered by q), then its rows and their
  // runs: run statistics computed per row would be computed for every row an offset skips too.
  const page = ctx.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(...conditions))
    .orderBy(desc(sessions.updatedAt), desc(sessions.id))
    .limit(input.limit + 1)
    .offset(input.offset)
    .as("page");
  const stats = runStats(ctx.db);
  const rows = await ctx.db
    .select({
      session: sessions,
      executionCount: stats.executionCount,
      runningCount: stats.runningCount,
      totalCost: stats.totalCost,
    })
    .from(page)
    .innerJoin(sessions, eq(sessions.id, page.id))
    .innerJoinLateral(stats, sql`true`)
    .orderBy(desc(sessions.updatedAt), desc(sessions.id));
  return {
    items: rows.slice(0, input.limit).map(({ session, ...stats }) => presentItem({ ...session, ...stats })),
    limit: input.limit,
    offset: input.offset,
    has_more: rows.length > input.limit,
  };
}

const durationMs = (from: Date, to: Date) => Math.max(0, to.getTime() - from.getTime());

/**
 * The generated summary: the runs and their outcome, then the latest finished run's result.
 * Also what Ask reuses from a prior session.
 */
export async function sessionSummary(db: Executor, session: Pick<SessionRow, "id" | "pending">) {
  const runs = await db
    .select()
    .from(executions)
    .where(eq(executions.sessionId, session.id))
    .orderBy(asc(executions.startedAt), asc(executions.traceId));
  return summarize(session, runs);
}

function summarize(session: Pick<SessionRow, "pending">, runs: (typeof executions.$inferSelect)[]): string {
  const lines: string[] = [];
  if (runs.length === 0) {
    lines.push("No runs yet.");
  } else {
    const count = (status: string) => runs.filter((run) => run.status === status).length;
    const targets = [...new Set(runs.map((run) => `${run.targetType} ${run.targetName}`))].join(", ");
    const cancelled = runs.filter((run) => run.cancelled).length;
    lines.push(
      `${runs.length} run${runs.length === 1 ? "" : "s"} of ${targets}: ${count("completed")} completed, ` +
        `${count("error")} failed${cancelled ? ` (${cancelled} cancelled)` : ""}, ${count("running")} running.`,
    );
    const latest = [...runs]
      .reverse()
      .find((run) => run.status !== "running" && run.structuredOutput?.summary);
    if (latest?.structuredOutput) {
      lines.push(latest.structuredOutput.summary.slice(0, SUMMARY_RESULT_MAX_CHARS));
    }
  }
  if (session.pending) {
    lines.push(
      `Waiting for ${session.pending.missing.join(", ")} to run ${session.pending.target.type} ${session.pending.target.name}.`,
    );
  }
  return lines.join("\n");
}

export async function getSession({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string };
}): Promise<Session> {
  const session = await ownedSession(ctx.db, tenantOf(ctx.actor), input.sessionId);
  const [messages, runs, artifacts, byModel] = await Promise.all([
    ctx.db
      .select()
      .from(sessionMessages)
      .where(eq(sessionMessages.sessionId, session.id))
      .orderBy(...messageOrder),
    ctx.db
      .select()
      .from(executions)
      .where(eq(executions.sessionId, session.id))
      .orderBy(asc(executions.startedAt), asc(executions.traceId)),
    artifactsOf(ctx.db, session.id),
    ctx.db
      .select({
        model: executionNodes.model,
        promptTokens: sql<number>`sum(${executionNodes.promptTokens})`.mapWith(Number),
        completionTokens: sql<number>`sum(${executionNodes.completionTokens})`.mapWith(Number),
        cost: sql<number>`sum(${executionNodes.cost})`.mapWith(Number),
      })
      .from(executionNodes)
      .innerJoin(executions, eq(executions.traceId, executionNodes.traceId))
      .where(and(eq(executions.sessionId, session.id), isNotNull(executionNodes.model)))
      .groupBy(executionNodes.model)
      .orderBy(asc(executionNodes.model)),
  ]);
  const now = ctx.now();
  const running = runs.filter((run) => run.status === "running").length;
  const totalCost = runs.reduce((sum, run) => sum + run.totalCost, 0);
  return {
    ...presentItem({ ...session, executionCount: runs.length, runningCount: running, totalCost }),
    pending_inputs: session.pending
      ? {
          target_type: session.pending.target.type,
          target_name: session.pending.target.name,
          inputs_required: session.pending.missing,
        }
      : null,
    messages: messages.map((message) => ({
      id: message.id,
      role: message.role as "user" | "assistant",
      content: message.content,
      trace_id: message.traceId,
      data: message.data,
      created_at: message.createdAt.toISOString(),
    })),
    executions: runs.map((run) => ({
      trace_id: run.traceId,
      run_id: run.runId,
      target_type: run.targetType,
      target_name: run.targetName,
      workflow_version: run.workflowVersion,
      status: run.status,
      cancelled: run.cancelled,
      cancel_reason: run.cancelReason,
      error: run.error,
      started_at: run.startedAt.toISOString(),
      finished_at: run.finishedAt?.toISOString() ?? null,
      duration_ms: durationMs(run.startedAt, run.finishedAt ?? now),
      total_cost: run.totalCost,
      structured_output: run.structuredOutput ?? null,
    })),
    artifacts,
    computed: {
      duration_ms: durationMs(session.createdAt, session.updatedAt),
      message_count: messages.length,
      execution_count: runs.length,
      running_count: running,
      completed_count: runs.filter((run) => run.status === "completed").length,
      error_count: runs.filter((run) => run.status === "error").length,
      cancelled_count: runs.filter((run) => run.cancelled).length,
      artifact_count: artifacts.length,
    },
    cost: {
      total_cost: totalCost,
      prompt_tokens: runs.reduce((sum, run) => sum + run.promptTokens, 0),
      completion_tokens: runs.reduce((sum, run) => sum + run.completionTokens, 0),
      by_execution: runs.map((run) => ({
        trace_id: run.traceId,
        target_name: run.targetName,
        total_cost: run.totalCost,
      })),
      by_model: byModel.map((row) => ({
        model: row.model ?? "",
        prompt_tokens: row.promptTokens,
        completion_tokens: row.completionTokens,
        cost: row.cost,
      })),
    },
    summary: summarize(session, runs),
  };
}
