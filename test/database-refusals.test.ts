// A PostgreSQL server that refuses new connections (at its connection limit, as when several
// instances and other applications share it): a delivery waits for a slot to free up and is stored;
// when none frees up in time, the answer is 503 with Retry-After, in each route family's error
// body, never a 500. The limit is a role's CONNECTION LIMIT (a superuser is not held to one), on a
// database of that role's own.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, sql } from "../src/core/db/database.ts";
import { isDatabaseUnavailable } from "../src/core/db/pg-errors.ts";
import { createLogger, startVigil, type Vigil } from "../src/start.ts";
import { amBody } from "./alerts.ts";
import { expectDeliveryUnavailable, poolsOf, registerAlertTrigger } from "./database-outage.ts";
import { createTestDatabase, testConfig } from "./harness.ts";
import { pgProxy } from "./pg-proxy.ts";

const postgresUrl = process.env.TEST_DATABASE_URL;
const KEY = "database-refusals-bootstrap-key";
const auth = { authorization: `Bearer ${KEY}` };

const fingerprint = (n: number) => `db0f${n.toString(16).padStart(12, "0")}`;
const firing = (n: number) =>
  amBody([
    {
      status: "firing",
      fingerprint: fingerprint(n),
      startsAt: "2026-01-01T00:00:00Z",
      labels: { alertname: "DiskFull", instance: `db-${n}:9100`, severity: "critical" },
    },
  ]);

describe.runIf(Boolean(postgresUrl))("a PostgreSQL server refusing new connections [postgres]", () => {
  const suffix = randomBytes(6).toString("hex");
  const role = `vigil_limited_${suffix}`;
  const name = `vigil_test_${suffix}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  const vigils: Vigil[] = [];
  let patient: Vigil;
  let impatient: Vigil;
  let triggerPath = "";
  const impatientLog: string[] = [];

  /** A Vigil on the role's database, whose connections the server refuses are asked for again for `connectWaitMs`. */
  async function start(connectWaitMs: number, logged: string[] = []): Promise<Vigil> {
    const url = new URL(postgresUrl ?? "");
    url.username = role;
    url.password = "";
    url.pathname = `/${name}`;
    const database = await openDatabase({ url: url.toString(), poolSize: 4, connectWaitMs });
    const config = testConfig({ bootstrapApiKey: KEY, logLevel: "info" });
    const logger = createLogger(config, { write: (line: string) => logged.push(line) });
    const vigil = await startVigil(config, { database, logger, pollingIntervalSeconds: 0.5 });
    vigils.push(vigil);
    return vigil;
  }

  /**
   * From now on the server refuses the role new connections, and the Vigils' pooled ones are gone:
   * their next query needs a new one. The queue's own connections stay.
   */
  async function refuseConnections() {
    await admin.query(`alter role ${role} connection limit 0`);
    await admin.query(
      `select pg_terminate_backend(pid, 10000) from pg_stat_activity
       where usename = $1 and application_name in ('vigil', 'vigil-read')`,
      [role],
    );
    // The terminated connections' last words are already on their sockets: let the pools read them.
    await new Promise((resolve) => setImmediate(resolve));
  }

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create role ${role} login`);
    await admin.query(`create database ${name} owner ${role}`);
    patient = await start(600_000);
    impatient = await start(200, impatientLog);
    triggerPath = await registerAlertTrigger(patient, auth, "refusals");
  });

  afterAll(async () => {
    await admin.query(`alter role ${role} connection limit -1`);
    for (const vigil of vigils) {
      await vigil.stop();
      rmSync(vigil.services.config.dataDir, { recursive: true, force: true });
    }
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  it("survives a connection lost in the middle of a transaction: the transaction fails, the process goes on", async () => {
    const { database } = patient.services;
    const running = database
      .transaction(async (tx) => tx.execute(sql`select pg_sleep(60), 'lost-mid-transaction'`))
      .then(
        () => null,
        (err: unknown) => err,
      );
    // Terminated while the statement runs: the checked-out client hears its connection end.
    let terminated = 0;
    while (terminated === 0) {
      const { rows } = await admin.query(
        `select pg_terminate_backend(pid, 10000) as done from pg_stat_activity
         where usename = $1 and state = 'active' and query like '%lost-mid-transaction%'
           and query not like '%pg_stat_activity%'`,
        [role],
      );
      terminated = rows.length;
    }
    const failure = await running;
    expect(isDatabaseUnavailable(failure)).toBe(true);
    // The pool goes on with new connections.
    const { rows } = await database.db.execute(sql`select 1 as one`);
    expect(rows[0]?.one).toBe(1);
  });

  it("waits for the server to accept a connection, then stores the delivery", async () => {
    await refuseConnections();
    const delivery = patient.app.inject({
      method: "POST",
      url: triggerPath,
      headers: { "content-type": "application/json" },
      payload: firing(1),
    });
    // Free a slot only once the server has refused the delivery's connection at least once.
    while (patient.services.database.refusedConnections() === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await admin.query(`alter role ${role} connection limit -1`);
    const answer = await delivery;
    expect(answer.statusCode, answer.body).toBe(202);
    const [stored] = answer.json().alerts as { id: string; outcome: string }[];
    expect(stored?.outcome).toBe("created");

    const read = await patient.app.inject({ url: `/app/sre/api/v1/alerts/${stored?.id}`, headers: auth });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: stored?.id, external_uid: fingerprint(1) });
    const metrics = await patient.app.inject({ url: "/metrics" });
    const refused = /^vigil_database_connections_refused_total (\d+)$/m.exec(metrics.body);
    expect(Number(refused?.[1])).toBeGreaterThan(0);
  });

  it("answers 503 with Retry-After when no connection is accepted in time, and stores the delivery sent again", async () => {
    await refuseConnections();
    impatientLog.length = 0;
    // Together, as Alertmanager's groups arrive: one commit group, answered together.
    const deliveries = await Promise.all(
      [2, 3, 4, 5, 6, 7].map((n) =>
        impatient.app.inject({
          method: "POST",
          url: triggerPath,
          headers: { "content-type": "application/json" },
          payload: firing(n),
        }),
      ),
    );
    for (const delivery of deliveries) expectDeliveryUnavailable(delivery);
    // Per request a warning (the operator acts on the pools and max_connections), not an error.
    const lines = impatientLog.map(
      (line) => JSON.parse(line) as { level: number; msg: string; reqId?: string },
    );
    const requests = lines.filter((line) => line.reqId !== undefined);
    expect(requests.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
    expect(requests.filter((line) => line.msg === "request failed: database unavailable")).toHaveLength(6);

    const list = await impatient.app.inject({ url: "/app/sre/api/v1/alerts", headers: auth });
    expect(list.statusCode, list.body).toBe(503);
    expect(list.headers["retry-after"]).toBe("5");
    expect(list.json()).toMatchObject({
      code: "UNAVAILABLE",
      error: expect.stringContaining("connection limit"),
    });

    // Alertmanager sends it again once the server has room.
    await admin.query(`alter role ${role} connection limit -1`);
    const again = await impatient.app.inject({
      method: "POST",
      url: triggerPath,
      headers: { "content-type": "application/json" },
      payload: firing(2),
    });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().alerts[0].outcome).toBe("created");
  });
});

