// Checkmk notifications, alert-sources.md section 17. Checkmk has no built-in JSON webhook: the body
// is what Keep's notification script `webhook-keep.py` posts, or the raw NOTIFY_* variables of a
// notification script. One event per body; the series is (site, host, service).
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  hashUid,
  isRecord,
  lookupIgnoringCase,
  mapSeverity,
  mapStatus,
  normalizeDescription,
  parseSourceTime,
  rawText,
  type SeverityTable,
  type StatusResult,
  type StatusTable,
  type VigilFlag,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

/** The fields of a notification, whichever body shape carried them. */
interface Notification {
  isService: boolean;
  notificationType: unknown;
  host: string;
  service: string;
  site: unknown;
  /** The host state for hosts; for services, what the script derives from the notification type. */
  status: unknown;
  /** The service state (services only: the script hard-codes `OK` for hosts). */
  serviceState: unknown;
  output: unknown;
  longOutput: unknown;
  checkCommand: unknown;
  url: unknown;
  microTime: unknown;
  longDateTime: unknown;
  shortDateTime: unknown;
}

// DOWNTIMEEND and DOWNTIMECANCELLED are decided from the current state (see notificationStatus).
const NOTIFICATION_TYPE: StatusTable = {
  PROBLEM: "active",
  RECOVERY: "resolved",
  ACKNOWLEDGEMENT: "unchanged",
  FLAPPINGSTART: "unchanged",
  FLAPPINGSTOP: "unchanged",
  FLAPPINGDISABLED: "unchanged",
  CUSTOM: "unchanged",
  DOWNTIMESTART: "ignored",
};

const DOWNTIME_OVER = ["DOWNTIMEEND", "DOWNTIMECANCELLED"];
const OK_STATES = ["OK", "UP"];

// Older scripts send no notification type: the status field alone says what happened.
const STATUS_WITHOUT_TYPE: StatusTable = {
  UP: "resolved",
  DOWN: "active",
  UNREACH: "active",
  UNREACHABLE: "active",
  ACKNOWLEDGED: "unchanged",
};

// These tables replace the generic one: a Checkmk state word outside them is unmapped.
const SERVICE_SEVERITY: SeverityTable = {
  CRITICAL: "Critical",
  CRIT: "Critical",
  WARNING: "Medium",
  WARN: "Medium",
  UNKNOWN: "Medium",
  UNKN: "Medium",
  OK: "info",
};
const HOST_SEVERITY: SeverityTable = {
  DOWN: "Critical",
  UNREACHABLE: "High",
  UNREACH: "High",
  UP: "info",
};

// `long_date_time` as Checkmk writes it (`%a %b %d %H:%M:%S %Z %Y` in the site's local time, or
// `date`'s default with a space-padded day): `Sun Oct 27 09:41:55 UTC 2024`, `Mon Jul  1 08:00:00
// EDT 2024`. The zone is an abbreviation, or a numeric offset where the zone has none (`+03`, `+0530`).
const LONG_DATE_TIME = /^[A-Za-z]{3} ([A-Za-z]{3}) +(\d{1,2}) (\d{2}:\d{2}:\d{2}) (\S+) (\d{4})$/;
const NUMERIC_ZONE = /^([+-])(\d{2})(?::?(\d{2}))?$/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

// Zone abbreviations that name one offset. CST/CDT are North American Central time and BST is
// British Summer Time; an abbreviation that several zones use (IST: India, Ireland or Israel) or one
// not listed is not resolved, and the time falls back to `short_date_time` read as UTC.
const ZONE_OFFSETS: Readonly<Record<string, string>> = {
  UTC: "+00:00",
  GMT: "+00:00",
  Z: "+00:00",
  EST: "-05:00",
  EDT: "-04:00",
  CST: "-06:00",
  CDT: "-05:00",
  MST: "-07:00",
  MDT: "-06:00",
  PST: "-08:00",
  PDT: "-07:00",
  AKST: "-09:00",
  AKDT: "-08:00",
  HST: "-10:00",
  WET: "+00:00",
  WEST: "+01:00",
  BST: "+01:00",
  CET: "+01:00",
  CEST: "+02:00",
  EET: "+02:00",
  EEST: "+03:00",
  SAST: "+02:00",
  MSK: "+03:00",
  AWST: "+08:00",
  JST: "+09:00",
  KST: "+09:00",
  ACST: "+09:30",
  ACDT: "+10:30",
  AEST: "+10:00",
  AEDT: "+11:00",
  NZST: "+12:00",
  NZDT: "+13:00",
};

