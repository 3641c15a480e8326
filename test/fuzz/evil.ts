// The hostile values the fuzzer puts into bodies, paths and queries, and how they become bytes.
// A value is plain JSON data, or one of three markers materialized only when a request is built:
// Raw (JSON text sent verbatim: 9223372036854775808 keeps every digit), Long (an oversized string)
// and Deep (nesting thousands of levels deep). Markers keep counterexamples short to print.
import fc from "fast-check";

const PRINT = fc.toStringMethod;

/** JSON text sent exactly as written: integers beyond 2^53, 1e400, deep nesting. */
export class Raw {
  constructor(readonly text: string) {}
  [PRINT](): string {
    return `Raw(${this.text.length > 60 ? `${this.text.slice(0, 60)}...` : this.text})`;
  }
}

/** A string of `length` code units (`unit` repeated), built only when sent. */
export class Long {
  constructor(
    readonly length: number,
    readonly unit = "a",
  ) {}
  text(): string {
    return this.unit.repeat(Math.ceil(this.length / this.unit.length)).slice(0, this.length);
  }
  [PRINT](): string {
    return `Long(${this.length}, ${JSON.stringify(this.unit)})`;
  }
}

/** `depth` nested arrays or objects around a 1. */
export class Deep {
  constructor(
    readonly depth: number,
    readonly shape: "array" | "object",
  ) {}
  text(): string {
    return this.shape === "array"
      ? `${"[".repeat(this.depth)}1${"]".repeat(this.depth)}`
      : `${'{"a":'.repeat(this.depth)}1${"}".repeat(this.depth)}`;
  }
  [PRINT](): string {
    return `Deep(${this.depth}, ${this.shape})`;
  }
}

export type Evil = null | boolean | number | string | Raw | Long | Deep | Evil[] | { [key: string]: Evil };

/** An own, enumerable property even for `__proto__`, which plain assignment would not create. */
export function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An object with exactly these own keys, `__proto__` included. */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [key, value] of entries) setKey(target, key, value);
  return target;
}

// ---- the catalogue ----

export const PROTOTYPE_KEYS = [
  "__proto__",
  "constructor",
  "toString",
  "prototype",
  "hasOwnProperty",
  "valueOf",
] as const;
/** Text PostgreSQL cannot store: NUL and UTF-16 surrogates without their partner. */
export const UNSTORABLE = ["\u0000", "\ud800", "\udfff", "\udc00\ud800"] as const;
/** Integers past every column type, as JSON text so no digit is lost. */
export const HUGE_INTEGERS = [
  "1e30",
  "9223372036854775808",
  "-9223372036854775809",
  "2147483648",
  "-2147483649",
  "4294967296",
  "9007199254740993",
  "1e308",
  "1e400",
] as const;

const ODD_STRINGS = [
  "",
  " ",
  "a\u0000b",
  "x\ud800y",
  "%00",
  "%",
  "..",
  "../../etc/passwd",
  "a/b",
  "'\";--",
  "{{input.message}}",
  ["$", "{7*7}"].join(""),
  "\u{1F600}",
  "\u202e\u2028\ufeff",
  "null",
  "true",
  "-1",
  "0x10",
  "NaN",
  "Infinity",
  "1e30",
  "9223372036854775808",
  "2147483648",
  "2024-13-45T99:99:99Z",
  "+275760-09-13T00:00:00.001Z",
  "-271821-04-20T00:00:00Z",
  "0000-00-00T00:00:00Z",
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

/** Strings with NUL or a lone surrogate somewhere, prototype names, odd text. */
export const evilString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...UNSTORABLE, ...PROTOTYPE_KEYS, ...ODD_STRINGS),
  fc
    .tuple(fc.string({ maxLength: 6 }), fc.oneof(fc.constantFrom(...UNSTORABLE), loneSurrogate))
    .map(([text, bad]) => text + bad),
  fc.string({ unit: "binary", maxLength: 12 }),
);

const hugeNumber: fc.Arbitrary<Raw> = fc.constantFrom(...HUGE_INTEGERS).map((text) => new Raw(text));

export const evilNumber: fc.Arbitrary<number | Raw> = fc.oneof(
  hugeNumber,
  fc.constantFrom(-1, 0, -0, 1.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Oversized strings: over a column's length, over the 1 MiB JSON body limit, over 5 MiB. */
export const longString: fc.Arbitrary<Long> = fc
  .tuple(
    fc.constantFrom(3_000, 70_000, 1_100_000, 5_300_000),
    fc.constantFrom("a", "\u00e9", "\u{1F600}", "\u0000"),
  )
  .map(([length, unit]) => new Long(length, unit));

export const deepValue: fc.Arbitrary<Deep> = fc
  .tuple(fc.constantFrom(64, 600, 5_000, 100_000), fc.constantFrom("array" as const, "object" as const))
  .map(([depth, shape]) => new Deep(depth, shape));

/** An object whose keys are prototype names, as a body or a label set would carry them. */
export const prototypeObject: fc.Arbitrary<Record<string, unknown>> = fc
  .subarray([...PROTOTYPE_KEYS], { minLength: 1 })
  .chain((keys) =>
    fc
      .array(
        fc.oneof(fc.constant({ polluted: "yes" }), fc.constant("x"), fc.constant(1), fc.constant(null)),
        {
          minLength: keys.length,
          maxLength: keys.length,
        },
      )
      .map((values) => objectOf(keys.map((key, i) => [key, values[i]]))),
  );

/** Any value of the catalogue: wrong types included, as the slot's type is not looked at. */
export const evilValue: fc.Arbitrary<Evil> = fc.oneof(
  { arbitrary: evilString, weight: 5 },
  { arbitrary: evilNumber, weight: 4 },
  { arbitrary: fc.constantFrom<Evil>(null, true, false, [], {}, [1, "a", null], { a: 1 }), weight: 3 },
  { arbitrary: prototypeObject as fc.Arbitrary<Evil>, weight: 2 },
  { arbitrary: longString, weight: 1 },
  { arbitrary: deepValue, weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Evil>, weight: 1 },
);

/** Object keys: prototype names, unstorable text, empty, long. */
export const evilKey: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...PROTOTYPE_KEYS), weight: 4 },
  { arbitrary: fc.constantFrom(...UNSTORABLE, "a\u0000", "k\ud800"), weight: 2 },
  { arbitrary: fc.constantFrom("", " ", "a.b", "a/b", "$where", "0", "-1", "k".repeat(3_000)), weight: 1 },
);

