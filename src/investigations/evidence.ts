// Evidence that can be trusted: the caller says what a link is (kind, source, tool); Vigil decides
// whether it is verified (the URL's host is the host of one of the tenant's integrations) and when it
// was captured: a verified or captured_at the caller sends is ignored, as the spec has both always
// set server-side. A URL is stored as an RFC 3986 URI (the spec's `format: uri`), and one that is not
// absolute http(s) is a 400 naming the field; tool_name is kept
// for tool_trace items only (null on others, and on a tool_trace item that names no tool); a missing
// description gets a default from the tool or the kind.
import { eq } from "drizzle-orm";
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Ctx } from "../core/context.ts";
import type { Executor } from "../core/db/database.ts";
import { badRequest } from "../core/errors.ts";
import { listTenantIntegrationConnections } from "../integrations/index.ts";
import type { EvidenceKind, EvidenceSource } from "./schemas.ts";
import { investigationEvidence } from "./tables.ts";

export interface EvidenceDraft {
  kind: EvidenceKind;
  title: string;
  url: string;
  description?: string | null;
  source: EvidenceSource;
  tool_name?: string | null;
}

const DEFAULT_DESCRIPTIONS: Record<EvidenceKind, string> = {
  dashboard: "A dashboard of the affected system around the alert",
  metric: "A metric series around the alert's trigger time",
  log: "Logs of the affected system",
  trace: "A distributed trace of an affected request",
  runbook: "The runbook the alert's source links to",
  alert_rule: "The rule that raised the alert",
  console: "The monitoring console's page for this alert",
  code: "Source code related to the cause",
  other: "A related page",
};

/** Host names of the tenant's integration URLs: the allowlist that makes a link verified. */
export async function verifiedHosts(
  ctx: Pick<Ctx, "secrets">,
  db: Executor,
  tenant: Tenant,
): Promise<Set<string>> {
  const connections = await listTenantIntegrationConnections(db, ctx.secrets, tenant);
  const hosts = new Set<string>();
  for (const connection of connections) {
    const url = connection.url && URL.canParse(connection.url) ? new URL(connection.url) : null;
    // Links are http(s): a git remote over ssh or on disk names no host a link could be on.
    if (url && (url.protocol === "http:" || url.protocol === "https:")) hosts.add(url.hostname.toLowerCase());
  }
  return hosts;
}

export function isVerified(url: string, hosts: Set<string>): boolean {
  return URL.canParse(url) && hosts.has(new URL(url).hostname.toLowerCase());
}

/** The tool an item names: only a tool_trace item has one. */
const toolNameOf = (item: EvidenceDraft) => (item.source === "tool_trace" ? (item.tool_name ?? null) : null);

const ABSOLUTE_HTTP_URL = /^https?:\/\/[^/?#\\]/i;

// RFC 3986's characters of each part besides its percent-encoded octets: unreserved and sub-delims in
// userinfo (its `:` and `@` separate), and `:`, `@`, `/` in a path, `?` too in a query or fragment.
const USERINFO_CHARS = "A-Za-z0-9\\-._~!$&'()*+,;=";
const PATH_CHARS = `${USERINFO_CHARS}:@/`;
const QUERY_CHARS = `${PATH_CHARS}?`;
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+,;=]+$/;
const IP_LITERAL = /^\[[0-9a-f:.]+\]$/;

/** A `%` that starts no percent-encoded octet, or any character outside `chars`. */
const outside = (chars: string) => new RegExp(`%(?![0-9A-Fa-f]{2})|[^%${chars}]`, "gu");
const NOT_USERINFO = outside(USERINFO_CHARS);
const NOT_PATH = outside(PATH_CHARS);
const NOT_QUERY = outside(QUERY_CHARS);

