// Settings of a PostgreSQL server that Vigil relies on and cannot change itself: said once at start,
// where an operator reads it, rather than found later as searches that take a minute.
import type { Logger } from "pino";
import { type Database, sql } from "./database.ts";

/** Warns when the server's autovacuum is off (the embedded database runs its own maintenance). */
export async function checkServerSettings(database: Database, log: Logger): Promise<void> {
  if (database.engine !== "postgres") return;
  const { rows } = await database.db.execute(sql`select current_setting('autovacuum') as autovacuum`);
  if (rows[0]?.autovacuum !== "off") return;
  log.warn(
    { autovacuum: "off" },
    "autovacuum is off on the PostgreSQL server: without it the planner never learns how large the alerts table has grown, and alert searches slow from milliseconds to seconds or minutes; turn it on, or run VACUUM ANALYZE regularly",
  );
}
