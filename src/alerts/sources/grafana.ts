// Grafana Alerting webhook contact point, alert-sources.md section 3. Unified alerting (Grafana 8+)
// is Alertmanager-shaped and yields one event per element of `alerts[]`; legacy dashboard alerting
// (Grafana 7 and older) describes one rule and yields one event. The notification-level `status`,
// `state`, `title` and `message` of a unified body are never used: each alert carries its own.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  hashUid,
  isRecord,
  joinDescription,
  labelFingerprint,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  rawText,
  type StatusResult,
  type StatusTable,
  safeUid,
  type VigilFlag,
} from "./normalize/index.ts";
import type { AlertEvent, ParseResult, Parser, ParserOptions } from "./types.ts";

const LABEL_OPTIONS = { stripPrefixes: ["__"], stripKeys: ["grafana_folder"] } as const;

const UNIFIED_STATUS: StatusTable = { firing: "active", resolved: "resolved" };
const LEGACY_STATUS: StatusTable = {
  alerting: "active",
  ok: "resolved",
  no_data: "active",
  paused: "ignored",
  pending: "unchanged",
};

function sameWord(value: unknown, word: string): boolean {
  return rawText(value)?.toLowerCase() === word.toLowerCase();
}

// --- Unified alerting -------------------------------------------------------------------------

// The status of one unified alert. A paused rule makes Grafana send its alerts as resolved with
// `grafana_state_reason: Paused`: the alert is not over, it is muted.
function unifiedStatus(
  alert: Record<string, unknown>,
  annotations: Record<string, unknown>,
): { status: StatusResult; ignoredValue?: string } {
  const status = mapStatus(alert.status, UNIFIED_STATUS);
  const reason = annotations.grafana_state_reason;
  if (status.status === "resolved" && sameWord(reason, "Paused")) {
    return { status: { ...status, status: "ignored" }, ignoredValue: rawText(reason) ?? "Paused" };
  }
  return { status };
}

function unifiedFlags(
  status: StatusResult,
  labels: Record<string, unknown>,
  annotations: Record<string, unknown>,
): VigilFlag[] {
  const noData =
    sameWord(annotations.grafana_state_reason, "NoData") || sameWord(labels.alertname, "DatasourceNoData");
  return status.status === "active" && noData ? ["vigil_no_data"] : [];
}

// Grafana's built-in "Test" button sends a made-up alert with these labels.
function isUnifiedTest(labels: Record<string, unknown>): boolean {
  return labels.alertname === "TestAlert" && labels.instance === "Grafana";
}

function unifiedLinks(
  alert: Record<string, unknown>,
  annotations: Record<string, unknown>,
  baseUrl: unknown,
) {
  // Only `generatorURL` is resolved against `externalURL` (Grafana 12 test alerts send `?orgId=1`);
  // section 3 names no base for the other URLs, so a relative one is dropped.
  return [
    ...buildLinks([{ kind: "source", urls: [alert.generatorURL] }], { baseUrl }),
    ...buildLinks([
      { kind: "dashboard", urls: [alert.dashboardURL] },
      { kind: "dashboard", urls: [alert.panelURL] },
      { kind: "silence", urls: [alert.silenceURL] },
      { kind: "image", urls: [alert.imageURL] },
      { kind: "runbook", urls: [annotations.runbook_url] },
    ]),
  ];
}

function normalizeUnifiedAlert(
  alert: Record<string, unknown>,
  labels: Record<string, unknown>,
  externalUrl: unknown,
  options: ParserOptions,
): AlertEvent {
  const annotations = isRecord(alert.annotations) ? alert.annotations : {};
  const { status, ignoredValue } = unifiedStatus(alert, annotations);
  const fingerprint = alert.fingerprint;
  const parts: AlertEventParts = {
    sourceType: "grafana",
    // A fingerprint in the payload is used verbatim, never recomputed (1.2).
    externalUid:
      typeof fingerprint === "string" && fingerprint !== "" ? safeUid(fingerprint) : labelFingerprint(labels),
    status,
    ignoredValue,
    title: firstText(labels.alertname, annotations.summary),
    description: joinDescription(
      annotations.summary,
      firstText(annotations.description, annotations.message),
    ),
    severity: mapSeverity(labels.severity, { overrides: options.severityOverrides }),
    triggeredAt: parseSourceTime(alert.startsAt),
    // On a firing alert `endsAt` is a timeout, not a resolve.
    resolvedAt: status.status === "resolved" ? parseSourceTime(alert.endsAt) : null,
    labels: createLabelBuilder(LABEL_OPTIONS).addAll(labels).toRecord(),
    flags: unifiedFlags(status, labels, annotations),
    links: unifiedLinks(alert, annotations, externalUrl),
    isTest: isUnifiedTest(labels),
  };
  return buildAlertEvent(parts);
}

