// What PostgreSQL's background processes do, for the embedded database, which has none. PGlite runs
// PostgreSQL as one backend inside this process: no autovacuum and no checkpointer. Left alone, the
// WAL under DATA_DIR grows until Vigil stops (a start after a kill replays all of it), dead rows of
// updated alerts and finished jobs are never reclaimed, the planner never gets statistics, and the
// transaction ids of old rows are never frozen. A pass every minute does that work, in the same
// thread as everything else: a VACUUM of a large table holds ingest back while it runs, as a
// checkpoint does, so each runs only when PostgreSQL's own thresholds say it is due.
import type { Logger } from "pino";
import { type Repeating, repeat } from "../repeat.ts";
import { type Executor, executeNow, plannerStatisticsGathered, sql } from "./database.ts";
import { databaseMessageOf } from "./pg-errors.ts";

/** How often a pass looks for tables to vacuum or analyze: PostgreSQL's autovacuum_naptime. */
export const MAINTENANCE_INTERVAL_MS = 60_000;
/**
 * The first pass, this long after the start: a new database's tables get planner statistics while
 * its first deliveries arrive, and ingest's statements are planned once from then on (until then
 * each is planned at every run: database.ts, executePlannedOnce). A new embedded Vigil took 502 µs
 * a group for ingest's read of stored alerts without them and 78 µs with them, under a flood of
 * one-alert deliveries (bench/README.md, "The first maintenance pass ten seconds after the start").
 */
export const FIRST_MAINTENANCE_MS = 10_000;
/**
 * How often the WAL written since the last checkpoint is looked at between passes: under a flood of
 * 50-alert deliveries an embedded Vigil wrote 300 to 430 MB of WAL a minute.
 */
export const CHECKPOINT_CHECK_INTERVAL_MS = 10_000;
/** A checkpoint at least this often while anything is written: PostgreSQL's checkpoint_timeout. */
export const CHECKPOINT_INTERVAL_SECONDS = 300;
/**
 * A checkpoint as soon as this much WAL was written since the last one. PostgreSQL's max_wal_size
 * is 1 GB; a smaller bound keeps DATA_DIR small and a restart after a kill quick (the WAL written
 * since the last checkpoint is replayed at start).
 */
export const CHECKPOINT_WAL_BYTES = 64 * 1024 * 1024;

export interface MaintenanceOptions {
  checkpointIntervalSeconds?: number;
  checkpointWalBytes?: number;
}

export interface TableMaintenance {
  /** Schema-qualified and quoted, as the statement names it. */
  table: string;
  action: "vacuum" | "analyze";
  /** Why it was due: dead rows, rows inserted since the last vacuum, the age of its oldest unfrozen row, or changes since the last analyze. */
  reason: "dead rows" | "inserts" | "freeze" | "changes";
  durationMs: number;
  /** Why the statement failed; the pass went on with the next table. */
  error?: string;
}

export interface MaintenanceReport {
  tables: TableMaintenance[];
  checkpoint: { walBytes: number; durationMs: number } | null;
}

// PostgreSQL's own autovacuum formulas, with its own settings (postgresql.conf, "AUTOVACUUM"):
// a table is vacuumed past threshold + scale factor x its rows of dead rows or of inserts since the
// last vacuum (the insert rule sets the visibility map that the alert counts' index-only scans
// read), or when its oldest unfrozen transaction id is older than autovacuum_freeze_max_age, and
// analyzed past threshold + scale factor x its rows of changes. Toast tables are vacuumed with their
// table; a table whose reloptions switch autovacuum off is left alone.
const DUE_TABLES = sql`
  with setting as (
    select
      current_setting('autovacuum_vacuum_threshold')::float8 as vacuum_base,
      current_setting('autovacuum_vacuum_scale_factor')::float8 as vacuum_scale,
      current_setting('autovacuum_vacuum_max_threshold')::float8 as vacuum_max,
      current_setting('autovacuum_vacuum_insert_threshold')::float8 as insert_base,
      current_setting('autovacuum_vacuum_insert_scale_factor')::float8 as insert_scale,
      current_setting('autovacuum_analyze_threshold')::float8 as analyze_base,
      current_setting('autovacuum_analyze_scale_factor')::float8 as analyze_scale,
      current_setting('autovacuum_freeze_max_age')::float8 as freeze_max_age
  ), due as (
    select
      format('%I.%I', t.schemaname, t.relname) as "table",
      t.n_dead_tup as dead,
      case
        when age(c.relfrozenxid) > freeze_max_age then 'freeze'
        when t.n_dead_tup > least(vacuum_base + vacuum_scale * greatest(c.reltuples, 0),
          case when vacuum_max < 0 then 'infinity'::float8 else vacuum_max end) then 'dead rows'
        when insert_base >= 0
          and t.n_ins_since_vacuum > insert_base + insert_scale * greatest(c.reltuples, 0) then 'inserts'
        when t.n_mod_since_analyze > analyze_base + analyze_scale * greatest(c.reltuples, 0) then 'changes'
      end as reason
    from pg_stat_all_tables t
    join pg_class c on c.oid = t.relid
    cross join setting
    where t.schemaname <> 'pg_toast' and c.relkind in ('r', 'm') and c.relpersistence <> 't'
      and not exists (select from unnest(c.reloptions) o where o ~* '^autovacuum_enabled=(f|false|off|n|no|0)$')
  )
  select "table", reason from due where reason is not null
  order by reason = 'freeze' desc, dead desc, "table"`;

