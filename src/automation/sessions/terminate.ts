// Terminating a session: every running run of it is cancelled, each in its own transaction, so one
// run that cannot be cancelled does not keep the others running.
import { and, eq, sql } from "drizzle-orm";
import { tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { withTransaction } from "../../core/db/database.ts";
import { AppError } from "../../core/errors.ts";
import { cancelInTx } from "../executions/executions.ts";
import { executions } from "../tables.ts";
import { addMessage, ownedSession, touchSession } from "./session-rows.ts";

/** How long a cancel waits for a step holding the run's row; past it the run counts as not cancelled. */
const CANCEL_LOCK_TIMEOUT = "5s";
const ATTEMPTS = 2;

/**
 * Cancels every running run of the session; idempotent (0 when nothing runs). The reason is kept on
 * each cancelled run (its error and cancel_reason) and in the session's messages. 503 when a run
 * could not be cancelled (its row stayed locked or the database failed): the others stay cancelled.
 */
export async function terminateSession({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string; reason?: string | null };
}): Promise<{ cancelled_workflows: number }> {
  const session = await ownedSession(ctx.db, tenantOf(ctx.actor), input.sessionId);
  const running = await ctx.db
    .select({ traceId: executions.traceId })
    .from(executions)
    .where(and(eq(executions.sessionId, session.id), eq(executions.status, "running")));
  const reason = input.reason ?? null;
  let cancelled = 0;
  const failed: string[] = [];
  for (const { traceId } of running) {
    const outcome = await cancelWithRetry(ctx, traceId, reason);
    if (outcome === "cancelled") cancelled += 1;
    if (outcome === "failed") failed.push(traceId);
  }
  if (cancelled > 0) {
    const now = ctx.now();
    // The termination is the session's latest activity: the list's order and its duration say so.
    await withTransaction(ctx.db, async (tx) => {
      await addMessage(
        tx,
        {
          sessionId: session.id,
          role: "assistant",
          content: `Terminated: ${cancelled} run(s) cancelled${reason ? ` (${reason})` : ""}`,
          data: { event: "terminated", reason, cancelled_workflows: cancelled },
        },
        now,
      );
      await touchSession(tx, tenantOf(ctx.actor), session.id, now);
    });
  }
  if (failed.length > 0) {
    throw new AppError(
      "UNAVAILABLE",
      `${failed.length} running execution(s) could not be cancelled; try again`,
      { session_id: session.id, cancelled_workflows: cancelled, failed_trace_ids: failed },
    );
  }
  return { cancelled_workflows: cancelled };
}

async function cancelWithRetry(
  ctx: CallerCtx,
  traceId: string,
  reason: string | null,
): Promise<"cancelled" | "finished" | "failed"> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    try {
      const done = await withTransaction(ctx.db, async (tx) => {
        await tx.execute(sql`select set_config('lock_timeout', ${CANCEL_LOCK_TIMEOUT}, true)`);
        return cancelInTx(tx, traceId, reason, ctx.now());
      });
      return done ? "cancelled" : "finished";
    } catch (error) {
      ctx.log.warn({ err: error, traceId, attempt }, "cancelling a run failed");
    }
  }
  return "failed";
}
