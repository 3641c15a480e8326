// Zabbix webhook media type, alert-sources.md section 12. Zabbix has no fixed body: the media type's
// parameters decide the keys, so this parser reads Keep's script, Zulip's media type and the
// parameter names of Zabbix's own media types. One body yields one event.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  encodeUrlPart,
  firstText,
  foreignBodyError,
  hashUid,
  isRecord,
  type LinkCandidate,
  mapSeverity,
  mapStatus,
  normalizeLinkUrl,
  parseSourceTime,
  type SeverityTable,
  type StatusResult,
  type StatusTable,
  safeUid,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

type Payload = Record<string, unknown>;

const NOT_ZABBIX =
  "not a Zabbix webhook: expected a JSON object with a trigger id (triggerId, trigger_id or a link with triggerid) or a trigger name (name, event_name, trigger, trigger_name)";

// `{EVENT.VALUE}`, `{$ZABBIX.URL}`: a macro Zabbix could not expand is sent as written.
const UNEXPANDED_MACRO = /^\{[^{}]*\}$/;

const VALUE_STATUS: StatusTable = { "1": "active", "0": "resolved" };
const STATUS_STATUS: StatusTable = { problem: "active", resolved: "resolved", ok: "resolved" };

// Numeric codes (`{EVENT.NSEVERITY}`) and the default severity names. Names can be renamed in Zabbix,
// so a renamed one stays unmapped: this table replaces the generic one (Zabbix `Warning` is Low).
const ZABBIX_SEVERITY: SeverityTable = {
  "5": "Critical",
  "4": "High",
  "3": "Medium",
  "2": "Low",
  "1": "info",
  "0": "info",
  disaster: "Critical",
  high: "High",
  average: "Medium",
  warning: "Low",
  information: "info",
  "not classified": "info",
};

/** A parameter's text, trimmed; null when absent, empty or an unexpanded macro. */
function param(payload: Payload, ...keys: string[]): string | null {
  for (const key of keys) {
    const text = firstText(payload[key]);
    if (text && !UNEXPANDED_MACRO.test(text)) return text;
  }
  return null;
}

// `tr_events.php?triggerid=14032&eventid=10528`: the trigger id is shared by problem, update and
// recovery, the event id is not.
function linkTriggerId(link: string | null): string | null {
  if (link === null || !URL.canParse(link)) return null;
  return firstText(new URL(link).searchParams.get("triggerid"));
}

function triggerId(payload: Payload): string | null {
  return param(payload, "triggerId", "trigger_id") ?? linkTriggerId(param(payload, "link"));
}

function hostName(payload: Payload): string | null {
  return param(payload, "host_name", "hostname", "host");
}

function titleText(payload: Payload): string | null {
  return param(payload, "name", "event_name", "trigger", "trigger_name");
}

function updateActions(payload: Payload): string[] {
  const raw = param(payload, "update_action", "event_update_action") ?? "";
  return raw
    .split(",")
    .map((action) => action.trim().toLowerCase())
    .filter((action) => action !== "");
}

// An update operation (acknowledge, comment, close, suppress...) decides the status first; then the
// trigger value, then the status text.
function eventStatus(payload: Payload): StatusResult {
  const actions = updateActions(payload);
  if (actions.length > 0) {
    const source_event = param(payload, "update_action", "event_update_action") ?? "";
    if (actions.includes("closed")) return { status: "resolved", source_event };
    // `unsuppressed` is its own item, so an exact match never mistakes it for `suppressed`.
    if (actions.includes("suppressed")) return { status: "ignored", source_event };
    // The end of a suppression (maintenance over) gives the problem back as it stands now, as
    // Checkmk's DOWNTIMEEND does: left ignored, a problem still open would stay hidden.
    if (actions.includes("unsuppressed")) {
      const current = currentStatus(payload);
      if (current.status === "active" || current.status === "resolved")
        return { status: current.status, source_event };
    }
    return { status: "unchanged", source_event };
  }
  return currentStatus(payload);
}

/** The problem's state the body gives: the trigger value, then the status text. */
function currentStatus(payload: Payload): StatusResult {
  const value = param(payload, "value", "event_value");
  if (value !== null && (value === "0" || value === "1")) return mapStatus(value, VALUE_STATUS);
  const status = param(payload, "status", "event_status");
  return mapStatus(status ?? value, STATUS_STATUS);
}

// The numeric code wins: severity names can be renamed, the codes cannot.
function severityValue(payload: Payload): string | null {
  const severity = param(payload, "severity");
  const digit = severity !== null && /^\d$/.test(severity) ? severity : null;
  return (
    param(payload, "nseverity", "event_nseverity") ?? digit ?? severity ?? param(payload, "event_severity")
  );
}

