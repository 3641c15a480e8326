// The deterministic investigator as four engine actions (registered in index.ts through the
// engine's port): each reads the run's input { investigation_id, alert_id } and the earlier steps'
// outputs, so each is one node of the run's trace. Evidence is stored as it is found; the last step
// writes the conclusion and the report (a session artifact), and the run's end sets the status.
import { and, eq } from "drizzle-orm";
import { correlateStormOf, readInvestigatedAlert, reclassifyAfterRoleChange } from "../../alerts/index.ts";
import { type ActionOutcome, type RegisteredActionInput, StepError } from "../../automation/index.ts";
import { inTenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import { listTenantIntegrationConnections } from "../../integrations/index.ts";
import type { Usage } from "../../llm/index.ts";
import { recordEvidence } from "../evidence.ts";
import { markRunning, moveInvestigation } from "../lifecycle.ts";
import { settleRemediation } from "../remediation/remediation.ts";
import type { InvestigationPriorIncident } from "../schemas.ts";
import { investigations } from "../tables.ts";
import { conclude, reportOf } from "./conclude.ts";
import { type Gathered, gather } from "./gather.ts";
import { reviewWithLlm } from "./llm-review.ts";
import { findPriorIncidents } from "./prior-incidents.ts";
import { type IntegrationFindings, queryIntegrations } from "./query-integrations.ts";
import { STEP_ACTIONS } from "./step-names.ts";

/** How long the gather step waits for a correlator that holds the alert's storm scope. */
const STORM_WAIT_MS = 250;

const outcome = (output: unknown, usage: Usage | null = null): ActionOutcome => ({
  output,
  artifacts: [],
  structuredOutput: null,
  usage,
});

async function subject({ ctx, run, context }: RegisteredActionInput) {
  const input = (context.input ?? {}) as { investigation_id?: unknown; alert_id?: unknown };
  if (typeof input.investigation_id !== "string" || typeof input.alert_id !== "string") {
    throw new StepError("the run's input names no investigation_id and alert_id", false);
  }
  const [investigation] = await ctx.db
    .select()
    .from(investigations)
    .where(and(inTenant(investigations, run.tenant), eq(investigations.id, input.investigation_id)));
  if (!investigation) throw new StepError(`investigation ${input.investigation_id} not found`, false);
  const alert = await readInvestigatedAlert(ctx.db, run.tenant, investigation.alertId);
  if (!alert) throw new StepError(`alert ${investigation.alertId} not found`, false);
  return { investigation, alert };
}

function stageOutput<T>(context: Record<string, unknown>, stage: string): T {
  const stages = (context.stages ?? {}) as Record<string, { output?: unknown }>;
  const output = stages[stage]?.output;
  if (output === undefined || output === null)
    throw new StepError(`the ${stage} step's output is missing`, false);
  return output as T;
}

async function gatherStep(input: RegisteredActionInput): Promise<ActionOutcome> {
  const { ctx, run } = input;
  const { investigation } = await subject(input);
  await markRunning(ctx.db, investigation.id, ctx.now());
  // The storm is half the story for a symptom: place what is pending in the alert's scope first,
  // then read the alert again. A failure leaves the storm as the correlator loop last wrote it.
  try {
    await correlateStormOf(ctx.db, run.tenant, investigation.alertId, {
      now: ctx.now(),
      impact: { environmentCriticality: ctx.config.environmentCriticality },
      waitMs: STORM_WAIT_MS,
      reclassify: reclassifyAfterRoleChange(ctx.enqueue),
    });
  } catch (err) {
    ctx.log.warn({ err, alert_id: investigation.alertId }, "storm correlation before investigation failed");
  }
  const { alert } = await subject(input);
  const { gathered, evidence } = await gather(ctx.db, run.tenant, alert);
  await recordEvidence(ctx, ctx.db, {
    tenant: run.tenant,
    investigationId: investigation.id,
    items: evidence,
    skipRecorded: true,
  });
  return outcome(gathered);
}

async function queryStep(input: RegisteredActionInput): Promise<ActionOutcome> {
  const { ctx, run, context, signal } = input;
  const { investigation } = await subject(input);
  const gathered = stageOutput<Gathered>(context, "gather");
  const connections = await listTenantIntegrationConnections(ctx.db, ctx.secrets, run.tenant);
  const { findings, evidence } = await queryIntegrations(
    connections,
    ctx.config,
    gathered,
    ctx.now(),
    signal,
  );
  await recordEvidence(ctx, ctx.db, {
    tenant: run.tenant,
    investigationId: investigation.id,
    items: evidence,
    skipRecorded: true,
  });
  return outcome(findings);
}

async function priorStep(input: RegisteredActionInput): Promise<ActionOutcome> {
  const { ctx, run } = input;
  const { alert } = await subject(input);
  return outcome({ prior_incidents: await findPriorIncidents(ctx.db, run.tenant, alert) });
}

async function concludeStep(input: RegisteredActionInput): Promise<ActionOutcome> {
  const { ctx, context } = input;
  const { investigation, alert } = await subject(input);
  const gathered = stageOutput<Gathered>(context, "gather");
  const findings = stageOutput<IntegrationFindings>(context, "query_integrations");
  const { prior_incidents: prior } = stageOutput<{ prior_incidents: InvestigationPriorIncident[] }>(
    context,
    "prior_incidents",
  );
  const deterministic = conclude(gathered, findings, prior);
  const review = ctx.config.llm
    ? await reviewWithLlm({
        llm: ctx.config.llm,
        gathered,
        findings,
        prior,
        deterministic,
        log: ctx.log,
        signal: input.signal,
      })
    : null;
  const conclusion = review?.conclusion ?? deterministic;
  const concluded = await moveInvestigation(
    ctx.db,
    { id: investigation.id },
    {
      resultSummary: conclusion.resultSummary,
      structuredRca: conclusion.rca,
      hypotheses: conclusion.hypotheses,
      priorIncidents: prior,
      triageMetadata: investigation.triageMetadata && {
        ...investigation.triageMetadata,
        integrations_consulted: findings.consulted,
        investigator: review?.investigator ?? "deterministic",
      },
      updatedAt: ctx.now(),
    },
  );
  // The model's tokens count in the run's cost whatever became of its answer.
  const usage = review?.usage ?? null;
  // Concluded meanwhile through the status callback (an agent, an operator): that record stands, and
  // a report or a proposed change of this run's own would contradict it.
  if (!concluded) {
    return {
      ...outcome(
        { verdict: null, result_summary: null, superseded: "the investigation was already final" },
        usage,
      ),
      structuredOutput: await supersededOutput(ctx.db, investigation.id),
    };
  }
  if (review?.citations.length) {
    await recordEvidence(ctx, ctx.db, {
      tenant: input.run.tenant,
      investigationId: investigation.id,
      items: review.citations,
      skipRecorded: true,
    });
  }
  // A requested change is proposed (never pushed) once the conclusion is stored.
  const remediationArtifacts = await settleRemediation({
    db: ctx.db,
    tenant: input.run.tenant,
    investigation,
    alert: gathered.alert,
    conclusion,
    connections: await listTenantIntegrationConnections(ctx.db, ctx.secrets, input.run.tenant),
    config: ctx.config,
    signal: input.signal,
  });
  const report = reportOf(alert.title, conclusion, prior);
  const plain = conclusion.rca.plain_summary;
  return {
    output: { verdict: plain?.verdict ?? null, result_summary: conclusion.resultSummary },
    artifacts: [
      { name: "report.md", mimeType: "text/markdown; charset=utf-8", content: Buffer.from(report, "utf8") },
      ...remediationArtifacts,
    ],
    structuredOutput: {
      summary: conclusion.resultSummary,
      impact: plain?.what_broke ?? "",
      recommendations: plain?.what_to_do ?? "",
      confidence: String(conclusion.rca.confidence),
    },
    usage,
  };
}

/**
 * The run's summary when the investigation was concluded without it: who concluded it and what they
 * said, as a sentence (the session shows it), rather than the step's output as JSON.
 */
async function supersededOutput(
  db: Executor,
  id: string,
): Promise<NonNullable<ActionOutcome["structuredOutput"]>> {
  const [final] = await db
    .select({
      status: investigations.status,
      resultSummary: investigations.resultSummary,
      triageMetadata: investigations.triageMetadata,
    })
    .from(investigations)
    .where(eq(investigations.id, id));
  const by = final?.triageMetadata?.investigator;
  const summary = final?.resultSummary?.trim();
  return {
    summary: [
      `The investigation was already ${final?.status ?? "final"}${by ? ` by ${by}` : ""} when this run concluded.`,
      ...(summary ? [`Its summary: ${summary}`] : []),
    ].join(" "),
    impact: "",
    recommendations: "",
    confidence: "",
  };
}

export const INVESTIGATOR_STEPS = [
  [STEP_ACTIONS.gather, gatherStep],
  [STEP_ACTIONS.queryIntegrations, queryStep],
  [STEP_ACTIONS.priorIncidents, priorStep],
  [STEP_ACTIONS.conclude, concludeStep],
] as const;
