// Triage as the SRE app's purpose `alert_triage`. The default workflow, `sre-alert-triage`, is the
// built-in classifier as one engine step (`sre.classify_alert_criticality`); while it is the one a
// tenant's triage runs, the classification job runs the classifier directly, with no engine run per
// alert. When the tenant assigns another approved workflow, the job starts it per alert through the
// alerts' port, and the run's end classifies the alert from the run's last output (or falls back).
import {
  applyTriageRun,
  CLASSIFY_STEP,
  classifyStoredAlert,
  setTriageWorkflowPort,
  TRIAGE_PURPOSE,
  type TriageWorkflowPort,
} from "../alerts/index.ts";
import {
  type ActionOutcome,
  type ExecutionEnd,
  lastStageOutput,
  onExecutionEnd,
  type RegisteredActionInput,
  readRunResult,
  registerActionType,
  StepError,
  startExecution,
} from "../automation/index.ts";
import type { Executor } from "../core/db/database.ts";
import { workflowForPurpose } from "./purposes.ts";
import { CLASSIFY_ACTION, TRIAGE_WORKFLOW } from "./triage-default.ts";

async function classifyStep({ ctx, run, context }: RegisteredActionInput): Promise<ActionOutcome> {
  const alertId = (context.input as { alert_id?: unknown } | null)?.alert_id;
  if (typeof alertId !== "string") throw new StepError("the run's input names no alert_id", false);
  const result = await classifyStoredAlert(ctx, run.tenant, alertId);
  if (!result) throw new StepError(`alert ${alertId} not found`, false);
  const output = {
    attention: result.attention,
    reason: result.attentionReason,
    short_summary: result.shortSummary,
    initial_investigation: result.initialInvestigation,
    step: CLASSIFY_STEP,
    ...(result.refinedBy && { refined_by: result.refinedBy }),
  };
  return { output, artifacts: [], structuredOutput: null };
}

const triagePort: TriageWorkflowPort = {
  async choose(db, tenant) {
    const chosen = await workflowForPurpose(db, { tenant, purpose: TRIAGE_PURPOSE });
    return chosen && chosen.workflowName !== TRIAGE_WORKFLOW.name ? chosen.workflowName : null;
  },
  async start(ctx, tenant, { workflow, bucket, input }) {
    const run = await startExecution({
      ctx,
      tenant,
      input: {
        target: { type: "workflow", name: workflow },
        input,
        title: `Triage: ${input.alert.title}`.slice(0, 300),
        initiator: "app:sre",
        sourceApp: "sre",
        sourceMetadata: { purpose: TRIAGE_PURPOSE, alert_id: input.alert_id, bucket },
        background: true,
      },
    });
    return run.traceId;
  },
};

async function endTriageRun(db: Executor, end: ExecutionEnd): Promise<void> {
  const run = await readRunResult(db, end.traceId);
  if (run?.sourceApp !== "sre" || run.sourceMetadata.purpose !== TRIAGE_PURPOSE) return;
  const { alert_id: alertId, bucket } = run.sourceMetadata;
  if (!alertId || !bucket) return;
  const completed = end.status === "completed";
  await applyTriageRun(db, {
    tenant: run.tenant,
    alertId,
    bucket,
    workflow: run.targetName,
    traceId: end.traceId,
    input: run.input,
    output: completed ? await lastStageOutput(db, end.traceId) : null,
    error: completed ? null : (end.error ?? "the run ended without completing"),
    now: end.now,
  });
}

/** Plugs the classifier step, the run-end listener and the alerts' triage port in. */
export function configureTriage(): void {
  registerActionType(CLASSIFY_ACTION, classifyStep);
  onExecutionEnd(endTriageRun);
  setTriageWorkflowPort(triagePort);
}
