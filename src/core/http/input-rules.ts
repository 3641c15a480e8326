// Rules every route gets at the edge, before its schema is checked: bodies are JSON unless a route
// registers its own parser, and no text reaches the database that PostgreSQL cannot store.
import type { FastifyInstance } from "fastify";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * The route checks for unstorable text itself: the MCP server answers it as a tool's error in
     * JSON-RPC, which an MCP client reads, not as an HTTP error.
     */
    ownTextRules?: boolean;
  }
}

import { AppError } from "../errors.ts";
import { MAX_JSON_DEPTH, tooDeepAt } from "../json-depth.ts";
import { jsonSyntaxReason } from "../json-syntax.ts";
import { takesOptionalBody } from "./schemas.ts";

// U+0000, or a UTF-16 surrogate without its partner: PostgreSQL text and jsonb refuse both, and a
// JSON body carries them as escapes (`\u0000`, `\ud800`).
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what must be refused
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

interface Found {
  path: string[];
  inKey: boolean;
}

interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit | null): string[] {
  const path: string[] = [];
  for (let at = visit; at?.key != null; at = at.parent) path.unshift(at.key);
  return path;
}

// Raw bodies (a Buffer, a stream) are kept as bytes, never as text: they are not looked into.
function isRaw(value: object): boolean {
  return ArrayBuffer.isView(value) || typeof (value as { pipe?: unknown }).pipe === "function";
}

/**
 * The first string (value or object key) PostgreSQL cannot store in parsed JSON, a query or path
 * parameters. Walks without recursion, so a deeply nested body cannot exhaust the stack.
 */
function findUnstorableText(input: unknown): Found | null {
  const stack: Visit[] = [{ value: input, key: null, parent: null }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    const { value } = visit;
    if (typeof value === "string") {
      if (UNSTORABLE.test(value)) return { path: pathOf(visit), inKey: false };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], key: String(i), parent: visit });
    } else if (value !== null && typeof value === "object" && !isRaw(value)) {
      const entries = Object.entries(value);
      for (const [key] of entries) {
        if (UNSTORABLE.test(key)) return { path: pathOf(visit), inKey: true };
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        stack.push({ value: child, key, parent: visit });
      }
    }
  }
  return null;
}

export function registerInputRules(app: FastifyInstance): void {
  // The query string parser keeps a sequence it cannot decode (`q=%FF`) as literal text, so the
  // request would search for other text than the client meant: 400, as for such a path.
  app.addHook("onRequest", async (request) => {
    const start = request.url.indexOf("?");
    if (start < 0 || !request.url.includes("%", start)) return;
    try {
      decodeURIComponent(request.url.slice(start + 1));
    } catch {
      throw new AppError(
        "BAD_REQUEST",
        "the query string cannot be read: bad percent-encoding (a % must start a UTF-8 byte as %XX)",
      );
    }
  });
  // A text/plain body on a JSON route is 415, not a string the schema then refuses. Routes that take
  // any body (the webhook trigger) register their own parsers.
  app.removeContentTypeParser("text/plain");

  // An operation without a body (approve a version, a new draft, terminate) or with an optional one
  // (optionalBody) is often called with a Content-Type and nothing after it: that is no body, not
  // invalid JSON. An operation that needs a body still answers 400 for an empty one.
  const optional = new Set<string>();
  app.addHook("onRoute", (route) => {
    if (!route.schema?.body || takesOptionalBody(route)) {
      for (const method of [route.method].flat()) optional.add(`${method} ${route.url}`);
    }
  });
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  // Read as bytes, decoded by jsonText.
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body: Buffer, done) => {
    if (body.length === 0 && optional.has(`${request.method} ${request.routeOptions.url}`)) {
      done(null, undefined);
      return;
    }
    const decoded = jsonText(body, request.headers["content-type"]);
    if (decoded instanceof AppError) {
      done(decoded);
      return;
    }
    const text = decoded;
    if (text.length === 0) {
      done(new AppError("INVALID_JSON", "body is empty: send a JSON value"));
      return;
    }
    parseJson(request, text, (err, value) => {
      if (err) return done(invalidJson(text));
      const deep = tooDeepAt(value);
      if (!deep) return done(null, value);
      // Named by where it starts: the keys below that are the nesting itself.
      const field = deep.slice(0, 3).join(".") || "body";
      done(
        new AppError("VALIDATION_FAILED", `${field}: nests deeper than ${MAX_JSON_DEPTH} levels`, {
          field,
          location: "body",
        }),
      );
    });
  });
  // No body under another content type (`curl -d ''` sends a form type) is still no body; a body
  // that is not JSON is 415.
  app.addContentTypeParser("*", { parseAs: "string" }, (request, body, done) => {
    if (body.length === 0 && optional.has(`${request.method} ${request.routeOptions.url}`)) {
      done(null, undefined);
      return;
    }
    done(Object.assign(new Error("unsupported content type"), { statusCode: 415 }), undefined);
  });

  app.addHook("preValidation", async (request) => {
    if (request.routeOptions.config.ownTextRules) return;
    // No query parameter takes a list (integration_names is comma-separated): one given twice
    // arrives as an array, which the schema would refuse as a wrong type or an unknown value.
    for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      if (Array.isArray(value)) throw givenTwice(name, value.length);
    }
    const parts = [
      ["params", request.params],
      ["querystring", request.query],
      ["body", request.body],
    ] as const;
    for (const [location, input] of parts) {
      const refused = unstorableTextError(input, location);
      if (refused) throw refused;
    }
  });
}