const percentEncode = (char: string) =>
  Array.from(
    new TextEncoder().encode(char),
    (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
  ).join("");

/**
 * The RFC 3986 URI of an absolute http(s) URL written out, or null. The WHATWG serialization
 * percent-encodes white space, quotes, `<`, `>` and non-ASCII, and punycodes the host, but leaves
 * `[`, `]`, `|`, `^`, a stray `%` and more in the path, query and fragment, which RFC 3986 does not
 * allow there: those are percent-encoded too. Servers decode them back (Prometheus and Grafana
 * read `rate(x%5B5m%5D)` as `rate(x[5m])`), so the link opens the same page.
 */
function toUri(written: string): string | null {
  // Written out as scheme, `//` and a host: the WHATWG parser also takes `http:host`, `http:\\host`
  // or a padded string, which other clients read as relative or invalid links. It drops tabs and
  // line breaks anywhere, so a link holding one is not the link sent.
  if (!ABSOLUTE_HTTP_URL.test(written) || written.trim() !== written || /[\t\n\r]/.test(written)) return null;
  if (!URL.canParse(written)) return null;
  const url = new URL(written);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  // A host WHATWG keeps with `{`, `"` or a backquote has no RFC 3986 form that names the same host.
  if (!REG_NAME.test(url.hostname) && !IP_LITERAL.test(url.hostname)) return null;
  const userinfo = url.username
    ? `${url.username.replace(NOT_USERINFO, percentEncode)}${url.password ? `:${url.password.replace(NOT_USERINFO, percentEncode)}` : ""}@`
    : "";
  // The path onwards from the serialization, not pathname/search/hash: those drop an empty `?` or `#`.
  const rest = url.href.slice(url.href.indexOf("/", url.protocol.length + 2));
  const hashAt = rest.indexOf("#");
  const beforeHash = hashAt === -1 ? rest : rest.slice(0, hashAt);
  const queryAt = beforeHash.indexOf("?");
  const path = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? "" : `?${beforeHash.slice(queryAt + 1).replace(NOT_QUERY, percentEncode)}`;
  const fragment = hashAt === -1 ? "" : `#${rest.slice(hashAt + 1).replace(NOT_QUERY, percentEncode)}`;
  return `${url.protocol}//${userinfo}${url.host}${path.replace(NOT_PATH, percentEncode)}${query}${fragment}`;
}

/** The items whose URL can be an RFC 3986 URI, with it as their URL. */
function usableEvidence(items: EvidenceDraft[]): EvidenceDraft[] {
  return items.flatMap((item) => {
    const url = toUri(item.url);
    return url === null ? [] : [{ ...item, url }];
  });
}

/**
 * Checks every item and answers them with their URL as an RFC 3986 URI; the first item whose URL
 * cannot be one is a 400 naming `evidence.<n>.url`.
 */
export function checkEvidence(items: EvidenceDraft[], field = "evidence"): EvidenceDraft[] {
  return items.map((item, index) => {
    const url = toUri(item.url);
    if (url === null) throw badRequest(`${field}.${index}.url`, "must be an absolute http(s) URL");
    return { ...item, url };
  });
}

/**
 * Stores checked items in order, verified against the tenant's integration hosts. `skipRecorded`
 * (the investigator's steps, which a retry may run again) leaves out items already stored with the
 * same url, source and tool.
 */
export async function recordEvidence(
  ctx: Pick<Ctx, "secrets" | "now">,
  db: Executor,
  input: { tenant: Tenant; investigationId: string; items: EvidenceDraft[]; skipRecorded?: boolean },
): Promise<void> {
  // Normalized before the comparison below: what is stored is the normalized URL. The investigator's
  // own links (an alert's, the model's citations) are left out when they cannot be a URI: a caller
  // hears of a bad link as a 400, but a link an alert carried must not fail its investigation.
  let items = input.skipRecorded ? usableEvidence(input.items) : checkEvidence(input.items);
  if (input.skipRecorded && items.length > 0) {
    const stored = await db
      .select({
        url: investigationEvidence.url,
        source: investigationEvidence.source,
        toolName: investigationEvidence.toolName,
      })
      .from(investigationEvidence)
      .where(eq(investigationEvidence.investigationId, input.investigationId));
    const keys = new Set(stored.map((row) => JSON.stringify([row.url, row.source, row.toolName])));
    items = items.filter((item) => !keys.has(JSON.stringify([item.url, item.source, toolNameOf(item)])));
  }
  if (items.length === 0) return;
  const hosts = await verifiedHosts(ctx, db, input.tenant);
  const capturedAt = ctx.now();
  await db.insert(investigationEvidence).values(
    items.map((item) => ({
      investigationId: input.investigationId,
      kind: item.kind,
      title: item.title,
      url: item.url,
      description:
        item.description ||
        (toolNameOf(item) ? `Captured by the ${toolNameOf(item)} tool` : DEFAULT_DESCRIPTIONS[item.kind]),
      source: item.source,
      toolName: toolNameOf(item),
      verified: isVerified(item.url, hosts),
      capturedAt,
    })),
  );
}
