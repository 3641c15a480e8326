// For domains that provision workflows of their own (an app's default workflow per purpose) and check
// names against a tenant's workflows. Provisioning is idempotent: an existing workflow of that name
// is left as the tenant has it.
import { randomUUID } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import type { Stage } from "../schemas.ts";
import { workflows, workflowVersions } from "../tables.ts";

export interface ProvisionedWorkflow {
  name: string;
  description: string;
  stages: Stage[];
}

/** Creates `workflow` with an approved version 1 unless the tenant has a workflow of that name. */
export async function ensureApprovedWorkflow(
  tx: Executor,
  input: { tenant: Tenant; workflow: ProvisionedWorkflow; now: Date },
): Promise<void> {
  const { tenant, workflow, now } = input;
  const [created] = await tx
    .insert(workflows)
    .values({
      id: randomUUID(),
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      name: workflow.name,
      routingStatus: "inactive",
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: workflows.id });
  if (!created) return;
  await tx.insert(workflowVersions).values({
    id: randomUUID(),
    workflowId: created.id,
    version: 1,
    status: "approved",
    description: workflow.description,
    inputs: [],
    stages: workflow.stages,
    routingExamples: [],
    createdAt: now,
    updatedAt: now,
    approvedAt: now,
    approvedBy: tenant.ownerId,
  });
}

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
