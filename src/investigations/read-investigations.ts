// listInvestigations and getInvestigation: the caller's tenant only (another tenant's is a 404).
import { and, asc, count, desc, eq, inArray, type SQL } from "drizzle-orm";
import { inTenant, tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import type { Executor } from "../core/db/database.ts";
import { notFound } from "../core/errors.ts";
import { type InvestigationRow, presentInvestigation } from "./present.ts";
import type { Investigation, InvestigationStatus } from "./schemas.ts";
import { investigationEvidence, investigations } from "./tables.ts";

async function withEvidence(db: Executor, rows: InvestigationRow[]): Promise<Investigation[]> {
  if (rows.length === 0) return [];
  const evidence = await db
    .select()
    .from(investigationEvidence)
    .where(
      inArray(
        investigationEvidence.investigationId,
        rows.map((row) => row.id),
      ),
    )
    .orderBy(asc(investigationEvidence.seq));
  return rows.map((row) =>
    presentInvestigation(
      row,
      evidence.filter((item) => item.investigationId === row.id),
    ),
  );
}

export async function listInvestigations({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { status?: InvestigationStatus; alert_id?: string; page: number; page_size: number };
}) {
  const conditions: SQL[] = [inTenant(investigations, tenantOf(ctx.actor))];
  if (input.status) conditions.push(eq(investigations.status, input.status));
  if (input.alert_id) conditions.push(eq(investigations.alertId, input.alert_id));
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    ctx.db
      .select()
      .from(investigations)
      .where(where)
      .orderBy(desc(investigations.startedAt), desc(investigations.id))
      .limit(input.page_size)
      .offset((input.page - 1) * input.page_size),
    ctx.db.select({ total: count() }).from(investigations).where(where),
  ]);
  return {
    investigations: await withEvidence(ctx.db, rows),
    page: input.page,
    page_size: input.page_size,
    total: total?.total ?? 0,
  };
}

/** The tenant's investigation row, or 404. */
export async function findInvestigation(ctx: CallerCtx, id: string): Promise<InvestigationRow> {
  const [row] = await ctx.db
    .select()
    .from(investigations)
    .where(and(inTenant(investigations, tenantOf(ctx.actor)), eq(investigations.id, id)));
  if (!row) throw notFound("investigation", { id });
  return row;
}

export async function getInvestigation({ ctx, input }: { ctx: CallerCtx; input: { id: string } }) {
  const row = await findInvestigation(ctx, input.id);
  const [investigation] = await withEvidence(ctx.db, [row]);
  return investigation as Investigation;
}

export async function readInvestigation(db: Executor, id: string): Promise<Investigation | null> {
  const [row] = await db.select().from(investigations).where(eq(investigations.id, id));
  if (!row) return null;
  const [investigation] = await withEvidence(db, [row]);
  return investigation ?? null;
}
