// One handle over either engine: PGlite (embedded, files under DATA_DIR) or PostgreSQL (DATABASE_URL).
// Both speak the same dialect, so the rest of Vigil never asks which one it has.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { type SQL, sql } from "drizzle-orm";
import { drizzle as drizzleNodePostgres } from "drizzle-orm/node-postgres";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import { fromPglite, type Db as JobStore } from "pg-boss";
import { lockDataDir } from "./data-dir-lock.ts";

/** Both drivers answer `execute` with an object holding `rows`; this is all Vigil relies on. */
export interface RowsResultHKT extends PgQueryResultHKT {
  type: { rows: Record<string, unknown>[] };
}
export type Db = PgDatabase<RowsResultHKT>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Anything that runs queries: the database itself or an open transaction. */
export type Executor = Db | Tx;

export interface Database {
  engine: "pglite" | "postgres";
  db: Db;
  /** What pg-boss runs its own statements on, outside any transaction of ours. */
  jobStore: JobStore;
  /** pg-boss connection settings for PostgreSQL (it keeps its own pool there); null on PGlite. */
  jobConnectionString: string | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type DatabaseTarget = { url: string } | { dataDir: string } | { memory: true };

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if ("url" in target) return openPostgres(target.url);
  let dataPath: string | undefined;
  let unlock = () => {};
  if ("dataDir" in target) {
    dataPath = join(target.dataDir, "pglite");
    mkdirSync(dataPath, { recursive: true });
    unlock = lockDataDir(target.dataDir);
  }
  // pg_trgm: the trigram indexes of alert search (migration 0000_extensions).
  const client = await PGlite.create(dataPath, { extensions: { pg_trgm } }).catch((err) => {
    unlock();
    throw err;
  });
  const db = drizzlePglite({ client }) as unknown as Db;
  return {
    engine: "pglite",
    db,
    jobStore: fromPglite(client),
    jobConnectionString: null,
    ping: async () => {
      await client.query("select 1");
    },
    close: async () => {
      if (!client.closed) await client.close();
      unlock();
    },
  };
}

async function openPostgres(url: string): Promise<Database> {
  // Sized for the ingest path: a delivery holds its connection for a few round trips.
  const pool = new pg.Pool({ connectionString: url, max: 20, application_name: "vigil" });
  // An idle client that loses its server emits here; without a listener it would crash the process.
  pool.on("error", () => {});
  const db = drizzleNodePostgres({ client: pool }) as unknown as Db;
  await pool.query("select 1");
  return {
    engine: "postgres",
    db,
    jobStore: {
      executeSql: (text: string, values?: unknown[]) => pool.query(text, values),
    },
    jobConnectionString: url,
    ping: async () => {
      await pool.query("select 1");
    },
    close: async () => {
      if (!pool.ended) await pool.end();
    },
  };
}

interface Preparing {
  session: {
    prepareQuery(
      query: unknown,
      fields: undefined,
      name: string,
      arrayMode: boolean,
    ): { execute(): Promise<{ rows: Record<string, unknown>[] }> };
  };
  dialect: { sqlToQuery(query: SQL): unknown };
}

/**
 * execute() under a statement name, for the hot paths: PostgreSQL parses and plans a named
 * statement once per connection instead of for every call (planning a statement on `alerts`, with
 * its many indexes, costs several times its execution). One name, one SQL text: a query whose text
 * varies must put what varies into its name. PGlite ignores the name.
 */
export function executeNamed(
  executor: Executor,
  name: string,
  query: SQL,
): Promise<{ rows: Record<string, unknown>[] }> {
  // Drizzle's raw execute() has no name option; its session's prepareQuery does.
  const { session, dialect } = executor as unknown as Preparing;
  return session.prepareQuery(dialect.sqlToQuery(query), undefined, name, false).execute();
}

/** Runs fn in a transaction, or inside the caller's transaction when it already has one. */
export async function withTransaction<T>(executor: Executor, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (isTransaction(executor)) return fn(executor);
  return (executor as Db).transaction((tx) => fn(tx as Tx));
}

function isTransaction(executor: Executor): executor is Tx {
  return "rollback" in executor;
}

export { sql };
