// Remediation on request, from the ask to the proposal. An investigation started with
// remediation_requested (or an operator_message that asks for a fix) records the ask: ignored while
// the sre app's remediation mode is off, pending otherwise. When the investigator concludes that the
// alert is misconfigured with a concrete fix, it proposes the change to the tenant's git integration
// as a diff (the session artifacts remediation.diff and remediation.md); a person approves or rejects
// it (decide.ts). Every move is a conditional update from the status it expects.
import { and, eq, sql } from "drizzle-orm";
import type { ActionOutcome } from "../../automation/index.ts";
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import type { IntegrationConnection } from "../../integrations/index.ts";
import type { Conclusion } from "../investigator/conclude.ts";
import type { InvestigateAlertRequest, InvestigationRemediation, RemediationStatus } from "../schemas.ts";
import { investigations } from "../tables.ts";
import { baseBranchOf, GitError, type RemoteConfig } from "./git.ts";
import { asksForRemediation, remediationModeOf } from "./mode.ts";
import { proposeRuleChange } from "./propose.ts";

type RequestedBy = InvestigationRemediation["requested_by"];

export function remediationOf(
  status: RemediationStatus,
  reason: string,
  requestedBy: RequestedBy,
  more: Partial<InvestigationRemediation> = {},
): InvestigationRemediation {
  return {
    status,
    reason,
    requested_by: requestedBy,
    integration: null,
    base_branch: null,
    base_commit: null,
    summary: null,
    file: null,
    diff: null,
    reasoning: null,
    branch: null,
    commit: null,
    decided_by: null,
    decided_at: null,
    comment: null,
    error: null,
    ...more,
  };
}

/** What asked for a remediation, or null when nothing did. */
export function remediationAsk(request: InvestigateAlertRequest): RequestedBy | null {
  if (request.remediation_requested) return "remediation_requested";
  return asksForRemediation(request.operator_message) ? "operator_message" : null;
}

const MODE_OFF =
  "remediation mode is off for this workspace: set config.remediation to on_request with PUT /api/v1/apps/sre to receive proposed changes";

/** The remediation an investigation starts with: null when not asked, ignored while the mode is off. */
export async function startRemediation(
  db: Executor,
  tenant: Tenant,
  input: { ask: RequestedBy | null; customWorkflow: string | null },
): Promise<InvestigationRemediation | null> {
  if (!input.ask) return null;
  if ((await remediationModeOf(db, tenant)) === "off") return remediationOf("ignored", MODE_OFF, input.ask);
  if (input.customWorkflow) {
    return remediationOf(
      "not_proposed",
      `the workflow assigned to alert_investigation (${input.customWorkflow}) proposes no changes`,
      input.ask,
    );
  }
  return remediationOf("pending", "awaiting the investigator's conclusion", input.ask);
}

/** Moves the remediation from `from` to `next`; false when it was not in `from` any more. */
export async function moveRemediation(
  db: Executor,
  investigationId: string,
  from: RemediationStatus,
  next: InvestigationRemediation,
  /** Only if the record still carries this decision time (a retry takes over one stale claim once). */
  fromDecidedAt?: string,
): Promise<boolean> {
  const rows = await db
    .update(investigations)
    .set({ remediation: next })
    .where(
      and(
        eq(investigations.id, investigationId),
        sql`${investigations.remediation}->>'status' = ${from}`,
        fromDecidedAt === undefined
          ? undefined
          : sql`${investigations.remediation}->>'decided_at' = ${fromDecidedAt}`,
      ),
    )
    .returning({ id: investigations.id });
  return rows.length > 0;
}

function reasoningOf(input: {
  alertTitle: string;
  rootCause: string;
  summary: string;
  why: string;
  file: string;
  integration: string;
  baseBranch: string;
}): string {
  return [
    `# Proposed change: ${input.summary}`,
    "",
    `Alert: ${input.alertTitle}`,
    "",
    `Cause: ${input.rootCause}`,
    "",
    `Why this change: ${input.why}.`,
    "",
    `It edits ${input.file} in ${input.integration} (from ${input.baseBranch}). Nothing is pushed until a person approves it: POST /app/sre/api/v1/investigations/<id>/remediation/approve pushes it as a new branch; /reject declines it.`,
    "",
  ].join("\n");
}

/**
 * At the end of the investigator's run: turns a pending remediation into a proposal, or into
 * not_proposed with why. Returns the artifacts to store in the run's session.
 */
export async function settleRemediation(input: {
  db: Executor;
  tenant: Tenant;
  investigation: { id: string; remediation: InvestigationRemediation | null };
  alert: { title: string; alertname: string | null };
  conclusion: Conclusion;
  connections: IntegrationConnection[];
  config: RemoteConfig;
  signal?: AbortSignal;
}): Promise<ActionOutcome["artifacts"]> {
  const { db, investigation, conclusion } = input;
  const current = investigation.remediation;
  if (current?.status !== "pending") return [];
  const ask = current.requested_by;
  const settle = (next: InvestigationRemediation) => moveRemediation(db, investigation.id, "pending", next);

  if ((await remediationModeOf(db, input.tenant)) === "off") {
    await settle(remediationOf("ignored", MODE_OFF, ask));
    return [];
  }
  const verdict = conclusion.rca.plain_summary?.verdict ?? "not_enough_information";
  const repositories = input.connections.filter((item) => item.type === "git" && item.url);
  const alertname = input.alert.alertname;
  const reason =
    repositories.length === 0
      ? "no git integration: create one (type git, url its remote) to receive proposed changes"
      : verdict !== "alert_is_misconfigured"
        ? `the verdict is ${verdict}: a change to the alert's rule is proposed only when the alert is misconfigured`
        : !conclusion.fix
          ? `the cause (${conclusion.rca.root_cause ?? "unknown"}) has no change a rule file could make`
          : !alertname
            ? "the alert has no alertname to find its rule by"
            : null;
  if (reason || !conclusion.fix || !alertname) {
    await settle(remediationOf("not_proposed", reason ?? "nothing to propose", ask));
    return [];
  }

  const misses: string[] = [];
  for (const connection of repositories) {
    try {
      const proposal = await proposeRuleChange(
        connection,
        input.config,
        { alertname, fix: conclusion.fix },
        input.signal,
      );
      if (proposal.file === null) {
        misses.push(proposal.reason);
        continue;
      }
      const baseBranch = baseBranchOf(connection);
      const reasoning = reasoningOf({
        alertTitle: input.alert.title,
        rootCause: conclusion.rca.root_cause ?? conclusion.rca.summary,
        summary: proposal.summary,
        why: conclusion.fix.why,
        file: proposal.file,
        integration: connection.name,
        baseBranch,
      });
      const proposed = remediationOf("proposed", `awaiting approval: ${proposal.summary}`, ask, {
        integration: connection.name,
        base_branch: baseBranch,
        base_commit: proposal.baseCommit,
        summary: proposal.summary,
        file: proposal.file,
        diff: proposal.diff,
        reasoning,
      });
      if (!(await settle(proposed))) return [];
      return [
        {
          name: "remediation.diff",
          mimeType: "text/x-diff; charset=utf-8",
          content: Buffer.from(proposal.diff),
        },
        { name: "remediation.md", mimeType: "text/markdown; charset=utf-8", content: Buffer.from(reasoning) },
      ];
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
      misses.push(`${connection.name}: ${err.message}`);
    }
  }
  await settle(remediationOf("not_proposed", misses.join("; "), ask));
  return [];
}
