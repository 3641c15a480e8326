// Splunk webhook alert action, alert-sources.md section 15: `{result, sid, results_link, search_name,
// owner, app}`, where `result` is the first row of the search results. One event per body. The series
// is the saved search: `sid` names a single run and the row changes from run to run, so neither is
// identity.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  hashUid,
  isRecord,
  labelValueText,
  mapSeverity,
  parseSourceTime,
  type SeverityResult,
  type SeverityTable,
  type StatusResult,
} from "./normalize/index.ts";
import type { Parser, ParserOptions } from "./types.ts";

// Splunk's numeric alert severities (1 debug .. 6 fatal) and `severe`, consulted before the generic
// table.
const SPLUNK_SEVERITY: SeverityTable = {
  "1": "info",
  "2": "info",
  "3": "Medium",
  "4": "High",
  "5": "Critical",
  "6": "Critical",
  severe: "Critical",
};

// Splunk sends no status and no resolve: every delivery is the alert action firing. `source_event`
// names that action, since the payload has no raw value for it.
const TRIGGERED: StatusResult = { status: "active", source_event: "triggered" };

// A scheduled run's sid ends in `_at_<epoch>_<serial>` (`..._at_1483557185_2.2` for real-time).
const SID_RUN_SUFFIX = /_at_\d+_[\d.]+$/;

const ROW_LABELS = ["host", "source", "sourcetype", "index"] as const;

/** The saved search this delivery belongs to: `search_name`, else `sid` without its run suffix. */
function searchIdentity(payload: Record<string, unknown>): string | null {
  const sid = firstText(payload.sid);
  return firstText(payload.search_name, sid?.replace(SID_RUN_SUFFIX, ""));
}

// `_raw` is the event text; a stats row has none, so its visible fields (not `_`-prefixed internals
// such as `_si`) are listed instead.
function rowDescription(row: Record<string, unknown>): string | null {
  const raw = firstText(row._raw);
  if (raw) return raw;
  const fields = Object.entries(row).flatMap(([key, value]) => {
    const text = labelValueText(value);
    return key.startsWith("_") || text === null ? [] : [`${key}=${text}`];
  });
  return fields.join(", ");
}

function rowLabels(row: Record<string, unknown>, app: unknown): Record<string, string> {
  const labels = createLabelBuilder();
  for (const key of ROW_LABELS) {
    const value = row[key];
    if (typeof value === "string" && value.trim() !== "") labels.add(key, value);
  }
  if (typeof app === "string" && app.trim() !== "") labels.add("app", app);
  return labels.toRecord();
}

/** Parses a Splunk webhook alert action body into one event. */
/**
 * `severity`, else `urgency`, else `priority`. A multi-value field (a row that merged several
 * events: `["high", "low"]`) counts as its most severe mapped value, not as missing.
 */
function rowSeverity(row: Record<string, unknown>, options: ParserOptions): SeverityResult {
  const severityOf = (raw: unknown) =>
    mapSeverity(raw, { table: SPLUNK_SEVERITY, overrides: options.severityOverrides });
  for (const field of [row.severity, row.urgency, row.priority]) {
    const values = (Array.isArray(field) ? field : [field]).filter((value) => firstText(value) !== null);
    if (values.length === 0) continue;
    const mapped = values.map(severityOf);
    const best = mapped
      .filter((result) => result.severity_mapping === "mapped")
      .sort((a, b) => a.display_priority - b.display_priority)[0];
    return best ?? (mapped[0] as SeverityResult);
  }
  return severityOf(null);
}

export const parseSplunk: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  // Splunk always writes the `result` key; it is null when the search returned no row.
  if (
    !isRecord(payload) ||
    !("result" in payload) ||
    !(payload.result === null || isRecord(payload.result))
  ) {
    return { ok: false, error: "not a Splunk webhook: expected a JSON object with a result object" };
  }
  const identity = searchIdentity(payload);
  if (identity === null) {
    return { ok: false, error: "not a Splunk webhook: neither search_name nor sid is set" };
  }
  const row = isRecord(payload.result) ? payload.result : {};
  const parts: AlertEventParts = {
    sourceType: "splunk",
    externalUid: hashUid(typeof payload.app === "string" ? payload.app : null, identity),
    status: TRIGGERED,
    title: identity,
    description: rowDescription(row),
    severity: rowSeverity(row, options),
    triggeredAt: parseSourceTime(row._time),
    labels: rowLabels(row, payload.app),
    links: buildLinks([{ kind: "source", urls: [payload.results_link] }]),
  };
  // Every run that matches sends again, dated by its own result, and no run ever says the episode
  // ended: each delivery is a reminder of the episode the first one started.
  return { ok: true, events: [{ ...buildAlertEvent(parts), reminder: true }] };
};
