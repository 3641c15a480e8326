// The investigation records of the spec (Investigation, InvestigationEvidence, InvestigationHypothesis,
// InvestigationPlainSummary) and Vigil's decisions where it says "not shown": the status values, and
// the fields of InvestigationStructuredRCA, InvestigationPriorIncident and InvestigationTriageMetadata.
// InvestigationRef is the alerts domain's (it is a field of every alert).
import { type Static, Type } from "@sinclair/typebox";
import { INVESTIGATION_STATUSES, VERDICTS } from "../alerts/index.ts";
import { DateTime, Nullable, OrgQuery, Uuid } from "../core/http/schemas.ts";

const literals = <T extends string>(values: readonly T[], options: object = {}) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );

export { INVESTIGATION_STATUSES, VERDICTS };
export type InvestigationStatus = (typeof INVESTIGATION_STATUSES)[number];

export const InvestigationStatusSchema = literals(INVESTIGATION_STATUSES, {
  description:
    "queued -> running -> completed | failed | cancelled. queued: created and its run launched, no step started; running: the investigator is at work; completed: concluded (hypotheses, RCA, verdict); failed: the run failed; cancelled: its session was terminated. The last three are final",
});

export const EVIDENCE_KINDS = [
  "dashboard",
  "metric",
  "log",
  "trace",
  "runbook",
  "alert_rule",
  "console",
  "code",
  "other",
] as const;
export const EVIDENCE_SOURCES = ["llm", "tool_trace", "runbook", "prior_knowledge"] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];
export type EvidenceSource = (typeof EVIDENCE_SOURCES)[number];
export const HYPOTHESIS_STATUSES = ["open", "confirmed", "rejected"] as const;

export const InvestigationEvidence = Type.Object(
  {
    kind: literals(EVIDENCE_KINDS),
    title: Type.String({ description: "Short label" }),
    url: Type.String({ format: "uri", description: "Absolute http(s) URL" }),
    description: Nullable(
      Type.String({ description: "Context shown under the title; a default from kind or tool when omitted" }),
    ),
    source: literals(EVIDENCE_SOURCES, {
      description:
        "runbook and tool_trace: grounded citations; llm: accepted, labelled unverified outside the allowlist; prior_knowledge: a non-clickable suggestion unless verified",
    }),
    tool_name: Nullable(Type.String({ description: "Only set when source is tool_trace" })),
    verified: Type.Boolean({
      description:
        "Set by Vigil: true when the URL's host is the host of one of the tenant's integrations (their url); never taken from the caller",
    }),
    captured_at: DateTime("When Vigil stored it"),
  },
  { $id: "InvestigationEvidence" },
);
export type InvestigationEvidence = Static<typeof InvestigationEvidence>;

export const InvestigationHypothesis = Type.Object(
  {
    statement: Type.String(),
    confidence: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    status: Nullable(literals(HYPOTHESIS_STATUSES)),
    rationale: Nullable(
      Type.String({
        description: "Why it holds, or for a rejected one why it was rejected (kept, not dropped)",
      }),
    ),
  },
  { $id: "InvestigationHypothesis", description: "Ranked: the most likely first; rejected ones last" },
);
export type InvestigationHypothesis = Static<typeof InvestigationHypothesis>;

export const InvestigationPlainSummary = Type.Object(
  {
    verdict: Type.Optional(literals(VERDICTS)),
    what_broke: Type.Optional(Type.String()),
    what_to_do: Type.Optional(Type.String()),
    how_we_got_here: Type.Optional(Type.Array(Type.String(), { description: "Ordered steps" })),
  },
  {
    $id: "InvestigationPlainSummary",
    description:
      "No field is required; when present all are. verdict: real_problem, alert_is_misconfigured (flapping on its threshold, an absent series, a test or watchdog alert, a threshold always crossed) or not_enough_information (what_to_do names the integration that would have answered)",
  },
);
export type InvestigationPlainSummary = Static<typeof InvestigationPlainSummary>;

