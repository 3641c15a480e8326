// PagerDuty webhooks, alert-sources.md section 5. V3 subscriptions send one `{event}` envelope per
// delivery; the deprecated V2 body `{messages: [...]}` carries several. Either way an event is about
// one incident, which is the Vigil alert: PagerDuty opens a new incident per episode.
import {
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  rawText,
  type SeverityResult,
  type SeverityTable,
  type StatusResult,
  type StatusTable,
} from "./normalize/index.ts";
import type { AlertEvent, ParseResult, Parser, ParserOptions } from "./types.ts";

const V3_STATUS: StatusTable = {
  "incident.triggered": "active",
  // A reopened incident fires again.
  "incident.reopened": "active",
  "incident.resolved": "resolved",
};
const V2_STATUS: StatusTable = {
  "incident.trigger": "active",
  "incident.resolve": "resolved",
};
const URGENCY_SEVERITY: SeverityTable = { high: "High", low: "Low" };

/** One incident event, whichever webhook version carried it. */
interface IncidentEvent {
  eventType: unknown;
  /** When the event happened (V3 `event.occurred_at`, V2 message `created_on`). */
  occurredAt: unknown;
  /** When the incident was opened (V3 `created_at`; V2 incidents may write `created_on`). */
  createdAt: unknown;
  /** The full incident object, when the event carries one. */
  incident: Record<string, unknown> | null;
  /** The incident reference of a note, status update or responder event. */
  reference: Record<string, unknown> | null;
}

// Every incident.* event type the tables do not list (acknowledged, annotated, escalated, ... and
// later ones) updates data only; anything else is unmapped.
function incidentStatus(eventType: unknown, table: StatusTable): StatusResult {
  const status = mapStatus(eventType, table);
  if (status.unmapped && status.source_event.toLowerCase().startsWith("incident.")) {
    return { status: "unchanged", source_event: status.source_event };
  }
  return status;
}

// A reopen starts a new episode of the incident: it is dated by `reopened_at`, else by when the event
// happened, never by the incident's creation, which is before its resolve and would make the reopen
// stale. A resolve carries its episode's start only when the incident says it: when the event
// happened is the resolve's own time, and as a start it would make the episode begin as it ended.
// Other events keep the design's chain.
function triggerTime(event: IncidentEvent, status: StatusResult): unknown {
  const reopenedAt = event.incident?.reopened_at;
  if (status.source_event.toLowerCase() === "incident.reopened")
    return firstText(reopenedAt, event.occurredAt);
  if (status.status === "resolved") return firstText(reopenedAt, event.createdAt);
  return firstText(reopenedAt, event.createdAt, event.occurredAt);
}

// Priority names are account-specific: `P1`..`P5` map through the generic table, `SEV-1` is unmapped.
function incidentSeverity(incident: Record<string, unknown> | null, options: ParserOptions): SeverityResult {
  const overrides = options.severityOverrides;
  const priority = incident && isRecord(incident.priority) ? rawText(incident.priority.summary) : null;
  if (priority) return mapSeverity(priority, { overrides });
  return mapSeverity(incident?.urgency, { table: URGENCY_SEVERITY, generic: false, overrides });
}

function summaryOf(value: unknown): unknown {
  return isRecord(value) ? value.summary : undefined;
}

function incidentLabels(incident: Record<string, unknown> | null): Record<string, string> {
  if (incident === null) return {};
  const teams = Array.isArray(incident.teams) ? incident.teams.map((team) => rawText(summaryOf(team))) : [];
  const teamNames = teams.filter((name) => name);
  return createLabelBuilder()
    .set("service", summaryOf(incident.service))
    .set("escalation_policy", summaryOf(incident.escalation_policy))
    .set("team", teamNames.length > 0 ? teamNames.join(",") : null)
    .set("urgency", incident.urgency)
    .toRecord();
}

