// Which workflow runs a purpose (alert_triage, alert_investigation) for a tenant: a caller's named
// workflow when it is assigned to the purpose (or is the app's default), else the assignment marked
// is_default, else the workflow the app provisioned for the purpose.
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";
import { catalogApp } from "./catalog.ts";
import { readInstallation } from "./installations.ts";

export interface PurposeWorkflow {
  workflowName: string;
  /** named: the caller's choice, assigned to the purpose; assigned_default: the is_default assignment; app_default: provisioned on install. */
  via: "named" | "assigned_default" | "app_default";
}

/**
 * The workflow for `purpose` in the tenant; null when the app is not configured there, the purpose
 * is not the app's, or `workflowName` is named but not assigned to the purpose.
 */
export async function workflowForPurpose(
  db: Executor,
  input: { tenant: Tenant; purpose: string; workflowName?: string; appName?: string },
): Promise<PurposeWorkflow | null> {
  const app = catalogApp(input.appName ?? "sre");
  const declared = app?.purposes.find((item) => item.purpose === input.purpose);
  if (!app || !declared) return null;
  const row = await readInstallation(db, input.tenant, app.slug);
  if (!row) return null;
  const assigned = row.workflowAssignments.filter((item) => item.purpose === input.purpose);
  if (input.workflowName) {
    const allowed =
      input.workflowName === declared.defaultWorkflow.name ||
      assigned.some((item) => item.workflow_name === input.workflowName);
    return allowed ? { workflowName: input.workflowName, via: "named" } : null;
  }
  const chosen = assigned.find((item) => item.is_default);
  if (chosen) return { workflowName: chosen.workflow_name, via: "assigned_default" };
  return { workflowName: declared.defaultWorkflow.name, via: "app_default" };
}
