import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import type { AlertHistoryEvent, AlertV1 } from "../schemas.ts";
import { type alertEvents, alerts } from "../tables.ts";

/** The columns an AlertV1 shows (presentAlert, and ALERT_V1_JSON below for lists). */
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
  investigation: alerts.investigation,
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
    investigation: row.investigation ?? null,
    labels: row.labels,
    links: row.links,
    alert_role: row.alertRole as AlertV1["alert_role"],
    storm_id: row.stormId,
    likely_upstream: row.likelyUpstream,
    ingested_via: row.ingestedVia as AlertV1["ingested_via"],
    raw_payload: rawPayload,
  };
}

/** A timestamp as Date.toISOString() writes it (UTC, milliseconds, Z); null stays null. */
function isoTime(column: AnyColumn): SQL {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * presentAlert written in SQL, but for its last field, raw_payload: the AlertV1 of a row of `alerts`
 * as JSON text, built by PostgreSQL. Mapping and serializing a page of 500 alerts row by row in Node
 * cost more than the query (list-alerts.ts). The body is appended by withRawPayload: Node escapes a
 * stored body into a JSON string faster than PostgreSQL (10 of the 18 ms of a 500-alert page).
 * Same fields, same order, same values as presentAlert: ingest.test.ts compares the two on every
 * fixture.
 */
export const ALERT_V1_JSON = sql`json_build_object(
  'id', ${alerts.id},
  'external_uid', ${alerts.externalUid},
  'source_type', ${alerts.sourceType},
  'integration_name', ${alerts.integrationName},
  'title', ${alerts.title},
  'description', ${alerts.description},
  'source_severity', ${alerts.sourceSeverity},
  'signal_severity', ${alerts.severity},
  'display_priority', ${alerts.displayPriority},
  'impact_score', ${alerts.impactScore},
  'impact_explanation', ${alerts.impactExplanation},
  'status', ${alerts.status},
  'analysis_status', ${alerts.analysisStatus},
  'attention', ${alerts.attention},
  'attention_reason', ${alerts.attentionReason},
  'ignore_reason', ${alerts.ignoreReason},
  'short_summary', ${alerts.shortSummary},
  'initial_investigation', ${alerts.initialInvestigation},
  'triggered_at', ${isoTime(alerts.triggeredAt)},
  'created_at', ${isoTime(alerts.createdAt)},
  'resolved_at', ${isoTime(alerts.resolvedAt)},
  'refire_count', ${alerts.refireCount},
  'last_resolved_at', ${isoTime(alerts.lastResolvedAt)},
  'investigation', ${alerts.investigation},
  'labels', ${alerts.labels},
  'links', ${alerts.links},
  'alert_role', ${alerts.alertRole},
  'storm_id', ${alerts.stormId},
  'likely_upstream', ${alerts.likelyUpstream},
  'ingested_via', ${alerts.ingestedVia})`;

/** An ALERT_V1_JSON text with its raw_payload (the alert's alert_payloads body, or null) added. */
export function withRawPayload(alertJson: string, rawPayload: string | null): string {
  return `${alertJson.slice(0, -1)},"raw_payload":${rawPayload === null ? "null" : JSON.stringify(rawPayload)}}`;
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