function normalizeIncidentEvent(
  event: IncidentEvent,
  uid: string,
  table: StatusTable,
  options: ParserOptions,
): AlertEvent {
  const { incident, reference } = event;
  const status = incidentStatus(event.eventType, table);
  return buildAlertEvent({
    sourceType: "pagerduty",
    externalUid: uid,
    status,
    title: firstText(incident?.title, reference?.summary),
    // Webhooks carry no incident body; notes and status updates never become the description.
    description: "",
    severity: incidentSeverity(incident, options),
    triggeredAt: parseSourceTime(triggerTime(event, status)),
    resolvedAt: status.status === "resolved" ? parseSourceTime(event.occurredAt) : null,
    labels: incidentLabels(incident),
    links: buildLinks([{ kind: "source", urls: [incident?.html_url, reference?.html_url] }]),
  });
}

// The incident id, or null when the event names no incident.
function incidentUid(event: IncidentEvent): string | null {
  return firstText(event.incident?.id, event.reference?.id);
}

// --- V3 ---------------------------------------------------------------------------------------

// `data` is the incident itself (`type: incident`) or an object that references one.
function v3IncidentEvent(event: Record<string, unknown>): IncidentEvent {
  const data = isRecord(event.data) ? event.data : {};
  const isIncident = rawText(data.type)?.toLowerCase() === "incident";
  return {
    eventType: event.event_type,
    occurredAt: event.occurred_at,
    createdAt: isIncident ? data.created_at : undefined,
    incident: isIncident ? data : null,
    reference: !isIncident && isRecord(data.incident) ? data.incident : null,
  };
}

// `pagey.ping` and `service.*` are about the subscription or a service, not an incident.
function isIncidentResource(event: Record<string, unknown>): boolean {
  const resourceType = rawText(event.resource_type);
  if (resourceType) return resourceType.toLowerCase() === "incident";
  return rawText(event.event_type)?.toLowerCase().startsWith("incident.") === true;
}

function parseV3(event: Record<string, unknown>, options: ParserOptions): ParseResult {
  const kind = firstText(event.event_type, event.resource_type);
  if (kind === null) {
    return { ok: false, error: "not a PagerDuty webhook: event has no event_type or resource_type" };
  }
  if (!isIncidentResource(event)) {
    return { ok: true, events: [], note: `PagerDuty ${kind} carries no incident: no alert event` };
  }
  const incidentEvent = v3IncidentEvent(event);
  const uid = incidentUid(incidentEvent);
  if (uid === null) {
    return {
      ok: false,
      error: "not a PagerDuty incident event: event.data has no incident id (data.id or data.incident.id)",
    };
  }
  return { ok: true, events: [normalizeIncidentEvent(incidentEvent, uid, V3_STATUS, options)] };
}

// --- V2 (deprecated) --------------------------------------------------------------------------

function parseV2(messages: unknown[], options: ParserOptions): ParseResult {
  const events: AlertEvent[] = [];
  for (const [index, message] of messages.entries()) {
    const incident = isRecord(message) && isRecord(message.incident) ? message.incident : null;
    const incidentEvent: IncidentEvent = {
      eventType: isRecord(message) ? message.event : undefined,
      occurredAt: isRecord(message) ? message.created_on : undefined,
      createdAt: firstText(incident?.created_at, incident?.created_on),
      incident,
      reference: null,
    };
    const uid = incidentUid(incidentEvent);
    if (uid === null) {
      return {
        ok: false,
        error: `not a PagerDuty V2 webhook: messages[${index}] has no incident with an id`,
      };
    }
    events.push(normalizeIncidentEvent(incidentEvent, uid, V2_STATUS, options));
  }
  return { ok: true, events };
}

/** Parses a PagerDuty V3 (or deprecated V2) webhook body into incident events. */
export const parsePagerduty: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (isRecord(payload) && isRecord(payload.event)) return parseV3(payload.event, options);
  if (isRecord(payload) && Array.isArray(payload.messages)) return parseV2(payload.messages, options);
  return {
    ok: false,
    error:
      "not a PagerDuty webhook: expected a JSON object with an event object (V3) or a messages array (V2)",
  };
};
