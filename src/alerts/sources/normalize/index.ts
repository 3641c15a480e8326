// Shared normalization helpers for the alert source parsers (alert-sources.md part 1). Parsers
// import from here only.
export { type DecodedBody, decodeBody } from "./body.ts";
export { type AlertEventParts, buildAlertEvent } from "./event.ts";
export { labelFingerprint } from "./fingerprint.ts";
export { firstText, isRecord, lookupIgnoringCase, rawText } from "./json-value.ts";
export {
  createLabelBuilder,
  finalizeLabels,
  LABEL_KEY_MAX_CHARS,
  LABEL_VALUE_MAX_CHARS,
  type LabelBuilder,
  type LabelBuilderOptions,
  labelValueText,
  MAX_LABELS,
  RESERVED_LABEL_PREFIX,
  splitTag,
  splitTagList,
  VIGIL_FLAGS,
  type VigilFlag,
} from "./labels.ts";
export { buildLinks, type LinkCandidate, normalizeLinkUrl } from "./links.ts";
export {
  DISPLAY_PRIORITY,
  GENERIC_SEVERITY_TABLE,
  mapSeverity,
  PRIORITY_DIGITS_TABLE,
  type SeverityOptions,
  type SeverityResult,
  type SeverityTable,
} from "./severity.ts";
export { mapStatus, type StatusResult, type StatusTable } from "./status.ts";
export {
  charCount,
  DESCRIPTION_MAX_CHARS,
  joinDescription,
  normalizeDescription,
  normalizeTitle,
  TITLE_MAX_CHARS,
  type TitleResult,
  truncateChars,
} from "./text.ts";
export { parseSourceTime } from "./time.ts";
export { hashUid, isPathSafeUid, safeUid, type UidPart } from "./uid.ts";
