// Sentry webhooks, alert-sources.md section 11: the integration platform (resource from the
// `Sentry-Hook-Resource` header, else from the body's shape) and the legacy WebHooks plugin. One
// event per body; `installation`, `comment` and unknown resources yield none.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  type LabelBuilder,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  rawText,
  type SeverityTable,
  type StatusResult,
  type StatusTable,
} from "./normalize/index.ts";
import type { AlertEvent, ParseResult, Parser, ParserOptions } from "./types.ts";

type AlertResource = "issue" | "activity_alert" | "event_alert" | "error" | "metric_alert" | "legacy";

const ALERT_RESOURCES: readonly AlertResource[] = [
  "issue",
  "activity_alert",
  "event_alert",
  "error",
  "metric_alert",
];

const ISSUE_ACTION: StatusTable = {
  created: "active",
  unresolved: "active",
  triggered: "active",
  resolved: "resolved",
  ignored: "ignored",
  archived: "ignored",
  assigned: "unchanged",
};

const ACTIVITY_ALERT_ACTION: StatusTable = { created: "active", unresolved: "active", triggered: "active" };

const METRIC_ALERT_ACTION: StatusTable = { critical: "active", warning: "active", resolved: "resolved" };

// Metric alerts carry no level: the action is the severity. It is not a generic severity word.
const METRIC_ALERT_SEVERITY: SeverityTable = { critical: "Critical", warning: "Medium", resolved: "info" };

// Personal data, never stored as labels.
const PERSONAL_TAGS = new Set(["user", "sentry:user"]);

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

// An id is a non-empty string or a number; other JSON (true, {}) is not an id.
function idText(value: unknown): string | null {
  if (typeof value !== "string" && typeof value !== "number") return null;
  return rawText(value) || null;
}

// Event alerts, errors and the legacy plugin fire on every matching event and never resolve.
function alwaysActive(action: unknown): StatusResult {
  return { status: "active", source_event: rawText(action) ?? "" };
}

// The event's tags, pairs `[key, value]` or objects `{key, value}`, without personal data; then the
// event's `environment` when no tag gave one.
function addEventTags(labels: LabelBuilder, event: Record<string, unknown>): LabelBuilder {
  const tags = Array.isArray(event.tags) ? event.tags : [];
  for (const tag of tags) {
    const [key, value] = Array.isArray(tag) ? tag : [record(tag).key, record(tag).value];
    if (typeof key !== "string" || PERSONAL_TAGS.has(key.trim())) continue;
    labels.add(key, value);
  }
  const environment = firstText(event.environment);
  if (environment !== null) labels.setIfAbsent("environment", environment);
  return labels;
}

function eventTime(event: Record<string, unknown>): string | null {
  return parseSourceTime(event.datetime) ?? parseSourceTime(event.timestamp);
}

// A new issue starts at its first event, an escalation at its latest one. An unresolve (a person
// re-opening the issue, or a regression) happens after the resolve, which the payload does not date:
// `lastSeen` may well be before it, which would make the re-open stale. It is dated like the
// resolve, by when Sentry sent the delivery, else left to the receive time.
function issueStartTime(
  status: StatusResult,
  issue: Record<string, unknown>,
  sentAt: string | null,
): string | null {
  const action = status.source_event.toLowerCase();
  if (action === "unresolved") return sentAt;
  return parseSourceTime(action === "created" ? issue.firstSeen : issue.lastSeen);
}

function normalizeIssue(
  resource: "issue" | "activity_alert",
  action: unknown,
  issue: Record<string, unknown>,
  uid: string,
  sentAt: string | null,
  options: ParserOptions,
): AlertEvent {
  const status = mapStatus(action, resource === "issue" ? ISSUE_ACTION : ACTIVITY_ALERT_ACTION);
  const parts: AlertEventParts = {
    sourceType: "sentry",
    externalUid: uid,
    status,
    title: issue.title,
    description: issue.culprit,
    severity: mapSeverity(issue.level, { overrides: options.severityOverrides }),
    triggeredAt: status.status === "active" ? issueStartTime(status, issue, sentAt) : null,
    resolvedAt: status.status === "resolved" ? sentAt : null,
    labels: createLabelBuilder()
      .add("project", firstText(record(issue.project).slug))
      .add("platform", firstText(issue.platform))
      .toRecord(),
    links: buildLinks([{ kind: "source", urls: [issue.web_url, issue.permalink] }]),
  };
  return buildAlertEvent(parts);
}

// An issue alert (`event_alert`) or an `error` webhook: both carry one event of the issue.
function normalizeEvent(
  action: unknown,
  event: Record<string, unknown>,
  uid: string,
  options: ParserOptions,
): AlertEvent {
  const parts: AlertEventParts = {
    sourceType: "sentry",
    externalUid: uid,
    status: alwaysActive(action),
    title: event.title,
    description: event.culprit,
    severity: mapSeverity(event.level, { overrides: options.severityOverrides }),
    triggeredAt: eventTime(event),
    labels: addEventTags(createLabelBuilder(), event).toRecord(),
    links: buildLinks([{ kind: "source", urls: [event.web_url] }]),
  };
  return buildAlertEvent(parts);
}

