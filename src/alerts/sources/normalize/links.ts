// Links (alert-sources.md 1.8): absolute http(s) URLs an investigator wants.
import type { AlertLink, LinkKind } from "../types.ts";

// An unexpanded template: `{PID}`, `{$MACRO}`, `{{context.url}}` (any braces), or `$LINK`-style
// upper-case variables. Checked on the raw text, before URL parsing percent-encodes the braces.
const UNEXPANDED_PLACEHOLDER = /[{}]|\$[A-Z][A-Z0-9_]*/;

function isWebUrl(url: URL): boolean {
  return url.protocol === "http:" || url.protocol === "https:";
}

/**
 * A link URL, or null when it must be dropped. An absolute http/https URL is kept as written
 * (trimmed); a relative one is resolved against `baseUrl` when that is an absolute http/https URL,
 * else dropped; other schemes, non-strings and values holding a placeholder are dropped.
 */
export function normalizeLinkUrl(value: unknown, baseUrl?: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (!text || UNEXPANDED_PLACEHOLDER.test(text)) return null;
  if (URL.canParse(text)) return isWebUrl(new URL(text)) ? text : null;
  const base = baseUrl === undefined ? null : normalizeLinkUrl(baseUrl);
  if (base === null || !URL.canParse(text, base)) return null;
  const resolved = new URL(text, base);
  return isWebUrl(resolved) ? resolved.href : null;
}

// An unpaired UTF-16 surrogate: encodeURIComponent throws on one (URIError), and a source can send
// one as a JSON escape (`"\ud800"`).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `encodeURIComponent` for source text, for a parser building a link from an id or a name. It never
 * throws: an unpaired surrogate is encoded as U+FFFD (`%EF%BF%BD`), as a URL parser would do.
 */
export function encodeUrlPart(text: string): string {
  return encodeURIComponent(text.replace(LONE_SURROGATE, "\ufffd"));
}

/** One wanted link: the first usable URL of `urls` ("A or B") becomes a link of this kind. */
export interface LinkCandidate {
  kind: LinkKind;
  urls: readonly unknown[];
}

/**
 * The event's links: for each candidate, the first of its `urls` that `normalizeLinkUrl` keeps, in
 * candidate order; a repeated (kind, url) pair is kept once.
 */
export function buildLinks(
  candidates: readonly LinkCandidate[],
  options: { baseUrl?: unknown } = {},
): AlertLink[] {
  const links: AlertLink[] = [];
  for (const { kind, urls } of candidates) {
    for (const value of urls) {
      const url = normalizeLinkUrl(value, options.baseUrl);
      if (url === null) continue;
      if (!links.some((link) => link.kind === kind && link.url === url)) links.push({ kind, url });
      break;
    }
  }
  return links;
}
