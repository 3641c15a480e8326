// Uptime Kuma "Webhook" notification (JSON body), alert-sources.md section 16: `{heartbeat, monitor,
// msg}`. One event per body; the monitor id labels the series. The heartbeat status drives both the
// event status and the bucket.
import {
  type AlertEventParts,
  buildAlertEvent,
  createLabelBuilder,
  decodeBody,
  firstText,
  GENERIC_SEVERITY_TABLE,
  hashUid,
  isRecord,
  lookupIgnoringCase,
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

// `heartbeat.status`: 0 DOWN, 1 UP, 2 PENDING (retrying, not yet down), 3 MAINTENANCE; 2.x and
// replaying senders may write the names.
const HEARTBEAT_STATUS: StatusTable = {
  "0": "active",
  "1": "resolved",
  "2": "unchanged",
  "3": "ignored",
  down: "active",
  up: "resolved",
  pending: "unchanged",
  maintenance: "ignored",
};

// The bucket follows the heartbeat status; this table replaces the generic one, so any other value
// is unmapped.
const HEARTBEAT_SEVERITY: SeverityTable = {
  "0": "Critical",
  "1": "info",
  "2": "Medium",
  "3": "info",
  down: "Critical",
  up: "info",
  pending: "Medium",
  maintenance: "info",
};

const TEST_UID = "test-notification";

// The "Test" button sends `<notification name> Testing` (server.js, testNotification).
const TEST_MESSAGE = /(?:^|\s)Testing$/;

// The countdown of Uptime Kuma's expiry warnings: `[<monitor>][<url>] <type> certificate <CN> will be
// expired in <n> days` (older releases: `... Certificate will be expired ...`; 2.x: `... will expire
// in ...`) and, in 2.x, `Domain name <domain> will expire in <n> days`. What precedes it names the
// certificate or domain.
const EXPIRY_COUNTDOWN = /\s+will (?:be expired|expire) in -?\d+ days?\s*$/i;

interface MonitorTag {
  name: string;
  value: string;
}

// `monitor.tags[]` as name/value pairs; a null or empty value is "".
function monitorTags(monitor: Record<string, unknown>): MonitorTag[] {
  if (!Array.isArray(monitor.tags)) return [];
  return monitor.tags.flatMap((tag) => {
    const name = isRecord(tag) ? rawText(tag.name) : null;
    if (!isRecord(tag) || !name) return [];
    return [{ name, value: rawText(tag.value) ?? "" }];
  });
}

// A `severity` tag whose value the generic table knows overrides the status bucket.
function eventSeverity(status: unknown, tags: MonitorTag[], options: ParserOptions): SeverityResult {
  const tag = tags.find(
    ({ name, value }) =>
      name.toLowerCase() === "severity" && lookupIgnoringCase(GENERIC_SEVERITY_TABLE, value) !== undefined,
  );
  if (tag) return mapSeverity(tag.value, { overrides: options.severityOverrides });
  return mapSeverity(status, {
    table: HEARTBEAT_SEVERITY,
    generic: false,
    overrides: options.severityOverrides,
  });
}

// `heartbeat.time` is UTC (Uptime Kuma stores UTC) without a zone; `localDateTime` is the server's
// wall time and is only usable with its `timezoneOffset`.
function heartbeatTime(heartbeat: Record<string, unknown>): string | null {
  const utc = parseSourceTime(heartbeat.time);
  if (utc !== null) return utc;
  const local = firstText(heartbeat.localDateTime);
  const offset = firstText(heartbeat.timezoneOffset);
  return local && offset ? parseSourceTime(`${local}${offset}`) : null;
}

function monitorLabels(monitor: Record<string, unknown>, tags: MonitorTag[]): Record<string, string> {
  const labels = createLabelBuilder();
  for (const { name, value } of tags) labels.add(name, value);
  labels.set("monitor_type", firstText(monitor.type));
  labels.set("hostname", firstText(monitor.hostname));
  return labels.toRecord();
}

function normalizeHeartbeat(
  uid: string,
  heartbeat: Record<string, unknown>,
  monitor: Record<string, unknown>,
  payload: Record<string, unknown>,
  options: ParserOptions,
): AlertEvent {
  const status = mapStatus(heartbeat.status, HEARTBEAT_STATUS);
  const tags = monitorTags(monitor);
  const time = heartbeatTime(heartbeat);
  const parts: AlertEventParts = {
    sourceType: "uptime-kuma",
    externalUid: uid,
    status,
    ignoredValue: "maintenance",
    title: monitor.name,
    description: firstText(heartbeat.msg, payload.msg),
    severity: eventSeverity(heartbeat.status, tags, options),
    triggeredAt: status.status === "active" ? time : null,
    resolvedAt: status.status === "resolved" ? time : null,
    labels: monitorLabels(monitor, tags),
    // No links: the monitored URL is the target, not a page about the alert.
  };
  const event = buildAlertEvent(parts);
  if (status.status === "active" && isResend(heartbeat.important)) event.reminder = true;
  return event;
}

// Uptime Kuma marks the heartbeat of a state change `important`; a DOWN heartbeat sent without it is
// a resend while the monitor stays down (its resend interval). Older databases hand the flag back as
// 0/1. A body without the field says nothing, so its DOWN counts as a trigger.
function isResend(important: unknown): boolean {
  return important === false || important === 0 || important === "0" || important === "false";
}

// The "Test" button sends `msg` with a null monitor and heartbeat. Nothing drives a status, so the
// test shows as firing, as 1.9 asks; `source_event` says why.
function testEvent(msg: string): AlertEvent {
  const status: StatusResult = { status: "active", source_event: "test" };
  return buildAlertEvent({
    sourceType: "uptime-kuma",
    externalUid: TEST_UID,
    status,
    title: msg,
    description: msg,
    severity: mapSeverity(null),
    isTest: true,
  });
}

// Uptime Kuma sends certificate and domain expiry warnings in the Test button's shape (no monitor, no
// heartbeat). Each is an alert of its own subject: the message without its countdown, so the 14-day
// and the 7-day warnings of one certificate update one alert while two certificates stay apart. A
// warning, not an outage; the payload has no time.
function noticeEvent(msg: string, options: ParserOptions): AlertEvent {
  const status: StatusResult = { status: "active", source_event: "notice" };
  return buildAlertEvent({
    sourceType: "uptime-kuma",
    externalUid: hashUid(msg.replace(EXPIRY_COUNTDOWN, "")),
    status,
    title: msg,
    description: msg,
    severity: mapSeverity("warning", { overrides: options.severityOverrides }),
  });
}

function monitorlessEvent(payload: Record<string, unknown>, options: ParserOptions): ParseResult {
  const msg = firstText(payload.msg);
  if (msg === null) {
    return {
      ok: false,
      error: "not an Uptime Kuma webhook: msg is empty and there is no monitor or heartbeat",
    };
  }
  return { ok: true, events: [TEST_MESSAGE.test(msg) ? testEvent(msg) : noticeEvent(msg, options)] };
}

// The monitor id as decimal text (`monitor.id`, else `heartbeat.monitorID`), or null.
function monitorUid(monitor: Record<string, unknown>, heartbeat: Record<string, unknown>): string | null {
  for (const id of [monitor.id, heartbeat.monitorID]) {
    if (typeof id === "number" && Number.isInteger(id)) return String(id);
    if (typeof id === "string" && id.trim() !== "") return id.trim();
  }
  return null;
}

/** Parses an Uptime Kuma webhook notification into one event. */
export const parseUptimeKuma: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) {
    return {
      ok: false,
      error: "not an Uptime Kuma webhook: expected a JSON object with heartbeat and monitor",
    };
  }
  if (payload.heartbeat === null && payload.monitor === null) return monitorlessEvent(payload, options);
  const { heartbeat } = payload;
  const monitor = payload.monitor ?? {};
  if (!isRecord(heartbeat) || !isRecord(monitor)) {
    return { ok: false, error: "not an Uptime Kuma webhook: expected heartbeat and monitor objects" };
  }
  const uid = monitorUid(monitor, heartbeat);
  if (uid === null) {
    return {
      ok: false,
      error: "not an Uptime Kuma webhook: neither monitor.id nor heartbeat.monitorID is set",
    };
  }
  return { ok: true, events: [normalizeHeartbeat(uid, heartbeat, monitor, payload, options)] };
};
