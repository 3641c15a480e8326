// A JSON document the fuzzer can change at one place, or everywhere at once (a sweep). Strings that
// hold JSON themselves (an SNS envelope's Message, a Splunk result) are documents too: a mutation
// can land inside them, and they are serialized back into their string.
import { Deep, Long, Raw, setKey, toJsonText } from "./evil.ts";

/** JSON held in a string of the outer document. */
export class Embedded {
  constructor(public value: unknown) {}
}

type Container = Record<string, unknown> | unknown[];

/** One place in a document: the container and the key or index of the value. */
export interface Slot {
  parent: Container;
  key: string | number;
}

function isContainer(value: unknown): value is Container {
  return (
    value !== null &&
    typeof value === "object" &&
    !(value instanceof Raw || value instanceof Long || value instanceof Deep)
  );
}

function embeddedJson(text: string): unknown | null {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("[")) || trimmed.length < 2) return null;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return parsed !== null && typeof parsed === "object" ? parsed : null;
  } catch {
    return null;
  }
}

/** Parses a fixture, turning strings that hold a JSON object or array into Embedded documents. */
export function parseDoc(text: string): unknown {
  const root = { value: JSON.parse(text) as unknown };
  const stack: Container[] = [root as Record<string, unknown>];
  for (let node = stack.pop(); node; node = stack.pop()) {
    for (const [key, child] of Object.entries(node)) {
      if (typeof child === "string") {
        const inner = embeddedJson(child);
        if (inner !== null) {
          const embedded = new Embedded(inner);
          (node as Record<string, unknown>)[key] = embedded;
          stack.push(embedded as unknown as Record<string, unknown>);
        }
      } else if (isContainer(child)) stack.push(child);
    }
  }
  return root.value;
}

/** Document text again: Embedded documents back into strings, markers materialized. */
export function serializeDoc(doc: unknown): string {
  return toJsonText(unembed(doc));
}

function unembed(value: unknown): unknown {
  if (value instanceof Embedded) return serializeDoc(value.value);
  if (Array.isArray(value)) return value.map(unembed);
  if (isContainer(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) setKey(copy, key, unembed(child));
    return copy;
  }
  return value;
}

/** Every slot of the document, outer before inner, in a fixed order. */
export function slotsOf(doc: unknown): Slot[] {
  const slots: Slot[] = [];
  const visit = (container: Container) => {
    const entries: [string | number, unknown][] = Array.isArray(container)
      ? container.map((child, index) => [index, child])
      : Object.entries(container);
    for (const [key, child] of entries) {
      slots.push({ parent: container, key });
      const inner = child instanceof Embedded ? child.value : child;
      if (isContainer(inner)) visit(inner);
    }
  };
  if (isContainer(doc)) visit(doc);
  return slots;
}

/** Every object of the document (the root included), where keys can be added or renamed. */
export function objectsOf(doc: unknown): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  const note = (value: unknown) => {
    const inner = value instanceof Embedded ? value.value : value;
    if (isContainer(inner) && !Array.isArray(inner)) objects.push(inner);
  };
  note(doc);
  for (const slot of slotsOf(doc)) note(valueAt(slot));
  return objects;
}

export function valueAt(slot: Slot): unknown {
  return (slot.parent as Record<string | number, unknown>)[slot.key];
}

export function setAt(slot: Slot, value: unknown): void {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value;
  else setKey(slot.parent, String(slot.key), value);
}

/** Renames a key in place, keeping the key order. */
export function renameKey(target: Record<string, unknown>, from: string, to: string): void {
  const entries = Object.entries(target);
  for (const key of Object.keys(target)) delete target[key];
  for (const [key, value] of entries) setKey(target, key === from ? to : key, value);
}

