// Assembling an AlertEvent from the parts a parser has worked out, so every parser applies the same
// final rules: path-safe uid, title fallback, label limits and flags, test notifications (1.9).
import type { AlertEvent, AlertLink, SourceType } from "../types.ts";
import { finalizeLabels, type VigilFlag } from "./labels.ts";
import { DISPLAY_PRIORITY, type SeverityResult } from "./severity.ts";
import type { StatusResult } from "./status.ts";
import { normalizeDescription, normalizeTitle } from "./text.ts";
import { safeUid } from "./uid.ts";

export interface AlertEventParts {
  sourceType: SourceType;
  /** The native id or `hashUid(...)`; a native id that is not path-safe is hashed here (`safeUid`). */
  externalUid: string;
  /** From `mapStatus`, or a literal such as `{ status: "active", source_event: "created" }`. */
  status: StatusResult;
  /** The value named in `ignore_reason` ("<source_type>: <value>"); defaults to `status.source_event`. */
  ignoredValue?: string;
  /** Raw title text; `normalizeTitle` applies, with the fallback when it is empty. */
  title?: unknown;
  /** Raw description text, e.g. from `joinDescription`; `normalizeDescription` applies. */
  description?: unknown;
  /** From `mapSeverity`. */
  severity: SeverityResult;
  /** From `parseSourceTime`; null or absent when the payload has none. */
  triggeredAt?: string | null;
  resolvedAt?: string | null;
  /** From `LabelBuilder.toRecord()`; `finalizeLabels` applies. */
  labels?: Readonly<Record<string, string>>;
  /** Vigil flags to set (`vigil_test` is added for test notifications). */
  flags?: readonly VigilFlag[];
  /** From `buildLinks`. */
  links?: readonly AlertLink[];
  /** A test notification (1.9): bucket `info` and label `vigil_test=true`. */
  isTest?: boolean;
}

/**
 * A complete AlertEvent. A test notification gets bucket `info` (display_priority 5) and the
 * `vigil_test` flag; its source_severity, severity_mapping and unmapped entries are kept as mapped.
 * `unmapped` lists the status entry, then the severity entry, for the ingest's
 * `vigil_ingest_unmapped_total` counter.
 */
export function buildAlertEvent(parts: AlertEventParts): AlertEvent {
  const externalUid = safeUid(parts.externalUid);
  const isTest = parts.isTest === true;
  const flags: VigilFlag[] = [...(parts.flags ?? []), ...(isTest ? (["vigil_test"] as const) : [])];
  const { status, source_event } = parts.status;
  const { title, title_is_fallback } = normalizeTitle(parts.title, parts.sourceType, externalUid);
  const severity = isTest ? "info" : parts.severity.severity;
  return {
    external_uid: externalUid,
    status,
    ignore_reason: status === "ignored" ? `${parts.sourceType}: ${parts.ignoredValue ?? source_event}` : null,
    title,
    title_is_fallback,
    description: normalizeDescription(parts.description),
    source_severity: parts.severity.source_severity,
    severity,
    display_priority: DISPLAY_PRIORITY[severity],
    severity_mapping: parts.severity.severity_mapping,
    triggered_at: parts.triggeredAt ?? null,
    resolved_at: parts.resolvedAt ?? null,
    labels: finalizeLabels(parts.labels ?? {}, flags),
    links: [...(parts.links ?? [])],
    is_test: isTest,
    source_event,
    unmapped: [parts.status.unmapped, parts.severity.unmapped].filter((entry) => entry !== undefined),
  };
}
