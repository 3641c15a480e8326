// One handle over either engine: PGlite (embedded, files under DATA_DIR) or PostgreSQL (DATABASE_URL).
// Both speak the same dialect, so the rest of Vigil never asks which one it has.
import { join } from "node:path";
import type { Writable } from "node:stream";
import { isDeepStrictEqual } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { Column, entityKind, Name, Param, Placeholder, SQL, StringChunk, sql, Table } from "drizzle-orm";
import { drizzle as drizzleNodePostgres, NodePgSession, NodePgTransaction } from "drizzle-orm/node-postgres";
import { type PgDatabase, PgDialect, type PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import type pg from "pg";
import { fromPglite, type Db as JobStore } from "pg-boss";
import type { Logger } from "pino";
import { makeDirectory } from "../make-directory.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { PatientPool } from "./patient-pool.ts";
import {
  executeNamedOnPglite,
  pgliteOf,
  queryInOneCall,
  trackListeners,
  trackTransactions,
  yieldBetweenStatements,
} from "./pglite-statements.ts";
import { seedFromTemplate } from "./pglite-template.ts";
import { keepTypesAsText, typedJobStore } from "./pglite-text-types.ts";

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
  /**
   * For reads a person waits on (the console's lists, who is calling): on PostgreSQL a small pool
   * of its own, so they never queue for a connection behind ingest transactions. The same as `db`
   * on PGlite.
   */
  readDb: Db;
  /**
   * Runs fn in a transaction. On PostgreSQL, BEGIN goes out with fn's first statement, and the writes
   * fn hands to `deferWrite` go out at once, COMMIT right behind them: a read-then-write transaction
   * costs two round trips however many statements it writes with.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Transactions that can run at once: the pool's connections on PostgreSQL, one on PGlite. */
  connections: number;
  /**
   * New connections the PostgreSQL server refused for now (at its connection limit, starting up)
   * and that were asked for again, since the database opened; always 0 on PGlite.
   */
  refusedConnections(): number;
  /** What pg-boss runs its own statements on, outside any transaction of ours. */
  jobStore: JobStore;
  /** pg-boss connection settings for PostgreSQL (it keeps its own pool there); null on PGlite. */
  jobConnectionString: string | null;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `poolSize`: the main pool's connections on PostgreSQL (DATABASE_POOL_SIZE, DEFAULT_POOL_SIZE).
 * `connectWaitMs`: how long a connection the server refuses is asked for again (CONNECT_WAIT_MS).
 * `cacheMb`: the embedded database's page cache (PostgreSQL's shared_buffers), PGLITE_CACHE_MB.
 * `image`: an in-memory database starts as this copy of one (PGlite's `dumpDataDir`), not empty.
 */
export type DatabaseTarget =
  | { url: string; poolSize?: number; connectWaitMs?: number }
  | { dataDir: string; cacheMb?: number }
  | { memory: true; image?: Blob };

/** The page cache of an embedded database unless its target says otherwise. */
export const PGLITE_CACHE_MB = 16;

/**
 * The size at which a search index's list of pending entries is merged into the index, in kB
 * (PostgreSQL's default is 4 MB). The merge runs inside whichever write fills the list, and a 4 MB
 * list is a quarter of the default cache: under a flood of one-alert deliveries, 256 kB took about
 * 8% less CPU per alert. 50-alert bodies measured the same either way.
 */
const GIN_PENDING_LIST_KB = 256;

/**
 * PGlite's own start parameters, plus the cache size. PGlite runs the database inside this process's
 * WebAssembly memory, which grows and never shrinks: PostgreSQL's default 128 MB of shared_buffers
 * (and the WAL buffers sized from it) was most of an idle Vigil's memory, where the data a Vigil
 * reads back is a small part of that. A page not cached is read from the operating system's file
 * cache. Durability is unchanged: each COMMIT still writes its WAL to the files before it returns.
 */
function pgliteStartParams(cacheMb: number): string[] {
  return [
    ...PGlite.defaultStartParams,
    "-c",
    `shared_buffers=${cacheMb}MB`,
    "-c",
    `gin_pending_list_limit=${GIN_PENDING_LIST_KB}kB`,
  ];
}

/**
 * `log` hears how an embedded database under a DATA_DIR comes to be (found, copied or created), and
 * each connection a PostgreSQL server ends.
 */
export async function openDatabase(target: DatabaseTarget, log?: Logger): Promise<Database> {
  if ("url" in target) return openPostgres(target, log);
  let dataPath: string | undefined;
  let unlock = () => {};
  if ("dataDir" in target) {
    dataPath = join(target.dataDir, "pglite");
    makeDirectory(dataPath, "DATA_DIR");
    unlock = lockDataDir(target.dataDir);
    try {
      const { seeded, reason } = seedFromTemplate(dataPath);
      if (seeded) log?.info({ dataPath }, "new database: copied from the migrated template");
      else if (reason !== "existing") log?.info({ dataPath, reason }, "new database: creating it");
    } catch (err) {
      unlock();
      throw err;
    }
  }
  // pg_trgm: the trigram indexes of alert search (migration 0000_extensions).
  const cacheMb = ("cacheMb" in target && target.cacheMb) || PGLITE_CACHE_MB;
  const client = await PGlite.create(dataPath, {
    extensions: { pg_trgm },
    loadDataDir: "image" in target ? target.image : undefined,
    startParams: pgliteStartParams(cacheMb),
  }).catch((err) => {
    unlock();
    throw err;
  });
  // Each statement in one call into the database, and drizzle's parsers left out before that, as
  // the wrappers are applied in this order (the last one runs first).
  queryInOneCall(client);
  const parsedTypes = keepTypesAsText(client);
  trackTransactions(client);
  trackListeners(client);
  yieldBetweenStatements(client);
  const db = drizzlePglite({ client }) as unknown as Db;
  return {
    engine: "pglite",
    db,
    readDb: db,
    transaction: (fn) => db.transaction((tx) => fn(tx as Tx)),
    connections: 1,
    refusedConnections: () => 0,
    jobStore: fromPglite(typedJobStore(client, parsedTypes)),
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

/** Connections of the read pool: a few, since its queries are short and one request runs two or three. */
const READ_POOL_SIZE = 4;
/** The main pool's connections unless DATABASE_POOL_SIZE says otherwise. */
export const DEFAULT_POOL_SIZE = 20;

async function openPostgres(
  {
    url,
    poolSize = DEFAULT_POOL_SIZE,
    connectWaitMs,
  }: {
    url: string;
    poolSize?: number;
    connectWaitMs?: number;
  },
  logger?: Logger,
): Promise<Database> {
  // Sized for the ingest path: a delivery holds its connection for a few round trips. Pipeline mode
  // sends a query without waiting for the one before it to be answered (see pipelinedTransaction);
  // queries that are awaited one by one behave exactly as without it.
  const pool = new PatientPool({
    connectionString: url,
    max: poolSize,
    connectWaitMs,
    application_name: "vigil",
    pipeline: true,
    logger,
  });
  const db = drizzleNodePostgres({ client: pool }) as unknown as Db;
  await pool.query("select 1");
  const readPool = new PatientPool({
    connectionString: url,
    max: READ_POOL_SIZE,
    connectWaitMs,
    application_name: "vigil-read",
    logger,
  });
  return {
    engine: "postgres",
    db,
    readDb: drizzleNodePostgres({ client: readPool }) as unknown as Db,
    transaction: (fn) => pipelinedTransaction(pool, fn),
    connections: poolSize,
    refusedConnections: () => pool.refused + readPool.refused,
    jobStore: {
      executeSql: (text: string, values?: unknown[]) => pool.query(text, values),
    },
    jobConnectionString: url,
    ping: async () => {
      await pool.query("select 1");
    },
    close: async () => {
      if (!pool.ended) await pool.end();
      if (!readPool.ended) await readPool.end();
    },
  };
}

// ---- pipelined transactions (PostgreSQL) ----

interface Pipeline {
  /** The writes sent and not yet awaited. */
  writes: Promise<void>[];
  /** Holds back what is sent next, until COMMIT (or the end of this event-loop turn). */
  holdWrites(): void;
}

const pipelines = new WeakMap<Executor, Pipeline>();
const dialect = new PgDialect();

/**
 * Sends a write whose answer the caller does not need. In a pipelined transaction
 * (`Database.transaction` on PostgreSQL) it is on its way when this returns, and is awaited at
 * COMMIT. Anywhere else it is awaited here. `send` must start the statement at once, or when `then`
 * is called on what it returns (drizzle queries start on `then`), never later.
 */
export function deferWrite(executor: Executor, send: () => PromiseLike<unknown>): Promise<void> {
  const pipeline = pipelines.get(executor);
  pipeline?.holdWrites();
  const write = send();
  const sent = new Promise<void>((resolve, reject) => write.then(() => resolve(), reject));
  if (!pipeline) return sent;
  // Read at COMMIT; until then a failure must not count as unhandled.
  sent.catch(() => {});
  pipeline.writes.push(sent);
  return Promise.resolve();
}

/** True inside a pipelined transaction, where `deferWrite` returns before the write is answered. */
export function defersWrites(executor: Executor): boolean {
  return pipelines.has(executor);
}

/**
 * Holds back the messages written to the connection until the returned function runs, so that the
 * statements sent meanwhile leave in one write and wake the server once. Never past the current
 * event-loop turn: a statement someone awaits in between still goes out.
 */
function holdConnection(client: pg.PoolClient): () => void {
  const stream = (client as unknown as { connection: { stream: Writable } }).connection.stream;
  stream.cork();
  let held = true;
  const timer = setImmediate(release);
  function release(): void {
    if (!held) return;
    held = false;
    clearImmediate(timer);
    stream.uncork();
  }
  return release;
}

async function pipelinedTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const tx = new NodePgTransaction(
    dialect,
    new NodePgSession(client, dialect, undefined, {}),
    undefined,
  ) as unknown as Tx;
  let releaseWrites: (() => void) | null = null;
  const pipeline: Pipeline = {
    writes: [],
    holdWrites: () => {
      releaseWrites ??= holdConnection(client);
    },
  };
  pipelines.set(tx, pipeline);
  // BEGIN leaves with what fn sends before its first await (a first read sent with executeNow), or
  // at the latest with what it sends in this event-loop turn.
  const releaseBegin = holdConnection(client);
  const begin = client.query("begin");
  // Its outcome is read after fn's (allSettled below): a connection lost meanwhile must not count
  // as an unhandled rejection, which ends the process.
  begin.catch(() => {});
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    const running = fn(tx);
    releaseBegin();
    outcome = { ok: true, value: await running };
  } catch (error) {
    releaseBegin();
    outcome = { ok: false, error };
  }
  pipelines.delete(tx);
  const end = client.query(outcome.ok ? "commit" : "rollback");
  end.catch(() => {});
  (releaseWrites as (() => void) | null)?.();
  const [opened, ...written] = await Promise.allSettled([begin, ...pipeline.writes]);
  const ended = await Promise.allSettled([end]).then(([result]) => result);
  client.release(ended?.status === "rejected" ? (ended.reason as Error) : undefined);
  // The first failure in the order the statements were sent is the cause; an error fn saw later
  // (25P02, transaction aborted) or a COMMIT answered with ROLLBACK only follows from it.
  for (const result of [opened, ...written]) {
    if (result?.status === "rejected") throw result.reason;
  }
  if (!outcome.ok) throw outcome.error;
  if (ended?.status === "rejected") throw ended.reason;
  if (ended?.value.command !== "COMMIT") throw new Error(`transaction ended with ${ended?.value.command}`);
  return outcome.value;
}

interface Preparing {
  session: {
    prepareQuery(
      query: unknown,
      fields: undefined,
      name: string | undefined,
      arrayMode: boolean,
    ): { execute(): Promise<{ rows: Record<string, unknown>[] }> };
  };
  dialect: { sqlToQuery(query: SQL): unknown };
}

/**
 * execute() under a statement name, for the hot paths: PostgreSQL parses and plans a named
 * statement once per connection instead of for every call (planning a statement on `alerts`, with
 * its many indexes, costs several times its execution), and PGlite too (pglite-statements.ts). One
 * name, one SQL text: a query whose text varies must put what varies into its name. Sent at once,
 * like executeNow.
 */
export function executeNamed(
  executor: Executor,
  name: string,
  query: SQL,
): Promise<{ rows: Record<string, unknown>[] }> {
  try {
    return prepared(executor, query, name).execute();
  } catch (err) {
    // A name that came with another text (queryOf) fails as a statement does: by its promise.
    return Promise.reject(err);
  }
}

/**
 * execute() that sends the statement now: drizzle's execute() sends it only when awaited, a promise
 * job later, so in a pipelined transaction a first read would miss BEGIN's round trip.
 */
export function executeNow(executor: Executor, query: SQL): Promise<{ rows: Record<string, unknown>[] }> {
  return prepared(executor, query, undefined).execute();
}

function prepared(executor: Executor, query: SQL, name: string | undefined) {
  // Drizzle's raw execute() has no name option; its session's prepareQuery does. Its PGlite
  // session ignores the name, so there a named statement takes a path of its own.
  const { session, dialect } = executor as unknown as Preparing;
  const embedded = name ? pgliteOf((session as unknown as { client: unknown }).client) : null;
  if (name && embedded) {
    const { sql: text, params } = queryOf(dialect, query, name);
    return {
      execute: () => executeNamedOnPglite(embedded.pglite, embedded.inTransaction, { name, text, params }),
    };
  }
  return session.prepareQuery(queryOf(dialect, query, name), undefined, name, false);
}

/**
 * Per statement name, its SQL text. A named statement has one text (executeNamed), so after its
 * first run only its parameters are collected (paramsOf): building the text again each time took
 * 7.8% of the API process's busy time on one-alert deliveries sent one at a time and 2.9% under
 * load, against 1.5% and 0.6% for collecting the parameters (CPU profiles of the ingest bench).
 */
const namedTexts = new Map<string, string>();

/**
 * In the test suite every run of a named statement is also built by drizzle and compared, so a
 * name that comes with another text, or parameters paramsOf collects otherwise, fails the test.
 */
const CHECK_NAMED_TEXTS = process.env.VITEST !== undefined;

function queryOf(dialect: Preparing["dialect"], query: SQL, name: string | undefined) {
  const text = name === undefined ? undefined : namedTexts.get(name);
  const params = text === undefined ? null : paramsOf(query);
  if (text !== undefined && params !== null && !CHECK_NAMED_TEXTS) return { sql: text, params };
  const built = dialect.sqlToQuery(query) as { sql: string; params: unknown[] };
  if (name === undefined) return built;
  if (text === undefined) {
    namedTexts.set(name, built.sql);
    return built;
  }
  if (built.sql !== text) throw new Error(`statement ${name} was prepared with another text`);
  if (params === null) return built;
  if (!isDeepStrictEqual(params, built.params)) {
    throw new Error(`statement ${name}: paramsOf collected other parameters than drizzle binds`);
  }
  return { sql: text, params };
}

/**
 * The parameters drizzle binds for `query`, in its order, without building the text: the values of
 * its params (through their encoders) and of plain values, nested statements and lists walked in
 * place, and tables, columns and identifiers passed over. Null when a chunk is anything else (a
 * placeholder, an inlined statement, a subquery): drizzle then builds the query as usual.
 */
export function paramsOf(query: SQL): unknown[] | null {
  const params: unknown[] = [];
  const walk = (chunks: readonly unknown[]): boolean => {
    for (const chunk of chunks) {
      // Text alone: a table's, a column's or an identifier's name binds nothing.
      if (chunk === undefined || chunk instanceof StringChunk) continue;
      if (chunk instanceof Name || chunk instanceof Column || chunk instanceof Table) continue;
      if (chunk instanceof SQL) {
        if ((chunk as unknown as { shouldInlineParams: boolean }).shouldInlineParams) return false;
        if (!walk(chunk.queryChunks)) return false;
      } else if (chunk instanceof Param) {
        if (chunk.value instanceof Placeholder) return false;
        const value = chunk.value === null ? null : chunk.encoder.mapToDriverValue(chunk.value);
        if (value instanceof SQL) return false;
        params.push(value);
      } else if (Array.isArray(chunk)) {
        if (!walk(chunk)) return false;
      } else if (isPlainValue(chunk)) {
        params.push(chunk);
      } else {
        return false;
      }
    }
    return true;
  };
  return walk([query]) ? params : null;
}

/** A value drizzle binds as it is: not one of its entities, nor anything it asks for SQL. */
function isPlainValue(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value === "function") return false;
  if (typeof value !== "object") return true;
  const made = (value as { constructor?: unknown }).constructor;
  if (typeof made === "function" && entityKind in made) return false;
  return typeof (value as { getSQL?: unknown }).getSQL !== "function";
}

