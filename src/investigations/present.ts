import type { InvestigationRef } from "../alerts/index.ts";
import type { Investigation, InvestigationEvidence, InvestigationStatus } from "./schemas.ts";
import type { investigationEvidence, investigations } from "./tables.ts";

export type InvestigationRow = typeof investigations.$inferSelect;
type EvidenceRow = typeof investigationEvidence.$inferSelect;

export function refOfInvestigation(row: InvestigationRow): InvestigationRef {
  return {
    id: row.id,
    status: row.status as InvestigationStatus,
    verdict: row.structuredRca?.plain_summary?.verdict ?? null,
    result_summary: row.resultSummary,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

export function presentEvidence(row: EvidenceRow): InvestigationEvidence {
  return {
    kind: row.kind as InvestigationEvidence["kind"],
    title: row.title,
    url: row.url,
    description: row.description,
    source: row.source as InvestigationEvidence["source"],
    tool_name: row.toolName,
    verified: row.verified,
    captured_at: row.capturedAt.toISOString(),
  };
}

export function presentInvestigation(row: InvestigationRow, evidence: EvidenceRow[]): Investigation {
  return {
    id: row.id,
    alert_id: row.alertId,
    guild_trace_id: row.traceId,
    guild_session_id: row.sessionId,
    status: row.status as InvestigationStatus,
    result_summary: row.resultSummary,
    parent_investigation_id: row.parentInvestigationId,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    evidence: evidence.map(presentEvidence),
    structured_rca: row.structuredRca,
    hypotheses: row.hypotheses,
    prior_incidents: row.priorIncidents,
    triage_metadata: row.triageMetadata && { ...row.triageMetadata, remediation: row.remediation },
  };
}
