// How one normalized event changes a stored alert (alert-sources.md 1.10, and the spec's alert
// state table). A pure function: it returns the alert's next state and the history entry, and the
// ingest writes them. Keeping it pure makes every transition testable on its own.
import { uuidv7 } from "../../core/ids.ts";
import type { AlertEvent, AlertLink } from "../sources/types.ts";
import type { alerts } from "../tables.ts";

export type AlertRow = typeof alerts.$inferSelect;

/** Events kept per alert; older ones are trimmed. */
export const HISTORY_LIMIT = 200;
export type IngestOutcome =
  | "created"
  | "updated"
  | "resolved"
  | "refired"
  | "ignored"
  | "unchanged"
  | "duplicate"
  | "stale";

export interface AlertScope {
  orgId: string | null;
  ownerId: string;
  sourceType: string;
  integrationName: string;
  webhookId: string | null;
}

export interface EventContext {
  scope: AlertScope;
  receivedAt: Date;
  via: "push" | "pull";
  /** The alert_payloads row holding this delivery's body, or null (keep the stored one). */
  rawPayloadId: string | null;
  /** Identity of the event's content: the same delivery twice has the same hash. */
  eventHash: string;
}

export interface HistoryEntry {
  kind: IngestOutcome;
  sourceEvent: string;
  statusBefore: string | null;
  statusAfter: string;
  detail: Record<string, unknown>;
}

export interface AlertPlan {
  outcome: IngestOutcome;
  /** The alert's next state; null when nothing is written (a duplicate). */
  next: AlertRow | null;
  history: HistoryEntry | null;
}

function toDate(value: string | null): Date | null {
  return value ? new Date(value) : null;
}

function mergeLinks(stored: AlertLink[], incoming: AlertLink[]): AlertLink[] {
  const merged = [...stored];
  for (const link of incoming) {
    if (!merged.some((item) => item.kind === link.kind && item.url === link.url)) merged.push(link);
  }
  return merged;
}

function plan(
  outcome: IngestOutcome,
  before: AlertRow | null,
  next: AlertRow,
  event: AlertEvent,
  detail = {},
) {
  return {
    outcome,
    next,
    history: {
      kind: outcome,
      sourceEvent: event.source_event,
      statusBefore: before?.status ?? null,
      statusAfter: next.status,
      detail: { ...detail, ...(event.unmapped.length > 0 && { unmapped: event.unmapped }) },
    },
  };
}

function createAlert(event: AlertEvent, context: EventContext): AlertPlan {
  const { scope, receivedAt } = context;
  const status = event.status === "unchanged" ? "active" : event.status;
  const triggeredAt = toDate(event.triggered_at) ?? receivedAt;
  const resolvedAt = status === "resolved" ? (toDate(event.resolved_at) ?? receivedAt) : null;
  const next: AlertRow = {
    id: uuidv7(),
    orgId: scope.orgId,
    ownerId: scope.ownerId,
    webhookId: scope.webhookId,
    sourceType: scope.sourceType,
    integrationName: scope.integrationName,
    externalUid: event.external_uid,
    title: event.title,
    description: event.description,
    sourceSeverity: event.source_severity,
    severity: event.severity,
    displayPriority: event.display_priority,
    severityMapping: event.severity_mapping,
    impactScore: 0,
    impactExplanation: null,
    status,
    ignoredBy: status === "ignored" ? "source" : null,
    ignoreReason: status === "ignored" ? event.ignore_reason : null,
    analysisStatus: "none",
    triageBucket: null,
    attention: "needs_review",
    attentionReason: null,
    shortSummary: null,
    initialInvestigation: null,
    triggeredAt,
    createdAt: receivedAt,
    updatedAt: receivedAt,
    resolvedAt,
    refireCount: 0,
    lastResolvedAt: null,
    lastStatusChangeAt: resolvedAt ?? triggeredAt,
    labels: event.labels,
    links: event.links,
    isTest: event.is_test,
    alertRole: "unknown",
    stormId: null,
    stormScope: null,
    likelyUpstream: null,
    stormPending: false,
    ingestedVia: context.via,
    rawPayloadId: context.rawPayloadId,
    lastEventHash: context.eventHash,
    eventSeq: 0,
  };
  return plan("created", null, next, event);
}