function description(payload: Payload, isUpdate: boolean): string | null {
  // On an update the message describes the operator's action, not the problem.
  const message = isUpdate ? null : param(payload, "message");
  return message ?? param(payload, "description", "item");
}

const TIME_OF_DAY = /^(\d{2}):(\d{2}):(\d{2})$/;
const DAY_MS = 86_400_000;

// `{EVENT.TIME}` is the problem's time of day without a date: it is put on the date of
// `lastReceived`, and a day earlier when that would be after `lastReceived` (a problem that started
// before midnight).
function problemStart(received: string | null, time: string | null): string | null {
  if (received === null) return null;
  const match = time === null ? null : TIME_OF_DAY.exec(time);
  if (!match) return received;
  const start = parseSourceTime(`${received.slice(0, 10)}T${match[1]}:${match[2]}:${match[3]}Z`);
  if (start === null) return received;
  const startMs = Date.parse(start);
  return startMs > Date.parse(received) ? new Date(startMs - DAY_MS).toISOString() : start;
}

// `tags` is `{EVENT.TAGSJSON}` text: `[{"tag":"class","value":"os"}]`. Zabbix's own media types send
// `event_tags_json`, as text or already as an array. Null when the value is not such a list.
function tagObjects(raw: unknown): unknown[] | null {
  if (Array.isArray(raw)) return raw;
  if (typeof raw !== "string" || !raw.trim().startsWith("[")) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function tagsValue(payload: Payload): unknown {
  for (const value of [payload.tags, payload.event_tags_json]) {
    if (Array.isArray(value)) return value;
    const text = firstText(value);
    if (text && !UNEXPANDED_MACRO.test(text)) return text;
  }
  return null;
}

function labels(payload: Payload): Record<string, string> {
  const builder = createLabelBuilder();
  const raw = tagsValue(payload);
  const objects = tagObjects(raw);
  if (objects === null) {
    // `{EVENT.TAGS}` instead of `{EVENT.TAGSJSON}`: `class:os, component:cpu` tag strings.
    builder.addTags(raw);
  } else {
    for (const tag of objects) {
      if (isRecord(tag) && typeof tag.tag === "string") builder.add(tag.tag, tag.value ?? "");
    }
  }
  return builder.setIfAbsent("host", hostName(payload)).toRecord();
}

// Keep's script sends the frontend URL and the ids instead of a link.
function keepEventLink(payload: Payload, trigger: string | null): string | null {
  const base = normalizeLinkUrl(param(payload, "url"));
  const eventId = param(payload, "id", "event_id");
  if (base === null || trigger === null || eventId === null) return null;
  const query = `triggerid=${encodeUrlPart(trigger)}&eventid=${encodeUrlPart(eventId)}`;
  return `${base.replace(/\/+$/, "")}/tr_events.php?${query}`;
}

function links(payload: Payload): LinkCandidate[] {
  const trigger = param(payload, "triggerId", "trigger_id");
  return [
    { kind: "source", urls: [param(payload, "link")] },
    { kind: "source", urls: [keepEventLink(payload, trigger)] },
  ];
}

function normalize(payload: Payload, uid: string, options: ParserOptions): AlertEvent {
  const status = eventStatus(payload);
  const received = parseSourceTime(param(payload, "lastReceived"));
  const resolved = status.status === "resolved";
  const parts: AlertEventParts = {
    sourceType: "zabbix",
    externalUid: uid,
    status,
    ignoredValue: "suppressed",
    title: titleText(payload),
    description: description(payload, updateActions(payload).length > 0),
    severity: mapSeverity(severityValue(payload), {
      table: ZABBIX_SEVERITY,
      generic: false,
      overrides: options.severityOverrides,
    }),
    triggeredAt: resolved ? null : problemStart(received, param(payload, "time")),
    resolvedAt: resolved ? received : null,
    labels: labels(payload),
    links: buildLinks(links(payload)),
  };
  return buildAlertEvent(parts);
}

/** Parses a Zabbix media type body into one event. */
export const parseZabbix: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) return { ok: false, error: NOT_ZABBIX };
  const foreign = foreignBodyError(payload, "zabbix");
  if (foreign) return foreign;
  const trigger = triggerId(payload);
  const title = titleText(payload);
  if (trigger === null && title === null) return { ok: false, error: NOT_ZABBIX };
  // Without a trigger id the series is the host's trigger name.
  const uid = trigger === null ? hashUid(hostName(payload), title) : safeUid(trigger);
  return { ok: true, events: [normalize(payload, uid, options)] };
};
