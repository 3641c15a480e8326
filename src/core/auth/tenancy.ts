// Every owned row carries org_id (null = the personal namespace) and owner_id. A caller sees the rows
// of the org it selected with `orgId`, or its own personal rows when it selected none.
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

export interface Actor {
  userId: string;
  keyId: string;
  scopes: string[];
  /** The org selected by `orgId`, or null for the personal namespace. */
  orgId: string | null;
  /** The installed app whose token authenticated the request (`sre`), or null for a person's key. */
  app?: string | null;
}

/** Who started something, as sessions and investigations record it: `app:sre` or `user:<id>`. */
export function initiatorOf(actor: Actor): string {
  return actor.app ? `app:${actor.app}` : `user:${actor.userId}`;
}

export interface Tenant {
  orgId: string | null;
  ownerId: string;
}

export function tenantOf(actor: Actor): Tenant {
  return { orgId: actor.orgId, ownerId: actor.userId };
}

export interface OwnedColumns {
  orgId: PgColumn;
  ownerId: PgColumn;
}

/**
 * The WHERE condition that limits a query on an owned table to a tenant: the table's drizzle columns,
 * or the alias of an owned table in hand-written SQL (`{ alias: "a" }` reads `a.org_id`, `a.owner_id`).
 */
export function inTenant(table: OwnedColumns | { alias: string }, tenant: Tenant): SQL {
  const [orgId, ownerId] =
    "alias" in table
      ? [sql`${sql.identifier(table.alias)}.org_id`, sql`${sql.identifier(table.alias)}.owner_id`]
      : [table.orgId, table.ownerId];
  if (tenant.orgId) return sql`${orgId} = ${tenant.orgId}`;
  return sql`${orgId} is null and ${ownerId} = ${tenant.ownerId}`;
}
