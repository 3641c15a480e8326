// Connections the PostgreSQL server ends (pg_terminate_backend, a restart) while Vigil uses them:
// each request that met one is answered 503 with Retry-After, and the process goes on. A lost
// connection that no listener hears is an uncaught exception, which ends the process.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/core/db/database.ts";
import { PatientPool } from "../src/core/db/patient-pool.ts";
import { isDatabaseUnavailable } from "../src/core/db/pg-errors.ts";
import { createLogger, startVigil, type Vigil } from "../src/start.ts";
import { amBody } from "./alerts.ts";
import { expectDeliveryUnavailable, poolsOf, registerAlertTrigger } from "./database-outage.ts";
import { createTestDatabase, type TestDatabase, testConfig } from "./harness.ts";
import { pgProxy } from "./pg-proxy.ts";

const postgresUrl = process.env.TEST_DATABASE_URL;
const KEY = "database-connection-loss-bootstrap-key";
const auth = { authorization: `Bearer ${KEY}` };

const firing = (n: number) =>
  amBody([
    {
      status: "firing",
      fingerprint: `10c7${n.toString(16).padStart(12, "0")}`,
      startsAt: "2026-01-01T00:00:00Z",
      labels: { alertname: "ConnectionLoss", instance: `db-${n}:9100`, severity: "critical" },
    },
  ]);

/** Every uncaught exception in this process while the file runs: a lost connection nobody heard. */
const uncaught: unknown[] = [];
const noteUncaught = (err: unknown) => uncaught.push(err);

/** The messages of a PostgreSQL protocol stream that are complete in `buffer`: type, start, end. */
function* messagesOf(buffer: Buffer, from = 0): Generator<{ type: string; start: number; end: number }> {
  for (let at = from; at + 5 <= buffer.length; ) {
    const end = at + 1 + buffer.readInt32BE(at + 1);
    if (end > buffer.length) return;
    yield { type: String.fromCharCode(buffer[at] ?? 0), start: at, end };
    at = end;
  }
}

/** The application_name of a startup message (length, protocol, then name and value pairs). */
function applicationNameOf(startup: Buffer): string {
  const pairs = startup.subarray(8).toString("utf8").split("\0");
  for (let i = 0; i + 1 < pairs.length; i += 2)
    if (pairs[i] === "application_name") return pairs[i + 1] ?? "";
  return "";
}

/**
 * A loopback proxy in front of the PostgreSQL server. While armed, a new connection of one of
 * `applications` is ended by the server the moment it is ready: the proxy holds back the server's
 * first ReadyForQuery, has the backend terminated (pg_terminate_backend of the pid its
 * BackendKeyData named), and hands the client ReadyForQuery and the server's FATAL 57P01 in one
 * write. pg reads both in one turn: the pool hands the client out on the first, and the client
 * emits the second as an 'error' event before whoever asked for it has it.
 */