function text(value: unknown): string {
  return rawText(value) ?? "";
}

// The script's JSON: `what` says HOST or SERVICE; a body without `what` is a service notification
// when it names a service.
function fromScriptJson(payload: Record<string, unknown>): Notification {
  const what = text(payload.what).toUpperCase();
  const service = text(payload.service);
  return {
    isService: what === "SERVICE" || (what === "" && service !== ""),
    notificationType: payload.notification_type,
    host: text(payload.host),
    service,
    site: payload.site,
    status: payload.status,
    serviceState: payload.severity,
    output: payload.output,
    longOutput: payload.long_output,
    checkCommand: payload.check_command,
    url: payload.url,
    microTime: payload.micro_time,
    longDateTime: payload.long_date_time,
    shortDateTime: payload.short_date_time,
  };
}

// Checkmk's own variables, mapped to the fields the script would have sent.
function fromNotifyVariables(payload: Record<string, unknown>): Notification {
  const isService = text(payload.NOTIFY_WHAT).toUpperCase() === "SERVICE";
  const kind = isService ? "SERVICE" : "HOST";
  return {
    isService,
    notificationType: payload.NOTIFY_NOTIFICATIONTYPE,
    host: text(payload.NOTIFY_HOSTNAME),
    service: isService ? text(payload.NOTIFY_SERVICEDESC) : "",
    site: payload.OMD_SITE,
    status: payload.NOTIFY_HOSTSTATE,
    serviceState: payload.NOTIFY_SERVICESTATE,
    output: payload[`NOTIFY_${kind}OUTPUT`],
    longOutput: payload[`NOTIFY_LONG${kind}OUTPUT`],
    checkCommand: payload[`NOTIFY_${kind}CHECKCOMMAND`],
    url: payload[`NOTIFY_${kind}URL`],
    microTime: payload.NOTIFY_MICROTIME,
    longDateTime: payload.NOTIFY_LONGDATETIME,
    shortDateTime: payload.NOTIFY_SHORTDATETIME,
  };
}

// The state the object is in now: the service state for services, the host state for hosts.
function currentState(notification: Notification): unknown {
  return notification.isService ? notification.serviceState : notification.status;
}

function notificationStatus(notification: Notification): StatusResult {
  const type = text(notification.notificationType);
  if (type === "") return mapStatus(notification.status, STATUS_WITHOUT_TYPE);
  if (DOWNTIME_OVER.includes(type.toUpperCase())) {
    const state = text(currentState(notification)).toUpperCase();
    return { status: OK_STATES.includes(state) ? "resolved" : "active", source_event: type };
  }
  // An alert handler's result comes with its outcome: `ALERTHANDLER (OK)`, `ALERTHANDLER (FAILED)`.
  if (ALERT_HANDLER.test(type)) return { status: "unchanged", source_event: type };
  return mapStatus(type, NOTIFICATION_TYPE);
}

const ALERT_HANDLER = /^ALERTHANDLER(?: \(.*\))?$/i;

function statusFlags(notification: Notification): VigilFlag[] {
  const type = text(notification.notificationType).toUpperCase();
  return type === "FLAPPINGSTART" ? ["vigil_flapping"] : [];
}

// Prefers the exact `micro_time`; then `long_date_time` when its zone is a known abbreviation or a
// numeric offset; then `short_date_time`, which carries no zone and is taken as UTC.
function notificationTime(notification: Notification): string | null {
  return (
    parseSourceTime(notification.microTime) ??
    parseLongDateTime(notification.longDateTime) ??
    parseSourceTime(notification.shortDateTime)
  );
}

