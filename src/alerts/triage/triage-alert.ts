// An operator's changes to an alert: ignore it (with a reason) or set it back to active, and
// classify it (attention and its reason). Analysis results and derived fields are never writable.
// Each change is a conditional update and lands in the alert's history.
import { and, eq, inArray, sql } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { withTransaction } from "../../core/db/database.ts";
import { AppError, notFound } from "../../core/errors.ts";
import { getAlert } from "../console/read-alerts.ts";
import { queueForStorms } from "../correlation/storms.ts";
import { type AlertPatch, type AlertV1, READ_ONLY_FIELDS } from "../schemas.ts";
import { alertEvents, alerts } from "../tables.ts";
import { classifyAlertsJob } from "./classify-job.ts";

/** The reason an analyst's attention carries when they give none. */
export const OPERATOR_ATTENTION_REASON = "set by an operator";

function rejectReadOnly(patch: Record<string, unknown>): void {
  const field = READ_ONLY_FIELDS.find((name) => name in patch);
  if (field) {
    throw new AppError("VALIDATION_FAILED", `${field}: is set by Vigil's analysis and cannot be written`, {
      field,
      location: "body",
    });
  }
}

export async function triageAlert({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string; patch: AlertPatch };
}): Promise<AlertV1> {
  const patch = { ...input.patch };
  rejectReadOnly(patch as Record<string, unknown>);
  // A blank reason is no reason (the console trims what an operator typed; the API does the same).
  if (typeof patch.ignore_reason === "string") patch.ignore_reason = patch.ignore_reason.trim() || null;
  if (typeof patch.attention_reason === "string")
    patch.attention_reason = patch.attention_reason.trim() || null;
  const current = await getAlert({ ctx, input: { id: input.id } });
  const changes: Partial<typeof alerts.$inferInsert> = {};
  const allowedFrom: string[] = [current.status];

  if (patch.status === "ignored") {
    if (current.status === "resolved") {
      throw new AppError("VALIDATION_FAILED", "status: a resolved alert cannot be ignored", {
        field: "status",
      });
    }
    // An ignored alert leaves its storm, and one set active again may join one: the correlator looks.
    // Ignoring an ignored alert again keeps its reason unless a new one is sent.
    const keepReason = current.status === "ignored" && patch.ignore_reason === undefined;
    Object.assign(changes, {
      status: "ignored",
      ignoredBy: "operator",
      ...(!keepReason && { ignoreReason: patch.ignore_reason ?? null }),
    });
  } else if (patch.status === "active") {
    if (current.status !== "ignored") {
      throw new AppError("VALIDATION_FAILED", "status: only an ignored alert can be set back to active", {
        field: "status",
      });
    }
    // The reason would be written into the history and then dropped with the ignore.
    if (patch.ignore_reason != null) {
      throw new AppError(
        "VALIDATION_FAILED",
        "ignore_reason: an alert set back to active has no ignore reason; send it without one",
        { field: "ignore_reason" },
      );
    }
    Object.assign(changes, { status: "active", ignoredBy: null, ignoreReason: null });
  } else if (patch.ignore_reason !== undefined) {
    if (current.status !== "ignored") {
      throw new AppError("VALIDATION_FAILED", "ignore_reason: only an ignored alert has an ignore reason", {
        field: "ignore_reason",
      });
    }
    changes.ignoreReason = patch.ignore_reason;
  }
  if (patch.attention !== undefined) {
    changes.attention = patch.attention;
    changes.attentionByOperator = true;
  }
  if (patch.attention_reason !== undefined) changes.attentionReason = patch.attention_reason;
  else if (patch.attention !== undefined && patch.attention !== current.attention) {
    // The classifier's reason explained its own label, not the analyst's.
    changes.attentionReason = OPERATOR_ATTENTION_REASON;
  }
  if (Object.keys(changes).length === 0) return current;

  await withTransaction(ctx.db, async (tx) => {
    // Conditional on the status read above: a delivery that changed it meanwhile wins, and the
    // operator gets a 409 to look again rather than a silent overwrite.
    const [updated] = await tx
      .update(alerts)
      .set({ ...changes, updatedAt: ctx.now(), eventSeq: sql`${alerts.eventSeq} + 1` })
      .where(
        and(
          inTenant(alerts, tenantOf(ctx.actor)),
          eq(alerts.id, current.id),
          inArray(alerts.status, allowedFrom),
        ),
      )
      .returning({ seq: alerts.eventSeq, status: alerts.status });
    if (!updated)
      throw new AppError("CONFLICT", "the alert changed meanwhile; read it again", { id: current.id });
    await tx.insert(alertEvents).values({
      alertId: current.id,
      seq: updated.seq,
      at: ctx.now(),
      kind: patch.status === "ignored" ? "ignored" : patch.status === "active" ? "unignored" : "triaged",
      actor: "operator",
      sourceEvent: null,
      statusBefore: current.status,
      statusAfter: updated.status,
      invocationId: null,
      detail: { key_id: ctx.actor.keyId, changes: patch },
    });
    if (changes.status !== undefined) await queueForStorms(tx, [current.id]);
  });
  const result = await getAlert({ ctx, input: { id: current.id } }).catch(() => null);
  if (!result) throw notFound("alert", { id: input.id });
  return result;
}

/** Classifies an alert again (after a failure, or on an analyst's request): it is queued alone. */
export async function reclassifyAlert({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string };
}): Promise<AlertV1> {
  const current = await getAlert({ ctx, input });
  const tenant = tenantOf(ctx.actor);
  const bucket = `alert:${current.id}`;
  await withTransaction(ctx.db, async (tx) => {
    const [updated] = await tx
      .update(alerts)
      .set({
        analysisStatus: "queued",
        triageBucket: bucket,
        attentionByOperator: false,
        eventSeq: sql`${alerts.eventSeq} + 1`,
      })
      .where(and(inTenant(alerts, tenant), eq(alerts.id, current.id)))
      .returning({ seq: alerts.eventSeq, status: alerts.status });
    // In the history, and the point after which an analyst's attention gives way to the new result.
    if (updated) {
      await tx.insert(alertEvents).values({
        alertId: current.id,
        seq: updated.seq,
        at: ctx.now(),
        kind: "reclassify_requested",
        actor: "operator",
        sourceEvent: null,
        statusBefore: updated.status,
        statusAfter: updated.status,
        invocationId: null,
        detail: { key_id: ctx.actor.keyId },
      });
    }
    await ctx.enqueue(tx, classifyAlertsJob, {
      orgId: tenant.orgId,
      ownerId: tenant.ownerId,
      buckets: [bucket],
    });
  });
  return getAlert({ ctx, input: { id: current.id } });
}
