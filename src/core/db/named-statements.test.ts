// Named statements (executeNamed) on both engines. On PGlite they take a path of their own
// (pglite-statements.ts) that prepares each name once: what must hold is that a named statement
// answers exactly as the same statement run unnamed, fails the same way, and keeps to the
// transaction it runs in.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import {
  executeNamed,
  executeNow,
  executePlannedOnce,
  isEmbedded,
  plannerStatisticsGathered,
} from "./database.ts";
import { sqlStateOf } from "./pg-errors.ts";
import { STATEMENT_SLICE_MS } from "./pglite-statements.ts";

describe.each(ENGINES)("named statements (%s)", (engine) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(engine);
    await test.database.db.execute(sql`
      create table named_probe (
        id int primary key, note text, at timestamptz, tags text[], doc jsonb, big bigint,
        ok boolean, ref uuid, raw bytea, ids uuid[], ats timestamptz[]
      )`);
  });
  afterAll(async () => {
    await test?.drop();
  });

  const readProbe = (id: number) =>
    sql`select id, note, at, tags, doc, big, ok, ref, raw, ids, ats, ${id}::int + 1 as next,
      null::text as nothing from named_probe where id = ${id}`;

  it("answers with the rows, types and values that the unnamed statement gives", async () => {
    const at = new Date("2026-01-02T03:04:05.678Z");
    await test.database.db.execute(sql`
      insert into named_probe (id, note, at, tags, doc, big, ok, ref, raw, ids, ats) values (
        1, ${'it\'s \u00e9 "quoted"'}, ${at.toISOString()}, array['a', 'b,c', '', null],
        ${JSON.stringify({ k: [1, "x", null], n: 1.5 })}::jsonb, 9007199254740993, true,
        '3f1c2a7e-5b4d-4c8e-9a6f-0e1d2c3b4a59', '\\x00ff10'::bytea,
        array['3f1c2a7e-5b4d-4c8e-9a6f-0e1d2c3b4a59']::uuid[], array[${at.toISOString()}::timestamptz])`);
    const unnamed = await executeNow(test.database.db, readProbe(1));
    const named = await executeNamed(test.database.db, "test.named_probe.read", readProbe(1));
    expect(unnamed.rows).toHaveLength(1);
    expect(named.rows).toEqual(unnamed.rows);
    // Run again, with another parameter: the prepared statement takes the new value.
    const missing = await executeNamed(test.database.db, "test.named_probe.read", readProbe(2));
    expect(missing.rows).toEqual([]);
  });

  it("knows which engine it runs on, in and out of transactions", async () => {
    expect(isEmbedded(test.database.db)).toBe(engine === "pglite");
    expect(await test.database.transaction(async (tx) => isEmbedded(tx))).toBe(engine === "pglite");
  });

  it("is prepared once under its name and run again from there, in and out of transactions", async () => {
    const name = "test.named_probe.count";
    const count = (executor: Parameters<typeof executeNamed>[0], from: number) =>
      executeNamed(executor, name, sql`select count(*)::int as n from named_probe where id >= ${from}`);
    expect((await count(test.database.db, 0)).rows).toEqual([{ n: 1 }]);
    const inside = await test.database.transaction(async (tx) => {
      await tx.execute(sql`insert into named_probe (id) values (10)`);
      return (await count(tx, 0)).rows;
    });
    expect(inside).toEqual([{ n: 2 }]);
    expect((await count(test.database.db, 5)).rows).toEqual([{ n: 1 }]);
    await test.database.db.execute(sql`delete from named_probe where id = 10`);
    if (engine === "pglite") {
      // One session: the statement is there, prepared once, and was not parsed again.
      const { rows } = await test.database.db.execute(
        sql`select name from pg_prepared_statements where name = ${name}`,
      );
      expect(rows).toEqual([{ name }]);
    }
  });

  it("fails with the database's own error, keeps the transaction's all-or-nothing, and runs again after", async () => {
    const insert = (executor: Parameters<typeof executeNamed>[0], id: number) =>
      executeNamed(
        executor,
        "test.named_probe.insert",
        sql`insert into named_probe (id, note) values (${id}, 'x')`,
      );
    await insert(test.database.db, 20);
    const failure = await test.database
      .transaction(async (tx) => {
        await insert(tx, 21);
        await insert(tx, 20);
        return "committed";
      })
      .catch((err: unknown) => err);
    expect(sqlStateOf(failure)).toBe("23505");
    const { rows } = await test.database.db.execute(
      sql`select id from named_probe where id between 20 and 29 order by id`,
    );
    expect(rows.map((row) => Number(row.id))).toEqual([20]);
    await insert(test.database.db, 22);
    const after = await test.database.db.execute(
      sql`select count(*)::int as n from named_probe where id = 22`,
    );
    expect(after.rows).toEqual([{ n: 1 }]);
  });

  it("reports a statement that does not parse, each time it is run", async () => {
    const broken = () =>
      executeNamed(test.database.db, "test.named_probe.broken", sql`select nope from named_probe`);
    for (let i = 0; i < 2; i++) {
      const failure = await broken().catch((err: unknown) => err);
      expect(sqlStateOf(failure)).toBe("42703");
    }
  });

  // The embedded database's own path: one session, whose statements and transaction Vigil keeps apart.
  if (engine !== "pglite") return;

  it("refuses a second text under a name already prepared", async () => {
    await executeNamed(test.database.db, "test.named_probe.one_text", sql`select 1 as n`);
    await expect(
      executeNamed(test.database.db, "test.named_probe.one_text", sql`select 2 as n`),
    ).rejects.toThrow(/another text/);
  });

  it("outside a transaction, waits for the one under way instead of running inside it", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inTransaction = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const transaction = test.database
      .transaction(async (tx) => {
        await tx.execute(sql`insert into named_probe (id) values (30)`);
        entered();
        await held;
        throw new Error("rolled back on purpose");
      })
      .catch(() => "rolled back");
    await inTransaction;
    const read = executeNamed(
      test.database.db,
      "test.named_probe.outside",
      sql`select count(*)::int as n from named_probe where id = 30`,
    );
    release();
    expect(await transaction).toBe("rolled back");
    // Run inside the transaction, it would have seen the row the rollback took away.
    expect((await read).rows).toEqual([{ n: 0 }]);
  });

  it("planned once: named, except on the embedded database before the table has statistics", async () => {
    await test.database.db.execute(sql`create table planned_probe (id int primary key)`);
    const name = "test.planned_probe.read";
    const read = sql`select count(*)::int as n from planned_probe where id > ${0}`;
    const preparedNames = async () => {
      return test.database.transaction(async (tx) => {
        const { rows } = await executePlannedOnce(tx, "planned_probe", name, read);
        expect(rows).toEqual([{ n: 0 }]);
        const prepared = await tx.execute(sql`select name from pg_prepared_statements where name = ${name}`);
        return prepared.rows.map((row) => row.name);
      });
    };
    expect(await preparedNames()).toEqual(engine === "pglite" ? [] : [name]);
    await test.database.db.execute(sql`analyze planned_probe`);
    // The embedded database hears of statistics from its maintenance pass.
    plannerStatisticsGathered(test.database.db);
    expect(await preparedNames()).toEqual([name]);
  });
});

