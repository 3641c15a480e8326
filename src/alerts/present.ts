import type { AlertHistoryEvent, AlertV1 } from "./schemas.ts";
import { type alertEvents, alerts } from "./tables.ts";

/** The columns an AlertV1 shows: a list of many alerts reads and maps no others. */
export const presentedAlertColumns = {
  id: alerts.id,
  externalUid: alerts.externalUid,
  sourceType: alerts.sourceType,
  integrationName: alerts.integrationName,
  title: alerts.title,
  description: alerts.description,
  sourceSeverity: alerts.sourceSeverity,
  severity: alerts.severity,
  displayPriority: alerts.displayPriority,
  impactScore: alerts.impactScore,
  impactExplanation: alerts.impactExplanation,
  status: alerts.status,
  analysisStatus: alerts.analysisStatus,
  attention: alerts.attention,
  attentionReason: alerts.attentionReason,
  ignoreReason: alerts.ignoreReason,
  shortSummary: alerts.shortSummary,
  initialInvestigation: alerts.initialInvestigation,
  triggeredAt: alerts.triggeredAt,
  createdAt: alerts.createdAt,
  resolvedAt: alerts.resolvedAt,
  refireCount: alerts.refireCount,
  lastResolvedAt: alerts.lastResolvedAt,
  labels: alerts.labels,
  links: alerts.links,
  alertRole: alerts.alertRole,
  stormId: alerts.stormId,
  likelyUpstream: alerts.likelyUpstream,
  ingestedVia: alerts.ingestedVia,
};

type AlertRow = Pick<typeof alerts.$inferSelect, keyof typeof presentedAlertColumns>;

/** `rawPayload` is the body of the delivery the alert points at (alert_payloads). */
export function presentAlert(row: AlertRow, rawPayload: string | null): AlertV1 {
  return {
    id: row.id,
    external_uid: row.externalUid,
    source_type: row.sourceType,
    integration_name: row.integrationName,
    title: row.title,
    description: row.description,
    source_severity: row.sourceSeverity,
    signal_severity: row.severity,
    display_priority: row.displayPriority,
    impact_score: row.impactScore,
    impact_explanation: row.impactExplanation,
    status: row.status as AlertV1["status"],
    analysis_status: row.analysisStatus as AlertV1["analysis_status"],
    attention: row.attention as AlertV1["attention"],
    attention_reason: row.attentionReason,
    ignore_reason: row.ignoreReason,
    short_summary: row.shortSummary,
    initial_investigation: row.initialInvestigation,
    triggered_at: row.triggeredAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    resolved_at: row.resolvedAt?.toISOString() ?? null,
    refire_count: row.refireCount,
    last_resolved_at: row.lastResolvedAt?.toISOString() ?? null,
    investigation: null,
    labels: row.labels,
    links: row.links,
    alert_role: row.alertRole as AlertV1["alert_role"],
    storm_id: row.stormId,
    likely_upstream: row.likelyUpstream,
    ingested_via: row.ingestedVia as AlertV1["ingested_via"],
    raw_payload: rawPayload,
  };
}

export function presentHistoryEvent(row: typeof alertEvents.$inferSelect): AlertHistoryEvent {
  return {
    seq: row.seq,
    at: row.at.toISOString(),
    kind: row.kind,
    actor: row.actor,
    source_event: row.sourceEvent,
    status_before: row.statusBefore,
    status_after: row.statusAfter,
    invocation_id: row.invocationId,
    detail: row.detail,
  };
}
