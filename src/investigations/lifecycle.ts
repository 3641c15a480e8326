// The investigation's status follows its run: queued until a step starts it (markRunning), then the
// run's end decides it, in the transaction that ends the run (onExecutionEnd): completed, failed, or
// cancelled when its session was terminated. Every move is a conditional update from an unfinished
// status, so a final investigation never moves again; each one refreshes the alert's summary.
import { and, eq, inArray } from "drizzle-orm";
import { setAlertInvestigation } from "../alerts/index.ts";
import type { ExecutionEnd } from "../automation/index.ts";
import type { Executor } from "../core/db/database.ts";
import { type InvestigationRow, refOfInvestigation } from "./present.ts";
import type { InvestigationStatus } from "./schemas.ts";
import { investigations } from "./tables.ts";

const UNFINISHED: InvestigationStatus[] = ["queued", "running"];

/** Writes `changes` when the investigation is unfinished; refreshes the alert's summary. */
export async function moveInvestigation(
  db: Executor,
  where: { id: string } | { traceId: string },
  changes: Partial<typeof investigations.$inferInsert>,
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

export function markRunning(db: Executor, id: string, now: Date) {
  return moveInvestigation(db, { id }, { status: "running", updatedAt: now }, ["queued"]);
}

export async function endInvestigationOfRun(db: Executor, end: ExecutionEnd): Promise<void> {
  const status: InvestigationStatus =
    end.status === "completed" ? "completed" : end.cancelled ? "cancelled" : "failed";
  await moveInvestigation(
    db,
    { traceId: end.traceId },
    { status, finishedAt: end.now, updatedAt: end.now, error: status === "completed" ? null : end.error },
  );
}