describe.runIf(Boolean(postgresUrl))("a PostgreSQL database that refuses the role [postgres]", () => {
  const suffix = randomBytes(6).toString("hex");
  const role = `vigil_refused_${suffix}`;
  const name = `vigil_test_${suffix}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  let vigil: Vigil;
  let triggerPath = "";

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create role ${role} login`);
    await admin.query(`create database ${name} owner ${role}`);
    const url = new URL(postgresUrl ?? "");
    url.username = role;
    url.password = "";
    url.pathname = `/${name}`;
    const database = await openDatabase({ url: url.toString(), poolSize: 4 });
    vigil = await startVigil(testConfig({ bootstrapApiKey: KEY }), { database, pollingIntervalSeconds: 0.5 });
    triggerPath = await registerAlertTrigger(vigil, auth, "refused");
  });

  afterAll(async () => {
    await vigil?.stop();
    if (vigil) rmSync(vigil.services.config.dataDir, { recursive: true, force: true });
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  /**
   * Ends the pools' connections and waits until both pools hold no idle one: the next query asks
   * for a new one. Not until they hold none at all: the workers' loops keep asking for new ones,
   * which the pools count while the server refuses them.
   */
  async function emptyPools() {
    await admin.query(
      `select pg_terminate_backend(pid, 10000) from pg_stat_activity
       where datname = $1 and application_name in ('vigil', 'vigil-read')`,
      [name],
    );
    while (poolsOf(vigil.services.database).some((pool) => pool.idleCount > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const refusals = [
    {
      what: "CONNECT revoked (42501)",
      refuse: `revoke connect on database ${name} from public, ${role}`,
      allow: `grant connect on database ${name} to ${role}`,
    },
    {
      what: "connections not allowed (55000)",
      refuse: `alter database ${name} allow_connections false`,
      allow: `alter database ${name} allow_connections true`,
    },
    {
      what: "login taken away (28000)",
      refuse: `alter role ${role} nologin`,
      allow: `alter role ${role} login`,
    },
  ];

  it.each(refusals)(
    "answers 503 with Retry-After while $what, and stores the delivery once allowed",
    async ({ refuse, allow }) => {
      await admin.query(refuse);
      try {
        await emptyPools();
        const delivery = await vigil.app.inject({
          method: "POST",
          url: triggerPath,
          headers: { "content-type": "application/json" },
          payload: firing(100),
        });
        expectDeliveryUnavailable(delivery);
        const list = await vigil.app.inject({ url: "/app/sre/api/v1/alerts", headers: auth });
        expect(list.statusCode, list.body).toBe(503);
        expect(list.headers["retry-after"]).toBe("5");
        expect(list.json()).toMatchObject({ code: "UNAVAILABLE" });
        const ready = await vigil.app.inject({ url: "/readyz" });
        expect(ready.statusCode).toBe(503);
        expect(ready.json().checks.database).toMatch(/^unreachable: /);
      } finally {
        await admin.query(allow);
      }
      const again = await vigil.app.inject({
        method: "POST",
        url: triggerPath,
        headers: { "content-type": "application/json" },
        payload: firing(100),
      });
      expect(again.statusCode, again.body).toBe(202);
      expect((await vigil.app.inject({ url: "/readyz" })).statusCode).toBe(200);
    },
  );
});

/**
 * A loopback proxy in front of the PostgreSQL server that cuts every connection it carries the
 * moment a client sends BEGIN, before the server sees it: the connection is lost with BEGIN
 * unanswered, as when the server restarts under a flood of deliveries.
 */
async function cuttingProxy(target: URL) {
  let cut = () => {};
  const wasCut = new Promise<void>((resolve) => {
    cut = resolve;
  });
  const proxy = await pgProxy(target, (client, upstream) => {
    client.on("data", (chunk: Buffer) => {
      // A simple-protocol Query message ('Q') whose text is BEGIN.
      if (chunk[0] === 0x51 && /^begin\0/i.test(chunk.subarray(5).toString("latin1"))) {
        client.destroy();
        upstream.destroy();
        cut();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  return { ...proxy, wasCut };
}

describe.runIf(Boolean(postgresUrl))("a connection lost before BEGIN is answered [postgres]", () => {
  it("fails the transaction as unavailable, and nothing is left unhandled to end the process", async () => {
    const test = await createTestDatabase("postgres");
    await test.database.close();
    const proxy = await cuttingProxy(new URL(test.url ?? ""));
    const database = await openDatabase({ url: proxy.url, poolSize: 2 });
    try {
      let goOn = () => {};
      const gate = new Promise<void>((resolve) => {
        goOn = resolve;
      });
      // BEGIN leaves at the end of this turn, while the transaction's body waits on the gate.
      const running = database
        .transaction(async (tx) => {
          await gate;
          return tx.execute(sql`select 1`);
        })
        .then(
          () => null,
          (err: unknown) => err,
        );
      await proxy.wasCut;
      // The lost connection reaches the client (BEGIN fails) before the body goes on.
      await new Promise((resolve) => setTimeout(resolve, 200));
      goOn();
      expect(isDatabaseUnavailable(await running)).toBe(true);
    } finally {
      await database.close();
      await proxy.close();
      await test.drop();
    }
  });

  it("gives the connection of a drizzle transaction lost at BEGIN back to the pool", async () => {
    const test = await createTestDatabase("postgres");
    await test.database.close();
    const proxy = await cuttingProxy(new URL(test.url ?? ""));
    // One connection: one the pool never got back would leave every later query waiting.
    const database = await openDatabase({ url: proxy.url, poolSize: 1 });
    try {
      // drizzle's own transaction (withTransaction outside one), which releases its client only
      // once BEGIN has succeeded.
      const failure = await database.db
        .transaction(async (tx) => tx.execute(sql`select 1`))
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      const pool = (database.db as unknown as { $client: pg.Pool }).$client;
      expect({ total: pool.totalCount, idle: pool.idleCount }).toEqual({ total: 0, idle: 0 });
      const { rows } = await database.db.execute(sql`select 1 as one`);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await database.close();
      await proxy.close();
      await test.drop();
    }
  });
});
