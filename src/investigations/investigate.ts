// Starting an investigation (the spec's state table): the first investigate of an alert creates one
// and launches its workflow run; a repeat returns the newest one unchanged; force_new creates a new
// one forked from the newest (parent_investigation_id). The check and the create run under a
// transaction-scoped advisory lock on the alert, so concurrent first calls create exactly one.
// The run, its session and its first stage jobs are written in the same transaction.
import { randomUUID } from "node:crypto";
import { and, desc, eq, sql } from "drizzle-orm";
import { readInvestigatedAlert, setAlertInvestigation } from "../alerts/index.ts";
import { startExecution } from "../automation/index.ts";
import { initiatorOf, inTenant, type Tenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx, Ctx } from "../core/context.ts";
import { withTransaction } from "../core/db/database.ts";
import { notFound } from "../core/errors.ts";
import { type InvestigationRow, refOfInvestigation } from "./present.ts";
import { remediationAsk, startRemediation } from "./remediation/remediation.ts";
import type { InvestigateAlertRequest, InvestigationTriageMetadata } from "./schemas.ts";
import { investigations } from "./tables.ts";
import { DEFAULT_INVESTIGATION_WORKFLOW, investigationWorkflow } from "./workflow.ts";

export interface StartInvestigationInput {
  alertId: string;
  request: InvestigateAlertRequest;
  trigger: InvestigationTriageMetadata["trigger"];
  requestedBy: string;
}

export async function startInvestigation({
  ctx,
  tenant,
  input,
}: {
  ctx: Ctx;
  tenant: Tenant;
  input: StartInvestigationInput;
}): Promise<{ row: InvestigationRow; created: boolean }> {
  return withTransaction(ctx.db, async (tx) => {
    const alert = await readInvestigatedAlert(tx, tenant, input.alertId);
    if (!alert) throw notFound("alert", { id: input.alertId });
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${`vigil.investigate:${alert.id}`}, 0))`,
    );
    const [newest] = await tx
      .select()
      .from(investigations)
      .where(and(inTenant(investigations, tenant), eq(investigations.alertId, alert.id)))
      .orderBy(desc(investigations.startedAt), desc(investigations.id))
      .limit(1);
    if (newest && !input.request.force_new) return { row: newest, created: false };
    // Read under the lock, and after the newest: concurrent forks then each start after the one
    // they fork from, so "newest first" and the parent chain agree.
    const now = newest ? laterOf(ctx.now(), newest.startedAt) : ctx.now();

    const { name: workflowName, fallback } = await investigationWorkflow(tx, tenant, now);
    const id = randomUUID();
    const ask = remediationAsk(input.request);
    const remediation = await startRemediation(tx, tenant, {
      ask,
      customWorkflow: workflowName === DEFAULT_INVESTIGATION_WORKFLOW ? null : workflowName,
    });
    const run = await startExecution({
      ctx: { ...ctx, db: tx },
      tenant,
      input: {
        target: { type: "workflow", name: workflowName },
        input: { investigation_id: id, alert_id: alert.id },
        title: `Investigation: ${alert.title}`.slice(0, 300),
        initiator: input.requestedBy,
        sourceApp: "sre",
        sourceMetadata: { alert_id: alert.id, investigation_id: id },
        // Asked for by no one: its stages go after those of runs someone waits for.
        background: input.trigger === "auto_investigate",
      },
    });
    const [row] = await tx
      .insert(investigations)
      .values({
        id,
        orgId: tenant.orgId,
        ownerId: tenant.ownerId,
        alertId: alert.id,
        status: "queued",
        traceId: run.traceId,
        sessionId: run.sessionId,
        workflowName,
        parentInvestigationId: newest?.id ?? null,
        hypotheses: [],
        priorIncidents: [],
        triageMetadata: {
          trigger: input.trigger,
          requested_by: input.requestedBy,
          workflow_name: workflowName,
          workflow_fallback: fallback,
          alert_status: alert.status,
          alert_severity: alert.sourceSeverity,
          forked_from: newest?.id ?? null,
          remediation_requested: ask !== null,
          operator_message: input.request.operator_message ?? null,
          integrations_consulted: [],
          investigator: null,
        },
        remediationRequested: ask !== null,
        remediation,
        operatorMessage: input.request.operator_message ?? null,
        startedAt: now,
        updatedAt: now,
      })
      .returning();
    if (!row) throw new Error("investigation insert returned nothing");
    await setAlertInvestigation(tx, { alertId: alert.id, ref: refOfInvestigation(row) });
    return { row, created: true };
  });
}

/** investigateAlert for a caller (the HTTP route and the MCP tool): a manual start by the caller. */
export async function investigateAlert({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { alertId: string; request: InvestigateAlertRequest };
}) {
  const { row } = await startInvestigation({
    ctx,
    tenant: tenantOf(ctx.actor),
    input: { ...input, trigger: "manual", requestedBy: initiatorOf(ctx.actor) },
  });
  return { investigation: refOfInvestigation(row) };
}

/** `now`, or a millisecond past `previous` when the clock has not moved beyond it. */
function laterOf(now: Date, previous: Date): Date {
  return now.getTime() > previous.getTime() ? now : new Date(previous.getTime() + 1);
}