/**
 * What "the data changed" compares. Labels with sorted keys: jsonb hands them back in its own key
 * order, so the same labels read from the store and from a payload must still compare equal.
 */
function dataFingerprint(row: AlertRow): string {
  const labels = Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    row.title,
    row.description,
    row.sourceSeverity,
    row.severity,
    labels,
    row.links,
    row.isTest,
  ]);
}

/** Title, description, severity, labels and links: what any event may update. */
function applyData(next: AlertRow, event: AlertEvent, context: EventContext): boolean {
  const before = dataFingerprint(next);
  if (event.title && !event.title_is_fallback) next.title = event.title;
  if (event.description) next.description = event.description;
  // A resolve or an event without severity never changes the stored severity.
  if (event.status !== "resolved" && event.severity_mapping !== "missing") {
    next.sourceSeverity = event.source_severity;
    next.severity = event.severity;
    next.displayPriority = event.display_priority;
    next.severityMapping = event.severity_mapping;
  }
  if (Object.keys(event.labels).length > 0) next.labels = event.labels;
  next.links = mergeLinks(next.links, event.links);
  next.isTest = event.is_test;
  next.rawPayloadId = context.rawPayloadId ?? next.rawPayloadId;
  next.lastEventHash = context.eventHash;
  next.updatedAt = context.receivedAt;
  return dataFingerprint(next) !== before;
}

function refire(next: AlertRow, at: Date, via: EventContext["via"]): void {
  if (next.status === "resolved") {
    next.refireCount += 1;
    next.lastResolvedAt = next.resolvedAt;
  }
  next.status = "active";
  next.resolvedAt = null;
  next.ignoredBy = null;
  next.ignoreReason = null;
  next.triggeredAt = at;
  next.lastStatusChangeAt = at;
  next.ingestedVia = via;
  // A new episode is classified again.
  next.analysisStatus = "none";
}

export function planAlertChange(
  existing: AlertRow | null,
  event: AlertEvent,
  context: EventContext,
): AlertPlan {
  if (!existing) return createAlert(event, context);
  if (existing.lastEventHash === context.eventHash)
    return { outcome: "duplicate", next: null, history: null };

  // A status event older than the last status change belongs to an earlier episode: record it, change nothing.
  const sourceTime =
    event.status === "active"
      ? toDate(event.triggered_at)
      : event.status === "resolved"
        ? toDate(event.resolved_at)
        : null;
  if (sourceTime && sourceTime < existing.lastStatusChangeAt) {
    return plan("stale", existing, { ...existing, lastEventHash: context.eventHash }, event, {
      event_time: sourceTime.toISOString(),
      last_status_change_at: existing.lastStatusChangeAt.toISOString(),
    });
  }

  const next: AlertRow = { ...existing };
  const dataChanged = applyData(next, event, context);
  const at = sourceTime ?? context.receivedAt;
  let outcome: IngestOutcome | null = null;

  if (event.status === "active") {
    const ignoredByOperator = existing.status === "ignored" && existing.ignoredBy === "operator";
    if (existing.status === "resolved" || (existing.status === "ignored" && !ignoredByOperator)) {
      refire(next, at, context.via);
      outcome = "refired";
    } else if (ignoredByOperator) {
      // Repeats of the same episode keep the operator's decision; a later trigger is a new episode.
      if (sourceTime && sourceTime > existing.triggeredAt) {
        refire(next, at, context.via);
        outcome = "refired";
      }
    } else if (sourceTime && sourceTime > existing.triggeredAt) {
      next.triggeredAt = sourceTime;
      next.lastStatusChangeAt = sourceTime;
    }
  } else if (event.status === "resolved" && existing.status !== "resolved") {
    next.status = "resolved";
    next.resolvedAt = at;
    next.lastStatusChangeAt = at;
    next.ignoredBy = null;
    next.ignoreReason = null;
    outcome = "resolved";
  } else if (event.status === "ignored" && existing.status === "active") {
    next.status = "ignored";
    next.ignoredBy = "source";
    next.ignoreReason = event.ignore_reason;
    outcome = "ignored";
  }

  return plan(
    outcome ?? (dataChanged || next.triggeredAt !== existing.triggeredAt ? "updated" : "unchanged"),
    existing,
    next,
    event,
  );
}
