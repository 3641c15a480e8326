// Starting and stopping runs. A run pins what it executes when it starts: the workflow's newest
// approved version (a draft never runs implicitly), or, for an agent target, one stage with that
// agent alone. The session, the execution, its stage nodes and the jobs of the first stages are
// written in one transaction: the jobs exist if and only if the run does.
import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx, Ctx } from "../../core/context.ts";
import { type Tx, withTransaction } from "../../core/db/database.ts";
import { AppError, notFound } from "../../core/errors.ts";
import { matchesPattern } from "../input-pattern.ts";
import type { Stage, WorkflowInput } from "../schemas.ts";
import { createSession, recordResponder, touchSession } from "../sessions/session-rows.ts";
import { agents, executionNodes, executions, workflows } from "../tables.ts";
import { missingTarget, type NotReady } from "../workflows/readiness.ts";
import { runnableVersion } from "../workflows/workflows.ts";
import { closeExecution, enqueueReadyStages, lockRunningExecution, stageKey } from "./execution-state.ts";
import { runStageJob, WATCH_INTERVAL_SECONDS, watchExecutionJob } from "./jobs.ts";

export interface StartExecutionInput {
  target: { type: "agent" | "workflow"; name: string };
  /** The run's input: an object of named inputs (checked against the declared ones), or any JSON. */
  input?: unknown;
  /** Continue a session of the tenant; a new one is created when absent. */
  sessionId?: string;
  title?: string;
  /** The user's message that asked for the run (Ask); the session's first prompt when it is new. */
  firstPrompt?: string;
  /** Who started it, e.g. `user:<id>` or `webhook:<id>`. */
  initiator?: string;
  sourceApp?: string | null;
  sourceMetadata?: Record<string, string>;
  /** Started by Vigil itself, not for someone waiting (executions.background). */
  background?: boolean;
}

export interface StartedExecution {
  sessionId: string;
  traceId: string;
  runId: string;
  targetType: "agent" | "workflow";
  targetName: string;
  workflowVersion: number | null;
}

function notReadyError(reason: NotReady): AppError {
  return new AppError(reason.errCode, reason.msg, { ...reason.extras });
}

/** Fills declared defaults and checks required inputs and patterns; 400 names the input. */
export function applyDeclaredInputs(declared: WorkflowInput[], input: unknown): unknown {
  if (declared.length === 0) return input ?? null;
  const isObject = input !== null && typeof input === "object" && !Array.isArray(input);
  if (!isObject && input !== undefined && input !== null) {
    if (declared.some((item) => item.required && item.default === undefined)) {
      throw new AppError("VALIDATION_FAILED", "input: must be an object of the declared inputs", {
        field: "input",
      });
    }
    return input;
  }
  const values: Record<string, unknown> = {
    ...((input as Record<string, unknown> | null | undefined) ?? {}),
  };
  for (const item of declared) {
    if (values[item.name] === undefined && item.default !== undefined) values[item.name] = item.default;
    const value = values[item.name];
    if (value === undefined || value === null || value === "") {
      if (item.required) {
        throw new AppError("VALIDATION_FAILED", `input.${item.name}: is required`, {
          field: `input.${item.name}`,
        });
      }
      continue;
    }
    if (item.pattern === undefined) continue;
    // A pattern constrains text: a list or an object (a webhook's JSON body) is not matched by how
    // it prints (["a"] printed as "a").
    if (typeof value === "object") {
      throw new AppError("VALIDATION_FAILED", `input.${item.name}: must be text to match ${item.pattern}`, {
        field: `input.${item.name}`,
      });
    }
    if (!matchesPattern(item.pattern, String(value))) {
      throw new AppError("VALIDATION_FAILED", `input.${item.name}: does not match ${item.pattern}`, {
        field: `input.${item.name}`,
      });
    }
  }
  return values;
}