// A JSON null label set decodes as empty in Go; anything else that is not an object is not an alert.
function alertLabels(alert: unknown): Record<string, unknown> | null {
  if (!isRecord(alert)) return null;
  if (alert.labels === null) return {};
  return isRecord(alert.labels) ? alert.labels : null;
}

function parseUnified(
  payload: Record<string, unknown>,
  alerts: unknown[],
  options: ParserOptions,
): ParseResult {
  const events: AlertEvent[] = [];
  for (const [index, alert] of alerts.entries()) {
    const labels = alertLabels(alert);
    if (!isRecord(alert) || labels === null) {
      return { ok: false, error: `not a Grafana webhook: alerts[${index}] is not an object with labels` };
    }
    events.push(normalizeUnifiedAlert(alert, labels, payload.externalURL, options));
  }
  return { ok: true, events };
}

// --- Legacy dashboard alerting ----------------------------------------------------------------

// One alert per rule. Without a `ruleId` there is no native id, so the uid is derived from the name.
function legacyUid(payload: Record<string, unknown>): string {
  const ruleId = rawText(payload.ruleId);
  return ruleId ? `legacy-${ruleId}` : hashUid("legacy", rawText(payload.ruleName));
}

// Legacy titles read `[Alerting] <rule name>`; the state tag is not part of the name.
function legacyTitle(payload: Record<string, unknown>): string | null {
  const title = rawText(payload.title)?.replace(/^\[[^\]]*\]\s*/, "");
  return firstText(payload.ruleName, title);
}

// Grafana's legacy "Send test" posts a rule named "Test notification" with ruleId 0 (or none).
function isLegacyTest(payload: Record<string, unknown>): boolean {
  const ruleId = rawText(payload.ruleId);
  return rawText(payload.ruleName) === "Test notification" && (ruleId === null || ruleId === "0");
}

function parseLegacy(payload: Record<string, unknown>, options: ParserOptions): ParseResult {
  const tags = isRecord(payload.tags) ? payload.tags : {};
  const status = mapStatus(payload.state, LEGACY_STATUS);
  const event = buildAlertEvent({
    sourceType: "grafana",
    externalUid: legacyUid(payload),
    status,
    title: legacyTitle(payload),
    description: payload.message,
    severity: mapSeverity(tags.severity, { overrides: options.severityOverrides }),
    // Legacy payloads carry no time: the ingest uses the receive time.
    labels: createLabelBuilder(LABEL_OPTIONS).addAll(tags).toRecord(),
    flags: sameWord(payload.state, "no_data") ? ["vigil_no_data"] : [],
    links: buildLinks([
      { kind: "source", urls: [payload.ruleUrl] },
      { kind: "image", urls: [payload.imageUrl] },
    ]),
    isTest: isLegacyTest(payload),
  });
  return { ok: true, events: [event] };
}

function isLegacyPayload(payload: Record<string, unknown>): boolean {
  return ["evalMatches", "ruleId", "ruleName"].some(
    (key) => payload[key] !== undefined && payload[key] !== null,
  );
}

/** Parses a Grafana webhook body: one event per unified alert, or one for a legacy rule notification. */
export const parseGrafana: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (isRecord(payload)) {
    if (Array.isArray(payload.alerts)) return parseUnified(payload, payload.alerts, options);
    if (payload.alerts === undefined && isLegacyPayload(payload)) return parseLegacy(payload, options);
  }
  return {
    ok: false,
    error:
      "not a Grafana webhook: expected a JSON object with an alerts array (unified alerting) or evalMatches, ruleId or ruleName (legacy alerting)",
  };
};
