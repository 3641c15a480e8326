// Request body decoding (alert-sources.md 1.1): JSON whatever the Content-Type says, except that a
// form-encoded body (Datadog's "Encode as form") is decoded into its fields first.
import { jsonSyntaxReason } from "../../../core/json-syntax.ts";

/** A decoded body, or the reason it could not be decoded. Never thrown. */
export type DecodedBody = { ok: true; value: unknown } | { ok: false; error: string };

const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded";

function isFormEncoded(headers: Readonly<Record<string, string | undefined>>): boolean {
  const contentType = headers["content-type"] ?? "";
  return contentType.split(";")[0]?.trim().toLowerCase() === FORM_CONTENT_TYPE;
}

function parseJson(text: string): DecodedBody {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: `body is not JSON: ${jsonSyntaxReason(err)}` };
  }
}

// Only object and array text is parsed: a field such as `title=null` or `id=0123` is a string the
// template wrote, and turning it into null or a number would lose it.
function formFieldValue(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return text;
  const parsed = parseJson(trimmed);
  return parsed.ok ? parsed.value : text;
}

function decodeForm(text: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const params = new URLSearchParams(text);
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key).map(formFieldValue);
    // defineProperty, not assignment: a field named `__proto__` stays a field.
    Object.defineProperty(fields, key, {
      value: values.length === 1 ? values[0] : values,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return fields;
}

/**
 * Decodes a webhook body. JSON is parsed whatever the Content-Type; when JSON parsing fails and the
 * Content-Type is `application/x-www-form-urlencoded`, the form fields become the top-level keys (a
 * field repeated becomes an array), and a field holding JSON object or array text is parsed.
 * Empty or unreadable bodies give `{ ok: false, error }`.
 */
export function decodeBody(body: string, headers: Readonly<Record<string, string | undefined>>): DecodedBody {
  // A UTF-8 byte order mark is not JSON whitespace, but some senders write one.
  const text = body.replace(/^\uFEFF/, "").trim();
  if (!text) return { ok: false, error: "body is empty" };
  const json = parseJson(text);
  if (json.ok || !isFormEncoded(headers)) return json;
  return { ok: true, value: decodeForm(text) };
}
