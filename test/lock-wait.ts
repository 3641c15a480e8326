// Tests of two transactions at once on PostgreSQL: one is held open, the other is sent, and the test
// goes on once the second waits on a row lock, or has ended without waiting. Read from
// pg_stat_activity of the test's own database (other test files may share the server).
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import type { Database, Tx } from "../src/core/db/database.ts";
import { waitFor } from "./harness.ts";

/** Waits until a backend of this database waits on a lock, or `ended()` (the request did not wait). */
function untilSomeoneWaitsOnALock(database: Database, ended: () => boolean): Promise<true> {
  return waitFor(async () => {
    if (ended()) return true;
    const { rows } = await database.db.execute(
      sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return rows.length > 0 ? true : undefined;
  });
}

/**
 * Holds `write` (another request's write) open in a transaction, sends `request`, checks that it
 * waits on a lock, and commits; answers the request's answer once it ends.
 */
export async function sendWhileHeld<T>(
  database: Database,
  write: (tx: Tx) => PromiseLike<unknown>,
  request: () => Promise<T>,
): Promise<T> {
  let sent: Promise<T> | undefined;
  let settled = false;
  await database.transaction(async (tx) => {
    await write(tx);
    sent = request();
    void sent.then(() => {
      settled = true;
    });
    await untilSomeoneWaitsOnALock(database, () => settled);
    expect(settled, "the request ended without waiting for the held write").toBe(false);
  });
  if (!sent) throw new Error("the request was not sent");
  return sent;
}