/** True when `executor` runs on the embedded database (PGlite), in a transaction or not. */
export function isEmbedded(executor: Executor): boolean {
  return pgliteOf(clientOf(executor)) !== null;
}

/** The driver client under a drizzle executor: a PGlite (or one of its transactions), or a pool. */
const clientOf = (executor: Executor): object =>
  (executor as unknown as { session: { client: object } }).session.client;

/**
 * Whether the planner has statistics of `table` (it was analyzed or vacuumed at least once): on the
 * embedded database, only its maintenance pass gathers them (embedded-maintenance.ts). A named
 * statement's generic plan made without them is kept after the table has grown, however wrong.
 * Asked of the database once; a yes is kept (statistics are never dropped), a no until the
 * maintenance pass reports that it gathered statistics (`plannerStatisticsGathered`). Asking again
 * for every ingest group cost a catalog read each through a new database's first minute.
 */
export async function hasPlannerStatistics(executor: Executor, table: string): Promise<boolean> {
  const database = databaseOf(executor);
  let known = plannerStatistics.get(database);
  const answer = known?.get(table);
  if (answer !== undefined) return answer;
  const { rows } = await executeNow(
    executor,
    sql`select reltuples >= 0 as analyzed from pg_class where oid = to_regclass(${table})`,
  );
  const analyzed = rows[0]?.analyzed === true;
  if (!known) {
    known = new Map();
    plannerStatistics.set(database, known);
  }
  known.set(table, analyzed);
  return analyzed;
}

