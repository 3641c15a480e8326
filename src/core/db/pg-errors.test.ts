// Which PostgreSQL errors are an unavailable database (answered 503, sent again) and which are not:
// the server refusing a new connection is, whatever its SQLSTATE; the same SQLSTATE raised by a
// statement on an open connection is not. The errors are the server's own.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PatientPool } from "./patient-pool.ts";
import { isDatabaseUnavailable, sqlStateOf } from "./pg-errors.ts";

const postgresUrl = process.env.TEST_DATABASE_URL;

describe.runIf(Boolean(postgresUrl))("database errors as unavailable or not [postgres]", () => {
  const suffix = randomBytes(6).toString("hex");
  const role = `vigil_errors_${suffix}`;
  const name = `vigil_test_${suffix}`;
  /** A role that may connect to the database and read none of its tables. */
  const reader = `vigil_reader_${suffix}`;
  const admin = new pg.Client({ connectionString: postgresUrl });

  /** The URL of the role's database, as `user` (the role unless said) and database `database`. */
  function urlOf({ user = role, database = name } = {}): string {
    const url = new URL(postgresUrl ?? "");
    url.username = user;
    url.password = "";
    url.pathname = `/${database}`;
    return url.toString();
  }

  /** What a pool's first query fails with, or null. */
  async function failureOf(url: string, statement = "select 1"): Promise<unknown> {
    const pool = new PatientPool({ connectionString: url, max: 1, connectWaitMs: 0 });
    try {
      return await pool.query(statement).then(
        () => null,
        (err: unknown) => err,
      );
    } finally {
      await pool.end();
    }
  }

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`create role ${role} login`);
    await admin.query(`create database ${name} owner ${role}`);
    await admin.query(`create role ${reader} login`);
  });

  afterAll(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`drop role if exists ${role}`);
    await admin.query(`drop role if exists ${reader}`);
    await admin.end();
  });

  it("takes a connection the server refuses as unavailable, whatever its SQLSTATE", async () => {
    const missing = await failureOf(urlOf({ database: `${name}_gone` }));
    expect(sqlStateOf(missing)).toBe("3D000");
    expect(isDatabaseUnavailable(missing)).toBe(true);

    const noRole = await failureOf(urlOf({ user: `${role}_nobody` }));
    expect(sqlStateOf(noRole)).toBe("28000");
    expect(isDatabaseUnavailable(noRole)).toBe(true);

    await admin.query(`revoke connect on database ${name} from public, ${role}`);
    try {
      const revoked = await failureOf(urlOf());
      expect(sqlStateOf(revoked)).toBe("42501");
      expect(isDatabaseUnavailable(revoked)).toBe(true);
    } finally {
      await admin.query(`grant connect on database ${name} to public`);
    }

    await admin.query(`alter database ${name} allow_connections false`);
    try {
      const closed = await failureOf(urlOf());
      expect(sqlStateOf(closed)).toBe("55000");
      expect(isDatabaseUnavailable(closed)).toBe(true);
    } finally {
      await admin.query(`alter database ${name} allow_connections true`);
    }
  });

  it("takes an authorization failure as unavailable even from a client of its own (the job queue's)", async () => {
    const client = new pg.Client({ connectionString: urlOf({ user: `${role}_nobody` }) });
    const failure = await client.connect().then(
      () => null,
      (err: unknown) => err,
    );
    expect(sqlStateOf(failure)).toBe("28000");
    expect(isDatabaseUnavailable(failure)).toBe(true);
  });

  it("does not take the same SQLSTATEs raised by a statement on an open connection as unavailable", async () => {
    const owner = new pg.Client({ connectionString: urlOf() });
    await owner.connect();
    try {
      await owner.query("create table sealed (id int)");
      await owner.query("revoke all on sealed from public");
      await owner.query("create sequence unused");
    } finally {
      await owner.end();
    }
    // A missing grant on a table: sending the request again does not fix it.
    const denied = await failureOf(urlOf({ user: reader }), "select * from sealed");
    expect(sqlStateOf(denied)).toBe("42501");
    expect(isDatabaseUnavailable(denied)).toBe(false);
    // 55000 from a statement: a sequence's currval before its nextval in the session.
    const early = await failureOf(urlOf(), "select currval('unused')");
    expect(sqlStateOf(early)).toBe("55000");
    expect(isDatabaseUnavailable(early)).toBe(false);
  });
});