/** Dotted path of a slot, for reports. */
export function pathOf(doc: unknown, target: Slot): string {
  const walk = (container: Container, prefix: string): string | null => {
    const entries: [string | number, unknown][] = Array.isArray(container)
      ? container.map((child, index) => [index, child])
      : Object.entries(container);
    for (const [key, child] of entries) {
      const here = prefix ? `${prefix}.${key}` : String(key);
      if (container === target.parent && key === target.key) return here;
      const inner = child instanceof Embedded ? child.value : child;
      if (isContainer(inner)) {
        const found = walk(inner, child instanceof Embedded ? `${here}(json)` : here);
        if (found) return found;
      }
    }
    return null;
  };
  return isContainer(doc) ? (walk(doc, "") ?? "?") : "?";
}

// ---- sweeps: one kind of damage applied to every value or key of the document ----

export const SWEEPS = [
  "nul-in-strings",
  "surrogate-in-strings",
  "nul-in-keys",
  "surrogate-in-keys",
  "prototype-keys",
  "prototype-values",
  "huge-numbers",
  "numeric-strings-huge",
  "date-edges",
  "wrong-types",
  "nulls",
  "empty-strings",
  "long-strings",
  "deep-nesting",
] as const;
export type Sweep = (typeof SWEEPS)[number];

const PROTO_VALUES = ["__proto__", "constructor", "toString"];
const HUGE = ["1e30", "9223372036854775808", "2147483648", "-9223372036854775809"];
const DATE_EDGES = [
  "+275760-09-13T00:00:00.001Z",
  "-271821-04-20T00:00:00Z",
  "0000-00-00T00:00:00Z",
  "9999-12-31T23:59:60Z",
  "2024-02-30T25:61:61+99:99",
];
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}|^\d{9,}(\.\d+)?$/;

/** Applies a sweep in place; `n` counts the values touched, to vary the replacement. */
export function sweep(doc: unknown, kind: Sweep): unknown {
  let n = 0;
  const leaf = (value: unknown): unknown => {
    n += 1;
    switch (kind) {
      case "nul-in-strings":
        return typeof value === "string" ? `${value.slice(0, 3)}\u0000${value.slice(3)}` : value;
      case "surrogate-in-strings":
        return typeof value === "string" ? `${value}${n % 2 ? "\ud800" : "\udfff"}` : value;
      case "prototype-values":
        return typeof value === "string" ? PROTO_VALUES[n % PROTO_VALUES.length] : value;
      case "huge-numbers":
        return typeof value === "number" ? new Raw(HUGE[n % HUGE.length] as string) : value;
      case "numeric-strings-huge":
        return typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)
          ? (HUGE[n % HUGE.length] as string)
          : typeof value === "number"
            ? new Raw(HUGE[n % HUGE.length] as string)
            : value;
      case "date-edges":
        return typeof value === "string" && DATE_LIKE.test(value) ? DATE_EDGES[n % DATE_EDGES.length] : value;
      case "wrong-types":
        if (typeof value === "string") return n % 2 ? 12345 : ["x"];
        if (typeof value === "number") return n % 2 ? String(value) : { value };
        if (typeof value === "boolean") return String(value);
        if (value === null) return {};
        return value;
      case "nulls":
        return null;
      case "empty-strings":
        return typeof value === "string" ? "" : value;
      case "long-strings":
        return typeof value === "string" ? new Long(20_000, value.slice(0, 1) || "x") : value;
      case "deep-nesting":
        return new Deep(32, n % 2 ? "array" : "object");
      default:
        return value;
    }
  };
  const keyOf = (key: string): string => {
    if (kind === "nul-in-keys") return `${key}\u0000`;
    if (kind === "surrogate-in-keys") return `${key}\ud800`;
    return key;
  };
  const walk = (value: unknown): unknown => {
    if (value instanceof Embedded) {
      value.value = walk(value.value);
      return value;
    }
    if (Array.isArray(value)) return value.map(walk);
    if (isContainer(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(value)) setKey(out, keyOf(key), walk(child));
      if (kind === "deep-nesting" && value === doc) setKey(out, "deep", new Deep(100_000, "array"));
      if (kind === "prototype-keys") {
        setKey(out, "__proto__", { polluted: "yes" });
        setKey(out, "constructor", { prototype: { polluted: "yes" } });
        setKey(out, "toString", "not a function");
      }
      return out;
    }
    return leaf(value);
  };
  return walk(doc);
}
