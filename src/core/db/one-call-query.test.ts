// The embedded client answers query() in one call into the database (pglite-statements.ts,
// queryInOneCall), where PGlite sends six. What must hold: the same rows, fields and counts as
// PGlite's own query() on a plain instance, for every kind of parameter value Vigil passes, the same
// errors, notifications handed to the channel's listeners, and a transaction's statements kept to it.
// PGlite only: this is its client.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlStateOf } from "./pg-errors.ts";
import { queryInOneCall, trackListeners, trackTransactions } from "./pglite-statements.ts";

const TABLE = `create table probe (
  id int primary key, note text, at timestamptz, tags text[], doc jsonb, big bigint, ok boolean,
  ref uuid, raw bytea, ids uuid[], n numeric)`;
const INSERT = `insert into probe (id, note, at, tags, doc, big, ok, ref, raw, ids, n)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
const ROW = (id: number) => [
  id,
  'it\'s \u00e9 "quoted" {a,b}',
  new Date("2026-01-02T03:04:05.678Z"),
  ["a", "b,c", "", null, 'q"uote'],
  { k: [1, "x", null], n: 1.5 },
  "9007199254740993",
  true,
  "3f1c2a7e-5b4d-4c8e-9a6f-0e1d2c3b4a59",
  Buffer.from([0, 255, 16]),
  ["3f1c2a7e-5b4d-4c8e-9a6f-0e1d2c3b4a59"],
  12.5,
];

describe("query() in one call on the embedded database", () => {
  let plain: PGlite;
  let client: PGlite;
  let calls = 0;
  beforeAll(async () => {
    plain = await PGlite.create();
    client = await PGlite.create();
    const execute = client.execProtocolRawStream.bind(client);
    client.execProtocolRawStream = ((...args: Parameters<PGlite["execProtocolRawStream"]>) => {
      calls += 1;
      return execute(...args);
    }) as PGlite["execProtocolRawStream"];
    queryInOneCall(client);
    trackTransactions(client);
    trackListeners(client);
    for (const db of [plain, client]) await db.exec(TABLE);
  });
  afterAll(async () => {
    await plain?.close();
    await client?.close();
  });

  it("writes and reads every kind of value as PGlite's own query() does, in one call each", async () => {
    for (const db of [plain, client]) {
      const inserted = await db.query(INSERT, ROW(1));
      expect(inserted.affectedRows).toBe(1);
    }
    const read = "select *, $1::int + 1 as next, null::text as nothing from probe where id = $1";
    calls = 0;
    const mine = await client.query(read, [1]);
    expect(calls).toBe(1);
    const theirs = await plain.query(read, [1]);
    expect(mine.rows).toEqual(theirs.rows);
    expect(mine.fields).toEqual(theirs.fields);
    expect(mine.rows[0]).toMatchObject({ note: ROW(1)[1], tags: ROW(1)[3], doc: ROW(1)[4], ok: true });

    const asArrays = await client.query("select id, note from probe order by id", [], { rowMode: "array" });
    expect(asArrays.rows).toEqual([[1, ROW(1)[1]]]);
    const updated = await client.query("update probe set note = $1 where id >= $2", ["x", 0]);
    expect(updated.affectedRows).toBe(
      (await plain.query("update probe set note = 'x' where id >= 0")).affectedRows,
    );
  });

  it("reads an answer that the database sends in many pieces, rows split across them", async () => {
    // Rows of odd lengths, 2 MB in all: the database hands its output over in pieces far smaller,
    // so rows straddle them.
    const read =
      "select n, repeat(chr(945 + n % 20), 1000 * n + 7) as text from generate_series(1, $1::int) n order by n";
    calls = 0;
    const mine = await client.query(read, [60]);
    expect(calls).toBe(1);
    const theirs = await plain.query(read, [60]);
    expect(mine.rows).toHaveLength(60);
    expect(mine.rows).toEqual(theirs.rows);
  });

  it("hands a notification to the listeners of its channel, until they stop listening", async () => {
    const heard: string[] = [];
    const heardQuoted: string[] = [];
    const stop = await client.listen("Probe_Channel", (payload) => heard.push(payload));
    await client.listen('"Quoted"', (payload) => heardQuoted.push(payload));
    await client.query("select pg_notify('probe_channel', $1)", ["first"]);
    await client.query(`select pg_notify('Quoted', 'q'), pg_notify('quoted', 'not this one')`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toEqual(["first"]);
    expect(heardQuoted).toEqual(["q"]);

    await stop();
    await client.unlisten('"Quoted"');
    await client.query("select pg_notify('probe_channel', 'second'), pg_notify('Quoted', 'q2')");
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toEqual(["first"]);
    expect(heardQuoted).toEqual(["q"]);
  });

  it("fails as PGlite's own query() does, and the next statement runs", async () => {
    const sqlStates = await Promise.all(
      [plain, client].map((db) => db.query(INSERT, ROW(1)).then(() => "no error", sqlStateOf)),
    );
    expect(sqlStates).toEqual(["23505", "23505"]);
    expect((await client.query("select count(*)::int as n from probe")).rows).toEqual([{ n: 1 }]);
  });

  it("keeps a transaction's statements to it: a rollback undoes them", async () => {
    await client
      .transaction(async (tx) => {
        calls = 0;
        await tx.query(INSERT, ROW(2));
        expect(calls).toBe(1);
        expect((await tx.query("select count(*)::int as n from probe")).rows).toEqual([{ n: 2 }]);
        throw new Error("roll back");
      })
      .catch(() => {});
    expect((await client.query("select count(*)::int as n from probe")).rows).toEqual([{ n: 1 }]);
  });

  it("says so when the database is closed", async () => {
    const closing = await PGlite.create();
    queryInOneCall(closing);
    await closing.close();
    await expect(closing.query("select 1")).rejects.toThrow(/closed/);
  });
});