export const InvestigationStructuredRCA = Type.Object(
  {
    summary: Type.String({ description: "The root cause in one or two sentences" }),
    root_cause: Nullable(
      Type.String({ description: "The top hypothesis' statement when one is confirmed or open" }),
    ),
    category: literals(["service_fault", "upstream_dependency", "alert_rule", "unknown"] as const, {
      description:
        "service_fault: the alerting service itself; upstream_dependency: a cause alert upstream (storm); alert_rule: the alert is misconfigured; unknown: not enough information",
    }),
    affected: Type.Object(
      {
        service: Nullable(Type.String()),
        host: Nullable(Type.String()),
        cluster: Nullable(Type.String()),
      },
      { description: "What the alert's labels name" },
    ),
    trigger: Nullable(
      Type.String({ description: "What made the alert fire, when known (series and threshold)" }),
    ),
    contributing_factors: Type.Array(Type.String()),
    remediation: Type.Array(Type.String(), { description: "Next actions on the customer system" }),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    plain_summary: Nullable(Type.Ref("InvestigationPlainSummary")),
  },
  { $id: "InvestigationStructuredRCA" },
);
export type InvestigationStructuredRCA = Omit<Static<typeof InvestigationStructuredRCA>, "plain_summary"> & {
  plain_summary: InvestigationPlainSummary | null;
};

export const InvestigationPriorIncident = Type.Object(
  {
    alert_id: Uuid(
      "The earlier alert (same tenant only); the investigated alert itself for one of its own earlier episodes",
    ),
    title: Type.String(),
    source_type: Type.String(),
    triggered_at: DateTime(),
    resolved_at: Nullable(DateTime()),
    match: literals(["same_series", "same_service", "similar_text"] as const, {
      description:
        "same_series: an earlier episode of this alert, the same alert identity (source, external_uid) or alert name and labels; same_service: the same service label; similar_text: titles and descriptions alike once volatile tokens (numbers, ids, hosts, times) are masked",
    }),
    similarity: Type.Number({ minimum: 0, maximum: 1 }),
    why_matched: Type.String(),
    resolution: Type.String({
      description:
        "How it ended: resolved by the source and when, ignored and why, its investigation's verdict",
    }),
    investigation_id: Nullable(Uuid("Its newest investigation, when it had one")),
  },
  {
    $id: "InvestigationPriorIncident",
    description: "Ordered: same series first, then same service, then similar text",
  },
);
export type InvestigationPriorIncident = Static<typeof InvestigationPriorIncident>;

export const REMEDIATION_STATUSES = [
  "ignored",
  "pending",
  "not_proposed",
  "proposed",
  "approving",
  "approved",
  "rejected",
] as const;
export type RemediationStatus = (typeof REMEDIATION_STATUSES)[number];

export const InvestigationRemediation = Type.Object(
  {
    status: literals(REMEDIATION_STATUSES, {
      description:
        "ignored: asked while the sre app's remediation mode is off; pending: awaiting the investigator; not_proposed: no change could be proposed (reason says why); proposed: a change awaits approval; approving: an approval is pushing it; approved: pushed as branch; rejected: a person declined it, nothing pushed",
    }),
    reason: Type.String({ description: "Why it is in this status" }),
    requested_by: literals(["remediation_requested", "operator_message"] as const, {
      description: "What asked for it: the flag, or an operator_message that explicitly asks for a fix",
    }),
    integration: Nullable(Type.String({ description: "The git integration the change is for" })),
    base_branch: Nullable(Type.String()),
    base_commit: Nullable(Type.String({ description: "The base branch's commit the diff was made against" })),
    summary: Nullable(Type.String({ description: "The change in one line" })),
    file: Nullable(
      Type.String({ description: "The rule file the change edits, relative to the repository" }),
    ),
    diff: Nullable(
      Type.String({
        description: "The proposed change as a unified diff (also the session artifact remediation.diff)",
      }),
    ),
    reasoning: Nullable(
      Type.String({ description: "Why this change fixes the cause (also remediation.md)" }),
    ),
    branch: Nullable(Type.String({ description: "The branch pushed on approval" })),
    commit: Nullable(Type.String({ description: "The pushed commit" })),
    decided_by: Nullable(Type.String({ description: "user:<id> who approved or rejected" })),
    decided_at: Nullable(DateTime()),
    comment: Nullable(Type.String({ description: "The approver's or rejecter's comment" })),
    error: Nullable(
      Type.String({ description: "Why the last approval could not push (the proposal stands)" }),
    ),
  },
  {
    $id: "InvestigationRemediation",
    description:
      "A change proposed to fix the alert's cause, awaiting human approval: never pushed without it",
  },
);
export type InvestigationRemediation = Static<typeof InvestigationRemediation>;

