// Database.transaction with deferred writes, on both engines. On PostgreSQL the writes are sent
// without waiting for their answers and COMMIT follows them (pipelining), so what must hold is what
// a plain transaction guarantees: all or nothing, in order, and the real cause of a failure.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { defersWrites, deferWrite, type Executor } from "./database.ts";

describe.each(ENGINES)("transaction with deferred writes (%s)", (engine) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(engine);
    await test.database.db.execute(sql`create table probe (id int primary key, note text not null)`);
  });
  afterAll(async () => {
    await test?.drop();
  });

  const insert = (tx: Executor, id: number, note = "x") =>
    deferWrite(tx, () => tx.execute(sql`insert into probe (id, note) values (${id}, ${note})`));
  const ids = async (from: number, to: number) => {
    const { rows } = await test.database.db.execute(
      sql`select id from probe where id between ${from} and ${to} order by id`,
    );
    return rows.map((row) => Number(row.id));
  };

  it("commits every deferred write, and a later read in the transaction sees the earlier writes", async () => {
    const seen = await test.database.transaction(async (tx) => {
      expect(defersWrites(tx)).toBe(engine === "postgres");
      await insert(tx, 1);
      await insert(tx, 2);
      // Sent after writes that may still be held back on the connection: it must still go out.
      const { rows } = await tx.execute(sql`select count(*)::int as n from probe where id between 1 and 9`);
      await insert(tx, 3);
      return Number(rows[0]?.n);
    });
    expect(seen).toBe(2);
    expect(await ids(1, 9)).toEqual([1, 2, 3]);
  });

  it("throws the failing write's own error and keeps none of the transaction's writes", async () => {
    await test.database.db.execute(sql`insert into probe (id, note) values (20, 'before')`);
    const failure = await test.database
      .transaction(async (tx) => {
        await insert(tx, 21);
        await insert(tx, 20); // duplicate key
        await insert(tx, 22);
        return "committed";
      })
      .catch((err: unknown) => err);
    // The unique violation itself (the trigger retries on it), not "transaction is aborted" from the
    // statement after it, nor a COMMIT answered with ROLLBACK.
    expect(
      (failure as { code?: string; cause?: { code?: string } }).cause?.code ??
        (failure as { code?: string }).code,
    ).toBe("23505");
    expect(await ids(20, 29)).toEqual([20]);
  });

  it("reports a deferred write's failure even when a later read failed because of it", async () => {
    const failure = await test.database
      .transaction(async (tx) => {
        await deferWrite(tx, () => tx.execute(sql`insert into probe (id, note) values (30, null)`)); // not null
        await tx.execute(sql`select 1`);
        return "committed";
      })
      .catch((err: unknown) => err);
    const code =
      (failure as { code?: string; cause?: { code?: string } }).cause?.code ??
      (failure as { code?: string }).code;
    expect(code).toBe("23502");
    expect(await ids(30, 39)).toEqual([]);
  });

  it("rolls back the deferred writes when fn throws, and passes fn's error on", async () => {
    const failure = await test.database
      .transaction(async (tx) => {
        await insert(tx, 40);
        throw new Error("planned failure");
      })
      .catch((err: unknown) => err);
    expect((failure as Error).message).toBe("planned failure");
    expect(await ids(40, 49)).toEqual([]);
  });

  it("leaves its connections usable: many transactions at once after failures", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, n) =>
        test.database.transaction(async (tx) => {
          await insert(tx, 100 + n);
          if (n % 4 === 0) await insert(tx, 100 + n); // every fourth fails on its own duplicate
          await insert(tx, 200 + n);
          return n;
        }),
      ),
    );
    const committed = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    expect(committed).toEqual(Array.from({ length: 40 }, (_, n) => n).filter((n) => n % 4 !== 0));
    expect(await ids(100, 299)).toEqual([...committed.map((n) => 100 + n), ...committed.map((n) => 200 + n)]);
  });
});
