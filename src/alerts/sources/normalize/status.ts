// Event status from a source's status table (alert-sources.md 1.3).
import type { EventStatus, UnmappedValue } from "../types.ts";
import { lookupIgnoringCase, rawText } from "./json-value.ts";

/** A raw status, action or transition -> event status table. Keys match case-insensitively, trimmed. */
export type StatusTable = Readonly<Record<string, EventStatus>>;

/** The status fields of an AlertEvent, plus the unmapped entry to record when there is one. */
export interface StatusResult {
  status: EventStatus;
  /** The raw value, trimmed (`""` when absent): it becomes the event's `source_event`. */
  source_event: string;
  unmapped?: UnmappedValue;
}

/**
 * Maps a raw status value through `table`. A value the table does not list (including an absent
 * value, unless the table has a `""` key) never becomes `active`: it gives `unchanged` and an
 * `unmapped` entry `{ field: "status", value }`.
 */
export function mapStatus(raw: unknown, table: StatusTable): StatusResult {
  const sourceEvent = rawText(raw) ?? "";
  const status = lookupIgnoringCase(table, sourceEvent);
  if (status) return { status, source_event: sourceEvent };
  return {
    status: "unchanged",
    source_event: sourceEvent,
    unmapped: { field: "status", value: sourceEvent },
  };
}
