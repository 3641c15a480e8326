// The embedded database keeps dates, times and intervals as the text it wrote, for drizzle, without
// drizzle's per-query parsers; pg-boss still gets them parsed. PGlite only: this is its client.
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "./database.ts";
import { keepTypesAsText, typedJobStore } from "./pglite-text-types.ts";

const AT = "2026-11-27 10:00:00.123456+00";
const VALUES = sql`select ${AT}::timestamptz as tz, ${AT}::timestamptz::text as tz_text,
  '2026-11-27 10:00:00.5'::timestamp as ts, '2026-11-27 10:00:00.5'::timestamp::text as ts_text,
  '2026-11-27'::date as day, '1 day 02:00:00.000001'::interval as span,
  array[${AT}::timestamptz] as tzs, array[${AT}::timestamptz]::text as tzs_text, 7::int as n`;

describe("the embedded database's dates and times", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ memory: true });
  });
  afterAll(async () => {
    await database?.close();
  });

  it("come to drizzle as the database's text, to the microsecond, in a transaction too", async () => {
    const expectText = (row: Record<string, unknown> | undefined) => {
      expect(row?.tz).toBe(row?.tz_text);
      expect(String(row?.tz)).toContain(".123456");
      expect(row?.ts).toBe(row?.ts_text);
      expect(row?.day).toBe("2026-11-27");
      expect(row?.span).toBe("1 day 02:00:00.000001");
      expect(row?.tzs).toBe(row?.tzs_text);
      expect(row?.n).toBe(7);
    };
    expectText((await database.db.execute(VALUES)).rows[0]);
    expectText(await database.transaction(async (tx) => (await tx.execute(VALUES)).rows[0]));
  });

  it("reach drizzle in one call into the database a statement, its parsers left out first", async () => {
    // The client's wrappers run in the order openDatabase applies them: were drizzle's parsers still
    // there when query() is reached, the statement would take PGlite's own six calls.
    const client = (database.db as unknown as { session: { client: PGlite } }).session.client;
    const execute = client.execProtocolRawStream;
    let calls = 0;
    client.execProtocolRawStream = ((...args: Parameters<PGlite["execProtocolRawStream"]>) => {
      calls += 1;
      return execute(...args);
    }) as PGlite["execProtocolRawStream"];
    try {
      const { rows } = await database.db.execute(sql`select ${AT}::timestamptz as tz`);
      expect(rows).toEqual([{ tz: AT }]);
      expect(calls).toBe(1);
      const inTransaction = await database.transaction(async (tx) => {
        calls = 0;
        await tx.execute(sql`select ${AT}::timestamptz as tz`);
        return calls;
      });
      expect(inTransaction).toBe(1);
    } finally {
      client.execProtocolRawStream = execute;
    }
  });

  it("come to the job queue parsed, as from PostgreSQL, with parameters and without", async () => {
    const withParameters = await database.jobStore.executeSql("select $1::timestamptz as at, $2::int as n", [
      AT,
      7,
    ]);
    expect(withParameters.rows).toEqual([{ at: new Date("2026-11-27T10:00:00.123Z"), n: 7 }]);
    // Without parameters pg-boss's adapter runs the text as a script, one result per statement.
    const script = await database.jobStore.executeSql(
      `select 1 as one; select '${AT}'::timestamptz as at, '2026-11-27'::date as day`,
    );
    const row = script.rows.find((candidate: Record<string, unknown>) => "at" in candidate);
    expect(row?.at).toEqual(new Date("2026-11-27T10:00:00.123Z"));
    expect(row?.day).toBeInstanceOf(Date);
  });
});

describe("keepTypesAsText", () => {
  let client: PGlite;
  const asked: (Parameters<PGlite["query"]>[2] | undefined)[] = [];
  beforeAll(async () => {
    client = await PGlite.create();
    const query = client.query.bind(client);
    // What reaches PGlite's own query(): the options it copies its parsers for.
    client.query = ((text: string, params?: unknown[], options?: Parameters<PGlite["query"]>[2]) => {
      asked.push(options);
      return query(text, params, options);
    }) as PGlite["query"];
    keepTypesAsText(client);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("leaves out parsers that only keep text types as text, and keeps any other", async () => {
    const keepText = { 1184: (value: string) => value, 1114: (value: string) => value };
    const { rows } = await client.query<{ at: unknown }>(`select '${AT}'::timestamptz as at`, [], {
      parsers: keepText,
    });
    expect(rows[0]?.at).toBe(AT);
    expect(asked.at(-1)?.parsers).toBeUndefined();

    const own = { ...keepText, 23: (value: string) => `int ${value}` };
    const mixed = await client.query<{ n: unknown }>("select 7::int as n", [], { parsers: own });
    expect(mixed.rows[0]?.n).toBe("int 7");
    expect(asked.at(-1)?.parsers).toBe(own);
  });

  it("hands the parsers it replaced to the job store's view, which parses with them", async () => {
    const fresh = await PGlite.create();
    try {
      const replaced = keepTypesAsText(fresh);
      // PGlite parses dates and timestamps (not intervals): those parsers are the ones replaced.
      expect([...replaced.keys()]).toEqual(expect.arrayContaining([1082, 1114, 1184]));
      const plain = await fresh.query<{ at: unknown }>(`select '${AT}'::timestamptz as at`);
      expect(plain.rows[0]?.at).toBe(AT);
      const typed = await typedJobStore(fresh, replaced).query<{ at: unknown }>(
        `select '${AT}'::timestamptz as at`,
      );
      expect(typed.rows[0]?.at).toEqual(new Date("2026-11-27T10:00:00.123Z"));
    } finally {
      await fresh.close();
    }
  });
});
