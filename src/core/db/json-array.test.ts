// boundJsonArray: the same rows reach the database whether the array travels as text (small) or as
// bytes (large), named or not, on both engines.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { executeNamed, executeNow } from "./database.ts";
import { boundJsonArray, jsonArrayOf } from "./json-array.ts";

const jsonArray = (rows: unknown[]) => jsonArrayOf(rows.map((row) => JSON.stringify(row) ?? "null"));

/** Rows with every kind of text JSON escapes or encodes in several bytes. */
function rowsOf(count: number) {
  return Array.from({ length: count }, (_, n) => ({
    n,
    note: `row ${n}: "quoted" \\ back\nslash, caf\u00e9 \u2603 \u{1f525} \u0001`,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, n % 60)),
    tags: ["a", null, n % 2 === 0 ? "even" : "odd"],
    skipped: undefined,
  }));
}

const decoded = (value: string | Buffer) => (typeof value === "string" ? value : value.toString("utf8"));

describe("jsonArray", () => {
  it("writes what JSON.stringify writes: small arrays as text, large ones as their UTF-8 bytes", () => {
    for (const count of [0, 1, 3, 200, 2_000]) {
      const rows = rowsOf(count);
      const value = jsonArray(rows);
      expect(decoded(value)).toBe(JSON.stringify(rows));
      expect(typeof value === "string").toBe(Buffer.byteLength(JSON.stringify(rows)) < 64 * 1024);
    }
  });

  it("writes null for what JSON cannot hold, as in an array", () => {
    const rows = [undefined, () => 1, { toJSON: () => "x" }, 2];
    expect(decoded(jsonArray(rows))).toBe(JSON.stringify(rows));
  });
});

describe.each(ENGINES)("boundJsonArray (%s)", (engine) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(engine);
  });
  afterAll(async () => {
    await test?.drop();
  });

  const read = (rows: unknown[]) =>
    sql`select n, note, at, tags from json_to_recordset(${boundJsonArray(rows)})
      as r(n int, note text, at timestamptz, tags text[]) order by n`;
  const expected = (rows: ReturnType<typeof rowsOf>) =>
    rows.map(({ n, note, at, tags }) => ({ n, note, at: at.toISOString(), tags }));
  const normalized = (rows: Record<string, unknown>[]) =>
    rows.map((row) => ({ ...row, at: new Date(String(row.at)).toISOString() }));

  // 2,000 rows are about 200 KiB of JSON: bound as bytes.
  it.each([3, 2_000])("reads back %i rows, named and not, in a transaction and out", async (count) => {
    const rows = rowsOf(count);
    expect(typeof jsonArray(rows) === "string").toBe(count === 3);
    const named = await executeNamed(test.database.db, "test.json_array.read", read(rows));
    expect(normalized(named.rows)).toEqual(expected(rows));
    const unnamed = await executeNow(test.database.db, read(rows));
    expect(normalized(unnamed.rows)).toEqual(expected(rows));
    const inside = await test.database.transaction(async (tx) => [
      (await executeNamed(tx, "test.json_array.read", read(rows))).rows,
      (await executeNow(tx, read(rows))).rows,
    ]);
    for (const result of inside) expect(normalized(result)).toEqual(expected(rows));
  });

  it("refuses bytes that are not JSON as the text would be refused", async () => {
    const broken = Buffer.from('[{"n": 1}', "utf8");
    const statement = sql`select count(*)::int as n from json_array_elements(${broken}::json)`;
    await expect(executeNamed(test.database.db, "test.json_array.broken", statement)).rejects.toThrow();
    await expect(executeNow(test.database.db, statement)).rejects.toThrow();
  });
});
