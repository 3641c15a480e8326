// The investigations domain: a deep dive per alert, run as a workflow on the automation engine.
// app.ts, jobs.ts and start.ts (and the apps domain, for the workflow chooser) reach it only here.
import type { FastifyInstance } from "fastify";
import { InvestigationRef } from "../alerts/index.ts";
import { onExecutionEnd, registerActionType } from "../automation/index.ts";
import type { JobDefinition } from "../core/queue/catalog.ts";
import { INVESTIGATOR_STEPS } from "./investigator/steps.ts";
import { autoInvestigateJob } from "./jobs.ts";
import { endInvestigationOfRun } from "./lifecycle.ts";
import { investigationRoutes } from "./routes.ts";
import {
  EvidenceSubmission,
  InvestigateAlertRequest,
  InvestigateResponse,
  Investigation,
  InvestigationEvidence,
  InvestigationHypothesis,
  InvestigationPlainSummary,
  InvestigationPriorIncident,
  InvestigationRemediation,
  InvestigationStructuredRCA,
  InvestigationTriageMetadata,
  ListInvestigationsResponse,
  RemediationApproval,
  RemediationRejection,
  StatusUpdate,
} from "./schemas.ts";

export { investigateAlert } from "./investigate.ts";
export { getInvestigation, listInvestigations } from "./read-investigations.ts";
export { REMEDIATION_MODES, setRemediationModeReader } from "./remediation/mode.ts";
export { InvestigateAlertRequest, ListInvestigationsQuery } from "./schemas.ts";
export {
  DEFAULT_WORKFLOW as INVESTIGATION_WORKFLOW,
  INVESTIGATION_PURPOSE,
  setInvestigationWorkflowChooser,
} from "./workflow.ts";

export async function registerInvestigations(app: FastifyInstance): Promise<void> {
  for (const schema of [
    InvestigationRef,
    InvestigationEvidence,
    InvestigationHypothesis,
    InvestigationPlainSummary,
    InvestigationStructuredRCA,
    InvestigationPriorIncident,
    InvestigationRemediation,
    InvestigationTriageMetadata,
    Investigation,
    ListInvestigationsResponse,
    InvestigateAlertRequest,
    InvestigateResponse,
    EvidenceSubmission,
    StatusUpdate,
    RemediationApproval,
    RemediationRejection,
  ]) {
    app.addSchema(schema);
  }
  await app.register(investigationRoutes);
}

export const INVESTIGATION_JOBS: JobDefinition[] = [autoInvestigateJob];

/** Plugs the investigator's steps and the status-follows-the-run listener into the engine. */
export function configureInvestigations(): void {
  for (const [name, step] of INVESTIGATOR_STEPS) registerActionType(name, step);
  onExecutionEnd(endInvestigationOfRun);
}
