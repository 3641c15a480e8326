// The embedded database's maintenance (embedded-maintenance.ts): PGlite has no autovacuum and no
// checkpointer, so this is what reclaims dead rows, gathers statistics and bounds the WAL. What
// must hold: a table is vacuumed or analyzed exactly when PostgreSQL's own thresholds say so, the
// vacuum really reclaims and the analyze really gives the planner its statistics, and a checkpoint
// moves the redo point (what a restart replays) up to the present only when one is due.
import { sql } from "drizzle-orm";
import pino, { type Logger } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase, waitFor } from "../../../test/harness.ts";
import { executeNow, hasPlannerStatistics } from "./database.ts";
import { maintainEmbeddedDatabase, startEmbeddedMaintenance } from "./embedded-maintenance.ts";

describe("embedded database maintenance (pglite)", () => {
  let test: TestDatabase;
  const db = () => test.database.db;
  beforeAll(async () => {
    test = await createTestDatabase("pglite");
  });
  afterAll(async () => {
    await test?.drop();
  });

  async function tableState(table: string) {
    const { rows } = await executeNow(
      db(),
      sql`select s.n_dead_tup::int as dead, s.last_vacuum is not null as vacuumed,
        s.last_analyze is not null as analyzed, c.reltuples::int as reltuples,
        (select count(*)::int from pg_stats where tablename = ${table}) as column_stats
      from pg_stat_user_tables s join pg_class c on c.oid = s.relid where s.relname = ${table}`,
    );
    return rows[0] as {
      dead: number;
      vacuumed: boolean;
      analyzed: boolean;
      reltuples: number;
      column_stats: number;
    };
  }

  /**
   * Runs the background maintenance with these options until `done` holds (failing after 60 s),
   * then stops it; the caller's expectations come after.
   */
  async function maintainUntil(
    options: Omit<Parameters<typeof startEmbeddedMaintenance>[1], "log"> & { log?: Logger },
    done: () => Promise<boolean>,
  ): Promise<void> {
    const maintenance = startEmbeddedMaintenance(db(), { log: pino({ level: "silent" }), ...options });
    try {
      await waitFor(async () => ((await done()) ? true : undefined), 60_000);
    } finally {
      await maintenance.stop();
    }
  }

  const redoPoint = async () =>
    (
      (await executeNow(db(), sql`select redo_lsn::text as lsn from pg_control_checkpoint()`)).rows[0] as {
        lsn: string;
      }
    ).lsn;

  it("vacuums a table past the dead-row threshold, analyzes one past the change threshold, and leaves a quiet one alone", async () => {
    for (const table of ["maint_churned", "maint_grown", "maint_quiet"]) {
      await executeNow(db(), sql.raw(`create table ${table} (id int primary key, note text)`));
    }
    // A first pass settles what the migrations and the template left due, so that the tables of
    // this test are judged on their own writes.
    await maintainEmbeddedDatabase(db());
    await executeNow(db(), sql`insert into maint_churned select g, 'a' from generate_series(1, 500) g`);
    await executeNow(db(), sql`insert into maint_grown select g, 'a' from generate_series(1, 300) g`);
    await executeNow(db(), sql`insert into maint_quiet select g, 'a' from generate_series(1, 10) g`);
    await maintainEmbeddedDatabase(db()); // all three are new: analyzed or vacuumed for their inserts
    const churnedBefore = await tableState("maint_churned");
    expect(churnedBefore.reltuples).toBe(500);

    // 400 dead rows against 50 + 0.2 x 500 = 150: due. 60 changes against 50 + 0.1 x 300 = 80 and
    // no dead row: not due. 5 changes of a table of 10 (51 needed): not due.
    await executeNow(db(), sql`update maint_churned set note = 'b' where id <= 400`);
    await executeNow(db(), sql`update maint_grown set note = 'b' where id <= 60`);
    await executeNow(db(), sql`update maint_quiet set note = 'b' where id <= 5`);
    const first = await maintainEmbeddedDatabase(db());
    const touched = (name: string) => first.tables.filter(({ table }) => table === `public.${name}`);
    expect(touched("maint_churned")).toEqual([
      {
        table: "public.maint_churned",
        action: "vacuum",
        reason: "dead rows",
        durationMs: expect.any(Number),
      },
    ]);
    expect(touched("maint_grown")).toEqual([]);
    expect(touched("maint_quiet")).toEqual([]);
    const churned = await tableState("maint_churned");
    expect(churned).toMatchObject({ dead: 0, vacuumed: true, analyzed: true, reltuples: 500 });

    // 60 + 40 changes of maint_grown (100 against 80): due for an analyze, not a vacuum (its 100
    // dead rows are under 50 + 0.2 x 300).
    await executeNow(db(), sql`delete from maint_grown where id > 260`);
    const second = await maintainEmbeddedDatabase(db());
    expect(second.tables.filter(({ table }) => table.startsWith("public.maint_"))).toEqual([
      { table: "public.maint_grown", action: "analyze", reason: "changes", durationMs: expect.any(Number) },
    ]);
    const grown = await tableState("maint_grown");
    expect(grown).toMatchObject({ vacuumed: false, analyzed: true, reltuples: 260 });
    expect(grown.column_stats).toBe(2);
    // Nothing written since: a pass finds nothing to do.
    const third = await maintainEmbeddedDatabase(db());
    expect(third.tables.filter(({ table }) => table.startsWith("public.maint_"))).toEqual([]);
  });

  it("vacuums an insert-only table past the insert threshold, so that its pages are marked all-visible", async () => {
    await executeNow(db(), sql`create table maint_appended (id int primary key, note text)`);
    await maintainEmbeddedDatabase(db());
    // 1,000 + 0.2 x 0 rows: the 1,200 inserted are past it.
    await executeNow(db(), sql`insert into maint_appended select g, 'a' from generate_series(1, 1200) g`);
    const report = await maintainEmbeddedDatabase(db());
    expect(report.tables.filter(({ table }) => table === "public.maint_appended")).toEqual([
      { table: "public.maint_appended", action: "vacuum", reason: "inserts", durationMs: expect.any(Number) },
    ]);
    const { rows } = await executeNow(
      db(),
      sql`select relpages, relallvisible from pg_class where relname = 'maint_appended'`,
    );
    const pages = rows[0] as { relpages: number; relallvisible: number };
    expect(pages.relpages).toBeGreaterThan(0);
    expect(pages.relallvisible).toBe(pages.relpages);
  });

  it("leaves a table alone whose reloptions switch autovacuum off", async () => {
    await executeNow(
      db(),
      sql`create table maint_off (id int primary key, note text) with (autovacuum_enabled = false)`,
    );
    await executeNow(db(), sql`insert into maint_off select g, 'a' from generate_series(1, 1200) g`);
    await executeNow(db(), sql`update maint_off set note = 'b'`);
    const report = await maintainEmbeddedDatabase(db());
    expect(report.tables.filter(({ table }) => table === "public.maint_off")).toEqual([]);
    expect(await tableState("maint_off")).toMatchObject({ dead: 1200, vacuumed: false });
  });

  it("checkpoints once the WAL since the last checkpoint passes its bound, and not before", async () => {
    const pass = (checkpointWalBytes: number, checkpointIntervalSeconds: number) =>
      maintainEmbeddedDatabase(db(), { checkpointWalBytes, checkpointIntervalSeconds });
    const never = 1024 * 1024 * 1024;
    await executeNow(db(), sql`checkpoint`);
    const settled = await redoPoint();
    await executeNow(db(), sql`create table maint_wal (id int, note text)`);
    await executeNow(
      db(),
      sql`insert into maint_wal select g, repeat('x', 100) from generate_series(1, 2000) g`,
    );
    // Under both bounds: no checkpoint, the redo point stays.
    expect((await pass(never, 3600)).checkpoint).toBeNull();
    expect(await redoPoint()).toBe(settled);
    // Past the size bound (2,000 rows of 100 bytes wrote more than 64 kB of WAL).
    expect((await pass(64 * 1024, 3600)).checkpoint?.walBytes).toBeGreaterThan(64 * 1024);
    expect(await redoPoint()).not.toBe(settled);
    // Nothing written since the last checkpoint: not even a zero interval makes another.
    await executeNow(db(), sql`checkpoint`);
    const idleFrom = await redoPoint();
    expect((await pass(never, 0)).checkpoint).toBeNull();
    expect(await redoPoint()).toBe(idleFrom);
    // A write, then the interval: due by time alone.
    await executeNow(
      db(),
      sql`insert into maint_wal select g, repeat('y', 100) from generate_series(1, 50) g`,
    );
    expect((await pass(never, 0)).checkpoint).not.toBeNull();
    expect(await redoPoint()).not.toBe(idleFrom);
  });

  it("goes on with the next table when one cannot be maintained, and says why", async () => {
    // An expression index whose function fails on demand: ANALYZE evaluates it on sampled rows.
    await executeNow(
      db(),
      sql.raw(`create function maint_boom(v int) returns int language plpgsql immutable as $$
        begin
          if current_setting('maint.boom', true) = 'on' then raise exception 'boom on %', v; end if;
          return v;
        end $$`),
    );
    await executeNow(db(), sql`create table maint_failing (id int primary key, note text)`);
    await executeNow(db(), sql`create index on maint_failing (maint_boom(id))`);
    await executeNow(db(), sql`create table maint_after (id int primary key, note text)`);
    await maintainEmbeddedDatabase(db());
    // Both past the dead-row threshold; the failing one has more dead rows, so it comes first.
    await executeNow(db(), sql`insert into maint_failing select g, 'a' from generate_series(1, 400) g`);
    await executeNow(db(), sql`insert into maint_after select g, 'a' from generate_series(1, 300) g`);
    await maintainEmbeddedDatabase(db());
    await executeNow(db(), sql`update maint_failing set note = 'b'`);
    await executeNow(db(), sql`update maint_after set note = 'b'`);
    await executeNow(db(), sql`set maint.boom = 'on'`);
    try {
      const report = await maintainEmbeddedDatabase(db());
      const mine = report.tables.filter(
        ({ table }) => table.startsWith("public.maint_failing") || table.startsWith("public.maint_after"),
      );
      expect(mine.map(({ table, error }) => ({ table, error: error?.replace(/ on \d+$/, "") }))).toEqual([
        { table: "public.maint_failing", error: "boom" },
        { table: "public.maint_after", error: undefined },
      ]);
    } finally {
      await executeNow(db(), sql`reset maint.boom`);
    }
    expect(await tableState("maint_after")).toMatchObject({ dead: 0, vacuumed: true });
  });

  it("between passes, checks in the background only whether a checkpoint is due", async () => {
    await executeNow(db(), sql`create table maint_between (id int primary key, note text)`);
    await executeNow(db(), sql`insert into maint_between select g, 'a' from generate_series(1, 300) g`);
    await executeNow(db(), sql`update maint_between set note = repeat('b', 200)`);
    await executeNow(db(), sql`checkpoint`);
    const settled = await redoPoint();
    await executeNow(
      db(),
      sql`insert into maint_between select g, repeat('c', 200) from generate_series(301, 1000) g`,
    );
    // No full pass within the test (the first an hour away); checks every 10 ms, past 64 kB of WAL.
    await maintainUntil(
      { intervalMs: 3_600_000, firstPassMs: 3_600_000, checkpointCheckMs: 10, checkpointWalBytes: 64 * 1024 },
      async () => (await redoPoint()) !== settled,
    );
    expect(await redoPoint()).not.toBe(settled);
    // The table past its dead-row threshold waits for the next full pass.
    expect(await tableState("maint_between")).toMatchObject({ vacuumed: false });
  });

  it("runs its first pass sooner than the interval: a new table gets its statistics, and ingest's statements their plans", async () => {
    await executeNow(db(), sql`create table maint_first (id int primary key, note text)`);
    await executeNow(db(), sql`insert into maint_first select g, 'a' from generate_series(1, 300) g`);
    expect(await hasPlannerStatistics(db(), "maint_first")).toBe(false);
    // Passes an hour apart, the first after 20 ms: only the first can run within the test.
    await maintainUntil(
      { intervalMs: 3_600_000, firstPassMs: 20, checkpointCheckMs: 10 },
      async () => (await tableState("maint_first")).analyzed,
    );
    expect(await tableState("maint_first")).toMatchObject({ analyzed: true, reltuples: 300 });
    // The "no" asked before the pass is forgotten once the pass gathered statistics.
    expect(await hasPlannerStatistics(db(), "maint_first")).toBe(true);
  });

  it("runs passes in the background until stopped, logging what each did", async () => {
    await executeNow(db(), sql`create table maint_loop (id int primary key, note text)`);
    await executeNow(db(), sql`insert into maint_loop select g, 'a' from generate_series(1, 200) g`);
    await executeNow(db(), sql`update maint_loop set note = 'b'`);
    const lines: { msg: string; tables?: { table: string }[] }[] = [];
    const log = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    // Each pass is logged only when it did something; the table is vacuumed by one of them.
    await maintainUntil({ log, intervalMs: 10 }, async () => (await tableState("maint_loop")).vacuumed);
    expect(await tableState("maint_loop")).toMatchObject({ dead: 0, vacuumed: true });
    const passes = lines.filter(({ msg }) => msg === "embedded database maintenance");
    expect(passes.some(({ tables }) => tables?.some(({ table }) => table === "public.maint_loop"))).toBe(
      true,
    );
    // Stopped: no pass runs any more, so the table is not vacuumed again (a short look here; the
    // loop's own test, core/repeat.test.ts, shows it on a clock that stands still).
    const lastVacuum = async () =>
      (
        (
          await executeNow(
            db(),
            sql`select last_vacuum::text as at from pg_stat_user_tables where relname = 'maint_loop'`,
          )
        ).rows[0] as { at: string }
      ).at;
    const before = await lastVacuum();
    await executeNow(db(), sql`update maint_loop set note = 'c'`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastVacuum()).toBe(before);
  });
});
