// Severity buckets (alert-sources.md 1.4).
import type { SeverityBucket, SeverityMapping, UnmappedValue } from "../types.ts";
import { lookupIgnoringCase, rawText } from "./json-value.ts";

/** A raw severity value -> bucket table. Keys are matched case-insensitively after trimming. */
export type SeverityTable = Readonly<Record<string, SeverityBucket>>;

/** display_priority of each bucket: 1 (Critical) .. 5 (info). */
export const DISPLAY_PRIORITY: Readonly<Record<SeverityBucket, number>> = {
  Critical: 1,
  High: 2,
  Medium: 3,
  Low: 4,
  info: 5,
};

/** The generic table of 1.4, used by every source unless its section replaces it. */
export const GENERIC_SEVERITY_TABLE: SeverityTable = {
  critical: "Critical",
  crit: "Critical",
  fatal: "Critical",
  emergency: "Critical",
  emerg: "Critical",
  alert: "Critical",
  disaster: "Critical",
  p1: "Critical",
  high: "High",
  error: "High",
  err: "High",
  major: "High",
  p2: "High",
  medium: "Medium",
  warning: "Medium",
  warn: "Medium",
  average: "Medium",
  minor: "Medium",
  moderate: "Medium",
  p3: "Medium",
  low: "Low",
  p4: "Low",
  info: "info",
  informational: "info",
  information: "info",
  notice: "info",
  debug: "info",
  ok: "info",
  none: "info",
  p5: "info",
};

/** The "priority digits" table: `1` Critical .. `5` info (Datadog, Opsgenie numeric priorities). */
export const PRIORITY_DIGITS_TABLE: SeverityTable = {
  "1": "Critical",
  "2": "High",
  "3": "Medium",
  "4": "Low",
  "5": "info",
};

/** The severity fields of an AlertEvent, plus the unmapped entry to record when there is one. */
export interface SeverityResult {
  source_severity: string;
  severity: SeverityBucket;
  display_priority: number;
  severity_mapping: SeverityMapping;
  unmapped?: UnmappedValue;
}

export interface SeverityOptions {
  /** The source's own table; it is consulted before the generic table, so it wins on a clash. */
  table?: SeverityTable;
  /**
   * Whether the generic table is consulted after `table` (default true). Set false where the section
   * says its table replaces the generic one (Zabbix, Checkmk), so other words stay unmapped.
   */
  generic?: boolean;
  /** ParserOptions.severityOverrides of the registration: wins over every table. */
  overrides?: SeverityTable;
}

/**
 * Maps a raw severity value to a bucket. Order: per-registration overrides, the source table, the
 * generic table. No value (absent, null, blank): Medium, `missing`, source_severity "". A value no
 * table lists: Medium, `unmapped`, with an `unmapped` entry for the ingest counter.
 */
export function mapSeverity(raw: unknown, options: SeverityOptions = {}): SeverityResult {
  const sourceSeverity = rawText(raw) ?? "";
  if (sourceSeverity === "") {
    return {
      source_severity: "",
      severity: "Medium",
      display_priority: DISPLAY_PRIORITY.Medium,
      severity_mapping: "missing",
    };
  }
  const tables = [
    options.overrides,
    options.table,
    options.generic === false ? undefined : GENERIC_SEVERITY_TABLE,
  ];
  for (const table of tables) {
    const bucket = table && lookupIgnoringCase(table, sourceSeverity);
    if (bucket) {
      return {
        source_severity: sourceSeverity,
        severity: bucket,
        display_priority: DISPLAY_PRIORITY[bucket],
        severity_mapping: "mapped",
      };
    }
  }
  return {
    source_severity: sourceSeverity,
    severity: "Medium",
    display_priority: DISPLAY_PRIORITY.Medium,
    severity_mapping: "unmapped",
    unmapped: { field: "severity", value: sourceSeverity },
  };
}