// PGlite runs each statement in Vigil's own thread and settles its promise at once: without a turn
// of the event loop between statements, a worker's chain of them starved every socket and timer.
describe("the embedded database's statements", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase("pglite");
  });
  afterAll(async () => {
    await test?.drop();
  });

  it("let the event loop turn once a chain of them has run a while, named, unnamed and in a transaction", async () => {
    const { db } = test.database;
    // Each statement sleeps: five of them run past the slice whatever the machine's speed.
    const pause = STATEMENT_SLICE_MS / 1000;
    const turnedDuring = async (chain: () => Promise<void>) => {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      await chain();
      return turned;
    };
    const unnamed = await turnedDuring(async () => {
      for (let n = 0; n < 5; n++) await db.execute(sql`select pg_sleep(${pause})`);
    });
    const named = await turnedDuring(async () => {
      for (let n = 0; n < 5; n++) await executeNamed(db, "test.turn", sql`select pg_sleep(${pause})`);
    });
    const inTransaction = await turnedDuring(() =>
      test.database.transaction(async (tx) => {
        for (let n = 0; n < 5; n++) await tx.execute(sql`select pg_sleep(${pause})`);
      }),
    );
    expect({ unnamed, named, inTransaction }).toEqual({ unnamed: true, named: true, inTransaction: true });
  });
});