export const InvestigationTriageMetadata = Type.Object(
  {
    trigger: literals(["manual", "auto_investigate"] as const),
    requested_by: Type.String({
      description:
        "user:<id> for a manual start; auto_investigate when a registration's auto_investigate started it",
    }),
    workflow_name: Type.String({
      description: "The workflow the run executes (purpose alert_investigation)",
    }),
    workflow_fallback: Type.Optional(
      Nullable(
        Type.String({
          description:
            "Why the workflow assigned to alert_investigation did not run and the default ran instead (it was deleted, has no approved version, or requires inputs an investigation does not give); null when it ran",
        }),
      ),
    ),
    alert_status: Type.String({ description: "The alert's status when the investigation started" }),
    alert_severity: Type.String(),
    forked_from: Nullable(Uuid()),
    remediation_requested: Type.Boolean(),
    operator_message: Nullable(Type.String()),
    integrations_consulted: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        outcome: Type.String({ description: "answered, or the error" }),
      }),
    ),
    investigator: Nullable(
      Type.String({
        description:
          "deterministic, llm:<model>, or user:<user id> (an agent that reported through the status callback); null until one does",
      }),
    ),
    remediation: Nullable(
      Type.Ref("InvestigationRemediation", {
        description: "null when no remediation was asked for",
      }),
    ),
  },
  { $id: "InvestigationTriageMetadata" },
);
/** As stored; `remediation` is its own column, merged in when presented. */
export type InvestigationTriageMetadata = Omit<Static<typeof InvestigationTriageMetadata>, "remediation">;

export const Investigation = Type.Object(
  {
    id: Uuid(),
    alert_id: Uuid(),
    guild_trace_id: Type.String({ description: "Trace id of the run (getExecutionTrace)" }),
    guild_session_id: Nullable(
      Type.String({ description: "Session of the run: its report artifact, terminateSession" }),
    ),
    status: InvestigationStatusSchema,
    result_summary: Nullable(Type.String()),
    parent_investigation_id: Nullable(Uuid("The investigation this one was forked from (force_new)")),
    started_at: DateTime(),
    finished_at: Nullable(DateTime("null while unfinished")),
    evidence: Type.Array(Type.Ref("InvestigationEvidence"), { description: "In capture order" }),
    structured_rca: Nullable(Type.Ref("InvestigationStructuredRCA")),
    hypotheses: Type.Array(Type.Ref("InvestigationHypothesis")),
    prior_incidents: Type.Array(Type.Ref("InvestigationPriorIncident")),
    triage_metadata: Nullable(Type.Ref("InvestigationTriageMetadata")),
  },
  { $id: "Investigation" },
);
export type Investigation = {
  id: string;
  alert_id: string;
  guild_trace_id: string;
  guild_session_id: string | null;
  status: InvestigationStatus;
  result_summary: string | null;
  parent_investigation_id: string | null;
  started_at: string;
  finished_at: string | null;
  evidence: InvestigationEvidence[];
  structured_rca: InvestigationStructuredRCA | null;
  hypotheses: InvestigationHypothesis[];
  prior_incidents: InvestigationPriorIncident[];
  triage_metadata: (InvestigationTriageMetadata & { remediation: InvestigationRemediation | null }) | null;
};

export const InvestigateResponse = Type.Object(
  { investigation: Type.Ref("InvestigationRef") },
  { $id: "InvestigateResponse" },
);

export const ListInvestigationsResponse = Type.Object(
  {
    investigations: Type.Array(Type.Ref("Investigation")),
    page: Type.Integer(),
    page_size: Type.Integer(),
    total: Type.Integer({ description: "Investigations matching the filters, all pages" }),
  },
  { $id: "ListInvestigationsResponse", description: "Newest started_at first" },
);

export const InvestigateAlertRequest = Type.Object(
  {
    force_new: Type.Optional(
      Type.Boolean({ default: false, description: "Create a new investigation, forked from the newest one" }),
    ),
    remediation_requested: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Asks the investigator to propose a change that fixes the cause (triage_metadata.remediation), pushed only when approved; recorded as ignored while the sre app's remediation mode is off",
      }),
    ),
    operator_message: Type.Optional(
      Type.String({
        maxLength: 4000,
        description:
          "Recorded on the investigation; one that explicitly asks for a fix (fix it, open a pull request, remediate) counts as remediation_requested",
      }),
    ),
  },
  { $id: "InvestigateAlertRequest", additionalProperties: false },
);
export type InvestigateAlertRequest = Static<typeof InvestigateAlertRequest>;

