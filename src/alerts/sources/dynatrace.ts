// Dynatrace problem notifications (custom integration), alert-sources.md section 13. The body is a
// placeholder template: the default one, or a custom one built from the documented placeholders.
// One body yields one event.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  isRecord,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  type SeverityResult,
  type SeverityTable,
  type StatusTable,
  splitTag,
  splitTagList,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

type Payload = Record<string, unknown>;

const NOT_DYNATRACE = "not a Dynatrace problem notification: expected a JSON object with PID or ProblemID";

// `{PID}`, `{Tags}`: what Dynatrace's "Send test notification" leaves unreplaced.
const UNREPLACED_PLACEHOLDER = /^\{[A-Za-z]+\}$/;

const STATE_STATUS: StatusTable = {
  open: "active",
  resolved: "resolved",
  // A merged problem lives on in another problem: this one is over.
  merged: "resolved",
};

const SEVERITY_LEVEL: SeverityTable = {
  AVAILABILITY: "Critical",
  ERROR: "High",
  PERFORMANCE: "Medium",
  RESOURCE_CONTENTION: "Medium",
  CUSTOM_ALERT: "Medium",
  MONITORING_UNAVAILABLE: "Low",
  INFO: "info",
};

// The default template has no severity; the impact stands in for it.
const PROBLEM_IMPACT: SeverityTable = {
  APPLICATION: "High",
  SERVICE: "High",
  INFRASTRUCTURE: "Medium",
  ENVIRONMENT: "Medium",
};

/** A field's value, or undefined when it is exactly an unreplaced placeholder. */
function field(record: Payload, key: string): unknown {
  const value = record[key];
  return typeof value === "string" && UNREPLACED_PLACEHOLDER.test(value.trim()) ? undefined : value;
}

// `{ProblemDetailsJSON}` is inserted as an object; a template that quotes it sends JSON text.
function problemDetails(payload: Payload): Payload {
  const value = field(payload, "ProblemDetailsJSON");
  if (isRecord(value)) return value;
  if (typeof value !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function isTestNotification(payload: Payload): boolean {
  return firstText(payload.ProblemID)?.toUpperCase() === "TESTID" || firstText(payload.PID) === "{PID}";
}

function severity(payload: Payload, details: Payload, options: ParserOptions): SeverityResult {
  const level = firstText(field(payload, "ProblemSeverity"), details.severityLevel);
  const overrides = options.severityOverrides;
  if (level !== null) return mapSeverity(level, { table: SEVERITY_LEVEL, overrides });
  return mapSeverity(firstText(field(payload, "ProblemImpact")), { table: PROBLEM_IMPACT, overrides });
}

// One pass, so `&amp;lt;` becomes `&lt;` and is not decoded twice.
const ENTITY = /&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos|nbsp));/gi;
const NAMED_ENTITY_TEXT: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

function decodeEntity(entity: string, decimal?: string, hex?: string, name?: string): string {
  if (name !== undefined) return NAMED_ENTITY_TEXT[name.toLowerCase()] ?? entity;
  const codePoint = decimal === undefined ? Number.parseInt(hex ?? "", 16) : Number(decimal);
  return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
}

function decodeEntities(text: string): string {
  return text.replace(ENTITY, decodeEntity);
}

// ProblemDetailsHTML as text. Line breaks and block ends become newlines so that paragraphs do not run
// together; every other tag is removed. Entities are decoded last, so `&lt;b&gt;` stays text.
function htmlToText(html: string): string {
  const text = html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|tr|h[1-6])\s*>/gi, "\n")
    .replace(/<[^>]*>/g, "");
  return decodeEntities(text).replace(/[ \t]*\n\s*\n\s*/g, "\n\n");
}

function description(payload: Payload): string | null {
  const html = firstText(field(payload, "ProblemDetailsHTML"));
  return firstText(
    field(payload, "ProblemDetailsText"),
    field(payload, "ProblemDetailsMarkdown"),
    html === null ? null : htmlToText(html),
    field(payload, "ProblemDetails"),
  );
}

// `[AWS]Name:web`: the context in brackets is not part of the key.
const TAG_CONTEXT = /^\[[^\]]*\]\s*/;

function labels(payload: Payload): Record<string, string> {
  const builder = createLabelBuilder();
  for (const tag of splitTagList(field(payload, "Tags"))) {
    const [key, value] = splitTag(tag.replace(TAG_CONTEXT, ""));
    // The first occurrence of a key wins.
    builder.setIfAbsent(key, value);
  }
  return builder
    .set("impacted_entity", firstText(field(payload, "ImpactedEntity")))
    .set("problem_impact", firstText(field(payload, "ProblemImpact")))
    .toRecord();
}

function normalize(payload: Payload, uid: string, options: ParserOptions): AlertEvent {
  const details = problemDetails(payload);
  const status = mapStatus(field(payload, "State"), STATE_STATUS);
  const parts: AlertEventParts = {
    sourceType: "dynatrace",
    externalUid: uid,
    status,
    title: field(payload, "ProblemTitle"),
    description: description(payload),
    severity: severity(payload, details, options),
    triggeredAt: parseSourceTime(details.startTime),
    // An open problem's endTime is -1; only a resolve has an end.
    resolvedAt: status.status === "resolved" ? parseSourceTime(details.endTime) : null,
    labels: labels(payload),
    links: buildLinks([
      { kind: "source", urls: [field(payload, "ProblemURL"), field(payload, "Problem URL")] },
    ]),
    isTest: isTestNotification(payload),
  };
  return buildAlertEvent(parts);
}

/** Parses a Dynatrace problem notification into one event. */
export const parseDynatrace: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) return { ok: false, error: NOT_DYNATRACE };
  // PID is the problem's system id, stable from OPEN to RESOLVED; the test notification has only
  // ProblemID (TESTID).
  const uid = firstText(field(payload, "PID"), field(payload, "ProblemID"));
  if (uid === null) return { ok: false, error: NOT_DYNATRACE };
  return { ok: true, events: [normalize(payload, uid, options)] };
};
