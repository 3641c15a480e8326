// Other domains keep integrations by name, in jsonb lists (an agent's integrations, an app's
// bindings). A rename reaches every such list through this port, inside the rename's transaction,
// so no reference is left naming an integration that no longer exists under that name. A delete
// reaches the holders that drop the name with it (app bindings), in the delete's transaction; an
// agent keeps it and counts only the integrations that still exist (its readiness says so).
import { type AnyColumn, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { inTenant, type OwnedColumns, type Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";

/** A jsonb list of integration names: a column of a tenant-owned table. */
export interface NameList {
  table: PgTable & OwnedColumns;
  column: AnyColumn;
}

const lists = new Map<string, NameList>();

/** Registers (or replaces) the list one holder keeps integration names in. */
export function onIntegrationRenamed(holder: string, list: NameList): void {
  lists.set(holder, list);
}

/** Renames `from` to `to`, in place, in the tenant's rows of every registered list that holds it. */
export async function carryRename(tx: Executor, tenant: Tenant, from: string, to: string): Promise<void> {
  for (const { table, column } of lists.values()) {
    await tx.execute(sql`
      update ${table} set ${sql.identifier(column.name)} = (
        select jsonb_agg(case when e.value = to_jsonb(${from}::text) then to_jsonb(${to}::text) else e.value end
          order by e.n)
        from jsonb_array_elements(${column}) with ordinality as e(value, n))
      where ${inTenant(table, tenant)} and ${column} @> jsonb_build_array(${from}::text)`);
  }
}

/** Removes the deleted integration `name` of `tenant` from a holder's references, in the delete's transaction. */
export type IntegrationDeleted = (
  tx: Executor,
  input: { tenant: Tenant; name: string; now: Date },
) => Promise<void>;

const onDelete = new Map<string, IntegrationDeleted>();

/** Registers (or replaces) what one holder does when an integration it may name is deleted. */
export function onIntegrationDeleted(holder: string, drop: IntegrationDeleted): void {
  onDelete.set(holder, drop);
}

export async function carryDelete(tx: Executor, input: { tenant: Tenant; name: string; now: Date }) {
  for (const drop of onDelete.values()) await drop(tx, input);
}
