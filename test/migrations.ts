// Migration tests: a database brought to just before one migration, given rows in the shape of
// that time, then the migration applied as `migrate` applies it (statement by statement).
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import type { Db } from "../src/core/db/database.ts";
import { MIGRATIONS_DIR, migrationNames } from "../src/core/package-files.ts";
import { createTestDatabase, type Engine } from "./harness.ts";

/** Applies one migration file of src/core/migrations. */
export async function applyMigration(db: Db, name: string): Promise<void> {
  const text = readFileSync(new URL(name, MIGRATIONS_DIR), "utf8");
  for (const statement of text.split("--> statement-breakpoint")) {
    if (statement.trim()) await db.execute(sql.raw(statement));
  }
}

/** Applies every migration that comes before `name`, to an empty database. */
export async function migrateUpTo(db: Db, name: string): Promise<void> {
  for (const earlier of migrationNames().filter((file) => file < name)) await applyMigration(db, earlier);
}

/**
 * Runs `test` on a new database of `engine` migrated to just before `name` (its rows written in that
 * time's shape); `apply` then applies `name`. The database is dropped afterwards, whatever happened.
 */
export async function beforeMigration(
  engine: Engine,
  name: string,
  test: (db: Db, apply: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const { database, drop } = await createTestDatabase(engine, { empty: true });
  try {
    await migrateUpTo(database.db, name);
    await test(database.db, () => applyMigration(database.db, name));
  } finally {
    await drop();
  }
}
