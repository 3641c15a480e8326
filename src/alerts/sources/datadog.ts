// Datadog Webhooks integration, alert-sources.md section 4. The body is whatever template the user
// configured, so every field is read from the documented template keys, and what a template leaves
// out (priority, transition, scope) is taken from the tags Datadog puts at the start of `title`.
// `id` ($ID) is per event and never identity.
import {
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  foreignBodyError,
  hashUid,
  isRecord,
  mapSeverity,
  mapStatus,
  PRIORITY_DIGITS_TABLE,
  parseSourceTime,
  rawText,
  type SeverityResult,
  type SeverityTable,
  type StatusTable,
  splitTag,
} from "./normalize/index.ts";
import type { Parser, ParserOptions } from "./types.ts";

// $ALERT_TRANSITION values; a title tag names one of these, optionally `on {<scope>}`.
const TRANSITIONS = [
  "Triggered",
  "Re-Triggered",
  "Recovered",
  "Warn",
  "Re-Warn",
  "No Data",
  "Re-No Data",
  "Renotify",
  "Muted",
];
const TRANSITION_TAG = new RegExp(`^(${TRANSITIONS.join("|")})(?:\\s+on\\s+\\{(.*)\\})?$`, "i");
const PRIORITY_TAG = /^P[1-5]$/i;
const LEADING_TAG = /^\s*\[([^\]]*)\]/;

const TRANSITION_STATUS: StatusTable = {
  triggered: "active",
  "re-triggered": "active",
  warn: "active",
  "re-warn": "active",
  renotify: "active",
  "no data": "active",
  "re-no data": "active",
  recovered: "resolved",
  muted: "ignored",
  // An empty $ALERT_TRANSITION renders as "" or "Null" (events that are not monitor transitions).
  "": "unchanged",
  null: "unchanged",
};
const NO_DATA_TRANSITIONS = new Set(["no data", "re-no data"]);
// Renotifications: the monitor is still in the state it entered earlier, and $DATE is when the
// reminder was sent, not when that episode began.
const REMINDER_TRANSITIONS = new Set(["re-triggered", "re-warn", "re-no data", "renotify"]);

const ALERT_TYPE_SEVERITY: SeverityTable = {
  error: "High",
  warning: "Medium",
  info: "info",
  success: "info",
};
const TRANSITION_SEVERITY: SeverityTable = {
  triggered: "High",
  "re-triggered": "High",
  renotify: "High",
  warn: "Medium",
  "re-warn": "Medium",
  "no data": "Low",
  "re-no data": "Low",
  recovered: "info",
};

/** What the leading tags of a Datadog title say, and the monitor name after them. */
interface ParsedTitle {
  monitorName: string;
  priority: string | null;
  transition: string | null;
  scope: string | null;
}

// `[P1] [Triggered on {host:a}] Disk full` -> P1, Triggered, `host:a`, `Disk full`. Stops at the first
// bracket that is neither tag: `[prod] Disk full` keeps `[prod]` as part of the name.
function parseDatadogTitle(title: string): ParsedTitle {
  const parsed: ParsedTitle = { monitorName: title, priority: null, transition: null, scope: null };
  let rest = title;
  for (let match = LEADING_TAG.exec(rest); match; match = LEADING_TAG.exec(rest)) {
    const tag = (match[1] ?? "").trim();
    const transition = TRANSITION_TAG.exec(tag);
    if (PRIORITY_TAG.test(tag)) parsed.priority ??= tag;
    else if (transition) {
      parsed.transition ??= transition[1] ?? null;
      parsed.scope ??= transition[2] ?? null;
    } else break;
    rest = rest.slice(match[0].length);
  }
  parsed.monitorName = rest.trim();
  return parsed;
}

// A scope as one canonical string, so `b:2, a:1` and `a:1,b:2` are the same series.
function normalizeScope(scope: string | null): string {
  if (scope === null) return "";
  const items = scope
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  // `sort()` without a comparator compares code units, the order the section asks for.
  return items.sort().join(",");
}

