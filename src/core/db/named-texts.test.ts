// A named statement's text is built once (database.ts, queryOf): later runs only collect their
// parameters (paramsOf). What must hold: paramsOf collects exactly what drizzle binds, in its order,
// for every shape of statement Vigil writes, and declines what it does not know, so that drizzle
// builds those; and a second run of a name answers with the second run's values.
import { eq, Param, sql } from "drizzle-orm";
import { PgDialect, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { boundArray } from "./bound-array.ts";
import { executeNamed, paramsOf } from "./database.ts";
import { boundJsonArray } from "./json-array.ts";

const dialect = new PgDialect();
const alerts = pgTable("alerts", { id: uuid("id").primaryKey(), status: text("status") });
const drizzleParams = (query: ReturnType<typeof sql>) => dialect.sqlToQuery(query).params;

describe("paramsOf", () => {
  it("collects what drizzle binds, in its order, through nested statements, lists and params", () => {
    const at = new Date("2026-01-02T03:04:05.678Z");
    const bytes = Buffer.from([0, 1, 2]);
    const inner = sql`b = ${"two"} and c = any(${boundArray(["x", "y"], "text")})`;
    const queries = [
      sql`select 1`,
      sql`select ${1}, ${"a"}, ${null}, ${true}, ${10n}, ${at}, ${bytes}, ${{ k: [1, 2] }}`,
      sql`select * from t where a = ${1} and ${inner} and d in ${[3, 4, sql`${5}`]} and e = ${sql.param("p")}`,
      sql`with rows as (select * from json_to_recordset(${boundJsonArray([{ n: 1 }, { n: 2 }])})) ${sql.raw("select 2")}`,
      sql`select ${undefined}, ${sql`${sql`${"deep"}`}`}`,
    ];
    for (const query of queries) {
      expect(paramsOf(query)).toEqual(drizzleParams(query));
    }
  });

  it("maps a param through its encoder, as drizzle does", () => {
    const encoder = { mapToDriverValue: (value: unknown) => `encoded:${String(value)}` };
    const query = sql`select ${new Param("v", encoder)}, ${new Param(null, encoder)}`;
    expect(paramsOf(query)).toEqual(["encoded:v", null]);
    expect(paramsOf(query)).toEqual(drizzleParams(query));
  });

  it("passes over tables, columns and identifiers, which bind nothing", () => {
    const queries = [
      sql`select * from ${alerts} where ${alerts.status} = ${"active"}`,
      sql`select ${alerts.id} from alerts where ${eq(alerts.id, "00000000-0000-0000-0000-000000000001")}`,
      sql`select * from ${sql.identifier("alerts")} where title = ${"t"}`,
    ];
    for (const query of queries) {
      expect(paramsOf(query)).toEqual(drizzleParams(query));
    }
  });

  it("declines placeholders and inlined statements", () => {
    expect(paramsOf(sql`select ${sql.placeholder("p")}`)).toBeNull();
    expect(paramsOf(sql`select ${"a"}`.inlineParams())).toBeNull();
    expect(paramsOf(sql`select ${1}, ${sql`${"a"}`.inlineParams()}`)).toBeNull();
  });
});

describe.each(ENGINES)("a named statement run again (%s)", (engine) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(engine);
  });
  afterAll(async () => {
    await test?.drop();
  });

  it("answers with each run's own values, nested and listed ones included", async () => {
    const run = (n: number, word: string, list: string[]) =>
      executeNamed(
        test.database.db,
        "test.named_texts.again",
        sql`select ${n}::int as n, ${sql`${word}::text`} as word,
          (select array_agg(x order by x) from unnest(${boundArray(list, "text")}) x) as list`,
      );
    for (const [n, word, list] of [
      [1, "one", ["a", "b"]],
      [2, "two", ["c"]],
      [3, "three", []],
    ] as const) {
      const { rows } = await run(n, word, [...list]);
      expect(rows[0]).toMatchObject({ n, word, list: list.length === 0 ? null : [...list] });
    }
  });
});