/**
 * executeNamed, planned once per connection; except on the embedded database while `table` has no
 * planner statistics (hasPlannerStatistics), where the statement runs unnamed and is planned each
 * time. For statements whose plan does not depend on their parameters' values, and whose planning
 * costs about as much as running them.
 */
export async function executePlannedOnce(
  executor: Executor,
  table: string,
  name: string,
  query: SQL,
): Promise<{ rows: Record<string, unknown>[] }> {
  const named = !isEmbedded(executor) || (await hasPlannerStatistics(executor, table));
  return named ? executeNamed(executor, name, query) : executeNow(executor, query);
}

/**
 * Keeps the rest of the transaction's named statements on the plan made when each was prepared
 * (executePlannedOnce): left to choose, PostgreSQL may plan them again on every run. Their plans
 * also read tables through an index wherever one serves: a plan is kept for the connection's life,
 * and one made while a table was small (a new database, before its first ANALYZE) read the whole
 * table, and went on doing so as the table grew under a flood (a classification round read 30,000
 * alerts to lock 54 by id, and the storm correlator every alert twice a round). Nor are they
 * compiled to machine code (JIT): a plan whose estimate passes PostgreSQL's threshold (the storm
 * neighbourhood's walk) spent 40 ms compiling on every run, for a read of 2 ms. Sent at once, so
 * in a pipelined transaction it leaves with BEGIN.
 */
export function useGenericPlans(tx: Tx): Promise<unknown> {
  return executeNamed(
    tx,
    "generic-plans",
    sql`select set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true),
      set_config('jit', 'off', true)`,
  );
}

/** Tells `hasPlannerStatistics` that tables were analyzed: a table that had none is asked about again. */
export function plannerStatisticsGathered(executor: Executor): void {
  const known = plannerStatistics.get(databaseOf(executor));
  for (const [table, analyzed] of known ?? []) if (!analyzed) known?.delete(table);
}

/** Per database, by table: whether it has planner statistics, as last asked. */
const plannerStatistics = new WeakMap<object, Map<string, boolean>>();

/** What identifies the database an executor runs on: its PGlite, or its connection pool. */
function databaseOf(executor: Executor): object {
  const client = clientOf(executor);
  return pgliteOf(client)?.pglite ?? client;
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
