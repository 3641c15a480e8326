// Opsgenie outgoing Webhook integration (alert action data), alert-sources.md section 6: one event
// per body. Every action shape carries `alert.alertId`, the only key they share (Escalate has an
// `alert` holding nothing else), so it is the uid; everything else is read when present.
import {
  type AlertEventParts,
  buildAlertEvent,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  mapSeverity,
  mapStatus,
  PRIORITY_DIGITS_TABLE,
  parseSourceTime,
  type SeverityResult,
  type StatusResult,
  type StatusTable,
  splitTagList,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

const ACTION_STATUS: StatusTable = {
  Create: "active",
  Close: "resolved",
  Snooze: "ignored",
  Delete: "ignored",
  TestAction: "active",
};

const TEST_ACTION = "testaction";

// The section's table ends with "every other action: unchanged", so an action outside ACTION_STATUS
// (Acknowledge, AddNote, Escalate, custom actions...) is listed, not unmapped. Only a body with no
// action at all has a value the table does not cover.
function actionStatus(action: unknown): StatusResult {
  const result = mapStatus(action, ACTION_STATUS);
  if (result.status !== "unchanged" || result.source_event === "") return result;
  return { status: "unchanged", source_event: result.source_event };
}

function isTestAction(action: unknown): boolean {
  return typeof action === "string" && action.trim().toLowerCase() === TEST_ACTION;
}

// `priority` is `P1`..`P5` (generic table) or, in newer payloads, a number 1..5 (priority digits).
// Tags are never read for it: a `P1` tag is just a tag.
function severityOf(alert: Record<string, unknown>, options: ParserOptions): SeverityResult {
  return mapSeverity(alert.priority, { table: PRIORITY_DIGITS_TABLE, overrides: options.severityOverrides });
}

function labelsOf(alert: Record<string, unknown>): Record<string, string> {
  const builder = createLabelBuilder().addTags(alert.tags);
  const entity = firstText(alert.entity);
  if (entity !== null) builder.add("entity", entity);
  // `teams` holds the ids of the teams assigned to the alert; an empty list gives no label.
  const teams = splitTagList(alert.teams);
  if (teams.length > 0) builder.add("team", teams.join(","));
  return builder.toRecord();
}

function normalizeAction(
  payload: Record<string, unknown>,
  alert: Record<string, unknown>,
  alertId: string,
  options: ParserOptions,
): AlertEvent {
  const status = actionStatus(payload.action);
  const parts: AlertEventParts = {
    sourceType: "opsgenie",
    externalUid: alertId,
    status,
    title: alert.message,
    // Opsgenie sends the description only on Create (truncated to 1000 characters).
    description: alert.description,
    severity: severityOf(alert, options),
    triggeredAt: parseSourceTime(alert.createdAt),
    // `updatedAt` is epoch nanoseconds: the time of the Close itself.
    resolvedAt: status.status === "resolved" ? parseSourceTime(alert.updatedAt) : null,
    labels: labelsOf(alert),
    isTest: isTestAction(payload.action),
  };
  return buildAlertEvent(parts);
}

/** Parses an Opsgenie webhook body (alert action data) into one event. */
export const parseOpsgenie: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload) || !isRecord(payload.alert)) {
    return { ok: false, error: "not an Opsgenie webhook: expected a JSON object with an alert object" };
  }
  const alertId = firstText(payload.alert.alertId);
  if (alertId === null) {
    return { ok: false, error: "not an Opsgenie webhook: alert.alertId is missing" };
  }
  return { ok: true, events: [normalizeAction(payload, payload.alert, alertId, options)] };
};
