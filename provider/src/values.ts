// Values cross the protocol as msgpack (DynamicValue). An object value is a map keyed by attribute
// name, null is nil, and a value not known until apply is msgpack extension type 0 (newer OpenTofu
// may send extension 12, an unknown value with refinements; both read as UNKNOWN here).
import { decode, ExtData, ExtensionCodec, encode } from "@msgpack/msgpack";

/** A value that is known only after apply. */
export const UNKNOWN: unique symbol = Symbol("unknown");
export type Unknown = typeof UNKNOWN;

export type Value = null | Unknown | string | number | boolean | Value[] | { [key: string]: Value };
export type ObjectValue = { [key: string]: Value };

const UNKNOWN_EXT = 0;
const REFINED_UNKNOWN_EXT = 12;

const codec = new ExtensionCodec<undefined>();
codec.register({ type: UNKNOWN_EXT, encode: () => null, decode: () => UNKNOWN });
codec.register({ type: REFINED_UNKNOWN_EXT, encode: () => null, decode: () => UNKNOWN });

function toWire(value: Value): unknown {
  if (value === UNKNOWN) return new ExtData(UNKNOWN_EXT, new Uint8Array([0]));
  if (Array.isArray(value)) return value.map(toWire);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toWire(item)]));
  }
  return value;
}

export function encodeValue(value: Value): Buffer {
  const bytes = encode(toWire(value), { extensionCodec: codec, ignoreUndefined: false });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a DynamicValue; an absent or empty one is null (no object, as for a destroyed resource). */
export function decodeValue(
  dynamic: { msgpack?: Uint8Array | null; json?: Uint8Array | null } | null | undefined,
): Value {
  if (dynamic?.msgpack && dynamic.msgpack.length > 0) {
    return decode(dynamic.msgpack, { extensionCodec: codec, useBigInt64: false }) as Value;
  }
  if (dynamic?.json && dynamic.json.length > 0) return JSON.parse(Buffer.from(dynamic.json).toString("utf8"));
  return null;
}

export function asObject(value: Value): ObjectValue | null {
  return value !== null && value !== UNKNOWN && typeof value === "object" && !Array.isArray(value)
    ? value
    : null;
}

/** Structural equality of two values (object key order does not matter). */
export function sameValue(a: Value | undefined, b: Value | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null || a === UNKNOWN || b === UNKNOWN)
    return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameValue(item, b[i]))
    );
  }
  if (typeof a === "object" && typeof b === "object") {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => sameValue(a[key] ?? null, b[key] ?? null));
  }
  return false;
}

/** A known string attribute's text; anything else (null, unknown) is the empty string. */
export const textOf = (value: Value | undefined): string => (typeof value === "string" ? value : "");

/**
 * Whether a number attribute is a whole number from `min` to `max`: null when it is or is not known
 * yet (null, unknown), else the number as written, for the message. OpenTofu sends a number a
 * float64 cannot hold exactly (400.0000000000000000001, 1e400, 99999999999999999999999) as a
 * msgpack string of its decimal digits. A whole number within a float64's exact range never
 * arrives that way, so such a string is always outside the range.
 */
export function outsideWholeRange(value: Value | undefined, min: number, max: number): string | null {
  if (value === null || value === undefined || value === UNKNOWN) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return null;
  const text = typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value);
  return text.length <= 40 ? text : `${text.slice(0, 24)}... (${text.length} characters)`;
}
