// For domains that check workflow names against a tenant's workflows (an app's purpose assignments).
import { and, eq, inArray } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import { workflows, workflowVersions } from "../tables.ts";

/**
 * Of `names`, those the tenant has as workflows, those of them with an approved version, and the
 * inputs the version that runs (the newest approved) requires. `lock` holds the workflows found FOR
 * SHARE until the caller's transaction ends: a delete of one waits for it, and one in flight is
 * waited for (its workflow then counts as missing).
 */
export async function workflowStates(
  db: Executor,
  input: { tenant: Tenant; names: string[]; lock?: boolean },
): Promise<{ existing: Set<string>; approved: Set<string>; requiredInputs: Map<string, string[]> }> {
  const requiredInputs = new Map<string, string[]>();
  if (input.names.length === 0) return { existing: new Set(), approved: new Set(), requiredInputs };
  const query = db
    .select({
      name: workflows.name,
      status: workflowVersions.status,
      version: workflowVersions.version,
      inputs: workflowVersions.inputs,
    })
    .from(workflows)
    .leftJoin(workflowVersions, eq(workflowVersions.workflowId, workflows.id))
    .where(and(inTenant(workflows, input.tenant), inArray(workflows.name, input.names)))
    .orderBy(workflows.name, workflowVersions.version);
  // Only the workflow rows (the nullable side of an outer join cannot be locked): a delete takes them.
  const rows = input.lock ? await query.for("share", { of: workflows }) : await query;
  for (const row of rows) {
    // In version order: the newest approved version's inputs are the last set.
    if (row.status === "approved") {
      requiredInputs.set(
        row.name,
        (row.inputs ?? []).filter((item) => item.required).map((item) => item.name),
      );
    }
  }
  return {
    existing: new Set(rows.map((row) => row.name)),
    approved: new Set(requiredInputs.keys()),
    requiredInputs,
  };
}
