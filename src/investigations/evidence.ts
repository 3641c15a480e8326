// Evidence that can be trusted: the caller says what a link is (kind, source, tool); Vigil decides
// whether it is verified (the URL's host is the host of one of the tenant's integrations) and when it
// was captured: a verified or captured_at the caller sends is ignored, as the spec has both always
// set server-side. A URL that is not absolute http(s) is a 400 naming the field; tool_name is kept
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

/** Checks every item; the first bad one is a 400 naming `evidence.<n>.<field>`. */
export function checkEvidence(items: EvidenceDraft[], field = "evidence"): void {
  items.forEach((item, index) => {
    // Written out as scheme, `//` and a host, with no white space: the WHATWG parser also takes
    // `http:host`, `http:\\host` or a padded string, which other clients read as relative or invalid
    // links, and stored verbatim they would be shown as given.
    const written = ABSOLUTE_HTTP_URL.test(item.url) && !/\s/.test(item.url);
    const url = written && URL.canParse(item.url) ? new URL(item.url) : null;
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
      throw badRequest(`${field}.${index}.url`, "must be an absolute http(s) URL");
    }
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
  checkEvidence(input.items);
  let items = input.items;
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