/** listInvestigations' query (the MCP tool list_investigations takes it without orgId). */
export const ListInvestigationsQuery = Type.Object({
  ...OrgQuery,
  status: Type.Optional(InvestigationStatusSchema),
  alert_id: Type.Optional(Uuid()),
  page: Type.Integer({ minimum: 1, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
});

export const EvidenceSubmission = Type.Object(
  {
    evidence: Type.Array(
      Type.Object(
        {
          kind: literals(EVIDENCE_KINDS),
          title: Type.String({ minLength: 1, maxLength: 300, description: "Short label; not blank" }),
          url: Type.String({
            minLength: 1,
            maxLength: 2048,
            description: "Absolute http(s) URL; anything else is 400",
          }),
          description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
          source: literals(EVIDENCE_SOURCES),
          tool_name: Type.Optional(
            Nullable(
              Type.String({
                minLength: 1,
                maxLength: 100,
                description: "The tool of a tool_trace item; stored null for other sources",
              }),
            ),
          ),
          verified: Type.Optional(Type.Boolean({ description: "Ignored: Vigil sets it" })),
          captured_at: Type.Optional(Type.String({ maxLength: 64, description: "Ignored: Vigil sets it" })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
  },
  {
    $id: "EvidenceSubmission",
    additionalProperties: false,
    description: "sre_submit_investigation_evidence: verified and captured_at are set by Vigil",
  },
);
export type EvidenceSubmission = Static<typeof EvidenceSubmission>;

/** A hypothesis as an agent submits it: the statement is required, the rest may be left out (null). */
const HypothesisSubmission = Type.Object({
  statement: Type.String({ minLength: 1, description: "The hypothesis; not blank" }),
  confidence: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  status: Type.Optional(Nullable(literals(HYPOTHESIS_STATUSES))),
  rationale: Type.Optional(Nullable(Type.String())),
});
export type HypothesisSubmission = Static<typeof HypothesisSubmission>;

// The spec's InvestigationPlainSummary requires no field, but a caller that sends one populates all:
// a verdict alone would stand as a conclusion that says nothing of what broke or what to do.
const PlainSummarySubmission = Type.Object(
  {
    verdict: literals(VERDICTS),
    what_broke: Type.String({ minLength: 1, description: "One sentence: the service and what users saw" }),
    what_to_do: Type.String({ minLength: 1, description: "One concrete next action on the customer system" }),
    how_we_got_here: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: "Ordered steps that led to the conclusion",
    }),
  },
  { description: "When given, every field is required and none may be blank" },
);
type PlainSummarySubmission = Static<typeof PlainSummarySubmission>;

export const StatusUpdate = Type.Object(
  {
    status: literals(["running", "completed", "failed"] as const, {
      description:
        "running: the agent took it; completed or failed: final (a final investigation cannot move: 409)",
    }),
    result_summary: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    hypotheses: Type.Optional(
      Type.Array(HypothesisSubmission, {
        maxItems: 20,
        description: "Stored ranked: open and confirmed by confidence, rejected ones last",
      }),
    ),
    plain_summary: Type.Optional(PlainSummarySubmission),
  },
  {
    $id: "InvestigationStatusUpdate",
    additionalProperties: false,
    description: "sre_update_investigation_status: an external agent's progress and conclusion",
  },
);
export type StatusUpdate = {
  status: "running" | "completed" | "failed";
  result_summary?: string | null;
  hypotheses?: HypothesisSubmission[];
  plain_summary?: PlainSummarySubmission;
};

const Comment = Type.String({ maxLength: 2000, description: "Kept on the remediation" });

export const RemediationApproval = Type.Object(
  {
    branch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        // Names git accepts: parts joined by single slashes, dots only inside a part (no "..", no
        // part that starts or ends with one); a part ending in ".lock" is refused by the route.
        pattern: "^[A-Za-z0-9_][A-Za-z0-9_-]*(\\.[A-Za-z0-9_-]+)*(/[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*)*$",
        description:
          "The branch to push (a git branch name; no part may end in .lock); default vigil/remediation-<first 8 characters of the investigation id>",
      }),
    ),
    comment: Type.Optional(Comment),
  },
  { $id: "RemediationApproval", additionalProperties: false },
);
export type RemediationApproval = Static<typeof RemediationApproval>;

export const RemediationRejection = Type.Object(
  { comment: Type.Optional(Comment) },
  { $id: "RemediationRejection", additionalProperties: false },
);
export type RemediationRejection = Static<typeof RemediationRejection>;