function datadogSeverity(
  payload: Record<string, unknown>,
  title: ParsedTitle,
  transition: string,
  options: ParserOptions,
): SeverityResult {
  const overrides = options.severityOverrides;
  const priority = firstText(payload.alert_priority, payload.severity, payload.priority, title.priority);
  if (priority !== null) return mapSeverity(priority, { table: PRIORITY_DIGITS_TABLE, overrides });
  const alertType = firstText(payload.alert_type);
  if (alertType !== null)
    return mapSeverity(alertType, { table: ALERT_TYPE_SEVERITY, generic: false, overrides });
  // The transition only gives a severity when it is one the table lists: `Muted` or `Null` say
  // nothing about how bad the alert is, and an unknown transition is already recorded as unmapped.
  const fromTransition = mapSeverity(transition, { table: TRANSITION_SEVERITY, generic: false, overrides });
  return fromTransition.severity_mapping === "mapped" ? fromTransition : mapSeverity(null);
}

// `body` ($EVENT_MSG) wraps markdown in `%%%` lines; they are markup, not text.
function datadogDescription(body: unknown): string {
  const text = rawText(body) ?? "";
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "%%%")
    .join("\n");
}

function datadogLabels(payload: Record<string, unknown>, scope: string): Record<string, string> {
  const labels = createLabelBuilder().addTags(payload.tags);
  // The scope's `key:value` pairs name the alerting group; they win over a tag of the same key.
  for (const item of scope === "" ? [] : scope.split(",")) {
    if (/[:=]/.test(item)) labels.set(...splitTag(item));
  }
  return labels.toRecord();
}

/** Parses a Datadog webhook body (JSON or form-encoded) into one event. */
export const parseDatadog: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) {
    return { ok: false, error: "not a Datadog webhook: expected a JSON object" };
  }
  const foreign = foreignBodyError(payload, "datadog");
  if (foreign) return foreign;
  // $EVENT_TITLE, else $ALERT_TITLE: both start with the same tags (`[Triggered on {host:a}] Disk`).
  const title = parseDatadogTitle(firstText(payload.title, payload.alert_title) ?? "");
  const monitorId = firstText(payload.monitor_id, payload.alert_id);
  if (monitorId === null && title.monitorName === "") {
    return {
      ok: false,
      error:
        "not a Datadog webhook: expected a title ($EVENT_TITLE), an alert_title ($ALERT_TITLE) or a monitor_id/alert_id ($ALERT_ID)",
    };
  }
  const org = isRecord(payload.org) ? payload.org : {};
  const orgId = firstText(org.id, payload.org_id);
  const scope = normalizeScope(firstText(payload.scopes, payload.alert_scope, title.scope));
  const status = mapStatus(
    firstText(payload.alert_transition, payload.transition, title.transition),
    TRANSITION_STATUS,
  );
  // $DATE (epoch ms), else $DATE_POSIX (the same instant in epoch seconds), else $LAST_UPDATED.
  const time = parseSourceTime(firstText(payload.date, payload.date_posix, payload.last_updated));
  const transition = status.source_event.toLowerCase();
  const noData = NO_DATA_TRANSITIONS.has(transition);
  const event = buildAlertEvent({
    sourceType: "datadog",
    externalUid: hashUid(orgId, monitorId ?? title.monitorName, scope),
    status,
    title: title.monitorName,
    // $EVENT_MSG, else $TEXT_ONLY_MSG (the message without its markdown).
    description: datadogDescription(firstText(payload.body, payload.text_only_msg)),
    severity: datadogSeverity(payload, title, status.source_event, options),
    triggeredAt: status.status === "active" ? time : null,
    resolvedAt: status.status === "resolved" ? time : null,
    labels: datadogLabels(payload, scope),
    flags: noData ? ["vigil_no_data"] : [],
    links: buildLinks([{ kind: "source", urls: [payload.url, payload.link] }]),
  });
  if (REMINDER_TRANSITIONS.has(transition)) event.reminder = true;
  return { ok: true, events: [event] };
};
