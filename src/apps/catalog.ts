// The app catalog. Apps are code: a catalog entry declares what the app is, the purposes it serves
// and the workflow Vigil provisions for each purpose when a tenant installs it (purposes.ts).
import type { ProvidedWorkflow } from "../automation/index.ts";
import { INVESTIGATION_WORKFLOW, REMEDIATION_MODES } from "../investigations/index.ts";
import { TRIAGE_WORKFLOW } from "./triage-default.ts";

export interface PurposeDefinition {
  purpose: string;
  description: string;
  /** The workflow provisioned (approved) on install; runs the purpose unless an assignment says otherwise. */
  defaultWorkflow: ProvidedWorkflow;
  /** The inputs every run of the purpose is given: a workflow assigned to it may require no other. */
  runInputs: readonly string[];
}

export interface CatalogApp {
  slug: string;
  displayName: string;
  description: string;
  category: string;
  appVersion: string;
  purposes: PurposeDefinition[];
  /** Path of its MCP endpoint (Streamable HTTP), or null when it advertises none. */
  mcpPath: string | null;
  /** Config keys the app reads, each with the values it takes (the first is the default when unset). */
  settings: Record<string, readonly string[]>;
}

const SRE: CatalogApp = {
  slug: "sre",
  displayName: "SRE",
  description:
    "Alert ingest from 16 monitoring sources, storms, impact, triage and investigations, with discovery of the services behind the alerts",
  category: "Operations",
  appVersion: "0.1.0",
  purposes: [
    {
      purpose: "alert_triage",
      description: "Classifies a new or re-fired alert: attention, reason, what to look at first",
      // The built-in classifier as one step (triage-default.ts).
      defaultWorkflow: TRIAGE_WORKFLOW,
      // TriageRunInput (alerts' triage-workflow.ts).
      runInputs: ["alert_id", "alert", "bucket", "bucket_size", "classification"],
    },
    {
      purpose: "alert_investigation",
      description: "Deep-dive investigation of an alert: evidence, hypotheses, a summary",
      // The investigations domain's own workflow: the deterministic investigator's steps.
      defaultWorkflow: INVESTIGATION_WORKFLOW,
      runInputs: INVESTIGATION_WORKFLOW.inputs.map((input) => input.name),
    },
  ],
  mcpPath: "/app/sre/mcp",
  // remediation: whether investigations may propose a change to a git integration when asked.
  settings: { remediation: REMEDIATION_MODES },
};

export const CATALOG: readonly CatalogApp[] = [SRE];

export function catalogApp(slug: string): CatalogApp | null {
  return CATALOG.find((app) => app.slug === slug) ?? null;
}
