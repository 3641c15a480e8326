// The default workflow of the purpose `alert_triage`: Vigil's built-in classifier as one engine
// step. Its action is registered in triage.ts; while a tenant's triage runs this workflow, the
// classification job runs the classifier directly instead of a run per alert.
import type { ProvidedWorkflow } from "../automation/index.ts";

export const CLASSIFY_ACTION = "sre.classify_alert_criticality";

/** Its output is what every triage workflow answers (docs/apps.md, "Triage by workflow"). */
export const TRIAGE_WORKFLOW: ProvidedWorkflow = {
  name: "sre-alert-triage",
  description:
    "Default triage of the SRE app: Vigil's built-in classifier (severity, environment, storm role, the alert's own history; refined by the LLM when one is configured)",
  inputs: [{ name: "alert_id", required: true, description: "The alert to classify" }],
  stages: [{ id: "classify", name: "Classify the alert's criticality", action_type: CLASSIFY_ACTION }],
};
