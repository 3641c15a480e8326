// Applies the SQL files in src/core/migrations (written by drizzle-kit from the domain tables) in
// name order. The same files run on PGlite and PostgreSQL. All pending files apply in one
// transaction under an advisory lock, so instances starting together against one database
// neither race nor leave half a migration behind.
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { MIGRATIONS_DIR, migrationNames } from "../package-files.ts";
import type { Db } from "./database.ts";

// Any constant works: it only has to be the same for every Vigil instance.
const MIGRATION_LOCK_ID = 7_346_001;

/** Told of each migration before it runs: its name, its place among the pending ones, their count. */
export type MigrationProgress = (name: string, index: number, count: number) => void;

export async function migrate(db: Db, onApply: MigrationProgress = () => {}): Promise<string[]> {
  const applied: string[] = [];
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
    await tx.execute(sql`create table if not exists vigil_migrations (
      name text primary key,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set(
      (await tx.execute(sql`select name from vigil_migrations`)).rows.map((row) => row.name),
    );
    const pending = migrationNames().filter((name) => !done.has(name));
    for (const [index, name] of pending.entries()) {
      onApply(name, index + 1, pending.length);
      const text = readFileSync(new URL(name, MIGRATIONS_DIR), "utf8");
      for (const statement of text.split("--> statement-breakpoint")) {
        if (statement.trim()) await tx.execute(sql.raw(statement));
      }
      await tx.execute(sql`insert into vigil_migrations (name) values (${name})`);
      applied.push(name);
    }
  });
  return applied;
}

/** The migration files not yet applied: empty when the schema is current. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const exists = await db.execute(sql`select to_regclass('vigil_migrations') is not null as present`);
  if (!exists.rows[0]?.present) return migrationNames();
  const done = new Set(
    (await db.execute(sql`select name from vigil_migrations`)).rows.map((row) => row.name),
  );
  return migrationNames().filter((name) => !done.has(name));
}

/**
 * Migrations the database holds that this version does not know: a newer Vigil migrated it. This
 * version can still run on it (migrations only add), but what the newer one added it ignores.
 */
export async function unknownMigrations(db: Db): Promise<string[]> {
  const known = new Set(migrationNames());
  const { rows } = await db.execute(sql`select name from vigil_migrations order by name`);
  return rows.map((row) => String(row.name)).filter((name) => !known.has(name));
}
