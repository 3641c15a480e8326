// Tests of two transactions at once on PostgreSQL: one is held open, the other is sent, and the test
// goes on once the second waits on a row lock, or has ended without waiting. Read from
// pg_stat_activity of the test's own database (other test files may share the server).
import { sql } from "drizzle-orm";
import type { Database } from "../src/core/db/database.ts";
import { waitFor } from "./harness.ts";

/** Waits until a backend of this database waits on a lock, or `ended()` (the request did not wait). */
export function untilSomeoneWaitsOnALock(database: Database, ended: () => boolean): Promise<true> {
  return waitFor(async () => {
    if (ended()) return true;
    const { rows } = await database.db.execute(
      sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return rows.length > 0 ? true : undefined;
  });
}
