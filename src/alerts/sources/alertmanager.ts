// Prometheus Alertmanager webhook (payload version 4), alert-sources.md section 2: one event per
// element of `alerts[]`. The group-level `status`, `commonLabels` and `commonAnnotations` are never
// used: each alert carries its own (a group may mix firing and resolved alerts).
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  joinDescription,
  labelFingerprint,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  type StatusTable,
  safeUid,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

const ALERT_STATUS: StatusTable = { firing: "active", resolved: "resolved" };

// The uid of an alert: its `fingerprint` verbatim (never recomputed: senders' fingerprints need not
// match their labels), else the Prometheus fingerprint of the labels as received.
function alertUid(alert: Record<string, unknown>, labels: Record<string, unknown>): string {
  const fingerprint = alert.fingerprint;
  if (typeof fingerprint === "string" && fingerprint !== "") return safeUid(fingerprint);
  return labelFingerprint(labels);
}

/**
 * The parts of an alert's event that the webhook and the API v2 alert list (alertmanager-api.ts) give
 * alike, so that a pulled alert and a pushed one agree: all but the status and the resolve time.
 */
export function alertmanagerAlertParts(
  alert: Record<string, unknown>,
  labels: Record<string, unknown>,
  options: ParserOptions,
): Omit<AlertEventParts, "status"> {
  const annotations = isRecord(alert.annotations) ? alert.annotations : {};
  return {
    sourceType: "alertmanager",
    externalUid: alertUid(alert, labels),
    title: firstText(labels.alertname, annotations.summary),
    description: joinDescription(
      annotations.summary,
      firstText(annotations.description, annotations.message),
    ),
    severity: mapSeverity(firstText(labels.severity, annotations.severity), {
      overrides: options.severityOverrides,
    }),
    triggeredAt: parseSourceTime(alert.startsAt),
    labels: createLabelBuilder({ stripPrefixes: ["__"] })
      .addAll(labels)
      .toRecord(),
    // Section 2 names no base URL, so a relative URL is dropped.
    links: buildLinks([
      { kind: "source", urls: [alert.generatorURL] },
      { kind: "runbook", urls: [annotations.runbook_url, annotations.runbook] },
      { kind: "dashboard", urls: [annotations.dashboard_url, annotations.dashboard] },
    ]),
  };
}

function normalizeAlert(
  alert: Record<string, unknown>,
  labels: Record<string, unknown>,
  options: ParserOptions,
): AlertEvent {
  const status = mapStatus(alert.status, ALERT_STATUS);
  return buildAlertEvent({
    ...alertmanagerAlertParts(alert, labels, options),
    status,
    // On a firing alert `endsAt` is Alertmanager's resolve timeout, not a resolve.
    resolvedAt: status.status === "resolved" ? parseSourceTime(alert.endsAt) : null,
  });
}

// Every Alertmanager alert has a label set; Go decodes a JSON null one as empty. Anything else is not
// an alert, and the body is rejected rather than yielding events with made-up identities.
function alertLabels(alert: unknown): Record<string, unknown> | null {
  if (!isRecord(alert)) return null;
  if (alert.labels === null) return {};
  return isRecord(alert.labels) ? alert.labels : null;
}

// Alertmanager's `max_alerts` cuts the list and reports how many it left out.
function truncatedNote(truncatedAlerts: unknown, listed: number): string | undefined {
  if (typeof truncatedAlerts !== "number" || !(truncatedAlerts > 0)) return undefined;
  return `truncatedAlerts: ${truncatedAlerts} (Alertmanager left them out; only the ${listed} listed alerts yield events)`;
}

/** Parses an Alertmanager webhook body into one event per alert, in payload order. */
export const parseAlertmanager: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload) || !Array.isArray(payload.alerts)) {
    return { ok: false, error: "not an Alertmanager webhook: expected a JSON object with an alerts array" };
  }
  const events: AlertEvent[] = [];
  for (const [index, alert] of payload.alerts.entries()) {
    const labels = alertLabels(alert);
    if (!isRecord(alert) || labels === null) {
      return {
        ok: false,
        error: `not an Alertmanager webhook: alerts[${index}] is not an object with labels`,
      };
    }
    events.push(normalizeAlert(alert, labels, options));
  }
  const note = truncatedNote(payload.truncatedAlerts, events.length);
  return note === undefined ? { ok: true, events } : { ok: true, events, note };
};
