// For domains that call an integration's system (the alert pull sync): its URL and its credentials,
// opened. Never returned by the API; the routes use integrations.ts, which only says `has_credentials`.
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { inTenant, type Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";
import type { Secrets } from "../core/secrets.ts";
import { integrations } from "./tables.ts";
import { splitUrlCredentials } from "./url-credentials.ts";

export interface IntegrationConnection {
  id: string;
  orgId: string | null;
  ownerId: string;
  name: string;
  type: string;
  url: string | null;
  /** Options of the type that are not secret (git: base_branch). */
  settings: Record<string, string>;
  /** Null when the integration has none, or when they cannot be opened (see `credentialsError`). */
  credentials: Record<string, string> | null;
  /** Why sealed credentials could not be opened (for example SECRET_KEY changed). */
  credentialsError: string | null;
}

type Row = typeof integrations.$inferSelect;

function open(row: Row, secrets: Secrets): IntegrationConnection {
  let credentials: Record<string, string> | null = null;
  let credentialsError: string | null = null;
  if (row.credentialsSealed !== null) {
    try {
      credentials = JSON.parse(secrets.decrypt(row.credentialsSealed)) as Record<string, string>;
    } catch {
      credentialsError = "the integration's credentials cannot be decrypted (was SECRET_KEY changed?)";
    }
  }
  // A url stored with user info (before writes moved it out) is read as if it had been moved: the
  // url without it, its user info over the sealed credentials, as it was used before.
  const split = row.url === null ? null : splitUrlCredentials(row.url, row.type);
  return {
    id: row.id,
    orgId: row.orgId,
    ownerId: row.ownerId,
    name: row.name,
    type: row.type,
    url: split?.url ?? null,
    settings: row.settings,
    credentials: split?.credentials ? { ...credentials, ...split.credentials } : credentials,
    credentialsError,
  };
}

/** The tenant's integration `name`, credentials opened; null when there is none. */
export async function readIntegrationConnection(
  db: Executor,
  secrets: Secrets,
  input: { tenant: Tenant; name: string },
): Promise<IntegrationConnection | null> {
  const [row] = await db
    .select()
    .from(integrations)
    .where(and(inTenant(integrations, input.tenant), eq(integrations.name, input.name)));
  return row ? open(row, secrets) : null;
}

/** Every tenant's integrations of `type` that have a URL (for scheduled work across tenants). */
export async function listIntegrationConnections(
  db: Executor,
  secrets: Secrets,
  input: { type: string },
): Promise<IntegrationConnection[]> {
  const rows = await db
    .select()
    .from(integrations)
    .where(and(eq(integrations.type, input.type), isNotNull(integrations.url)))
    .orderBy(asc(integrations.createdAt), asc(integrations.id));
  return rows.map((row) => open(row, secrets));
}

/** The tenant's integrations, credentials opened, by name. */
export async function listTenantIntegrationConnections(
  db: Executor,
  secrets: Secrets,
  tenant: Tenant,
): Promise<IntegrationConnection[]> {
  const rows = await db
    .select()
    .from(integrations)
    .where(inTenant(integrations, tenant))
    .orderBy(asc(integrations.name));
  return rows.map((row) => open(row, secrets));
}
