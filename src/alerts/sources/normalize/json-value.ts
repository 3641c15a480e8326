// Reading loosely typed JSON values. Webhook bodies are `unknown` until a parser has looked at them;
// these helpers let parsers read scalars without casts.

/** True for a JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The text of a scalar: a string trimmed, a finite number as decimal text, a boolean as `true` or
 * `false`. Null for anything else (null, absent, objects, arrays, NaN).
 */
export function rawText(value: unknown): string | null {
  if (typeof value === "string") return value.trim();
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : null;
  if (typeof value === "boolean") return String(value);
  return null;
}

/** The first value whose `rawText` is non-empty, trimmed; null when none is. Implements "A, else B". */
export function firstText(...values: unknown[]): string | null {
  for (const value of values) {
    const text = rawText(value);
    if (text) return text;
  }
  return null;
}

/** Each table's keys trimmed and lower-cased, made once: the tables are read for every alert. */
const caseFoldedTables = new WeakMap<object, Map<string, unknown>>();

function caseFolded(table: Readonly<Record<string, unknown>>): Map<string, unknown> {
  let folded = caseFoldedTables.get(table);
  if (!folded) {
    folded = new Map();
    for (const [name, value] of Object.entries(table)) {
      const key = name.trim().toLowerCase();
      // The first of two keys that fold alike wins, in the table's own order.
      if (!folded.has(key)) folded.set(key, value);
    }
    caseFoldedTables.set(table, folded);
  }
  return folded;
}

/**
 * Looks `key` up in a small table, ignoring case and surrounding spaces on both sides (1.3: status
 * values, actions and enums match case-insensitively after trimming). Only own keys count, so a
 * value such as `constructor` never finds `Object.prototype` members. Tables are read-only: a table
 * is folded the first time it is looked in.
 */
export function lookupIgnoringCase<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return caseFolded(table).get(key.trim().toLowerCase()) as T | undefined;
}
