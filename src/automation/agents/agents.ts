// Agents: an LLM tool loop or a built-in deterministic agent, with the integrations and tools it may use.
import { randomUUID } from "node:crypto";
import { and, asc, eq } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import type { Executor } from "../../core/db/database.ts";
import { AppError, conflict, notFound } from "../../core/errors.ts";
import { integrationNamesOf, missingIntegrations } from "../../integrations/index.ts";
import { ACTION_TYPES, type AgentStatus, type RegisterAgentRequest } from "../schemas.ts";
import { agents } from "../tables.ts";
import { agentReadiness, presentReasons } from "../workflows/readiness.ts";
import { validateInputs } from "../workflows/validate-workflow.ts";

export type AgentRow = typeof agents.$inferSelect;

function present(row: AgentRow, integrations: ReadonlySet<string>): AgentStatus {
  const reasons = agentReadiness(row, integrations);
  return {
    name: row.name,
    description: row.description,
    kind: row.kind,
    instructions: row.instructions,
    model: row.model,
    integrations: row.integrations,
    tools: row.tools,
    inputs: row.inputs,
    max_steps: row.maxSteps,
    ready: reasons.length === 0,
    not_ready_reasons: presentReasons(reasons),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function validateAgent(ctx: CallerCtx, input: RegisterAgentRequest): Promise<void> {
  const missing = await missingIntegrations({ ctx, input: { names: input.integrations ?? [] } });
  if (missing.length > 0) {
    throw new AppError("VALIDATION_FAILED", `integrations: ${missing.join(", ")} not found in this tenant`, {
      field: "integrations",
      missing,
    });
  }
  const unknownTools = (input.tools ?? []).filter(
    (tool) => !(ACTION_TYPES as readonly string[]).includes(tool),
  );
  if (unknownTools.length > 0) {
    throw new AppError(
      "VALIDATION_FAILED",
      `tools: unknown ${unknownTools.join(", ")}; known: ${ACTION_TYPES.join(", ")}`,
      {
        field: "tools",
      },
    );
  }
  validateInputs(input.inputs ?? []);
}

function fields(input: RegisterAgentRequest) {
  return {
    name: input.name,
    description: input.description ?? "",
    kind: input.kind,
    instructions: input.instructions ?? "",
    model: input.model ?? null,
    integrations: input.integrations ?? [],
    tools: input.tools ?? [],
    inputs: input.inputs ?? [],
    maxSteps: input.max_steps ?? 8,
  };
}

export async function findAgent(
  db: Executor,
  ctx: Pick<CallerCtx, "actor">,
  name: string,
): Promise<AgentRow | null> {
  const [row] = await db
    .select()
    .from(agents)
    .where(and(inTenant(agents, tenantOf(ctx.actor)), eq(agents.name, name)));
  return row ?? null;
}

export async function registerAgent({ ctx, input }: { ctx: CallerCtx; input: RegisterAgentRequest }) {
  await validateAgent(ctx, input);
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  const [row] = await ctx.db
    .insert(agents)
    .values({
      id: randomUUID(),
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      ...fields(input),
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict(`agent ${input.name} already exists`, { name: input.name });
  return present(row, await integrationNamesOf(ctx.db, tenantOf(ctx.actor)));
}

export async function updateAgent({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { name: string; agent: RegisterAgentRequest };
}) {
  const existing = await findAgent(ctx.db, ctx, input.name);
  if (!existing) throw notFound("agent", { name: input.name });
  if (input.agent.name !== input.name) {
    throw new AppError("VALIDATION_FAILED", "name: must equal the agent name in the path", { field: "name" });
  }
  await validateAgent(ctx, input.agent);
  const [row] = await ctx.db
    .update(agents)
    .set({ ...fields(input.agent), updatedAt: ctx.now() })
    .where(eq(agents.id, existing.id))
    .returning();
  if (!row) throw notFound("agent", { name: input.name });
  return present(row, await integrationNamesOf(ctx.db, tenantOf(ctx.actor)));
}

export async function getAgent({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const row = await findAgent(ctx.db, ctx, input.name);
  if (!row) throw notFound("agent", { name: input.name });
  return present(row, await integrationNamesOf(ctx.db, tenantOf(ctx.actor)));
}

export async function listAgents({ ctx }: { ctx: CallerCtx }) {
  const rows = await ctx.db
    .select()
    .from(agents)
    .where(inTenant(agents, tenantOf(ctx.actor)))
    .orderBy(asc(agents.name));
  const integrations = await integrationNamesOf(ctx.db, tenantOf(ctx.actor));
  return rows.map((row) => present(row, integrations));
}

export async function deleteAgent({ ctx, input }: { ctx: CallerCtx; input: { name: string } }) {
  const rows = await ctx.db
    .delete(agents)
    .where(and(inTenant(agents, tenantOf(ctx.actor)), eq(agents.name, input.name)))
    .returning({ id: agents.id });
  if (rows.length === 0) throw notFound("agent", { name: input.name });
}

/** Names of the tenant's agents, for stage binding checks. */
export async function agentNames(db: Executor, ctx: Pick<CallerCtx, "actor">): Promise<Set<string>> {
  const rows = await db
    .select({ name: agents.name })
    .from(agents)
    .where(inTenant(agents, tenantOf(ctx.actor)));
  return new Set(rows.map((row) => row.name));
}