// A byte order mark is kept, so JSON.parse refuses it as before.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A JSON body's text: UTF-8 only (RFC 8259), so another charset is UNSUPPORTED_MEDIA_TYPE and bytes
 * that are not UTF-8 are INVALID_JSON (decoded loosely, they became U+FFFD and were stored so).
 */
export function jsonText(body: Buffer, contentType: string | undefined): string | AppError {
  const charset = charsetOf(contentType);
  if (charset !== null && !/^utf-?8$/i.test(charset)) {
    return new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `unsupported charset ${charset}: send the JSON body as UTF-8 (application/json; charset=utf-8)`,
    );
  }
  try {
    return UTF8.decode(body);
  } catch {
    return new AppError("INVALID_JSON", "body is not valid UTF-8: send JSON encoded as UTF-8");
  }
}

/** The charset parameter of a Content-Type (`application/json; charset="latin1"`), or null. */
function charsetOf(contentType: string | undefined): string | null {
  for (const parameter of (contentType ?? "").split(";").slice(1)) {
    const [name = "", value = ""] = parameter.split("=");
    if (name.trim().toLowerCase() === "charset") return value.trim().replace(/^"(.*)"$/, "$1");
  }
  return null;
}

/**
 * INVALID_JSON saying where the text stops being JSON (JSON.parse gives the position of most
 * faults). The text JSON.parse takes is refused only for a `__proto__` or `constructor.prototype`
 * key, which could change the objects the body becomes.
 */
function invalidJson(text: string): AppError {
  let reason = "a __proto__ or constructor.prototype key is not allowed";
  try {
    JSON.parse(text);
  } catch (err) {
    // The excerpt JSON.parse quotes is dropped (it may hold a secret), and so is its "not valid JSON".
    reason = jsonSyntaxReason(err).replace(/ \(not valid JSON\)$/, "");
  }
  return new AppError("INVALID_JSON", `body is not valid JSON: ${reason}`);
}

/** VALIDATION_FAILED for a query parameter given `times` times (none takes a list). */
export function givenTwice(name: string, times: number): AppError {
  return new AppError("VALIDATION_FAILED", `${name}: given ${times} times: give it once`, {
    field: name,
    location: "querystring",
  });
}

/** VALIDATION_FAILED naming the first text in `input` PostgreSQL cannot store, or null when none. */
export function unstorableTextError(input: unknown, location: string): AppError | null {
  const found = findUnstorableText(input);
  if (!found) return null;
  const field = found.path.join(".") || location;
  const what = found.inKey ? "keys must not contain" : "must not contain";
  return new AppError("VALIDATION_FAILED", `${field}: ${what} U+0000 or unpaired surrogates`, {
    field,
    location,
    rule: "storable_text",
  });
}
