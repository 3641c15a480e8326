// New Relic webhooks, alert-sources.md section 10: the Workflows default payload (one issue) and the
// legacy notification channel payload (one incident). One event per body.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  foreignBodyError,
  isRecord,
  type LabelBuilder,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  rawText,
  type StatusTable,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

const WORKFLOW_STATE: StatusTable = {
  CREATED: "active",
  ACTIVATED: "active",
  ACKNOWLEDGED: "unchanged",
  CLOSED: "resolved",
  DEACTIVATED: "resolved",
};

const LEGACY_STATE: StatusTable = { open: "active", acknowledged: "unchanged", closed: "resolved" };

// An id is a non-empty string or a number; other JSON (true, {}) is not an id.
function idText(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  return rawText(value) || null;
}

// One label from a list of names, e.g. `alertPolicyNames`: the non-empty names joined with `,`.
function addNames(labels: LabelBuilder, key: string, names: unknown): void {
  if (!Array.isArray(names)) return;
  for (const name of names) {
    const text = firstText(name);
    if (text !== null) labels.add(key, text);
  }
}

function normalizeWorkflow(payload: Record<string, unknown>, id: string, options: ParserOptions): AlertEvent {
  const status = mapStatus(payload.state, WORKFLOW_STATE);
  const labels = createLabelBuilder();
  addNames(labels, "policy", payload.alertPolicyNames);
  addNames(labels, "condition", payload.alertConditionNames);
  addNames(labels, "entity", payload.impactedEntities);
  const parts: AlertEventParts = {
    sourceType: "newrelic",
    externalUid: id,
    status,
    title: payload.title,
    description: "",
    severity: mapSeverity(payload.priority, { overrides: options.severityOverrides }),
    triggeredAt: parseSourceTime(payload.createdAt),
    // `updatedAt` is the time of this notification; it is the resolve time only on a close.
    resolvedAt: status.status === "resolved" ? parseSourceTime(payload.updatedAt) : null,
    labels: labels.toRecord(),
    links: buildLinks([{ kind: "source", urls: [payload.issueUrl] }]),
  };
  return buildAlertEvent(parts);
}

function legacyLabels(payload: Record<string, unknown>): Record<string, string> {
  const labels = createLabelBuilder()
    .add("policy", firstText(payload.policy_name))
    .add("condition", firstText(payload.condition_name));
  const targets = Array.isArray(payload.targets) ? payload.targets.filter(isRecord) : [];
  addNames(
    labels,
    "entity",
    targets.map((target) => target.name),
  );
  for (const target of targets) labels.addAll(target.labels);
  return labels.toRecord();
}

function normalizeLegacy(
  payload: Record<string, unknown>,
  incidentId: string,
  options: ParserOptions,
): AlertEvent {
  const status = mapStatus(payload.current_state, LEGACY_STATE);
  // The one `timestamp` is the time of this state change: the trigger, or the close.
  const time = parseSourceTime(payload.timestamp);
  const resolved = status.status === "resolved";
  const parts: AlertEventParts = {
    sourceType: "newrelic",
    externalUid: incidentId,
    status,
    title: firstText(payload.condition_name, payload.policy_name),
    description: payload.details,
    severity: mapSeverity(payload.severity, { overrides: options.severityOverrides }),
    triggeredAt: resolved ? null : time,
    resolvedAt: resolved ? time : null,
    labels: legacyLabels(payload),
    links: buildLinks([
      { kind: "source", urls: [payload.incident_url] },
      { kind: "runbook", urls: [payload.runbook_url] },
    ]),
    // New Relic's "send test notification" sends incident 0 (1.9).
    isTest: incidentId === "0",
  };
  return buildAlertEvent(parts);
}

/** Parses a New Relic webhook body (Workflows default payload or legacy channel) into one event. */
export const parseNewrelic: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) {
    return { ok: false, error: "not a New Relic webhook: expected a JSON object" };
  }
  const foreign = foreignBodyError(payload, "newrelic");
  if (foreign) return foreign;
  if ("current_state" in payload || "incident_id" in payload) {
    const incidentId = idText(payload.incident_id);
    if (incidentId === null) {
      return { ok: false, error: "not a New Relic legacy webhook: incident_id is missing" };
    }
    return { ok: true, events: [normalizeLegacy(payload, incidentId, options)] };
  }
  const id = idText(payload.id);
  if (id === null) {
    return {
      ok: false,
      error:
        "not a New Relic webhook: expected a workflow payload with an id or a legacy payload with incident_id",
    };
  }
  return { ok: true, events: [normalizeWorkflow(payload, id, options)] };
};
