// Closes runs that nobody will finish: a stage whose pg-boss job ended (failed after its retries,
// expired on a dead worker, cancelled, or gone) while the stage node is still pending or running.
// Such a run becomes `error` with the reason, the rest of its nodes skipped or error, and settles.
import { sql } from "drizzle-orm";
import { type Db, withTransaction } from "../../core/db/database.ts";
import { executionNodes, executions } from "../tables.ts";
import { closeExecution, lockRunningExecution } from "./execution-state.ts";

export const RUN_STAGE_JOB = "automation.run_stage";

interface Stranded {
  trace_id: string;
  stage_id: string;
  attempt: number;
  state: string | null;
}

/** Sweeps every running execution, or one. Returns the trace ids it closed. */
export async function sweepExecutions({
  db,
  now,
  traceId,
}: {
  db: Db;
  now: () => Date;
  traceId?: string;
}): Promise<string[]> {
  const only = traceId ? sql`and e.trace_id = ${traceId}` : sql``;
  const { rows } = await db.execute(sql`
    select n.trace_id, n.stage_id, n.attempt, j.state::text as state
    from ${executionNodes} n
    join ${executions} e on e.trace_id = n.trace_id
    left join pgboss.job j on j.name = ${RUN_STAGE_JOB} and j.id = n.job_id
    where e.status = 'running' ${only}
      and n.type = 'stage' and n.status in ('pending', 'running') and n.job_id is not null
      and (j.id is null or j.state in ('failed', 'cancelled', 'completed'))`);
  const closed: string[] = [];
  for (const row of rows as unknown as Stranded[]) {
    if (closed.includes(row.trace_id)) continue;
    const done = await withTransaction(db, async (tx) => {
      if (!(await lockRunningExecution(tx, row.trace_id))) return false;
      // Re-check under the lock: the stage may have finished since the scan.
      const { rows: still } = await tx.execute(sql`
        select 1 from ${executionNodes}
        where trace_id = ${row.trace_id} and stage_id = ${row.stage_id} and type = 'stage'
          and status in ('pending', 'running')`);
      if (still.length === 0) return false;
      const why = `its job ${row.state ?? "is gone"}${row.state === "failed" ? " (expired or out of retries)" : ""}`;
      await tx.execute(sql`
        update ${executionNodes} set status = 'error', error = ${`stage ${row.stage_id}: ${why}`},
          finished_at = ${now()}
        where trace_id = ${row.trace_id} and stage_id = ${row.stage_id} and type = 'stage'`);
      return closeExecution(tx, row.trace_id, {
        error: `stage ${row.stage_id} did not finish: ${why}`,
        skipReason: `skipped: stage ${row.stage_id} did not finish`,
        stopReason: `stopped: stage ${row.stage_id} did not finish`,
        now: now(),
      });
    });
    if (done) closed.push(row.trace_id);
  }
  return closed;
}
