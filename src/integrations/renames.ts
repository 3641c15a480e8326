// Other domains keep integrations by name (an agent's integrations, an app's bindings). A rename
// reaches them through this port, inside the rename's transaction, so no reference is left naming
// an integration that no longer exists under that name.
import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Executor } from "../core/db/database.ts";

export type RenameListener = (tx: Executor, tenant: Tenant, from: string, to: string) => Promise<void>;

const listeners = new Map<string, RenameListener>();

/** Registers (or replaces) the listener of one holder of integration names. */
export function onIntegrationRenamed(holder: string, listener: RenameListener): void {
  listeners.set(holder, listener);
}

export async function carryRename(tx: Executor, tenant: Tenant, from: string, to: string): Promise<void> {
  for (const listener of listeners.values()) await listener(tx, tenant, from, to);
}

/** A jsonb list of names with `from` replaced by `to`, in its order (for an update's `set`). */
export function renamedList(column: AnyColumn, from: string, to: string): SQL {
  return sql`(select jsonb_agg(case when e.value = to_jsonb(${from}::text) then to_jsonb(${to}::text) else e.value end
    order by e.n) from jsonb_array_elements(${column}) with ordinality as e(value, n))`;
}

/** True where the jsonb list of names holds `name` (for an update's `where`). */
export function listNames(column: AnyColumn, name: string): SQL {
  return sql`${column} @> jsonb_build_array(${name}::text)`;
}