// ---- serialization ----

const SENTINEL = /"\\u0001raw(\d+)\\u0001"/g;

/** JSON text of a value with markers: Raw and Deep verbatim, Long as its string. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof Raw || item instanceof Deep) {
      raws.push(item instanceof Raw ? item.text : item.text());
      return `\u0001raw${raws.length - 1}\u0001`;
    }
    if (item instanceof Long) return item.text();
    return item;
  });
  // JSON.stringify(undefined) is undefined: an absent body is the empty text.
  if (text === undefined) return "";
  return raws.length === 0
    ? text
    : text.replace(SENTINEL, (_match, index: string) => raws[Number(index)] ?? "");
}

/**
 * Longest parameter text sent: over real HTTP, Node refuses a request line past 16 KiB (431) long
 * before Vigil sees it, so a longer one would only test app.inject.
 */
const PARAM_MAX = 20_000;

/** A value as the text of a query or path parameter. */
export function toParamText(value: Evil): string {
  if (typeof value === "string") return value;
  if (value instanceof Long) return new Long(Math.min(value.length, PARAM_MAX), value.unit).text();
  if (value instanceof Raw) return value.text;
  if (value instanceof Deep) return value.text();
  if (value === null || typeof value !== "object") return String(value);
  return toJsonText(value);
}

/**
 * Percent-encodes text as a client would, except that a lone surrogate is sent as the three bytes
 * UTF-8 would give its code point (ED A0 80 for U+D800), which are not valid UTF-8: that is the only
 * way such text reaches a server in a URL. `encodeURIComponent` would throw.
 */
export function encodeParam(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out +=
        `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(text[i] as string);
    }
  }
  return out;
}

// ---- body text mutations ----

export type TextOp =
  | { op: "truncate"; keep: number }
  | { op: "invalid-utf8" }
  | { op: "bom" }
  | { op: "trailing-garbage" }
  | { op: "empty" }
  | { op: "not-json" }
  | { op: "scalar"; text: string }
  | { op: "duplicate-keys" }
  | { op: "comments" }
  | { op: "nan-literal" };

export const textOp: fc.Arbitrary<TextOp> = fc.oneof(
  {
    arbitrary: fc
      .double({ min: 0, max: 0.999, noNaN: true })
      .map((keep) => ({ op: "truncate" as const, keep })),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom<TextOp>(
      { op: "invalid-utf8" },
      { op: "bom" },
      { op: "trailing-garbage" },
      { op: "empty" },
      { op: "not-json" },
      { op: "duplicate-keys" },
      { op: "comments" },
      { op: "nan-literal" },
    ),
    weight: 4,
  },
  {
    arbitrary: fc
      .constantFrom("null", "[]", '"text"', "0", "true", "[null]", '["__proto__"]', "{}")
      .map((text) => ({ op: "scalar" as const, text })),
    weight: 2,
  },
);

/** Applies a text mutation to a JSON body; the result is bytes, as invalid UTF-8 must survive. */
export function mutateText(text: string, mutation: TextOp): Buffer {
  switch (mutation.op) {
    case "truncate":
      return Buffer.from(text.slice(0, Math.floor(text.length * mutation.keep)), "utf8");
    case "invalid-utf8": {
      const bytes = Buffer.from(text, "utf8");
      const at = Math.floor(bytes.length / 2);
      return Buffer.concat([
        bytes.subarray(0, at),
        Buffer.from([0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80]),
        bytes.subarray(at),
      ]);
    }
    case "bom":
      return Buffer.from(`\ufeff${text}`, "utf8");
    case "trailing-garbage":
      return Buffer.from(`${text} }{ ,`, "utf8");
    case "empty":
      return Buffer.alloc(0);
    case "not-json":
      return Buffer.from("alert=down&severity=critical", "utf8");
    case "scalar":
      return Buffer.from(mutation.text, "utf8");
    case "duplicate-keys":
      return Buffer.from(
        text.startsWith("{") ? `{"__proto__":{"x":1},${text.slice(1)}`.replace(/,}$/, "}") : text,
        "utf8",
      );
    case "comments":
      return Buffer.from(`// comment\n${text}`, "utf8");
    case "nan-literal":
      return Buffer.from(
        text.startsWith("{") && text.length > 2 ? `{"fuzz":NaN,${text.slice(1)}` : "NaN",
        "utf8",
      );
  }
}

export const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=xyz",
  "application/xml",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/json;;;",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  "application/octet-stream",
  "*/*",
  "json",
  "",
] as const;

/** A content type to send instead of the right one; null sends none at all. */
export const contentTypeArb: fc.Arbitrary<string | null> = fc.oneof(
  fc.constantFrom<string | null>(...CONTENT_TYPES),
  fc.constant(null),
);
