// Prometheus Alertmanager's API v2 alert list (`GET /api/v2/alerts`), read by the pull sync. The same
// rules as the webhook (alert-sources.md section 2), so a pulled alert and a pushed one agree on every
// field: external_uid is Alertmanager's fingerprint in both. Only the status differs, because the API
// reports Alertmanager's view of the alert (`status.state`) instead of firing/resolved:
//   active, unprocessed -> active; suppressed -> ignored (`alertmanager: silenced`, `: inhibited`).
// The list holds unresolved alerts only; a resolve is the alert's absence, which the sync handles.
import { alertmanagerAlertParts } from "./alertmanager.ts";
import { buildAlertEvent, decodeBody, isRecord, mapStatus, type StatusTable } from "./normalize/index.ts";
import type { AlertEvent, ParseResult, Parser, ParserOptions } from "./types.ts";

const STATE: StatusTable = { active: "active", unprocessed: "active", suppressed: "ignored" };

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

// What suppresses the alert, for ignore_reason. A silence is the operator's explicit decision, so it
// is named first when both apply; `mutedBy` (time intervals) exists from Alertmanager 0.27 on.
function suppressedBy(status: Record<string, unknown>): string {
  if (nonEmptyList(status.silencedBy)) return "silenced";
  if (nonEmptyList(status.inhibitedBy)) return "inhibited";
  if (nonEmptyList(status.mutedBy)) return "muted";
  return "suppressed";
}

function normalizeAlert(
  alert: Record<string, unknown>,
  labels: Record<string, unknown>,
  options: ParserOptions,
): AlertEvent {
  const state = isRecord(alert.status) ? alert.status : {};
  return buildAlertEvent({
    ...alertmanagerAlertParts(alert, labels, options),
    status: mapStatus(state.state, STATE),
    ignoredValue: suppressedBy(state),
    // `endsAt` of a listed alert is Alertmanager's resolve timeout, never a resolve.
    resolvedAt: null,
  });
}

/** Parses a `GET /api/v2/alerts` response (a JSON array of gettable alerts) into one event per alert. */
export const parseAlertmanagerApi: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  return alertmanagerApiEvents(decoded.value, options);
};

/** The events of an alert list already decoded from its JSON (a pull sync keeps its items too). */
export function alertmanagerApiEvents(list: unknown, options: ParserOptions): ParseResult {
  if (!Array.isArray(list)) {
    return { ok: false, error: "not an Alertmanager API v2 alert list: expected a JSON array" };
  }
  const events: AlertEvent[] = [];
  for (const [index, alert] of list.entries()) {
    // `labels` is required in the API; without it an alert has no identity.
    if (!isRecord(alert) || !isRecord(alert.labels)) {
      return {
        ok: false,
        error: `not an Alertmanager API v2 alert list: item ${index} is not an object with labels`,
      };
    }
    events.push(normalizeAlert(alert, alert.labels, options));
  }
  return { ok: true, events };
}
