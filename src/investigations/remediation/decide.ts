// A person's decision on a proposed change. Approval claims the proposal (proposed -> approving, a
// conditional update, so two approvals never push twice), pushes it as a new branch of the git
// integration's remote, then records approved; a push that fails returns it to proposed with the
// error. Approving an approved change, or rejecting a rejected one, answers it unchanged. A claim
// left by a server that stopped mid-push is taken over by the next approval once it is older than any
// push can take (each git command has its own time limit), so the change is never stuck.
import { tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { AppError, badRequest, conflict } from "../../core/errors.ts";
import { readIntegrationConnection } from "../../integrations/index.ts";
import { findInvestigation, readInvestigation } from "../read-investigations.ts";
import type {
  Investigation,
  InvestigationRemediation,
  RemediationApproval,
  RemediationRejection,
} from "../schemas.ts";
import { GitError } from "./git.ts";
import { pushChange } from "./propose.ts";
import { moveRemediation } from "./remediation.ts";

function notDecidable(id: string, remediation: InvestigationRemediation | null): AppError {
  const status = remediation?.status ?? "none";
  return conflict(`investigation ${id} has no proposed change to decide on (remediation: ${status})`, {
    id,
    remediation: status,
  });
}

/** Longer than clone, apply, commit and push can take together under git.ts's per-command limit. */
const STALE_CLAIM_MS = 5 * 60_000;

const staleClaim = (remediation: InvestigationRemediation | null, now: Date) =>
  remediation?.status === "approving" &&
  typeof remediation.decided_at === "string" &&
  now.getTime() - Date.parse(remediation.decided_at) > STALE_CLAIM_MS;

async function answer(ctx: CallerCtx, id: string): Promise<Investigation> {
  return (await readInvestigation(ctx.db, id)) as Investigation;
}

export async function approveRemediation({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string; body: RemediationApproval };
}): Promise<Investigation> {
  if (input.body.branch !== undefined && /\.lock(\/|$)/.test(input.body.branch)) {
    throw badRequest("branch", "a part of a git branch name cannot end in .lock");
  }
  const row = await findInvestigation(ctx, input.id);
  const proposal = row.remediation;
  if (proposal?.status === "approved") return answer(ctx, row.id);
  const stale = staleClaim(proposal, ctx.now());
  if ((proposal?.status !== "proposed" && !stale) || !proposal?.diff || !proposal.integration) {
    throw notDecidable(row.id, proposal);
  }
  const decidedBy = `user:${ctx.actor.userId}`;
  const claimed = {
    ...proposal,
    status: "approving" as const,
    reason: "pushing the approved change",
    decided_by: decidedBy,
    decided_at: ctx.now().toISOString(),
  };
  const took = stale
    ? await moveRemediation(ctx.db, row.id, "approving", claimed, proposal.decided_at ?? undefined)
    : await moveRemediation(ctx.db, row.id, "proposed", claimed);
  if (!took) {
    const now = (await findInvestigation(ctx, row.id)).remediation;
    if (now?.status === "approved") return answer(ctx, row.id);
    throw notDecidable(row.id, now);
  }

  const branch = input.body.branch ?? `vigil/remediation-${row.id.slice(0, 8)}`;
  const connection = await readIntegrationConnection(ctx.db, ctx.secrets, {
    tenant: tenantOf(ctx.actor),
    name: proposal.integration,
  });
  try {
    if (connection?.type !== "git") {
      throw new GitError("push", `the git integration ${proposal.integration} no longer exists`);
    }
    const { commit } = await pushChange(connection, ctx.config, {
      diff: proposal.diff,
      branch,
      message: `${proposal.summary ?? "Proposed change"}\n\n${proposal.reasoning ?? ""}\nInvestigation: ${row.id}\nApproved by: ${decidedBy}\n`,
    });
    await moveRemediation(ctx.db, row.id, "approving", {
      ...proposal,
      status: "approved",
      reason: `pushed as ${branch}`,
      branch,
      commit,
      decided_by: decidedBy,
      decided_at: ctx.now().toISOString(),
      comment: input.body.comment ?? null,
      error: null,
    });
  } catch (err) {
    await moveRemediation(ctx.db, row.id, "approving", {
      ...proposal,
      status: "proposed",
      error: err instanceof Error ? err.message : String(err),
    });
    if (!(err instanceof GitError)) throw err;
    throw new AppError("UNAVAILABLE", `the approved change could not be pushed: ${err.message}`, {
      id: row.id,
      integration: proposal.integration,
      branch,
    });
  }
  return answer(ctx, row.id);
}

export async function rejectRemediation({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { id: string; body: RemediationRejection };
}): Promise<Investigation> {
  const row = await findInvestigation(ctx, input.id);
  const proposal = row.remediation;
  if (proposal?.status === "rejected") return answer(ctx, row.id);
  if (proposal?.status !== "proposed") throw notDecidable(row.id, proposal);
  const rejected: InvestigationRemediation = {
    ...proposal,
    status: "rejected",
    reason: "declined; nothing was pushed",
    decided_by: `user:${ctx.actor.userId}`,
    decided_at: ctx.now().toISOString(),
    comment: input.body.comment ?? null,
  };
  if (!(await moveRemediation(ctx.db, row.id, "proposed", rejected))) {
    const now = (await findInvestigation(ctx, row.id)).remediation;
    if (now?.status === "rejected") return answer(ctx, row.id);
    throw notDecidable(row.id, now);
  }
  return answer(ctx, row.id);
}