function normalizeMetricAlert(
  action: unknown,
  data: Record<string, unknown>,
  metricAlert: Record<string, unknown>,
  uid: string,
  options: ParserOptions,
): AlertEvent {
  const status = mapStatus(action, METRIC_ALERT_ACTION);
  const rule = record(metricAlert.alert_rule);
  const labels = createLabelBuilder();
  if (Array.isArray(metricAlert.projects)) {
    for (const project of metricAlert.projects) labels.add("project", firstText(project));
  }
  labels.add("environment", firstText(rule.environment));
  const parts: AlertEventParts = {
    sourceType: "sentry",
    externalUid: uid,
    status,
    title: firstText(rule.name, metricAlert.title),
    description: data.description_text,
    severity: mapSeverity(action, {
      table: METRIC_ALERT_SEVERITY,
      generic: false,
      overrides: options.severityOverrides,
    }),
    triggeredAt:
      status.status === "active"
        ? (parseSourceTime(metricAlert.date_detected) ?? parseSourceTime(metricAlert.date_started))
        : null,
    resolvedAt: status.status === "resolved" ? parseSourceTime(metricAlert.date_closed) : null,
    labels: labels.toRecord(),
    links: buildLinks([{ kind: "source", urls: [data.web_url] }]),
  };
  return buildAlertEvent(parts);
}

// The legacy WebHooks plugin: the issue's fields at the top level, the triggering event in `event`.
function normalizeLegacy(payload: Record<string, unknown>, uid: string, options: ParserOptions): AlertEvent {
  const event = record(payload.event);
  const parts: AlertEventParts = {
    sourceType: "sentry",
    externalUid: uid,
    // The plugin sends no action: every delivery is a matching event.
    status: alwaysActive(undefined),
    title: firstText(event.title, payload.message, payload.culprit),
    description: payload.message,
    severity: mapSeverity(firstText(payload.level, event.level), { overrides: options.severityOverrides }),
    triggeredAt: parseSourceTime(event.timestamp),
    labels: addEventTags(createLabelBuilder(), event)
      .set("project", firstText(payload.project_slug))
      .toRecord(),
    links: buildLinks([{ kind: "source", urls: [payload.url] }]),
  };
  return buildAlertEvent(parts);
}

type ResourceChoice = { resource: AlertResource } | { none: string } | { error: string };

function noAlert(resource: string): ResourceChoice {
  return { none: `Sentry ${resource} webhook: carries no alert` };
}

// The resource of a body without the header, from its shape (section 11, "Accepts").
function resourceFromShape(payload: Record<string, unknown>): ResourceChoice {
  if (isRecord(payload.data)) {
    const data = payload.data;
    if (isRecord(data.metric_alert)) return { resource: "metric_alert" };
    if (isRecord(data.event) && "triggered_rule" in data) return { resource: "event_alert" };
    if (isRecord(data.error)) return { resource: "error" };
    if (isRecord(data.issue)) return { resource: "issue" };
    if (isRecord(data.installation)) return noAlert("installation");
    if ("comment" in data) return noAlert("comment");
  }
  if ("project_slug" in payload || ("id" in payload && isRecord(payload.event)))
    return { resource: "legacy" };
  return {
    error:
      "not a Sentry webhook: expected data.issue, data.event with data.triggered_rule, data.error or data.metric_alert, or a legacy plugin body with id and event",
  };
}

function chooseResource(
  headers: Record<string, string | undefined>,
  payload: Record<string, unknown>,
): ResourceChoice {
  const header = headers["sentry-hook-resource"]?.trim().toLowerCase();
  if (!header) return resourceFromShape(payload);
  const known = ALERT_RESOURCES.find((resource) => resource === header);
  return known === undefined ? noAlert(header) : { resource: known };
}

function missing(what: string): ParseResult {
  return { ok: false, error: `not a Sentry webhook: ${what} is missing` };
}

// The event of a resource, or the error naming the field the body lacks.
function parseResource(
  resource: AlertResource,
  payload: Record<string, unknown>,
  sentAt: string | null,
  options: ParserOptions,
): ParseResult {
  const data = record(payload.data);
  const ok = (event: AlertEvent): ParseResult => ({ ok: true, events: [event] });
  switch (resource) {
    case "issue":
    case "activity_alert": {
      if (!isRecord(data.issue)) return missing("data.issue");
      const uid = idText(data.issue.id);
      return uid === null
        ? missing("data.issue.id")
        : ok(normalizeIssue(resource, payload.action, data.issue, uid, sentAt, options));
    }
    case "event_alert":
    case "error": {
      const field = resource === "error" ? "error" : "event";
      const event = data[field];
      if (!isRecord(event)) return missing(`data.${field}`);
      // The issue id, never `event_id`, so issue webhooks and issue alerts of one issue meet.
      const uid = idText(event.issue_id);
      return uid === null
        ? missing(`data.${field}.issue_id`)
        : ok(normalizeEvent(payload.action, event, uid, options));
    }
    case "metric_alert": {
      if (!isRecord(data.metric_alert)) return missing("data.metric_alert");
      const id = idText(data.metric_alert.id);
      // The prefix keeps a Sentry incident apart from an issue with the same number.
      return id === null
        ? missing("data.metric_alert.id")
        : ok(normalizeMetricAlert(payload.action, data, data.metric_alert, `incident-${id}`, options));
    }
    case "legacy": {
      const uid = idText(payload.id);
      return uid === null
        ? missing("id (the legacy plugin's issue id)")
        : ok(normalizeLegacy(payload, uid, options));
    }
  }
}

/** Parses a Sentry webhook body into one event, or none for messages that carry no alert. */
export const parseSentry: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) return { ok: false, error: "not a Sentry webhook: expected a JSON object" };
  const choice = chooseResource(headers, payload);
  if ("error" in choice) return { ok: false, error: choice.error };
  if ("none" in choice) return { ok: true, events: [], note: choice.none };
  // `Sentry-Hook-Timestamp`: the Unix seconds at which Sentry sent this delivery.
  const sentAt = parseSourceTime(headers["sentry-hook-timestamp"]);
  return parseResource(choice.resource, payload, sentAt, options);
};
