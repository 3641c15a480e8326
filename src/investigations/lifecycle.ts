// The investigation's status follows its run: queued until a step starts it (markRunning), then the
// run's end decides it, in the transaction that ends the run (onExecutionEnd): completed, failed, or
// cancelled when its session was terminated. Every move is a conditional update from an unfinished
// status, so a final investigation never moves again; each one refreshes the alert's summary.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { setAlertInvestigation } from "../alerts/index.ts";
import { type ExecutionEnd, readRunResult } from "../automation/index.ts";
import type { Executor, Tx } from "../core/db/database.ts";
import { type InvestigationRow, refOfInvestigation } from "./present.ts";
import type { InvestigationStatus } from "./schemas.ts";
import { investigations } from "./tables.ts";

const UNFINISHED: InvestigationStatus[] = ["queued", "running"];

/** Writes `changes` when the investigation is unfinished; refreshes the alert's summary. */
export async function moveInvestigation(
  db: Executor,
  where: { id: string } | { traceId: string },
  changes: PgUpdateSetSource<typeof investigations>,
  from: InvestigationStatus[] = UNFINISHED,
): Promise<InvestigationRow | null> {
  const [row] = await db
    .update(investigations)
    .set(changes)
    .where(
      and(
        "id" in where ? eq(investigations.id, where.id) : eq(investigations.traceId, where.traceId),
        inArray(investigations.status, from),
      ),
    )
    .returning();
  if (!row) return null;
  await setAlertInvestigation(db, { alertId: row.alertId, ref: refOfInvestigation(row) });
  return row;
}

/**
 * Locks the investigation's row for the rest of the transaction and answers its status: a change
 * made under the lock (evidence added) then commits before any move to a final status, or sees it.
 */
export async function lockInvestigation(tx: Tx, id: string): Promise<string | null> {
  const [row] = await tx
    .select({ status: investigations.status })
    .from(investigations)
    .where(eq(investigations.id, id))
    .for("update");
  return row?.status ?? null;
}

export const isFinal = (status: string) => !(UNFINISHED as string[]).includes(status);

/** The summary to write when an investigation ends without a conclusion: the one it has, else `why`. */
export const summaryOrWhy = (why: string) => sql`coalesce(${investigations.resultSummary}, ${why})`;

export function markRunning(db: Executor, id: string, now: Date) {
  return moveInvestigation(db, { id }, { status: "running", updatedAt: now }, ["queued"]);
}

export async function endInvestigationOfRun(db: Executor, end: ExecutionEnd): Promise<void> {
  const status: InvestigationStatus =
    end.status === "completed" ? "completed" : end.cancelled ? "cancelled" : "failed";
  const error = status === "completed" ? null : end.error;
  // A run that ended without a conclusion says why in the summary, unless the agent wrote one.
  const why = status === "completed" ? null : `Investigation ${endingOf(status, error)}`;
  const moved = await moveInvestigation(
    db,
    { traceId: end.traceId },
    {
      status,
      finishedAt: end.now,
      updatedAt: end.now,
      error,
      ...(why && { resultSummary: summaryOrWhy(why) }),
    },
  );
  // A workflow that completed without reporting through the callbacks leaves its own summary. Read
  // only then: every run's end passes here, most of them no investigation's.
  if (moved?.status === "completed" && moved.resultSummary === null) {
    const summary = await silentRunSummary(db, end.traceId);
    await moveInvestigation(db, { id: moved.id }, { resultSummary: summary }, ["completed"]);
  }
}

/** What a completed run that reported no conclusion says: its structured_output summary, or that it said nothing. */
async function silentRunSummary(db: Executor, traceId: string): Promise<string> {
  const run = await readRunResult(db, traceId);
  const summary = run?.structuredOutput?.summary.trim();
  return summary || `The workflow ${run?.targetName ?? "assigned"} ended without reporting a conclusion`;
}

// "failed: <error>", or "cancelled" with the reason the terminate gave (its error says "cancelled: ...").
function endingOf(status: "failed" | "cancelled", error: string | null): string {
  if (!error) return status;
  return error.startsWith(status) ? error : `${status}: ${error}`;
}