async function resolvePlan(tx: Tx, tenant: Tenant, target: StartExecutionInput["target"]) {
  if (target.type === "agent") {
    const [agent] = await tx
      .select()
      .from(agents)
      .where(and(inTenant(agents, tenant), eq(agents.name, target.name)));
    if (!agent) throw notReadyError(missingTarget("agent", target.name));
    const stages: Stage[] = [{ id: agent.name, agent_ref: agent.name }];
    return { stages, declared: agent.inputs, workflowVersion: null };
  }
  const [workflow] = await tx
    .select()
    .from(workflows)
    .where(and(inTenant(workflows, tenant), eq(workflows.name, target.name)));
  if (!workflow) throw notReadyError(missingTarget("workflow", target.name));
  const version = await runnableVersion(tx, workflow.id);
  if (!version) throw notReadyError(missingTarget("workflow", target.name, "has no approved version"));
  if (version.stages.length === 0) {
    throw new AppError("WORKFLOW_HAS_NO_STAGES", `workflow ${target.name} has no stages`, {
      target_type: "workflow",
      target_name: target.name,
      unbound_stage_id: null,
      total_stages: 0,
      resolution_hint: "add stages in a new version and approve it",
    });
  }
  return { stages: version.stages, declared: version.inputs, workflowVersion: version.version };
}

/**
 * Starts a run for `tenant`. `ctx.db` may be a caller's transaction, which the run's writes join
 * (a webhook delivery records its invocation and starts the run together).
 */
export async function startExecution({
  ctx,
  tenant,
  input,
}: {
  ctx: Ctx;
  tenant: Tenant;
  input: StartExecutionInput;
}): Promise<StartedExecution> {
  const now = ctx.now();
  return withTransaction(ctx.db, async (tx) => {
    const plan = await resolvePlan(tx, tenant, input.target);
    const runInput = applyDeclaredInputs(plan.declared, input.input);
    const sessionId = input.sessionId
      ? (await touchSession(tx, tenant, input.sessionId, now)).id
      : await createSession(
          tx,
          tenant,
          {
            title: input.title ?? `${input.target.type} ${input.target.name}`,
            firstPrompt: input.firstPrompt,
            initiator: input.initiator ?? `user:${tenant.ownerId}`,
            sourceApp: input.sourceApp,
            sourceMetadata: input.sourceMetadata,
          },
          now,
        );
    const traceId = randomUUID();
    const execution = {
      traceId,
      runId: randomUUID(),
      sessionId,
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      targetType: input.target.type,
      targetName: input.target.name,
      workflowVersion: plan.workflowVersion,
      agentName: input.target.name,
      stages: plan.stages,
      status: "running",
      background: input.background ?? false,
      input: runInput,
      startedAt: now,
    };
    await tx.insert(executions).values(execution);
    await recordResponder(tx, sessionId, input.target);
    await tx.insert(executionNodes).values(
      plan.stages.map((stage, index) => ({
        id: randomUUID(),
        traceId,
        key: stageKey(stage.id),
        parentKey: null,
        stageId: stage.id,
        depth: 0,
        stagePosition: index,
        position: 0,
        type: "stage",
        label: stage.name ?? stage.id,
        status: "pending",
      })),
    );
    await enqueueReadyStages(
      tx,
      execution,
      (jobTx, data, options) => ctx.enqueue(jobTx, runStageJob, data, options),
      now,
    );
    await ctx.enqueue(tx, watchExecutionJob, { traceId }, { startAfterSeconds: WATCH_INTERVAL_SECONDS });
    return {
      sessionId,
      traceId,
      runId: execution.runId,
      targetType: input.target.type,
      targetName: input.target.name,
      workflowVersion: plan.workflowVersion,
    };
  });
}

/** Cancels one run inside `tx`; false when it was no longer running. */
export async function cancelInTx(
  tx: Tx,
  traceId: string,
  reason: string | null,
  now: Date,
): Promise<boolean> {
  if (!(await lockRunningExecution(tx, traceId))) return false;
  const why = reason ? `cancelled: ${reason}` : "cancelled";
  return closeExecution(tx, traceId, {
    error: why,
    skipReason: `skipped: ${why}`,
    stopReason: why,
    cancelled: true,
    cancelReason: reason,
    now,
  });
}

/** Cancels a running run of the caller's; false when it had already finished. 404 when not theirs. */
export async function cancelExecution({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { traceId: string; reason?: string | null };
}): Promise<boolean> {
  const [row] = await ctx.db
    .select({ traceId: executions.traceId })
    .from(executions)
    .where(and(inTenant(executions, tenantOf(ctx.actor)), eq(executions.traceId, input.traceId)));
  if (!row) throw notFound("execution", { trace_id: input.traceId });
  return withTransaction(ctx.db, (tx) => cancelInTx(tx, input.traceId, input.reason ?? null, ctx.now()));
}
