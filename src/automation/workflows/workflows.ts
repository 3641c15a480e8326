// Workflows and their versions, exactly as the spec's state table says: create makes version 1 a
// draft; a new version is a draft copied from the latest; only a draft changes; approval is final.
// Runs use the newest approved version, pinned when they start; a draft never runs implicitly.
import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, max, sql } from "drizzle-orm";
import { inTenant, type Tenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import { type Executor, type Tx, withTransaction } from "../../core/db/database.ts";
import { AppError, badRequest, notFound } from "../../core/errors.ts";
import { agentNames } from "../agents/agents.ts";
import type { Stage, Workflow, WorkflowInput, WorkflowVersion, WorkflowWrite } from "../schemas.ts";
import { workflows, workflowVersions } from "../tables.ts";
import { presentReasons, workflowReadiness } from "./readiness.ts";
import { validateInputs, validateStages } from "./validate-workflow.ts";

type WorkflowRow = typeof workflows.$inferSelect;
type VersionRow = typeof workflowVersions.$inferSelect;

interface Content {
  description: string;
  inputs: VersionRow["inputs"];
  stages: VersionRow["stages"];
  routingExamples: string[];
}

function presentVersion(row: VersionRow): WorkflowVersion {
  return {
    version: row.version,
    status: row.status as WorkflowVersion["status"],
    description: row.description,
    inputs: row.inputs,
    stages: row.stages,
    routing_examples: row.routingExamples,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    approved_at: row.approvedAt?.toISOString() ?? null,
  };
}

/** Workflows with their versions and readiness: one read of the versions and one of the agents for the whole list. */
async function presentAll(
  db: Executor,
  ctx: CallerCtx,
  rows: WorkflowRow[],
  includeDrafts: boolean,
): Promise<Workflow[]> {
  if (rows.length === 0) return [];
  const versions = await db
    .select()
    .from(workflowVersions)
    .where(
      sql`${workflowVersions.workflowId} = any(${boundArray(
        rows.map((row) => row.id),
        "uuid",
      )})`,
    )
    .orderBy(desc(workflowVersions.version));
  const agents = await agentNames(db, ctx);
  const byWorkflow = new Map<string, VersionRow[]>();
  for (const version of versions) {
    const list = byWorkflow.get(version.workflowId) ?? [];
    list.push(version);
    byWorkflow.set(version.workflowId, list);
  }
  return rows.map((row) => presentWorkflow(row, byWorkflow.get(row.id) ?? [], agents, includeDrafts));
}

async function present(ctx: CallerCtx, row: WorkflowRow, includeDrafts: boolean): Promise<Workflow> {
  const [workflow] = await presentAll(ctx.db, ctx, [row], includeDrafts);
  return workflow as Workflow;
}

/** `versions` newest first. */
function presentWorkflow(
  row: WorkflowRow,
  versions: VersionRow[],
  agents: Set<string>,
  includeDrafts: boolean,
): Workflow {
  const approved = versions.find((version) => version.status === "approved") ?? null;
  const draft = versions.find((version) => version.status === "draft") ?? null;
  const reasons = approved ? workflowReadiness(row.name, approved.stages, (name) => agents.has(name)) : [];
  const notApproved = approved
    ? []
    : [
        {
          errCode: "TARGET_NOT_FOUND",
          msg: `workflow ${row.name} has no approved version`,
          resolution_hint: `approve a version: POST /platform/api/v1/workflows/${row.name}/versions/{version}/approve`,
        },
      ];
  return {
    name: row.name,
    routing_status: row.routingStatus,
    latest_version: versions[0]?.version ?? 0,
    approved_version: approved?.version ?? null,
    draft_version: draft?.version ?? null,
    ready: reasons.length === 0 && approved !== null,
    not_ready_reasons: [...notApproved, ...presentReasons(reasons)],
    versions: versions.filter((version) => includeDrafts || version.status !== "draft").map(presentVersion),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function validContent(
  ctx: CallerCtx,
  db: Executor,
  base: Content,
  write: WorkflowWrite,
): Promise<Content> {
  const content: Content = {
    description: write.description ?? base.description,
    inputs: write.inputs ?? base.inputs,
    stages: write.stages ?? base.stages,
    routingExamples: write.routing_examples ?? base.routingExamples,
  };
  validateInputs(content.inputs);
  // Read on the caller's executor: inside a transaction, a query on ctx.db would wait for the
  // transaction's own connection on PGlite (one connection) and never finish.
  const agents = await agentNames(db, ctx);
  validateStages(content.stages, (name) => agents.has(name));
  return content;
}

async function findWorkflow(db: Executor, ctx: CallerCtx, name: string): Promise<WorkflowRow> {
  const [row] = await db
    .select()
    .from(workflows)
    .where(and(inTenant(workflows, tenantOf(ctx.actor)), eq(workflows.name, name)));
  if (!row) throw notFound("workflow", { name });
  return row;
}

/**
 * The workflow's row, locked until the transaction ends. Every edit of a workflow or of its draft
 * takes it first, so concurrent edits run one after the other, each reading what the one before
 * wrote; taken before any version's row, in the order a delete takes them.
 */
async function lockWorkflow(tx: Tx, ctx: CallerCtx, name: string): Promise<WorkflowRow> {
  const [row] = await tx
    .select()
    .from(workflows)
    .where(and(inTenant(workflows, tenantOf(ctx.actor)), eq(workflows.name, name)))
    .for("update");
  if (!row) throw notFound("workflow", { name });
  return row;
}

async function findVersion(
  db: Executor,
  workflow: WorkflowRow,
  version: number,
  { lock = false } = {},
): Promise<VersionRow> {
  const query = db
    .select()
    .from(workflowVersions)
    .where(and(eq(workflowVersions.workflowId, workflow.id), eq(workflowVersions.version, version)));
  const [row] = lock ? await query.for("update") : await query;
  if (!row) throw notFound("workflow version", { name: workflow.name, version });
  return row;
}

async function latestVersion(db: Executor, workflow: WorkflowRow): Promise<VersionRow> {
  const [row] = await db
    .select()
    .from(workflowVersions)
    .where(eq(workflowVersions.workflowId, workflow.id))
    .orderBy(desc(workflowVersions.version))
    .limit(1);
  if (!row) throw new Error(`workflow ${workflow.name} has no versions`);
  return row;
}

export async function createWorkflow({ ctx, input }: { ctx: CallerCtx; input: WorkflowWrite }) {
  if (!input.name) throw new AppError("VALIDATION_FAILED", "name: is required", { field: "name" });
  const name = input.name;
  const content = await validContent(
    ctx,
    ctx.db,
    { description: "", inputs: [], stages: [], routingExamples: [] },
    input,
  );
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  const row = await withTransaction(ctx.db, async (tx) => {
    const [created] = await tx
      .insert(workflows)
      .values({
        id: randomUUID(),
        orgId: tenant.orgId,
        ownerId: tenant.ownerId,
        name,
        routingStatus: input.routing_status ?? "active",
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    // The spec gives createWorkflow one failure status, 400 (409 is for agents and drafts): a taken
    // name is a bad name.
    if (!created) throw badRequest("name", `workflow ${name} already exists`);
    await tx.insert(workflowVersions).values({
      id: randomUUID(),
      workflowId: created.id,
      version: 1,
      status: "draft",
      ...content,
      createdAt: now,
      updatedAt: now,
    });
    return created;
  });
  return present(ctx, row, true);
}

export async function getWorkflow({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; includeDrafts: boolean };
}) {
  return present(ctx, await findWorkflow(ctx.db, ctx, input.name), input.includeDrafts);
}

export async function listWorkflows({ ctx, input }: { ctx: CallerCtx; input: { includeDrafts: boolean } }) {
  const rows = await ctx.db
    .select()
    .from(workflows)
    .where(inTenant(workflows, tenantOf(ctx.actor)))
    .orderBy(asc(workflows.name));
  return presentAll(ctx.db, ctx, rows, input.includeDrafts);
}

function hasContent(write: WorkflowWrite): boolean {
  return ["description", "inputs", "stages", "routing_examples"].some((key) => key in write);
}

/** Updates the routing status, and the draft's content when the body carries content. */
export async function updateWorkflow({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; write: WorkflowWrite };
}) {
  const { write } = input;
  if (write.name !== undefined && write.name !== input.name) {
    throw new AppError("VALIDATION_FAILED", "name: must equal the workflow name in the path", {
      field: "name",
    });
  }
  await withTransaction(ctx.db, async (tx) => {
    const workflow = await lockWorkflow(tx, ctx, input.name);
    if (hasContent(write)) {
      const [draft] = await tx
        .select()
        .from(workflowVersions)
        .where(and(eq(workflowVersions.workflowId, workflow.id), eq(workflowVersions.status, "draft")))
        .for("update");
      if (!draft) {
        throw new AppError("NOT_A_DRAFT", `workflow ${input.name} has no draft: create a version first`, {
          name: input.name,
        });
      }
      await writeDraft(ctx, tx, draft, write);
    }
    // Only a given routing status is written: none given leaves the stored one as it is.
    await tx
      .update(workflows)
      .set({ ...(write.routing_status && { routingStatus: write.routing_status }), updatedAt: ctx.now() })
      .where(eq(workflows.id, workflow.id));
  });
  return present(ctx, await findWorkflow(ctx.db, ctx, input.name), true);
}

/** `draft` was read locked, in `tx`: the fields not given keep what it holds now. */
async function writeDraft(ctx: CallerCtx, tx: Tx, draft: VersionRow, write: WorkflowWrite): Promise<void> {
  const content = await validContent(ctx, tx, draft, write);
  // Conditional: a version approved is never written, whatever the caller read.
  const rows = await tx
    .update(workflowVersions)
    .set({ ...content, updatedAt: ctx.now() })
    .where(and(eq(workflowVersions.id, draft.id), eq(workflowVersions.status, "draft")))
    .returning({ id: workflowVersions.id });
  if (rows.length === 0)
    throw new AppError("NOT_A_DRAFT", `version ${draft.version} is approved and cannot change`);
}

export async function createWorkflowVersion({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const now = ctx.now();
  const workflow = await withTransaction(ctx.db, async (tx) => {
    // Locked: the copy is of the latest version as the last edit of its draft left it.
    const workflow = await lockWorkflow(tx, ctx, input.name);
    const latest = await latestVersion(tx, workflow);
    const [top] = await tx
      .select({ version: max(workflowVersions.version) })
      .from(workflowVersions)
      .where(eq(workflowVersions.workflowId, workflow.id));
    const created = await tx
      .insert(workflowVersions)
      .values({
        id: randomUUID(),
        workflowId: workflow.id,
        version: (top?.version ?? 0) + 1,
        status: "draft",
        description: latest.description,
        inputs: latest.inputs,
        stages: latest.stages,
        routingExamples: latest.routingExamples,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: workflowVersions.id });
    if (created.length === 0) {
      throw new AppError(
        "DRAFT_EXISTS",
        `workflow ${input.name} already has a draft (version ${latest.version})`,
        {
          name: input.name,
          draft_version: latest.version,
        },
      );
    }
    return workflow;
  });
  return present(ctx, workflow, true);
}

export async function updateWorkflowVersion({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; version: number; write: WorkflowWrite };
}) {
  if (input.write.name !== undefined && input.write.name !== input.name) {
    throw new AppError("VALIDATION_FAILED", "name: must equal the workflow name in the path", {
      field: "name",
    });
  }
  // One transaction: the draft's content and the routing status change together or not at all.
  await withTransaction(ctx.db, async (tx) => {
    const workflow = await lockWorkflow(tx, ctx, input.name);
    const version = await findVersion(tx, workflow, input.version, { lock: true });
    if (version.status !== "draft") {
      throw new AppError("NOT_A_DRAFT", `version ${input.version} is approved and cannot change`, {
        name: input.name,
        version: input.version,
      });
    }
    await writeDraft(ctx, tx, version, input.write);
    if (input.write.routing_status) {
      await tx
        .update(workflows)
        .set({ routingStatus: input.write.routing_status, updatedAt: ctx.now() })
        .where(eq(workflows.id, workflow.id));
    }
  });
  return present(ctx, await findWorkflow(ctx.db, ctx, input.name), true);
}

export async function approveWorkflowVersion({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; version: number };
}) {
  const workflow = await findWorkflow(ctx.db, ctx, input.name);
  await findVersion(ctx.db, workflow, input.version);
  const now = ctx.now();
  const rows = await ctx.db
    .update(workflowVersions)
    .set({ status: "approved", approvedAt: now, approvedBy: ctx.actor.userId, updatedAt: now })
    .where(
      and(
        eq(workflowVersions.workflowId, workflow.id),
        eq(workflowVersions.version, input.version),
        eq(workflowVersions.status, "draft"),
      ),
    )
    .returning({ id: workflowVersions.id });
  if (rows.length === 0) {
    throw new AppError("ALREADY_APPROVED", `version ${input.version} is already approved`, {
      name: input.name,
      version: input.version,
    });
  }
  return present(ctx, workflow, true);
}

/**
 * Removes a deleted workflow's name from what a higher domain keeps by name (an app's workflow
 * assignments), in the delete's transaction: a port, the apps domain registers it.
 */
type WorkflowDeleted = (tx: Executor, input: { tenant: Tenant; name: string; now: Date }) => Promise<void>;

const onDelete = new Map<string, WorkflowDeleted>();

/** Registers (or replaces) what one holder does when a workflow it may name is deleted. */
export function onWorkflowDeleted(holder: string, drop: WorkflowDeleted): void {
  onDelete.set(holder, drop);
}

/** One caller of concurrent deletes deletes; the others find nothing left and answer 404. */
export async function deleteWorkflow({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const tenant = tenantOf(ctx.actor);
  await withTransaction(ctx.db, async (tx) => {
    const rows = await tx
      .delete(workflows)
      .where(and(inTenant(workflows, tenant), eq(workflows.name, input.name)))
      .returning({ id: workflows.id });
    if (rows.length === 0) throw notFound("workflow", { name: input.name });
    for (const drop of onDelete.values()) await drop(tx, { tenant, name: input.name, now: ctx.now() });
  });
}

/** The version a run would pin: the newest approved one, or null. */
export async function runnableVersion(db: Executor, workflowId: string): Promise<VersionRow | null> {
  const [row] = await db
    .select()
    .from(workflowVersions)
    .where(and(eq(workflowVersions.workflowId, workflowId), eq(workflowVersions.status, "approved")))
    .orderBy(desc(workflowVersions.version))
    .limit(1);
  return row ?? null;
}

export interface ProvidedWorkflow {
  name: string;
  description: string;
  inputs: WorkflowInput[];
  stages: Stage[];
}

/**
 * For a higher domain that ships a workflow (the SRE app's default investigation): makes sure the
 * tenant has `workflow.name`, creating it with one approved version when absent (routing inactive:
 * Ask never picks it on its own). A workflow of that name the tenant already has is left as it is.
 * Concurrent first calls: the insert skips on the unique name, so one creates and the others reuse.
 */
export async function provisionWorkflow(
  tx: Executor,
  tenant: Tenant,
  workflow: ProvidedWorkflow,
  now: Date,
): Promise<boolean> {
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
  if (!created) return false;
  await tx.insert(workflowVersions).values({
    id: randomUUID(),
    workflowId: created.id,
    version: 1,
    status: "approved",
    description: workflow.description,
    inputs: workflow.inputs,
    stages: workflow.stages,
    routingExamples: [],
    createdAt: now,
    updatedAt: now,
    approvedAt: now,
    approvedBy: null,
  });
  return true;
}
