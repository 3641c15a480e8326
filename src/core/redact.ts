// Secrets that must never reach a log line. Monitoring sources put the webhook token in the URL
// (`?apiKey=whk_...`), which every request line records, and a caller may paste an API key or any
// other credential into a URL by mistake. The logger passes each finished line through
// `redactSecrets` (createLogger), so the rule holds whatever logged the line: request lines, error
// messages and stacks, messages that quote a URL.

const REDACTED = "[REDACTED]";

// A parameter or field named like a credential: `apiKey`, `api_key`, `x-api-key`, `token`,
// `access_token`, `client_secret`, `password`, `X-Amz-Signature`, `authorization`, `cookie`...
const SECRET_NAME = String.raw`[\w.~-]*?(?:key|token|secret|passw(?:or)?d|pwd|sig(?:nature)?|auth(?:orization)?|credentials?|cookie)`;

const PATTERNS = [
  // A query or form parameter: `?apiKey=...`, `&access_token=...`. The value ends where a URL
  // parameter ends, or where the JSON string holding the URL does.
  String.raw`([?&;]${SECRET_NAME}=)[^&#\s"'\\<>]*`,
  // A JSON string field of that name, e.g. a header logged as `"authorization":"Bearer ..."`.
  String.raw`("${SECRET_NAME}"\s*:\s*")(?:[^"\\]|\\.)*`,
  // The password of a URL: `https://user:password@host`.
  String.raw`(//[^/\s:@"'\\]+:)[^@/\s"'\\]+(?=@)`,
  // A bearer credential wherever it is quoted.
  String.raw`(\bBearer\s+)[^\s"',;\\]+`,
  // Vigil's own credentials by their shape, wherever they are (a path, a percent-encoded URL inside
  // another one): webhook tokens (`whk_`) and API keys (`vgl_`).
  "(whk_|vgl_)[A-Za-z0-9_-]{16,}",
];

const SECRETS = new RegExp(PATTERNS.join("|"), "gi");

/** The text with every credential it holds (see PATTERNS) replaced by `[REDACTED]`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRETS, (_match, ...groups: (string | undefined)[]) => {
    const kept = groups.slice(0, PATTERNS.length).find((group) => group !== undefined) ?? "";
    return `${kept}${REDACTED}`;
  });
}
