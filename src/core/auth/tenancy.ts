// Every owned row carries org_id (null = the personal namespace) and owner_id. A caller sees the rows
// of the org it selected with `orgId`, or its own personal rows when it selected none.
import { and, eq, isNull, type SQL } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

export interface Actor {
  userId: string;
  keyId: string;
  scopes: string[];
  /** The org selected by `orgId`, or null for the personal namespace. */
  orgId: string | null;
}

export interface Tenant {
  orgId: string | null;
  ownerId: string;
}

export function tenantOf(actor: Actor): Tenant {
  return { orgId: actor.orgId, ownerId: actor.userId };
}

interface OwnedColumns {
  orgId: PgColumn;
  ownerId: PgColumn;
}

/** The WHERE condition that limits a query on an owned table to the caller's tenant. */
export function inTenant(table: OwnedColumns, tenant: Tenant): SQL {
  if (tenant.orgId) return eq(table.orgId, tenant.orgId);
  return and(isNull(table.orgId), eq(table.ownerId, tenant.ownerId)) as SQL;
}
