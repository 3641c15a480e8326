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
  type SeverityTable,
  type StatusResult,
} from "./normalize/index.ts";
import type { Parser } from "./types.ts";

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
    severity: mapSeverity(firstText(row.severity, row.urgency, row.priority), {
      table: SPLUNK_SEVERITY,
      overrides: options.severityOverrides,
    }),
    triggeredAt: parseSourceTime(row._time),
    labels: rowLabels(row, payload.app),
    links: buildLinks([{ kind: "source", urls: [payload.results_link] }]),
  };
  return { ok: true, events: [buildAlertEvent(parts)] };
};
