// A background loop's failures while the database is unavailable: a warning, then silence (counted)
// until the repeat interval passes, and a line once a round goes through again; any other failure is
// left to the caller. The errors are real: a refused connection and a query the database refuses.
import { once } from "node:events";
import { createServer } from "node:net";
import pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { sql } from "./database.ts";
import { outageLog } from "./outage-log.ts";

let database: TestDatabase;
let refused: unknown;
let rejected: unknown;
let closedPort = 0;
beforeAll(async () => {
  database = await createTestDatabase("pglite");
  rejected = await database.database.db.execute(sql`select 1 / 0`).catch((err: unknown) => err);
  // A port nobody listens on: taken, then freed.
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  closedPort = port;
  const client = new pg.Client({ connectionString: `postgres://vigil@127.0.0.1:${port}/vigil` });
  refused = await client.connect().catch((err: unknown) => err);
});
afterAll(async () => {
  await database.drop();
});

function recorder() {
  const lines: { level: number; msg: string; failures_not_logged?: number; unavailable_ms?: number }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, log };
}

it("says an outage once per interval, counting what it did not say, and says when it is over", () => {
  expect(refused).toMatchObject({ code: "ECONNREFUSED" });
  const { lines, log } = recorder();
  const outage = outageLog(log, "storm correlation", 3_600_000);
  expect([outage.unavailable(refused), outage.unavailable(refused), outage.unavailable(refused)]).toEqual([
    true,
    true,
    true,
  ]);
  outage.succeeded();
  outage.succeeded();
  expect(lines.map((line) => [line.level, line.msg])).toEqual([
    [40, "storm correlation: the database is unavailable; trying again until it answers"],
    [30, "storm correlation: the database answers again"],
  ]);
  expect(lines[0]?.failures_not_logged).toBe(0);
  // A new outage is said again at once.
  outage.unavailable(refused);
  expect(lines).toHaveLength(3);
});

it("says the outage again once the interval has passed (at once, for an interval of 0)", () => {
  const { lines, log } = recorder();
  const outage = outageLog(log, "job queue", 0);
  outage.unavailable(refused);
  outage.unavailable(refused);
  expect(lines.map((line) => line.failures_not_logged)).toEqual([0, 0]);
});

it("leaves any other failure to the caller, a peer's refused connection included", async () => {
  const { lines, log } = recorder();
  const outage = outageLog(log, "job queue");
  const peer = await fetch(`http://127.0.0.1:${closedPort}/v1/chat/completions`).catch((err: unknown) => err);
  expect((peer as Error).cause).toMatchObject({ code: "ECONNREFUSED" });
  expect(outage.unavailable(peer)).toBe(false);
  expect(outage.unavailable(rejected)).toBe(false);
  expect(outage.unavailable(new Error("a bug"))).toBe(false);
  outage.succeeded();
  expect(lines).toEqual([]);
});
