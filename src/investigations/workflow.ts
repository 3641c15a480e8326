// The workflow an investigation runs. Vigil ships a default one (the deterministic investigator's
// four steps), provisioned approved in a tenant the first time it investigates. The SRE app may
// assign another approved workflow to the purpose `alert_investigation`: it plugs in a chooser
// (setInvestigationWorkflowChooser); without one, or when it names none, the default runs.

import { type ProvidedWorkflow, provisionWorkflow, workflowStates } from "../automation/index.ts";
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";
import { STEP_ACTIONS } from "./investigator/step-names.ts";

export const INVESTIGATION_PURPOSE = "alert_investigation";
export const DEFAULT_INVESTIGATION_WORKFLOW = "sre-alert-investigation";

/** Returns the workflow name assigned to `purpose` for the tenant, or null for the default. */
export type InvestigationWorkflowChooser = (
  db: Executor,
  tenant: Tenant,
  purpose: typeof INVESTIGATION_PURPOSE,
) => Promise<string | null>;

let chooser: InvestigationWorkflowChooser | null = null;

/** The port for the apps domain; the returned function removes the chooser again. */
export function setInvestigationWorkflowChooser(next: InvestigationWorkflowChooser): () => void {
  chooser = next;
  return () => {
    if (chooser === next) chooser = null;
  };
}

/**
 * The workflow an investigation runs: the one assigned to the purpose while its newest approved
 * version runs on an investigation's inputs; otherwise the default, provisioned again if it was
 * deleted, and why the assigned one did not run. Every alert of an auto_investigate registration
 * gets its investigation even after its assigned workflow was deleted or changed.
 */
export async function investigationWorkflow(
  db: Executor,
  tenant: Tenant,
  now: Date,
): Promise<{ name: string; fallback: string | null }> {
  const chosen = chooser ? await chooser(db, tenant, INVESTIGATION_PURPOSE) : null;
  let fallback: string | null = null;
  if (chosen && chosen !== DEFAULT_INVESTIGATION_WORKFLOW) {
    const required = (await workflowStates(db, { tenant, names: [chosen] })).requiredInputs.get(chosen);
    const given = new Set(DEFAULT_WORKFLOW.inputs.map((input) => input.name));
    const missing = (required ?? []).filter((name) => !given.has(name));
    if (required && missing.length === 0) return { name: chosen, fallback: null };
    fallback = required
      ? `workflow ${chosen} requires ${missing.join(", ")}, which an investigation does not give`
      : `workflow ${chosen} does not exist or has no approved version`;
  }
  await provisionWorkflow(db, tenant, DEFAULT_WORKFLOW, now);
  return { name: DEFAULT_INVESTIGATION_WORKFLOW, fallback };
}

/** Its inputs are what every investigation workflow receives: a replacement declares the same. */
export const DEFAULT_WORKFLOW: ProvidedWorkflow = {
  name: DEFAULT_INVESTIGATION_WORKFLOW,
  description:
    "Vigil's deterministic alert investigation: gathers the alert, its history, storm and neighbours, queries the tenant's Prometheus and Alertmanager integrations, finds prior incidents and concludes with ranked hypotheses, an RCA and a verdict",
  inputs: [
    { name: "investigation_id", required: true, description: "The investigation this run serves" },
    { name: "alert_id", required: true, description: "The alert under investigation" },
  ],
  stages: [
    {
      id: "gather",
      name: "Gather the alert, its history, storm and neighbours",
      action_type: STEP_ACTIONS.gather,
    },
    {
      id: "query_integrations",
      name: "Query Prometheus and Alertmanager",
      action_type: STEP_ACTIONS.queryIntegrations,
      depends_on: ["gather"],
    },
    {
      id: "prior_incidents",
      name: "Find prior incidents",
      action_type: STEP_ACTIONS.priorIncidents,
      depends_on: ["gather"],
    },
    {
      id: "conclude",
      name: "Rank hypotheses and conclude",
      action_type: STEP_ACTIONS.conclude,
      depends_on: ["query_integrations", "prior_incidents"],
    },
  ],
};
