// Shared normalization helpers for the alert source parsers (alert-sources.md part 1). Parsers
// import from here only.
export { decodeBody } from "./body.ts";
export { type AlertEventParts, buildAlertEvent } from "./event.ts";
export { labelFingerprint } from "./fingerprint.ts";
export { foreignBodyError } from "./foreign-shape.ts";
export { firstText, isRecord, lookupIgnoringCase, rawText } from "./json-value.ts";
export {
  createLabelBuilder,
  type LabelBuilder,
  labelValueText,
  splitTag,
  splitTagList,
  type VigilFlag,
} from "./labels.ts";
export { buildLinks, encodeUrlPart, type LinkCandidate, normalizeLinkUrl } from "./links.ts";
export {
  GENERIC_SEVERITY_TABLE,
  mapSeverity,
  PRIORITY_DIGITS_TABLE,
  type SeverityResult,
  type SeverityTable,
} from "./severity.ts";
export { mapStatus, type StatusResult, type StatusTable } from "./status.ts";
export { joinDescription, normalizeDescription } from "./text.ts";
export { parseSourceTime } from "./time.ts";
export { hashUid, isPathSafeUid, safeUid, type UidPart } from "./uid.ts";