interface DueTable {
  table: string;
  reason: TableMaintenance["reason"];
}

/**
 * One maintenance pass: a checkpoint if one is due, then a VACUUM (ANALYZE) or an ANALYZE of each
 * table that PostgreSQL's autovacuum would have picked, one statement per table, so that other work
 * runs between them.
 */
export async function maintainEmbeddedDatabase(
  db: Executor,
  options: MaintenanceOptions = {},
): Promise<MaintenanceReport> {
  const checkpoint = await checkpointIfDue(db, options);
  // Statistics reach the tables' counters at most once a second, when the backend is idle between
  // statements; the flush is forced so that the counts read next include the latest writes.
  await executeNow(db, sql`select pg_stat_force_next_flush()`);
  const { rows } = await executeNow(db, DUE_TABLES);
  const tables: TableMaintenance[] = [];
  for (const { table, reason } of rows as unknown as DueTable[]) {
    const action = reason === "changes" ? "analyze" : "vacuum";
    const started = performance.now();
    const done: TableMaintenance = { table, action, reason, durationMs: 0 };
    try {
      // The vacuum and the analyze as two statements, so requests run between them: together they
      // held the thread for 2 to 3 s at a time for the alerts of a flood.
      if (action === "vacuum") await executeNow(db, sql.raw(`vacuum ${table}`));
      await executeNow(db, sql.raw(`analyze ${table}`));
    } catch (err) {
      // One table's failure (a lock it could not take, a full disk) leaves the others their turn.
      done.error = databaseMessageOf(err);
    }
    done.durationMs = Math.round(performance.now() - started);
    tables.push(done);
  }
  if (tables.some((table) => !table.error)) plannerStatisticsGathered(db);
  return { tables, checkpoint };
}

async function checkpointIfDue(
  db: Executor,
  options: MaintenanceOptions,
): Promise<MaintenanceReport["checkpoint"]> {
  // The WAL written since the last checkpoint began (its redo point) is what a start after a kill
  // replays. An idle database writes none: a checkpoint record of its own then follows the redo
  // point, and nothing more.
  const { rows } = await executeNow(
    db,
    sql`select (pg_current_wal_insert_lsn() - redo_lsn)::float8 as wal_bytes,
      extract(epoch from now() - checkpoint_time)::float8 as seconds
    from pg_control_checkpoint()`,
  );
  const { wal_bytes: walBytes, seconds } = rows[0] as { wal_bytes: number; seconds: number };
  const walBound = options.checkpointWalBytes ?? CHECKPOINT_WAL_BYTES;
  const interval = options.checkpointIntervalSeconds ?? CHECKPOINT_INTERVAL_SECONDS;
  const written = walBytes > IDLE_WAL_BYTES;
  if (!(walBytes >= walBound || (written && seconds >= interval))) return null;
  const started = performance.now();
  await executeNow(db, sql`checkpoint`);
  return { walBytes, durationMs: Math.round(performance.now() - started) };
}

/** At most what a checkpoint writes after its redo point when nothing else is written. */
const IDLE_WAL_BYTES = 1024;

/**
 * Runs maintainEmbeddedDatabase every `intervalMs`, the first time `firstPassMs` after the start,
 * and between passes checks every `checkpointCheckMs` whether a checkpoint is due.
 */
export function startEmbeddedMaintenance(
  db: Executor,
  options: MaintenanceOptions & {
    log: Logger;
    intervalMs?: number;
    firstPassMs?: number;
    checkpointCheckMs?: number;
  },
): Repeating {
  const {
    log,
    intervalMs = MAINTENANCE_INTERVAL_MS,
    checkpointCheckMs = CHECKPOINT_CHECK_INTERVAL_MS,
  } = options;
  const firstPassMs = options.firstPassMs ?? Math.min(FIRST_MAINTENANCE_MS, intervalMs);
  const tickMs = Math.min(intervalMs, checkpointCheckMs);
  // A timer may fire a little before its time by this clock: half a tick's tolerance keeps a due
  // pass from slipping to the next tick.
  const tolerance = tickMs / 2;
  let nextPass = performance.now() + firstPassMs;
  const tick = async () => {
    const started = performance.now();
    const fullPass = started >= nextPass - tolerance;
    if (fullPass) nextPass = started + intervalMs;
    try {
      const report = fullPass
        ? await maintainEmbeddedDatabase(db, options)
        : { tables: [], checkpoint: await checkpointIfDue(db, options) };
      if (report.tables.length === 0 && !report.checkpoint) return;
      const durationMs = Math.round(performance.now() - started);
      // A long pass held every request back for its duration: worth a line at the default level;
      // a table that could not be maintained, more so.
      const failed = report.tables.some((table) => table.error);
      const level = failed ? "warn" : durationMs >= SLOW_PASS_MS ? "info" : "debug";
      log[level]({ ...report, durationMs }, "embedded database maintenance");
    } catch (err) {
      log.error({ err }, "embedded database maintenance failed");
    }
  };
  return repeat(tick, tickMs, Math.min(tickMs, firstPassMs));
}

const SLOW_PASS_MS = 1000;