function parseLongDateTime(value: unknown): string | null {
  const match = LONG_DATE_TIME.exec(text(value));
  if (!match) return null;
  const [, monthName, day, time, zone, year] = match;
  const month = MONTHS.indexOf((monthName ?? "").toLowerCase()) + 1;
  const offset = zoneOffset(zone ?? "");
  if (month === 0 || offset === null) return null;
  const iso = `${year}-${String(month).padStart(2, "0")}-${(day ?? "").padStart(2, "0")}T${time}${offset}`;
  return parseSourceTime(iso);
}

// `+hh:mm` for a listed abbreviation or a numeric offset (`+0200`, `+02:00`, `+02`); else null.
function zoneOffset(zone: string): string | null {
  const numeric = NUMERIC_ZONE.exec(zone);
  if (numeric) return `${numeric[1]}${numeric[2]}:${numeric[3] ?? "00"}`;
  return lookupIgnoringCase(ZONE_OFFSETS, zone) ?? null;
}

// Checkmk passes long plugin output with each line break escaped as the two characters `\n`.
function unescapeLineBreaks(value: string): string {
  return value.replaceAll("\\n", "\n");
}

// "output, then long_output", one line break between (not the blank line of joinDescription).
function description(notification: Notification): string {
  const longOutput = unescapeLineBreaks(text(notification.longOutput)).trim();
  const parts = [text(notification.output), longOutput].filter((part) => part !== "");
  return normalizeDescription(parts.join("\n"));
}

function title(notification: Notification): string {
  if (notification.isService) return `${notification.service} on ${notification.host}`;
  return `Host ${notification.host} is ${text(notification.status)}`;
}

function labels(notification: Notification): Record<string, string> {
  const builder = createLabelBuilder();
  const fields: [string, unknown][] = [
    ["host", notification.host],
    ["service", notification.isService ? notification.service : null],
    ["site", notification.site],
    ["check_command", notification.checkCommand],
  ];
  for (const [key, value] of fields) builder.add(key, firstText(value));
  return builder.toRecord();
}

function normalizeNotification(notification: Notification, options: ParserOptions): AlertEvent {
  const status = notificationStatus(notification);
  const time = notificationTime(notification);
  const parts: AlertEventParts = {
    sourceType: "checkmk",
    externalUid: hashUid(text(notification.site), notification.host, notification.service),
    status,
    title: title(notification),
    description: description(notification),
    // Hosts: the script hard-codes `severity: OK`, so the host state is the severity.
    severity: mapSeverity(notification.isService ? notification.serviceState : notification.status, {
      table: notification.isService ? SERVICE_SEVERITY : HOST_SEVERITY,
      generic: false,
      overrides: options.severityOverrides,
    }),
    triggeredAt: status.status === "active" ? time : null,
    resolvedAt: status.status === "resolved" ? time : null,
    labels: labels(notification),
    flags: statusFlags(notification),
    // `url` is relative to the Checkmk site and the registration has no site base URL, so only an
    // absolute URL survives.
    links: buildLinks([{ kind: "source", urls: [notification.url] }]),
  };
  return buildAlertEvent(parts);
}

function readNotification(payload: Record<string, unknown>): Notification {
  const isRawVariables = Object.keys(payload).some((key) => key.startsWith("NOTIFY_"));
  return isRawVariables ? fromNotifyVariables(payload) : fromScriptJson(payload);
}

/** Parses a Checkmk notification (Keep's script JSON or raw NOTIFY_* variables) into one event. */
export const parseCheckmk: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) {
    return { ok: false, error: "not a Checkmk notification: expected a JSON object" };
  }
  const notification = readNotification(payload);
  if (notification.host === "") {
    return { ok: false, error: "not a Checkmk notification: host (NOTIFY_HOSTNAME) is missing" };
  }
  if (notification.isService && notification.service === "") {
    return {
      ok: false,
      error: "not a Checkmk notification: a SERVICE notification without service (NOTIFY_SERVICEDESC)",
    };
  }
  return { ok: true, events: [normalizeNotification(notification, options)] };
};
