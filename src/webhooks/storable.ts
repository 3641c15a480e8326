// Text PostgreSQL cannot store. Its text and jsonb types refuse U+0000, and a JSON parameter holding
// an unpaired UTF-16 surrogate is refused too, yet monitoring sources send both: a JSON body carries
// them as escapes (`\u0000`, `\ud800`), a form body can carry a raw NUL byte. Refusing them would
// lose the delivery (the sender gets a 500 and retries forever), so they become U+FFFD wherever
// source data is written: invocation records, alerts, their payloads and history, job data. The
// same rule on both engines, since the text is cleaned before it reaches either.

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is exactly what must go
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** The text with U+0000 and unpaired surrogates replaced by U+FFFD; the same string when it has none. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, "\ufffd") : text;
}

// JSON.stringify escapes every U+0000 and every unpaired surrogate (as `\u0000`, `\ud800`), and
// nothing else as these: JSON without them holds no text to clean. A backslash the text holds
// before such letters also matches (`\\u0000`), which costs a walk and changes nothing.
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/;

/**
 * `storableValue`, with the value's JSON: for a value stringified anyway (hashed, sent as json), one
 * JSON.stringify replaces the walk whenever there is nothing to clean, which is almost always.
 */
export function storableJson<T>(value: T): { value: T; json: string } {
  const json = JSON.stringify(value);
  if (!UNSTORABLE_ESCAPE.test(json)) return { value, json };
  const cleaned = storableValue(value);
  return { value: cleaned, json: cleaned === value ? json : JSON.stringify(cleaned) };
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `storableText` applied to every string of a JSON-like value: strings, array items, object keys and
 * values, at any depth. Anything else (numbers, dates, buffers) is kept as is. Parts with nothing to
 * clean are returned as they are, so a clean value costs one walk and no copy.
 */
export function storableValue<T>(value: T): T {
  return clean(value) as T;
}

function clean(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item = clean(value[i]);
      if (item !== value[i]) {
        copy ??= value.slice();
        copy[i] = item;
      }
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  let copy: Record<string, unknown> | null = null;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const cleanKey = storableText(key);
    const cleanItem = clean(value[key]);
    if (copy === null && (cleanKey !== key || cleanItem !== value[key])) {
      copy = Object.getPrototypeOf(value) === null ? Object.create(null) : {};
      for (const earlier of keys.slice(0, i))
        define(copy as Record<string, unknown>, earlier, value[earlier]);
    }
    if (copy !== null) define(copy, cleanKey, cleanItem);
  }
  return copy ?? value;
}

// defineProperty, not assignment: a key named `__proto__` stays a key.
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
