// The app token: the installed app's credential toward Vigil. It is an API key of the installing
// user, limited to the app's tenant and to the scopes the app needs, so every route and the MCP
// server accept it with no special path. The clear token is kept sealed (core/secrets.ts) because
// the installation shows it again to callers holding apps_write and every scope of the token; lookups
// go by hash, like any key.
import { randomBytes } from "node:crypto";
import { appTokenName, createApiKey, revokeApiKey } from "../core/auth/keys.ts";
import type { Scope } from "../core/auth/scopes.ts";
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";
import type { Secrets } from "../core/secrets.ts";

/**
 * Exactly what the app's MCP tools need (mcp/tools.ts): read alerts, read and start investigations,
 * read sessions and run Ask. No key, org, integration or app administration.
 */
export const APP_TOKEN_SCOPES: readonly Scope[] = [
  "sre_alerts_read",
  "sre_investigations_read",
  "sre_investigations_write",
  "aios_automation_read",
  "aios_automation_write",
];

/**
 * The first scope a caller needs to see or rotate the app token that `scopes` lacks, or null:
 * apps_write, then each scope the token holds. A key never gets hold of a credential that can do
 * more than it can.
 */
export function scopeLackedForAppToken(scopes: readonly string[]): Scope | null {
  const needed: readonly Scope[] = ["apps_write", ...APP_TOKEN_SCOPES];
  return needed.find((scope) => !scopes.includes(scope)) ?? null;
}

export interface IssuedToken {
  sealed: string;
  keyId: string;
}

export async function issueAppToken(
  db: Executor,
  secrets: Secrets,
  input: { tenant: Tenant; appName: string },
): Promise<IssuedToken> {
  const token = `vga_${randomBytes(32).toString("base64url")}`;
  const created = await createApiKey(db, {
    userId: input.tenant.ownerId,
    name: appTokenName(input.appName),
    scopes: APP_TOKEN_SCOPES,
    orgIds: input.tenant.orgId ? [input.tenant.orgId] : [],
    personalNamespace: input.tenant.orgId === null,
    key: token,
  });
  return { sealed: secrets.encrypt(token), keyId: created.id };
}

export async function revokeAppToken(db: Executor, keyId: string | null): Promise<void> {
  if (keyId) await revokeApiKey(db, keyId);
}
