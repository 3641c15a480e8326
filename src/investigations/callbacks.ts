// The two callbacks an investigating agent uses (the spec names them sre_update_investigation_status
// and sre_submit_investigation_evidence), served as HTTP endpoints for external agents and used by
// Vigil's own investigator the same way.
import { type InvestigatedAlert, readInvestigatedAlert } from "../alerts/index.ts";
import { tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { withTransaction } from "../core/db/database.ts";
import { AppError, badRequest } from "../core/errors.ts";
import { recordEvidence } from "./evidence.ts";
import { expressionOf } from "./investigator/gather.ts";
import { isFinal, lockInvestigation, moveInvestigation, summaryOrWhy } from "./lifecycle.ts";
import { findInvestigation, readInvestigation } from "./read-investigations.ts";
import { resultSummaryOf } from "./result-summary.ts";
import type {
  EvidenceSubmission,
  HypothesisSubmission,
  Investigation,
  InvestigationHypothesis,
  InvestigationStructuredRCA,
  StatusUpdate,
} from "./schemas.ts";

function finished(id: string, status: string): AppError {
  return new AppError("CONFLICT", `investigation ${id} is ${status} and cannot change`, {
    id,
    status,
  });
}

type Text = [field: string, value: string];

/** Text a caller must give (a label, a statement, a summary's sentence): blank is a 400 naming it. */
function requireText(texts: Text[]): void {
  for (const [field, value] of texts) {
    if (value.trim() === "") throw badRequest(field, "must hold text, not only white space");
  }
}

export async function submitInvestigationEvidence({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string; body: EvidenceSubmission };
}): Promise<Investigation> {
  const row = await findInvestigation(ctx, input.id);
  requireText(input.body.evidence.map((item, index) => [`evidence.${index}.title`, item.title]));
  await withTransaction(ctx.db, async (tx) => {
    // Under the row's lock: a concurrent move to a final status waits for this evidence, or this
    // reads the final status and adds nothing, as a status callback on a final investigation.
    const status = (await lockInvestigation(tx, row.id)) ?? row.status;
    if (isFinal(status)) throw finished(row.id, status);
    await recordEvidence(ctx, tx, {
      tenant: tenantOf(ctx.actor),
      investigationId: row.id,
      items: input.body.evidence,
    });
  });
  return (await readInvestigation(ctx.db, row.id)) as Investigation;
}

export async function updateInvestigationStatus({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string; body: StatusUpdate };
}): Promise<Investigation> {
  const row = await findInvestigation(ctx, input.id);
  const { body } = input;
  const texts = (body.hypotheses ?? []).map(
    (item, index): Text => [`hypotheses.${index}.statement`, item.statement],
  );
  if (body.plain_summary) {
    const { what_broke, what_to_do, how_we_got_here } = body.plain_summary;
    texts.push(
      ["plain_summary.what_broke", what_broke],
      ["plain_summary.what_to_do", what_to_do],
      ...how_we_got_here.map((step, index): Text => [`plain_summary.how_we_got_here.${index}`, step]),
    );
  }
  requireText(texts);
  const reporter = `user:${ctx.actor.userId}`;
  const summary = summaryOf(body, reporter);
  // The alert is read only for an RCA built from this report: where it fired is what it affects.
  const rca = body.plain_summary && {
    ...(row.structuredRca ??
      reportedRca(body, row, await readInvestigatedAlert(ctx.db, tenantOf(ctx.actor), row.alertId))),
    plain_summary: body.plain_summary,
  };
  const now = ctx.now();
  const final = body.status !== "running";
  const moved = await withTransaction(ctx.db, (tx) =>
    moveInvestigation(
      tx,
      { id: row.id },
      {
        status: body.status,
        updatedAt: now,
        ...(final && { finishedAt: now }),
        ...(summary !== undefined && { resultSummary: summary }),
        ...(body.hypotheses && { hypotheses: rank(body.hypotheses.map(completeHypothesis)) }),
        ...(rca && { structuredRca: rca }),
        triageMetadata: row.triageMetadata && { ...row.triageMetadata, investigator: reporter },
      },
    ),
  );
  if (!moved) throw finished(row.id, row.status);
  return (await readInvestigation(ctx.db, row.id)) as Investigation;
}

/**
 * The summary a status update writes: the one it gives. A failure reported without one keeps the
 * summary the investigation has, else says why it ended, as a run that fails does: the run's own end
 * passes over an investigation that is already final.
 */
function summaryOf(body: StatusUpdate, reporter: string) {
  if (body.result_summary) return body.result_summary;
  if (body.status === "failed") {
    return summaryOrWhy(`Investigation failed: reported failed by ${reporter} without a summary`);
  }
  // A conclusion reported with its plain summary reads as the investigator's own would.
  const plain = body.plain_summary;
  if (body.status !== "completed" || !plain) return body.result_summary;
  const top = rank((body.hypotheses ?? []).map(completeHypothesis)).find(
    (item) => item.status !== "rejected",
  );
  return summaryOrWhy(resultSummaryOf(plain.verdict, top?.statement ?? plain.what_broke, plain.what_to_do));
}

/**
 * An RCA from what an external agent reported, for an investigation that has none yet: its root
 * cause is the top hypothesis still standing (confirmed or open), and what it affects and its trigger
 * come from the investigated alert, as the investigator's own RCA has them.
 */
function reportedRca(
  body: StatusUpdate,
  row: { resultSummary: string | null; hypotheses: InvestigationHypothesis[] },
  alert: InvestigatedAlert | null,
): Omit<InvestigationStructuredRCA, "plain_summary"> {
  const hypotheses = body.hypotheses ? rank(body.hypotheses.map(completeHypothesis)) : row.hypotheses;
  const top = hypotheses.find((item) => item.status !== "rejected");
  const plain = body.plain_summary;
  return {
    summary: body.result_summary ?? row.resultSummary ?? plain?.what_broke ?? "",
    root_cause: top?.statement ?? null,
    category: plain?.verdict === "alert_is_misconfigured" ? "alert_rule" : "unknown",
    affected: {
      service: alert?.scope.service ?? null,
      host: alert?.scope.host ?? null,
      cluster: alert?.scope.cluster ?? null,
    },
    trigger: (alert && expressionOf(alert.links)?.expr) ?? null,
    contributing_factors: [],
    remediation: plain?.what_to_do ? [plain.what_to_do] : [],
    confidence: top?.confidence ?? 0,
  };
}

/** A submitted hypothesis with the fields it left out as null, and nothing else. */
function completeHypothesis(submitted: HypothesisSubmission): InvestigationHypothesis {
  return {
    statement: submitted.statement,
    confidence: submitted.confidence ?? null,
    status: submitted.status ?? null,
    rationale: submitted.rationale ?? null,
  };
}

/** Ranked: open and confirmed by confidence, rejected ones last. */
export function rank<T extends { confidence: number | null; status: string | null }>(items: T[]): T[] {
  const weight = (item: T) => (item.status === "rejected" ? -1 : (item.confidence ?? 0));
  return [...items].sort((a, b) => weight(b) - weight(a));
}
