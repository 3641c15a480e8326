// The columns and indexes every owned table repeats (see core/auth/tenancy.ts): a row belongs to an
// org (org_id), or to its owner's personal namespace when org_id is null.
import { sql } from "drizzle-orm";
import { type ExtraConfigColumn, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

/** id, org_id and owner_id, the first columns of an owned table; the code that inserts sets all three. */
export function ownedColumns() {
  return {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
  };
}

/** created_at and updated_at, set by the code that writes the row. */
export function timestampColumns() {
  return {
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  };
}

interface TenantColumns {
  orgId: ExtraConfigColumn;
  ownerId: ExtraConfigColumn;
}

/**
 * `columns` unique per tenant: one partial unique index per org (`names.org`, on org_id and the
 * columns) and one per user in the personal namespace (`names.personal`, on owner_id and the columns).
 */
export function uniquePerTenant(
  table: TenantColumns,
  names: { org: string; personal: string },
  ...columns: ExtraConfigColumn[]
) {
  return [
    uniqueIndex(names.org)
      .on(table.orgId, ...columns)
      .where(sql`${table.orgId} is not null`),
    uniqueIndex(names.personal)
      .on(table.ownerId, ...columns)
      .where(sql`${table.orgId} is null`),
  ];
}
