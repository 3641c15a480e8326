// The PostgreSQL error helpers and bound arrays, on both engines: the error shapes and the array
// encoding differ between pg and PGlite, so each is checked against the real driver.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { boundArray } from "./bound-array.ts";
import { isRetryableConflict, isUniqueViolation, retryOnConflict, sqlStateOf } from "./pg-errors.ts";

describe.each(ENGINES)("sql helpers (%s)", (engine) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(engine);
    await test.database.db.execute(sql`create table probe (id int primary key, note text not null)`);
  });
  afterAll(async () => {
    await test?.drop();
  });
  const db = () => test.database.db;
  const failure = async (statement: ReturnType<typeof sql>) => {
    try {
      await db().execute(statement);
    } catch (err) {
      return err;
    }
    throw new Error("the statement succeeded");
  };

  it("reads the SQLSTATE of a unique violation through drizzle's wrapping", async () => {
    await db().execute(sql`insert into probe values (1, 'a')`);
    const err = await failure(sql`insert into probe values (1, 'b')`);
    expect(sqlStateOf(err)).toBe("23505");
    expect(isUniqueViolation(err)).toBe(true);
    expect(isRetryableConflict(err)).toBe(true);
  });

  it("tells other errors apart", async () => {
    const err = await failure(sql`insert into probe values (2, null)`);
    expect(sqlStateOf(err)).toBe("23502");
    expect(isUniqueViolation(err)).toBe(false);
    expect(isRetryableConflict(err)).toBe(false);
    expect(sqlStateOf(new Error("no code"))).toBeUndefined();
    expect(sqlStateOf(null)).toBeUndefined();
  });

  it("runs work again after a conflict, and not after another error", async () => {
    let calls = 0;
    const id = await retryOnConflict(async () => {
      calls++;
      const next = calls === 1 ? 1 : 10;
      await db().execute(sql`insert into probe values (${next}, 'retried')`);
      return next;
    });
    expect({ id, calls }).toEqual({ id: 10, calls: 2 });

    let failing = 0;
    await expect(
      retryOnConflict(async () => {
        failing++;
        await db().execute(sql`insert into probe values (3, null)`);
      }),
    ).rejects.toThrow();
    expect(failing).toBe(1);

    let conflicts = 0;
    await expect(
      retryOnConflict(async () => {
        conflicts++;
        await db().execute(sql`insert into probe values (1, 'again')`);
      }, 3),
    ).rejects.toThrow();
    expect(conflicts).toBe(3);
  });

  it("binds an array as one parameter, whatever its text holds", async () => {
    const values = ['quote"d', "back\\slash", "com,ma", "{braces}", "NULL", "", "ünï", "sp ace"];
    const { rows } = await db().execute(
      sql`select v from unnest(${boundArray(values, "text")}) with ordinality as t(v, n) order by n`,
    );
    expect(rows.map((row) => row.v)).toEqual(values);
    const uuid = "0190a0b0-0000-7000-8000-000000000001";
    const typed = await db().execute(
      sql`select ${uuid}::uuid = any(${boundArray([uuid], "uuid")}) as found,
                 cardinality(${boundArray([1, 2n, 3], "bigint")}) as n`,
    );
    expect(typed.rows[0]).toEqual({ found: true, n: 3 });
  });
});
