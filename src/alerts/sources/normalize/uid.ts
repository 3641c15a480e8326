// external_uid rules of alert-sources.md 1.2: the hash H and the path-safety rule.
import { createHash } from "node:crypto";

/** A part of `hashUid`: strings as is, numbers as their JSON text, null or absent as "". */
export type UidPart = string | number | null | undefined;

const PATH_SAFE_UID = /^[A-Za-z0-9._~-]{1,128}$/;

function uidPartText(part: UidPart): string {
  if (typeof part === "string") return part;
  // A non-finite number has no JSON text; it is treated like an absent value.
  if (typeof part === "number") return Number.isFinite(part) ? JSON.stringify(part) : "";
  return "";
}

/**
 * H(parts...): the parts joined with U+001F, SHA-256 of the UTF-8 bytes, first 32 lowercase hex
 * digits. Use it for every derived uid, e.g. `hashUid(orgId, monitorName, scope)`.
 */
export function hashUid(...parts: UidPart[]): string {
  return createHash("sha256")
    .update(parts.map(uidPartText).join("\u001f"), "utf8")
    .digest("hex")
    .slice(0, 32);
}

/** True when `uid` can be used as is: `^[A-Za-z0-9._~-]{1,128}$` and not `.` or `..`. */
export function isPathSafeUid(uid: string): boolean {
  return PATH_SAFE_UID.test(uid) && uid !== "." && uid !== "..";
}

/**
 * A source's native id as an external_uid: kept when path-safe, else `hashUid(id)`. Numbers are
 * used as their decimal text (PagerDuty and Sentry ids are strings, Uptime Kuma's are numbers).
 */
export function safeUid(nativeId: string | number): string {
  const text = uidPartText(nativeId);
  return isPathSafeUid(text) ? text : hashUid(text);
}