async function terminatingProxy(target: URL, admin: pg.Client, applications: string[]) {
  const state = { armed: false, terminated: 0 };
  const proxy = await pgProxy(target, (client, upstream) => {
    let startup: Buffer | null = Buffer.alloc(0);
    let doomed = false;
    client.on("data", (chunk: Buffer) => {
      if (startup) {
        startup = Buffer.concat([startup, chunk]);
        if (startup.length >= 4 && startup.length >= startup.readInt32BE(0)) {
          doomed = state.armed && applications.includes(applicationNameOf(startup));
          startup = null;
        }
      }
      upstream.write(chunk);
    });
    let stage: "starting" | "terminating" | "passing" = "starting";
    let pending = Buffer.alloc(0);
    let pid = 0;
    upstream.on("data", (chunk: Buffer) => {
      if (!doomed || stage === "passing") {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      if (stage === "starting") {
        // Everything before ReadyForQuery goes through (authentication may need an answer).
        let sent = 0;
        for (const message of messagesOf(pending)) {
          if (message.type === "K") pid = pending.readInt32BE(message.start + 5);
          if (message.type === "Z") {
            stage = "terminating";
            admin.query("select pg_terminate_backend($1)", [pid]).catch(() => {});
            break;
          }
          sent = message.end;
        }
        client.write(pending.subarray(0, sent));
        pending = pending.subarray(sent);
      }
      if (stage === "terminating") {
        const [ready, ...after] = [...messagesOf(pending)];
        if (ready && after.some((message) => message.type === "E")) {
          stage = "passing";
          state.terminated += 1;
          client.write(pending);
        }
      }
    });
    upstream.on("end", () => client.end());
    client.on("end", () => upstream.end());
  });
  return { ...proxy, state };
}

describe.runIf(Boolean(postgresUrl))("connections the server ends while Vigil uses them [postgres]", () => {
  const admin = new pg.Client({ connectionString: postgresUrl });
  let test: TestDatabase;
  let name = "";

  beforeAll(async () => {
    process.on("uncaughtExceptionMonitor", noteUncaught);
    await admin.connect();
    test = await createTestDatabase("postgres");
    name = new URL(test.url ?? "").pathname.slice(1);
    // The Vigils below open their own connections (through a proxy, or not).
    await test.database.close();
  });

  afterAll(async () => {
    await test.drop();
    await admin.end();
    process.off("uncaughtExceptionMonitor", noteUncaught);
  });

  const start = (database: Database, role: "all" | "api"): Promise<Vigil> =>
    startVigil(testConfig({ bootstrapApiKey: KEY, role }), { database, pollingIntervalSeconds: 0.5 });

  const registerTrigger = (vigil: Vigil) =>
    registerAlertTrigger(vigil, auth, `loss-${randomBytes(3).toString("hex")}`);

  const deliver = (vigil: Vigil, path: string, n: number) =>
    vigil.app.inject({
      method: "POST",
      url: path,
      headers: { "content-type": "application/json" },
      payload: firing(n),
    });

  it("answers 503 when a connection is ended as it is handed out, and goes on", async () => {
    const proxy = await terminatingProxy(new URL(test.url ?? ""), admin, ["vigil", "vigil-read"]);
    const database = await openDatabase({ url: proxy.url, poolSize: 4 });
    const vigil = await start(database, "api");
    try {
      const path = await registerTrigger(vigil);
      // From now on each new connection of the two pools ends as it is handed out; the pooled
      // ones are ended now, so the next requests need new ones.
      proxy.state.armed = true;
      await admin.query(
        `select pg_terminate_backend(pid, 10000) from pg_stat_activity
         where datname = $1 and application_name in ('vigil', 'vigil-read')`,
        [name],
      );
      while (poolsOf(database).some((pool) => pool.totalCount > 0)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }

      expectDeliveryUnavailable(await deliver(vigil, path, 1));
      const list = await vigil.app.inject({ url: "/app/sre/api/v1/alerts", headers: auth });
      expect(list.statusCode, list.body).toBe(503);
      expect(list.headers["retry-after"]).toBe("5");
      expect(proxy.state.terminated).toBeGreaterThanOrEqual(2);
      expect(uncaught).toEqual([]);

      proxy.state.armed = false;
      const again = await deliver(vigil, path, 1);
      expect(again.statusCode, again.body).toBe(202);
      expect(again.json().alerts[0].outcome).toBe("created");
    } finally {
      await vigil.stop();
      rmSync(vigil.services.config.dataDir, { recursive: true, force: true });
      await proxy.close();
    }
  });

  it("rides out rounds of terminations under concurrent deliveries and reads, answering 202 or 503", async () => {
    const database = await openDatabase({ url: test.url ?? "", poolSize: 8 });
    const vigil = await start(database, "all");
    try {
      const path = await registerTrigger(vigil);
      const answers: { statusCode: number; retryAfter: unknown; body: string }[] = [];
      let terminated = 0;
      for (let round = 0; round < 25; round++) {
        const requests = [
          ...Array.from({ length: 16 }, (_, i) => deliver(vigil, path, round * 100 + i)),
          ...Array.from({ length: 4 }, () =>
            vigil.app.inject({ url: "/app/sre/api/v1/alerts", headers: auth }),
          ),
        ];
        // Every connection of the database, the job queue's too, as the requests run.
        const { rowCount } = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
          [name],
        );
        terminated += rowCount ?? 0;
        for (const answer of await Promise.all(requests)) {
          answers.push({
            statusCode: answer.statusCode,
            retryAfter: answer.headers["retry-after"],
            body: answer.body,
          });
        }
      }
      expect(terminated).toBeGreaterThan(0);
      expect(answers.filter((answer) => ![200, 202, 503].includes(answer.statusCode))).toEqual([]);
      expect(answers.filter((answer) => answer.statusCode === 503 && answer.retryAfter !== "5")).toEqual([]);
      expect(uncaught).toEqual([]);
      const after = await deliver(vigil, path, 99_999);
      expect(after.statusCode, after.body).toBe(202);
    } finally {
      await vigil.stop();
      rmSync(vigil.services.config.dataDir, { recursive: true, force: true });
    }
  });

  it("says each connection the server ended once, as a warning, and drops it from the pool", async () => {
    const proxy = await terminatingProxy(new URL(test.url ?? ""), admin, ["vigil-lost"]);
    const logged: string[] = [];
    const logger = createLogger(testConfig({ logLevel: "info" }), {
      write: (line: string) => logged.push(line),
    });
    const pool = new PatientPool({ connectionString: proxy.url, application_name: "vigil-lost", logger });
    try {
      proxy.state.armed = true;
      const failure = await pool.query("select 1").then(
        () => null,
        (err: unknown) => err,
      );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(proxy.state.terminated).toBe(1);
      expect(pool.totalCount).toBe(0);
      expect(uncaught).toEqual([]);
      const lines = logged.map((line) => JSON.parse(line));
      expect(lines).toMatchObject([
        {
          level: 40,
          application: "vigil-lost",
          err: { code: "57P01", message: "terminating connection due to administrator command" },
          msg: "the database server ended a connection; the pool drops it",
        },
      ]);

      proxy.state.armed = false;
      const { rows } = await pool.query("select 1 as one");
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
      await proxy.close();
    }
  });
});
