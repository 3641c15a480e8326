// For domains that check workflow names against a tenant's workflows (an app's purpose assignments).
import { and, eq, inArray } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import { workflows, workflowVersions } from "../tables.ts";

/** Of `names`, those the tenant has as workflows, and those of them with an approved version. */
export async function workflowStates(
  db: Executor,
  input: { tenant: Tenant; names: string[] },
): Promise<{ existing: Set<string>; approved: Set<string> }> {
  if (input.names.length === 0) return { existing: new Set(), approved: new Set() };
  const rows = await db
    .select({ name: workflows.name, status: workflowVersions.status })
    .from(workflows)
    .leftJoin(workflowVersions, eq(workflowVersions.workflowId, workflows.id))
    .where(and(inTenant(workflows, input.tenant), inArray(workflows.name, input.names)));
  return {
    existing: new Set(rows.map((row) => row.name)),
    approved: new Set(rows.filter((row) => row.status === "approved").map((row) => row.name)),
  };
}
