// Labels (alert-sources.md 1.6): a flat string map, built from source maps, tag strings and fields.
import { isRecord } from "./json-value.ts";
import { charCount, truncateChars } from "./text.ts";

/** Vigil's own flags, always `"true"` when set: test notification, missing data, flapping. */
export const VIGIL_FLAGS = ["vigil_test", "vigil_no_data", "vigil_flapping"] as const;
export type VigilFlag = (typeof VIGIL_FLAGS)[number];

/** Keys beginning with this prefix are reserved for the Vigil flags and stripped from every source. */
export const RESERVED_LABEL_PREFIX = "vigil_";
export const LABEL_KEY_MAX_CHARS = 128;
export const LABEL_VALUE_MAX_CHARS = 1024;
export const MAX_LABELS = 100;

/**
 * A label value as text: strings as is, other values as their JSON text (`5`, `true`, `["a"]`);
 * null for null and absent values, which are skipped.
 */
export function labelValueText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? null;
}

/**
 * Splits a tag string at the first `:` or `=`, whichever comes first, both sides trimmed:
 * `env:prod` -> ["env", "prod"], `team=payments` -> ["team", "payments"], `monitor` -> ["monitor", ""].
 */
export function splitTag(tag: string): [key: string, value: string] {
  const separator = tag.search(/[:=]/);
  if (separator < 0) return [tag.trim(), ""];
  return [tag.slice(0, separator).trim(), tag.slice(separator + 1).trim()];
}

/**
 * A tag list as tag strings: an array (each element as label text; nulls skipped) or a comma-separated
 * string. Items are trimmed; empty items are dropped.
 */
export function splitTagList(tags: unknown): string[] {
  const items = Array.isArray(tags)
    ? tags.map(labelValueText)
    : typeof tags === "string"
      ? tags.split(",")
      : [];
  return items.flatMap((item) => {
    const text = item?.trim();
    return text ? [text] : [];
  });
}

export interface LabelBuilderOptions {
  /** Key prefixes this source strips, e.g. `["__"]` for Alertmanager. `vigil_` is always stripped. */
  stripPrefixes?: readonly string[];
  /** Exact keys this source strips, e.g. `["grafana_folder"]`. */
  stripKeys?: readonly string[];
}

/**
 * Collects labels in payload order. Keys are trimmed; empty and stripped keys are dropped; values are
 * flattened with `labelValueText` and null values skipped. Every method returns the builder.
 */
export interface LabelBuilder {
  /** Adds one value; a key seen before keeps its distinct values joined with `,` in order. */
  add(key: string, value: unknown): LabelBuilder;
  /** `add` for every entry of a JSON object (anything else is ignored). */
  addAll(record: unknown): LabelBuilder;
  /** `add` for each tag string of `splitTagList(tags)`, split with `splitTag`. */
  addTags(tags: unknown): LabelBuilder;
  /** Replaces the key's value ("later ones win", "these win on a clash"). A null value changes nothing. */
  set(key: string, value: unknown): LabelBuilder;
  /** `set` only when the key has no value yet ("unless present"). */
  setIfAbsent(key: string, value: unknown): LabelBuilder;
  has(key: string): boolean;
  /** The labels collected so far. Limits and flags are applied by `finalizeLabels`. */
  toRecord(): Record<string, string>;
}

/** Starts a label builder for one event. */
export function createLabelBuilder(options: LabelBuilderOptions = {}): LabelBuilder {
  const stripPrefixes = [RESERVED_LABEL_PREFIX, ...(options.stripPrefixes ?? [])];
  const stripKeys = new Set(options.stripKeys ?? []);
  const values = new Map<string, string[]>();

  // The accepted key, or null when the key is empty or stripped.
  const acceptedKey = (key: string): string | null => {
    const trimmed = key.trim();
    if (!trimmed || stripKeys.has(trimmed)) return null;
    return stripPrefixes.some((prefix) => trimmed.startsWith(prefix)) ? null : trimmed;
  };

  const builder: LabelBuilder = {
    add(key, value) {
      const name = acceptedKey(key);
      const text = labelValueText(value);
      if (name === null || text === null) return builder;
      const existing = values.get(name);
      if (!existing) values.set(name, [text]);
      else if (!existing.includes(text)) existing.push(text);
      return builder;
    },
    addAll(record) {
      if (!isRecord(record)) return builder;
      for (const [key, value] of Object.entries(record)) builder.add(key, value);
      return builder;
    },
    addTags(tags) {
      for (const tag of splitTagList(tags)) builder.add(...splitTag(tag));
      return builder;
    },
    set(key, value) {
      const name = acceptedKey(key);
      const text = labelValueText(value);
      if (name !== null && text !== null) values.set(name, [text]);
      return builder;
    },
    setIfAbsent(key, value) {
      return builder.has(key) ? builder : builder.set(key, value);
    },
    has(key) {
      return values.has(key.trim());
    },
    toRecord() {
      return Object.fromEntries([...values].map(([key, list]) => [key, list.join(",")]));
    },
  };
  return builder;
}

/**
 * The final label map of an event: `vigil_` keys and empty keys dropped, keys longer than 128
 * characters dropped, values cut to 1,024 characters, then the flags (`"true"`) first and the other
 * labels in key order, at most 100 in all. `buildAlertEvent` calls it.
 */
export function finalizeLabels(
  labels: Readonly<Record<string, string>>,
  flags: readonly VigilFlag[] = [],
): Record<string, string> {
  // Built as entries, not by assignment: a payload key `__proto__` must stay an ordinary label.
  const entries: [string, string][] = VIGIL_FLAGS.filter((flag) => flags.includes(flag)).map((flag) => [
    flag,
    "true",
  ]);
  // Own entries only, never `labels[key]`: a key such as `constructor` must not reach Object.prototype.
  const kept = Object.entries(labels)
    .filter(
      ([key]) =>
        key !== "" && !key.startsWith(RESERVED_LABEL_PREFIX) && charCount(key) <= LABEL_KEY_MAX_CHARS,
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, value] of kept) {
    if (entries.length >= MAX_LABELS) break;
    entries.push([key, truncateChars(value ?? "", LABEL_VALUE_MAX_CHARS)]);
  }
  return Object.fromEntries(entries);
}
