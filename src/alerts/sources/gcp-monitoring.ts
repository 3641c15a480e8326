// Google Cloud Monitoring webhook notification channel, alert-sources.md section 9: one event per
// body, `{incident: {...}, version}` with schema 1.1 (Stackdriver) or 1.2. GCP opens a new incident
// for each episode, so the incident id is the alert series.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  joinDescription,
  type LabelBuilder,
  type LinkCandidate,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  rawText,
  type SeverityResult,
  type SeverityTable,
  type StatusTable,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

const INCIDENT_STATE: StatusTable = { open: "active", closed: "resolved", acknowledged: "unchanged" };

// GCP's own severity levels; the generic table still applies after it (1.4).
const GCP_SEVERITY: SeverityTable = {
  Critical: "Critical",
  Error: "High",
  Warning: "Medium",
  "No severity": "Medium",
};

// An id is a non-empty string or a number; other JSON (true, {}) is not an id.
function idText(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  return rawText(value) || null;
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

// `incident.severity` (newer policies) through GCP's table; when absent, a `severity` user label
// through the generic table only.
function incidentSeverity(incident: Record<string, unknown>, options: ParserOptions): SeverityResult {
  const overrides = options.severityOverrides;
  const severity = firstText(incident.severity);
  if (severity !== null) return mapSeverity(severity, { table: GCP_SEVERITY, overrides });
  const userLabel = firstText(
    record(incident.policy_user_labels).severity,
    record(record(incident.metadata).user_labels).severity,
  );
  return mapSeverity(userLabel, { overrides });
}

// `documentation.subject`, else "policy: condition" (the condition only when it adds something).
function incidentTitle(incident: Record<string, unknown>): string | null {
  const subject = firstText(record(incident.documentation).subject);
  if (subject !== null) return subject;
  const policy = firstText(incident.policy_name);
  const condition = firstText(incident.condition_name);
  if (policy === null) return condition;
  return condition !== null && condition !== policy ? `${policy}: ${condition}` : policy;
}

function setAll(labels: LabelBuilder, map: unknown): void {
  for (const [key, value] of Object.entries(record(map))) labels.set(key, value);
}

function incidentLabels(incident: Record<string, unknown>): Record<string, string> {
  const resource = record(incident.resource);
  const metric = record(incident.metric);
  const metadata = record(incident.metadata);
  const labels = createLabelBuilder();
  // Later maps win on a clash: the policy's user labels are the most specific.
  for (const map of [
    resource.labels,
    metric.labels,
    metadata.system_labels,
    metadata.user_labels,
    incident.policy_user_labels,
  ]) {
    setAll(labels, map);
  }
  const resourceType = firstText(resource.type);
  const metricType = firstText(metric.type);
  if (resourceType !== null) labels.setIfAbsent("resource_type", resourceType);
  if (metricType !== null) labels.setIfAbsent("metric_type", metricType);
  // Schema 1.1 has no resource labels, only the flat resource fields. On 1.2 `resource_name` is a
  // long display string that repeats the resource labels, so it is used only when they are absent.
  if (!isRecord(resource.labels)) {
    const resourceName = firstText(incident.resource_name);
    const resourceId = firstText(incident.resource_id);
    if (resourceName !== null) labels.setIfAbsent("resource_name", resourceName);
    if (resourceId !== null) labels.setIfAbsent("resource_id", resourceId);
  }
  return labels.toRecord();
}

function incidentLinks(incident: Record<string, unknown>): LinkCandidate[] {
  const docLinks = record(incident.documentation).links;
  const runbooks: LinkCandidate[] = Array.isArray(docLinks)
    ? docLinks.map((link) => ({ kind: "runbook", urls: [record(link).url] }))
    : [];
  return [{ kind: "source", urls: [incident.url] }, ...runbooks];
}

function normalizeIncident(
  incident: Record<string, unknown>,
  incidentId: string,
  options: ParserOptions,
): AlertEvent {
  const parts: AlertEventParts = {
    sourceType: "gcp-monitoring",
    externalUid: incidentId,
    status: mapStatus(incident.state, INCIDENT_STATE),
    title: incidentTitle(incident),
    // `documentation.content` may hold JSON text (Stackdriver era); it is kept as written.
    description: joinDescription(incident.summary, record(incident.documentation).content),
    severity: incidentSeverity(incident, options),
    triggeredAt: parseSourceTime(incident.started_at),
    // GCP sets `ended_at` only when the incident closes.
    resolvedAt: parseSourceTime(incident.ended_at),
    labels: incidentLabels(incident),
    links: buildLinks(incidentLinks(incident)),
  };
  return buildAlertEvent(parts);
}

/** Parses a Google Cloud Monitoring webhook body into one event for its incident. */
export const parseGcpMonitoring: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload) || !isRecord(payload.incident)) {
    return {
      ok: false,
      error: "not a GCP Monitoring notification: expected a JSON object with an incident object",
    };
  }
  const incidentId = idText(payload.incident.incident_id);
  if (incidentId === null) {
    return { ok: false, error: "not a GCP Monitoring notification: incident.incident_id is missing" };
  }
  return { ok: true, events: [normalizeIncident(payload.incident, incidentId, options)] };
};
