// What a higher domain reads of a run when it ends (onExecutionEnd): who started it and why (the
// session's source app and metadata), its input, its structured output, and the output of its
// last stage, which a run serving a purpose (alert triage) answers with.
import { and, eq } from "drizzle-orm";
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import type { StructuredOutput } from "../schemas.ts";
import { executionNodes, executions, sessions } from "../tables.ts";
import { stageKey } from "./execution-state.ts";

export interface RunResult {
  traceId: string;
  tenant: Tenant;
  targetName: string;
  sourceApp: string | null;
  sourceMetadata: Record<string, string>;
  input: unknown;
  /** The run's structured_output: its report, or the text of its final stages' output. */
  structuredOutput: StructuredOutput | null;
}

export async function readRunResult(db: Executor, traceId: string): Promise<RunResult | null> {
  const [row] = await db
    .select({
      orgId: executions.orgId,
      ownerId: executions.ownerId,
      targetName: executions.targetName,
      input: executions.input,
      structuredOutput: executions.structuredOutput,
      sourceApp: sessions.sourceApp,
      sourceMetadata: sessions.sourceMetadata,
    })
    .from(executions)
    .innerJoin(sessions, eq(sessions.id, executions.sessionId))
    .where(eq(executions.traceId, traceId));
  if (!row) return null;
  return {
    traceId,
    tenant: { orgId: row.orgId, ownerId: row.ownerId },
    targetName: row.targetName,
    sourceApp: row.sourceApp,
    sourceMetadata: row.sourceMetadata,
    input: row.input,
    structuredOutput: row.structuredOutput,
  };
}

/** The output of the run's last stage in its plan; null when it has none (or the run has no stages). */
export async function lastStageOutput(db: Executor, traceId: string): Promise<unknown> {
  const [run] = await db
    .select({ stages: executions.stages })
    .from(executions)
    .where(eq(executions.traceId, traceId));
  const last = run?.stages.at(-1);
  if (!last) return null;
  const [node] = await db
    .select({ output: executionNodes.output })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.key, stageKey(last.id))));
  return node?.output ?? null;
}
